//! `wisp bench`: a matrix of schemes × traces, run in parallel, written as results.json,
//! results.csv and report.html.

use crate::args::{self, SimOptions};
use crate::error::CliError;
use crate::output::{self, OutputDir};
use crate::run::scenario;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use wisp_core::scheme::SchemeConfig;
use wisp_sim::bench::{expand_traces, paired_trace, split_schemes};
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::run::{RunReport, RunResult};
use wisp_sim::sim::FlowSpec;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReverseChoice {
    /// Carry feedback over the paired trace (`.up` for `.down` and back) when it exists.
    Pair,
    /// Feedback sees the propagation delay only.
    Delay,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Schemes, comma-separated; each NAME[:KEY=VALUE,…] (see `wisp schemes`).
    #[arg(long, value_name = "A,B,…")]
    pub schemes: String,

    /// Trace files or folders of traces, comma-separated (a folder means every trace file in
    /// it, in name order).
    #[arg(long, value_name = "FILE|DIR,…")]
    pub traces: String,

    /// Runs in parallel (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Output folder for results.json, results.csv, report.html, summary.svg, plots/TRACE.svg
    /// and figures/TRACE/SCHEME.svg.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,

    /// The feedback path.
    #[arg(long, value_enum, default_value = "pair")]
    pub reverse: ReverseChoice,

    #[command(flatten)]
    pub sim: SimOptions,

    /// Print the results as JSON (a list of run objects) instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn load(p: &Path) -> Result<LinkModel, CliError> {
    Ok(LinkSpec::trace_file(p).load()?)
}

pub fn bench(a: BenchArgs) -> Result<(), CliError> {
    output::check_out_dir("--out", &a.out)?;
    let schemes = parse_schemes(&a.schemes)?;
    let links = load_links(&a)?;
    let seed = args::seed(a.sim.seed)?;
    let mut scenarios = vec![];
    for (fwd, rev) in &links {
        for s in &schemes {
            scenarios.push(scenario(
                fwd.clone(),
                rev.clone(),
                vec![FlowSpec::new(s.clone())],
                &a.sim,
                seed,
            ));
        }
    }
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    say!(
        "wisp: {} runs ({} schemes × {} traces) on {jobs} threads",
        scenarios.len(),
        schemes.len(),
        links.len()
    );
    let pb = output::progress_bar(scenarios.len() as u64, "bench");
    let results = wisp_sim::bench::run_all(&scenarios, jobs, &|done, _, sc| {
        pb.set_position(done as u64);
        pb.set_message(format!("{} on {}", sc.flows[0].scheme, sc.forward.name()));
    });
    pb.finish_and_clear();
    let results: Vec<RunResult> = results.into_iter().collect::<Result<_, _>>()?;
    let reports: Vec<&RunReport> = results.iter().map(|r| &r.report).collect();
    write_outputs(&a, &schemes, links.len(), seed, &results)?;
    if a.json {
        return output::print_json(&reports);
    }
    print_table(&reports);
    Ok(())
}

/// `--schemes`, each scheme parsed and named once.
fn parse_schemes(list: &str) -> Result<Vec<SchemeConfig>, CliError> {
    let names = split_schemes(list);
    if names.is_empty() {
        return Err(CliError::Input("--schemes names no scheme".into()));
    }
    let schemes: Vec<SchemeConfig> = names
        .iter()
        .map(|n| {
            n.parse::<SchemeConfig>()
                .map_err(|e| CliError::Input(format!("--schemes: {e}")))
        })
        .collect::<Result<_, _>>()?;
    // The results and the report tell runs apart by scheme and trace name: each once.
    for (i, s) in schemes.iter().enumerate() {
        if schemes[..i].contains(s) {
            return Err(CliError::Input(format!("--schemes names `{s}` twice")));
        }
    }
    Ok(schemes)
}

/// Every trace of `--traces` (each name once), with its paired reverse trace when asked for,
/// each window checked.
fn load_links(a: &BenchArgs) -> Result<Vec<(LinkModel, Option<LinkModel>)>, CliError> {
    let paths = expand_traces(&a.traces).map_err(CliError::Input)?;
    for (i, p) in paths.iter().enumerate() {
        if let Some(q) = paths[..i].iter().find(|q| q.file_name() == p.file_name()) {
            return Err(CliError::Input(format!(
                "--traces: {} and {} have the same name (the results tell traces apart by name)",
                q.display(),
                p.display()
            )));
        }
    }
    let mut links = vec![];
    for p in &paths {
        let fwd = load(p)?;
        let rev = match (a.reverse, paired_trace(p)) {
            (ReverseChoice::Pair, Some(q)) => Some(load(&q)?),
            _ => None,
        };
        a.sim.check_window(&fwd)?;
        links.push((fwd, rev));
    }
    Ok(links)
}

