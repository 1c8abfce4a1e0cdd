//! The native half of `wisp.gym.RateControlEnv`: bindings of wisp-sim's monitor-interval
//! environment ([`wisp_sim::interval::Env`], which holds the scheme, its statistics, the reward
//! and the stepping). The Python half draws each episode's link and seed from Gymnasium's
//! generator and shapes the results as Gymnasium wants them.
//!
//! A step waits for the simulation with the GIL released. Errors: a call out of order (`step`
//! before `reset`, or past the episode's end) is a `RuntimeError`, anything else a `ValueError`
//! with wisp-sim's message.

use crate::value_error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use wisp_sim::interval::{Env, EnvConfig, EnvError, RewardWeights};
use wisp_sim::link::LinkSpec;

/// The number of fields of an observation.
type Obs = [f64; 7];

fn env_error(e: EnvError) -> PyErr {
    if e.is_state() {
        PyRuntimeError::new_err(e.to_string())
    } else {
        value_error(e)
    }
}

/// `wisp._wisp.RateControl`: one environment, its links loaded once for all its episodes.
#[pyclass(module = "wisp._wisp", name = "RateControl")]
#[derive(Debug)]
pub struct PyRateControl {
    env: Env,
    names: Vec<String>,
}

#[pymethods]
impl PyRateControl {
    /// Loads the links (specs as on the command line) and checks the configuration.
    #[new]
    #[pyo3(signature = (links, monitor_interval_ms=50.0, episode_s=10.0, reward=vec![10.0, 1000.0, 2000.0], action="rate", min_kbps=50.0, max_kbps=20000.0, start_kbps=1000.0, delay_ms=20.0, queue=None, loss=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        links: Vec<String>,
        monitor_interval_ms: f64,
        episode_s: f64,
        reward: Vec<f64>,
        action: &str,
        min_kbps: f64,
        max_kbps: f64,
        start_kbps: f64,
        delay_ms: f64,
        queue: Option<&str>,
        loss: Option<&str>,
    ) -> PyResult<Self> {
        if links.is_empty() {
            return Err(env_error(EnvError::NoLinks));
        }
        let models = links
            .iter()
            .map(|s| {
                let spec: LinkSpec = s.parse().map_err(value_error)?;
                spec.load().map_err(value_error)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let names = models.iter().map(|m| m.name().to_string()).collect();
        let &[throughput, latency, loss_weight] = reward.as_slice() else {
            return Err(value_error(
                "reward: three weights (throughput, latency, loss)",
            ));
        };
        if !(monitor_interval_ms.is_finite() && monitor_interval_ms >= 1.0) {
            return Err(env_error(EnvError::Interval));
        }
        let mut config = EnvConfig::new(models);
        config.action = action.parse().map_err(env_error)?;
        config.interval = wisp_core::Duration::from_millis_f64(monitor_interval_ms);
        config.options = crate::run_options(delay_ms, queue, loss, None, None, 0.0, 0.0)?;
        config.start_kbps = start_kbps;
        config.min_kbps = min_kbps;
        config.max_kbps = max_kbps;
        config.reward = RewardWeights {
            throughput,
            latency,
            loss: loss_weight,
        };
        let config = config.episode_s(episode_s).map_err(env_error)?;
        Ok(PyRateControl {
            env: Env::new(config).map_err(env_error)?,
            names,
        })
    }

    /// Steps per episode.
    #[getter]
    fn steps(&self) -> u32 {
        self.env.config().steps
    }

    /// The links' names, in the order given.
    #[getter]
    fn link_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Starts an episode on link number `link` with simulation seed `seed`; returns the first
    /// MI's observation: `(send_kbps, recv_kbps, rtt_ms, rtt_ratio, delay_gradient, loss_rate,
    /// rate_kbps)`.
    fn reset(&mut self, py: Python<'_>, link: usize, seed: u64) -> PyResult<Obs> {
        let env = &mut self.env;
        py.allow_threads(move || env.reset_on(link, seed))
            .map(|o| o.to_array())
            .map_err(env_error)
    }

    /// Runs one MI at the rate `action` asks for; returns `(observation, reward, done)`.
    fn step(&mut self, py: Python<'_>, action: f64) -> PyResult<(Obs, f64, bool)> {
        let env = &mut self.env;
        py.allow_threads(move || env.step(action))
            .map(|s| (s.observation.to_array(), s.reward, s.done))
            .map_err(env_error)
    }

    /// Ends the current episode and waits for its simulation to end.
    fn close(&mut self, py: Python<'_>) {
        let env = &mut self.env;
        py.allow_threads(move || env.close());
    }
}
