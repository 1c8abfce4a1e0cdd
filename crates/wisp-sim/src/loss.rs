//! Random loss at the entrance of a link: Bernoulli and Gilbert-Elliott.
//!
//! `--loss P` is Bernoulli loss with probability P in [0, 1). `--loss ge:p=…,r=…[,bad=1,good=0]`
//! is the two-state Gilbert-Elliott model: each packet first moves the chain (good→bad with
//! probability `p`, bad→good with `r`), then is lost with probability `bad` in the bad state and
//! `good` in the good state (defaults: always lost when bad, never when good, which is Gilbert's
//! original model). The mean loss is `(r·good + p·bad)/(p + r)`.

use rand::{Rng, RngExt};
use std::str::FromStr;
use wisp_core::spec::{ItemError, key_values};

/// A loss model as named by `--loss`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum LossSpec {
    #[default]
    None,
    Bernoulli(f64),
    GilbertElliott {
        p: f64,
        r: f64,
        good: f64,
        bad: f64,
    },
}

/// A bad `--loss` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid loss `{spec}`: {message}")]
pub struct LossSpecError {
    pub spec: String,
    pub message: String,
}

impl FromStr for LossSpec {
    type Err = LossSpecError;
    fn from_str(s: &str) -> Result<Self, LossSpecError> {
        let err = |m: &str| LossSpecError {
            spec: s.to_string(),
            message: m.to_string(),
        };
        let s = s.trim();
        if let Some(args) = s.strip_prefix("ge:").or_else(|| s.strip_prefix("gilbert:")) {
            let (mut p, mut r, mut good, mut bad) = (None, None, 0.0, 1.0);
            let items = key_values(args).map_err(|e| match e {
                ItemError::NotKeyValue(_) => err("expected KEY=VALUE items (p, r, good, bad)"),
                ItemError::GivenTwice(k) => err(&format!("`{k}` given twice")),
            })?;
            for (k, v) in items {
                let v: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| err("values must be probabilities in [0, 1]"))?;
                if !(0.0..=1.0).contains(&v) {
                    return Err(err("values must be probabilities in [0, 1]"));
                }
                match k.trim() {
                    "p" => p = Some(v),
                    "r" => r = Some(v),
                    "good" => good = v,
                    "bad" => bad = v,
                    _ => return Err(err("unknown parameter (accepted: p, r, good, bad)")),
                }
            }
            let (Some(p), Some(r)) = (p, r) else {
                return Err(err("`p` and `r` are required"));
            };
            if p + r == 0.0 {
                return Err(err("`p` and `r` cannot both be 0"));
            }
            let spec = LossSpec::GilbertElliott { p, r, good, bad };
            if spec.mean() >= 1.0 {
                return Err(err("the mean loss must be below 1"));
            }
            return Ok(spec);
        }
        let v: f64 = s
            .parse()
            .map_err(|_| err("expected a probability in [0, 1) or ge:p=…,r=…"))?;
        if !(0.0..1.0).contains(&v) {
            return Err(err("the loss probability must be in [0, 1)"));
        }
        Ok(if v == 0.0 {
            LossSpec::None
        } else {
            LossSpec::Bernoulli(v)
        })
    }
}

impl LossSpec {
    /// The long-run loss probability.
    pub fn mean(&self) -> f64 {
        match *self {
            LossSpec::None => 0.0,
            LossSpec::Bernoulli(p) => p,
            LossSpec::GilbertElliott { p, r, good, bad } => (r * good + p * bad) / (p + r),
        }
    }
}

impl std::fmt::Display for LossSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            LossSpec::None => f.write_str("0"),
            LossSpec::Bernoulli(p) => write!(f, "{p}"),
            LossSpec::GilbertElliott { p, r, good, bad } => {
                write!(f, "ge:p={p},r={r},good={good},bad={bad}")
            }
        }
    }
}

/// A loss process: a spec plus its state.
#[derive(Clone, Debug, Default)]
pub struct LossModel {
    spec: LossSpec,
    bad: bool,
}

impl LossModel {
    pub fn new(spec: LossSpec) -> Self {
        LossModel { spec, bad: false }
    }

    /// Whether the next packet is lost.
    pub fn lose(&mut self, rng: &mut impl Rng) -> bool {
        match self.spec {
            LossSpec::None => false,
            LossSpec::Bernoulli(p) => rng.random::<f64>() < p,
            LossSpec::GilbertElliott { p, r, good, bad } => {
                let u: f64 = rng.random();
                self.bad = if self.bad { u >= r } else { u < p };
                let q = if self.bad { bad } else { good };
                q > 0.0 && rng.random::<f64>() < q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rate(spec: &str) -> f64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut m = LossModel::new(spec.parse().unwrap());
        (0..200_000).filter(|_| m.lose(&mut rng)).count() as f64 / 200_000.0
    }

    #[test]
    fn mean_rates() {
        assert_eq!(rate("0"), 0.0);
        assert!((rate("0.05") - 0.05).abs() < 0.003);
        let ge: LossSpec = "ge:p=0.01,r=0.2".parse().unwrap();
        assert!(
            (rate("ge:p=0.01,r=0.2") - ge.mean()).abs() < 0.005,
            "{}",
            ge.mean()
        );
    }

    #[test]
    fn bad_specs() {
        for bad in [
            "1",
            "1.5",
            "-0.1",
            "x",
            "ge:p=0.1",
            "ge:p=2,r=0.1",
            "ge:p=0.1,r=0.1,q=3",
            "ge:p=0,r=0",
            "ge:p=0.1,r=0.5,p=0.2",
        ] {
            assert!(bad.parse::<LossSpec>().is_err(), "{bad}");
        }
    }
}
