//! The Kwikr call experiments (`wisp_sim::reproduce::kwikr_calls`: Figs. 8, 9 and Table 2 of
//! the CoNEXT'17 paper, `skype-ukf` against `kwikr` on the simulated Wi-Fi network) at
//! `--quick`: the claims met are pinned, so one that starts or stops being met fails here (then
//! the list is updated with the reason in the commit). The expected values are the paper's
//! (docs/kwikr.md, "Part B"); which of them hold is what the simulation gives.

use wisp_sim::reproduce::kwikr_calls::{KwikrCalls, Options, run};

fn quick(seed: u64) -> KwikrCalls {
    let opts = Options {
        quick: true,
        seed,
        jobs: 2,
    };
    run(&opts, &|_, _| {}).unwrap()
}

/// The claims met at `--quick`, seed 1, with the AP's best-effort queue one FIFO over every
/// destination (`ap-queue=fifo` in the three scenario files, the paper's Fig. 1(d) evidence:
/// docs/kwikr.md, "The AP's queue") and the prober waiting 10 s for a reply (the ping
/// utilities' wait; before, 1 s dropped every pair of the congested minute). Met: Fig. 8's
/// delay and loss (both schemes sit behind the same full queue), Fig. 9, Table 2's kwikr +
/// kwikr. Not met: Fig. 8's rate at `--quick` (+13.7 % over 4 calls each; the full run's 20
/// give +19.2 %, met), Table 2's skype-ukf + skype-ukf (6.5 % apart over 3 runs; 3.2 % in the
/// full run) and its mixed pairing (kwikr 921 kbit/s, its skype-ukf neighbour 510: eq. (3)
/// discounts the neighbour's frames in the shared FIFO as cross traffic). With
/// `ap-queue=per-station` (the earlier setting) the met set was Fig. 8's rate, Fig. 9 and
/// every Table 2 claim.
const MET: &[&str] = &[
    "Fig. 8: Kwikr's median one-way delay in the congested minute",
    "Fig. 8: Kwikr's 95th-percentile one-way delay in the congested minute",
    "Fig. 8: Kwikr's loss rate in the congested minute",
    "Fig. 9: Kwikr's mean rate in the throttled minute",
    "Fig. 9: Kwikr's loss rate in the throttled minute",
    "Table 2, kwikr + kwikr: the two calls' rates",
];

#[test]
fn quick_call_experiments_meet_the_pinned_claims() {
    let r = quick(1);
    let s = r.summary();
    for g in &s.groups {
        eprintln!("{}", serde_json::to_string(g).unwrap());
    }
    for c in &s.checks {
        eprintln!("{} | {} | {} | {}", c.met, c.claim, c.expected, c.measured);
    }
    assert!(!s.checks.is_empty());
    assert!(s.groups.iter().all(|g| g.calls > 0), "{:?}", s.groups);
    let mut met: Vec<&str> = s
        .checks
        .iter()
        .filter(|c| c.met)
        .map(|c| c.claim.as_str())
        .collect();
    met.sort_unstable();
    let mut want = MET.to_vec();
    want.sort_unstable();
    assert_eq!(met, want, "the claims met changed");
    // Every call ran: the baseline dips in the congested minute (the cross traffic reaches
    // it), and Kwikr's station probed with valid pairs.
    let b = r.group("fig8", "skype-ukf", None);
    assert!(b.rate_kbps.0 < 0.8 * b.whole_rate_kbps.0, "{b:?}");
    let k = r.group("fig8", "kwikr", None);
    assert!(k.ping_pairs > 0 && k.ping_valid > 0, "{k:?}");
    assert_eq!(b.ping_pairs, 0);
    // Same seed, same figures; the files carry every call.
    let again = quick(1);
    assert_eq!(r.csv(), again.csv());
    assert_eq!(r.series_csv(), again.series_csv());
    assert_eq!(r.csv().lines().count(), 1 + r.calls.len());
}

/// The full experiments (20 calls per scheme, 10 per pairing): `cargo test -p wisp-sim
/// --release --test kwikr_calls -- --ignored --nocapture` prints the figures of docs/kwikr.md.
#[test]
#[ignore]
fn full_call_experiments() {
    let opts = Options {
        quick: false,
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
    let dir = std::env::var("WISP_KWIKR_CALLS_OUT").ok();
    if let Some(d) = dir {
        std::fs::create_dir_all(&d).unwrap();
        for (name, text) in r.files() {
            std::fs::write(std::path::Path::new(&d).join(name), text).unwrap();
        }
    }
}
