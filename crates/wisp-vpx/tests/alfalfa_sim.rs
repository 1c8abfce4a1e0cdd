//! `alfalfa:codec=vp8` in the simulator: VP8 (libvpx) behind the scheme end to end, on the
//! Verizon LTE trace pair (8 s), with and without 5% loss each way. What can fail: no frame shown,
//! a receiver's picture that is not the sender's reconstruction (its SSIM, measured by the
//! receiver on what it decoded, must equal the sender's, measured on its mirror decoder: a
//! receiver that lost nothing), a key frame or intra frame after state 0, quality outside what
//! VP8 gives this clip, and two runs that differ.

use std::path::PathBuf;
use std::sync::Arc;
use wisp_core::Duration;
use wisp_core::scheme::SchemeConfig;
use wisp_core::scheme::alfalfa::{
    AlfalfaConfig, FrameRecord, InjectedCodecs, VideoCodec, VideoLog,
};
use wisp_core::video::y4m;
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::loss::LossSpec;
use wisp_sim::sim::Scenario;
use wisp_vpx::{Vp8Codecs, Vp8Options};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn trace(name: &str) -> LinkModel {
    LinkSpec::Trace {
        path: root().join("traces/cellular").join(name),
        unit: wisp_sim::trace::TraceUnit::Millis,
    }
    .load()
    .unwrap_or_else(|e| panic!("loading traces/cellular/{name}: {e}"))
}

fn clip() -> Arc<y4m::Clip> {
    let bytes = std::fs::read(root().join("media/bigbuckbunny-qcif-3s.y4m")).unwrap();
    Arc::new(y4m::parse(&bytes).unwrap())
}

const SECS: u64 = 8;

fn run(loss: f64) -> (Vec<FrameRecord>, VideoLog) {
    let log = VideoLog::default();
    let codecs = Vp8Codecs::new(clip(), Vp8Options::default()).unwrap();
    let mut config: AlfalfaConfig = "alfalfa:codec=vp8"
        .parse::<SchemeConfig>()
        .map(|c| match c {
            SchemeConfig::Alfalfa(a) => *a,
            other => panic!("{other:?}"),
        })
        .unwrap();
    assert_eq!(config.codec, VideoCodec::Vp8);
    config.codecs = Some(InjectedCodecs(Arc::new(codecs)));
    config.log = Some(log.clone());
    // For the displayed metric, measured on the decoded pictures.
    log.keep_pictures();
    let mut s = Scenario::new(
        trace("Verizon-LTE-short.down"),
        SchemeConfig::Alfalfa(Box::new(config)),
    );
    s.reverse = Some(trace("Verizon-LTE-short.up"));
    s.run.duration = Duration::from_secs(SECS);
    if loss > 0.0 {
        s.loss = LossSpec::Bernoulli(loss);
        s.reverse_loss = LossSpec::Bernoulli(loss);
    }
    wisp_sim::run::run(&s, None).unwrap();
    (log.frames(), log)
}

