//! The figures of `wisp browser-call`: the getStats snapshots the two browsers' pages post
//! every 200 ms, and what is derived from them (the bandwidth estimate at fixed times, the time
//! until it reached a share of the link's rate, medians from 10 s on, rates sent and received,
//! freezes, the jitter-buffer delay). The link's own figures come from [`crate::mmlog`].

use serde::{Deserialize, Serialize};
use wisp_core::stats::quantile_of;

/// One page's figures at one instant (`null` where getStats has none). Times are from when
/// that page's connection became "connected".
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Snapshot {
    /// "sender" or "receiver" (set by the server, from the request).
    pub role: String,
    pub t_s: f64,
    /// `availableOutgoingBitrate` of the selected candidate pair: the bandwidth estimate.
    pub estimate_bps: Option<f64>,
    pub rtt_ms: Option<f64>,
    pub local_addr: Option<String>,
    pub remote_addr: Option<String>,
    pub bytes_sent: Option<f64>,
    /// The encoder's target (`targetBitrate`).
    pub target_bps: Option<f64>,
    pub frame_width: Option<f64>,
    pub frame_height: Option<f64>,
    pub frames_encoded: Option<f64>,
    pub quality_limitation: Option<String>,
    pub bytes_received: Option<f64>,
    pub packets_lost: Option<f64>,
    pub frames_decoded: Option<f64>,
    pub freeze_count: Option<f64>,
    pub freezes_s: Option<f64>,
    pub jitter_buffer_delay_s: Option<f64>,
    pub jitter_buffer_emitted: Option<f64>,
}

/// What the browsers reported, summed up.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BrowserFigures {
    /// The sender's estimate 0.2 s and 2 s after connecting (the first snapshot at or after).
    pub estimate_at_0_2s_kbps: Option<f64>,
    pub estimate_at_2s_kbps: Option<f64>,
    /// Time until the estimate first reached 80% of the link's rate (const links).
    pub time_to_80pct_s: Option<f64>,
    /// Medians over 10 s to the end.
    pub estimate_median_10s_kbps: Option<f64>,
    pub target_median_10s_kbps: Option<f64>,
    pub send_median_10s_kbps: Option<f64>,
    /// What the sender sent in the first 2 s, and from 1 s to 2 s, per second.
    pub send_first_2s_kbps: Option<f64>,
    pub send_1s_to_2s_kbps: Option<f64>,
    /// Over the whole call (bytes over time).
    pub send_kbps: Option<f64>,
    pub receive_kbps: Option<f64>,
    pub bytes_sent: Option<f64>,
    pub bytes_received: Option<f64>,
    /// The last snapshot's resolution of the sender's encoder and why it was limited, and the
    /// share of snapshots per quality-limitation reason.
    pub sent_resolution: Option<String>,
    pub quality_limitation: Option<String>,
    pub quality_limitation_shares: Vec<(String, f64)>,
    pub received_resolution: Option<String>,
    pub frames_encoded: Option<f64>,
    pub frames_decoded: Option<f64>,
    pub packets_lost: Option<f64>,
    pub freeze_count: Option<f64>,
    pub freezes_s: Option<f64>,
    /// jitterBufferDelay / jitterBufferEmittedCount at the end.
    pub jitter_buffer_ms: Option<f64>,
    pub rtt_median_ms: Option<f64>,
}

/// The median by the nearest-rank method, as everywhere in wisp.
fn median(v: Vec<f64>) -> Option<f64> {
    quantile_of(&v, 0.5)
}

/// The first snapshot at or after `t` whose `f` is known.
fn at<T>(list: &[Snapshot], t: f64, f: impl Fn(&Snapshot) -> Option<T>) -> Option<T> {
    list.iter().filter(|s| s.t_s >= t).find_map(f)
}

/// The median of `f` over snapshots from 10 s on.
fn median_from_10s(list: &[Snapshot], f: impl Fn(&Snapshot) -> Option<f64>) -> Option<f64> {
    median(
        list.iter()
            .filter(|s| s.t_s >= 10.0)
            .filter_map(f)
            .collect(),
    )
}

/// kbit/s of a byte counter between consecutive snapshots, each at the later one's time.
fn rates(list: &[Snapshot], f: impl Fn(&Snapshot) -> Option<f64>) -> Vec<(f64, f64)> {
    let known: Vec<(f64, f64)> = list.iter().filter_map(|s| Some((s.t_s, f(s)?))).collect();
    known
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].0, (w[1].1 - w[0].1) * 8.0 / (w[1].0 - w[0].0) / 1e3))
        .collect()
}

/// kbit/s of a byte counter from 0 to its last value.
fn mean_rate(list: &[Snapshot], f: impl Fn(&Snapshot) -> Option<f64>) -> Option<f64> {
    let (t, bytes) = list.iter().rev().find_map(|s| Some((s.t_s, f(s)?)))?;
    (t > 0.0).then(|| bytes * 8.0 / t / 1e3)
}

fn last<T>(list: &[Snapshot], f: impl Fn(&Snapshot) -> Option<T>) -> Option<T> {
    list.iter().rev().find_map(f)
}

fn resolution(s: &Snapshot) -> Option<String> {
    Some(format!("{}x{}", s.frame_width?, s.frame_height?))
}

