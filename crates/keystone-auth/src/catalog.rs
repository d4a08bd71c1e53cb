//! Finding a service's endpoint in a token's catalog, as a client does:
//! by service type (with the official aliases of the OpenStack
//! service-types authority), interface and region.
//!
//! ```
//! use keystone_auth::catalog::{Catalog, Interface};
//! use keystone_auth::model::CatalogService;
//!
//! let services: Vec<CatalogService> = serde_json::from_str(r#"[
//!   {"type": "volumev3", "name": "cinderv3", "endpoints": [
//!     {"interface": "public", "region_id": "RegionOne", "url": "http://cinder:8776/v3"}]},
//!   {"type": "placement", "name": "placement", "endpoints": [
//!     {"interface": "public", "region_id": "RegionOne", "url": "http://placement:8778"}]}
//! ]"#)?;
//! let catalog = Catalog::new(services);
//! // block-storage is the official type; the catalog lists an alias.
//! let volume = catalog.endpoint("block-storage", Interface::Public, None)?;
//! assert_eq!(volume.url.as_str(), "http://cinder:8776/v3");
//! assert_eq!(volume.service_type, "volumev3");
//!
//! let missing = catalog.endpoint("compute", Interface::Public, None).unwrap_err();
//! assert!(missing.to_string().contains("the catalog offers: volumev3"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;

use url::Url;

use crate::model::{CatalogEndpoint, CatalogService};

/// Official service types and their aliases, from the service-types
/// authority: the official name first, then the aliases in the order
/// clients try them.
const ALIASES: &[&[&str]] = &[
    &[
        "block-storage",
        "volumev3",
        "volumev2",
        "volume",
        "block-store",
    ],
    &["shared-file-system", "sharev2", "share"],
    &["baremetal", "bare-metal"],
    &[
        "container-infrastructure-management",
        "container-infrastructure",
        "container-infra",
    ],
    &["workflow", "workflowv2"],
    &["clustering", "cluster"],
    &["message", "messaging"],
    &["instance-ha", "ha"],
];

/// The official type of `service_type` followed by its aliases, when it
/// is one of a family; else `service_type` alone.
///
/// ```
/// use keystone_auth::catalog::service_type_family;
///
/// assert_eq!(service_type_family("volume")[0], "block-storage");
/// assert!(service_type_family("block-storage").contains(&"volumev3"));
/// assert_eq!(service_type_family("placement"), ["placement"]);
/// ```
#[must_use]
pub fn service_type_family(service_type: &str) -> Vec<&str> {
    ALIASES
        .iter()
        .find(|family| family.contains(&service_type))
        .map_or_else(|| vec![service_type], |family| family.to_vec())
}

/// The official name of `service_type` (`volumev3` gives `block-storage`).
#[must_use]
pub fn official_service_type(service_type: &str) -> &str {
    ALIASES
        .iter()
        .find(|family| family.contains(&service_type))
        .map_or(service_type, |family| family[0])
}

/// Which of a service's endpoints: `public` (the default of every client),
/// `internal` or `admin`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Interface {
    /// Reachable by the cloud's users.
    #[default]
    Public,
    /// Inside the cloud's own network.
    Internal,
    /// For operators.
    Admin,
}

impl Interface {
    /// The name used in the catalog.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Internal => "internal",
            Self::Admin => "admin",
        }
    }
}

impl fmt::Display for Interface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An interface name that is none of `public`, `internal`, `admin`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid interface {0:?}: expected public, internal or admin")]
pub struct InvalidInterface(String);

impl FromStr for Interface {
    type Err = InvalidInterface;

    /// `public`, `internal` or `admin`, in any case; the identity v2
    /// spellings `publicURL`, `internalURL` and `adminURL` too.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lower = text.to_ascii_lowercase();
        match lower.strip_suffix("url").unwrap_or(&lower) {
            "public" => Ok(Self::Public),
            "internal" => Ok(Self::Internal),
            "admin" => Ok(Self::Admin),
            _ => Err(InvalidInterface(text.to_owned())),
        }
    }
}

/// The endpoint a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceEndpoint {
    /// The service type as the catalog names it (maybe an alias of the
    /// one asked for).
    pub service_type: String,
    /// The service's name in the catalog.
    pub service_name: String,
    /// The endpoint's interface.
    pub interface: Interface,
    /// The endpoint's region, if it has one.
    pub region: Option<String>,
    /// The endpoint's URL.
    pub url: Url,
}

