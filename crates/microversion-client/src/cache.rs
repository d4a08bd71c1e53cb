//! What the client remembers about endpoints: in memory
//! ([`DiscoveryCache`]) and, opt-in, on disk ([`DiskCache`]).
//!
//! In memory, each endpoint has one slot behind an async mutex: the first
//! caller that finds it empty discovers while holding it, and every other
//! caller, clone or concurrent task, waits for that one answer. So there is
//! exactly one discovery request in flight per endpoint.
//!
//! On disk, each endpoint has one small JSON file, keyed by the full
//! normalised endpoint URL (scheme, host, port and path), with a
//! time-to-live. Files are written to a temporary name and renamed, so a
//! reader never sees half a file; a file that cannot be read or parsed, or
//! that belongs to another endpoint, is ignored and replaced by the next
//! discovery. The disk cache never fails a request.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use microversion::{ServerVersions, Version, VersionRange};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::discovery::{Discovery, DiscoveryRecord, endpoint_key};

/// How the client learned an endpoint's versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Source {
    /// From the versions document.
    Discovery,
    /// From a 406 answer (its range headers or error body).
    NotAcceptable,
    /// The server answered a microversioned request without a version, and
    /// the client was told to carry on with `X.0`. Kept in memory only.
    IgnoredHeader,
}

/// What the client knows about one endpoint's versions.
#[derive(Clone, Debug)]
pub(crate) struct Known {
    pub(crate) versions: ServerVersions,
    /// The `X` of `X.0`, for an endpoint without microversions.
    pub(crate) major: Option<u32>,
    pub(crate) discovery: Option<Discovery>,
    pub(crate) source: Source,
}

impl Known {
    pub(crate) fn from_discovery(discovery: Discovery) -> Self {
        Known {
            versions: discovery.server_versions(),
            major: discovery.major(),
            discovery: Some(discovery),
            source: Source::Discovery,
        }
    }

    pub(crate) fn from_not_acceptable(range: VersionRange) -> Self {
        Known {
            versions: ServerVersions::Microversions(range),
            major: Some(range.max().major()),
            discovery: None,
            source: Source::NotAcceptable,
        }
    }

    pub(crate) fn ignored_header(major: u32) -> Self {
        Known {
            versions: ServerVersions::Unversioned,
            major: Some(major),
            discovery: None,
            source: Source::IgnoredHeader,
        }
    }

    /// The server's range, if it has microversions.
    pub(crate) fn range(&self) -> Option<VersionRange> {
        match self.versions {
            ServerVersions::Microversions(range) => Some(range),
            ServerVersions::Unversioned => None,
        }
    }
}

type Slot = tokio::sync::Mutex<Option<Arc<Known>>>;

/// The in-memory cache of what endpoints support, shared by every clone
/// of a [`Client`](crate::Client).
///
/// One is made per client unless one is given to
/// [`ClientBuilder::discovery_cache`](crate::ClientBuilder::discovery_cache),
/// so that several clients (for example one per service of a cloud) share
/// it. Cloning it is cheap and shares the entries.
#[derive(Clone, Default)]
pub struct DiscoveryCache {
    slots: Arc<std::sync::Mutex<HashMap<String, Arc<Slot>>>>,
}

impl DiscoveryCache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        DiscoveryCache::default()
    }

    /// How many endpoints have a slot (known, or being discovered).
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no endpoint has a slot.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every endpoint. A discovery under way completes for its
    /// callers; later callers discover again.
    pub fn clear(&self) {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    pub(crate) fn slot(&self, key: &str) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(slots.entry(key.to_owned()).or_default())
    }
}

impl fmt::Debug for DiscoveryCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiscoveryCache")
            .field("endpoints", &self.len())
            .finish()
    }
}

/// The on-disk cache of discovery results: one JSON file per endpoint in a
/// directory the caller chooses, valid for a time-to-live (300 seconds
/// unless set).
///
/// ```no_run
/// use std::time::Duration;
/// use microversion_client::DiskCache;
///
/// let dir = DiskCache::default_dir().unwrap_or_else(|| "/tmp/microversion".into());
/// let cache = DiskCache::new(dir).ttl(Duration::from_secs(3600));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskCache {
    dir: PathBuf,
    ttl: Duration,
}

/// The format marker of cache files; a file with another is ignored.
const FORMAT: &str = "microversion-client/1";

/// Longest file name kept readable; longer keys are cut and hashed.
const MAX_READABLE_NAME: usize = 120;

#[derive(Serialize, Deserialize)]
struct Record {
    format: String,
    endpoint: String,
    saved_at: u64,
    source: Source,
    min_version: Option<Version>,
    max_version: Option<Version>,
    major: Option<u32>,
    discovery: Option<DiscoveryRecord>,
}

