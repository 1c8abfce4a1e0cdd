//! Scenario tests of `scream` (SCReAMv2, draft-ietf-ccwg-rfc8298bis-screamv2-00) on the RFC 8867
//! test cases: convergence on a constant link, the §5.1 capacity steps, and §5.4's three
//! competing flows. RFC 8867 states its expected behaviour in words ("detect the path capacity
//! constraint and converge to the bottleneck link's capacity", flows "converge to their fair
//! share"); each test says which number it reads into those words and why. Run them with
//! `--release`.

// `step_run` and `delivered_bytes` serve the GCC tests only.
#[allow(dead_code)]
#[path = "common/gcc.rs"]
mod gcc_common;

use gcc_common::{flow_kbps, flows_run, jain, link, queue_p95, time_to, utilisation};
use wisp_core::{Duration, Instant};
use wisp_sim::run::RunResult;

/// `spec` flows starting at `starts` (s) over `link_spec` for `secs`, 50 ms each way, behind a
/// drop-tail queue of `queue_bytes`.
fn scream_run(
    spec: &str,
    link_spec: &str,
    starts: &[u64],
    secs: u64,
    queue_bytes: u64,
) -> RunResult {
    let queue = format!("droptail:bytes={queue_bytes}");
    flows_run(spec, link_spec, starts, secs, &queue, 50)
}

/// A single flow on `const:2mbps`, 50 ms each way, a 300-ms queue (75 kB): its delivered rate
/// first reaches 80 % of the link within 10 s, and over 20–60 s it carries at least 80 % of the
/// link with a queueing delay p95 under 60 ms.
///
/// Why these numbers: ref_wnd grows by about an MSS plus MUL_INCREASE_FACTOR (2 %) of itself
/// per RTT (§4.2.2.2) from MIN_REF_WND (3000 B); 2 Mbit/s at a 100-ms RTT needs about 30 kB
/// (§4.4: target = 8·ref_wnd/s_rtt/1.2), which the 2 % compounding reaches in about 100 RTTs
/// (10 s); the bar is 10 s, half of RFC 8867 §5.1's shortest phase (20 s), in which a flow
/// must have converged to follow it (measured: 5.0 s, the additive MSS per RTT helps early).
/// 80 % is the share RFC 8867's "converge to the bottleneck capacity" is read as (as for
/// `nada`): the draft's target is ref_wnd/s_rtt divided by at least 1.2 (§4.4), which leaves
/// headroom by design. 60 ms is QDELAY_TARGET_LO: the virtual marks (§4.2.1.4) take ref_wnd
/// down fully at qdelay_avg = qdelay_target, so the queue's p95 should stay below it.
#[test]
fn converges_on_2_mbps() {
    let r = scream_run("scream", "const:2mbps", &[0], 60, 75_000);
    let model = link("const:2mbps");
    let t80 = time_to(&r, 1600.0, 60);
    let u = utilisation(&r, &model, 20.0, 60.0);
    let q = queue_p95(&r, 20.0, 60.0);
    println!("time to 1600 kbit/s: {t80:?} s; 20–60 s: utilisation {u:.3}, queueing p95 {q:.1} ms");
    assert!(t80.is_some_and(|t| t <= 10.0), "{t80:?}");
    assert!((0.8..=1.0).contains(&u), "{u}");
    assert!(q < 60.0, "{q}");
}

const STEPS: &str = "steps:1mbps@0,2.5mbps@40s,0.6mbps@60s,1mbps@80s";

/// RFC 8867 §5.1's run: 100 s, 50 ms each way, a 300-ms queue (37.5 kB, 300 ms at the first
/// 1 Mbit/s, as `gcc`'s and `nada`'s tests run it). Per phase: the utilisation over its second
/// half, the queueing p95 over the phase.
fn step_phases() -> Vec<(f64, f64, f64)> {
    let r = scream_run("scream", STEPS, &[0], 100, 37_500);
    let model = link(STEPS);
    let phases = [(0.0, 40.0), (40.0, 60.0), (60.0, 80.0), (80.0, 100.0)];
    (phases.iter())
        .map(|&(from, to)| {
            let mid = (from + to) / 2.0;
            let u = utilisation(&r, &model, mid, to);
            let q = queue_p95(&r, from, to);
            println!(
                "{from}–{to} s: over {mid}–{to} s utilisation {u:.3}; over the phase queueing p95 {q:.1} ms"
            );
            (from, u, q)
        })
        .collect()
}

/// RFC 8867 §5.1, variable available capacity with a single flow: 1 → 2.5 (40 s) → 0.6 (60 s)
/// → 1 Mbit/s (80 s). Expected: "detect the path capacity constraint and converge to the
/// bottleneck link's capacity" in each phase. Read as: over the second half of each phase the
/// flow carries at least 80 % of the capacity (the first half left for the convergence, see
/// [`converges_on_2_mbps`]), and the queueing delay's p95 over each phase stays under 250 ms
/// (below the queue's 300 ms: the flow does not live on a full queue; the bar `gcc`'s and
/// `nada`'s tests hold their steps to).
#[test]
fn follows_the_rfc8867_capacity_steps() {
    for (from, u, q) in step_phases() {
        assert!(u >= 0.8, "phase from {from} s: utilisation {u}");
        assert!(q < 250.0, "phase from {from} s: queueing p95 {q}");
    }
}