/// Shares of the snapshots per quality-limitation reason, largest first.
fn limitation_shares(sender: &[Snapshot]) -> Vec<(String, f64)> {
    let reasons: Vec<&String> = sender
        .iter()
        .filter_map(|s| s.quality_limitation.as_ref())
        .collect();
    let mut shares: Vec<(String, f64)> = Vec::new();
    for r in &reasons {
        match shares.iter_mut().find(|(k, _)| k == *r) {
            Some((_, n)) => *n += 1.0,
            None => shares.push(((*r).clone(), 1.0)),
        }
    }
    for (_, n) in &mut shares {
        *n /= reasons.len() as f64;
    }
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    shares
}

/// The figures of a call; `link_kbps` is the link's rate when it is constant.
pub fn figures(
    sender: &[Snapshot],
    receiver: &[Snapshot],
    link_kbps: Option<f64>,
) -> BrowserFigures {
    let est = |s: &Snapshot| s.estimate_bps.map(|b| b / 1e3);
    let target = |s: &Snapshot| s.target_bps.map(|b| b / 1e3);
    let sent = rates(sender, |s| s.bytes_sent);
    let bytes_at = |t: f64| at(sender, t, |s| Some((s.t_s, s.bytes_sent?)));
    let first_2s = bytes_at(2.0);
    let second_s = bytes_at(1.0)
        .zip(first_2s)
        .filter(|(a, b)| b.0 > a.0)
        .map(|(a, b)| (b.1 - a.1) * 8.0 / (b.0 - a.0) / 1e3);
    let jb = last(receiver, |s| {
        let n = s.jitter_buffer_emitted?;
        let delay = s.jitter_buffer_delay_s?;
        (n > 0.0).then(|| delay / n * 1e3)
    });
    BrowserFigures {
        estimate_at_0_2s_kbps: at(sender, 0.2, est),
        estimate_at_2s_kbps: at(sender, 2.0, est),
        time_to_80pct_s: link_kbps.and_then(|l| {
            let s = sender
                .iter()
                .find(|s| est(s).is_some_and(|e| e >= 0.8 * l))?;
            Some(s.t_s)
        }),
        estimate_median_10s_kbps: median_from_10s(sender, est),
        target_median_10s_kbps: median_from_10s(sender, target),
        send_median_10s_kbps: median(sent.iter().filter(|r| r.0 >= 10.0).map(|r| r.1).collect()),
        send_first_2s_kbps: first_2s.map(|(t, b)| b * 8.0 / t / 1e3),
        send_1s_to_2s_kbps: second_s,
        send_kbps: mean_rate(sender, |s| s.bytes_sent),
        receive_kbps: mean_rate(receiver, |s| s.bytes_received),
        bytes_sent: last(sender, |s| s.bytes_sent),
        bytes_received: last(receiver, |s| s.bytes_received),
        sent_resolution: last(sender, resolution),
        quality_limitation: last(sender, |s| s.quality_limitation.clone()),
        quality_limitation_shares: limitation_shares(sender),
        received_resolution: last(receiver, resolution),
        frames_encoded: last(sender, |s| s.frames_encoded),
        frames_decoded: last(receiver, |s| s.frames_decoded),
        packets_lost: last(receiver, |s| s.packets_lost),
        freeze_count: last(receiver, |s| s.freeze_count),
        freezes_s: last(receiver, |s| s.freezes_s),
        jitter_buffer_ms: jb,
        rtt_median_ms: median(sender.iter().filter_map(|s| s.rtt_ms).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(t_s: f64, estimate_kbps: f64, bytes: f64) -> Snapshot {
        Snapshot {
            role: "sender".into(),
            t_s,
            estimate_bps: Some(estimate_kbps * 1e3),
            bytes_sent: Some(bytes),
            quality_limitation: Some(if t_s < 1.0 { "bandwidth" } else { "none" }.into()),
            ..Snapshot::default()
        }
    }

    #[test]
    fn figures_of_a_sender_that_ramps_up() {
        // 300 kbit/s, then 1,700 from 1 s; 250 kB a second sent.
        let sender: Vec<Snapshot> = (1..=60)
            .map(|i| {
                let t = f64::from(i) * 0.2;
                snap(t, if t < 1.0 { 300.0 } else { 1700.0 }, t * 250e3)
            })
            .collect();
        let f = figures(&sender, &[], Some(2000.0));
        assert_eq!(f.estimate_at_0_2s_kbps, Some(300.0));
        assert_eq!(f.estimate_at_2s_kbps, Some(1700.0));
        assert_eq!(f.time_to_80pct_s, Some(1.0));
        assert_eq!(f.estimate_median_10s_kbps, Some(1700.0));
        assert!((f.send_kbps.unwrap() - 2000.0).abs() < 1e-6);
        assert!((f.send_1s_to_2s_kbps.unwrap() - 2000.0).abs() < 1e-6);
        assert!((f.send_median_10s_kbps.unwrap() - 2000.0).abs() < 1e-6);
        assert_eq!(f.quality_limitation_shares[0].0, "none");
        assert_eq!(figures(&sender, &[], Some(3000.0)).time_to_80pct_s, None);
        assert_eq!(figures(&sender, &[], None).time_to_80pct_s, None);
    }
}
