//! wisp-sim