/// RFC 8867 §5.4, competing media flows with the same congestion control: three `scream`
/// flows starting at 0, 20 and 40 s on 3.5 Mbit/s, 50 ms each way, a 300-ms queue
/// (131.25 kB), 120 s. Expected: the flows converge to their fair share. Read as: Jain's
/// fairness index of their rates over the last 40 s above 0.8 (as `nada`'s test), with the
/// link at least 80 % used.
#[test]
fn three_flows_share_3_5_mbps_fairly() {
    let r = scream_run("scream", "const:3.5mbps", &[0, 20, 40], 120, 131_250);
    let rates: Vec<f64> = (0..3).map(|f| flow_kbps(&r, f, 80.0, 120.0)).collect();
    let index = jain(&rates);
    let total: f64 = rates.iter().sum();
    let q = queue_p95(&r, 80.0, 120.0);
    println!(
        "80–120 s: rates {rates:.0?} kbit/s (total {total:.0}), Jain {index:.3}, queueing p95 {q:.1} ms"
    );
    assert!(index > 0.8, "{index}");
    assert!(total >= 0.8 * 3500.0, "{total}");
}

/// Same seed, same run: the flows' delivered bytes and the feedback are identical.
#[test]
fn is_deterministic() {
    let a = scream_run("scream", "const:2mbps", &[0], 10, 75_000);
    let b = scream_run("scream", "const:2mbps", &[0], 10, 75_000);
    assert_eq!(a.log.packets.len(), b.log.packets.len());
    assert_eq!(a.log.feedback_bytes, b.log.feedback_bytes);
    assert_eq!(flow_kbps(&a, 0, 0.0, 10.0), flow_kbps(&b, 0, 0.0, 10.0));
}

/// The CE marks (packets delivered CE) and packets of flow 0 delivered in [from, to) s.
fn marked(r: &RunResult, from: f64, to: f64) -> (usize, usize) {
    let at = |s: f64| Instant::ZERO + Duration::from_secs_f64(s);
    let delivered: Vec<_> = (r.log.packets.iter())
        .filter(|p| p.flow == 0 && p.delivered.is_some_and(|d| d >= at(from) && d < at(to)))
        .collect();
    let ce = delivered.iter().filter(|p| p.header.ecn.is_ce()).count();
    (ce, delivered.len())
}

/// L4S (§4.2.1.3) against Ericsson's test record for its implementation (EricssonResearch/scream
/// `test-record.md`, 2024-10-31: SCReAM alone on a 100 Mbit/s DualPi2 bottleneck, MTU 1360,
/// 79/78/78/76/71 Mbit/s at RTT 5/10/25/50/100 ms). `scream:ecn=l4s` sends ECT(1), which the
/// DualPI2 queue (RFC 9332) puts in its L queue and marks from a 0.8–1.2 ms sojourn ramp; the
/// sender takes ref_wnd down in proportion to the marked share. 120 s per RTT, the rate over
/// 60–120 s (the 100-ms flow is still ramping at 120 s).
///
/// Checked:
/// * the L4S promise, RFC 9330 §1: queueing "about 1 ms at the 99th percentile"; read as the
///   p95 of the flow's packets under 1 ms at every RTT;
/// * the queue marks the flow (CE seen at 5–25 ms, where the flow reaches the link's limit);
/// * the same flow with `ecn=off` (Not-ECT: the Classic queue, PI2 with a 15-ms target)
///   queues longer at 10 ms, and no Not-ECT packet arrives CE;
/// * which RTTs are within 15 % of Ericsson's rate (the bar): pinned, so that a change
///   either way shows. Measured 66.8/68.0/65.9/64.0/50.9 Mbit/s, 15.5/12.8/15.5/15.8/28.3 %
///   below; only 10 ms is within 15 %. docs/scream.md gives the explanation found so far.
#[test]
fn l4s_on_ericssons_100_mbps_dualpi2_bottleneck() {
    const ERICSSON: [(u64, f64); 5] = [(5, 79.0), (10, 78.0), (25, 78.0), (50, 76.0), (100, 71.0)];
    let model = link("const:100mbps");
    let run = |spec, rtt: u64| flows_run(spec, "const:100mbps", &[0], 120, "dualpi2", rtt / 2);
    let mut within = vec![];
    for (rtt, mbps) in ERICSSON {
        let r = run("scream:ecn=l4s,max-kbps=200000", rtt);
        let got = flow_kbps(&r, 0, 60.0, 120.0) / 1000.0;
        let q = queue_p95(&r, 60.0, 120.0);
        let (ce, n) = marked(&r, 60.0, 120.0);
        let gap = (mbps - got) / mbps;
        println!(
            "RTT {rtt} ms: {got:.1} Mbit/s (Ericsson {mbps}, {:.1} % below), utilisation {:.3}, \
             queueing p95 {q:.2} ms, CE {ce} of {n}",
            gap * 100.0,
            utilisation(&r, &model, 60.0, 120.0)
        );
        assert!(q < 1.0, "RTT {rtt} ms: queueing p95 {q} ms");
        if rtt <= 25 {
            assert!(
                ce > 0,
                "RTT {rtt} ms: no packet marked: the L queue did not see ECT(1)"
            );
        }
        if gap.abs() <= 0.15 {
            within.push(rtt);
        }
    }
    let classic = run("scream:max-kbps=200000", 10);
    let qc = queue_p95(&classic, 60.0, 120.0);
    let l4s = queue_p95(&run("scream:ecn=l4s,max-kbps=200000", 10), 60.0, 120.0);
    println!("RTT 10 ms, ecn=off: queueing p95 {qc:.2} ms; the RTTs within 15 %: {within:?}");
    assert_eq!(
        marked(&classic, 0.0, 120.0).0,
        0,
        "a Not-ECT packet arrived CE"
    );
    assert!(l4s < qc, "l4s {l4s} ms against classic {qc} ms");
    assert_eq!(
        within,
        [10],
        "the RTTs within 15 % of Ericsson's figures changed"
    );
}
