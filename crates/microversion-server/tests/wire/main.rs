//! docs/wire.md over a real loopback server, in every profile.
//!
//! - `negotiation`: the request side, rules 1-8;
//! - `responses`: the response side, rules 9-11, and which profiles
//!   version `GET /`;
//! - `routing`: versioned behaviour, rules 14-17, and the router's 404 and
//!   405;
//! - `placement_gabbi`: upstream Placement's microversion gabbi tests;
//! - `legacy`: a legacy root (Nova's `/v2`), served unversioned.
//!
//! Rules 12, 13 (discovery documents) and 18 (version history) belong to
//! modules not tested here.

mod legacy;
mod negotiation;
mod placement_gabbi;
mod responses;
mod routing;
mod support;
