//! The run's master seed and the random streams derived from it.
//!
//! One master seed drives a run. It comes from `--seed`, else the `WISP_SEED` environment
//! variable, else [`DEFAULT_SEED`], and is logged so any run can be replayed. Each component
//! (a link's loss process, a flow's traffic model, …) draws from its own ChaCha8 stream derived
//! from the master seed and a stable label, so adding a component does not change the others.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The environment variable that replays a run's seed.
pub const SEED_ENV: &str = "WISP_SEED";

/// The seed used when none is given.
pub const DEFAULT_SEED: u64 = 1;

/// Where a run's seed came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedSource {
    Option,
    Env,
    Default,
}

/// Why `WISP_SEED` could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {SEED_ENV}=`{0}` is not a non-negative integer")]
pub struct SeedEnvError(pub String);

/// Picks the seed: the option, else `WISP_SEED`, else the default.
pub fn resolve_seed(option: Option<u64>) -> Result<(u64, SeedSource), SeedEnvError> {
    if let Some(s) = option {
        return Ok((s, SeedSource::Option));
    }
    match std::env::var(SEED_ENV) {
        Ok(v) => v
            .trim()
            .parse()
            .map(|s| (s, SeedSource::Env))
            .map_err(|_| SeedEnvError(v)),
        Err(_) => Ok((DEFAULT_SEED, SeedSource::Default)),
    }
}

/// A random stream for the component `label` (e.g. `"loss/forward"`, `"flow/0"`).
pub fn stream(master: u64, label: &str) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix(master, label))
}

/// The seed of the component `label`: the master seed mixed with the label.
pub fn mix(master: u64, label: &str) -> u64 {
    // FNV-1a of the label, mixed with the seed by SplitMix64's finaliser.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    splitmix64(master ^ h)
}

/// SplitMix64's finaliser: a well-mixed 64-bit value of `z`.
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_are_stable_and_distinct() {
        let a: u64 = stream(1, "loss/forward").random();
        let b: u64 = stream(1, "loss/forward").random();
        let c: u64 = stream(1, "loss/reverse").random();
        let d: u64 = stream(2, "loss/forward").random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