#[test]
fn vp8_runs_end_to_end_in_the_simulator() {
    for loss in [0.0, 0.05] {
        let (frames, log) = run(loss);
        let shown: Vec<&FrameRecord> = frames.iter().filter(|f| f.display.is_some()).collect();
        let captured = log.captured();
        eprintln!(
            "vp8, loss {loss}: {} of {captured} shown, {} coded, overshoot {:?}",
            shown.len(),
            frames.len(),
            log.overshoot()
        );
        // 25 pictures/s for 8 s; most shown (the model codec shows 85% without loss, 73% at
        // 5%: a wide margin below those).
        assert!(captured >= 190, "{captured} captured");
        assert!(
            shown.len() as f64 >= 0.5 * captured as f64,
            "{} of {captured} shown",
            shown.len()
        );
        // Every shown picture is the sender's reconstruction, bit for bit as far as SSIM sees.
        assert_eq!(log.ssim_mismatch(), 0);
        // No intra frame after state 0: none coded from black once a later state was
        // acknowledged, and no key frame in the VP8 bitstream at all.
        assert!(frames.iter().all(|f| !f.intra));
        assert_eq!(log.key_frames(), 0);
        // VP8 on this clip: SSIM between 4.9 dB (q 63) and 25.5 dB (q 0) on average per
        // quantiser (the rate–quality table measured with wisp-vpx); one frame can leave that
        // range a little, so each frame gets a wider one and the mean the table's.
        for f in &shown {
            assert!(
                f.ssim_db.is_finite() && (3.0..45.0).contains(&f.ssim_db),
                "state {:?}: {} dB",
                f.state,
                f.ssim_db
            );
        }
        let mean = shown.iter().map(|f| f.ssim_db).sum::<f64>() / shown.len() as f64;
        assert!((4.9..25.5).contains(&mean), "mean SSIM {mean} dB");
        // Overshoot: a real coding can exceed its trial by a few bytes, not more.
        let (over, over_bytes) = log.overshoot();
        assert!(
            over_bytes <= 64 * over,
            "{over} frames, {over_bytes} bytes over"
        );
        // `bytes` is the diff as coded: its 15-byte header and a VP8 payload.
        assert!(frames.iter().all(|f| f.bytes > 15));
        displayed_is_measured_on_the_decoded_pictures(&frames, &log);
    }
}

/// The displayed metric with VP8: each kept picture against its own source is the SSIM the
/// receiver measured when it decoded it; against the current source (what the screen shows at
/// each capture instant) it scores lower on average, since the picture on screen is at least
/// one picture old; and the model codec's approximation applied to the same frames stays close
/// (docs/alfalfa.md: within 0.2 dB mean on whole traces; here a wider 1 dB).
fn displayed_is_measured_on_the_decoded_pictures(frames: &[FrameRecord], log: &VideoLog) {
    for f in frames.iter().filter(|f| f.display.is_some()) {
        let own = log.screen_ssim_db(f.state, u64::from(f.source)).unwrap();
        assert_eq!(own.to_bits(), f.ssim_db.to_bits(), "state {:?}", f.state);
    }
    let screen = wisp_sim::reproduce::alfalfa::screen_of(log, 25);
    assert_eq!(screen.quality, "measured");
    assert_eq!(screen.samples.len() as u64, log.captured());
    let rated: Vec<(f64, f64)> = screen
        .samples
        .iter()
        .zip(&screen.approx)
        .filter_map(|(s, a)| Some((s.ssim_db?, (*a)?)))
        .collect();
    let blank = screen.samples.iter().filter(|s| s.frame.is_none()).count();
    assert_eq!(rated.len() + blank, screen.samples.len());
    assert!(blank < 10, "{blank} blank instants");
    let n = rated.len() as f64;
    let measured = rated.iter().map(|r| r.0).sum::<f64>() / n;
    let approx = rated.iter().map(|r| r.1).sum::<f64>() / n;
    let shown: Vec<f64> = frames
        .iter()
        .filter(|f| f.display.is_some())
        .map(|f| f.ssim_db)
        .collect();
    let per_frame = shown.iter().sum::<f64>() / shown.len() as f64;
    eprintln!(
        "displayed SSIM {measured:.2} dB (approximation {approx:.2}), per frame {per_frame:.2}"
    );
    assert!(measured < per_frame, "{measured} vs {per_frame}");
    assert!((measured - approx).abs() < 1.0, "{measured} vs {approx}");
}

#[test]
fn vp8_runs_are_deterministic() {
    let (a, la) = run(0.05);
    let (b, lb) = run(0.05);
    assert!(!a.is_empty());
    assert_eq!(a, b);
    // The displayed metric too (measured on the decoded pictures).
    let (sa, sb) = (
        wisp_sim::reproduce::alfalfa::screen_of(&la, 25),
        wisp_sim::reproduce::alfalfa::screen_of(&lb, 25),
    );
    assert_eq!(sa, sb);
}
