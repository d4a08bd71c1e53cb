//! [`TokenCache`]: validated tokens kept for `token_cache_time`.
//!
//! The key is the SHA-256 of the token, so the cache never holds a token
//! itself. Only successful validations are stored; a token Keystone
//! refused, or one it could not check, is asked about again next time.
//! The token's own expiry is checked on every hit, so a token never
//! outlives itself in the cache. The cache is bounded: a token counts one,
//! plus one per KiB of its catalog when validations ask for the catalog;
//! the least useful go first when it is full.
//!
//! A hit takes no global lock and makes no network call (the map is
//! `moka`'s concurrent cache). Concurrent requests with the same token not
//! yet cached wait on one validation instead of each sending their own.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::client::{KeystoneClient, is_plausible_token};
use crate::error::{ConfigError, Error};
use crate::model::Identity;

/// keystonemiddleware's default `token_cache_time`, in seconds.
pub const DEFAULT_TOKEN_CACHE_TIME: i64 = 300;

/// The default bound on cached tokens.
pub const DEFAULT_CACHE_CAPACITY: u64 = 10_000;

type Key = [u8; 32];

/// Validates tokens through a [`KeystoneClient`], remembering successes.
#[derive(Clone)]
pub struct TokenCache {
    client: KeystoneClient,
    cache: Option<moka::future::Cache<Key, Arc<Identity>>>,
    stats: Arc<Counters>,
}

/// Hits and misses since the cache was made.
#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
}

/// How a [`TokenCache`] has answered so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Tokens found in the cache (and not expired).
    pub hits: u64,
    /// Tokens not found, so validated by Keystone (with caching off,
    /// every token).
    pub misses: u64,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCache")
            .field("client", &self.client)
            .field("enabled", &self.cache.is_some())
            .field(
                "entries",
                &self.cache.as_ref().map(moka::future::Cache::entry_count),
            )
            .finish()
    }
}

impl TokenCache {
    /// A cache in front of `client`.
    ///
    /// `token_cache_time` is in seconds as in `[keystone_authtoken]`: -1
    /// (or 0) turns caching off, so every request is validated.
    /// `capacity` bounds the number of tokens held (a token with a catalog
    /// counts one more per KiB of catalog).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] for a `token_cache_time` below -1, or a capacity
    /// of 0 with caching on.
    pub fn new(
        client: KeystoneClient,
        token_cache_time: i64,
        capacity: u64,
    ) -> Result<Self, ConfigError> {
        let ttl = match token_cache_time {
            -1 | 0 => None,
            secs if secs > 0 => Some(Duration::from_secs(secs.unsigned_abs())),
            other => {
                return Err(ConfigError::new(
                    "token_cache_time",
                    format!("{other}: must be -1 (off) or a number of seconds"),
                ));
            }
        };
        let cache = match ttl {
            None => None,
            Some(_) if capacity == 0 => {
                return Err(ConfigError::new(
                    "token_cache_size",
                    "must be more than zero",
                ));
            }
            Some(ttl) => Some(
                moka::future::Cache::builder()
                    .max_capacity(capacity)
                    .weigher(|_key: &Key, identity: &Arc<Identity>| weight(identity))
                    .time_to_live(ttl)
                    .build(),
            ),
        };
        Ok(Self {
            client,
            cache,
            stats: Arc::default(),
        })
    }

