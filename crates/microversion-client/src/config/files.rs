//! Finding and reading `clouds.yaml` and `secure.yaml`.
//!
//! Like openstacksdk: the first file found wins, in `OS_CLIENT_CONFIG_FILE`
//! (`OS_CLIENT_SECURE_FILE` for secure.yaml), then the current directory,
//! `$XDG_CONFIG_HOME/openstack` (`~/.config/openstack`), `/etc/openstack`;
//! each as `.yaml`, `.yml` or `.json`. A cloud of secure.yaml is merged
//! into the same cloud of clouds.yaml, key by key.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::error::ConfigError;

/// The directories searched, in order, when none are given.
pub(crate) fn default_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        });
    if let Some(home) = config_home {
        dirs.push(home.join("openstack"));
    }
    dirs.push(PathBuf::from("/etc/openstack"));
    dirs
}

/// The candidate paths for `stem` (`clouds` or `secure`): the explicit
/// file first, then `stem.{yaml,yml,json}` in each directory.
pub(crate) fn candidates(explicit: Option<&Path>, dirs: &[PathBuf], stem: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = explicit.map(Path::to_path_buf).into_iter().collect();
    for dir in dirs {
        for ext in ["yaml", "yml", "json"] {
            paths.push(dir.join(format!("{stem}.{ext}")));
        }
    }
    paths
}

/// The first of `paths` that exists.
pub(crate) fn first_existing(paths: &[PathBuf]) -> Option<&PathBuf> {
    paths.iter().find(|p| p.is_file())
}

/// A scalar as written in the file: `1.20` stays `1.20`, not the float
/// 1.2; `~`, `null` and empty scalars are `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text(pub(crate) Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(match v {
                    "" | "~" | "null" | "Null" | "NULL" => Text(None),
                    _ => Text(Some(v.to_owned())),
                })
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(Some(v.to_string())))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(Some(v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(Some(v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(Some(v.to_string())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Text, E> {
                Ok(Text(None))
            }
        }
        // YAML gives a plain scalar's own text to `deserialize_str`: a
        // version written 1.20 stays "1.20" instead of the float 1.2.
        deserializer.deserialize_str(TextVisitor)
    }
}

/// One cloud's entries: `key` or `auth.key` to the value.
pub(crate) type Entries = BTreeMap<String, Text>;

/// A cloud's mapping, flattened: top-level keys as they are, `auth`'s
/// keys as `auth.KEY`; `regions` as `regions` (its first name).
#[derive(Debug, Default)]
pub(crate) struct CloudEntries(pub(crate) Entries);

impl<'de> Deserialize<'de> for CloudEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CloudVisitor;
        impl<'de> Visitor<'de> for CloudVisitor {
            type Value = CloudEntries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of settings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CloudEntries, A::Error> {
                let mut entries = Entries::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "auth" => {
                            let auth: BTreeMap<String, Text> =
                                map.next_value::<Option<_>>()?.unwrap_or_default();
                            for (k, v) in auth {
                                entries.insert(format!("auth.{k}"), v);
                            }
                        }
                        "regions" => {
                            let regions: Vec<Region> =
                                map.next_value::<Option<_>>()?.unwrap_or_default();
                            let first = regions.into_iter().next().map(|r| r.0);
                            entries.insert(key, Text(first));
                        }
                        _ if super::keys::is_known(&key) => {
                            let value = map.next_value::<Text>()?;
                            entries.insert(key, value);
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(CloudEntries(entries))
            }
        }
        deserializer.deserialize_map(CloudVisitor)
    }
}

/// A region entry: a name, or a mapping with `name`.
struct Region(String);

impl<'de> Deserialize<'de> for Region {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Entry { name: String },
        }
        match Raw::deserialize(deserializer) {
            Ok(Raw::Name(name) | Raw::Entry { name }) => Ok(Region(name)),
            Err(_) => Err(de::Error::custom(
                "regions: expected a list of names or of mappings with a name",
            )),
        }
    }
}

/// The whole file: `clouds:` and whatever else (ignored).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CloudsFile {
    #[serde(default)]
    pub(crate) clouds: BTreeMap<String, CloudEntries>,
}

/// Reads and parses a clouds or secure file.
pub(crate) fn read(path: &Path) -> Result<CloudsFile, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let parse_error = |reason: String| ConfigError::Parse {
        path: path.to_path_buf(),
        reason,
    };
    if text.trim().is_empty() {
        return Ok(CloudsFile::default());
    }
    // clouds.json is read by the YAML parser too: JSON is YAML, and so
    // numbers keep their text.
    let file: Option<CloudsFile> =
        serde_yaml_ng::from_str(&text).map_err(|e| parse_error(e.to_string()))?;
    Ok(file.unwrap_or_default())
}
