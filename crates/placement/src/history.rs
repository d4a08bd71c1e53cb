//! Placement's microversions, 1.0 to 1.39: each a named [`Change`] with
//! what it changed, which the routes, body and query schemas and the
//! documents name instead of writing its version (`NESTED_PROVIDERS.since()`,
//! `INITIAL.until(NESTED_PROVIDERS)`). The last is the maximum the service
//! serves.

use microversion::Change;
use microversion_server::BuildError;
use microversion_server::history::VersionHistory;

/// The change of 1.0.
pub const INITIAL: Change = Change::new(
    "1.0",
    "Initial version: resource providers, inventories, allocations, usages.",
);

/// The change of 1.1.
pub const AGGREGATES: Change =
    Change::new("1.1", "GET and PUT /resource_providers/{uuid}/aggregates.");

/// The change of 1.2.
pub const RESOURCE_CLASSES: Change = Change::new(
    "1.2",
    "/resource_classes: list, create, show, update and delete custom resource classes.",
);

/// The change of 1.3.
pub const MEMBER_OF: Change = Change::new("1.3", "member_of filter on GET /resource_providers.");

/// The change of 1.4.
pub const RESOURCES_FILTER: Change =
    Change::new("1.4", "resources filter on GET /resource_providers.");

/// The change of 1.5.
pub const DELETE_INVENTORIES: Change = Change::new(
    "1.5",
    "DELETE /resource_providers/{uuid}/inventories deletes all inventories.",
);

/// The change of 1.6.
pub const TRAITS: Change = Change::new("1.6", "/traits and /resource_providers/{uuid}/traits.");

/// The change of 1.7.
pub const PUT_RESOURCE_CLASS: Change = Change::new(
    "1.7",
    "PUT /resource_classes/{name} creates or validates a custom class without a body.",
);

/// The change of 1.8.
pub const PROJECT_AND_USER: Change = Change::new(
    "1.8",
    "PUT /allocations/{consumer_uuid} requires project_id and user_id.",
);

/// The change of 1.9.
pub const USAGES: Change = Change::new(
    "1.9",
    "GET /usages: usages of a project, optionally of one user.",
);

/// The change of 1.10.
pub const ALLOCATION_CANDIDATES: Change = Change::new("1.10", "GET /allocation_candidates.");

/// The change of 1.11.
pub const ALLOCATIONS_LINK: Change =
    Change::new("1.11", "Providers carry an 'allocations' link.").behaviour();

/// The change of 1.12.
pub const DICT_ALLOCATIONS: Change = Change::new(
    "1.12",
    "Dictionary-form allocations in GET and PUT /allocations/{consumer_uuid}.",
);

/// The change of 1.13.
pub const POST_ALLOCATIONS: Change = Change::new(
    "1.13",
    "POST /allocations sets allocations of several consumers at once.",
);

/// The change of 1.14.
pub const NESTED_PROVIDERS: Change = Change::new(
    "1.14",
    "Providers carry parent_provider_uuid and root_provider_uuid; in_tree filter.",
);

/// The change of 1.15.
pub const CACHE_HEADERS: Change = Change::new(
    "1.15",
    "Last-Modified and Cache-Control headers on GET responses.",
)
.behaviour();

/// The change of 1.16.
pub const CANDIDATE_LIMIT: Change = Change::new("1.16", "limit on GET /allocation_candidates.");

/// The change of 1.17.
pub const REQUIRED_TRAITS: Change =
    Change::new("1.17", "required traits on GET /allocation_candidates.");

/// The change of 1.18.
pub const PROVIDER_REQUIRED_TRAITS: Change =
    Change::new("1.18", "required traits filter on GET /resource_providers.");

/// The change of 1.19.
pub const AGGREGATE_GENERATIONS: Change = Change::new(
    "1.19",
    "Aggregates carry the provider generation and detect conflicts.",
);

/// The change of 1.20.
pub const CREATE_ANSWERS_PROVIDER: Change = Change::new(
    "1.20",
    "POST /resource_providers answers 200 with the provider.",
);

/// The change of 1.21.
pub const CANDIDATE_MEMBER_OF: Change =
    Change::new("1.21", "member_of on GET /allocation_candidates.");

/// The change of 1.22.
pub const FORBIDDEN_TRAITS: Change =
    Change::new("1.22", "Forbidden traits (!TRAIT) in required.").behaviour();

/// The change of 1.23.
pub const ERROR_CODES: Change =
    Change::new("1.23", "Error bodies carry a machine-readable code.").behaviour();

