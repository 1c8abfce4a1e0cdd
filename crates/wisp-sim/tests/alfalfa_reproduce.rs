//! `wisp reproduce alfalfa --quick` (Alfalfa's reproduction): the two 140-s LTE trace pairs, every
//! video scheme, and the 5%-loss runs on Verizon-LTE-short. Pins the acceptance checks met at
//! `--quick` (thresholds from §4 and the issue, not from wisp's output) and that every check is
//! reported; frames shown, freezes and SSIM are reported, not checked — docs/alfalfa.md.

use std::path::PathBuf;
use wisp_sim::reproduce::alfalfa;
use wisp_sim::reproduce::sprout::load_traces;

#[test]
fn quick_reproduction_meets_exactly_the_delay_intra_and_reference_checks() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces/cellular");
    let pairs = load_traces(&dir, true).unwrap();
    let o = alfalfa::Options {
        pairs,
        quick: true,
        seed: 1,
        jobs: 2,
    };
    let r = alfalfa::run(&o, &|_, _| {}).unwrap();
    assert_eq!(r.traces.len(), 4, "both directions of the two LTE pairs");
    assert_eq!(r.loss.len(), 2, "Verizon-LTE-short both ways at 5% loss");
    for t in r.traces.iter().chain(&r.loss) {
        assert_eq!(t.runs.len(), alfalfa::SCHEMES.len(), "{}", t.trace);
        for run in &t.runs {
            assert!(run.captured > 3000, "{} {}", t.trace, run.scheme);
            assert!(run.shown <= run.coded && run.coded <= run.captured);
            // The displayed metric: one sample per capture instant, each blank (before the
            // first display) or rated (the model's approximation always has a value).
            let d = &run.displayed;
            assert_eq!(d.instants, run.captured, "{} {}", t.trace, run.scheme);
            assert_eq!(run.displayed_quality, "model-approx");
            if run.shown > 0 {
                assert_eq!(d.blank + d.rated, d.instants, "{} {}", t.trace, run.scheme);
                assert!(d.blank < 250, "{} {}: {}", t.trace, run.scheme, d.blank);
                // The picture on screen at an instant was captured one interval before it at
                // the latest (frame delays are over 20 ms), and displayed at or before it, so
                // at least its frame delay old.
                assert!(d.delay_p50_ms >= 40.0, "{} {}", t.trace, run.scheme);
                // A stale picture against the current source is worse than against its own:
                // the displayed SSIM is below the shown frames' (by the approximation's
                // construction: distortions add).
                assert!(
                    d.ssim_mean_db < run.ssim_mean_db,
                    "{} {}",
                    t.trace,
                    run.scheme
                );
                assert!((0.0..=1.0).contains(&d.frozen_share));
            }
        }
    }
    // The displayed comparison is informational: reported, compared over every direction run.
    let (over_gcc, over_cbr, both, n) = r.displayed_wins();
    assert_eq!(n, r.traces.len());
    assert!(both.len() <= over_gcc.min(over_cbr));
    println!(
        "displayed: over gcc-video {over_gcc}, over cbr-video {over_cbr}, both {both:?} of {n}"
    );
    let checks = r.checks();
    for c in &checks {
        println!(
            "{}  {}: {} (expected {})",
            c.status(),
            c.claim,
            c.measured,
            c.expected
        );
    }
    // Exactly which checks hold at --quick: §4's (issue 35): the delay (p95 ≤ 200 ms; below
    // gcc-video's and cbr-video's on every direction), no intra frame after the first under
    // loss, fewer frames lost to a missing reference than the conventional codec. Frames shown
    // and SSIM are reported, not checked (§4 did not evaluate them).
    let met: Vec<(&str, bool)> = checks.iter().map(|c| (c.claim.as_str(), c.met)).collect();
    assert_eq!(checks.len(), 7, "{met:#?}");
    assert!(checks.iter().all(|c| c.met && c.applies()), "{met:#?}");
    assert!(
        checks[1]
            .claim
            .contains("below gcc-video's and cbr-video's")
    );
    assert!(checks[6].claim.contains("sprout-conventional-parity"));
    // Freezes by libwebrtc's rule are reported per run; the conventional codec under loss
    // freezes more often than alfalfa with its loss-aware rule.
    let lossy = |s: &str| {
        r.loss
            .iter()
            .find(|t| t.trace == alfalfa::MAIN_TRACE)
            .and_then(|t| t.run(s))
            .unwrap()
            .freezes
    };
    println!(
        "freezes at 5% loss: alfalfa {:?}, sprout-conventional {:?}",
        lossy("alfalfa"),
        lossy("sprout-conventional")
    );
    assert!(lossy("sprout-conventional").count > lossy("alfalfa").count);
    // The loss-aware rule shows more frames under loss than §4's rule, on both directions.
    for t in &r.loss {
        let (a, p) = (t.run("alfalfa").unwrap(), t.run("alfalfa-paper").unwrap());
        assert!(a.shown > p.shown, "{}: {} vs {}", t.trace, a.shown, p.shown);
    }
    // `closed-ticks=8` shows at least as many frames as `alfalfa` on every lossless direction;
    // `hold=on` on every direction, with and without loss.
    let shows_at_least_as_many =
        |variant: &str, traces: &mut dyn Iterator<Item = &alfalfa::TraceVideo>| {
            let mut n = 0;
            for t in traces {
                let (a, v) = (t.run("alfalfa").unwrap(), t.run(variant).unwrap());
                assert!(
                    v.shown >= a.shown,
                    "{variant} on {}: {} vs {}",
                    t.trace,
                    v.shown,
                    a.shown
                );
                n += 1;
            }
            assert!(n > 0, "{variant}: no direction compared");
        };
    shows_at_least_as_many("alfalfa-closed8", &mut r.traces.iter());
    shows_at_least_as_many("alfalfa-hold", &mut r.traces.iter().chain(&r.loss));
    // The conventional codec does recover with intra frames under loss (the comparison is real).
    let conv = r
        .loss
        .iter()
        .find(|t| t.trace == alfalfa::MAIN_TRACE)
        .and_then(|t| t.run("sprout-conventional"))
        .unwrap();
    assert!(conv.intra > 0 && conv.missing_base > 0);
}
