//! The bounds on what one request may carry (crates/placement/README.md,
//! "Limits"): the query string's length (414), its number of parameters
//! and the request groups of `GET /allocation_candidates` (400). A
//! request at each bound is served; one past it is refused with an
//! errors body saying what was wrong and what is accepted, and the server
//! goes on answering. Long lists inside one value (`member_of=in:`,
//! `required`) are bounded by the query string's length alone, and are
//! served. The body's bound is tested in body_limit.rs.
//!
//! Each test names its own classes, traits and aggregates (fresh
//! suffixes and uuids), so that it sees only its own providers on a
//! shared database (`PLACEMENT_TEST_DATABASE`).

mod support;

use placement::limits::{MAX_QUERY_PARAMS, MAX_QUERY_STRING_BYTES, MAX_REQUEST_GROUPS};
use reqwest::Method;
use serde_json::{Value, json};
use support::{Resp, Server, uuid};

/// A fresh custom name.
fn fresh(kind: &str) -> String {
    format!(
        "CUSTOM_{kind}_{}",
        uuid().replace('-', "")[..12].to_ascii_uppercase()
    )
}

async fn candidates(s: &Server, query: &str) -> Resp {
    s.get(&format!("/allocation_candidates?{query}"), "1.39")
        .await
}

/// The providers of the allocation requests (dict form), in order.
fn providers(r: &Resp) -> Vec<String> {
    assert_eq!(r.status, 200, "{r:?}");
    r.body["allocation_requests"]
        .as_array()
        .expect("allocation requests")
        .iter()
        .flat_map(|a| a["allocations"].as_object().expect("allocations").keys())
        .cloned()
        .collect()
}

/// The server still answers an ordinary request.
async fn still_answers(s: &Server) {
    let r = s.get("/resource_classes/VCPU", "1.7").await;
    assert_eq!(r.status, 200, "{r:?}");
}

fn assert_refused(r: &Resp, status: u16, detail: &str) {
    assert_eq!(r.status, status, "{r:?}");
    assert_eq!(r.body["errors"][0]["status"], status, "{r:?}");
    assert_eq!(r.message(), detail, "{r:?}");
    // Refused inside the microversion layer: the version is said.
    assert_eq!(r.header("openstack-api-version"), Some("placement 1.39"));
}

/// A query string of exactly the bound, most of it one `member_of=in:`
/// list of about 880 aggregates, is served (the one aggregate the
/// provider is in, last in the list, finds it); one byte more is a 414.
/// Past the 64 KiB URI the HTTP server takes at all, it answers 414
/// itself, without a body.
#[tokio::test]
async fn query_string_length() {
    let s = Server::start().await;
    let class = fresh("QLEN");
    s.custom_class(&class).await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, &class, 4).await;
    let aggregate = uuid();
    let generation = s.generation(&rp).await;
    let r = s
        .put(
            &format!("/resource_providers/{rp}/aggregates"),
            "1.19",
            &json!({"resource_provider_generation": generation, "aggregates": [aggregate]}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");

    let head = format!("resources={class}:1&member_of=in:");
    let mut members: Vec<String> = Vec::new();
    while head.len() + (members.len() + 2) * 37 < MAX_QUERY_STRING_BYTES {
        members.push(uuid());
    }
    members.push(aggregate.clone());
    let mut query = format!("{head}{}", members.join(","));
    // Blank parameters pad it to the byte.
    query.push_str(&"&".repeat(MAX_QUERY_STRING_BYTES - query.len()));
    assert_eq!(query.len(), MAX_QUERY_STRING_BYTES);
    assert!(members.len() > 850, "{}", members.len());
    let r = candidates(&s, &query).await;
    assert_eq!(providers(&r), vec![rp.clone()]);

    query.push('&');
    let r = candidates(&s, &query).await;
    assert_refused(
        &r,
        414,
        &format!(
            "The query string is {} bytes long; at most {MAX_QUERY_STRING_BYTES} bytes are accepted.",
            MAX_QUERY_STRING_BYTES + 1
        ),
    );
    assert_eq!(r.body["errors"][0]["title"], "Request-URI Too Long");
    still_answers(&s).await;

    // Any route: the bound is checked before the handler.
    let r = s.get(&format!("/resource_providers?{query}"), "1.39").await;
    assert_eq!(r.status, 414, "{r:?}");

    // Past what the HTTP server reads as a URI at all (which no client
    // library builds either: sent by hand).
    let target = format!("/resource_providers?name={}", "x".repeat(70_000));
    let answer = raw_get(&s, &target).await;
    assert!(answer.starts_with("HTTP/1.1 414"), "{answer}");
    still_answers(&s).await;
}

/// Sends `GET target` on a connection of its own and returns the status
/// line of the answer.
async fn raw_get(s: &Server, target: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = s.base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "GET {target} HTTP/1.1\r\nhost: {addr}\r\nx-auth-token: admin\r\n\
         connection: close\r\n\r\n"
    );
    conn.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer).await.expect("an answer");
    let answer = String::from_utf8_lossy(&answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

/// `MAX_QUERY_PARAMS` parameters are served (repeated `required` at
/// 1.39, each read); one more is a 400.
#[tokio::test]
async fn query_parameter_count() {
    let s = Server::start().await;
    let class = fresh("QPARAMS");
    s.custom_class(&class).await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, &class, 4).await;

    let mut params = vec![format!("resources={class}:1")];
    params.extend((1..MAX_QUERY_PARAMS).map(|_| "required=!HW_CPU_X86_SSE".to_owned()));
    assert_eq!(params.len(), MAX_QUERY_PARAMS);
    let r = candidates(&s, &params.join("&")).await;
    assert_eq!(providers(&r), vec![rp.clone()]);

    params.push("required=!HW_CPU_X86_SSE".to_owned());
    let r = candidates(&s, &params.join("&")).await;
    assert_refused(
        &r,
        400,
        &format!(
            "Invalid query string parameters: The query string has {} parameters; at most \
             {MAX_QUERY_PARAMS} are accepted.",
            MAX_QUERY_PARAMS + 1
        ),
    );
    // Any route.
    let names = vec!["name=x"; MAX_QUERY_PARAMS + 1].join("&");
    let r = s.get(&format!("/resource_providers?{names}"), "1.39").await;
    assert_eq!(r.status, 400, "{r:?}");
    still_answers(&s).await;
}

