use serde_json::json;

use super::*;

#[test]
fn every_operation_is_documented() {
    let description = description().unwrap_or_else(|e| panic!("{e}"));
    let whole = description.whole().to_value();
    let count: usize = whole["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert_eq!(count, 36, "the operations of Placement 1.39");
}

fn parameter<'a>(doc: &'a Value, path: &str, name: &str) -> &'a Value {
    doc["paths"][path]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{path} has no {name}"))
}

#[test]
fn query_parameters_carry_their_ranges() {
    let whole = description().unwrap().whole().to_value();
    let mark = |path, name| parameter(&whole, path, name)["x-openstack"].clone();
    assert_eq!(
        mark("/resource_providers", "in_tree"),
        json!({"min-ver": "1.14"})
    );
    assert_eq!(
        mark("/resource_providers", "member_of"),
        json!({"min-ver": "1.3"})
    );
    assert_eq!(
        mark("/allocation_candidates", "limit"),
        json!({"min-ver": "1.16"})
    );
    assert_eq!(mark("/usages", "consumer_type"), json!({"min-ver": "1.38"}));
    assert_eq!(
        mark("/allocation_candidates", "resources"),
        json!({"max-ver": "1.24"}),
        "granular groups (a pattern) from 1.25"
    );
    assert_eq!(parameter(&whole, "/usages", "project_id")["required"], true);
}

#[test]
fn bodies_and_responses_change_with_the_version() {
    let d = description().unwrap();
    let whole = d.whole().to_value();
    let put = &whole["paths"]["/allocations/{consumer_uuid}"]["put"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert_eq!(put["x-openstack"], json!({"discriminator": "microversion"}));
    let ranges: Vec<(String, String)> = put["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["x-openstack"]["min-ver"].as_str().unwrap().to_owned(),
                v["x-openstack"]["max-ver"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("1.0", "1.7"),
        ("1.8", "1.11"),
        ("1.12", "1.27"),
        ("1.28", "1.33"),
        ("1.34", "1.37"),
        ("1.38", "1.39"),
    ];
    assert_eq!(ranges, expected.map(|(a, b)| (a.to_owned(), b.to_owned())));
    let show = &whole["paths"]["/resource_providers/{uuid}"]["get"]["responses"]["200"]["content"]
        ["application/json"]["schema"];
    assert_eq!(
        show["properties"]["root_provider_uuid"]["x-openstack"],
        json!({"min-ver": "1.14"})
    );
    let create = &whole["paths"]["/resource_providers"]["post"]["responses"];
    assert_eq!(create["201"]["x-openstack"], json!({"max-ver": "1.19"}));
    assert_eq!(create["200"]["x-openstack"], json!({"min-ver": "1.20"}));
    // One version: only its own shape.
    let at = d.at(microversion::Version::new(1, 13)).unwrap().to_value();
    let show = &at["paths"]["/resource_providers/{uuid}"]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    assert!(show["properties"].get("root_provider_uuid").is_none());
    assert!(
        at["paths"]["/resource_providers"]["post"]["responses"]
            .get("200")
            .is_none()
    );
}
