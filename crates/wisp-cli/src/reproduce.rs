//! `wisp reproduce PAPER`: re-run a paper's experiments and write its figures.

use crate::error::CliError;
use crate::output;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use wisp_report::reproduce::Reproduced;
use wisp_sim::reproduce::{
    Check, alfalfa, gcc_wifi, kwikr, kwikr_calls, mehrotra, shipped, sprout, wbest,
};

/// The papers wisp reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Paper {
    /// Carlucci et al., ANRW 2016: GCC over a loaded Wi-Fi link with and without the
    /// packet-grouping pre-filter (Figs. 6, 8, 9, 10).
    GccWifi,
    /// Winstein et al., NSDI 2013: Sprout, Sprout-EWMA and the TCP baselines over the cellular
    /// traces (the §1 summary table, the §6.3–6.4 throughput/delay charts, the §6.5 loss table).
    Sprout,
    /// Mehrotra et al.: mobile-broadband characterisation (Figs. 2–5, 19), rate controllers with
    /// fixed and learned congestion thresholds (Tables I–II, Figs. 9–23), a handover.
    Mehrotra,
    /// Li, Claypool, Kinicki, LCN 2008: WBest, IGI/PTR, pathChirp, pathload and Spruce on the simulated
    /// 802.11g testbed of Table I (14 cases; Tables II–III as figures; summary.json, table.csv).
    Wbest,
    /// Das et al., CoNEXT 2017: Ping-Pair's validation on the simulated 802.11 medium (Table 1's
    /// confusion matrices, 802.11n 2.4 GHz and 802.11ac 5 GHz; Fig. 5's co-channel
    /// interference); summary.json, report.html, pairs.csv.
    Kwikr,
    /// Alfalfa's explicit-state video against the same model encoder under Sprout
    /// without base choice, GCC and CBR, over the cellular traces (--traces DIR), with 5% loss
    /// on Verizon-LTE-short; summary.json, table.csv, report.html (quality against delay).
    Alfalfa,
}

impl Paper {
    fn name(self) -> &'static str {
        match self {
            Paper::GccWifi => "gcc-wifi",
            Paper::Sprout => "sprout",
            Paper::Mehrotra => "mehrotra",
            Paper::Wbest => "wbest",
            Paper::Kwikr => "kwikr",
            Paper::Alfalfa => "alfalfa",
        }
    }
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// The paper.
    #[arg(value_enum, value_name = "PAPER")]
    pub paper: Paper,

    /// Output folder (default: reproduce/PAPER).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// A shorter run that still checks every claim it can: gcc-wifi, a 60-s call over the main
    /// cases; sprout and alfalfa, the two 140-s LTE trace pairs only; mehrotra, the main cases
    /// with shorter runs (each under a minute); wbest, 5 runs per case instead of 30; kwikr,
    /// Fig. 5 shortened to 35 s (its calls are the paper's 20 per figure and 10 per pairing
    /// either way: seconds).
    #[arg(long)]
    pub quick: bool,

    /// The Wi-Fi trace of gcc-wifi (default: traces/wifi/google-wifi-3mbps.rx of the wisp
    /// repository); not used by the other papers.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// The folder of sprout's cellular trace pairs, NAME.down and NAME.up for each of
    /// Verizon-LTE-short, Verizon-EVDO-driving, ATT-LTE-driving, TMobile-UMTS-driving and
    /// TMobile-LTE-short (default: traces/cellular of the wisp repository).
    #[arg(long, value_name = "DIR")]
    pub traces: Option<PathBuf>,

    /// Master seed (default: $WISP_SEED, else 1).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Runs in parallel (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

const WIFI_TRACE: &str = "traces/wifi/google-wifi-3mbps.rx";
const CELLULAR_TRACES: &str = "traces/cellular";

