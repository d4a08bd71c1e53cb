//! `serde` support (feature `serde`). Versions and requests go through their
//! `Display` and `FromStr`, so there is one grammar.

use serde::de::{self, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use crate::document::{
    ApiVersion, ErrorBody, ErrorEntry, Link, MediaType, VersionDocument, VersionStatus,
    VersionsDocument,
};
use crate::{Version, VersionRequest, VersionSpan};

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(de::Error::custom)
    }
}

impl Serialize for VersionRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for VersionRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(de::Error::custom)
    }
}

impl Serialize for VersionSpan {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for VersionSpan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(de::Error::custom)
    }
}

impl Serialize for VersionStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for VersionStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        let Ok(status) = s.parse();
        Ok(status)
    }
}

#[derive(Serialize, Deserialize)]
struct RawLink {
    rel: String,
    href: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    media_type: Option<String>,
}

impl Serialize for Link {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawLink {
            rel: self.rel.clone(),
            href: self.href.clone(),
            media_type: self.media_type.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Link {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawLink::deserialize(deserializer)?;
        Ok(Link {
            rel: raw.rel,
            href: raw.href,
            media_type: raw.media_type,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct RawMediaType {
    base: String,
    #[serde(rename = "type")]
    media_type: String,
}

impl Serialize for MediaType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawMediaType {
            base: self.base.clone(),
            media_type: self.media_type.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for MediaType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawMediaType::deserialize(deserializer)?;
        Ok(MediaType::new(raw.base, raw.media_type))
    }
}

/// Writes an optional version as the document does: an empty string when
/// there are no microversions.
fn version_text(v: Option<Version>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

impl Serialize for ApiVersion {
    /// Both `max_version` and `version` are written (older clients read
    /// `version`); `media-types` only when there are some.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut fields = 6;
        fields += usize::from(self.updated.is_some()) + usize::from(!self.media_types.is_empty());
        let mut s = serializer.serialize_struct("ApiVersion", fields)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("status", &self.status)?;
        s.serialize_field("min_version", &version_text(self.min_version))?;
        s.serialize_field("max_version", &version_text(self.max_version))?;
        s.serialize_field("version", &version_text(self.max_version))?;
        if let Some(updated) = &self.updated {
            s.serialize_field("updated", updated)?;
        }
        s.serialize_field("links", &self.links)?;
        if !self.media_types.is_empty() {
            s.serialize_field("media-types", &self.media_types)?;
        }
        s.end()
    }
}

/// An entry as servers write it: every field optional, versions as text
/// that may be empty.
#[derive(Deserialize, Default)]
struct RawApiVersion {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    status: Option<VersionStatus>,
    #[serde(default)]
    min_version: Option<String>,
    #[serde(default)]
    max_version: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    updated: Option<String>,
    #[serde(default)]
    links: Option<Vec<Link>>,
    #[serde(default, rename = "media-types")]
    media_types: Option<Vec<MediaType>>,
}

/// Reads an optional version field: absent, null and `""` are all `None`.
fn read_version<E: de::Error>(field: &str, text: Option<&str>) -> Result<Option<Version>, E> {
    match text {
        None | Some("") => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|e| E::custom(format_args!("{field}: {e}"))),
    }
}

impl RawApiVersion {
    fn into_api_version<E: de::Error>(self) -> Result<ApiVersion, E> {
        let min_version = read_version("min_version", self.min_version.as_deref())?;
        // `max_version` first; `version` is the older name of the same.
        let max_version = match read_version("max_version", self.max_version.as_deref())? {
            Some(v) => Some(v),
            None => read_version("version", self.version.as_deref())?,
        };
        if let (Some(min), Some(max)) = (min_version, max_version) {
            if min > max {
                return Err(E::custom(format_args!(
                    "min_version {min} is above max_version {max}"
                )));
            }
        }
        Ok(ApiVersion {
            id: self.id.unwrap_or_default(),
            status: self
                .status
                .unwrap_or_else(|| VersionStatus::Other(String::new())),
            min_version,
            max_version,
            updated: self.updated,
            links: self.links.unwrap_or_default(),
            media_types: self.media_types.unwrap_or_default(),
        })
    }
}

impl<'de> Deserialize<'de> for ApiVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RawApiVersion::deserialize(deserializer)?.into_api_version()
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawVersions {
    List(Vec<RawApiVersion>),
    Values { values: Vec<RawApiVersion> },
}

/// `version` is an object in `{"version": {..}}`, but a string in a bare
/// entry.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawVersionField {
    Text(Option<String>),
    Entry(Box<RawApiVersion>),
}

/// Any of the four shapes of a versions document.
#[derive(Deserialize)]
struct RawDocument {
    #[serde(default)]
    versions: Option<RawVersions>,
    #[serde(default)]
    version: Option<RawVersionField>,
    #[serde(flatten)]
    bare: RawBareFields,
}

/// The fields of a bare entry other than `version`.
#[derive(Deserialize)]
struct RawBareFields {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    status: Option<VersionStatus>,
    #[serde(default)]
    min_version: Option<String>,
    #[serde(default)]
    max_version: Option<String>,
    #[serde(default)]
    updated: Option<String>,
    #[serde(default)]
    links: Option<Vec<Link>>,
    #[serde(default, rename = "media-types")]
    media_types: Option<Vec<MediaType>>,
}

impl Serialize for VersionsDocument {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("VersionsDocument", 1)?;
        s.serialize_field("versions", &self.versions)?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for VersionsDocument {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawDocument::deserialize(deserializer)?;
        let entries = match (raw.versions, raw.version) {
            (Some(RawVersions::List(list) | RawVersions::Values { values: list }), _) => list,
            (None, Some(RawVersionField::Entry(entry))) => vec![*entry],
            (None, version) if raw.bare.id.is_some() => {
                let version = match version {
                    Some(RawVersionField::Text(text)) => text,
                    _ => None,
                };
                let b = raw.bare;
                vec![RawApiVersion {
                    id: b.id,
                    status: b.status,
                    min_version: b.min_version,
                    max_version: b.max_version,
                    version,
                    updated: b.updated,
                    links: b.links,
                    media_types: b.media_types,
                }]
            }
            _ => {
                return Err(de::Error::custom(
                    "expected a \"versions\" list, a \"version\" object or a bare version entry with an \"id\"",
                ));
            }
        };
        let versions = entries
            .into_iter()
            .map(RawApiVersion::into_api_version)
            .collect::<Result<_, _>>()?;
        Ok(VersionsDocument { versions })
    }
}

impl Serialize for VersionDocument {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("VersionDocument", 1)?;
        s.serialize_field("version", &self.version)?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for VersionDocument {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let doc = VersionsDocument::deserialize(deserializer)?;
        match <[ApiVersion; 1]>::try_from(doc.versions) {
            Ok([version]) => Ok(VersionDocument { version }),
            Err(v) => Err(de::Error::custom(format_args!(
                "expected one API version, found {}",
                v.len()
            ))),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct RawErrorEntry {
    status: u16,
    title: String,
    #[serde(default)]
    detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_version: Option<Version>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_version: Option<Version>,
}

impl Serialize for ErrorEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawErrorEntry {
            status: self.status,
            title: self.title.clone(),
            detail: self.detail.clone(),
            code: self.code.clone(),
            request_id: self.request_id.clone(),
            min_version: self.min_version,
            max_version: self.max_version,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ErrorEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawErrorEntry::deserialize(deserializer)?;
        Ok(ErrorEntry {
            status: raw.status,
            title: raw.title,
            detail: raw.detail,
            code: raw.code,
            request_id: raw.request_id,
            min_version: raw.min_version,
            max_version: raw.max_version,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct RawErrorBody {
    errors: Vec<ErrorEntry>,
}

impl Serialize for ErrorBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ErrorBody", 1)?;
        s.serialize_field("errors", &self.errors)?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for ErrorBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawErrorBody::deserialize(deserializer)?;
        Ok(ErrorBody { errors: raw.errors })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::VersionRange;

    fn parse(value: serde_json::Value) -> VersionsDocument {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn versions_round_trip_as_strings() {
        let v = Version::new(1, 39);
        assert_eq!(serde_json::to_value(v).unwrap(), json!("1.39"));
        assert_eq!(
            serde_json::from_value::<Version>(json!("2.10")).unwrap(),
            Version::new(2, 10)
        );
        let err = serde_json::from_value::<Version>(json!("1.2.3")).unwrap_err();
        assert!(
            err.to_string().contains("invalid version \"1.2.3\""),
            "{err}"
        );
        let req: VersionRequest = serde_json::from_value(json!("2.latest")).unwrap();
        assert_eq!(req, VersionRequest::MajorLatest(2));
        let span = VersionSpan::from_static("1.5 - latest");
        assert_eq!(serde_json::to_value(span).unwrap(), json!("1.5 - latest"));
        assert_eq!(
            serde_json::from_value::<VersionSpan>(json!("1.0 - 1.4")).unwrap(),
            VersionSpan::from_static("1.0 - 1.4")
        );
        let err = serde_json::from_value::<VersionSpan>(json!("1.5")).unwrap_err();
        assert!(err.to_string().contains("invalid version span"), "{err}");
    }

    #[test]
    fn four_document_shapes() {
        let entry = json!({"id": "v2.1", "status": "CURRENT", "min_version": "2.1",
                           "version": "2.90", "links": [{"rel": "self", "href": "http://h/v2.1/"}]});
        let want = parse(json!({"versions": [entry.clone()]}));
        assert_eq!(want.versions.len(), 1);
        assert_eq!(
            want.versions[0].microversions(),
            Some(VersionRange::from_static("2.1", "2.90"))
        );
        assert_eq!(want.versions[0].self_link(), Some("http://h/v2.1/"));
        assert_eq!(
            parse(json!({"versions": {"values": [entry.clone()]}})),
            want
        );
        assert_eq!(parse(json!({"version": entry.clone()})), want);
        assert_eq!(parse(entry), want);
    }

    #[test]
    fn empty_strings_are_absent_and_max_version_comes_first() {
        let doc = parse(json!({"versions": [
            {"id": "v2.0", "status": "SUPPORTED", "min_version": "", "version": "", "links": []},
            {"id": "v3.0", "status": "CURRENT", "min_version": "3.0", "max_version": "3.70",
             "version": "3.1", "links": []}
        ]}));
        assert_eq!(doc.versions[0].microversions(), None);
        assert_eq!(doc.versions[1].max_version, Some(Version::new(3, 70)));
        assert_eq!(doc.current().map(|v| v.id.as_str()), Some("v3.0"));
    }

    #[test]
    fn bad_documents_say_why() {
        let err = serde_json::from_value::<VersionsDocument>(json!({"foo": 1})).unwrap_err();
        assert!(
            err.to_string().contains("expected a \"versions\" list"),
            "{err}"
        );
        let err = serde_json::from_value::<VersionsDocument>(
            json!({"versions": [{"id": "v1", "min_version": "1.5", "max_version": "1.2"}]}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("above"), "{err}");
        let err = serde_json::from_value::<VersionsDocument>(
            json!({"versions": [{"id": "v1", "max_version": "1.x"}]}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("max_version"), "{err}");
    }

    #[test]
    fn serializes_wire_12_and_13() {
        let entry = ApiVersion::new("v1.0", VersionStatus::Current)
            .with_microversions(VersionRange::from_static("1.0", "1.39"))
            .with_updated("2011-01-21T11:33:21Z")
            .with_link(Link::new("self", "http://127.0.0.1:8778/"));
        let doc = VersionsDocument::new(vec![
            entry.clone(),
            ApiVersion::new("v0.9", VersionStatus::Supported),
        ]);
        assert_eq!(
            serde_json::to_value(&doc).unwrap(),
            json!({"versions": [
                {"id": "v1.0", "status": "CURRENT", "min_version": "1.0", "max_version": "1.39",
                 "version": "1.39", "updated": "2011-01-21T11:33:21Z",
                 "links": [{"rel": "self", "href": "http://127.0.0.1:8778/"}]},
                {"id": "v0.9", "status": "SUPPORTED", "min_version": "", "max_version": "",
                 "version": "", "links": []}
            ]})
        );
        let root = VersionDocument::new(entry.with_media_type(MediaType::new(
            "application/json",
            "application/vnd.openstack.placement+json;version=1",
        )));
        let value = serde_json::to_value(&root).unwrap();
        assert_eq!(
            value["version"]["media-types"][0]["base"],
            "application/json"
        );
        assert_eq!(value["version"]["max_version"], "1.39");
        let back: VersionDocument = serde_json::from_value(value).unwrap();
        assert_eq!(back, root);
    }

    #[test]
    fn error_body_round_trip() {
        let body = ErrorBody::single(
            ErrorEntry::new(
                http::StatusCode::NOT_ACCEPTABLE,
                "Version 1.999 is not supported",
            )
            .with_request_id("req-1")
            .with_range(VersionRange::from_static("1.0", "1.39")),
        );
        let value = serde_json::to_value(&body).unwrap();
        assert_eq!(
            value,
            json!({"errors": [{"status": 406, "title": "Not Acceptable",
                "detail": "Version 1.999 is not supported", "request_id": "req-1",
                "min_version": "1.0", "max_version": "1.39"}]})
        );
        assert_eq!(serde_json::from_value::<ErrorBody>(value).unwrap(), body);
    }
}
