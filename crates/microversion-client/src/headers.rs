//! The version headers a client sends, and reading the version a response
//! was served at.
//!
//! The standard `OpenStack-API-Version: <service-type> <X.Y>` is always
//! sent. A legacy header is sent too where the service reads one:
//!
//! | service type | legacy header |
//! |---|---|
//! | `compute` | `X-OpenStack-Nova-API-Version` |
//! | `baremetal` | `X-OpenStack-Ironic-API-Version` |
//! | `shared-file-system` | `X-OpenStack-Manila-API-Version` |
//! | `volume` (and its aliases) | `OpenStack-Volume-microversion` |
//!
//! The service types `volumev3` and `block-storage` are aliases: the
//! header names `volume`, the type the block storage service reads.

use http::{HeaderMap, HeaderName};
use microversion::{Decoded, OPENSTACK_API_VERSION, RequestedVersion, Version, VersionHeader};

/// The service type as the header names it: aliases of the block storage
/// service become `volume`; anything else is kept as given.
///
/// ```
/// use microversion_client::header_service_type;
///
/// assert_eq!(header_service_type("block-storage"), "volume");
/// assert_eq!(header_service_type("volumev3"), "volume");
/// assert_eq!(header_service_type("placement"), "placement");
/// ```
#[must_use]
pub fn header_service_type(service_type: &str) -> &str {
    if ["volume", "volumev3", "block-storage"]
        .iter()
        .any(|alias| alias.eq_ignore_ascii_case(service_type))
    {
        "volume"
    } else {
        service_type
    }
}

/// The legacy header a service reads besides the standard one, if any
/// (after resolving aliases with [`header_service_type`]).
///
/// ```
/// use microversion_client::legacy_header;
///
/// assert_eq!(
///     legacy_header("compute").unwrap(),
///     "x-openstack-nova-api-version"
/// );
/// assert_eq!(legacy_header("placement"), None);
/// ```
#[must_use]
pub fn legacy_header(service_type: &str) -> Option<HeaderName> {
    let name = match header_service_type(service_type)
        .to_ascii_lowercase()
        .as_str()
    {
        "compute" => "x-openstack-nova-api-version",
        "baremetal" => "x-openstack-ironic-api-version",
        "shared-file-system" => "x-openstack-manila-api-version",
        "volume" => "openstack-volume-microversion",
        _ => return None,
    };
    Some(HeaderName::from_static(name))
}

/// How one client writes and reads version headers.
#[derive(Clone, Debug)]
pub(crate) struct Headers {
    codec: VersionHeader,
    legacy: Option<HeaderName>,
}

impl Headers {
    pub(crate) fn new(codec: VersionHeader) -> Self {
        let legacy = legacy_header(codec.service_type());
        Headers { codec, legacy }
    }

    /// Sets the version headers on a request, replacing any there.
    pub(crate) fn apply(&self, headers: &mut HeaderMap, version: Option<Version>) {
        headers.remove(OPENSTACK_API_VERSION);
        if let Some(legacy) = &self.legacy {
            headers.remove(legacy);
        }
        if let Some(version) = version {
            headers.insert(OPENSTACK_API_VERSION, self.codec.encode(version));
            if let Some(legacy) = &self.legacy {
                headers.insert(legacy.clone(), VersionHeader::encode_legacy(version));
            }
        }
    }

    /// The version a response says it was served at: the standard header's
    /// entry for this service, else the legacy header (Ironic echoes only
    /// that one).
    pub(crate) fn served(&self, headers: &HeaderMap) -> Option<Version> {
        let exact = |decoded: Decoded<'_>| match decoded {
            Decoded::Present(RequestedVersion::Exact(v)) => Some(v),
            _ => None,
        };
        exact(self.codec.decode(headers.get_all(OPENSTACK_API_VERSION))).or_else(|| {
            let legacy = self.legacy.as_ref()?;
            exact(self.codec.decode_legacy(headers.get_all(legacy)))
        })
    }
}

