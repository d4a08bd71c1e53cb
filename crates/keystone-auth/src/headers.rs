//! keystonemiddleware's identity headers: writing them from an
//! [`Identity`] and removing the ones a client sent itself.
//!
//! A service behind the layer may read the typed
//! [`RequestIdentity`](crate::RequestIdentity) extension or these headers
//! (for proxied or mixed services); both say the same thing, because the
//! client's own copies are removed before the layer writes them.

use http::header::{HeaderMap, HeaderName, HeaderValue};

use crate::model::{CatalogService, Identity, Scope};

/// `X-Auth-Token`: the user's token.
pub const X_AUTH_TOKEN: HeaderName = HeaderName::from_static("x-auth-token");
/// `X-Service-Token`: the token of the service that calls on a user's behalf.
pub const X_SERVICE_TOKEN: HeaderName = HeaderName::from_static("x-service-token");
/// `X-Subject-Token`: the token to validate, or the token just issued.
pub const X_SUBJECT_TOKEN: HeaderName = HeaderName::from_static("x-subject-token");
/// `OpenStack-System-Scope`: `all` for system-scoped tokens.
pub const OPENSTACK_SYSTEM_SCOPE: HeaderName = HeaderName::from_static("openstack-system-scope");

/// Every identity header but the `X-Service-` set: the `X-` set above,
/// `OpenStack-System-Scope`, the flags and catalog, and the names older
/// keystonemiddleware releases wrote (`X-Tenant*`, `X-User`, `X-Role`),
/// still removed so a client cannot fake them to an application that reads
/// them. Names made once: the scrub runs on every request.
const SCRUBBED: [HeaderName; 20] = [
    HeaderName::from_static("x-identity-status"),
    HeaderName::from_static("x-user-id"),
    HeaderName::from_static("x-user-name"),
    HeaderName::from_static("x-user-domain-id"),
    HeaderName::from_static("x-user-domain-name"),
    HeaderName::from_static("x-project-id"),
    HeaderName::from_static("x-project-name"),
    HeaderName::from_static("x-project-domain-id"),
    HeaderName::from_static("x-project-domain-name"),
    HeaderName::from_static("x-domain-id"),
    HeaderName::from_static("x-domain-name"),
    HeaderName::from_static("x-roles"),
    OPENSTACK_SYSTEM_SCOPE,
    HeaderName::from_static("x-is-admin-project"),
    HeaderName::from_static("x-service-catalog"),
    HeaderName::from_static("x-tenant-id"),
    HeaderName::from_static("x-tenant-name"),
    HeaderName::from_static("x-tenant"),
    HeaderName::from_static("x-user"),
    HeaderName::from_static("x-role"),
];

/// Removes every identity header a client may have sent: the `X-` and
/// `X-Service-` sets, `OpenStack-System-Scope`, `X-Is-Admin-Project`,
/// `X-Service-Catalog` and the legacy `X-Tenant*`/`X-User`/`X-Role`.
///
/// `X-Auth-Token` and `X-Service-Token` are kept: they are the input.
/// Every header starting with `x-service-` other than `X-Service-Token`
/// goes, so new names added later cannot slip through.
pub fn remove_identity_headers(headers: &mut HeaderMap) {
    // One look at the names first: most requests carry none of these, and
    // the look is cheaper than twenty removals.
    let doomed = |name: &HeaderName| {
        SCRUBBED.contains(name)
            || (name.as_str().starts_with("x-service-") && *name != X_SERVICE_TOKEN)
    };
    let doomed_names: Vec<HeaderName> = headers.keys().filter(|n| doomed(n)).cloned().collect();
    for name in doomed_names {
        headers.remove(name);
    }
}

/// Writes the headers of a user's identity (`X-Identity-Status: Confirmed`,
/// `X-User-Id`, ..., `X-Roles`, `OpenStack-System-Scope`,
/// `X-Is-Admin-Project`, and `X-Service-Catalog` when the identity has a
/// catalog, in the v2 shape keystonemiddleware sends: per service its
/// `type`, `name` and `endpoints`, one entry per region with `region`,
/// `publicURL`, `internalURL`, `adminURL`).
///
/// Values that cannot be a header value (control bytes in a name) are left
/// out rather than sent mangled.
pub fn insert_identity_headers(headers: &mut HeaderMap, identity: &Identity) {
    write_set(headers, "x-", identity);
    if identity.is_system_scope() {
        headers.insert(OPENSTACK_SYSTEM_SCOPE, HeaderValue::from_static("all"));
    }
    headers.insert(
        "x-is-admin-project",
        HeaderValue::from_static(python_bool(identity.is_admin_project)),
    );
    if let Some(catalog) = &identity.catalog {
        if let Ok(json) = serde_json::to_string(&v2_catalog(catalog)) {
            put(headers, "x-service-catalog", &json);
        }
    }
}