impl DiskCache {
    /// The default time-to-live of an entry.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(300);

    /// A cache in `dir` (created when first written).
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DiskCache {
            dir: dir.into(),
            ttl: DiskCache::DEFAULT_TTL,
        }
    }

    /// How long an entry stays valid.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The time-to-live.
    #[must_use]
    pub fn time_to_live(&self) -> Duration {
        self.ttl
    }

    /// The per-user cache directory for this crate, following the XDG base
    /// directory convention: `$XDG_CACHE_HOME/microversion`, else
    /// `$HOME/.cache/microversion` (`%LOCALAPPDATA%\microversion` on
    /// Windows). `None` when none of these variables is set.
    #[must_use]
    pub fn default_dir() -> Option<PathBuf> {
        let non_empty = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let base = non_empty("XDG_CACHE_HOME")
            .or_else(|| non_empty("HOME").map(|home| home.join(".cache")))
            .or_else(|| non_empty("LOCALAPPDATA"))?;
        Some(base.join("microversion"))
    }

    /// The file that holds `endpoint`'s entry.
    #[must_use]
    pub fn path_for(&self, endpoint: &Url) -> PathBuf {
        self.dir.join(file_name(&endpoint_key(endpoint)))
    }

    /// Reads the entry of `key`, if there is a valid, fresh one.
    pub(crate) fn load(&self, key: &str) -> Option<Known> {
        let path = self.dir.join(file_name(key));
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring unreadable cache file");
                return None;
            }
        };
        let record: Record = match serde_json::from_slice(&bytes) {
            Ok(record) => record,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring corrupt cache file");
                return None;
            }
        };
        if record.format != FORMAT || record.endpoint != key {
            tracing::debug!(path = %path.display(), "ignoring cache file of another format or endpoint");
            return None;
        }
        let age = now_secs().checked_sub(record.saved_at)?;
        if Duration::from_secs(age) >= self.ttl {
            tracing::debug!(path = %path.display(), age, "cache file expired");
            return None;
        }
        record.into_known()
    }

    /// Writes the entry of `key`, atomically; failures are logged only.
    pub(crate) fn store(&self, key: &str, known: &Known) {
        if known.source == Source::IgnoredHeader {
            return;
        }
        let record = Record::new(key, known);
        let bytes = match serde_json::to_vec_pretty(&record) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!(error = %e, "cannot serialize a cache entry");
                return;
            }
        };
        let path = self.dir.join(file_name(key));
        if let Err(e) = write_atomically(&self.dir, &path, &bytes) {
            tracing::warn!(path = %path.display(), error = %e, "cannot write cache file");
        }
    }

    /// Removes the entry of `key`, if any.
    pub(crate) fn remove(&self, key: &str) {
        let path = self.dir.join(file_name(key));
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot remove cache file");
            }
        }
    }
}

impl Record {
    fn new(key: &str, known: &Known) -> Self {
        let range = known.range();
        Record {
            format: FORMAT.to_owned(),
            endpoint: key.to_owned(),
            saved_at: now_secs(),
            source: known.source,
            min_version: range.map(VersionRange::min),
            max_version: range.map(VersionRange::max),
            major: known.major,
            discovery: known.discovery.as_ref().map(DiscoveryRecord::from),
        }
    }

    fn into_known(self) -> Option<Known> {
        let discovery = match self.discovery {
            Some(record) => Some(record.into_discovery()?),
            None => None,
        };
        let versions = match (self.min_version, self.max_version) {
            (Some(min), Some(max)) => {
                ServerVersions::Microversions(VersionRange::new(min, max).ok()?)
            }
            (None, None) => ServerVersions::Unversioned,
            _ => return None,
        };
        if self.source == Source::IgnoredHeader {
            return None;
        }
        Some(Known {
            versions,
            major: self.major,
            discovery,
            source: self.source,
        })
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Writes `bytes` to a temporary file in `dir`, flushes it, and renames it
/// to `path`.
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The file name of a key: letters, digits, `.` and `-` kept, every other
/// byte written `_XX`, so distinct keys get distinct names; a long key is
/// cut and followed by a hash of the whole key.
fn file_name(key: &str) -> String {
    let mut name = String::with_capacity(key.len() + 16);
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
            name.push(char::from(b));
        } else {
            name.push_str(&format!("_{b:02X}"));
        }
    }
    if name.len() > MAX_READABLE_NAME {
        // Only ASCII was pushed, so any cut is on a char boundary.
        name.truncate(MAX_READABLE_NAME - 17);
        name.push_str(&format!("-{:016x}", fnv1a(key.as_bytes())));
    }
    name.push_str(".json");
    name
}

