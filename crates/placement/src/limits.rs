//! The bounds on a request that no setting changes: the query string's
//! are checked by middleware before any handler parses it, the request
//! groups by the allocation candidates handler.

/// The longest query string a request may carry, in bytes as sent
/// (percent-encoded): 32 KiB. Apache's and nginx's default limits on a
/// whole request line are 8 KiB, so no client of a Placement deployed
/// behind either ever sent more; Nova's largest requests (many request
/// groups, `member_of=in:` lists of aggregates) stay within a few KiB.
/// Half of the 64 KiB URI that the HTTP server (hyper) takes at all: a
/// longer query string is answered 414 with an errors body, up to that
/// cap, and past it by the HTTP server with an empty 414.
pub const MAX_QUERY_STRING_BYTES: usize = 32 * 1024;

/// The most parameters (`name=value` pairs, blank ones not counted) a
/// query string may carry: 1,000, against 14 at most in upstream's own
/// tests and about four per request group in Nova's requests.
pub const MAX_QUERY_PARAMS: usize = 1_000;

/// The most request groups of one `GET /allocation_candidates`: the
/// unsuffixed group and one per suffix of `resources`, `required`,
/// `member_of` and `in_tree`. Each group costs a read of every provider
/// with room for each of its classes, and multiplies the combinations;
/// Nova asks one per flavor group, port resource request, PCI device and
/// accelerator, dozens at the very most.
pub const MAX_REQUEST_GROUPS: usize = 128;