/// Why the catalog gave no endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No service of the type (or its aliases) has an endpoint of the
    /// interface in the region.
    #[error(
        "no {interface} endpoint for service type {service_type:?}{aliases}{region} in the catalog; the catalog offers: {offered}",
        aliases = also_tried(.tried, .service_type),
        region = in_region(.region.as_deref()),
        offered = if .offered.is_empty() { "nothing" } else { .offered }
    )]
    NotFound {
        /// The type asked for.
        service_type: String,
        /// Every type looked for: the one asked, then its family.
        tried: Vec<String>,
        /// The interface asked for.
        interface: Interface,
        /// The region asked for.
        region: Option<String>,
        /// What the catalog has: `type (interface in region, ...)`, joined.
        offered: String,
    },
    /// The endpoint's URL is not an http(s) URL with a host.
    #[error(
        "the catalog's {interface} endpoint of {service_type:?} has an invalid URL {url:?}: {reason}"
    )]
    InvalidUrl {
        /// The service type in the catalog.
        service_type: String,
        /// The endpoint's interface.
        interface: Interface,
        /// The URL as the catalog gives it.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

fn also_tried(tried: &[String], asked: &str) -> String {
    let others: Vec<&str> = tried
        .iter()
        .map(String::as_str)
        .filter(|t| *t != asked)
        .collect();
    if others.is_empty() {
        String::new()
    } else {
        format!(" (or {})", others.join(", "))
    }
}

fn in_region(region: Option<&str>) -> String {
    region.map_or_else(String::new, |r| format!(" in region {r:?}"))
}

/// A token's service catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    services: Vec<CatalogService>,
}

impl Catalog {
    /// The catalog of these services (a token body's `catalog`).
    #[must_use]
    pub fn new(services: Vec<CatalogService>) -> Self {
        Self { services }
    }

    /// Its services, in Keystone's order.
    #[must_use]
    pub fn services(&self) -> &[CatalogService] {
        &self.services
    }

