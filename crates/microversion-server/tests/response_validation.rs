//! Responses checked against the API's documents, through a real server
//! on loopback: `error` answers 500 naming the mismatch, `warn` lets the
//! response through, `off` checks nothing.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use microversion::{VersionRange, VersionSpan};
use microversion_server::openapi::{
    ApiDescription, OperationDoc, ResponseDoc, ResponseValidation, ResponseValidationLayer,
};
use microversion_server::versioned::Versioned;
use microversion_server::{
    ApiError, MicroversionLayer, Microversions, ServedVersion, VersionedRouter,
};
use serde_json::{Value, json};

fn api() -> Microversions {
    Microversions::builder("things", VersionRange::from_static("1.0", "1.4"))
        .version_neutral("/healthcheck")
        .build()
        .unwrap()
}

#[derive(Versioned)]
#[versioned(response)]
struct Thing {
    id: u64,
    #[versioned(since = "1.3")]
    size: u32,
}

/// Answers what the path asks for, whatever the documents say.
async fn show(Path(what): Path<String>, version: ServedVersion) -> Response {
    match what.as_str() {
        "good" => Versioned::new(version, Thing { id: 1, size: 2 }).into_response(),
        // Always without `size`: wrong from 1.3 on.
        "old" => axum::Json(json!({"id": 1})).into_response(),
        "typo" => axum::Json(json!({"id": "one"})).into_response(),
        "teapot" => StatusCode::IM_A_TEAPOT.into_response(),
        "text" => (
            [(http::header::CONTENT_TYPE, "application/json")],
            "not json",
        )
            .into_response(),
        "plain" => r#"{"id": 1}"#.into_response(),
        _ => ApiError::new(StatusCode::NOT_FOUND, format!("No thing {what}.")).into_response(),
    }
}

async fn remove(Path(what): Path<String>) -> Response {
    if what == "chatty" {
        (StatusCode::ACCEPTED, "gone").into_response()
    } else {
        StatusCode::ACCEPTED.into_response()
    }
}

fn router() -> VersionedRouter<()> {
    VersionedRouter::new()
        .get("/things/{what}", VersionSpan::ALL, show)
        .get("/things/special", VersionSpan::ALL, || async {
            axum::Json(json!({"special": true}))
        })
        .delete("/things/{what}", VersionSpan::ALL, remove)
        .get("/healthcheck", VersionSpan::ALL, || async {
            "not documented as JSON"
        })
}

fn description() -> ApiDescription {
    ApiDescription::builder(&api())
        .routes(&router())
        .operation(
            OperationDoc::get("/things/{what}")
                .path_parameter("what", "Which.", json!({"type": "string"}))
                .versioned_response::<Thing>(VersionSpan::ALL, StatusCode::OK, "The thing")
                .error(StatusCode::NOT_FOUND, "No such thing."),
        )
        .operation(OperationDoc::get("/things/special").response(
            VersionSpan::ALL,
            StatusCode::OK,
            ResponseDoc::json(
                "Special",
                json!({"type": "object", "required": ["special"], "properties": {"special": {"type": "boolean"}}}),
            ),
        ))
        .operation(
            OperationDoc::delete("/things/{what}")
                .path_parameter("what", "Which.", json!({"type": "string"}))
                .response(VersionSpan::ALL, StatusCode::ACCEPTED, ResponseDoc::empty("Going")),
        )
        .operation(OperationDoc::get("/healthcheck").response(
            VersionSpan::ALL,
            StatusCode::OK,
            ResponseDoc::json("Fine", json!({"type": "object"})),
        ))
        .build()
        .unwrap()
}

async fn serve(mode: ResponseValidation) -> String {
    let app: Router = router()
        .build()
        .unwrap()
        .layer(ResponseValidationLayer::new(&description(), mode))
        .layer(MicroversionLayer::new(api()));
    microversion_test_support::serve(app).await
}

async fn ask(base: &str, method: &str, path: &str, version: &str) -> (StatusCode, String) {
    let client = reqwest::Client::new();
    let answer = client
        .request(method.parse().unwrap(), format!("{base}{path}"))
        .header("openstack-api-version", format!("things {version}"))
        .send()
        .await
        .unwrap();
    (answer.status(), answer.text().await.unwrap())
}

