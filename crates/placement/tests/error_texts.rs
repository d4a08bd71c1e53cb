//! Error answers byte for byte as upstream Placement 16.0.0 gives them:
//! the `detail` of the JSON errors body (webob's page: the status's
//! explanation, a blank line, the message on one line), and the plain text
//! and HTML pages. Every expected text here was read from upstream
//! answering the same request (`scripts/osc-errors.sh` compares what the
//! `openstack` client prints against both).

mod support;

use reqwest::Method;
use serde_json::json;
use support::{Resp, Server, uuid};

const BAD_REQUEST: &str = "The server could not comply with the request since it is either malformed or otherwise incorrect.";

/// Sends a request with exactly these headers (and the admin's token).
async fn raw(
    s: &Server,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &'static str,
) -> Resp {
    let mut req = reqwest::Client::new()
        .request(method, format!("{}{path}", s.base))
        .header("x-auth-token", "admin")
        .body(body);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    Resp::read(req.send().await.expect("the request is answered")).await
}

/// Asserts the status, webob's title and the whole detail.
#[track_caller]
fn assert_error(r: &Resp, status: u16, title: &str, detail: &str) {
    assert_eq!(r.status, status, "{r:?}");
    assert_eq!(r.body["errors"][0]["status"], status, "{r:?}");
    assert_eq!(r.body["errors"][0]["title"], title, "{r:?}");
    assert_eq!(r.detail(), detail, "{r:?}");
}

#[tokio::test]
async fn schema_errors_fold_pythons_message_onto_one_line() {
    let s = Server::start().await;
    // The second name's tags go, as webob strips them.
    for (name, shown) in [("fake_class", "fake_class"), ("<b>x</b>", "x")] {
        let r = s
            .post("/resource_classes", "1.2", &json!({ "name": name }))
            .await;
        assert_error(
            &r,
            400,
            "Bad Request",
            &format!(
                "{BAD_REQUEST}\n\n JSON does not validate: '{shown}' does not match '^CUSTOM_[A-Z0-9_]+$'  Failed validating 'pattern' in schema['properties']['name']:     {{'type': 'string', 'pattern': '^CUSTOM_[A-Z0-9_]+$', 'maxLength': 255}}  On instance['name']:     '{shown}'  "
            ),
        );
    }
}

#[tokio::test]
async fn bad_uuids_in_bodies_and_query_strings() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    let r = s
        .put(
            &format!("/resource_providers/{rp}/aggregates"),
            "1.1",
            &json!(["abc", "efg"]),
        )
        .await;
    assert_error(
        &r,
        400,
        "Bad Request",
        &format!(
            "{BAD_REQUEST}\n\n JSON does not validate: 'efg' is not a 'uuid'  Failed validating 'format' in schema['items']:     {{'type': 'string', 'format': 'uuid'}}  On instance[1]:     'efg'  "
        ),
    );
    let r = s.get("/resource_providers?uuid=abc", "1.14").await;
    assert_error(
        &r,
        400,
        "Bad Request",
        &format!(
            "{BAD_REQUEST}\n\n Invalid query string parameters: 'abc' is not a 'uuid'  Failed validating 'format' in schema['properties']['uuid']:     {{'type': 'string', 'format': 'uuid'}}  On instance['uuid']:     'abc'  "
        ),
    );
    let r = s
        .call_raw(Method::POST, "/resource_classes", "1.2", "{nope")
        .await;
    assert_error(
        &r,
        400,
        "Bad Request",
        &format!(
            "{BAD_REQUEST}\n\n Malformed JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)  "
        ),
    );
}

