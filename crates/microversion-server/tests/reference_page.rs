//! The API reference page (`openapi::ReferencePage`, feature
//! `reference-page`) over a real loopback server: the page, its picker,
//! its own files and Swagger UI's, all from the server itself.
#![cfg(feature = "reference-page")]

use microversion::{VersionRange, VersionSpan};
use microversion_server::openapi::{ApiDescription, OperationDoc, ReferencePage, ResponseDoc};
use microversion_server::{Microversions, VersionedRouter};
use microversion_test_support::serve;

fn page() -> ReferencePage {
    let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.4"))
        .build()
        .unwrap();
    let router = VersionedRouter::<()>::new().get(
        "/things",
        VersionSpan::from_static("1.2 - latest"),
        || async { "[]" },
    );
    let description = ApiDescription::builder(&api)
        .title("Things")
        .routes(&router)
        .operation(OperationDoc::get("/things").response(
            VersionSpan::from_static("1.2 - latest"),
            http::StatusCode::OK,
            ResponseDoc::json("The things", serde_json::json!({"type": "array"})),
        ))
        .build()
        .unwrap();
    ReferencePage::builder(&description)
        .document_url("/docs/openapi.json")
        .build()
        .unwrap()
}

async fn get(url: &str) -> reqwest::Response {
    reqwest::Client::new().get(url).send().await.unwrap()
}

#[tokio::test]
async fn the_page_and_its_files_come_from_the_server() {
    let base = serve(page().router("/docs/api-ref").unwrap()).await;
    let r = get(&format!("{base}/docs/api-ref")).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.starts_with("default-src 'none'; script-src 'self';"),
        "{csp}"
    );
    assert!(csp.contains("connect-src 'self'"), "{csp}");
    let html = r.text().await.unwrap();
    assert!(
        html.contains("<title>Things API reference</title>"),
        "{html}"
    );
    for version in ["1.0", "1.1", "1.2", "1.3"] {
        assert!(
            html.contains(&format!("<option value=\"{version}\">{version}</option>")),
            "{html}"
        );
    }
    assert!(
        html.contains("<option value=\"1.4\" selected>1.4</option>"),
        "{html}"
    );
    assert!(
        html.contains("<option value=\"all\">1.0 - 1.4 (x-openstack)</option>"),
        "{html}"
    );
    // Relative to the page: it works under a prefix too.
    assert!(html.contains(r#"data-document="openapi.json""#), "{html}");
    // Every file the page names is served, with its type.
    let files = [
        ("swagger-ui.css", "text/css"),
        ("swagger-ui-bundle.js", "text/javascript"),
        ("reference.css", "text/css; charset=utf-8"),
        ("reference.js", "text/javascript; charset=utf-8"),
    ];
    for (file, content_type) in files {
        assert!(
            html.contains(&format!("\"api-ref/{file}\"")),
            "{file} not named: {html}"
        );
        let r = get(&format!("{base}/docs/api-ref/{file}")).await;
        assert_eq!(r.status(), 200, "{file}");
        assert_eq!(r.headers()["content-type"], content_type, "{file}");
        let body = r.text().await.unwrap();
        assert!(body.len() > 200, "{file}: {} bytes", body.len());
        if file == "swagger-ui-bundle.js" {
            assert!(body.contains("SwaggerUIBundle"));
        }
        if file == "reference.js" {
            assert!(body.contains("version=") && body.contains("validatorUrl: null"));
        }
    }
    // Nothing else under the page's path; Swagger UI's own index page is
    // not served.
    assert_eq!(
        get(&format!("{base}/docs/api-ref/index.html"))
            .await
            .status(),
        404
    );
    assert_eq!(get(&format!("{base}/docs/api-ref/")).await.status(), 404);
}
