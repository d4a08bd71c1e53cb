//! `Sweep`: every operation at the versions where a mistake hides, sent to
//! a real server on loopback and checked against the documents.

use axum::Json;
use axum::body::Body;
use http::{Method, Request, StatusCode};
use microversion::{Change, Version};
use microversion_server::history::VersionHistory;
use microversion_server::openapi::{ApiDescription, OperationDoc, ResponseDoc, Sweep};
use microversion_server::versioned::Versioned;
use microversion_server::{MicroversionLayer, Microversions, ServedVersion, VersionedRouter};
use serde_json::{Value, json};

const INITIAL: Change = Change::new("1.0", "Initial version: widgets and /stats.");
const COLOR: Change = Change::new("1.1", "Widgets have a color.");
const CREATED_200: Change = Change::new("1.2", "POST /widgets answers 200 with the widget.");
const GADGETS: Change = Change::new("1.3", "Adds /gadgets; removes /stats.");
const CHANGES: [Change; 4] = [INITIAL, COLOR, CREATED_200, GADGETS];

#[derive(Clone, Versioned)]
#[versioned(response)]
struct Widget {
    id: u64,
    #[versioned(since = "1.1")]
    color: String,
}

fn widget() -> Widget {
    Widget {
        id: 7,
        color: "red".into(),
    }
}

async fn show(version: ServedVersion) -> Versioned<Widget> {
    Versioned::new(version, widget())
}

async fn create(version: ServedVersion) -> (StatusCode, Versioned<Widget>) {
    (StatusCode::CREATED, Versioned::new(version, widget()))
}

/// A handler that forgets the documents: `color` before 1.1.
async fn show_wrongly() -> Json<Value> {
    Json(json!({"id": 7, "color": "red"}))
}

fn routes(correct: bool) -> VersionedRouter<()> {
    let router = VersionedRouter::new();
    let router = if correct {
        router.get("/widgets/{id}", INITIAL.since(), show)
    } else {
        router.get("/widgets/{id}", INITIAL.since(), show_wrongly)
    };
    router
        .post("/widgets", INITIAL.since(), create)
        .status(
            "/widgets",
            &Method::POST,
            CREATED_200.since(),
            StatusCode::OK,
        )
        .get("/stats", INITIAL.until(GADGETS), || async {
            Json(json!({"count": 1}))
        })
        .get("/gadgets", GADGETS.since(), || async { Json(json!([])) })
}

fn description(api: &Microversions, routes: &VersionedRouter<()>) -> ApiDescription {
    let count = json!({"type": "object", "properties": {"count": {"type": "integer"}}});
    ApiDescription::builder(api)
        .routes(routes)
        .history(&VersionHistory::of(&CHANGES).unwrap())
        .operation(
            OperationDoc::get("/widgets/{id}").versioned_response::<Widget>(
                INITIAL.since(),
                StatusCode::OK,
                "The widget",
            ),
        )
        .operation(
            OperationDoc::post("/widgets")
                .versioned_response::<Widget>(
                    INITIAL.until(CREATED_200),
                    StatusCode::CREATED,
                    "Made",
                )
                .versioned_response::<Widget>(CREATED_200.since(), StatusCode::OK, "Made"),
        )
        .operation(OperationDoc::get("/stats").response(
            INITIAL.until(GADGETS),
            StatusCode::OK,
            ResponseDoc::json("The counts", count),
        ))
        .operation(OperationDoc::get("/gadgets").response(
            GADGETS.since(),
            StatusCode::OK,
            ResponseDoc::json("The gadgets", json!({"type": "array"})),
        ))
        .build()
        .unwrap()
}

/// The sweep of the service over loopback, `correct` or with one handler
/// that answers a field its version does not have.
async fn sweep(correct: bool) -> (Sweep, microversion_server::openapi::SweepReport) {
    let history = VersionHistory::of(&CHANGES).unwrap();
    let api = Microversions::builder("widgets", history.range())
        .build()
        .unwrap();
    let routes = routes(correct);
    let description = description(&api, &routes);
    let app = routes
        .build_for(&api)
        .unwrap()
        .layer(MicroversionLayer::new(api));
    let base = microversion_test_support::serve(app).await;
    let client = reqwest::Client::new();
    let sweep = Sweep::new(&description);
    let report = sweep
        .run(
            |probe| async move {
                let path = probe.path.replace("{id}", "7");
                Some(
                    Request::builder()
                        .method(&probe.method)
                        .uri(path)
                        .body(Body::empty()),
                )
            },
            |request| microversion_test_support::forward(&client, &base, request),
        )
        .await;
    (sweep, report)
}

#[tokio::test]
async fn each_operation_is_tried_where_its_versions_change() {
    let (sweep, report) = sweep(true).await;
    assert!(report.passed(), "{report}");
    let tried: Vec<String> = sweep
        .probes()
        .iter()
        .map(|p| format!("{} {} {} {}", p.method, p.path, p.version, p.served))
        .collect();
    assert_eq!(
        tried,
        [
            "GET /gadgets 1.2 false",
            "GET /gadgets 1.3 true",
            "GET /stats 1.0 true",
            "GET /stats 1.2 true",
            "GET /stats 1.3 false",
            "POST /widgets 1.0 true",
            "POST /widgets 1.1 true",
            "POST /widgets 1.2 true",
            "POST /widgets 1.3 true",
            "GET /widgets/{id} 1.0 true",
            "GET /widgets/{id} 1.1 true",
            "GET /widgets/{id} 1.3 true",
        ]
    );
    assert_eq!(report.checked, tried.len());
    let why: Vec<&str> = sweep
        .probes()
        .iter()
        .filter(|p| p.path == "/widgets" && p.version == Version::new(1, 1))
        .map(|p| p.why.as_str())
        .collect();
    assert_eq!(why, ["1.1 changes it, before 1.2 changes it"]);
}

#[tokio::test]
async fn an_answer_its_version_does_not_document_fails() {
    let (_, report) = sweep(false).await;
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|(probe, why)| format!("{probe}: {why}"))
        .collect();
    assert_eq!(failures.len(), 1, "{report}");
    assert!(
        failures[0].starts_with(
            "GET /widgets/{id} at 1.0 (its first version, before 1.1 changes it): answered 200: \
             the body does not match its schema: at /: Additional properties are not allowed"
        ),
        "{report}"
    );
}