#[tokio::test]
async fn not_found_conflict_and_forbidden() {
    let s = Server::start().await;
    let missing = "0a0b0c0d-0000-4000-8000-00000000dead";
    let r = s
        .get(&format!("/resource_providers/{missing}"), "1.14")
        .await;
    assert_error(
        &r,
        404,
        "Not Found",
        &format!(
            "The resource could not be found.\n\n No resource provider with uuid {missing} found  "
        ),
    );
    // A path that does not exist: no message of its own.
    let r = s.get("/nowhere", "1.14").await;
    assert_error(
        &r,
        404,
        "Not Found",
        "The resource could not be found.\n\n   ",
    );

    let rp = uuid();
    s.provider(&rp, None).await;
    let body = json!({"resource_provider_generation": 99, "inventories": {"VCPU": {"total": 1}}});
    let path = format!("/resource_providers/{rp}/inventories");
    let conflict = "There was a conflict when trying to complete your request.\n\n resource provider generation conflict  ";
    let r = s.put(&path, "1.20", &body).await;
    assert_error(&r, 409, "Conflict", conflict);
    assert!(r.body["errors"][0].get("code").is_none(), "{r:?}");
    let r = s.put(&path, "1.23", &body).await;
    assert_error(&r, 409, "Conflict", conflict);
    assert_eq!(r.code(), "placement.concurrent_update");

    let r = s
        .call_as(
            &[("x-auth-token", "user:project")],
            Method::GET,
            "/resource_providers",
            Some("1.2"),
            None,
        )
        .await;
    assert_error(
        &r,
        403,
        "Forbidden",
        "Access was denied to this resource.\n\n Policy does not allow placement:resource_providers:list to be performed.  ",
    );
}

#[tokio::test]
async fn method_version_and_media_type_pages_name_the_request() {
    let s = Server::start().await;
    let r = s.delete("/resource_classes", "1.2").await;
    assert_error(
        &r,
        405,
        "Method Not Allowed",
        "The method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource.",
    );
    let r = s.get("/resource_providers", "1.99").await;
    assert_error(
        &r,
        406,
        "Not Acceptable",
        "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: 1.99",
    );
    assert_eq!(r.body["errors"][0]["min_version"], "1.0");
    assert_eq!(r.body["errors"][0]["max_version"], "1.39");
    let r = s.get("/resource_providers", "1.a").await;
    assert_error(
        &r,
        400,
        "Bad Request",
        &format!(
            "{BAD_REQUEST}\n\n Invalid microversion: invalid version string: 1.a; invalid literal for int() with base 10: 'a'  "
        ),
    );
    let r = s.get("/resource_providers", "1").await;
    assert_eq!(
        r.message(),
        "Invalid microversion: invalid version string: 1; Version.__new__() missing 1 required positional argument: 'minor'"
    );
    let r = raw(
        &s,
        Method::POST,
        "/resource_classes",
        &[
            ("openstack-api-version", "placement 1.2"),
            ("content-type", "text/plain; charset=utf-8"),
        ],
        "x",
    )
    .await;
    assert_error(
        &r,
        415,
        "Unsupported Media Type",
        "The request media type text/plain; charset=utf-8 is not supported by this server. \n\n The media type text/plain is not supported, use application/json",
    );
}

#[tokio::test]
async fn plain_text_and_html_pages() {
    let s = Server::start().await;
    let page = async |accept: &str| {
        let headers = [
            ("openstack-api-version", "placement 1.2"),
            ("accept", accept),
        ];
        raw(&s, Method::DELETE, "/resource_classes", &headers, "").await
    };
    let r = page("text/plain").await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("content-type"), Some("text/plain; charset=UTF-8"));
    assert_eq!(
        r.text,
        "405 Method Not Allowed\n\nThe method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource."
    );
    let r = page("text/html").await;
    assert_eq!(r.header("content-type"), Some("text/html; charset=UTF-8"));
    assert_eq!(
        r.text,
        "<html>\n <head>\n  <title>405 Method Not Allowed</title>\n </head>\n <body>\n  <h1>405 Method Not Allowed</h1>\n  The method DELETE is not allowed for this resource. <br /><br />\nThe method specified is not allowed for this resource.\n </body>\n</html>"
    );
    // A handler's 406 for an `Accept` it cannot serve names that `Accept`.
    let r = raw(
        &s,
        Method::GET,
        "/resource_providers",
        &[
            ("openstack-api-version", "placement 1.2"),
            ("accept", "text/plain"),
        ],
        "",
    )
    .await;
    assert_eq!(r.status, 406);
    assert_eq!(
        r.text,
        "406 Not Acceptable\n\nThe resource could not be generated that was acceptable to your browser (content of type text/plain. \n\n Only application/json is provided"
    );
}