/// `--out`'s files: results.json, results.csv and the report's (report.html, summary.svg, a
/// scatter per trace, a time series per run).
fn write_outputs(
    a: &BenchArgs,
    schemes: &[SchemeConfig],
    traces: usize,
    seed: u64,
    results: &[RunResult],
) -> Result<(), CliError> {
    let reports: Vec<&RunReport> = results.iter().map(|r| &r.report).collect();
    let mut out = OutputDir::default();
    out.add(
        "results.json",
        serde_json::to_vec_pretty(&reports)
            .map_err(|e| CliError::Io(format!("cannot serialise results: {e}")))?,
    );
    out.add("results.csv", results_csv(&reports)?);
    let scheme_names: Vec<String> = schemes.iter().map(ToString::to_string).collect();
    let subtitle = format!(
        "{} schemes × {} traces; {} ms one-way delay; queue {}; loss {}; reverse path: {}; seed {}; {}",
        schemes.len(),
        traces,
        a.sim.delay_ms.as_millis_f64(),
        a.sim.queue,
        a.sim.loss,
        match a.reverse {
            ReverseChoice::Pair => "paired trace",
            ReverseChoice::Delay => "delay only",
        },
        seed,
        a.sim
            .duration_s
            .map_or("one period of each trace".to_string(), |d| format!(
                "{} s",
                d.as_secs_f64()
            )),
    );
    let refs: Vec<&RunResult> = results.iter().collect();
    for (path, contents) in
        wisp_report::bench::bench_report("wisp bench", &subtitle, &refs, &scheme_names)
    {
        out.add(path, contents);
    }
    out.commit(&a.out)?;
    say!(
        "wisp: wrote {}/results.json, results.csv, report.html, summary.svg, plots/*.svg, figures/",
        a.out.display()
    );
    Ok(())
}

/// A line per run on stdout.
fn print_table(reports: &[&RunReport]) {
    println!(
        "{:<28} {:<24} {:>10} {:>6} {:>9} {:>9} {:>7}",
        "trace", "scheme", "thr kbit/s", "util", "self ms", "e2e95 ms", "loss"
    );
    let o = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"));
    for r in reports {
        let f = &r.flows[0];
        println!(
            "{:<28} {:<24} {:>10.0} {:>6.3} {:>9} {:>9} {:>7.4}",
            r.trace,
            r.scheme,
            f.throughput_kbps,
            f.utilization,
            o(f.self_inflicted_delay_ms),
            o(f.e2e_delay_p95_ms),
            f.loss_rate
        );
    }
}

fn results_csv(reports: &[&RunReport]) -> Result<Vec<u8>, CliError> {
    let mut w = csv::Writer::from_writer(vec![]);
    let err = |e: csv::Error| CliError::Io(format!("cannot write results.csv: {e}"));
    w.write_record([
        "trace",
        "scheme",
        "reverse",
        "flow",
        "throughput_kbps",
        "capacity_kbps",
        "utilization",
        "delay_p50_ms",
        "delay_p95_ms",
        "queue_delay_p95_ms",
        "e2e_delay_p95_ms",
        "ideal_e2e_delay_p95_ms",
        "self_inflicted_delay_ms",
        "loss_rate",
        "packets_sent",
        "packets_delivered",
        "packets_lost",
        "delay_ms",
        "queue",
        "loss",
        "duration_s",
        "warmup_s",
        "seed",
    ])
    .map_err(err)?;
    let o = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for r in reports {
        for f in &r.flows {
            w.write_record([
                r.trace.clone(),
                r.scheme.clone(),
                r.reverse.clone(),
                f.flow.to_string(),
                f.throughput_kbps.to_string(),
                f.capacity_kbps.to_string(),
                f.utilization.to_string(),
                o(f.delay_p50_ms),
                o(f.delay_p95_ms),
                o(f.queue_delay_p95_ms),
                o(f.e2e_delay_p95_ms),
                o(f.ideal_e2e_delay_p95_ms),
                o(f.self_inflicted_delay_ms),
                f.loss_rate.to_string(),
                f.packets_sent.to_string(),
                f.packets_delivered.to_string(),
                f.packets_lost.to_string(),
                r.delay_ms.to_string(),
                r.queue.clone(),
                r.loss.clone(),
                r.duration_s.to_string(),
                r.warmup_s.to_string(),
                r.seed.to_string(),
            ])
            .map_err(err)?;
        }
    }
    w.into_inner()
        .map_err(|e| CliError::Io(format!("cannot write results.csv: {e}")))
}
