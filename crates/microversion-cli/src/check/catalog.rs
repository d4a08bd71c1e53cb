//! Every check the checker makes: its rule, its stable id and its title,
//! defined here once. The rows of a report are made from these values.

use std::borrow::Cow;

use http::HeaderName;
use microversion::Version;

/// One conformance check, or a group of them reported as one SKIP row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CheckId {
    // --- 12: the versions document ---
    /// `GET` on the endpoint gives the versions document.
    VersionsDocument,
    /// The versions document needs no credentials.
    VersionsDocumentUnauthenticated,
    /// Known statuses, exactly one of them CURRENT.
    VersionStatuses,
    /// `min_version`, `max_version` and `version`.
    VersionFields,
    /// Each entry has a `self` link.
    SelfLinks,
    /// The judge says `GET /` reads the version header, and it does.
    RootReadsTheHeader,
    /// The judge says `GET /` ignores the version header, and it does.
    RootIgnoresTheHeader,

    // --- 13: the versioned root ---
    /// The entry's own root answers `{"version": {...}}`.
    VersionedRoot,
    /// That root names the range of the versions document.
    VersionedRootRange,
    /// The root of this API version without microversions ignores the
    /// version headers and names no version.
    LegacyRoot(String),

    // --- 1: case ---
    /// The service type is matched in any case.
    ServiceTypeCase,
    /// The header name is matched in any case.
    HeaderNameCase,

    // --- 2: several entries ---
    /// Comma-separated entries, other services ignored.
    Folded,
    /// Repeated header lines are read as one list.
    Repeated,
    /// Of repeated lines, the last entry counts.
    RepeatedLastWins,
    /// The last entry counts when it is the lower version.
    LastEntryWins,
    /// The last entry counts when it is the higher version.
    LastEntryWinsHigher,
    /// An entry naming the service without a version is skipped.
    TypeOnlySkipped,

    // --- 3: no entry ---
    /// No header: the minimum.
    Default,
    /// Only another service's entry: the minimum.
    OtherServiceOnly,

    // --- 4: latest ---
    /// `latest` is the maximum.
    Latest,
    /// The answer to `latest` names the version, not the word.
    LatestConcrete,
    /// `LATEST` is `latest`, as the judge says.
    LatestAnyCase,
    /// `LATEST` is malformed, as the judge says.
    LatestExactWord,

    // --- 5: malformed versions ---
    /// Outer whitespace and spaces after the type are allowed.
    Whitespace,
    /// A tab between the type and the version is allowed.
    WhitespaceTab,
    /// This malformed version is refused.
    Malformed(String),

    // --- 6: outside the range ---
    /// This `0.Y` version is read as below the range, as the judge says.
    ZeroMajorBelowRange(String),
    /// This version above the maximum is refused.
    AboveMax(Version),
    /// This version below the minimum is refused.
    BelowMin(Version),

    // --- 7: the legacy header ---
    /// The legacy header alone.
    LegacyAlone,
    /// The standard header wins over the legacy one.
    LegacyStandardWins,
    /// The legacy header counts when the standard has no entry.
    LegacyNoEntry,
    /// A folded legacy header: its last value.
    LegacyFolded,

    // --- 8: numeric order, inclusive ends ---
    /// The minimum is served.
    InclusiveMin,
    /// The maximum is served.
    InclusiveMax,
    /// `version` (`X.9`) is below `max` (`X.39`) although its text is not.
    NumericOrder {
        /// The version asked.
        version: Version,
        /// The maximum it is below.
        max: Version,
    },

    // --- 9: the version headers of answers ---
    /// The answer to no header names the version served.
    EchoDefault,
    /// The answer to no header has the judge's `Vary`.
    VaryDefault,
    /// The version headers of the answer to a malformed version.
    HeadersMalformed,
    /// The version headers of the 406.
    Headers406,
    /// A 404 at an unknown path names the version.
    UnknownPath,

    // --- 10: the range in answers ---
    /// The minimum and maximum headers on the answer to no header.
    RangeHeadersDefault,
    /// The minimum and maximum headers on the 406.
    RangeHeaders406,
    /// The 406 body names what was asked and the range.
    Body406,

    // --- 11: error bodies and request ids ---
    /// The body of the answer to a malformed version.
    BodyMalformed,
    /// `x-openstack-request-id` on every answer.
    RequestId,
    /// The same request id in this header too.
    RequestIdAlias(HeaderName),

    // --- Groups: one SKIP row each stands for checks that cannot run. ---
    // Each has the id of the first check it stands for.
    /// The checks of rule 2.
    EntriesGroup,
    /// The malformed versions of rule 5.
    MalformedGroup,
    /// The versions outside the range of rule 6.
    OutsideRangeGroup,
    /// The legacy header checks of rule 7.
    LegacyGroup,
    /// The checks of rule 8.
    NumericGroup,
    /// The version headers of rule 9.
    VersionHeadersGroup,
    /// The 406 body of rule 10.
    RangeBodyGroup,
    /// The error bodies of rule 11.
    ErrorBodiesGroup,
}

