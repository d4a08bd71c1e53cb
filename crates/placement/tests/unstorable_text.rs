//! Text a database cannot store (a NUL character on PostgreSQL, a 4-byte
//! character in a MySQL `utf8mb3` column) is the client's error: 4xx with an
//! errors body, never 500, and nothing written. On SQLite, which stores
//! both, the names are simply kept; the test matters when
//! `PLACEMENT_TEST_DATABASE` names a PostgreSQL or MySQL database.

mod support;

use reqwest::Method;
use serde_json::json;
use support::{Server, uuid};

#[tokio::test]
async fn nul_and_astral_characters_are_never_a_500() {
    let s = Server::start().await;
    for name in ["nul \u{0}", "astral \u{1F600}"] {
        let rp = uuid();
        let r = s
            .post(
                "/resource_providers",
                "1.20",
                &json!({"name": format!("{name} {rp}"), "uuid": rp}),
            )
            .await;
        assert!(r.status == 200 || r.status == 400, "{r:?}");
        if r.status == 400 {
            assert_eq!(r.body["errors"][0]["status"], 400, "{r:?}");
            let r = s.get(&format!("/resource_providers/{rp}"), "1.20").await;
            assert_eq!(r.status, 404, "{r:?}");
        }
        let consumer = uuid();
        let r = s
            .put(
                &format!("/allocations/{consumer}"),
                "1.28",
                &json!({"allocations": {}, "project_id": name, "user_id": name,
                        "consumer_generation": null}),
            )
            .await;
        assert!(r.status < 500, "{r:?}");
    }
    for path in [
        "/resource_providers/%00",
        "/resource_providers/%00/traits",
        "/allocations/%00",
        "/traits/CUSTOM_%00",
        "/resource_classes/CUSTOM_%00",
    ] {
        let r = s.call(Method::DELETE, path, Some("1.39"), None).await;
        assert!((400..500).contains(&r.status), "{path}: {r:?}");
        assert_eq!(r.body["errors"][0]["status"], r.status, "{path}: {r:?}");
    }
}
