//! The options of a simulated run besides its links and schemes, as `wisp run`, `wisp bench` and
//! the Python package take them, and the scenario they build.

use crate::link::LinkModel;
use crate::loss::LossSpec;
use crate::queue::QueueSpec;
use crate::sim::{
    FlowSpec, Hop, Network, RoutedFlow, RunSettings, Scenario, WifiMedium, WiredLink,
};
use crate::wifi::link::{AP, STATION, WifiSpec};
use wisp_core::Duration;

/// The longest run, start or stop a run or a scenario file may name (one day).
pub const MAX_DURATION: Duration = Duration::from_secs(86_400);

/// The longest delay a link may have.
pub const MAX_DELAY: Duration = Duration::from_secs(60);

/// Delay, queue, loss and timing of a run (the command line's `--delay-ms`, `--queue`, `--loss`,
/// `--reverse-loss`, `--duration-s`, `--warmup-s`, `--timer-jitter-us`).
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// One-way propagation delay in each direction.
    pub delay: Duration,
    pub queue: QueueSpec,
    pub loss: LossSpec,
    pub reverse_loss: LossSpec,
    /// `None`: the link's default (one period of a trace; 60 s for a constant link).
    pub duration: Option<Duration>,
    pub warmup: Duration,
    pub timer_jitter: Duration,
}

impl Default for RunOptions {
    /// The command line's defaults: 20 ms each way, an infinite queue, no loss, the link's
    /// default duration, no warm-up, no timer jitter.
    fn default() -> Self {
        RunOptions {
            delay: Duration::from_millis(20),
            queue: QueueSpec::Infinite,
            loss: LossSpec::None,
            reverse_loss: LossSpec::None,
            duration: None,
            warmup: Duration::ZERO,
            timer_jitter: Duration::ZERO,
        }
    }
}

impl RunOptions {
    /// Checks the warm-up against the run's length on `link`, before anything runs. The message
    /// names the command line's option.
    pub fn check_window(&self, link: &LinkModel) -> Result<(), String> {
        let duration = self.duration.unwrap_or_else(|| link.default_duration());
        // The run's length defaults to the trace's period: bounded as --duration-s is (a
        // trace whose last line says 1e12 ms would run until memory ran out).
        let max = MAX_DURATION;
        if self.duration.is_none() && duration > max {
            return Err(format!(
                "{} lasts {} s, longer than a run may ({} s): give --duration-s",
                link.name(),
                duration.as_secs_f64(),
                max.as_secs_f64()
            ));
        }
        if self.warmup >= duration {
            return Err(format!(
                "--warmup-s ({} s) must be shorter than the run on {} ({} s)",
                self.warmup.as_secs_f64(),
                link.name(),
                duration.as_secs_f64()
            ));
        }
        Ok(())
    }

    /// The scenario of `flows` over `forward` (and `reverse`, `None` for the propagation delay
    /// only) with these options and `seed`.
    ///
    /// # Panics
    /// If `flows` is empty.
    pub fn scenario(
        &self,
        forward: LinkModel,
        reverse: Option<LinkModel>,
        flows: Vec<FlowSpec>,
        seed: u64,
    ) -> Scenario {
        let mut s = Scenario::new(forward, flows[0].scheme.clone());
        s.flows = flows;
        s.reverse = reverse;
        s.delay = self.delay;
        s.queue = self.queue;
        s.loss = self.loss;
        s.reverse_loss = self.reverse_loss;
        if let Some(d) = self.duration {
            s.run.duration = d;
        }
        s.run.warmup = self.warmup;
        s.run.seed = seed;
        s.run.timer_jitter = self.timer_jitter;
        s
    }
}

impl RunOptions {
    /// The network of `wisp run --link wifi:SPEC`: each flow's data crosses the wire (`--loss`,
    /// then the delay) to the AP, then the medium from the AP to station 1; its feedback
    /// crosses the medium from station 1 to the AP, then the wire back (`--reverse-loss`, the
    /// delay). The medium's queues are its own (the spec's `queue`): `queue` does not apply.
    /// Without a duration, 60 s. Flows carry DSCP 0 (AC_BE). A `kwikr` flow's station runs
    /// Ping-Pair to the AP every 500 ms ([`crate::pingpair`]), which feeds its receiver T_c.
    pub fn wifi_network(&self, spec: &WifiSpec, flows: Vec<FlowSpec>, seed: u64) -> Network {
        let wire = |label: &str, loss| WiredLink {
            label: label.into(),
            model: None,
            queue: QueueSpec::Infinite,
            delay: self.delay,
            loss,
        };
        let (down, up) = (
            Hop::Wifi {
                medium: 0,
                from: AP,
                to: STATION,
            },
            Hop::Wifi {
                medium: 0,
                from: STATION,
                to: AP,
            },
        );
        Network {
            links: vec![
                wire("forward", self.loss),
                wire("reverse", self.reverse_loss),
            ],
            media: vec![WifiMedium {
                label: "wifi".into(),
                spec: spec.clone(),
                extra_stations: 0,
            }],
            flows: flows
                .into_iter()
                .map(|spec| {
                    let data = vec![Hop::Link(0), down];
                    RoutedFlow {
                        pingpair: crate::pingpair::default_for(&spec.scheme, &data),
                        spec,
                        dscp: 0,
                        data,
                        feedback: vec![up, Hop::Link(1)],
                        reference: None,
                    }
                })
                .collect(),
            run: RunSettings {
                warmup: self.warmup,
                seed,
                timer_jitter: self.timer_jitter,
                ..RunSettings::new(self.duration.unwrap_or(Duration::from_secs(60)))
            },
        }
    }
}