pub fn reproduce(a: ReproduceArgs) -> Result<(), CliError> {
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reproduce").join(a.paper.name()));
    output::check_out_dir("--out", &out)?;
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let (trace_ok, traces_ok) = match a.paper {
        Paper::GccWifi => (true, false),
        Paper::Sprout | Paper::Alfalfa => (false, true),
        Paper::Mehrotra | Paper::Wbest | Paper::Kwikr => (false, false),
    };
    let misplaced = [
        ("--trace", a.trace.is_some() && !trace_ok),
        ("--traces", a.traces.is_some() && !traces_ok),
    ];
    if let Some((opt, _)) = misplaced.iter().find(|(_, bad)| *bad) {
        let takes = match a.paper {
            Paper::GccWifi => "it takes --trace FILE",
            Paper::Sprout | Paper::Alfalfa => "it takes --traces DIR",
            Paper::Mehrotra => "it runs on the mobile-broadband profiles",
            Paper::Wbest => "it runs on the simulated 802.11g testbed",
            Paper::Kwikr => "it runs its scenarios on the simulated 802.11 medium",
        };
        return Err(CliError::Input(format!(
            "{opt} does not apply to {} ({takes})",
            a.paper.name()
        )));
    }
    match a.paper {
        Paper::Sprout => sprout_paper(&a, &out, jobs)?,
        Paper::Kwikr => kwikr_paper(&a, &out, jobs)?,
        Paper::Alfalfa => alfalfa_paper(&a, &out, jobs)?,
        Paper::Wbest => {
            let seed = crate::args::seed(a.seed)?;
            let result =
                with_progress(|on_done| Ok::<_, CliError>(wbest::run(a.quick, seed, on_done)))?;
            let result = Reproduced::Wbest(result);
            result.write_outputs(a.quick, &out)?;
            let Reproduced::Wbest(result) = result else {
                unreachable!()
            };
            let checks = result.checks();
            println!(
                "{:>4} {:>7}  {:>15} {:>15} {:>15} {:>15} {:>15}",
                "case", "truth", "wbest", "igi-ptr", "pathchirp", "pathload", "spruce"
            );
            for c in &result.cases {
                let cols: Vec<String> = c
                    .tools
                    .iter()
                    .map(|t| format!("{:6.2} ±{:6.2}", t.median_mbps, t.median_abs_error_mbps))
                    .collect();
                println!(
                    "{:>4} {:>7.2}  {}",
                    c.case,
                    c.ground_truth_mbps,
                    cols.join("  ")
                );
            }
            print_checks(&checks);
            say!("wisp: wrote {}", out.join("report.html").display());
        }
        Paper::GccWifi => {
            let path = a.trace.clone().unwrap_or_else(|| shipped(WIFI_TRACE));
            let trace = gcc_wifi::load_trace(&path)
                .map_err(|e| input_error(e, a.trace.is_none(), "--trace FILE"))?;
            let seed = crate::args::seed(a.seed)?;
            let options = gcc_wifi::Options {
                trace,
                quick: a.quick,
                seed,
                jobs,
            };
            let result =
                Reproduced::GccWifi(with_progress(|on_done| gcc_wifi::run(&options, on_done))?);
            result.write_outputs(a.quick, &out)?;
            let checks: Vec<Check> = result.checks().into_iter().map(|(_, c)| c).collect();
            print_each("", &checks);
            say!("wisp: wrote {}", out.join("report.html").display());
        }
        Paper::Mehrotra => {
            let seed = crate::args::seed(a.seed)?;
            let options = mehrotra::Options {
                quick: a.quick,
                seed,
                jobs,
            };
            let result =
                Reproduced::Mehrotra(with_progress(|on_done| mehrotra::run(&options, on_done))?);
            result.write_outputs(a.quick, &out)?;
            let Reproduced::Mehrotra(result) = result else {
                unreachable!()
            };
            let checks = result.checks();
            let calibration = result.calibration_checks();
            let calibrated = print_each("calibration (not a claim): ", &calibration);
            let met = print_each("", &checks);
            println!(
                "{met} of {} claims met (calibration checks apart: {calibrated} of {} met)",
                checks.len(),
                calibration.len()
            );
            say!("wisp: wrote {}", out.join("report.html").display());
        }
    }
    Ok(())
}

fn kwikr_paper(a: &ReproduceArgs, out: &Path, jobs: usize) -> Result<(), CliError> {
    let seed = crate::args::seed(a.seed)?;
    let options = kwikr::Options {
        quick: a.quick,
        seed,
        jobs,
    };
    let result = with_progress(|on_done| kwikr::run(&options, on_done))?;
    // The call experiments: Fig. 8, 9 and Table 2.
    let calls_options = kwikr_calls::Options {
        quick: a.quick,
        seed,
        jobs,
    };
    let calls = with_progress(|on_done| {
        kwikr_calls::run(&calls_options, on_done).map_err(CliError::input)
    })?;
    let result = Reproduced::Kwikr(result, calls);
    result.write_outputs(a.quick, out)?;
    let Reproduced::Kwikr(result, calls) = result else {
        unreachable!()
    };
    let checks = result.checks(calls.summary().checks);
    for s in result.settings.iter().chain(&result.sensitivity) {
        let c = &s.confusion;
        println!(
            "{}: truth non-persistent {} (classified {} / {}), persistent {} ({} / {}), {} not classified",
            s.name,
            c.nn + c.np,
            c.nn,
            c.np,
            c.pn + c.pp,
            c.pn,
            c.pp,
            c.unclassified
        );
    }
    print_checks(&checks);
    say!("wisp: wrote {}", out.join("report.html").display());
    Ok(())
}

/// A shipped input that could not be read: when the user gave none and the file is simply not
/// there, says how to point at one (`opt`).
fn input_error(e: wisp_sim::trace::TraceError, defaulted: bool, opt: &str) -> CliError {
    if e.line.is_none() && defaulted {
        CliError::Input(format!("{e} (run from the wisp repository or pass {opt})"))
    } else {
        CliError::Input(e.to_string())
    }
}

