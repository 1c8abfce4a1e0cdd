//! `wisp reproduce kwikr`'s Ping-Pair validation (Table 1, Fig. 5) pinned: which claims are met
//! at seed 1, and the figures behind them within bounds that can fail.

use wisp_sim::reproduce::kwikr::{Options, PAIRS_PER_STEP, PAPER_CLASSES, run};

#[test]
fn table1_and_fig5_meet_the_pinned_claims() {
    let o = Options {
        quick: true,
        seed: 1,
        jobs: 2,
    };
    let r = run(&o, &|_, _| {}).unwrap();
    assert_eq!(r.settings.len(), 2);
    for (s, &(np, p)) in r.settings.iter().zip(&PAPER_CLASSES) {
        // §8.1's 30 pairs per step, 0..7 flows, for T_q; Table 1's sample at the paper's class
        // sizes (116 / 117 pairs at 2.4 GHz, 110 / 140 at 5 GHz), every pair classified or
        // counted apart.
        let steps = s.pairs.iter().filter(|p| p.in_steps).count();
        assert_eq!(steps, 8 * PAIRS_PER_STEP, "{}", s.name);
        let c = &s.confusion;
        assert_eq!(
            (c.nn + c.np, c.pn + c.pp),
            (np as u32, p as u32),
            "{}",
            s.name
        );
        let sample = s.pairs.iter().filter(|p| p.in_table1).count();
        assert_eq!(sample, np + p + c.unclassified as usize);
        // With no crossing flow the queue is empty: every such pair non-persistent, both ways.
        let zero: Vec<_> = s.pairs.iter().filter(|p| p.flows == 0).collect();
        assert!(zero.iter().all(|p| !p.truth_persistent), "{}", s.name);
        assert!(
            zero.iter().all(|p| p.measured_persistent == Some(false)),
            "{}",
            s.name
        );
        // T_q splits exactly into the AP's part and the uplink's part (the engine's ground
        // truth adds up).
        for p in s.pairs.iter().filter(|p| p.valid) {
            let (Some(t), Some(a), Some(u)) = (p.t_q_ms, p.truth_reply_gap_ms, p.request_gap_ms)
            else {
                panic!("{p:?}")
            };
            assert!((t - a - u).abs() < 1e-3, "{p:?}");
        }
    }
    let checks = r.checks(vec![]);
    for c in &checks {
        eprintln!(
            "{} {}: {} (expected {})",
            if c.met { "ok" } else { "NO" },
            c.claim,
            c.measured,
            c.expected
        );
    }
    let met: Vec<bool> = checks.iter().map(|c| c.met).collect();
    // Per setting: persistent accuracy, non-persistent accuracy, T_q against the AP's delay
    // between the two replies within max(10 %, 2 ms) (§5.2's definition, issue 35; its error
    // is the normal request's lag behind the high one on the uplink, a median 1.6 ms on
    // 2.4 GHz: met, and 2.5 ms on 5 GHz: not met); then Fig. 5's two checks.
    assert_eq!(met, [true, true, true, true, true, false, true, true]);
    for s in &r.settings {
        let (e, u) = (
            s.reply_gap_error_median_ms.unwrap(),
            s.request_gap_median_ms.unwrap(),
        );
        assert!(
            (e - u).abs() < 0.05,
            "{}: {e} vs the uplink lag {u}",
            s.name
        );
    }
    // The figures behind them, with margins that can fail.
    let acc = |i: usize| r.settings[i].confusion.persistent_accuracy().unwrap();
    assert!(acc(0) > 0.95 && acc(1) > 0.90, "{} {}", acc(0), acc(1));
    let err = |i: usize| r.settings[i].abs_error_median_ms.unwrap();
    // 5.7 and 2.4 ms at seed 1 (2.4 and 1.3 ms before the medium's other stations deferred AIFS,
    // not EIFS, after a collision).
    assert!(err(0) < 7.0 && err(1) < 3.5, "{} {}", err(0), err(1));
    let f = r.fig5.as_ref().unwrap();
    assert!(f.owd_in_ms.unwrap() > 5.0 * f.owd_out_ms.unwrap().max(0.5));
    assert!(f.t_q_in_ms.unwrap() > 5.0 * f.t_q_out_ms.unwrap());
    assert!(f.valid_pairs_in >= 50 && f.valid_pairs_out >= 50);
    // The sensitivity run (servers at 12 Mbit/s): shallow non-empty queues make persistent
    // queues harder to see (reported, not a claim).
    let s = &r.sensitivity[0];
    let sp = s.confusion.persistent_accuracy().unwrap();
    eprintln!("sensitivity: {:?} persistent {sp:.3}", s.confusion);
    assert!(sp < 0.88, "{sp}");
    // Deterministic.
    let again = run(&o, &|_, _| {}).unwrap();
    assert_eq!(r, again);
}
