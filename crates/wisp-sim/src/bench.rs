//! The matrix runner behind `wisp bench`: every scheme over every link, in parallel.

use crate::run::{RunResult, run};
use crate::sim::{Scenario, SimError};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs every scenario on `jobs` threads; results come back in the input order, whatever the
/// scheduling, so the output is deterministic. `on_done(done, total)` is called as runs finish.
pub fn run_all(
    scenarios: &[Scenario],
    jobs: usize,
    on_done: &(dyn Fn(usize, usize, &Scenario) + Sync),
) -> Vec<Result<RunResult, SimError>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunResult, SimError>>>> =
        Mutex::new((0..scenarios.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(scenarios.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(sc) = scenarios.get(i) else { break };
                    let r = run(sc, None);
                    results.lock().expect("results lock")[i] = Some(r);
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    on_done(d, scenarios.len(), sc);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("results lock")
        .into_iter()
        .map(|r| r.expect("every run finished"))
        .collect()
}