/// 64-bit FNV-1a: small, stable across releases and platforms (unlike the
/// standard library's hasher), and enough to tell long keys apart; the
/// record also stores its key, so a collision is a miss, never a wrong hit.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            static N: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "mv-client-cache-{name}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&dir);
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn known() -> Known {
        Known::from_not_acceptable(VersionRange::from_static("1.1", "1.115"))
    }

    #[test]
    fn file_names_are_escaped_and_distinct() {
        assert_eq!(
            file_name("http://h:80/v2.1"),
            "http_3A_2F_2Fh_3A80_2Fv2.1.json"
        );
        assert_ne!(file_name("http://h:80/a_b"), file_name("http://h:80/a/b"));
        let long = format!("http://h:80/{}", "x".repeat(300));
        let longer = format!("{long}y");
        let name = file_name(&long);
        assert!(name.len() <= MAX_READABLE_NAME + 5, "{name}");
        assert_ne!(name, file_name(&longer));
        assert_eq!(name, file_name(&long));
    }

    #[test]
    fn round_trip_and_ttl() {
        let dir = Scratch::new("rt");
        let cache = DiskCache::new(&dir.0);
        assert!(cache.load("http://h:80").is_none());
        cache.store("http://h:80", &known());
        let back = cache.load("http://h:80").unwrap();
        assert_eq!(back.versions, known().versions);
        assert_eq!(back.source, Source::NotAcceptable);
        // Another key, same directory: a miss.
        assert!(cache.load("http://h:81").is_none());
        // A zero TTL: everything is stale.
        assert!(
            cache
                .clone()
                .ttl(Duration::ZERO)
                .load("http://h:80")
                .is_none()
        );
        cache.remove("http://h:80");
        assert!(cache.load("http://h:80").is_none());
        cache.remove("http://h:80");
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(&dir.0).unwrap().collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn corrupt_files_are_ignored_and_rewritten() {
        let dir = Scratch::new("corrupt");
        let cache = DiskCache::new(&dir.0);
        let key = "http://h:80/x";
        let path = dir.0.join(file_name(key));
        fs::create_dir_all(&dir.0).unwrap();
        for garbage in [
            &b""[..],
            b"{",
            b"\xff\xfe",
            b"null",
            b"{\"format\": \"microversion-client/0\"}",
        ] {
            fs::write(&path, garbage).unwrap();
            assert!(cache.load(key).is_none());
        }
        // A record for another endpoint under this name is a miss.
        let mut other = Record::new("http://elsewhere:80", &known());
        other.endpoint = "http://elsewhere:80".to_owned();
        fs::write(&path, serde_json::to_vec(&other).unwrap()).unwrap();
        assert!(cache.load(key).is_none());
        // A record from the future (clock moved back) is stale.
        let mut future = Record::new(key, &known());
        future.saved_at = now_secs() + 3600;
        fs::write(&path, serde_json::to_vec(&future).unwrap()).unwrap();
        assert!(cache.load(key).is_none());
        // Inconsistent ranges are a miss.
        let mut half = Record::new(key, &known());
        half.max_version = None;
        fs::write(&path, serde_json::to_vec(&half).unwrap()).unwrap();
        assert!(cache.load(key).is_none());
        cache.store(key, &known());
        assert!(cache.load(key).is_some());
    }

    #[test]
    fn unusable_directories_are_not_fatal() {
        let dir = Scratch::new("unusable");
        fs::write(&dir.0, b"a file, not a directory").unwrap();
        let cache = DiskCache::new(dir.0.join("sub"));
        cache.store("http://h:80", &known());
        assert!(cache.load("http://h:80").is_none());
        cache.remove("http://h:80");
        let _ = fs::remove_file(&dir.0);
    }

    #[test]
    fn ignored_header_fallbacks_stay_in_memory() {
        let dir = Scratch::new("ignored");
        let cache = DiskCache::new(&dir.0);
        cache.store("http://h:80", &Known::ignored_header(2));
        assert!(!dir.0.exists());
    }

    #[test]
    fn default_dir_follows_xdg() {
        // Only checks the shape: the environment is the test runner's.
        if let Some(dir) = DiskCache::default_dir() {
            assert!(dir.ends_with("microversion"), "{}", dir.display());
        }
    }

    #[test]
    fn memory_slots_are_shared_by_key() {
        let cache = DiscoveryCache::new();
        assert!(cache.is_empty());
        let a = cache.slot("k");
        let b = cache.clone().slot("k");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.len(), 1);
        cache.clear();
        assert!(cache.is_empty());
    }
}
