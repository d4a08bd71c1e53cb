//! Placement's microversions, 1.0 to 1.39: each with what it changed.
//! The last entry is the maximum the service serves.

use microversion::Change;
use microversion_server::BuildError;
use microversion_server::history::VersionHistory;

/// Placement's microversions, oldest first: each version with what it
/// changed. A change the OpenAPI documents do not show is marked
/// `behaviour()`: its effect is inside a handler (values a pattern already
/// admits, a different search) or in what the documents leave undescribed
/// (response headers, link relations, the error `code`). For every other
/// change the description checks that the documents of its version
/// differ from the previous version's.
pub const CHANGES: [Change; 40] = [
    Change::new(
        "1.0",
        "Initial version: resource providers, inventories, allocations, usages.",
    ),
    Change::new("1.1", "GET and PUT /resource_providers/{uuid}/aggregates."),
    Change::new(
        "1.2",
        "/resource_classes: list, create, show, update and delete custom resource classes.",
    ),
    Change::new("1.3", "member_of filter on GET /resource_providers."),
    Change::new("1.4", "resources filter on GET /resource_providers."),
    Change::new(
        "1.5",
        "DELETE /resource_providers/{uuid}/inventories deletes all inventories.",
    ),
    Change::new("1.6", "/traits and /resource_providers/{uuid}/traits."),
    Change::new(
        "1.7",
        "PUT /resource_classes/{name} creates or validates a custom class without a body.",
    ),
    Change::new(
        "1.8",
        "PUT /allocations/{consumer_uuid} requires project_id and user_id.",
    ),
    Change::new(
        "1.9",
        "GET /usages: usages of a project, optionally of one user.",
    ),
    Change::new("1.10", "GET /allocation_candidates."),
    Change::new("1.11", "Providers carry an 'allocations' link.").behaviour(),
    Change::new(
        "1.12",
        "Dictionary-form allocations in GET and PUT /allocations/{consumer_uuid}.",
    ),
    Change::new(
        "1.13",
        "POST /allocations sets allocations of several consumers at once.",
    ),
    Change::new(
        "1.14",
        "Providers carry parent_provider_uuid and root_provider_uuid; in_tree filter.",
    ),
    Change::new(
        "1.15",
        "Last-Modified and Cache-Control headers on GET responses.",
    )
    .behaviour(),
    Change::new("1.16", "limit on GET /allocation_candidates."),
    Change::new("1.17", "required traits on GET /allocation_candidates."),
    Change::new("1.18", "required traits filter on GET /resource_providers."),
    Change::new(
        "1.19",
        "Aggregates carry the provider generation and detect conflicts.",
    ),
    Change::new(
        "1.20",
        "POST /resource_providers answers 200 with the provider.",
    ),
    Change::new("1.21", "member_of on GET /allocation_candidates."),
    Change::new("1.22", "Forbidden traits (!TRAIT) in required.").behaviour(),
    Change::new("1.23", "Error bodies carry a machine-readable code.").behaviour(),
    Change::new(
        "1.24",
        "Several member_of parameters on GET /resource_providers.",
    )
    .behaviour(),
    Change::new(
        "1.25",
        "Granular (numbered) request groups on GET /allocation_candidates.",
    ),
    Change::new("1.26", "Inventory reserved may equal total.").behaviour(),
    Change::new(
        "1.27",
        "provider_summaries list every resource class of a provider.",
    )
    .behaviour(),
    Change::new("1.28", "Consumer generations in allocations."),
    Change::new("1.29", "Nested providers in GET /allocation_candidates."),
    Change::new(
        "1.30",
        "POST /reshaper moves inventories and allocations atomically.",
    ),
    Change::new("1.31", "in_tree on GET /allocation_candidates."),
    Change::new("1.32", "Forbidden aggregates (member_of=!...).").behaviour(),
    Change::new(
        "1.33",
        "Request group suffixes of up to 64 characters [A-Za-z0-9_-].",
    ),
    Change::new("1.34", "mappings in allocation requests."),
    Change::new("1.35", "root_required on GET /allocation_candidates."),
    Change::new("1.36", "same_subtree and resourceless request groups."),
    Change::new("1.37", "Providers can be re-parented and un-parented.").behaviour(),
    Change::new(
        "1.38",
        "consumer_type in allocations; usages grouped by consumer type.",
    ),
    Change::new("1.39", "in: any-of syntax for traits in required.").behaviour(),
];

/// The version history of the Placement API.
///
/// # Errors
///
/// Never in practice: the changes are fixed and increasing.
pub fn history() -> Result<VersionHistory, BuildError> {
    VersionHistory::of(&CHANGES)
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_to_one_thirty_nine() {
        let h = super::history().unwrap();
        assert_eq!(h.range().to_string(), "1.0 - 1.39");
        assert_eq!(h.entries().len(), 40);
    }
}