/// The checks that need the range and a versioned path, as they are
/// skipped together when either is missing.
pub(crate) const NEED_A_RANGE: [CheckId; 11] = [
    CheckId::ServiceTypeCase,
    CheckId::EntriesGroup,
    CheckId::Default,
    CheckId::Latest,
    CheckId::MalformedGroup,
    CheckId::OutsideRangeGroup,
    CheckId::LegacyGroup,
    CheckId::NumericGroup,
    CheckId::VersionHeadersGroup,
    CheckId::RangeBodyGroup,
    CheckId::ErrorBodiesGroup,
];

/// The checks that need two distinct versions, as they are skipped
/// together when the server supports one.
pub(crate) const NEED_TWO_VERSIONS: [CheckId; 6] = [
    CheckId::ServiceTypeCase,
    CheckId::EntriesGroup,
    CheckId::Whitespace,
    CheckId::LegacyGroup,
    CheckId::NumericGroup,
    CheckId::UnknownPath,
];

impl CheckId {
    /// The number of the rule the check belongs to, its stable id and its
    /// title.
    pub(crate) fn describe(self) -> (u8, Cow<'static, str>, Cow<'static, str>) {
        use Cow::Borrowed as B;
        match self {
            CheckId::VersionsDocument => (12, B("versions-document"), B("versions document")),
            CheckId::VersionsDocumentUnauthenticated => (
                12,
                B("versions-document-unauthenticated"),
                B("versions document without credentials"),
            ),
            CheckId::VersionStatuses => (
                12,
                B("versions-document-statuses"),
                B("version statuses, exactly one CURRENT"),
            ),
            CheckId::VersionFields => {
                (12, B("versions-document-fields"), B("version range fields"))
            }
            CheckId::SelfLinks => (12, B("versions-document-links"), B("self links")),
            CheckId::RootReadsTheHeader => {
                (12, B("root-versioned"), B("GET / reads the version header"))
            }
            CheckId::RootIgnoresTheHeader => (
                12,
                B("root-versioned"),
                B("GET / ignores the version header"),
            ),
            CheckId::VersionedRoot => (13, B("versioned-root"), B("versioned root document")),
            CheckId::VersionedRootRange => (
                13,
                B("versioned-root-range"),
                B("versioned root names the same range"),
            ),
            CheckId::LegacyRoot(id) => (
                13,
                format!("legacy-root {id}").into(),
                format!("{id}'s root ignores the version headers").into(),
            ),
            CheckId::ServiceTypeCase => (
                1,
                B("service-type-case"),
                B("the service type is case-insensitive"),
            ),
            CheckId::HeaderNameCase => (
                1,
                B("header-name-case"),
                B("the header name is case-insensitive"),
            ),
            CheckId::Folded => (
                2,
                B("folded"),
                B("comma-separated entries; other services ignored"),
            ),
            CheckId::Repeated => (2, B("repeated"), B("repeated header lines are folded")),
            CheckId::RepeatedLastWins => (
                2,
                B("repeated-last-wins"),
                B("repeated lines: the last entry wins"),
            ),
            CheckId::LastEntryWins => (
                2,
                B("last-entry-wins"),
                B("the last entry wins (lower last)"),
            ),
            CheckId::LastEntryWinsHigher => (
                2,
                B("last-entry-wins-higher"),
                B("the last entry wins (higher last)"),
            ),
            CheckId::TypeOnlySkipped => (
                2,
                B("type-only-skipped"),
                B("an entry without a version is skipped"),
            ),
            CheckId::Default => (3, B("default"), B("no header: the minimum")),
            CheckId::OtherServiceOnly => (
                3,
                B("other-service-only"),
                B("no entry for this service: the minimum"),
            ),
            CheckId::Latest => (4, B("latest"), B("latest: the maximum")),
            CheckId::LatestConcrete => (
                4,
                B("latest-concrete"),
                B("latest is answered with the concrete version"),
            ),
            CheckId::LatestAnyCase => (4, B("latest-case"), B("LATEST means latest (any case)")),
            CheckId::LatestExactWord => (
                4,
                B("latest-case"),
                B("LATEST is not the exact word latest"),
            ),
            CheckId::Whitespace => (
                5,
                B("whitespace"),
                B("outer whitespace and spaces after the type"),
            ),
            CheckId::WhitespaceTab => (5, B("whitespace-tab"), B("a tab between type and version")),
            CheckId::Malformed(raw) => (
                5,
                format!("malformed {raw}").into(),
                format!("malformed version {raw:?}").into(),
            ),
            CheckId::ZeroMajorBelowRange(raw) => (
                6,
                format!("malformed {raw}").into(),
                format!("{raw:?} is below the range").into(),
            ),
            CheckId::AboveMax(v) => (
                6,
                B("above-max"),
                format!("{v} is above the maximum").into(),
            ),
            CheckId::BelowMin(v) => (
                6,
                B("below-min"),
                format!("{v} is below the minimum").into(),
            ),
            CheckId::LegacyAlone => (7, B("legacy-alone"), B("the legacy header alone")),
            CheckId::LegacyStandardWins => (
                7,
                B("legacy-standard-wins"),
                B("the standard header wins over the legacy one"),
            ),
            CheckId::LegacyNoEntry => (
                7,
                B("legacy-no-entry"),
                B("the legacy header counts when the standard has no entry"),
            ),
            CheckId::LegacyFolded => (
                7,
                B("legacy-folded"),
                B("a folded legacy header: its last value"),
            ),
            CheckId::InclusiveMin => (8, B("inclusive-min"), B("the minimum is inside the range")),
            CheckId::InclusiveMax => (8, B("inclusive-max"), B("the maximum is inside the range")),
            CheckId::NumericOrder { version, max } => (
                8,
                B("numeric-order"),
                format!("{version} is below {max} (numeric, not text, order)").into(),
            ),
            CheckId::EchoDefault => (
                9,
                B("echo-default"),
                B("the answer names the version (default)"),
            ),
            CheckId::VaryDefault => (9, B("vary-default"), B("Vary (default)")),
            CheckId::HeadersMalformed => (
                9,
                B("headers-malformed"),
                B("version headers of the malformed answer"),
            ),
            CheckId::Headers406 => (9, B("headers-406"), B("version headers of the 406 answer")),
            CheckId::UnknownPath => (
                9,
                B("unknown-path"),
                B("a 404 at an unknown path names the version"),
            ),
            CheckId::RangeHeadersDefault => (
                10,
                B("range-headers-default"),
                B("minimum and maximum headers (default)"),
            ),
            CheckId::RangeHeaders406 => (
                10,
                B("range-headers-406"),
                B("minimum and maximum headers of the 406"),
            ),
            CheckId::Body406 => (
                10,
                B("body-406"),
                B("the 406 body names what was asked and the range"),
            ),
            CheckId::BodyMalformed => (
                11,
                B("body-malformed"),
                B("error body of the malformed answer"),
            ),
            CheckId::RequestId => (11, B("request-id"), B("request id on every answer")),
            CheckId::RequestIdAlias(alias) => (
                11,
                format!("request-id-alias {alias}").into(),
                format!("the request id also in {alias}").into(),
            ),
            CheckId::EntriesGroup => (
                2,
                B("last-entry-wins"),
                B("folded and repeated headers, the last entry wins"),
            ),
            CheckId::MalformedGroup => (5, B("malformed"), B("malformed versions")),
            CheckId::OutsideRangeGroup => (6, B("above-max"), B("versions outside the range")),
            CheckId::LegacyGroup => (7, B("legacy"), B("the legacy header")),
            CheckId::NumericGroup => (8, B("inclusive-min"), B("numeric order, inclusive ends")),
            CheckId::VersionHeadersGroup => {
                (9, B("echo-default"), B("version headers on every answer"))
            }
            CheckId::RangeBodyGroup => (10, B("body-406"), B("the 406 body names the range")),
            CheckId::ErrorBodiesGroup => (11, B("body-malformed"), B("error bodies")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_has_the_id_and_rule_of_its_first_check() {
        for (group, first) in [
            (CheckId::EntriesGroup, CheckId::LastEntryWins),
            (
                CheckId::OutsideRangeGroup,
                CheckId::AboveMax(Version::new(1, 40)),
            ),
            (CheckId::NumericGroup, CheckId::InclusiveMin),
            (CheckId::VersionHeadersGroup, CheckId::EchoDefault),
            (CheckId::RangeBodyGroup, CheckId::Body406),
            (CheckId::ErrorBodiesGroup, CheckId::BodyMalformed),
        ] {
            let (group_rule, group_id, group_title) = group.describe();
            let (rule, id, title) = first.describe();
            assert_eq!((group_rule, &group_id), (rule, &id), "{group_title}");
            assert_ne!(group_title, title);
        }
    }

    #[test]
    fn ids_and_titles_with_data() {
        let (rule, id, title) = CheckId::Malformed("1.01".to_owned()).describe();
        assert_eq!(
            (rule, &*id, &*title),
            (5, "malformed 1.01", "malformed version \"1.01\"")
        );
        let (rule, id, title) = CheckId::ZeroMajorBelowRange("0.5".to_owned()).describe();
        assert_eq!(
            (rule, &*id, &*title),
            (6, "malformed 0.5", "\"0.5\" is below the range")
        );
        let alias = HeaderName::from_static("x-compute-request-id");
        let (_, id, title) = CheckId::RequestIdAlias(alias).describe();
        assert_eq!(id, "request-id-alias x-compute-request-id");
        assert_eq!(title, "the request id also in x-compute-request-id");
    }
}
