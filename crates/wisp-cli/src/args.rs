//! Options shared by the commands that simulate, and their parsers.

use clap::Args;
use std::path::Path;
use wisp_core::Duration;
use wisp_sim::link::LinkSpec;
use wisp_sim::loss::LossSpec;
use wisp_sim::queue::QueueSpec;

/// The link a trace file names (`--trace FILE`), in the unit its name implies.
pub fn trace_link(path: &Path) -> LinkSpec {
    LinkSpec::trace_file(path)
}

/// A link option's help: `before`, the link kinds of wisp_sim's registry
/// ([`wisp_sim::link::help`]), `after`.
pub fn link_help([before, after]: [&str; 2]) -> String {
    format!("{before}{}{after}", wisp_sim::link::help())
}

/// The link of `--trace FILE` or `--link SPEC` (the commands let at most one through); `None`
/// with neither.
pub fn chosen_link(trace: Option<&Path>, link: Option<&LinkSpec>) -> Option<LinkSpec> {
    trace.map(trace_link).or_else(|| link.cloned())
}

/// Link, queue, loss and timing options of a simulation.
#[derive(Args, Debug, Clone)]
pub struct SimOptions {
    /// One-way propagation delay in each direction, in ms (at most 60000), applied before the
    /// bottleneck queue (Cellsim used 20).
    #[arg(long, value_name = "MS", default_value = "20", value_parser = sim_delay_ms, allow_hyphen_values = true)]
    pub delay_ms: Duration,

    /// Bottleneck queue: infinite, droptail:packets=N[,bytes=B], drophead:…,
    /// codel[:target=5ms,interval=100ms,ecn=on], pie[:target=15ms,…,ecn=on],
    /// step:threshold=1ms (L4S step marker), dualpi2[:…] (RFC 9332).
    #[arg(long, value_name = "SPEC", default_value = "infinite")]
    pub queue: QueueSpec,

    /// Random loss at the bottleneck's entrance: a probability in [0, 1), or
    /// ge:p=P,r=R[,good=G,bad=B] for Gilbert-Elliott.
    #[arg(
        long,
        value_name = "P",
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub loss: LossSpec,

    /// Random loss of feedback messages on the reverse path (same forms as --loss). The Sprout
    /// paper's loss runs (§6.5) drop in both directions: --loss P --reverse-loss P.
    #[arg(
        long,
        value_name = "P",
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub reverse_loss: LossSpec,

    /// Simulated seconds, at most 86400 (default: one period of the trace; 60 s for a constant
    /// link).
    #[arg(long, value_name = "S", value_parser = sim_secs, allow_hyphen_values = true)]
    pub duration_s: Option<Duration>,

    /// Seconds at the start that metrics ignore.
    #[arg(long, value_name = "S", default_value = "0", value_parser = sim_warmup_secs, allow_hyphen_values = true)]
    pub warmup_s: Duration,

    /// Master seed (default: $WISP_SEED, else 1). The seed is logged on stderr.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Wake each sender late by a random 0 to N µs, as a real host's timers are (default 0:
    /// exactly on time). `wisp send --json` reports the lateness its own timers had
    /// (`pacing_late_p50_us`): twice that gives the same median here.
    #[arg(long, value_name = "US", default_value = "0", value_parser = non_negative_us, allow_hyphen_values = true)]
    pub timer_jitter_us: Duration,
}

fn number(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() {
        return Err(format!("`{s}` is not a finite number"));
    }
    Ok(v)
}

/// The longest time an option of the real-network tools takes (about 31 years). Longer ones
/// would not fit the nanosecond clock once added to an instant: a sender's end or a packet's
/// due time would wrap around to the past (`wisp send --duration-s 1e300` sent nothing; `wisp
/// link --delay-ms 1e300` delayed nothing).
const MAX_TIME: Duration = Duration::from_secs(1_000_000_000);

pub fn positive_secs(s: &str) -> Result<Duration, String> {
    bounded(s, "s", true, MAX_TIME)
}

pub fn non_negative_secs(s: &str) -> Result<Duration, String> {
    bounded(s, "s", false, MAX_TIME)
}

pub fn non_negative_ms(s: &str) -> Result<Duration, String> {
    bounded(s, "ms", false, MAX_TIME)
}

/// A non-negative time in µs, at most one second.
pub fn non_negative_us(s: &str) -> Result<Duration, String> {
    let v = number(s)?;
    if !(0.0..=1e6).contains(&v) {
        return Err("must be 0 to 1000000 µs".into());
    }
    Ok(Duration::from_nanos((v * 1e3).round() as u64))
}

