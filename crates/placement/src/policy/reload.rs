//! The policy file, reloaded when it changes, as oslo.policy does.
//!
//! oslo.policy checks the file's modification time when it enforces a
//! rule and reloads the file when the time changed. Here the file's
//! modification time and size are looked at, on enforcement, at most once
//! per [`CHECK_INTERVAL`]: one request in that interval pays for a
//! `stat`, the others read the policy in force under a briefly held lock.
//!
//! Where oslo.policy raises on a file that became invalid (every request
//! fails until the file is fixed), the last good policy stays in force
//! and the error is logged, naming the file and the rule; a deleted file
//! also keeps the last good policy, with a warning.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use super::Policy;

/// How often, at most, the policy file is looked at.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// What tells one version of the file from the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stamp {
    /// The file's modification time and size.
    Present(Option<SystemTime>, u64),
    /// The file could not be looked at (deleted, say).
    Missing,
}

impl Stamp {
    fn of(path: &Path) -> std::io::Result<Stamp> {
        let meta = std::fs::metadata(path)?;
        Ok(Stamp::Present(meta.modified().ok(), meta.len()))
    }
}

/// The policy in force: the defaults with the rules of the policy file,
/// reloaded when the file changes.
#[derive(Debug)]
pub struct LivePolicy {
    current: RwLock<Arc<Policy>>,
    file: Option<Watched>,
}

/// The policy file and what its last look found.
#[derive(Debug)]
struct Watched {
    path: PathBuf,
    enforce_new_defaults: bool,
    enforce_scope: bool,
    /// Milliseconds since `epoch` before which the file is not looked at.
    next_check: AtomicU64,
    epoch: Instant,
    /// What the last look found; only the request that claimed the look
    /// (through `next_check`) takes the lock.
    seen: Mutex<Stamp>,
}

impl LivePolicy {
    /// Loads the policy, as [`Policy::load`], and watches `policy_file`.
    ///
    /// # Errors
    ///
    /// Fails as [`Policy::load`] does: a policy file that cannot be read
    /// or is invalid stops the start.
    pub fn load(
        enforce_new_defaults: bool,
        enforce_scope: bool,
        policy_file: Option<&Path>,
    ) -> anyhow::Result<LivePolicy> {
        // Looked at before the load: a change in between is seen later.
        let seen = policy_file.map(|p| Stamp::of(p).unwrap_or(Stamp::Missing));
        let policy = Policy::load(enforce_new_defaults, enforce_scope, policy_file)?;
        let file = policy_file.zip(seen).map(|(path, seen)| Watched {
            path: path.to_owned(),
            enforce_new_defaults,
            enforce_scope,
            next_check: AtomicU64::new(0),
            epoch: Instant::now(),
            seen: Mutex::new(seen),
        });
        Ok(LivePolicy {
            current: RwLock::new(Arc::new(policy)),
            file,
        })
    }

    /// The policy in force, after reloading the file if it is time to look
    /// at it and it changed.
    pub fn current(&self) -> Arc<Policy> {
        if let Some(file) = &self.file {
            if let Some(policy) = file.reload_if_changed() {
                *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(policy);
            }
        }
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Watched {
    /// The file's new policy, when it is time to look, the file changed
    /// and it is valid.
    fn reload_if_changed(&self) -> Option<Policy> {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        let due = self.next_check.load(Ordering::Relaxed);
        let interval = u64::try_from(CHECK_INTERVAL.as_millis()).unwrap_or(u64::MAX);
        if now < due
            || self
                .next_check
                .compare_exchange(
                    due,
                    now.saturating_add(interval),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_err()
        {
            return None;
        }
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let path = self.path.display();
        let stamp = match Stamp::of(&self.path) {
            Ok(stamp) => stamp,
            Err(e) => {
                if *seen != Stamp::Missing {
                    tracing::warn!(
                        "policy file {path}: {e}; the policy loaded before stays in force"
                    );
                    *seen = Stamp::Missing;
                }
                return None;
            }
        };
        if stamp == *seen {
            return None;
        }
        *seen = stamp;
        match Policy::load(
            self.enforce_new_defaults,
            self.enforce_scope,
            Some(&self.path),
        ) {
            Ok(policy) => {
                tracing::info!("policy file {path} changed: reloaded");
                Some(policy)
            }
            Err(e) => {
                tracing::error!(
                    "policy file {path} changed but is not valid, the policy loaded before stays in force: {e:#}"
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::RequestContext;
    use crate::policy::{Action, Target};

    fn lists(policy: &LivePolicy) -> bool {
        let eve = RequestContext {
            user_id: "eve".to_owned(),
            project_id: Some("p1".to_owned()),
            roles: Vec::new(),
            system_scope: None,
            domain_id: None,
        };
        policy
            .current()
            .authorize(
                Action::ResourceProvidersList,
                &eve,
                &Target::of_caller(&eve),
            )
            .is_ok()
    }

    /// Makes the next `current()` look at the file.
    fn due(policy: &LivePolicy) {
        policy
            .file
            .as_ref()
            .unwrap()
            .next_check
            .store(0, Ordering::Relaxed);
    }

    #[test]
    fn reloads_keeps_last_good_and_survives_deletion() {
        let dir =
            std::env::temp_dir().join(format!("placement-live-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("policy.yaml");
        std::fs::write(&path, "\"placement:resource_providers:list\": \"!\"\n").unwrap();
        let policy = LivePolicy::load(true, true, Some(&path)).unwrap();
        assert!(!lists(&policy));

        std::fs::write(&path, "\"placement:resource_providers:list\": \"@\"\n").unwrap();
        due(&policy);
        assert!(lists(&policy));

        std::fs::write(
            &path,
            "\"placement:resource_providers:list\": \"role:x or\"\n",
        )
        .unwrap();
        due(&policy);
        assert!(lists(&policy), "an invalid file keeps the last good policy");

        std::fs::remove_file(&path).unwrap();
        due(&policy);
        assert!(lists(&policy), "a deleted file keeps the last good policy");

        std::fs::write(&path, "\"placement:resource_providers:list\": \"!\"\n").unwrap();
        due(&policy);
        assert!(!lists(&policy), "a file put back is loaded");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_file_no_watch() {
        let policy = LivePolicy::load(true, true, None).unwrap();
        assert!(policy.file.is_none());
        assert!(!lists(&policy));
    }
}