/// `MAX_REQUEST_GROUPS` groups are served (one provider with room for
/// all of them: one candidate mapping every group to it); one more, of
/// any kind, is a 400.
#[tokio::test]
async fn request_group_count() {
    let s = Server::start().await;
    let class = fresh("GROUPS");
    s.custom_class(&class).await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, &class, 1000).await;

    let mut params = vec![format!("resources={class}:1")];
    params.extend((1..MAX_REQUEST_GROUPS).map(|i| format!("resources_G{i}={class}:1")));
    params.push("group_policy=none".to_owned());
    let query = params.join("&");
    let r = candidates(&s, &query).await;
    assert_eq!(providers(&r), vec![rp.clone()]);
    let mappings = r.body["allocation_requests"][0]["mappings"]
        .as_object()
        .expect("mappings");
    assert_eq!(mappings.len(), MAX_REQUEST_GROUPS);
    assert_eq!(
        r.body["allocation_requests"][0]["allocations"][&rp]["resources"][&class],
        json!(MAX_REQUEST_GROUPS)
    );

    let refused = format!(
        "Invalid query string parameters: The query string names {} request groups \
         (resources, required, member_of and in_tree, a group for each suffix); at most \
         {MAX_REQUEST_GROUPS} are accepted.",
        MAX_REQUEST_GROUPS + 1
    );
    for extra in [
        format!("resources_MORE={class}:1"),
        "required_MORE=HW_CPU_X86_AVX".to_owned(),
        format!("member_of_MORE={}", uuid()),
        format!("in_tree_MORE={rp}"),
    ] {
        let r = candidates(&s, &format!("{query}&{extra}")).await;
        assert_refused(&r, 400, &refused);
    }
    still_answers(&s).await;
}

