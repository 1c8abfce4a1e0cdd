//! Adding a paper: its run module, its renderer and one registry line. The toy paper below is
//! all three in this one file — a run module (`toy_run`, which would live in
//! `wisp_sim::reproduce`), a renderer (`Toy` and its `Outcome`, which would live in a module of
//! wisp-report) and its line, added to the shipped registry at run time — and the code the
//! front ends share (find a paper, refuse a misplaced input, run it, write its folder, print
//! its checks) takes it up without a change.

use std::sync::atomic::{AtomicBool, Ordering};
use wisp_report::PAPERS;
use wisp_report::output::{OutputDir, OutputError};
use wisp_report::reproduce::{
    CheckKind, InputOption, Inputs, Outcome, Paper, Request, RunError, find, names, with_summary,
    write_checks,
};
use wisp_sim::reproduce::Check;

/// The run module: "runs" `n` experiments, each giving its seed.
mod toy_run {
    use serde::Serialize;
    use std::sync::atomic::{AtomicBool, Ordering};
    use wisp_sim::sim::SimError;

    pub struct Options {
        pub quick: bool,
        pub seed: u64,
    }

    #[derive(Debug, Serialize)]
    pub struct Counted {
        pub values: Vec<u64>,
    }

    pub fn run_or_cancel(
        o: &Options,
        on_done: &(dyn Fn(usize, usize) + Sync),
        cancel: &AtomicBool,
    ) -> Result<Counted, SimError> {
        let n = if o.quick { 3 } else { 10 };
        let mut values = vec![];
        for i in 0..n {
            if cancel.load(Ordering::Relaxed) {
                return Err(SimError::Cancelled);
            }
            values.push(o.seed + i as u64);
            on_done(i + 1, n);
        }
        Ok(Counted { values })
    }
}

/// The renderer: the paper, as a renderer module of wisp-report declares it.
const TOY: Paper = Paper {
    name: "toy",
    summary: "A paper that counts",
    inputs: Inputs::None("it counts"),
    runs: |r, on_done, cancel| {
        let o = toy_run::Options {
            quick: r.quick,
            seed: r.seed,
        };
        let result = toy_run::run_or_cancel(&o, on_done, cancel)?;
        Ok(Box::new(ToyOutcome {
            result,
            quick: r.quick,
        }))
    },
};

fn checks(c: &toy_run::Counted) -> Vec<Check> {
    vec![Check {
        claim: "it counts".into(),
        expected: "≥ 3".into(),
        measured: c.values.len().to_string(),
        met: c.values.len() >= 3,
        ..Default::default()
    }]
}

/// Its result (a renderer inside wisp-report implements `Outcome` for
/// `reproduce::Done<its result>` instead).
struct ToyOutcome {
    result: toy_run::Counted,
    quick: bool,
}

impl Outcome for ToyOutcome {
    fn claims(&self) -> Vec<Check> {
        checks(&self.result)
    }

    fn files(&self) -> Result<OutputDir, OutputError> {
        let c = &self.result;
        let mut files = with_summary("toy", Some(self.quick), c, &checks(c), [])?;
        files.add("report.html", "<!doctype html>\n");
        Ok(files)
    }

    fn stdout(&self) -> String {
        let mut out = String::new();
        write_checks(&mut out, &checks(&self.result));
        out
    }
}

#[test]
fn a_toy_paper_is_found_run_and_written_through_the_registry() {
    // The registry line.
    let registry: Vec<&Paper> = PAPERS.iter().copied().chain([&TOY]).collect();
    assert!(find(PAPERS, "toy").is_none());
    assert_eq!(names(&registry).last(), Some(&"toy"));
    assert_eq!(names(&registry).len(), PAPERS.len() + 1);

    let toy = find(&registry, "toy").expect("the toy is registered");
    assert_eq!(toy.summary, "A paper that counts");
    // A front end's refusal of an input the toy does not take.
    let inputs = toy.inputs;
    assert_eq!(inputs.misplaced(true, false), Some(InputOption::Trace));
    assert_eq!(inputs.takes(InputOption::cli), "it counts");

    let request = Request {
        quick: true,
        seed: 7,
        jobs: 1,
        ..Request::default()
    };
    let cancelled = toy.run(&request, &|_, _| {}, &AtomicBool::new(true));
    assert!(matches!(cancelled, Err(RunError::Cancelled)));

    let done = std::sync::atomic::AtomicUsize::new(0);
    let on_done = |d: usize, _: usize| done.store(d, Ordering::Relaxed);
    let outcome = toy
        .run(&request, &on_done, &AtomicBool::new(false))
        .unwrap();
    assert_eq!(done.load(Ordering::Relaxed), 3);
    assert_eq!(outcome.checks().len(), 1);
    assert_eq!(outcome.checks()[0].0, CheckKind::Claim);
    assert_eq!(
        outcome.stdout(),
        "ok   it counts: 3 (expected ≥ 3)\n1 of 1 checks met\n"
    );
    assert_eq!(outcome.main_file(), "report.html");

    let dir = std::env::temp_dir().join(format!("wisp-toy-paper-{}", std::process::id()));
    outcome.write_outputs(&dir).unwrap();
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["paper"], "toy");
    assert_eq!(summary["quick"], true);
    assert_eq!(summary["result"]["values"], serde_json::json!([7, 8, 9]));
    assert_eq!(summary["checks"][0]["met"], true);
    assert!(dir.join("report.html").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}
