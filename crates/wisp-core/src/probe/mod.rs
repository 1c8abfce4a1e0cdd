//! Bandwidth probing tools as sans-IO state machines: each hands out the probes to send and
//! turns their arrival times into an estimate.
//!
//! * [`wbest`]: WBest (Li, Claypool, Kinicki 2008) and WBest+'s burst form.

pub mod wbest;
