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
/// utilities' wait; before, 1 s dropped every pair of the congested minute). `--quick` runs
/// the paper's 20 calls per scheme and 10 runs per pairing (seconds). Met: Fig. 8's rate
/// (+19.2 %), delay and loss (both schemes sit behind the same full queue), Fig. 9, Table 2's
/// skype-ukf + skype-ukf (3.2 % apart) and kwikr + kwikr. Not met: Table 2's mixed pairing
/// (kwikr 922 kbit/s, its skype-ukf neighbour 508: eq. (3) discounts the neighbour's frames in
/// the shared FIFO as cross traffic) and the two comparisons across pairings that follow from
/// it. With `ap-queue=per-station` (the earlier setting) the met set was Fig. 8's rate, Fig. 9
/// and every Table 2 claim. (With 4 calls per scheme and 3 per pairing, the earlier
/// `--quick`, Fig. 8's rate read +13.7 % and skype-ukf + skype-ukf 6.5 % apart: neither met.)
const MET: &[&str] = &[
    "Fig. 8: Kwikr's mean rate in the congested minute",
    "Fig. 8: Kwikr's median one-way delay in the congested minute",
    "Fig. 8: Kwikr's 95th-percentile one-way delay in the congested minute",
    "Fig. 8: Kwikr's loss rate in the congested minute",
    "Fig. 9: Kwikr's mean rate in the throttled minute",
    "Fig. 9: Kwikr's loss rate in the throttled minute",
    "Table 2, skype-ukf + skype-ukf: the two calls' rates",
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
    // Same seed, same calls and figures (wisp-report's calls.csv and series.csv are drawn
    // from these).
    let again = quick(1);
    assert_eq!(format!("{:?}", r.calls), format!("{:?}", again.calls));
    assert_eq!(r.groups(), again.groups());
    for e in ["fig8", "fig9"] {
        assert_eq!(r.mean_series(e, "kwikr"), again.mean_series(e, "kwikr"));
    }
}
