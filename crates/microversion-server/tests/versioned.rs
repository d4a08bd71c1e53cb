//! `#[derive(Versioned)]`: one definition, written, read and described at
//! each version, and served over HTTP by a real server on loopback.

use axum::Router;
use axum::extract::Path;
use http::{Method, StatusCode};
use microversion::{Version, VersionRange, VersionSpan};
use microversion_server::openapi::{ApiDescription, OperationDoc};
use microversion_server::schema::BodySchemas;
use microversion_server::versioned::{Versioned, request_schema, response_schema, segments};
use microversion_server::{
    MicroversionLayer, Microversions, ServedVersion, VersionedJson, VersionedRouter,
};
use serde_json::{Value, json};

/// Written as a string at 1.4, as a number from 1.5 on.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct SizeText(String);

impl From<&u32> for SizeText {
    fn from(size: &u32) -> Self {
        SizeText(size.to_string())
    }
}

#[derive(Clone, Versioned)]
#[versioned(response)]
struct Part {
    weight: u32,
    #[versioned(since = "1.2")]
    label: String,
}

/// The widget of the tests: each kind of change once.
#[derive(Clone, Versioned)]
#[versioned(response)]
struct Widget {
    id: u64,
    /// Called `title` before 1.3.
    #[versioned(form(versions = "1.0 - 1.2", rename = "title"))]
    name: String,
    #[versioned(since = "1.1")]
    color: Option<String>,
    #[versioned(until = "1.3")]
    legacy: bool,
    #[versioned(since = "1.4", form(versions = "1.4 - 1.4", via = SizeText))]
    size: u32,
    #[versioned(nested)]
    parts: Vec<Part>,
}

fn widget() -> Widget {
    Widget {
        id: 7,
        name: "w".into(),
        color: Some("red".into()),
        legacy: true,
        size: 3,
        parts: vec![Part {
            weight: 2,
            label: "p".into(),
        }],
    }
}

fn v(minor: u32) -> Version {
    Version::new(1, minor)
}

fn written(minor: u32) -> String {
    serde_json::to_string(&Versioned::new(v(minor), widget())).unwrap()
}

