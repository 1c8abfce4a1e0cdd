//! The matrix runner behind `wisp bench`: every scheme over every link, in parallel.

use crate::run::{RunResult, run_or_cancel};
use crate::sim::{Scenario, SimError};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use wisp_core::tables::Tables;

/// Runs every scenario on `jobs` threads; results come back in the input order, whatever the
/// scheduling, so the output is deterministic. `on_done(done, total)` is called as runs finish.
/// The runs of one batch share one [`Tables`] store (each scheme's tables are computed once).
pub fn run_all(
    scenarios: &[Scenario],
    jobs: usize,
    on_done: &(dyn Fn(usize, usize, &Scenario) + Sync),
) -> Vec<Result<RunResult, SimError>> {
    run_all_map(scenarios, jobs, on_done, &|_, r| r)
}

/// [`run_all`], keeping of each run only what `keep(index, result)` returns. `keep` runs on the
/// worker thread as soon as the run ends, so a large matrix need not hold every run's
/// per-packet log at once.
pub fn run_all_map<T: Send>(
    scenarios: &[Scenario],
    jobs: usize,
    on_done: &(dyn Fn(usize, usize, &Scenario) + Sync),
    keep: &(dyn Fn(usize, RunResult) -> T + Sync),
) -> Vec<Result<T, SimError>> {
    run_all_map_until(scenarios, jobs, on_done, keep, &AtomicBool::new(false))
        .expect("never cancelled")
}

/// [`run_all_map`] that stops early: once `cancel` is set, no further run starts, the ones
/// under way stop at the engine's next cancel point, and the result is `None`. For callers that
/// must answer an interrupt (the Python package's `wisp.bench` on Ctrl-C).
pub fn run_all_map_until<T: Send>(
    scenarios: &[Scenario],
    jobs: usize,
    on_done: &(dyn Fn(usize, usize, &Scenario) + Sync),
    keep: &(dyn Fn(usize, RunResult) -> T + Sync),
    cancel: &AtomicBool,
) -> Option<Vec<Result<T, SimError>>> {
    let results = run_each(scenarios, jobs, on_done, keep, cancel);
    if cancel.load(Ordering::Relaxed) {
        return None;
    }
    results.into_iter().collect()
}

/// [`run_all_map`] with a cancel flag: once `cancel` is set, no further run starts and the ones
/// under way stop at the engine's next cancel point; both come back as
/// [`SimError::Cancelled`]. A batch never cancelled gives what [`run_all_map`] gives, to the
/// last byte (the reproductions run under Python's Ctrl-C this way).
pub fn run_all_map_or_cancel<T: Send>(
    scenarios: &[Scenario],
    jobs: usize,
    on_done: &(dyn Fn(usize, usize, &Scenario) + Sync),
    keep: &(dyn Fn(usize, RunResult) -> T + Sync),
    cancel: &AtomicBool,
) -> Vec<Result<T, SimError>> {
    run_each(scenarios, jobs, on_done, keep, cancel)
        .into_iter()
        .map(|r| r.unwrap_or(Err(SimError::Cancelled)))
        .collect()
}

/// The runs of a batch on `jobs` threads, in the input order; `None` for those not started
/// because `cancel` was set.
fn run_each<T: Send>(
    scenarios: &[Scenario],
    jobs: usize,
    on_done: &(dyn Fn(usize, usize, &Scenario) + Sync),
    keep: &(dyn Fn(usize, RunResult) -> T + Sync),
    cancel: &AtomicBool,
) -> Vec<Option<Result<T, SimError>>> {
    let tables = Tables::new();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let stop = || cancel.load(Ordering::Relaxed);
    let results: Mutex<Vec<Option<Result<T, SimError>>>> =
        Mutex::new((0..scenarios.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(scenarios.len().max(1)) {
            s.spawn(|| {
                while !stop() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(sc) = scenarios.get(i) else { break };
                    let mut shared = sc.clone();
                    shared.run.tables = tables.clone();
                    let r = run_or_cancel(&shared, None, Some(&stop)).map(|r| keep(i, r));
                    results.lock().expect("results lock")[i] = Some(r);
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    on_done(d, scenarios.len(), sc);
                }
            });
        }
    });
    results.into_inner().expect("results lock")
}

/// Splits a comma-separated list of scheme specs, where a spec's own parameters are also
/// comma-separated: `cbr:rate-kbps=2000,ideal` → [`cbr:rate-kbps=2000`, `ideal`].
pub fn split_schemes(list: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match out.last_mut() {
            Some(prev) if item.contains('=') && !item.contains(':') => {
                prev.push(',');
                prev.push_str(item);
            }
            _ => out.push(item.to_string()),
        }
    }
    out
}

/// Expands a comma-separated list of trace files and folders (a folder: every trace file in it,
/// in name order) into trace files. The error names the item at fault.
pub fn expand_traces(list: &str) -> Result<Vec<PathBuf>, String> {
    let mut out = vec![];
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let p = PathBuf::from(item);
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&p)
                .map_err(|e| format!("{}: cannot list folder: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && is_trace_name(f))
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(format!("{}: no trace files in this folder", p.display()));
            }
            out.extend(files);
        } else if p.is_file() {
            out.push(p);
        } else {
            return Err(format!("{}: no such file or folder", p.display()));
        }
    }
    if out.is_empty() {
        return Err("--traces names no trace".into());
    }
    Ok(out)
}

