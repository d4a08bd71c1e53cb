//! Large answers (the provider list, allocation candidates) written as a
//! list of pieces of about [`PIECE`] bytes instead of one growing buffer.
//!
//! A growing `Vec` doubles: a 741 KB provider list of 1,000 providers held
//! a 1 MiB buffer until it was sent, and while growing it the 512 KiB one
//! it copied from. With several lists written at once that was most of the
//! service's peak memory. Pieces hold what was written and at most one
//! partly filled piece more; the body is sent with its exact length
//! (`Content-Length`, as before), piece after piece.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

/// The size a piece is filled to before the next starts.
const PIECE: usize = 64 * 1024;

/// Room left in a piece for the next item (a provider, an allocation
/// request, a summary): an item larger than this grows its piece.
const ROOM: usize = 8 * 1024;

/// An answer being written: append to [`Pieces::buf`], call
/// [`Pieces::item_done`] between items.
#[derive(Debug)]
pub(crate) struct Pieces {
    done: VecDeque<Bytes>,
    current: Vec<u8>,
}

impl Pieces {
    /// An empty answer.
    pub(crate) fn new() -> Self {
        Pieces {
            done: VecDeque::new(),
            current: Vec::with_capacity(PIECE),
        }
    }

    /// The piece being written.
    pub(crate) fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.current
    }

    /// Starts a new piece when the current one has no room for another
    /// item, so that no piece's buffer grows.
    pub(crate) fn item_done(&mut self) {
        if self.current.capacity() - self.current.len() < ROOM {
            let full = std::mem::replace(&mut self.current, Vec::with_capacity(PIECE));
            self.done.push_back(Bytes::from(full));
        }
    }

    /// `items` written one after another, separated by commas, each by
    /// `write` into the piece being written; `None` as soon as `write`
    /// gives up.
    pub(crate) fn joined<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut write: impl FnMut(&mut Vec<u8>, T) -> Option<()>,
    ) -> Option<()> {
        for (n, item) in items.into_iter().enumerate() {
            if n > 0 {
                self.current.push(b',');
            }
            write(&mut self.current, item)?;
            self.item_done();
        }
        Some(())
    }

    /// The answer as written so far, in one buffer.
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        let mut all: Vec<u8> = self.done.iter().flat_map(|p| p.iter().copied()).collect();
        all.extend_from_slice(&self.current);
        all
    }

    /// The answer as a response body of its exact length.
    pub(crate) fn into_body(mut self) -> axum::body::Body {
        if !self.current.is_empty() {
            let last = std::mem::take(&mut self.current);
            self.done.push_back(Bytes::from(last));
        }
        let remaining = self.done.iter().map(|piece| piece.len() as u64).sum();
        axum::body::Body::new(PiecesBody {
            pieces: self.done,
            remaining,
        })
    }
}

/// An answer written in one buffer (by `serde_json`), as one piece.
impl From<Vec<u8>> for Pieces {
    fn from(written: Vec<u8>) -> Self {
        Pieces {
            done: VecDeque::new(),
            current: written,
        }
    }
}

/// A body sent piece after piece, its length known in advance.
struct PiecesBody {
    pieces: VecDeque<Bytes>,
    remaining: u64,
}

impl http_body::Body for PiecesBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.pieces.pop_front();
        if let Some(piece) = &next {
            self.remaining -= piece.len() as u64;
        }
        Poll::Ready(next.map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use http_body::Body as _;
    use http_body_util::BodyExt as _;

    use super::*;

    #[tokio::test]
    async fn the_body_is_every_item_in_order_with_its_exact_length() {
        let mut pieces = Pieces::new();
        let mut expected = Vec::new();
        for n in 0..20_000 {
            let item = format!("{{\"n\":{n},\"pad\":\"{}\"}},", "x".repeat(n % 300));
            pieces.buf().extend_from_slice(item.as_bytes());
            pieces.item_done();
            expected.extend_from_slice(item.as_bytes());
        }
        assert!(
            pieces.done.len() > 10,
            "a large answer is in several pieces"
        );
        assert!(
            pieces.done.iter().all(|p| p.len() <= PIECE),
            "no piece grew past its buffer"
        );
        let body = pieces.into_body();
        assert_eq!(body.size_hint().exact(), Some(expected.len() as u64));
        let sent = body.collect().await.unwrap().to_bytes();
        assert_eq!(sent.as_ref(), expected.as_slice());
    }

    #[tokio::test]
    async fn an_empty_answer_is_an_empty_body_of_length_zero() {
        let body = Pieces::new().into_body();
        assert_eq!(body.size_hint().exact(), Some(0));
        assert!(body.is_end_stream());
        assert!(body.collect().await.unwrap().to_bytes().is_empty());
    }
}