fn detail(body: &str) -> String {
    let body: Value = serde_json::from_str(body).unwrap();
    body["errors"][0]["detail"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn error_mode_answers_500_naming_the_mismatch() {
    let base = serve(ResponseValidation::Error).await;
    // What matches passes untouched, at every version.
    for version in ["1.0", "1.2", "1.3", "1.4"] {
        let (status, _) = ask(&base, "GET", "/things/good", version).await;
        assert_eq!(status, StatusCode::OK, "{version}");
    }
    let (status, body) = ask(&base, "GET", "/things/missing", "1.2").await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "documented errors pass: {body}"
    );

    // The same body is right at 1.2 and wrong at 1.3, where `size` is due.
    assert_eq!(
        ask(&base, "GET", "/things/old", "1.2").await.0,
        StatusCode::OK
    );
    let (status, body) = ask(&base, "GET", "/things/old", "1.3").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        detail(&body),
        "Response validation failed: GET /things/{what} at 1.3 answered 200: the body does not \
         match its schema: at /: \"size\" is a required property"
    );
    let (_, body) = ask(&base, "GET", "/things/typo", "1.0").await;
    assert_eq!(
        detail(&body),
        "Response validation failed: GET /things/{what} at 1.0 answered 200: the body does not \
         match its schema: at /id: \"one\" is not of type \"integer\""
    );
    let (_, body) = ask(&base, "GET", "/things/teapot", "1.0").await;
    assert_eq!(
        detail(&body),
        "Response validation failed: GET /things/{what} at 1.0 answered 418: the status is not \
         documented (documented: 200, 400, 404, 406)"
    );
    let (_, body) = ask(&base, "GET", "/things/text", "1.0").await;
    assert!(
        detail(&body)
            .ends_with("answered 200: the body is not JSON: expected ident at line 1 column 2"),
        "{body}"
    );
    let (_, body) = ask(&base, "GET", "/things/plain", "1.0").await;
    assert_eq!(
        detail(&body),
        "Response validation failed: GET /things/{what} at 1.0 answered 200: its Content-Type is \
         text/plain; charset=utf-8, documented application/json"
    );
    let (_, body) = ask(&base, "DELETE", "/things/chatty", "1.0").await;
    assert_eq!(
        detail(&body),
        "Response validation failed: DELETE /things/{what} at 1.0 answered 202: it is documented \
         without a body but has 4 bytes"
    );
    assert_eq!(
        ask(&base, "DELETE", "/things/quiet", "1.0").await.0,
        StatusCode::ACCEPTED
    );
    // A literal segment wins over a parameter.
    let (status, body) = ask(&base, "GET", "/things/special", "1.0").await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, r#"{"special":true}"#)
    );
    // A version-neutral path is not checked.
    let (status, body) = ask(&base, "GET", "/healthcheck", "1.0").await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "not documented as JSON")
    );
}

/// What the process logs, for the warn mode's test (the only test of
/// this binary that logs).
#[derive(Clone, Default)]
struct Logged(Arc<Mutex<Vec<u8>>>);

impl Logged {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Logged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logged {
    type Writer = Logged;

    fn make_writer(&'a self) -> Logged {
        self.clone()
    }
}

#[tokio::test]
async fn warn_and_off_let_the_response_through() {
    let logged = Logged::default();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .with_writer(logged.clone())
            .with_ansi(false)
            .finish(),
    )
    .expect("the only subscriber of this binary");
    for mode in [ResponseValidation::Warn, ResponseValidation::Off] {
        let base = serve(mode).await;
        let (status, body) = ask(&base, "GET", "/things/old", "1.3").await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::OK, r#"{"id":1}"#),
            "{mode}"
        );
        let (status, _) = ask(&base, "GET", "/things/teapot", "1.3").await;
        assert_eq!(status, StatusCode::IM_A_TEAPOT, "{mode}");
        let (status, body) = ask(&base, "DELETE", "/things/chatty", "1.0").await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::ACCEPTED, "gone"),
            "{mode}"
        );
        let log = logged.text();
        let warned = log
            .lines()
            .filter(|line| line.contains("WARN microversion_server::response_validation"))
            .count();
        // Warn logs each of the three; off checks nothing, so adds none.
        assert_eq!(warned, 3, "{mode}: {log}");
        assert!(
            log.contains(
                "Response validation failed: GET /things/{what} at 1.3 answered 200: the body \
                 does not match its schema: at /: \"size\" is a required property"
            ),
            "{log}"
        );
    }
}

#[test]
fn modes_read_as_nova_names_them() {
    assert_eq!("error".parse(), Ok(ResponseValidation::Error));
    assert_eq!("warn".parse(), Ok(ResponseValidation::Warn));
    assert_eq!("off".parse(), Ok(ResponseValidation::Off));
    assert_eq!("ignore".parse(), Ok(ResponseValidation::Off));
    assert_eq!(
        "strict"
            .parse::<ResponseValidation>()
            .unwrap_err()
            .to_string(),
        "invalid response validation mode \"strict\": expected \"error\", \"warn\" or \"off\" \
         (\"ignore\", Nova's word, means \"off\")"
    );
    assert_eq!(ResponseValidation::default(), ResponseValidation::Off);
}