    /// Hits and misses so far (shared by the clones of this cache).
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.stats.hits.load(Ordering::Relaxed),
            misses: self.stats.misses.load(Ordering::Relaxed),
        }
    }

    /// The client the cache asks.
    #[must_use]
    pub fn client(&self) -> &KeystoneClient {
        &self.client
    }

    /// The identity of `token`, from the cache or from Keystone.
    ///
    /// # Errors
    ///
    /// As [`KeystoneClient::validate`]; an expired cached token is
    /// [invalid](Error::is_invalid_token) and leaves the cache.
    pub async fn identity(&self, token: &str) -> Result<Arc<Identity>, Error> {
        // Checked before hashing too (validate checks it again for its
        // own callers): a 10 MB header is refused without being digested.
        if !is_plausible_token(token.as_bytes()) {
            return Err(Error::invalid_token());
        }
        let Some(cache) = &self.cache else {
            self.stats.misses.fetch_add(1, Ordering::Relaxed);
            return self.client.validate(token).await.map(Arc::new);
        };
        let key: Key = Sha256::digest(token.as_bytes()).into();
        // A hit is a plain lookup (`try_get_with` would first make the key
        // an `Arc` and the validation a future); concurrent misses of one
        // key share a single validation.
        let identity = match cache.get(&key).await {
            Some(identity) => {
                self.stats.hits.fetch_add(1, Ordering::Relaxed);
                identity
            }
            None => {
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                cache
                    .try_get_with(key, async {
                        self.client.validate(token).await.map(Arc::new)
                    })
                    .await
                    .map_err(|e| Error::clone(&e))?
            }
        };
        if identity.is_expired() {
            cache.invalidate(&key).await;
            return Err(Error::invalid_token());
        }
        Ok(identity)
    }

    /// Drops every cached token.
    pub fn clear(&self) {
        if let Some(cache) = &self.cache {
            cache.invalidate_all();
        }
    }
}

/// One for the token, plus one per KiB of catalog.
fn weight(identity: &Identity) -> u32 {
    let catalog: usize = identity
        .catalog
        .iter()
        .flatten()
        .map(|service| {
            let endpoints: usize = service
                .endpoints
                .iter()
                .map(|e| e.url.len() + e.id.len() + e.interface.len() + 64)
                .sum();
            service.service_type.len() + service.name.len() + service.id.len() + endpoints + 64
        })
        .sum();
    u32::try_from(1 + catalog / 1024).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> KeystoneClient {
        KeystoneClient::unreachable_for_tests()
    }

    #[test]
    fn cache_time_settings() {
        assert!(TokenCache::new(client(), -1, 10).unwrap().cache.is_none());
        assert!(TokenCache::new(client(), 0, 10).unwrap().cache.is_none());
        assert!(TokenCache::new(client(), 300, 10).unwrap().cache.is_some());
        assert_eq!(
            TokenCache::new(client(), -2, 10).unwrap_err().setting(),
            "token_cache_time"
        );
        assert!(TokenCache::new(client(), 300, 0).is_err());
        assert!(TokenCache::new(client(), -1, 0).is_ok());
    }

    #[test]
    fn catalog_adds_weight() {
        let body = |catalog: &str| {
            format!(
                r#"{{"user": {{"id": "u", "name": "n", "domain": {{"id": "d", "name": "D"}}}},
                    "expires_at": "2036-01-01T00:00:00Z", "catalog": [{catalog}]}}"#
            )
        };
        let identity = |catalog: &str| {
            let token: crate::model::Token = serde_json::from_str(&body(catalog)).unwrap();
            Identity::try_from(token).unwrap()
        };
        assert_eq!(weight(&identity("")), 1);
        let endpoint = format!(
            r#"{{"interface": "public", "url": "http://{}/"}}"#,
            "h".repeat(1000)
        );
        let endpoints = vec![endpoint; 10].join(",");
        let service = format!(r#"{{"type": "compute", "endpoints": [{endpoints}]}}"#);
        // One for the token and ten for about 10.6 KiB of endpoints.
        assert_eq!(weight(&identity(&service)), 11);
    }

    #[tokio::test]
    async fn lookups_count_as_misses_until_cached() {
        for cache_time in [300, -1] {
            let cache = TokenCache::new(client(), cache_time, 10).unwrap();
            // Keystone cannot be reached: a miss each time, nothing cached.
            assert!(cache.identity("gAAAAAtoken").await.is_err());
            assert!(cache.identity("gAAAAAtoken").await.is_err());
            assert_eq!(cache.stats(), CacheStats { hits: 0, misses: 2 });
            // Refused before any lookup: neither.
            assert!(cache.identity("").await.is_err());
            assert_eq!(cache.clone().stats().misses, 2);
        }
    }

    #[tokio::test]
    async fn implausible_tokens_are_refused_without_a_call() {
        let cache = TokenCache::new(client(), 300, 10).unwrap();
        let huge = "a".repeat(10 * 1024 * 1024);
        for token in ["", "a\u{1}b", huge.as_str()] {
            let e = cache.identity(token).await.unwrap_err();
            assert!(e.is_invalid_token());
        }
    }
}
