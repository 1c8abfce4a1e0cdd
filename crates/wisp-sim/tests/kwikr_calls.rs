//! The Kwikr call experiments (`wisp_sim::reproduce::kwikr_calls`: Figs. 8, 9 and Table 2 of
//! the CoNEXT'17 paper) at `--quick`.

use wisp_sim::reproduce::kwikr_calls::{Options, run};

#[test]
fn quick_call_experiments() {
    let opts = Options {
        quick: true,
        seed: 1,
        jobs: 2,
    };
    let r = run(&opts, &|_, _| {}).unwrap();
    let s = r.summary();
    for g in &s.groups {
        eprintln!("{}", serde_json::to_string(g).unwrap());
    }
    for c in &s.checks {
        eprintln!("{} | {} | {} | {}", c.met, c.claim, c.expected, c.measured);
    }
}