/// Writes the `X-Service-` set of a valid service token
/// (`X-Service-Identity-Status: Confirmed`, `X-Service-User-Id`, ...,
/// `X-Service-Roles`).
pub fn insert_service_headers(headers: &mut HeaderMap, identity: &Identity) {
    write_set(headers, "x-service-", identity);
}

/// The v3 catalog in the v2 shape of `X-Service-Catalog`: endpoints grouped
/// by region, each interface as `<interface>URL`.
fn v2_catalog(catalog: &[CatalogService]) -> serde_json::Value {
    let services = catalog.iter().map(|service| {
        let mut regions: Vec<(Option<&str>, serde_json::Map<String, serde_json::Value>)> =
            Vec::new();
        for endpoint in &service.endpoints {
            let region = endpoint.region.as_deref().or(endpoint.region_id.as_deref());
            let index = match regions.iter().position(|(r, _)| *r == region) {
                Some(i) => i,
                None => {
                    let mut entry = serde_json::Map::new();
                    if let Some(name) = region.filter(|r| !r.is_empty()) {
                        entry.insert("region".into(), name.into());
                    }
                    regions.push((region, entry));
                    regions.len() - 1
                }
            };
            let key = format!("{}URL", endpoint.interface.to_lowercase());
            regions[index].1.insert(key, endpoint.url.clone().into());
        }
        let mut v2 = serde_json::Map::new();
        v2.insert("type".into(), service.service_type.clone().into());
        if !service.name.is_empty() {
            v2.insert("name".into(), service.name.clone().into());
        }
        let endpoints = regions
            .into_iter()
            .map(|(_, e)| serde_json::Value::Object(e));
        v2.insert("endpoints".into(), endpoints.collect());
        serde_json::Value::Object(v2)
    });
    services.collect()
}

fn write_set(headers: &mut HeaderMap, prefix: &str, id: &Identity) {
    let mut set = |suffix: &str, value: &str| put(headers, &format!("{prefix}{suffix}"), value);
    set("identity-status", "Confirmed");
    set("user-id", &id.user_id);
    set("user-name", &id.user_name);
    set("user-domain-id", &id.user_domain.id);
    set("user-domain-name", &id.user_domain.name);
    match &id.scope {
        Scope::Project { project, domain } => {
            set("project-id", &project.id);
            set("project-name", &project.name);
            set("project-domain-id", &domain.id);
            set("project-domain-name", &domain.name);
        }
        Scope::Domain(domain) => {
            set("domain-id", &domain.id);
            set("domain-name", &domain.name);
        }
        Scope::System | Scope::Unscoped => {}
    }
    set("roles", &id.roles.join(","));
}

fn put(headers: &mut HeaderMap, name: &str, value: &str) {
    match (
        HeaderName::try_from(name),
        HeaderValue::from_bytes(value.as_bytes()),
    ) {
        (Ok(name), Ok(value)) => {
            headers.insert(name, value);
        }
        _ => tracing::warn!(
            header = name,
            "identity value is not a valid header value; left out"
        ),
    }
}