/// `s` in `unit`s (`s` or `ms`), non-negative (positive if `positive`) and at most `max`: the
/// bound is checked on the number given, so the message states it.
fn bounded(s: &str, unit: &str, positive: bool, max: Duration) -> Result<Duration, String> {
    let v = number(s)?;
    let ms = unit == "ms";
    let max_v = if ms {
        max.as_millis_f64()
    } else {
        max.as_secs_f64()
    };
    if v > max_v {
        return Err(format!("must be at most {max_v} {unit}"));
    }
    if v < 0.0 || (positive && v == 0.0) {
        return Err(if positive {
            "must be positive"
        } else {
            "must not be negative"
        }
        .into());
    }
    let d = if ms {
        Duration::from_millis_f64(v)
    } else {
        Duration::from_secs_f64(v)
    };
    if positive && d.is_zero() {
        return Err("must be at least 1 ns".into());
    }
    Ok(d)
}

/// A simulated run's length in s: positive and at most a day, as a scenario file's `duration`
/// (longer runs only grow the packet log until memory runs out).
pub fn sim_secs(s: &str) -> Result<Duration, String> {
    bounded(s, "s", true, wisp_sim::scenario_file::MAX_DURATION)
}

/// A simulated warm-up in s: non-negative and at most a day.
pub fn sim_warmup_secs(s: &str) -> Result<Duration, String> {
    bounded(s, "s", false, wisp_sim::scenario_file::MAX_DURATION)
}

/// A simulated time in ms (an offset into a trace): non-negative and at most a day.
pub fn sim_offset_ms(s: &str) -> Result<Duration, String> {
    bounded(s, "ms", false, wisp_sim::scenario_file::MAX_DURATION)
}

/// A simulated one-way propagation delay in ms: non-negative and at most 60 s, as a scenario
/// file's link `delay`.
pub fn sim_delay_ms(s: &str) -> Result<Duration, String> {
    bounded(s, "ms", false, wisp_sim::scenario_file::MAX_DELAY)
}

/// `wisp wifi bianchi --duration-s`: positive, at most 100000 s.
pub fn bianchi_secs(s: &str) -> Result<Duration, String> {
    bounded(s, "s", true, Duration::from_secs(100_000))
}

impl SimOptions {
    /// The options as the simulator takes them.
    pub fn run_options(&self) -> wisp_sim::options::RunOptions {
        wisp_sim::options::RunOptions {
            delay: self.delay_ms,
            queue: self.queue,
            loss: self.loss,
            reverse_loss: self.reverse_loss,
            duration: self.duration_s,
            warmup: self.warmup_s,
            timer_jitter: self.timer_jitter_us,
        }
    }

    /// Checks the warm-up against the run's length on `link`, before anything runs.
    pub fn check_window(
        &self,
        link: &wisp_sim::link::LinkModel,
    ) -> Result<(), crate::error::CliError> {
        self.run_options()
            .check_window(link)
            .map_err(crate::error::CliError::Input)
    }
}

/// Resolves and logs the seed.
pub fn seed(option: Option<u64>) -> Result<u64, crate::error::CliError> {
    let (seed, source) =
        wisp_sim::seed::resolve_seed(option).map_err(crate::error::CliError::input)?;
    let from = match source {
        wisp_sim::seed::SeedSource::Option => "--seed",
        wisp_sim::seed::SeedSource::Env => wisp_sim::seed::SEED_ENV,
        wisp_sim::seed::SeedSource::Default => "default",
    };
    say!(
        "wisp: seed {seed} (from {from}; replay with {}={seed})",
        wisp_sim::seed::SEED_ENV
    );
    Ok(seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_name_their_bound_and_never_saturate() {
        assert_eq!(sim_secs("86400"), Ok(Duration::from_secs(86_400)));
        assert_eq!(sim_secs("1e30").unwrap_err(), "must be at most 86400 s");
        assert_eq!(sim_secs("1e-12").unwrap_err(), "must be at least 1 ns");
        assert_eq!(sim_secs("0").unwrap_err(), "must be positive");
        assert_eq!(sim_delay_ms("60000"), Ok(Duration::from_secs(60)));
        assert_eq!(
            sim_delay_ms("1e30").unwrap_err(),
            "must be at most 60000 ms"
        );
        assert_eq!(sim_offset_ms("1.5"), Ok(Duration::from_micros(1500)));
        assert!(sim_warmup_secs("-1").is_err());
        assert_eq!(
            positive_secs("1e30").unwrap_err(),
            "must be at most 1000000000 s"
        );
        assert_eq!(
            non_negative_ms("1e30").unwrap_err(),
            "must be at most 1000000000000 ms"
        );
        assert_eq!(positive_secs("1e-12").unwrap_err(), "must be at least 1 ns");
    }
}