fn is_trace_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    !name.starts_with('.') && !name.ends_with(".md") && !name.eq_ignore_ascii_case("README")
}

/// The other direction of a `.up`/`.down` trace, if it exists.
pub fn paired_trace(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?.to_string_lossy().to_string();
    let other = if let Some(base) = name.strip_suffix(".down") {
        format!("{base}.up")
    } else if let Some(base) = name.strip_suffix(".up") {
        format!("{base}.down")
    } else {
        return None;
    };
    let q = p.with_file_name(other);
    q.is_file().then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::LinkSpec;

    #[test]
    fn mapped_results_come_back_in_input_order() {
        let scenarios: Vec<Scenario> = [500, 1000, 2000, 4000]
            .iter()
            .map(|kbps| {
                let link = "const:10mbps".parse::<LinkSpec>().unwrap().load().unwrap();
                let mut s = Scenario::new(link, format!("cbr:rate-kbps={kbps}").parse().unwrap());
                s.run.duration = wisp_core::Duration::from_secs(2);
                s
            })
            .collect();
        let kept = run_all_map(&scenarios, 3, &|_, _, _| {}, &|i, r| {
            (i, r.report.flows[0].throughput_kbps)
        });
        let kept: Vec<(usize, f64)> = kept.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            kept.iter().map(|k| k.0).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        for w in kept.windows(2) {
            assert!(w[0].1 < w[1].1, "{kept:?}");
        }
        let full = run_all(&scenarios, 2, &|_, _, _| {});
        assert_eq!(
            full[3].as_ref().unwrap().report.flows[0].throughput_kbps,
            kept[3].1
        );
    }

    #[test]
    fn a_cancelled_matrix_starts_no_further_run() {
        let scenarios: Vec<Scenario> = (0..6)
            .map(|_| {
                let link = "const:10mbps".parse::<LinkSpec>().unwrap().load().unwrap();
                let mut s = Scenario::new(link, "cbr".parse().unwrap());
                s.run.duration = wisp_core::Duration::from_secs(1);
                s
            })
            .collect();
        let started = AtomicUsize::new(0);
        let cancel = AtomicBool::new(false);
        // One thread: the first run's end sets the flag, so exactly one run happens.
        let r = run_all_map_until(
            &scenarios,
            1,
            &|_, _, _| cancel.store(true, Ordering::Relaxed),
            &|_, _| {
                started.fetch_add(1, Ordering::Relaxed);
            },
            &cancel,
        );
        assert!(r.is_none());
        assert_eq!(started.load(Ordering::Relaxed), 1);
        // Not cancelled: every run, as run_all_map.
        let r = run_all_map_until(
            &scenarios,
            2,
            &|_, _, _| {},
            &|i, _| i,
            &AtomicBool::new(false),
        );
        let r: Vec<usize> = r.unwrap().into_iter().map(Result::unwrap).collect();
        assert_eq!(r, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_cancel_flag_stops_the_runs_under_way() {
        // Two runs of an hour (tens of seconds of wall time each) and two not started.
        let scenarios: Vec<Scenario> = (0..4)
            .map(|_| {
                let link = "const:50mbps".parse::<LinkSpec>().unwrap().load().unwrap();
                let mut s = Scenario::new(link, "cbr:rate-kbps=40000".parse().unwrap());
                s.run.duration = wisp_core::Duration::from_secs(3600);
                s
            })
            .collect();
        let cancel = AtomicBool::new(false);
        // A run that ran to its end would be `Ok`: every run is stopped (the two under way at
        // the engine's cancel point), not waited for.
        let r = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                cancel.store(true, Ordering::Relaxed);
            });
            run_all_map_or_cancel(&scenarios, 2, &|_, _, _| {}, &|_, _| (), &cancel)
        });
        assert_eq!(r.len(), 4);
        assert!(
            r.iter().all(|r| matches!(r, Err(SimError::Cancelled))),
            "{r:?}"
        );
        // Never set: the runs of run_all_map, to the last bit.
        let short: Vec<Scenario> = scenarios
            .iter()
            .map(|s| {
                let mut s = s.clone();
                s.run.duration = wisp_core::Duration::from_secs(2);
                s
            })
            .collect();
        let keep = |_: usize, r: RunResult| r.report;
        let plain = run_all_map(&short, 2, &|_, _, _| {}, &keep);
        let polled =
            run_all_map_or_cancel(&short, 2, &|_, _, _| {}, &keep, &AtomicBool::new(false));
        assert_eq!(plain.len(), polled.len());
        for (a, b) in plain.iter().zip(&polled) {
            let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
            assert!(a.flows[0].throughput_kbps > 30_000.0, "{a:?}");
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }

    #[test]
    fn scheme_lists_keep_their_parameters() {
        assert_eq!(split_schemes("ideal,cbr"), ["ideal", "cbr"]);
        assert_eq!(
            split_schemes("cbr:rate-kbps=2000,x=1, ideal"),
            ["cbr:rate-kbps=2000,x=1", "ideal"]
        );
    }
}
