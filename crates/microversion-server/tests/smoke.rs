//! The layer and the versioned router over a real loopback server.

mod common;

use axum::Json;
use microversion::VersionRange;
use microversion_server::{
    ApiError, MicroversionLayer, Microversions, Profile, ServedVersion, VersionedRouter, Versions,
};
use serde_json::{Value, json};

async fn old() -> Json<Value> {
    Json(json!({"shape": "old"}))
}

async fn new(v: ServedVersion) -> Json<Value> {
    Json(json!({"shape": "new", "version": v.to_string()}))
}

async fn gone() -> ApiError {
    ApiError::new(http::StatusCode::CONFLICT, "busy").with_code("x.busy")
}

async fn server(profile: Profile) -> String {
    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(profile)
        .build()
        .unwrap();
    let app = VersionedRouter::new()
        .get("/things", Versions::between("1.0", "1.4"), old)
        .get("/things", Versions::since("1.5"), new)
        .post("/things", Versions::all(), gone)
        .build()
        .unwrap()
        .layer(MicroversionLayer::new(api));
    common::serve(app).await
}

#[tokio::test]
async fn versioned_dispatch_and_headers() {
    let base = server(Profile::ApiSig).await;
    let client = reqwest::Client::new();
    let res = client.get(format!("{base}/things")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    assert_eq!(res.headers()["vary"], "OpenStack-API-Version");
    assert!(
        res.headers()["x-openstack-request-id"]
            .to_str()
            .unwrap()
            .starts_with("req-")
    );
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"shape": "old"}));

    let res = client
        .get(format!("{base}/things"))
        .header("OpenStack-API-Version", "placement latest")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.39");
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"shape": "new", "version": "1.39"})
    );

    let res = client
        .get(format!("{base}/things"))
        .header("OpenStack-API-Version", "placement 1.999")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 406);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["errors"][0]["title"], "Not Acceptable");
    assert_eq!(
        body["errors"][0]["detail"],
        "Version 1.999 is not supported by the API. Minimum is 1.0 and maximum is 1.39."
    );
    assert_eq!(body["errors"][0]["max_version"], "1.39");

    let res = client
        .get(format!("{base}/things"))
        .header("OpenStack-API-Version", "placement 1.2.3")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);

    let res = client.post(format!("{base}/things")).send().await.unwrap();
    assert_eq!(res.status(), 409);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "x.busy");

    let res = client.get(format!("{base}/nowhere")).send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    let res = client
        .delete(format!("{base}/things"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["errors"][0]["status"], 405);
}