/// The range a response's headers announce, as Ironic does on every
/// response (`X-OpenStack-Ironic-API-Minimum-Version` and
/// `-Maximum-Version`): any pair of headers named `...-api-minimum-version`
/// and `...-api-maximum-version`.
pub(crate) fn range_from_headers(headers: &HeaderMap) -> Option<microversion::VersionRange> {
    let find = |suffix: &str| {
        headers
            .iter()
            .find(|(name, _)| name.as_str().ends_with(suffix))
            .and_then(|(_, value)| Version::try_from(value).ok())
    };
    let min = find("-api-minimum-version")?;
    let max = find("-api-maximum-version")?;
    microversion::VersionRange::new(min, max).ok()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn aliases_and_legacy_names() {
        assert_eq!(header_service_type("Block-Storage"), "volume");
        assert_eq!(header_service_type("compute"), "compute");
        assert_eq!(
            legacy_header("baremetal").unwrap(),
            "x-openstack-ironic-api-version"
        );
        assert_eq!(
            legacy_header("shared-file-system").unwrap(),
            "x-openstack-manila-api-version"
        );
        assert_eq!(
            legacy_header("block-storage").unwrap(),
            "openstack-volume-microversion"
        );
        assert!(legacy_header("placement").is_none());
        assert!(legacy_header("identity").is_none());
    }

    #[test]
    fn applies_standard_and_legacy() {
        let h = Headers::new(VersionHeader::new("compute"));
        let mut map = headers(&[("x-openstack-nova-api-version", "2.1")]);
        h.apply(&mut map, Some(Version::new(2, 53)));
        assert_eq!(map["openstack-api-version"], "compute 2.53");
        assert_eq!(map["x-openstack-nova-api-version"], "2.53");
        assert_eq!(
            map.get_all("x-openstack-nova-api-version").iter().count(),
            1
        );
        h.apply(&mut map, None);
        assert!(map.is_empty());

        let h = Headers::new(VersionHeader::new("placement"));
        let mut map = HeaderMap::new();
        h.apply(&mut map, Some(Version::new(1, 20)));
        assert_eq!(map.len(), 1);
    }

    #[test]
    fn reads_the_served_version() {
        let h = Headers::new(VersionHeader::new("baremetal"));
        assert_eq!(
            h.served(&headers(&[("x-openstack-ironic-api-version", "1.20")])),
            Some(Version::new(1, 20))
        );
        assert_eq!(
            h.served(&headers(&[
                ("openstack-api-version", "baremetal 1.31"),
                ("x-openstack-ironic-api-version", "1.20")
            ])),
            Some(Version::new(1, 31))
        );
        assert_eq!(
            h.served(&headers(&[("openstack-api-version", "compute 2.1")])),
            None
        );
        assert_eq!(h.served(&HeaderMap::new()), None);
        let p = Headers::new(VersionHeader::new("placement"));
        assert_eq!(
            p.served(&headers(&[("openstack-api-version", "placement 1.x")])),
            None
        );
    }

    #[test]
    fn range_headers() {
        let map = headers(&[
            ("x-openstack-ironic-api-minimum-version", "1.1"),
            ("x-openstack-ironic-api-maximum-version", "1.115"),
        ]);
        assert_eq!(
            range_from_headers(&map),
            Some(microversion::VersionRange::from_static("1.1", "1.115"))
        );
        let half = headers(&[("x-openstack-ironic-api-minimum-version", "1.1")]);
        assert_eq!(range_from_headers(&half), None);
        let inverted = headers(&[
            ("x-openstack-ironic-api-minimum-version", "1.9"),
            ("x-openstack-ironic-api-maximum-version", "1.1"),
        ]);
        assert_eq!(range_from_headers(&inverted), None);
        let bad = headers(&[
            ("x-openstack-ironic-api-minimum-version", "one"),
            ("x-openstack-ironic-api-maximum-version", "1.1"),
        ]);
        assert_eq!(range_from_headers(&bad), None);
    }
}