#[test]
fn a_response_holds_each_versions_fields_in_declared_order() {
    let parts_old = r#""parts":[{"weight":2}]"#;
    let parts = r#""parts":[{"weight":2,"label":"p"}]"#;
    assert_eq!(
        written(0),
        format!(r#"{{"id":7,"title":"w","legacy":true,{parts_old}}}"#)
    );
    assert_eq!(
        written(1),
        format!(r#"{{"id":7,"title":"w","color":"red","legacy":true,{parts_old}}}"#)
    );
    assert_eq!(
        written(2),
        format!(r#"{{"id":7,"title":"w","color":"red","legacy":true,{parts}}}"#)
    );
    assert_eq!(
        written(3),
        format!(r#"{{"id":7,"name":"w","color":"red","legacy":true,{parts}}}"#)
    );
    assert_eq!(
        written(4),
        format!(r#"{{"id":7,"name":"w","color":"red","size":"3",{parts}}}"#)
    );
    assert_eq!(
        written(5),
        format!(r#"{{"id":7,"name":"w","color":"red","size":3,{parts}}}"#)
    );
}

#[test]
fn each_versions_schema_holds_exactly_what_is_written() {
    for minor in 0..=6 {
        let body: Value = serde_json::from_str(&written(minor)).unwrap();
        let schema = response_schema::<Widget>(v(minor));
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(
            validator.is_valid(&body),
            "1.{minor}: {body} against {schema:#}"
        );
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, properties, "1.{minor}");
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["required"].as_array().unwrap().len(), keys.len());
    }
    // A newer body does not pass for an older one.
    let newer: Value = serde_json::from_str(&written(5)).unwrap();
    let older = jsonschema::validator_for(&response_schema::<Widget>(v(0))).unwrap();
    assert!(!older.is_valid(&newer));
    // The doc comment describes the field, in each of its names.
    let described = &response_schema::<Widget>(v(0))["properties"]["title"]["description"];
    assert_eq!(described, "Called `title` before 1.3.");
    let at_14 = response_schema::<Widget>(v(4));
    assert_eq!(at_14["properties"]["size"]["$ref"], "#/$defs/SizeText");
    assert_eq!(at_14["$defs"]["SizeText"]["type"], "string");
    assert_eq!(
        response_schema::<Widget>(v(5))["properties"]["size"]["type"],
        "integer"
    );
}

#[test]
fn a_span_is_cut_where_the_shape_changes() {
    let cut = segments::<Widget>(VersionSpan::from_static("1.0 - latest"));
    let shown: Vec<String> = cut.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "1.0 - 1.0",
            "1.1 - 1.1",
            "1.2 - 1.2",
            "1.3 - 1.3",
            "1.4 - 1.4",
            "1.5 - latest"
        ]
    );
    let inside = segments::<Widget>(VersionSpan::from_static("1.2 - 1.3"));
    assert_eq!(inside.len(), 2);
    assert_eq!(
        segments::<Part>(VersionSpan::from_static("1.3 - 1.9")).len(),
        1
    );
}

#[derive(Debug, PartialEq, Versioned)]
#[versioned(request)]
struct NewPart {
    weight: u32,
}

#[derive(Debug, PartialEq, Versioned)]
#[versioned(request)]
struct NewWidget {
    #[versioned(form(versions = "1.0 - 1.2", rename = "title"))]
    name: String,
    #[versioned(since = "1.1")]
    color: Option<String>,
    #[versioned(default)]
    count: u32,
    #[versioned(since = "1.4", nested)]
    parts: Option<Vec<NewPart>>,
}

fn new_widgets() -> BodySchemas<NewWidget> {
    BodySchemas::<NewWidget>::builder("POST /widgets")
        .versioned::<NewWidget>(VersionSpan::ALL)
        .build()
        .unwrap()
}

fn read(minor: u32, body: &str) -> Result<NewWidget, String> {
    new_widgets()
        .parse(v(minor), body.as_bytes())
        .map_err(|e| e.to_string())
}

#[test]
fn a_request_is_read_at_its_version() {
    assert_eq!(
        read(0, r#"{"title": "w"}"#).unwrap(),
        NewWidget {
            name: "w".into(),
            color: None,
            count: 0,
            parts: None
        }
    );
    assert_eq!(
        read(
            4,
            r#"{"name": "w", "color": "red", "count": 2, "parts": [{"weight": 5}]}"#
        )
        .unwrap(),
        NewWidget {
            name: "w".into(),
            color: Some("red".into()),
            count: 2,
            parts: Some(vec![NewPart { weight: 5 }])
        }
    );
    assert_eq!(
        read(4, r#"{"name": "w", "parts": null}"#).unwrap().parts,
        None
    );
}

#[test]
fn a_request_field_the_version_lacks_is_refused_by_name() {
    assert_eq!(
        read(0, r#"{"title": "w", "color": "red"}"#).unwrap_err(),
        "JSON does not validate: field `color` does not exist at version 1.0; \
         the fields at 1.0 are `title`, `count` at line 1 column 22"
    );
    assert_eq!(
        read(3, r#"{"title": "w"}"#).unwrap_err(),
        "JSON does not validate: field `title` does not exist at version 1.3; \
         the fields at 1.3 are `name`, `color`, `count` at line 1 column 8"
    );
    assert_eq!(
        read(5, r#"{"name": "w", "colour": "red"}"#).unwrap_err(),
        "JSON does not validate: unknown field `colour`; \
         the fields at 1.5 are `name`, `color`, `count`, `parts` at line 1 column 22"
    );
    assert_eq!(
        read(
            5,
            r#"{"name": "w", "parts": [{"weight": 1, "label": "x"}]}"#
        )
        .unwrap_err(),
        "JSON does not validate: at parts[0]: unknown field `label`; \
         the fields at 1.5 are `weight` at line 1 column 45"
    );
    assert_eq!(
        read(1, r#"{"color": "red"}"#).unwrap_err(),
        "JSON does not validate: missing field `title` at line 1 column 16"
    );
    assert_eq!(
        read(1, r#"{"title": "a", "title": "b"}"#).unwrap_err(),
        "JSON does not validate: duplicate field `title` at line 1 column 22"
    );
    assert!(read(1, "{").unwrap_err().starts_with("Malformed JSON"));
}

#[test]
fn a_request_schema_matches_what_is_read() {
    let at_0 = request_schema::<NewWidget>(v(0));
    assert_eq!(at_0["required"], json!(["title"]));
    let keys: Vec<&String> = at_0["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["title", "count"]);
    let at_4 = request_schema::<NewWidget>(v(4));
    assert_eq!(
        at_4["properties"]["parts"]["anyOf"][0]["items"]["properties"],
        json!({"weight": {"type": "integer", "format": "uint32", "minimum": 0}})
    );
    // The body schemas carry one schema per shape, for the documents.
    let described: Vec<String> = new_widgets()
        .json_schemas()
        .map(|(span, schema)| {
            assert!(schema.is_some());
            span.to_string()
        })
        .collect();
    assert_eq!(
        described,
        ["1.0 - 1.0", "1.1 - 1.2", "1.3 - 1.3", "1.4 - latest"]
    );
}

#[test]
fn under_the_legacy_root_unknown_fields_are_dropped() {
    let read = new_widgets()
        .parse_relaxed(v(0), br#"{"title": "w", "color": "red", "extra": 1}"#)
        .unwrap();
    assert_eq!(read.name, "w");
    assert_eq!(read.color, None);
}

fn api() -> Microversions {
    Microversions::builder("widgets", VersionRange::from_static("1.0", "1.5"))
        .build()
        .unwrap()
}

async fn show(version: ServedVersion, Path(id): Path<u64>) -> Versioned<Widget> {
    Versioned::new(version, Widget { id, ..widget() })
}

async fn create(
    version: ServedVersion,
    VersionedJson(new): VersionedJson<NewWidget>,
) -> (StatusCode, Versioned<Widget>) {
    let made = Widget {
        name: new.name,
        color: new.color,
        ..widget()
    };
    (StatusCode::CREATED, Versioned::new(version, made))
}

fn router() -> VersionedRouter<()> {
    VersionedRouter::new()
        .get("/widgets/{id}", VersionSpan::ALL, show)
        .post("/widgets", VersionSpan::ALL, create)
        .body("/widgets", Method::POST, new_widgets())
}

#[tokio::test]
async fn a_server_answers_each_version_from_one_type() {
    let app: Router = router()
        .build()
        .unwrap()
        .layer(MicroversionLayer::new(api()));
    let base = microversion_test_support::serve(app).await;
    let client = reqwest::Client::new();
    let get = |version: &'static str| {
        client
            .get(format!("{base}/widgets/9"))
            .header("openstack-api-version", format!("widgets {version}"))
            .send()
    };
    let old = get("1.0").await.unwrap();
    assert_eq!(old.status(), StatusCode::OK);
    assert_eq!(old.headers()["content-type"], "application/json");
    assert_eq!(
        old.text().await.unwrap(),
        r#"{"id":9,"title":"w","legacy":true,"parts":[{"weight":2}]}"#
    );
    let new = get("latest").await.unwrap();
    assert_eq!(new.headers()["openstack-api-version"], "widgets 1.5");
    assert_eq!(
        new.text().await.unwrap(),
        r#"{"id":9,"name":"w","color":"red","size":3,"parts":[{"weight":2,"label":"p"}]}"#
    );

    let post = |version: &'static str, body: Value| {
        client
            .post(format!("{base}/widgets"))
            .header("openstack-api-version", format!("widgets {version}"))
            .json(&body)
            .send()
    };
    let made = post("1.3", json!({"name": "n", "color": "blue"}))
        .await
        .unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let made: Value = made.json().await.unwrap();
    assert_eq!(made["name"], "n");
    assert_eq!(made["color"], "blue");
    let refused = post("1.0", json!({"title": "n", "color": "blue"}))
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let refused: Value = refused.json().await.unwrap();
    let detail = refused["errors"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("field `color` does not exist at version 1.0"),
        "{detail}"
    );
}

#[test]
fn the_documents_take_each_versions_schemas_from_the_type() {
    let docs = [
        OperationDoc::get("/widgets/{id}")
            .path_parameter("id", "The widget.", json!({"type": "integer"}))
            .versioned_response::<Widget>(VersionSpan::ALL, StatusCode::OK, "The widget"),
        OperationDoc::post("/widgets").versioned_response::<Widget>(
            VersionSpan::ALL,
            StatusCode::CREATED,
            "Made",
        ),
    ];
    let description = ApiDescription::builder(&api())
        .routes(&router())
        .operations(docs)
        .build()
        .unwrap();
    for minor in 0..=5 {
        let doc = description.at(v(minor)).unwrap().to_value();
        let shown = &doc["paths"]["/widgets/{id}"]["get"]["responses"]["200"]["content"]["application/json"]
            ["schema"];
        let expected = response_schema::<Widget>(v(minor));
        assert_eq!(
            shown["properties"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            expected["properties"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            "1.{minor}"
        );
        assert_eq!(shown["required"], expected["required"], "1.{minor}");
        if minor == 4 {
            assert_eq!(
                shown["properties"]["size"]["$ref"],
                "#/components/schemas/SizeText"
            );
            assert_eq!(doc["components"]["schemas"]["SizeText"]["type"], "string");
        }
        let body = &doc["paths"]["/widgets"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        let keys: Vec<&String> = body["properties"].as_object().unwrap().keys().collect();
        let expected: &[&str] = match minor {
            0 => &["title", "count"],
            1 | 2 => &["title", "color", "count"],
            3 => &["name", "color", "count"],
            _ => &["name", "color", "count", "parts"],
        };
        assert_eq!(keys, expected, "1.{minor}");
    }
}

#[derive(Debug, Versioned)]
#[versioned(request)]
struct ListQuery {
    name: Option<String>,
    #[versioned(since = "1.2")]
    limit: Option<u32>,
}

async fn list(
    microversion_server::versioned::VersionedQuery(query): microversion_server::versioned::VersionedQuery<ListQuery>,
) -> String {
    format!("{:?} {:?}", query.name, query.limit)
}

#[tokio::test]
async fn a_query_string_is_read_at_the_served_version() {
    let api = Microversions::builder("widgets", VersionRange::from_static("1.0", "1.5"))
        .legacy_root("/v2")
        .build()
        .unwrap();
    let app: Router = VersionedRouter::new()
        .get("/widgets", VersionSpan::ALL, list)
        .get("/v2/widgets", VersionSpan::ALL, list)
        .build()
        .unwrap()
        .layer(MicroversionLayer::new(api));
    let base = microversion_test_support::serve(app).await;
    let client = reqwest::Client::new();
    let get = |path: &'static str, version: &'static str| {
        let client = client.clone();
        let url = format!("{base}{path}");
        async move {
            let answer = client
                .get(url)
                .header("openstack-api-version", format!("widgets {version}"))
                .send()
                .await
                .unwrap();
            (answer.status(), answer.text().await.unwrap())
        }
    };
    assert_eq!(
        get("/widgets?name=a%20b&limit=5", "1.2").await,
        (StatusCode::OK, r#"Some("a b") Some(5)"#.to_owned())
    );
    let (status, body) = get("/widgets?limit=5", "1.1").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains(
            "Invalid query string: field `limit` does not exist at version 1.1; \
             the fields at 1.1 are `name`"
        ),
        "{body}"
    );
    let (status, body) = get("/widgets?limit=many", "1.2").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains("Invalid query string: invalid digit"),
        "{body}"
    );
    // The legacy root serves 1.0 and drops what 1.0 does not have.
    assert_eq!(
        get("/v2/widgets?name=a&limit=5&other=1", "1.2").await,
        (StatusCode::OK, r#"Some("a") None"#.to_owned())
    );
}

#[test]
fn the_documents_take_each_versions_query_from_the_type() {
    let description = ApiDescription::builder(&api())
        .routes(&VersionedRouter::<()>::new().get("/widgets", VersionSpan::ALL, list))
        .operation(
            OperationDoc::get("/widgets")
                .versioned_query::<ListQuery>(VersionSpan::ALL)
                .response(
                    VersionSpan::ALL,
                    StatusCode::OK,
                    microversion_server::openapi::ResponseDoc::empty("The widgets"),
                ),
        )
        .build()
        .unwrap();
    let names = |minor| {
        let doc = description.at(v(minor)).unwrap().to_value();
        doc["paths"]["/widgets"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(1), ["OpenStack-API-Version", "name"]);
    assert_eq!(names(2), ["OpenStack-API-Version", "name", "limit"]);
}

/// Versions named by the changes that make them.
mod by_change {
    use microversion::Change;
    use microversion_server::schema::BodySchemas;
    use microversion_server::versioned::{Versioned, segments};

    use super::v;

    const COLORS: Change = Change::new("1.1", "Gadgets have a color.");
    const NO_LEGACY: Change = Change::new("1.4", "Gadgets lose their legacy flag.");

    #[derive(Clone, Debug, PartialEq, Versioned)]
    #[versioned(response, request)]
    struct Gadget {
        id: u64,
        /// Spelt `colour` before 1.3.
        #[versioned(since = COLORS, form(versions = "1.1 - 1.2", rename = "colour"))]
        color: Option<String>,
        #[versioned(removed = NO_LEGACY)]
        legacy: bool,
    }

    fn gadget() -> Gadget {
        Gadget {
            id: 1,
            color: Some("red".into()),
            legacy: true,
        }
    }

    #[test]
    fn fields_follow_the_changes_that_name_them() {
        let written = |minor| serde_json::to_string(&Versioned::new(v(minor), gadget())).unwrap();
        assert_eq!(written(0), r#"{"id":1,"legacy":true}"#);
        assert_eq!(written(1), r#"{"id":1,"colour":"red","legacy":true}"#);
        assert_eq!(written(3), r#"{"id":1,"color":"red","legacy":true}"#);
        assert_eq!(written(4), r#"{"id":1,"color":"red"}"#);
        let pieces: Vec<String> = segments::<Gadget>(microversion::VersionSpan::ALL)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            pieces,
            ["1.0 - 1.0", "1.1 - 1.2", "1.3 - 1.3", "1.4 - latest"]
        );

        let schemas = BodySchemas::<Gadget>::builder("POST /gadgets")
            .versioned::<Gadget>(microversion::VersionSpan::ALL)
            .build()
            .unwrap();
        let read = |minor, body: &str| {
            schemas
                .parse(v(minor), body.as_bytes())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            read(4, r#"{"id": 1, "color": "red"}"#).unwrap(),
            Gadget {
                legacy: false,
                ..gadget()
            }
        );
        let refused = read(0, r#"{"id": 1, "color": "red", "legacy": true}"#).unwrap_err();
        assert!(
            refused.contains("field `color` does not exist at version 1.0"),
            "{refused}"
        );
    }
}

/// What a request type's schema says of a field is enforced, after the
/// type's own refusals.
mod schema_enforced {
    use microversion_server::schema::BodySchemas;
    use microversion_server::versioned::Versioned;
    use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

    use super::v;

    /// A name of at most three characters, as its schema says.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Short(String);

    impl JsonSchema for Short {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Short".into()
        }

        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({"type": "string", "maxLength": 3})
        }
    }

    #[derive(Debug, PartialEq, Versioned)]
    #[versioned(request)]
    struct Tag {
        name: Short,
        #[versioned(since = "1.2")]
        color: Option<String>,
    }

    #[test]
    fn a_body_is_held_to_its_versions_schema() {
        let schemas = BodySchemas::<Tag>::builder("POST /tags")
            .versioned::<Tag>(microversion::VersionSpan::ALL)
            .build()
            .unwrap();
        let read = |minor, body: &str| {
            schemas
                .parse(v(minor), body.as_bytes())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            read(2, r#"{"name": "abc"}"#).unwrap(),
            Tag {
                name: Short("abc".into()),
                color: None
            }
        );
        let long = read(2, r#"{"name": "toolong"}"#).unwrap_err();
        assert!(
            long.contains("\"toolong\" is longer than 3 characters"),
            "{long}"
        );
        // The type's refusal, naming the version's fields, comes first.
        let unknown = read(1, r#"{"name": "toolong", "color": "red"}"#).unwrap_err();
        assert!(
            unknown.contains(
                "field `color` does not exist at version 1.1; the fields at 1.1 are `name` at line 1 column 27"
            ),
            "{unknown}"
        );
    }
}
