//! Measures VP8's rate–quality curve on a clip, the table behind
//! `wisp_core::video::model::RateQuality::bbb_qcif_vp8`:
//!
//! ```sh
//! cargo run -p wisp-vpx --features libvpx --release --example rq_curve [CLIP.y4m]
//! ```
//!
//! Per quantiser: every picture coded from the previous one's state (a chain at that quantiser,
//! the first from the black state 0): the mean payload and SSIM (dB) of the predicted frames,
//! and the first frame's size over that mean (the cost from black). At quantiser 32: the size of
//! a frame predicted from a state d pictures back over one from the previous picture (the golden
//! slot refreshed every 8 pictures gives d = 1..8), fitted as 1 + a·log2 d, and each picture's
//! size over the mean (its complexity).

use std::collections::BTreeMap;
use std::sync::Arc;
use wisp_core::video::{Codec, y4m};
use wisp_vpx::{Vp8Codec, Vp8Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../media/bigbuckbunny-qcif-3s.y4m"
        )
        .to_string()
    });
    let clip = Arc::new(y4m::parse(&std::fs::read(&path)?)?);
    let n = clip.frames.len() as u32;
    println!("q,mean_bytes,mean_ssim_db,first_from_black_bytes");
    let mut from_black = vec![];
    for q in [0u8, 8, 16, 24, 32, 40, 48, 56, 63] {
        let mut c = Vp8Codec::new(clip.clone(), Vp8Options::default())?;
        let first = c.commit(0, 0, 0b011, q)?;
        let (mut bytes, mut ssim) = (0.0, 0.0);
        for k in 1..n {
            let f = c.commit(k, 0, 0b001, q)?;
            bytes += f.payload.len() as f64;
            ssim += f.ssim_db;
        }
        let m = f64::from(n - 1);
        println!(
            "{q},{:.0},{:.2},{}",
            bytes / m,
            ssim / m,
            first.payload.len()
        );
        from_black.push(first.payload.len() as f64 / (bytes / m));
    }
    println!(
        "from_black (first frame / mean predicted), by q: {:?}",
        from_black
            .iter()
            .map(|x| (x * 10.0).round() / 10.0)
            .collect::<Vec<_>>()
    );
    // Distance cost and complexity at q = 32.
    let q = 32;
    let mut c = Vp8Codec::new(clip.clone(), Vp8Options::default())?;
    c.commit(0, 0, 0b011, q)?;
    let mut golden = 0u32;
    let mut by_d: BTreeMap<u32, (f64, u32)> = BTreeMap::new();
    let mut sizes = vec![];
    for k in 1..n {
        let near = c.trial(k, 0, q)? as f64;
        let far = c.trial(k, 1, q)? as f64;
        let d = k - golden;
        let e = by_d.entry(d).or_default();
        e.0 += far / near;
        e.1 += 1;
        let refresh = if k % 8 == 0 { 0b011 } else { 0b001 };
        sizes.push(c.commit(k, 0, refresh, q)?.payload.len() as f64);
        if k % 8 == 0 {
            golden = k;
        }
    }
    // Least squares through (log2 d, ratio − 1) with no intercept, d ≥ 2.
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (&d, &(sum, cnt)) in &by_d {
        let r = sum / f64::from(cnt);
        println!("distance {d}: {r:.3} × ({cnt} frames)");
        if d >= 2 {
            let x = f64::from(d).log2();
            sxy += x * (r - 1.0) * f64::from(cnt);
            sxx += x * x * f64::from(cnt);
        }
    }
    println!("distance_cost a = {:.3}", sxy / sxx);
    let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
    let factors: Vec<String> = std::iter::once(1.0)
        .chain(sizes.iter().map(|s| s / mean))
        .map(|x| format!("{x:.2}"))
        .collect();
    println!("complexity (picture 0 set to 1): [{}]", factors.join(", "));
    Ok(())
}