/// The change of 1.24.
pub const MULTIPLE_MEMBER_OF: Change = Change::new(
    "1.24",
    "Several member_of parameters on GET /resource_providers.",
)
.behaviour();

/// The change of 1.25.
pub const GRANULAR_GROUPS: Change = Change::new(
    "1.25",
    "Granular (numbered) request groups on GET /allocation_candidates.",
);

/// The change of 1.26.
pub const RESERVED_EQUALS_TOTAL: Change =
    Change::new("1.26", "Inventory reserved may equal total.").behaviour();

/// The change of 1.27.
pub const ALL_RESOURCES_IN_SUMMARIES: Change = Change::new(
    "1.27",
    "provider_summaries list every resource class of a provider.",
)
.behaviour();

/// The change of 1.28.
pub const CONSUMER_GENERATIONS: Change =
    Change::new("1.28", "Consumer generations in allocations.");

/// The change of 1.29.
pub const NESTED_CANDIDATES: Change =
    Change::new("1.29", "Nested providers in GET /allocation_candidates.");

/// The change of 1.30.
pub const RESHAPER: Change = Change::new(
    "1.30",
    "POST /reshaper moves inventories and allocations atomically.",
);

/// The change of 1.31.
pub const CANDIDATE_IN_TREE: Change = Change::new("1.31", "in_tree on GET /allocation_candidates.");

/// The change of 1.32.
pub const FORBIDDEN_AGGREGATES: Change =
    Change::new("1.32", "Forbidden aggregates (member_of=!...).").behaviour();

/// The change of 1.33.
pub const LONG_SUFFIXES: Change = Change::new(
    "1.33",
    "Request group suffixes of up to 64 characters [A-Za-z0-9_-].",
);

/// The change of 1.34.
pub const MAPPINGS: Change = Change::new("1.34", "mappings in allocation requests.");

/// The change of 1.35.
pub const ROOT_REQUIRED: Change =
    Change::new("1.35", "root_required on GET /allocation_candidates.");

/// The change of 1.36.
pub const SAME_SUBTREE: Change =
    Change::new("1.36", "same_subtree and resourceless request groups.");

/// The change of 1.37.
pub const REPARENTING: Change =
    Change::new("1.37", "Providers can be re-parented and un-parented.").behaviour();

/// The change of 1.38.
pub const CONSUMER_TYPES: Change = Change::new(
    "1.38",
    "consumer_type in allocations; usages grouped by consumer type.",
);

/// The change of 1.39.
pub const ANY_TRAITS: Change =
    Change::new("1.39", "in: any-of syntax for traits in required.").behaviour();

/// Placement's microversions, oldest first: each version with what it
/// changed. A change the OpenAPI documents do not show is marked
/// `behaviour()`: its effect is inside a handler (values a pattern already
/// admits, a different search) or in what the documents leave undescribed
/// (response headers, link relations, the error `code`). For every other
/// change the description checks that the documents of its version
/// differ from the previous version's.
pub const CHANGES: [Change; 40] = [
    INITIAL,
    AGGREGATES,
    RESOURCE_CLASSES,
    MEMBER_OF,
    RESOURCES_FILTER,
    DELETE_INVENTORIES,
    TRAITS,
    PUT_RESOURCE_CLASS,
    PROJECT_AND_USER,
    USAGES,
    ALLOCATION_CANDIDATES,
    ALLOCATIONS_LINK,
    DICT_ALLOCATIONS,
    POST_ALLOCATIONS,
    NESTED_PROVIDERS,
    CACHE_HEADERS,
    CANDIDATE_LIMIT,
    REQUIRED_TRAITS,
    PROVIDER_REQUIRED_TRAITS,
    AGGREGATE_GENERATIONS,
    CREATE_ANSWERS_PROVIDER,
    CANDIDATE_MEMBER_OF,
    FORBIDDEN_TRAITS,
    ERROR_CODES,
    MULTIPLE_MEMBER_OF,
    GRANULAR_GROUPS,
    RESERVED_EQUALS_TOTAL,
    ALL_RESOURCES_IN_SUMMARIES,
    CONSUMER_GENERATIONS,
    NESTED_CANDIDATES,
    RESHAPER,
    CANDIDATE_IN_TREE,
    FORBIDDEN_AGGREGATES,
    LONG_SUFFIXES,
    MAPPINGS,
    ROOT_REQUIRED,
    SAME_SUBTREE,
    REPARENTING,
    CONSUMER_TYPES,
    ANY_TRAITS,
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
