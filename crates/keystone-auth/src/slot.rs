//! [`TokenSlot`]: the one token a client holds for its own calls (the
//! service's token, or a user's session token), renewed when due, with
//! one authentication for all the callers that find it due at once.

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};

use time::OffsetDateTime;

/// A token that knows when to get a new one.
pub(crate) trait Renewable {
    /// When the token is due for renewal.
    fn renew_at(&self) -> OffsetDateTime;
}

/// When a token that expires at `expires_at` is due for renewal:
/// `renew_before` ahead of its expiry, or half way through the life left
/// at `now` when that comes later (a short-lived token).
pub(crate) fn renew_at(
    now: OffsetDateTime,
    expires_at: OffsetDateTime,
    renew_before: std::time::Duration,
) -> OffsetDateTime {
    let half_life: time::Duration = (expires_at - now) / 2;
    let margin = time::Duration::try_from(renew_before).map_or(half_life, |m| m.min(half_life));
    expires_at - margin
}

/// Holds at most one token; see the module docs.
pub(crate) struct TokenSlot<T> {
    current: RwLock<Option<Arc<T>>>,
    /// Taken by the one caller that authenticates; the others wait on it
    /// and then take its token.
    renewing: tokio::sync::Mutex<()>,
}

impl<T: Renewable> TokenSlot<T> {
    pub(crate) fn new() -> Self {
        Self {
            current: RwLock::new(None),
            renewing: tokio::sync::Mutex::new(()),
        }
    }

    /// The token held if it is not due, else a new one from `renew`.
    pub(crate) async fn get_or_renew<E, F, Fut>(&self, renew: F) -> Result<Arc<T>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        if let Some(token) = self.fresh() {
            return Ok(token);
        }
        let _guard = self.renewing.lock().await;
        if let Some(token) = self.fresh() {
            return Ok(token);
        }
        let token = Arc::new(renew().await?);
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&token));
        Ok(token)
    }

    /// Forgets `used` (Keystone or a service refused it), so that the next
    /// call authenticates again; a newer token someone else got is kept.
    pub(crate) fn forget(&self, used: &Arc<T>) {
        let mut slot = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|held| Arc::ptr_eq(held, used)) {
            *slot = None;
        }
    }

    fn fresh(&self) -> Option<Arc<T>> {
        let slot = self.current.read().unwrap_or_else(PoisonError::into_inner);
        let token = slot.as_ref()?;
        (OffsetDateTime::now_utc() < token.renew_at()).then(|| Arc::clone(token))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    struct Token(OffsetDateTime);

    impl Renewable for Token {
        fn renew_at(&self) -> OffsetDateTime {
            self.0
        }
    }

    #[tokio::test]
    async fn one_renewal_for_concurrent_callers_and_again_when_due_or_forgotten() {
        let slot = Arc::new(TokenSlot::<Token>::new());
        let renewals = Arc::new(AtomicUsize::new(0));
        let later = OffsetDateTime::now_utc() + time::Duration::hours(1);
        let get = |slot: Arc<TokenSlot<Token>>, renewals: Arc<AtomicUsize>, at| async move {
            slot.get_or_renew(|| async {
                renewals.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                Ok::<_, ()>(Token(at))
            })
            .await
            .unwrap()
        };
        let tasks: Vec<_> = (0..10)
            .map(|_| tokio::spawn(get(Arc::clone(&slot), Arc::clone(&renewals), later)))
            .collect();
        let mut tokens = Vec::new();
        for task in tasks {
            tokens.push(task.await.unwrap());
        }
        assert_eq!(renewals.load(Ordering::SeqCst), 1);
        assert!(tokens.iter().all(|t| Arc::ptr_eq(t, &tokens[0])));
        // Forgetting an older token keeps the held one.
        slot.forget(&Arc::new(Token(later)));
        get(Arc::clone(&slot), Arc::clone(&renewals), later).await;
        assert_eq!(renewals.load(Ordering::SeqCst), 1);
        slot.forget(&tokens[0]);
        let past = OffsetDateTime::now_utc() - time::Duration::seconds(1);
        get(Arc::clone(&slot), Arc::clone(&renewals), past).await;
        assert_eq!(renewals.load(Ordering::SeqCst), 2);
        // Due at once: the next caller renews again.
        get(Arc::clone(&slot), Arc::clone(&renewals), later).await;
        assert_eq!(renewals.load(Ordering::SeqCst), 3);
    }
}
