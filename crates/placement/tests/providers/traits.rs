//! `/traits` and `/resource_providers/{uuid}/traits`.

use serde_json::{Value, json};

use crate::support::{Server, uuid};

fn custom() -> String {
    format!("CUSTOM_T_{}", uuid().replace('-', "_").to_uppercase())
}

fn traits_of(body: &Value) -> Vec<String> {
    let mut t: Vec<String> = serde_json::from_value(body["traits"].clone()).expect("traits");
    t.sort();
    t
}

#[tokio::test]
async fn custom_traits() {
    let s = Server::start().await;
    let name = custom();
    let path = format!("/traits/{name}");
    assert_eq!(s.put(&path, "1.5", &json!({})).await.status, 404);
    let r = s.call(reqwest::Method::PUT, &path, Some("1.6"), None).await;
    assert_eq!(r.status, 201);
    assert!(r.header("location").expect("location").ends_with(&path));
    assert!(r.header("cache-control").is_none());
    let r = s
        .call(reqwest::Method::PUT, &path, Some("1.15"), None)
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    assert!(r.header("last-modified").is_some());
    let r = s.get(&path, "1.6").await;
    assert_eq!(r.status, 204);
    assert!(r.header("last-modified").is_none());
    assert!(s.get(&path, "1.15").await.header("last-modified").is_some());

    for bad in ["TRAIT_X", "CUSTOM_ABC:1", "CUSTOM_lower"] {
        let r = s
            .call(
                reqwest::Method::PUT,
                &format!("/traits/{bad}"),
                Some("1.6"),
                None,
            )
            .await;
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.message().starts_with("The trait is invalid."));
    }
    let r = s.get("/traits/CUSTOM_NOPE_NOPE", "1.6").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), "No such trait(s): CUSTOM_NOPE_NOPE.");
    let r = s.delete("/traits/HW_CPU_X86_SSE", "1.6").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "Cannot delete standard trait HW_CPU_X86_SSE.");

    // Listing and filters.
    let r = s.get("/traits", "1.6").await;
    let all = traits_of(&r.body);
    assert!(all.contains(&name) && all.contains(&"HW_CPU_X86_SSE".to_owned()));
    let r = s
        .get(
            &format!("/traits?name=in:{name},HW_CPU_X86_SSE,NOPE"),
            "1.6",
        )
        .await;
    assert_eq!(
        traits_of(&r.body),
        vec![name.clone(), "HW_CPU_X86_SSE".to_owned()]
    );
    let r = s
        .get(&format!("/traits?name=startswith:{}", &name[..20]), "1.6")
        .await;
    assert_eq!(traits_of(&r.body), vec![name.clone()]);
    let r = s.get("/traits?name=in_abc", "1.6").await;
    assert_eq!(r.status, 400);
    assert!(r.message().starts_with("Badly formatted name parameter."));
    let r = s.get("/traits?invalid=abc", "1.6").await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .starts_with("Invalid query string parameters: Additional properties are not allowed")
    );
    let r = s.get("/traits?associated=xyz", "1.6").await;
    assert_eq!(r.status, 400);

    // Provider traits.
    let rp = s.provider_named(&format!("tr-{}", uuid()), None).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_owned();
    let rp_path = format!("/resource_providers/{rp}/traits");
    let r = s.get(&rp_path, "1.6").await;
    assert_eq!(
        r.body,
        json!({"traits": [], "resource_provider_generation": 0})
    );
    let set = |generation: i64, traits: Vec<&str>| json!({"traits": traits, "resource_provider_generation": generation});
    let r = s
        .put(&rp_path, "1.6", &set(0, vec![&name, "HW_CPU_X86_SSE"]))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["resource_provider_generation"], 1);
    assert_eq!(
        traits_of(&r.body),
        vec![name.clone(), "HW_CPU_X86_SSE".to_owned()]
    );
    // The same set again changes nothing, not even the generation.
    let r = s
        .put(&rp_path, "1.6", &set(1, vec!["HW_CPU_X86_SSE", &name]))
        .await;
    assert_eq!(r.body["resource_provider_generation"], 1);
    let r = s.put(&rp_path, "1.23", &set(0, vec![])).await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.concurrent_update");
    let r = s
        .put(&rp_path, "1.6", &set(1, vec!["NOT_A_TRAIT_1", &name]))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "No such trait NOT_A_TRAIT_1");
    let r = s
        .get(&format!("/traits?associated=true&name=in:{name}"), "1.6")
        .await;
    assert_eq!(traits_of(&r.body), vec![name.clone()]);
    let r = s
        .get(&format!("/traits?associated=false&name=in:{name}"), "1.6")
        .await;
    assert!(traits_of(&r.body).is_empty());

    let r = s.delete(&path, "1.6").await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        format!("The trait {name} is in use by a resource provider.")
    );
    let r = s.delete(&rp_path, "1.6").await;
    assert_eq!(r.status, 204);
    let r = s.get(&rp_path, "1.6").await;
    assert_eq!(
        r.body,
        json!({"traits": [], "resource_provider_generation": 2})
    );
    assert_eq!(s.delete(&path, "1.6").await.status, 204);
    assert_eq!(s.delete(&path, "1.6").await.status, 404);
    let r = s
        .get(&format!("/resource_providers/{}/traits", uuid()), "1.6")
        .await;
    assert_eq!(r.status, 404);
}
