use std::time::UNIX_EPOCH;

use serde_json::json;

use super::*;

fn api() -> Microversions {
    Microversions::builder("things", VersionRange::from_static("1.0", "1.9"))
        .build()
        .unwrap()
}

fn span(text: &'static str) -> VersionSpan {
    VersionSpan::from_static(text)
}

fn router() -> VersionedRouter<()> {
    VersionedRouter::new()
        .get("/things", VersionSpan::ALL, || async { "" })
        .post("/things", span("1.0 - 1.4"), || async { "" })
        .post("/things", span("1.5 - latest"), || async { "" })
        .delete("/things/{id}", span("1.3 - latest"), || async { "" })
}

fn object(properties: &Value) -> Value {
    json!({"type": "object", "properties": properties, "additionalProperties": false})
}

fn docs() -> Vec<OperationDoc> {
    let query = BodySchemas::<Value>::builder("GET /things query")
        .json_schema(span("1.0 - 1.1"), &object(&json!({"name": {"type": "string"}})))
        .json_schema(
            span("1.2 - latest"),
            &object(&json!({"name": {"type": "string"}, "limit": {"type": "string", "pattern": "^[0-9]+$"}})),
        )
        .build()
        .unwrap();
    let body = BodySchemas::<Value>::builder("POST /things")
        .json_schema(
            span("1.0 - 1.4"),
            &object(&json!({"name": {"type": "string"}})),
        )
        .json_schema(
            span("1.5 - latest"),
            &object(&json!({"name": {"type": "string"}, "size": {"type": "integer"}})),
        )
        .build()
        .unwrap();
    let thing = |sized: bool| {
        let mut properties = json!({"name": {"type": "string"}});
        if sized {
            properties["size"] = json!({"type": "integer"});
        }
        object(&properties)
    };
    vec![
        OperationDoc::get("/things")
            .summary("List things")
            .query(&query)
            .query_description("limit", "At most this many.")
            .response(
                VersionSpan::ALL,
                StatusCode::OK,
                ResponseDoc::json("The things", json!({"type": "array"})),
            ),
        OperationDoc::post("/things")
            .body(&body)
            .response(
                span("1.0 - 1.4"),
                StatusCode::CREATED,
                ResponseDoc::empty("Made"),
            )
            .response(
                span("1.5 - 1.6"),
                StatusCode::OK,
                ResponseDoc::json("Made", thing(false)),
            )
            .response(
                span("1.7 - latest"),
                StatusCode::OK,
                ResponseDoc::json("Made", thing(true)),
            )
            .error(StatusCode::CONFLICT, "A thing of that name exists."),
        OperationDoc::delete("/things/{id}")
            .path_parameter(
                "id",
                "The thing.",
                json!({"type": "string", "format": "uuid"}),
            )
            .response(
                span("1.3 - latest"),
                StatusCode::NO_CONTENT,
                ResponseDoc::empty("Gone"),
            )
            .error(StatusCode::NOT_FOUND, "No such thing."),
    ]
}

fn description() -> ApiDescription {
    ApiDescription::builder(&api())
        .title("Things")
        .routes(&router())
        .operations(docs())
        .build()
        .unwrap()
}