    /// Whether the catalog lists no service.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
    }

    /// The endpoint of `service_type` for `interface`, in `region` (any
    /// region when `None`). The type asked for is tried first, then the
    /// official type of its family and its aliases (`volume` finds a
    /// `block-storage` or `volumev3` service).
    ///
    /// # Errors
    ///
    /// [`CatalogError::NotFound`] listing what the catalog offers, or
    /// [`CatalogError::InvalidUrl`] when the matching endpoint's URL is
    /// broken.
    pub fn endpoint(
        &self,
        service_type: &str,
        interface: Interface,
        region: Option<&str>,
    ) -> Result<ServiceEndpoint, CatalogError> {
        let mut tried = vec![service_type];
        for t in service_type_family(service_type) {
            if !tried.contains(&t) {
                tried.push(t);
            }
        }
        for wanted in &tried {
            for service in self.services.iter().filter(|s| s.service_type == *wanted) {
                if let Some(endpoint) = find_endpoint(service, interface, region) {
                    return to_match(service, endpoint, interface);
                }
            }
        }
        Err(CatalogError::NotFound {
            service_type: service_type.to_owned(),
            tried: tried.iter().map(|t| (*t).to_owned()).collect(),
            interface,
            region: region.map(str::to_owned),
            offered: self.offered(),
        })
    }

    /// Every service with an endpoint of `interface` in `region` (any
    /// region when `None`), one per service, in the catalog's order; a
    /// broken URL is an error in its place.
    #[must_use]
    pub fn endpoints(
        &self,
        interface: Interface,
        region: Option<&str>,
    ) -> Vec<Result<ServiceEndpoint, CatalogError>> {
        self.services
            .iter()
            .filter_map(|service| {
                find_endpoint(service, interface, region)
                    .map(|endpoint| to_match(service, endpoint, interface))
            })
            .collect()
    }

    /// What the catalog has, for error messages:
    /// `compute (public in RegionOne, internal in RegionOne), ...`.
    fn offered(&self) -> String {
        self.services
            .iter()
            .map(|service| {
                let endpoints: Vec<String> = service
                    .endpoints
                    .iter()
                    .map(|e| match region_of(e) {
                        Some(r) => format!("{} in {r}", e.interface),
                        None => e.interface.clone(),
                    })
                    .collect();
                format!("{} ({})", service.service_type, endpoints.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl From<Vec<CatalogService>> for Catalog {
    fn from(services: Vec<CatalogService>) -> Self {
        Self::new(services)
    }
}

fn region_of(endpoint: &CatalogEndpoint) -> Option<&str> {
    endpoint
        .region_id
        .as_deref()
        .or(endpoint.region.as_deref())
        .filter(|r| !r.is_empty())
}

fn find_endpoint<'a>(
    service: &'a CatalogService,
    interface: Interface,
    region: Option<&str>,
) -> Option<&'a CatalogEndpoint> {
    service.endpoints.iter().find(|e| {
        e.interface.parse::<Interface>().ok() == Some(interface)
            && region.is_none_or(|wanted| {
                e.region_id.as_deref() == Some(wanted) || e.region.as_deref() == Some(wanted)
            })
    })
}

fn to_match(
    service: &CatalogService,
    endpoint: &CatalogEndpoint,
    interface: Interface,
) -> Result<ServiceEndpoint, CatalogError> {
    let invalid = |reason: String| CatalogError::InvalidUrl {
        service_type: service.service_type.clone(),
        interface,
        url: endpoint.url.clone(),
        reason,
    };
    let url = Url::parse(endpoint.url.trim()).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(invalid("not an http or https URL with a host".to_owned()));
    }
    Ok(ServiceEndpoint {
        service_type: service.service_type.clone(),
        service_name: service.name.clone(),
        interface,
        region: region_of(endpoint).map(str::to_owned),
        url,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let services: Vec<CatalogService> = serde_json::from_value(serde_json::json!([
            {"type": "identity", "name": "keystone", "endpoints": [
                {"interface": "public", "region_id": "RegionOne", "url": "http://k:5000"}]},
            {"type": "compute", "name": "nova", "endpoints": [
                {"interface": "public", "region_id": "RegionOne", "url": "http://nova-1/v2.1"},
                {"interface": "internal", "region_id": "RegionOne", "url": "http://nova-1-int/v2.1"},
                {"interface": "public", "region_id": "RegionTwo", "url": "http://nova-2/v2.1"}]},
            {"type": "volumev3", "name": "cinderv3", "endpoints": [
                {"interface": "public", "region": "RegionOne", "url": "http://cinder/v3"}]},
            {"type": "broken", "name": "b", "endpoints": [
                {"interface": "public", "region_id": "RegionOne", "url": "not a url"}]},
            {"type": "ftp", "name": "f", "endpoints": [
                {"interface": "public", "region_id": "RegionOne", "url": "ftp://h/"}]}
        ]))
        .unwrap();
        Catalog::new(services)
    }

    #[test]
    fn interface_and_region_choose_the_endpoint() {
        let c = catalog();
        let e = c.endpoint("compute", Interface::Public, None).unwrap();
        assert_eq!(e.url.as_str(), "http://nova-1/v2.1");
        let e = c
            .endpoint("compute", Interface::Public, Some("RegionTwo"))
            .unwrap();
        assert_eq!(e.url.as_str(), "http://nova-2/v2.1");
        assert_eq!(e.region.as_deref(), Some("RegionTwo"));
        let e = c.endpoint("compute", Interface::Internal, None).unwrap();
        assert_eq!(e.url.as_str(), "http://nova-1-int/v2.1");
    }

    #[test]
    fn aliases_find_the_family() {
        let c = catalog();
        for asked in ["block-storage", "volume", "volumev3", "volumev2"] {
            let e = c
                .endpoint(asked, Interface::Public, Some("RegionOne"))
                .unwrap();
            assert_eq!(e.service_type, "volumev3", "{asked}");
            assert_eq!(e.url.as_str(), "http://cinder/v3");
        }
        assert_eq!(official_service_type("volumev3"), "block-storage");
        assert_eq!(official_service_type("compute"), "compute");
    }

    #[test]
    fn nothing_found_lists_the_offer() {
        let c = catalog();
        let e = c
            .endpoint("compute", Interface::Admin, Some("RegionOne"))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "no admin endpoint for service type \"compute\" in region \"RegionOne\" in the \
             catalog; the catalog offers: identity (public in RegionOne), compute (public in \
             RegionOne, internal in RegionOne, public in RegionTwo), volumev3 (public in \
             RegionOne), broken (public in RegionOne), ftp (public in RegionOne)"
        );
        let e = c.endpoint("share", Interface::Public, None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("no public endpoint for service type \"share\" (or shared-file-system, sharev2) in the catalog"),
            "{e}"
        );
        let empty = Catalog::default();
        assert!(
            empty
                .endpoint("placement", Interface::Public, None)
                .unwrap_err()
                .to_string()
                .ends_with("the catalog offers: nothing")
        );
    }

    #[test]
    fn broken_urls_are_errors() {
        let c = catalog();
        let e = c.endpoint("broken", Interface::Public, None).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "the catalog's public endpoint of \"broken\" has an invalid URL \"not a url\": "
            ),
            "{e}"
        );
        let e = c.endpoint("ftp", Interface::Public, None).unwrap_err();
        assert!(matches!(e, CatalogError::InvalidUrl { .. }), "{e}");
        let all = c.endpoints(Interface::Public, Some("RegionOne"));
        assert_eq!(all.len(), 5);
        assert_eq!(all.iter().filter(|r| r.is_err()).count(), 2);
        assert_eq!(c.endpoints(Interface::Public, Some("RegionTwo")).len(), 1);
    }

    #[test]
    fn interfaces_parse() {
        assert_eq!("Public".parse::<Interface>(), Ok(Interface::Public));
        assert_eq!("internalURL".parse::<Interface>(), Ok(Interface::Internal));
        assert_eq!("admin".parse::<Interface>(), Ok(Interface::Admin));
        assert_eq!(
            "private".parse::<Interface>().unwrap_err().to_string(),
            "invalid interface \"private\": expected public, internal or admin"
        );
    }
}
