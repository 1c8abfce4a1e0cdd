//! Estimators shared by the delay-based controllers.
//!
//! * [`kalman`]: a small linear Kalman filter (`N` states, scalar measurements, random-walk state
//!   model) — the machinery under GCC's arrival-time filters, reusable by other schemes.
//! * [`arrival`]: GCC's arrival-time filters, which turn the one-way delay variation between
//!   groups of packets into an estimate of the queuing-delay variation *m*: libwebrtc's
//!   two-state over-use estimator and the IETF draft's scalar filter (both built on
//!   [`kalman::Kalman`]), and libwebrtc's trendline estimator ([`trendline`]).
//! * [`overuse`]: the adaptive threshold γ and the over-use detector that compares *m* with it.
//! * [`rate`]: a windowed rate counter (the receiving rate *R* of GCC).
//!
//! Everything here is pure arithmetic on values the caller passes in, with explicit times; no
//! allocation after construction.

pub mod arrival;
pub mod kalman;
pub mod overuse;
pub mod rate;
pub mod trendline;