/// Runs a reproduction behind a progress bar fed by its `on_done(done, total)` callback.
fn with_progress<R, E: Into<CliError>>(
    run: impl FnOnce(&(dyn Fn(usize, usize) + Sync)) -> Result<R, E>,
) -> Result<R, CliError> {
    let pb = output::progress_bar(0, "simulating");
    let result = run(&|done, total| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    })
    .map_err(Into::into)?;
    pb.finish_and_clear();
    Ok(result)
}

/// Every check, then how many are met.
fn print_checks(checks: &[Check]) {
    let met = print_each("", checks);
    println!("{met} of {} checks met", checks.len());
}

/// Every check, a line each: `ok`/`NO`, the claim after `prefix`, the figure, the expectation.
/// Returns how many are met.
fn print_each(prefix: &str, checks: &[Check]) -> usize {
    for c in checks {
        println!(
            "{:3}  {prefix}{}: {} (expected {})",
            if c.met { "ok" } else { "NO" },
            c.claim,
            c.measured,
            c.expected
        );
    }
    checks.iter().filter(|c| c.met).count()
}

fn alfalfa_paper(a: &ReproduceArgs, out: &Path, jobs: usize) -> Result<(), CliError> {
    let dir = a.traces.clone().unwrap_or_else(|| shipped(CELLULAR_TRACES));
    let pairs = sprout::load_traces(&dir, a.quick)
        .map_err(|e| input_error(e, a.traces.is_none(), "--traces DIR"))?;
    let seed = crate::args::seed(a.seed)?;
    let result = with_progress(|on_done| alfalfa::run(&pairs, a.quick, seed, jobs, on_done))?;
    let result = Reproduced::Alfalfa(result);
    result.write_outputs(a.quick, out)?;
    let Reproduced::Alfalfa(result) = result else {
        unreachable!()
    };
    let checks = result.checks();
    print!("{}", result.csv());
    println!();
    print_checks(&checks);
    say!("wisp: wrote {}", out.join("summary.json").display());
    Ok(())
}

fn sprout_paper(a: &ReproduceArgs, out: &Path, jobs: usize) -> Result<(), CliError> {
    let dir = a.traces.clone().unwrap_or_else(|| shipped(CELLULAR_TRACES));
    let pairs = sprout::load_traces(&dir, a.quick)
        .map_err(|e| input_error(e, a.traces.is_none(), "--traces DIR"))?;
    let seed = crate::args::seed(a.seed)?;
    let options = sprout::Options {
        pairs,
        quick: a.quick,
        seed,
        jobs,
    };
    let result = Reproduced::Sprout(with_progress(|on_done| sprout::run(&options, on_done))?);
    result.write_outputs(a.quick, out)?;
    let Reproduced::Sprout(result) = result else {
        unreachable!()
    };
    print_sprout(&result, &result.results());
    say!("wisp: wrote {}", out.join("report.html").display());
    Ok(())
}

/// The per-trace tables, the summary, the loss table and the claims, on stdout.
fn print_sprout(r: &sprout::Reproduction, results: &sprout::Results<'_>) {
    let delay = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |d| format!("{d:.0}"));
    println!(
        "{:27} {:12} {:>10} {:>6} {:>9}",
        "trace", "scheme", "kbit/s", "util", "self ms"
    );
    for t in &r.traces {
        for run in &t.runs {
            let f = run.metrics();
            println!(
                "{:27} {:12} {:>10.0} {:>6.3} {:>9}",
                t.trace,
                run.entry,
                f.throughput_kbps,
                f.utilization,
                delay(f.self_inflicted_delay_ms)
            );
        }
    }
    let n = results.summary.first().map_or(0, |s| s.traces);
    println!("\nSprout against each scheme over the {n} traces of the paper's networks (§1):");
    println!(
        "{:12} {:>13} {:>16} {:>14}",
        "scheme", "avg. speedup", "delay reduction", "its avg. delay"
    );
    for s in &results.summary {
        println!(
            "{:12} {:>12.2}× {:>15.2}× {:>14}",
            s.entry,
            s.speedup,
            s.delay_reduction,
            sprout::fmt_delay(s.mean_delay_ms)
        );
    }
    println!(
        "\nSprout on {} with loss in both directions (§6.5):",
        sprout::LOSS_NETWORK
    );
    for dir in sprout::Direction::BOTH {
        for p in sprout::LOSS_RATES {
            if let Some(f) = r.loss_metrics(dir, p) {
                println!(
                    "{:8} {:>3.0} %  {:>6.0} kbit/s  {:>5} ms",
                    dir.word(),
                    100.0 * p,
                    f.throughput_kbps,
                    delay(f.self_inflicted_delay_ms)
                );
            }
        }
    }
    println!();
    print_checks(&results.checks);
}
