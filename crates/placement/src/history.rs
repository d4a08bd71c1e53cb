//! Placement's microversions, 1.0 to 1.39: each with what it changed.
//! The last entry is the maximum the service serves.

use microversion_server::BuildError;
use microversion_server::history::VersionHistory;

/// The version history of the Placement API.
///
/// # Errors
///
/// Never in practice: the entries are fixed and increasing.
pub fn history() -> Result<VersionHistory, BuildError> {
    VersionHistory::builder()
        .version(
            "1.0",
            "Initial version: resource providers, inventories, allocations, usages.",
        )
        .version("1.1", "GET and PUT /resource_providers/{uuid}/aggregates.")
        .version(
            "1.2",
            "/resource_classes: list, create, show, update and delete custom resource classes.",
        )
        .version("1.3", "member_of filter on GET /resource_providers.")
        .version("1.4", "resources filter on GET /resource_providers.")
        .version(
            "1.5",
            "DELETE /resource_providers/{uuid}/inventories deletes all inventories.",
        )
        .version("1.6", "/traits and /resource_providers/{uuid}/traits.")
        .version(
            "1.7",
            "PUT /resource_classes/{name} creates or validates a custom class without a body.",
        )
        .version(
            "1.8",
            "PUT /allocations/{consumer_uuid} requires project_id and user_id.",
        )
        .version(
            "1.9",
            "GET /usages: usages of a project, optionally of one user.",
        )
        .version("1.10", "GET /allocation_candidates.")
        .version("1.11", "Providers carry an 'allocations' link.")
        .version(
            "1.12",
            "Dictionary-form allocations in GET and PUT /allocations/{consumer_uuid}.",
        )
        .version(
            "1.13",
            "POST /allocations sets allocations of several consumers at once.",
        )
        .version(
            "1.14",
            "Providers carry parent_provider_uuid and root_provider_uuid; in_tree filter.",
        )
        .version(
            "1.15",
            "Last-Modified and Cache-Control headers on GET responses.",
        )
        .version("1.16", "limit on GET /allocation_candidates.")
        .version("1.17", "required traits on GET /allocation_candidates.")
        .version("1.18", "required traits filter on GET /resource_providers.")
        .version(
            "1.19",
            "Aggregates carry the provider generation and detect conflicts.",
        )
        .version(
            "1.20",
            "POST /resource_providers answers 200 with the provider.",
        )
        .version("1.21", "member_of on GET /allocation_candidates.")
        .version("1.22", "Forbidden traits (!TRAIT) in required.")
        .version("1.23", "Error bodies carry a machine-readable code.")
        .version(
            "1.24",
            "Several member_of parameters on GET /resource_providers.",
        )
        .version(
            "1.25",
            "Granular (numbered) request groups on GET /allocation_candidates.",
        )
        .version("1.26", "Inventory reserved may equal total.")
        .version(
            "1.27",
            "provider_summaries list every resource class of a provider.",
        )
        .version("1.28", "Consumer generations in allocations.")
        .version("1.29", "Nested providers in GET /allocation_candidates.")
        .version(
            "1.30",
            "POST /reshaper moves inventories and allocations atomically.",
        )
        .version("1.31", "in_tree on GET /allocation_candidates.")
        .version("1.32", "Forbidden aggregates (member_of=!...).")
        .version(
            "1.33",
            "Request group suffixes of up to 64 characters [A-Za-z0-9_-].",
        )
        .version("1.34", "mappings in allocation requests.")
        .version("1.35", "root_required on GET /allocation_candidates.")
        .version("1.36", "same_subtree and resourceless request groups.")
        .version("1.37", "Providers can be re-parented and un-parented.")
        .version(
            "1.38",
            "consumer_type in allocations; usages grouped by consumer type.",
        )
        .version("1.39", "in: any-of syntax for traits in required.")
        .build()
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
