//! An 802.11 medium — IEEE 802.11-2016 (DCF/EDCA, 10.3 and 10.22; PHYs, Clauses 15–18).
//!
//! Stations share one channel and contend for it with EDCA; the simulator jumps from one
//! transmission to the next (idle slots are counted analytically, never ticked). One concern
//! per module, as ns-3's `wifi/` splits them:
//!
//! - [`phy`]: slot, SIFS, DIFS/AIFS/EIFS, preamble and PPDU airtime for 11b, 11a, 11g, and
//!   11n/11ac (HT/VHT MCSs, one spatial stream, 20/40/80 MHz, long/short GI);
//! - [`fer`]: the frame error rate per PHY rate, SNR and length (a NIST-style bit-error
//!   model), and SNR schedules;
//! - [`rate_control`]: fixed, scripted and Minstrel-like rate adaptation;
//! - [`ampdu`]: A-MPDU aggregation limits and framing (block Ack in the medium);
//! - [`phy_options`]: the PHY-side keys of a `wifi:` spec (`bw`, `gi`, `snr`, `ra`,
//!   `ampdu`) applied to a station;
//! - [`edca`]: per-AC parameters and the backoff state of one EDCA function;
//! - [`channel`]: who transmits next, collisions, busy time;
//! - [`station`]: a transmitter's queues, EDCAFs and sequence numbers;
//! - [`medium`]: the event loop wiring them, and the per-attempt ground truth
//!   ([`medium::FrameRecord`]);
//! - [`wmm`]: DSCP → user priority → access category (RFC 8325);
//! - [`link`]: the medium as a link (`wifi:…`): AP, measured station, contenders and their
//!   load, driven packet by packet ([`link::WifiLink`]);
//! - [`bianchi`]: Bianchi's saturation model (JSAC 2000);
//! - [`saturation`]: N saturated stations simulated beside the model (`wisp wifi bianchi`).
//!
//! Everything random comes from the run's master seed ([`crate::seed`]): each station draws
//! from its own stream, so the same seed gives the same frames.
//!
//! ```
//! use wisp_sim::wifi::phy::{PhyRate, Standard};
//! use wisp_sim::wifi::saturation::{SaturationConfig, run};
//! let r = run(&SaturationConfig {
//!     standard: Standard::A,
//!     rate: PhyRate::from_mbps(54.0).unwrap(),
//!     stations: 10,
//!     bytes: 1500,
//!     duration: wisp_core::Duration::from_secs(2),
//!     seed: 1,
//!     frame_error_rate: 0.0,
//!     qos: false,
//!     ampdu: false,
//! })?;
//! assert!(r.simulated_mbps > 20.0);
//! # Ok::<(), wisp_sim::wifi::saturation::SaturationError>(())
//! ```
//!
//! Deviations (details in each module):
//! - RTS/CTS is not modelled.
//! - No propagation delay; one collision domain.

pub mod ampdu;
pub mod bianchi;
pub mod channel;
pub mod edca;
pub mod fer;
pub mod link;
pub mod medium;
pub mod phy;
pub mod phy_options;
pub mod rate_control;
pub mod saturation;
pub mod station;
pub mod wmm;