/// Python's spelling of a boolean, as keystonemiddleware writes it.
fn python_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The identity headers of a token, without prefix; with a service token
    /// the same names get `X-Service-` instead of `X-`.
    const IDENTITY_SUFFIXES: [&str; 12] = [
        "identity-status",
        "user-id",
        "user-name",
        "user-domain-id",
        "user-domain-name",
        "project-id",
        "project-name",
        "project-domain-id",
        "project-domain-name",
        "domain-id",
        "domain-name",
        "roles",
    ];

    #[test]
    fn the_scrub_covers_both_sets() {
        for suffix in IDENTITY_SUFFIXES {
            let plain = HeaderName::try_from(format!("x-{suffix}")).unwrap();
            assert!(SCRUBBED.contains(&plain), "{plain}");
            let mut headers = HeaderMap::new();
            headers.insert(plain.clone(), HeaderValue::from_static("forged"));
            headers.insert(
                HeaderName::try_from(format!("x-service-{suffix}")).unwrap(),
                HeaderValue::from_static("forged"),
            );
            headers.insert(X_SERVICE_TOKEN, HeaderValue::from_static("kept"));
            remove_identity_headers(&mut headers);
            assert_eq!(headers.len(), 1, "{suffix}: {headers:?}");
        }
    }
    use crate::model::NamedRef;
    use time::OffsetDateTime;

    fn identity(scope: Scope) -> Identity {
        Identity {
            user_id: "u1".into(),
            user_name: "alice".into(),
            user_domain: NamedRef::new("default", "Default"),
            scope,
            roles: vec!["reader".into(), "member".into()],
            is_admin_project: false,
            expires_at: OffsetDateTime::now_utc(),
            catalog: None,
        }
    }

    fn get<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
        h.get(name).map(|v| v.to_str().unwrap())
    }

    #[test]
    fn project_identity_headers() {
        let mut h = HeaderMap::new();
        let scope = Scope::Project {
            project: NamedRef::new("p1", "demo"),
            domain: NamedRef::new("default", "Default"),
        };
        insert_identity_headers(&mut h, &identity(scope));
        assert_eq!(get(&h, "X-Identity-Status"), Some("Confirmed"));
        assert_eq!(get(&h, "X-User-Id"), Some("u1"));
        assert_eq!(get(&h, "X-User-Name"), Some("alice"));
        assert_eq!(get(&h, "X-User-Domain-Id"), Some("default"));
        assert_eq!(get(&h, "X-User-Domain-Name"), Some("Default"));
        assert_eq!(get(&h, "X-Project-Id"), Some("p1"));
        assert_eq!(get(&h, "X-Project-Name"), Some("demo"));
        assert_eq!(get(&h, "X-Project-Domain-Id"), Some("default"));
        assert_eq!(get(&h, "X-Project-Domain-Name"), Some("Default"));
        assert_eq!(get(&h, "X-Roles"), Some("reader,member"));
        assert_eq!(get(&h, "X-Is-Admin-Project"), Some("False"));
        assert_eq!(get(&h, "OpenStack-System-Scope"), None);
        assert_eq!(get(&h, "X-Domain-Id"), None);
    }

    #[test]
    fn system_and_domain_headers() {
        let mut h = HeaderMap::new();
        insert_identity_headers(&mut h, &identity(Scope::System));
        assert_eq!(get(&h, "OpenStack-System-Scope"), Some("all"));
        assert_eq!(get(&h, "X-Project-Id"), None);
        let mut h = HeaderMap::new();
        insert_identity_headers(&mut h, &identity(Scope::Domain(NamedRef::new("d1", "D"))));
        assert_eq!(get(&h, "X-Domain-Id"), Some("d1"));
        assert_eq!(get(&h, "X-Domain-Name"), Some("D"));
        assert_eq!(get(&h, "OpenStack-System-Scope"), None);
    }

    #[test]
    fn service_headers_are_prefixed() {
        let mut h = HeaderMap::new();
        insert_service_headers(&mut h, &identity(Scope::System));
        assert_eq!(get(&h, "X-Service-Identity-Status"), Some("Confirmed"));
        assert_eq!(get(&h, "X-Service-User-Id"), Some("u1"));
        assert_eq!(get(&h, "X-Service-Roles"), Some("reader,member"));
        assert_eq!(get(&h, "X-User-Id"), None);
    }

    #[test]
    fn catalog_header_has_the_v2_shape() {
        let catalog: Vec<CatalogService> = serde_json::from_str(
            r#"[{"type": "placement", "name": "placement", "id": "s1", "endpoints": [
                {"id": "e1", "interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": "http://pub/p"},
                {"id": "e2", "interface": "internal", "region": "RegionOne", "region_id": "RegionOne", "url": "http://int/p"},
                {"id": "e3", "interface": "public", "region": "RegionTwo", "region_id": "RegionTwo", "url": "http://two/p"}]},
               {"type": "identity", "endpoints": [{"interface": "admin", "url": "http://k/v3"}]}]"#,
        )
        .unwrap();
        let mut id = identity(Scope::Unscoped);
        id.catalog = Some(catalog);
        let mut h = HeaderMap::new();
        insert_identity_headers(&mut h, &id);
        let v2: serde_json::Value =
            serde_json::from_str(get(&h, "X-Service-Catalog").unwrap()).unwrap();
        assert_eq!(
            v2,
            serde_json::json!([
                {"type": "placement", "name": "placement", "endpoints": [
                    {"region": "RegionOne", "publicURL": "http://pub/p", "internalURL": "http://int/p"},
                    {"region": "RegionTwo", "publicURL": "http://two/p"}]},
                {"type": "identity", "endpoints": [{"adminURL": "http://k/v3"}]}
            ])
        );
    }

    #[test]
    fn control_bytes_in_a_name_are_left_out() {
        let mut id = identity(Scope::Unscoped);
        id.user_name = "bad\nname".into();
        let mut h = HeaderMap::new();
        insert_identity_headers(&mut h, &id);
        assert_eq!(get(&h, "X-User-Name"), None);
        assert_eq!(get(&h, "X-User-Id"), Some("u1"));
    }

    #[test]
    fn scrub_removes_every_identity_header_but_keeps_tokens() {
        let mut h = HeaderMap::new();
        for name in [
            "X-Identity-Status",
            "X-User-Id",
            "X-User-Name",
            "X-User-Domain-Id",
            "X-User-Domain-Name",
            "X-Project-Id",
            "X-Project-Name",
            "X-Project-Domain-Id",
            "X-Project-Domain-Name",
            "X-Domain-Id",
            "X-Domain-Name",
            "X-Roles",
            "X-Is-Admin-Project",
            "OpenStack-System-Scope",
            "X-Service-Catalog",
            "X-Service-Identity-Status",
            "X-Service-Roles",
            "X-Service-User-Id",
            "X-Service-Project-Id",
            "X-Service-Something-New",
            "X-Tenant-Id",
            "X-Tenant",
            "X-Role",
            "X-User",
        ] {
            h.append(
                HeaderName::try_from(name).unwrap(),
                HeaderValue::from_static("admin"),
            );
            h.append(
                HeaderName::try_from(name).unwrap(),
                HeaderValue::from_static("again"),
            );
        }
        h.insert(X_AUTH_TOKEN, HeaderValue::from_static("tok"));
        h.insert(X_SERVICE_TOKEN, HeaderValue::from_static("svc"));
        h.insert("accept", HeaderValue::from_static("application/json"));
        remove_identity_headers(&mut h);
        let left: Vec<&str> = h.keys().map(HeaderName::as_str).collect();
        assert_eq!(left.len(), 3, "{left:?}");
        assert!(h.contains_key("x-auth-token"));
        assert!(h.contains_key("x-service-token"));
        assert!(h.contains_key("accept"));
    }

    proptest::proptest! {
        #[test]
        fn any_names_write_exact_headers_or_none(
            name in ".*",
            project in ".*",
            roles in proptest::collection::vec("[^,]*", 0..4),
        ) {
            let mut id = identity(Scope::Project {
                project: NamedRef::new("p1", project.clone()),
                domain: NamedRef::new("default", "Default"),
            });
            id.user_name.clone_from(&name);
            id.roles.clone_from(&roles);
            let mut h = HeaderMap::new();
            insert_identity_headers(&mut h, &id);
            for (header, want) in [
                ("x-user-name", name.clone()),
                ("x-project-name", project),
                ("x-roles", roles.join(",")),
            ] {
                let valid = HeaderValue::from_bytes(want.as_bytes()).is_ok();
                match h.get(header) {
                    Some(v) => proptest::prop_assert_eq!(v.as_bytes(), want.as_bytes()),
                    None => proptest::prop_assert!(!valid, "{} left out", header),
                }
            }
            proptest::prop_assert_eq!(h.get("x-user-id").map(HeaderValue::as_bytes), Some(&b"u1"[..]));
        }

        #[test]
        fn scrub_leaves_no_x_service_header_but_the_token(suffix in "[a-z0-9-]{1,20}") {
            let mut h = HeaderMap::new();
            let name = HeaderName::try_from(format!("x-service-{suffix}")).unwrap();
            h.insert(name.clone(), HeaderValue::from_static("v"));
            remove_identity_headers(&mut h);
            proptest::prop_assert_eq!(h.contains_key(&name), name == X_SERVICE_TOKEN);
        }
    }
}