/// A `required` of many traits (each a condition of its own) is served:
/// SQLite joins at most 64 tables in a statement and MySQL 61, and a
/// statement joining one table per trait answered 500.
#[tokio::test]
async fn many_required_traits() {
    let s = Server::start().await;
    let class = fresh("TRAITS");
    s.custom_class(&class).await;
    let custom = fresh("T");
    let r = s
        .call(Method::PUT, &format!("/traits/{custom}"), Some("1.6"), None)
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    // Standard traits (os-traits has hundreds), and a fresh one so that
    // only this test's providers can match.
    let listed = s.get("/traits", "1.6").await;
    let mut names: Vec<String> = listed.body["traits"]
        .as_array()
        .expect("traits")
        .iter()
        .filter_map(Value::as_str)
        // Not MISC_SHARES_VIA_AGGREGATE, which would make the provider
        // a sharing one.
        .filter(|name| !name.starts_with("CUSTOM_") && !name.starts_with("MISC_"))
        .map(str::to_owned)
        .take(99)
        .collect();
    assert_eq!(names.len(), 99);
    names.push(custom);
    let (all, one_less) = (uuid(), uuid());
    for (rp, traits) in [(&all, &names[..]), (&one_less, &names[1..])] {
        s.provider(rp, None).await;
        s.simple_inventory(rp, &class, 4).await;
        let generation = s.generation(rp).await;
        let r = s
            .put(
                &format!("/resource_providers/{rp}/traits"),
                "1.6",
                &json!({"resource_provider_generation": generation, "traits": traits}),
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    let required = names.join(",");
    let r = s
        .get(&format!("/resource_providers?required={required}"), "1.22")
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let found: Vec<&Value> = r.body["resource_providers"]
        .as_array()
        .expect("providers")
        .iter()
        .map(|p| &p["uuid"])
        .collect();
    assert_eq!(found, vec![&json!(all)]);
    for group in ["", "_G"] {
        let r = candidates(
            &s,
            &format!("resources{group}={class}:1&required{group}={required}"),
        )
        .await;
        assert_eq!(providers(&r), vec![all.clone()], "{group:?}");
    }
    still_answers(&s).await;
}

/// The candidate search's products are bounded: 13 isolated groups over
/// a tree of 12 providers (every arrangement of the 12, about 10^9, is
/// explored and none completes) answer, with no candidate; and `limit`
/// ends the walk over 12 groups on 12 providers (12^12 combinations) at
/// the first candidates, those the whole walk would give first.
#[tokio::test]
async fn candidate_search_is_bounded() {
    let s = Server::start().await;
    let class = fresh("WALK");
    s.custom_class(&class).await;
    let root = uuid();
    s.provider(&root, None).await;
    let mut children = Vec::new();
    for _ in 0..12 {
        let child = uuid();
        s.provider(&child, Some(&root)).await;
        s.simple_inventory(&child, &class, 2).await;
        children.push(child);
    }
    let groups =
        |n: usize| -> Vec<String> { (1..=n).map(|i| format!("resources{i}={class}:1")).collect() };
    let r = candidates(
        &s,
        &format!("{}&group_policy=isolate", groups(13).join("&")),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body["allocation_requests"], json!([]));

    let r = candidates(
        &s,
        &format!("{}&group_policy=none&limit=2", groups(12).join("&")),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let allocations = |amounts: &[(usize, i64)]| -> Value {
        let mut out = serde_json::Map::new();
        for (child, amount) in amounts {
            out.insert(
                children[*child].clone(),
                json!({"resources": {&class: amount}}),
            );
        }
        Value::Object(out)
    };
    let requests = r.body["allocation_requests"].as_array().expect("requests");
    assert_eq!(requests.len(), 2, "{r:?}");
    // Depth first, the providers in the order made: two units on each of
    // the first six, then the last unit of the sixth moved to the seventh.
    let first: Vec<(usize, i64)> = (0..6).map(|c| (c, 2)).collect();
    let mut second: Vec<(usize, i64)> = (0..5).map(|c| (c, 2)).collect();
    second.extend([(5, 1), (6, 1)]);
    assert_eq!(requests[0]["allocations"], allocations(&first));
    assert_eq!(requests[1]["allocations"], allocations(&second));
    still_answers(&s).await;
}

/// A path parameter that is not UTF-8 once percent-decoded is refused
/// with an errors body naming it (found by the `router` fuzz target:
/// axum's own answer was plain text), on every kind of route that reads
/// one, and the server goes on answering.
#[tokio::test]
async fn path_parameters_that_are_not_utf8() {
    let s = Server::start().await;
    for (method, path, name) in [
        (Method::PUT, "/allocations/%FF%FE", "consumer_uuid"),
        (Method::GET, "/resource_providers/ab%C3", "uuid"),
        (
            Method::GET,
            "/resource_providers/%80/inventories/VCPU",
            "uuid",
        ),
        (Method::DELETE, "/resource_classes/CUSTOM_%E2%98", "name"),
        (Method::PUT, "/traits/CUSTOM_%FF", "name"),
    ] {
        let r = s.call(method.clone(), path, Some("1.39"), None).await;
        assert_refused(&r, 400, &format!("Invalid URL: Invalid UTF-8 in `{name}`"));
        still_answers(&s).await;
    }
}
