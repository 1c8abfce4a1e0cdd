//! The Kwikr call experiments (`wisp_sim::reproduce::kwikr_calls`: Figs. 8, 9 and Table 2 of
//! the CoNEXT'17 paper, `skype-ukf` against `kwikr` on the simulated Wi-Fi network) at
//! `--quick`: the claims met are pinned, so one that starts or stops being met fails here (then
//! the list is updated with the reason in the commit). The expected values are the paper's
//! (docs/kwikr.md, "Part B"); which of them hold is what the simulation gives.

use wisp_sim::reproduce::kwikr_calls::{CONTROL_RATES_KBPS, KwikrCalls, Options, run};

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
/// (+18.6 %), Fig. 9, Table 2's skype-ukf + skype-ukf (3.2 % apart) and kwikr + kwikr. Not
/// applicable ([`NOT_APPLICABLE`]): Fig. 8's delay and loss, which both schemes met at ±0.4 %
/// until issue 35 gave them a control. Not met: Table 2's mixed pairing
/// (kwikr 922 kbit/s, its skype-ukf neighbour 508: eq. (3) discounts the neighbour's frames in
/// the shared FIFO as cross traffic) and the two comparisons across pairings that follow from
/// it. With `ap-queue=per-station` (the earlier setting) the met set was Fig. 8's rate, Fig. 9
/// and every Table 2 claim. (With 4 calls per scheme and 3 per pairing, the earlier
/// `--quick`, Fig. 8's rate read +13.7 % and skype-ukf + skype-ukf 6.5 % apart: neither met.)
const MET: &[&str] = &[
    "Fig. 8: Kwikr's mean rate in the congested minute",
    "Fig. 9: Kwikr's mean rate in the throttled minute",
    "Fig. 9: Kwikr's loss rate in the throttled minute",
    "Table 2, skype-ukf + skype-ukf: the two calls' rates",
    "Table 2, kwikr + kwikr: the two calls' rates",
];

/// The checks that cannot fail on this network: constant-rate calls at 300 and 600 kbit/s in
/// Fig. 8's congested minute have the same median and p95 one-way delay within 1.1 % (2761 and
/// 2739 ms; 2814 and 2784) and loss rates 7.27 % and 7.80 % (+7.3 %, inside the check's 10 %):
/// the 40 downloads keep the AP's 1000-frame FIFO full, and every call waits its length and
/// loses at its drop rate whatever it sends.
const NOT_APPLICABLE: &[&str] = &[
    "Fig. 8: Kwikr's median one-way delay in the congested minute",
    "Fig. 8: Kwikr's 95th-percentile one-way delay in the congested minute",
    "Fig. 8: Kwikr's loss rate in the congested minute",
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
    let na: Vec<&str> = s
        .checks
        .iter()
        .filter(|c| !c.applies())
        .map(|c| c.claim.as_str())
        .collect();
    assert_eq!(na, NOT_APPLICABLE, "the checks not applicable changed");
    // The control ran, and it is what makes them not applicable: a doubled constant rate.
    let [lo, hi] = CONTROL_RATES_KBPS.map(|r| r.to_string());
    let (lo, hi) = (
        r.group("fig8", &format!("cbr:rate-kbps={lo}"), None),
        r.group("fig8", &format!("cbr:rate-kbps={hi}"), None),
    );
    assert!(lo.calls > 0 && hi.calls > 0, "{lo:?} {hi:?}");
    assert!(
        (hi.rate_kbps.0 / lo.rate_kbps.0 - 2.0).abs() < 0.01,
        "{lo:?} {hi:?}"
    );
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