#[test]
fn one_version_holds_only_what_exists_then() {
    let d = description();
    let doc = d.at(Version::new(1, 2)).unwrap().to_value();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "1.2");
    assert!(
        doc["paths"].get("/things/{id}").is_none(),
        "DELETE comes at 1.3"
    );
    let list = &doc["paths"]["/things"]["get"];
    let names: Vec<&str> = list["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["OpenStack-API-Version", "name", "limit"]);
    assert_eq!(list["parameters"][0]["in"], "header");
    assert_eq!(list["parameters"][0]["required"], true);
    assert_eq!(
        list["parameters"][0]["schema"]["enum"],
        json!(["things 1.2"])
    );
    assert_eq!(list["parameters"][2]["description"], "At most this many.");
    // The layer's answers.
    for status in ["200", "400", "406"] {
        assert!(list["responses"].get(status).is_some(), "{status}");
    }
    let post = &doc["paths"]["/things"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/json"]["schema"]["properties"],
        json!({"name": {"type": "string"}})
    );
    assert!(post["responses"].get("201").is_some());
    assert!(post["responses"].get("200").is_none());
    assert_eq!(
        post["responses"]["409"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ApiError"
    );
    assert!(doc["components"]["schemas"]["ApiError"].is_object());
    assert!(post.get("deprecated").is_none());

    let doc = d.at(Version::new(1, 0)).unwrap().to_value();
    let names: Vec<&str> = doc["paths"]["/things"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["OpenStack-API-Version", "name"],
        "limit comes at 1.2"
    );
    let doc = d.at(Version::new(1, 9)).unwrap().to_value();
    assert_eq!(
        doc["paths"]["/things"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
            ["properties"]["size"],
        json!({"type": "integer"})
    );
    assert_eq!(
        doc["paths"]["/things/{id}"]["delete"]["parameters"][0],
        json!({"name": "id", "in": "path", "description": "The thing.", "required": true,
               "schema": {"type": "string", "format": "uuid"}})
    );
}

#[test]
fn versions_outside_the_range_have_no_document() {
    let err = description().at(Version::new(1, 10)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "version 1.10 is not supported: the range is 1.0 - 1.9"
    );
}

/// The description of `router()` over 1.0 to 1.9 with `deprecation`.
fn deprecating(deprecation: Deprecation) -> ApiDescription {
    let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.9"))
        .deprecation(deprecation)
        .build()
        .unwrap();
    ApiDescription::builder(&api)
        .routes(&router())
        .operations(docs())
        .build()
        .unwrap()
}

#[test]
fn deprecated_versions_are_marked() {
    let d = deprecating(Deprecation::new(Version::new(1, 3), UNIX_EPOCH));
    let old = d.at(Version::new(1, 2)).unwrap().to_value();
    assert_eq!(old["paths"]["/things"]["get"]["deprecated"], true);
    assert!(
        old["info"]["description"]
            .as_str()
            .unwrap()
            .contains("deprecated")
    );
    let new = d.at(Version::new(1, 3)).unwrap().to_value();
    assert!(new["paths"]["/things"]["get"].get("deprecated").is_none());
    let whole = d.whole().to_value();
    assert_eq!(whole["info"]["x-openstack"]["deprecated-below"], "1.3");
    assert_eq!(
        whole["info"]["title"], "things",
        "the service type by default"
    );
}

#[test]
fn versions_deprecated_one_by_one_are_marked() {
    let d = deprecating(Deprecation::versions(
        microversion::VersionSpan::from_static("1.5 - 1.6"),
        UNIX_EPOCH,
    ));
    let at = |minor| d.at(Version::new(1, minor)).unwrap().to_value();
    assert_eq!(at(5)["paths"]["/things"]["get"]["deprecated"], true);
    assert_eq!(at(6)["paths"]["/things"]["get"]["deprecated"], true);
    assert!(at(4)["paths"]["/things"]["get"].get("deprecated").is_none());
    assert!(at(7)["paths"]["/things"]["get"].get("deprecated").is_none());
    let whole = d.whole().to_value();
    assert_eq!(
        whole["info"]["x-openstack"]["deprecated-versions"],
        serde_json::json!(["1.5 - 1.6"])
    );
    assert!(
        whole["info"]["x-openstack"]
            .get("deprecated-below")
            .is_none()
    );
}

#[test]
fn the_whole_range_carries_openstack_ranges() {
    let doc = description().whole().to_value();
    assert_eq!(doc["info"]["version"], "1.9");
    assert_eq!(
        doc["paths"]["/things/{id}"]["delete"]["x-openstack"],
        json!({"min-ver": "1.3"})
    );
    assert!(doc["paths"]["/things"]["get"].get("x-openstack").is_none());
    assert_eq!(doc["paths"]["/things"]["get"]["operationId"], "things:get");
    assert_eq!(
        doc["paths"]["/things/{id}"]["delete"]["operationId"],
        "things/id:delete"
    );
    assert_eq!(
        doc["paths"]["/things/{id}"]["delete"]["tags"],
        json!(["things"])
    );
    let params = doc["paths"]["/things"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let limit = params.iter().find(|p| p["name"] == "limit").unwrap();
    assert_eq!(limit["x-openstack"], json!({"min-ver": "1.2"}));
    let name = params.iter().find(|p| p["name"] == "name").unwrap();
    assert!(name.get("x-openstack").is_none());
    // The body's variants, each with its range.
    let body =
        &doc["paths"]["/things"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(
        body["x-openstack"],
        json!({"discriminator": "microversion"})
    );
    assert_eq!(
        body["oneOf"][0]["x-openstack"],
        json!({"min-ver": "1.0", "max-ver": "1.4"})
    );
    assert_eq!(
        body["oneOf"][1]["x-openstack"],
        json!({"min-ver": "1.5", "max-ver": "1.9"})
    );
    assert!(body["oneOf"][1]["properties"]["size"].is_object());
    // Responses: 201 up to 1.4, 200 from 1.5 with `size` from 1.7.
    let responses = &doc["paths"]["/things"]["post"]["responses"];
    assert_eq!(responses["201"]["x-openstack"], json!({"max-ver": "1.4"}));
    assert_eq!(responses["200"]["x-openstack"], json!({"min-ver": "1.5"}));
    assert_eq!(
        responses["200"]["content"]["application/json"]["schema"]["properties"]["size"]["x-openstack"],
        json!({"min-ver": "1.7"})
    );
    assert!(responses["409"].is_object() && responses["406"].is_object());
}

fn build_with(
    router: &VersionedRouter<()>,
    docs: Vec<OperationDoc>,
) -> Result<ApiDescription, OpenApiError> {
    ApiDescription::builder(&api())
        .routes(router)
        .operations(docs)
        .build()
}

fn ok() -> ResponseDoc {
    ResponseDoc::empty("ok")
}

#[test]
fn routes_and_documentation_must_match() {
    let router = VersionedRouter::<()>::new()
        .get("/a", VersionSpan::ALL, || async { "" })
        .get("/b", VersionSpan::ALL, || async { "" });
    let a = || OperationDoc::get("/a").response(VersionSpan::ALL, StatusCode::OK, ok());
    let err = build_with(&router, vec![a()]).unwrap_err();
    assert_eq!(err.to_string(), "GET /b is routed but not documented");
    let b = OperationDoc::get("/b").response(VersionSpan::ALL, StatusCode::OK, ok());
    let c = OperationDoc::put("/a").response(VersionSpan::ALL, StatusCode::OK, ok());
    let err = build_with(&router, vec![a(), b.clone(), c]).unwrap_err();
    assert_eq!(err.to_string(), "documentation of PUT /a: no route");
    let err = build_with(&router, vec![a(), b, a()]).unwrap_err();
    assert_eq!(err.to_string(), "documentation of GET /a: documented twice");
}

#[test]
fn every_version_needs_a_response() {
    let router = VersionedRouter::<()>::new().get("/a", span("1.2 - latest"), || async { "" });
    let doc = OperationDoc::get("/a")
        .response(span("1.2 - 1.4"), StatusCode::OK, ok())
        .response(span("1.6 - latest"), StatusCode::OK, ok());
    let err = build_with(&router, vec![doc]).unwrap_err();
    assert_eq!(
        err,
        OpenApiError::NoResponse {
            method: Method::GET,
            path: "/a".into(),
            version: Version::new(1, 5)
        }
    );
    let doc = OperationDoc::get("/a").response(span("1.0 - latest"), StatusCode::OK, ok());
    let err = build_with(&router, vec![doc]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the 200 response of GET /a is declared at 1.0 - latest, where the operation is not served"
    );
}

#[test]
fn schemas_must_be_known_and_describable() {
    let router = VersionedRouter::<()>::new().post("/a", VersionSpan::ALL, || async { "" });
    #[derive(serde::Deserialize)]
    struct Plain {}
    let serde_only = BodySchemas::<Plain>::builder("POST /a")
        .serde::<Plain>(VersionSpan::ALL)
        .build()
        .unwrap();
    let doc =
        OperationDoc::post("/a")
            .body(&serde_only)
            .response(VersionSpan::ALL, StatusCode::OK, ok());
    let err = build_with(&router, vec![doc]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the schema of the body of POST /a at all is a serde type without a JSON Schema"
    );
    let doc = OperationDoc::post("/a")
        .query_schema(span("1.3 - latest"), json!({"oneOf": [{"type": "object"}]}))
        .response(VersionSpan::ALL, StatusCode::OK, ok());
    let err = build_with(&router, vec![doc]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot describe the query of POST /a at 1.3 - latest: the keyword oneOf does not map to parameters"
    );
    let doc = OperationDoc::post("/a")
        .body_schema(
            VersionSpan::ALL,
            json!({"$ref": "https://example.invalid/x.json"}),
        )
        .response(VersionSpan::ALL, StatusCode::OK, ok());
    let err = build_with(&router, vec![doc]).unwrap_err();
    assert!(
        err.to_string().contains("points outside the document"),
        "{err}"
    );
    let doc = OperationDoc::post("/a")
        .query_schema(
            VersionSpan::ALL,
            json!({"type": "object", "required": ["x"]}),
        )
        .response(VersionSpan::ALL, StatusCode::OK, ok());
    assert!(build_with(&router, vec![doc]).is_err());
}

#[test]
fn paths_and_ranges_openapi_cannot_say_are_refused() {
    let router =
        VersionedRouter::<()>::new().get("/files/{*rest}", VersionSpan::ALL, || async { "" });
    let doc = OperationDoc::get("/files/{*rest}").response(VersionSpan::ALL, StatusCode::OK, ok());
    let err = build_with(&router, vec![doc]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot describe GET /files/{*rest}: the wildcard"),
        "{err}"
    );

    let router = VersionedRouter::<()>::new()
        .get("/a", span("1.0 - 1.2"), || async { "" })
        .get("/a", span("1.5 - latest"), || async { "" });
    let doc = OperationDoc::get("/a").response(VersionSpan::ALL, StatusCode::OK, ok());
    let err = build_with(&router, vec![doc]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot describe GET /a: it is served up to 1.2 and again from 1.5: one operation has one range"
    );

    let router = VersionedRouter::<()>::new().get("/a/{id}", VersionSpan::ALL, || async { "" });
    let doc = OperationDoc::get("/a/{id}")
        .path_parameter("name", "no such", json!({}))
        .response(VersionSpan::ALL, StatusCode::OK, ok());
    assert!(build_with(&router, vec![doc]).is_err());
}

#[test]
fn pattern_parameters_are_free_form_objects() {
    let router = VersionedRouter::<()>::new().get("/a", VersionSpan::ALL, || async { "" });
    let doc = OperationDoc::get("/a")
        .query_schema(
            VersionSpan::ALL,
            json!({"type": "object", "patternProperties": {"^group[0-9]+$": {"type": "string"}}}),
        )
        .response(VersionSpan::ALL, StatusCode::OK, ok());
    let d = build_with(&router, vec![doc]).unwrap();
    let doc = d.at(Version::new(1, 0)).unwrap().to_value();
    let param = &doc["paths"]["/a"]["get"]["parameters"][1];
    assert_eq!(param["name"], "^group[0-9]+$");
    assert_eq!(param["style"], "form");
    assert_eq!(param["explode"], true);
    assert_eq!(
        param["schema"]["patternProperties"]["^group[0-9]+$"],
        json!({"type": "string"})
    );
}

#[test]
fn version_neutral_paths_have_no_version_header() {
    let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.9"))
        .version_neutral("/health")
        .build()
        .unwrap();
    let router = VersionedRouter::<()>::new().get("/health", VersionSpan::ALL, || async { "" });
    let d = ApiDescription::builder(&api)
        .routes(&router)
        .operation(OperationDoc::get("/health").response(VersionSpan::ALL, StatusCode::OK, ok()))
        .build()
        .unwrap();
    let doc = d.at(Version::new(1, 4)).unwrap().to_value();
    let get = &doc["paths"]["/health"]["get"];
    assert!(get.get("parameters").is_none());
    assert!(get["responses"].get("406").is_none());
}

#[cfg(feature = "schemars")]
#[test]
fn schemas_derived_from_types_share_their_definitions() {
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Part {
        name: String,
    }
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Whole {
        parts: Vec<Part>,
    }
    let router = VersionedRouter::<()>::new().post("/a", VersionSpan::ALL, || async { "" });
    let body = BodySchemas::<Whole>::builder("POST /a")
        .serde_schema::<Whole>(VersionSpan::ALL)
        .build()
        .unwrap();
    let doc = OperationDoc::post("/a").body(&body).response(
        VersionSpan::ALL,
        StatusCode::OK,
        ResponseDoc::of::<Part>("a part"),
    );
    let d = build_with(&router, vec![doc]).unwrap();
    let doc = d.at(Version::new(1, 0)).unwrap().to_value();
    let schema =
        &doc["paths"]["/a"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(
        schema["properties"]["parts"]["items"]["$ref"],
        "#/components/schemas/Part"
    );
    assert!(schema.get("$schema").is_none());
    assert_eq!(
        doc["components"]["schemas"]["Part"]["required"],
        json!(["name"])
    );
}

#[test]
fn shared_body_schemas_are_taken_where_the_operation_has_a_body() {
    let router = VersionedRouter::<()>::new()
        .put("/a", span("1.2 - 1.6"), || async { "" })
        .put("/a", span("1.7 - latest"), || async { "" });
    let shared = BodySchemas::<Value>::builder("name")
        .json_schema(
            VersionSpan::ALL,
            &object(&json!({"name": {"type": "string"}})),
        )
        .build()
        .unwrap();
    let doc = OperationDoc::put("/a")
        .body_at(span("1.2 - 1.6"), &shared)
        .response(span("1.2 - latest"), StatusCode::OK, ok());
    let d = build_with(&router, vec![doc]).unwrap();
    let body = |minor| {
        d.at(Version::new(1, minor)).unwrap().to_value()["paths"]["/a"]["put"]
            .get("requestBody")
            .cloned()
    };
    assert!(body(2).is_some() && body(6).is_some());
    assert!(body(7).is_none());
    let whole = d.whole().to_value();
    assert_eq!(
        whole["paths"]["/a"]["put"]["requestBody"]["content"]["application/json"]["schema"]["oneOf"]
            [0]["x-openstack"],
        json!({"min-ver": "1.2", "max-ver": "1.6"})
    );
}

#[test]
fn an_operation_deprecated_alone_is_marked_where_it_is() {
    let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.9"))
        .build()
        .unwrap();
    let router = router().deprecate(
        "/things/{id}",
        &http::Method::DELETE,
        Deprecation::versions(span("1.3 - 1.9"), UNIX_EPOCH),
    );
    let d = ApiDescription::builder(&api)
        .routes(&router)
        .operations(docs())
        .build()
        .unwrap();
    let at = d.at(Version::new(1, 4)).unwrap().to_value();
    assert_eq!(at["paths"]["/things/{id}"]["delete"]["deprecated"], true);
    assert!(at["paths"]["/things"]["get"].get("deprecated").is_none());
    assert!(
        !at["info"]["description"]
            .as_str()
            .unwrap_or_default()
            .contains("deprecated")
    );
    let whole = d.whole().to_value();
    assert_eq!(whole["paths"]["/things/{id}"]["delete"]["deprecated"], true);
    assert!(whole["paths"]["/things"]["get"].get("deprecated").is_none());
}

/// A body bound on the router is documented from there; documenting it
/// again is refused.
#[test]
fn bodies_bound_on_the_router_are_documented() {
    let body = || {
        BodySchemas::<Value>::builder("DELETE /things/{id}")
            .json_schema(
                span("1.4 - latest"),
                &object(&json!({"why": {"type": "string"}})),
            )
            .build()
            .unwrap()
    };
    let routes = router().body("/things/{id}", Method::DELETE, body());
    let description = ApiDescription::builder(&api())
        .routes(&routes)
        .operations(docs())
        .build()
        .unwrap();
    let request_body = |minor: u32| {
        description.at(Version::new(1, minor)).unwrap().to_value()["paths"]["/things/{id}"]
            ["delete"]
            .get("requestBody")
            .cloned()
    };
    assert_eq!(request_body(3), None);
    assert_eq!(
        request_body(4).unwrap()["content"]["application/json"]["schema"]["properties"]["why"]["type"],
        "string"
    );
    let again = docs().into_iter().map(|doc| {
        if doc.method == Method::DELETE {
            doc.body(&body())
        } else {
            doc
        }
    });
    let err = ApiDescription::builder(&api())
        .routes(&routes)
        .operations(again)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "documentation of DELETE /things/{id}: its request body is bound on the router and documented again"
    );
}

/// Each version's changes, as the documents show them.
#[test]
fn differences_between_versions_name_each_operation() {
    let d = description();
    let made = |from: u32, to: u32| -> Vec<String> {
        d.differences(Version::new(1, from), Version::new(1, to))
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(made(1, 2), ["GET /things: query parameters changed"]);
    assert_eq!(made(2, 3), ["DELETE /things/{id}: added"]);
    assert_eq!(
        made(4, 5),
        [
            "POST /things: request body changed",
            "POST /things: 200 response added",
            "POST /things: 201 response removed",
        ]
    );
    assert_eq!(made(6, 7), ["POST /things: 200 response changed"]);
    assert_eq!(made(3, 2), ["DELETE /things/{id}: removed"]);
    assert!(made(8, 9).is_empty());
    assert!(matches!(
        d.differences(Version::new(1, 0), Version::new(1, 10)),
        Err(OpenApiError::Unsupported { .. })
    ));
}

/// The history's changes fit the documents: every version has one, none
/// lies outside, and each one not of behaviour changes something.
#[test]
fn the_history_is_checked_against_the_documents() {
    use microversion::Change;

    use crate::history::VersionHistory;

    // 1.1, 1.4, 1.6, 1.8 and 1.9 change nothing the documents show.
    let quiet = [1, 4, 6, 8, 9];
    let changes = |behaviour: &[u32], last: u32| -> VersionHistory {
        let changes: Vec<Change> = (0..=last)
            .map(|minor| {
                let version: &'static str = Box::leak(format!("1.{minor}").into_boxed_str());
                let text: &'static str = Box::leak(format!("Change {minor}.").into_boxed_str());
                let change = Change::new(version, text);
                if behaviour.contains(&minor) {
                    change.behaviour()
                } else {
                    change
                }
            })
            .collect();
        VersionHistory::of(&changes).unwrap()
    };
    let built = |history: &VersionHistory| {
        ApiDescription::builder(&api())
            .routes(&router())
            .operations(docs())
            .history(history)
            .build()
    };
    let d = built(&changes(&quiet, 9)).unwrap();
    let info = d.at(Version::new(1, 5)).unwrap().to_value()["info"]["description"].clone();
    assert!(
        info.as_str().unwrap().ends_with(
            "Version 1.5: Change 5.\n\n- POST /things: request body changed\n\
             - POST /things: 200 response added\n- POST /things: 201 response removed"
        ),
        "{info}"
    );
    let info = d.at(Version::new(1, 4)).unwrap().to_value()["info"]["description"].clone();
    assert!(
        info.as_str().unwrap().ends_with("Version 1.4: Change 4."),
        "{info}"
    );

    let err = built(&changes(&[4, 6, 8, 9], 9)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the change of 1.1 (\"Change 1.\") makes no difference in the documents: describe what \
         it changes, or mark it Change::behaviour if its effect is inside a handler"
    );
    let err = built(&changes(&quiet, 8)).unwrap_err();
    assert_eq!(err.to_string(), "version 1.9 has no change in the history");
    let err = built(&changes(&quiet, 10)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the history's change of 1.10 lies outside the range 1.0 - 1.9"
    );
}

/// A success status the router sets by version must be the one the
/// documents declare at each of those versions.
#[test]
fn the_routers_success_statuses_match_the_documents() {
    let built = |versions: &'static str| {
        let routes = router().status("/things", &Method::POST, span(versions), StatusCode::OK);
        ApiDescription::builder(&api())
            .routes(&routes)
            .operations(docs())
            .build()
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(built("1.5 - latest"), Ok(()));
    assert_eq!(
        built("1.3 - latest"),
        Err(
            "POST /things answers 200 at 1.3 (VersionedRouter::status), but its documents declare \
             as its success there: 201"
                .to_owned()
        )
    );
}

/// A range across majors ends the earlier major where the description's
/// last range in it does, instead of walking every possible minor.
#[test]
fn versions_across_majors_stop_where_the_description_does() {
    let api = Microversions::builder("things", VersionRange::from_static("1.5", "2.1"))
        .build()
        .unwrap();
    let routes = VersionedRouter::<()>::new().get("/a", VersionSpan::ALL, || async { "" });
    let answer = || ResponseDoc::json("A", json!({"type": "object"}));
    let d = ApiDescription::builder(&api)
        .routes(&routes)
        .operation(
            OperationDoc::get("/a")
                .response(span("1.0 - 1.7"), StatusCode::OK, answer())
                .response(span("1.8 - latest"), StatusCode::OK, answer()),
        )
        .build()
        .unwrap();
    let versions: Vec<String> = d.versions().iter().map(ToString::to_string).collect();
    assert_eq!(versions, ["1.5", "1.6", "1.7", "1.8", "2.0", "2.1"]);
}
