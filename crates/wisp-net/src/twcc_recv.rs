//! `wisp recv --twcc`: the receiving end of a *foreign* RTP stream (a WebRTC stack such as pion
//! or libwebrtc, with send-side bandwidth estimation) that answers with transport-wide congestion
//! control feedback ([`crate::twcc`]).
//!
//! Such a stream carries none of wisp's own header extensions, so no scheme's receiver half can
//! run on it: this mode only reads each RTP packet's transport-wide sequence number (one-byte
//! header extension, id given by `--twcc`, 2 by default as in wisp's own packets), stamps its
//! arrival with the kernel's receive timestamp, and every [`crate::twcc::FEEDBACK_INTERVAL`]
//! sends one RTCP transport-wide feedback packet (RTPFB FMT 15) to the address the RTP came
//! from. RTCP from the sender is parsed and counted; a BYE of the media SSRC ends the session.
//! The first RTP source fixes the peer and the media SSRC; datagrams from elsewhere are counted
//! as foreign. Nothing here panics on hostile input.

use crate::Clock;
use crate::report::{percentiles, progress_line};
use crate::rtp;
use crate::session::{NetError, Progress, io_ctx, listen_socket, recv_stamped};
use crate::twcc::{self, TwccRecorder};
use serde::Serialize;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use wisp_core::session::{RecvEnd, flow_timeout, idle_note};
use wisp_core::{Duration, Instant};

/// Options of `wisp recv --twcc`.
#[derive(Clone, Debug)]
pub struct TwccRecvOptions {
    pub listen: SocketAddr,
    /// The one-byte header extension id of the transport-wide sequence number.
    pub ext_id: u8,
    /// Stop this long after the first packet.
    pub duration: Option<Duration>,
    /// Stop when no packet came for this long after the flow started.
    pub idle_timeout: Duration,
    /// Feedback cadence.
    pub interval: Duration,
}

impl TwccRecvOptions {
    pub fn new(listen: SocketAddr) -> Self {
        TwccRecvOptions {
            listen,
            ext_id: rtp::ext::TRANSPORT_CC,
            duration: None,
            idle_timeout: Duration::from_secs(10),
            interval: twcc::FEEDBACK_INTERVAL,
        }
    }
}

/// The summary of `wisp recv --twcc`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TwccReceiverReport {
    pub role: &'static str,
    pub mode: &'static str,
    pub listen: String,
    pub peer: Option<String>,
    pub media_ssrc: Option<u32>,
    pub duration_s: f64,
    pub packets_received: u64,
    /// Bytes on the wire (UDP payload + IP/UDP headers).
    pub bytes_received: u64,
    pub throughput_kbps: f64,
    /// Transport-wide sequence numbers never received, in the range the feedback covered.
    pub packets_lost: u64,
    pub packets_late_or_duplicate: u64,
    pub rtcp_packets: u64,
    pub feedback_packets: u64,
    pub feedback_bytes: u64,
    /// Datagrams that were not RTP with a transport-wide sequence number, nor RTCP.
    pub malformed_packets: u64,
    pub foreign_packets: u64,
    pub read_lag_p50_us: Option<f64>,
}

#[derive(Default)]
struct State {
    peer: Option<SocketAddr>,
    media_ssrc: Option<u32>,
    first: Option<Instant>,
    last: Option<Instant>,
    packets: u64,
    bytes: u64,
    rtcp: u64,
    malformed: u64,
    foreign: u64,
    bye: bool,
    feedback_packets: u64,
    feedback_bytes: u64,
    lost: u64,
    lag_us: Vec<f64>,
}

impl State {
    fn on_datagram(
        &mut self,
        buf: &[u8],
        from: SocketAddr,
        at: Instant,
        ext_id: u8,
        rec: &mut TwccRecorder,
    ) {
        use rtc_shared::marshal::Unmarshal;
        if self.peer.is_some_and(|p| p != from) {
            self.foreign += 1;
            return;
        }
        if rtp::is_rtcp(buf) {
            let Ok(packets) = ::rtcp::packet::unmarshal(&mut &buf[..]) else {
                self.malformed += 1;
                return;
            };
            self.rtcp += 1;
            for p in &packets {
                if let Some(b) = p.as_any().downcast_ref::<::rtcp::goodbye::Goodbye>() {
                    if self.media_ssrc.is_some_and(|m| b.sources.contains(&m)) {
                        self.bye = true;
                    }
                }
            }
            return;
        }
        let mut b = buf;
        let Ok(h) = ::rtp::header::Header::unmarshal(&mut b) else {
            self.malformed += 1;
            return;
        };
        let seq = match h.get_extension(ext_id) {
            Some(v) if h.version == 2 && v.len() == 2 => u16::from_be_bytes([v[0], v[1]]),
            _ => {
                self.malformed += 1;
                return;
            }
        };
        if self.media_ssrc.is_some_and(|m| m != h.ssrc) {
            self.foreign += 1;
            return;
        }
        self.peer = Some(from);
        self.media_ssrc = Some(h.ssrc);
        self.first.get_or_insert(at);
        self.last = Some(at);
        self.packets += 1;
        self.bytes += buf.len() as u64 + u64::from(crate::ip_udp_header(&from));
        rec.on_packet(seq, h.ssrc, at);
    }

    /// Whether the session is over at `now`: the sender's BYE, `opts.duration` after the first
    /// packet, or `opts.idle_timeout` after the last one (said through `progress`).
    fn is_over(&self, now: Instant, opts: &TwccRecvOptions, progress: Progress<'_>) -> bool {
        if self.bye {
            return true;
        }
        let end = flow_timeout(now, self.first, self.last, opts.duration, opts.idle_timeout);
        if end == Some(RecvEnd::Idle) {
            progress(&idle_note(self.peer, opts.idle_timeout));
        }
        end.is_some()
    }

    /// The summary, on the socket bound to `listen`.
    fn report(mut self, listen: SocketAddr, rec: &TwccRecorder) -> TwccReceiverReport {
        let secs = match (self.first, self.last) {
            (Some(f), Some(l)) => (l - f).as_secs_f64(),
            _ => 0.0,
        };
        let lag = percentiles(&mut self.lag_us, &[0.5]);
        TwccReceiverReport {
            role: "receiver",
            mode: "twcc",
            listen: listen.to_string(),
            peer: self.peer.map(|p| p.to_string()),
            media_ssrc: self.media_ssrc,
            duration_s: secs,
            packets_received: self.packets,
            bytes_received: self.bytes,
            throughput_kbps: if secs > 0.0 {
                self.bytes as f64 * 8.0 / secs / 1e3
            } else {
                0.0
            },
            packets_lost: self.lost,
            packets_late_or_duplicate: rec.late_or_duplicate(),
            rtcp_packets: self.rtcp,
            feedback_packets: self.feedback_packets,
            feedback_bytes: self.feedback_bytes,
            malformed_packets: self.malformed,
            foreign_packets: self.foreign,
            read_lag_p50_us: lag[0],
        }
    }

    fn send_feedback(&mut self, sock: &UdpSocket, rec: &mut TwccRecorder) {
        let Some(peer) = self.peer else { return };
        let mut buf = Vec::with_capacity(1500);
        for fb in rec.take_feedback() {
            self.lost += u64::from(fb.packet_status_count) - fb.recv_deltas.len() as u64;
            buf.clear();
            if twcc::encode(&fb, &mut buf).is_ok() {
                self.feedback_packets += 1;
                self.feedback_bytes += buf.len() as u64 + u64::from(crate::ip_udp_header(&peer));
                let _ = sock.send_to(&buf, peer);
            }
        }
    }
}

/// Runs until the sender's BYE, `opts.duration` after the first packet, `opts.idle_timeout`
/// without packets, or `stop`.
pub fn recv(
    opts: &TwccRecvOptions,
    stop: &AtomicBool,
    progress: Progress<'_>,
) -> Result<TwccReceiverReport, NetError> {
    if !(1..=14).contains(&opts.ext_id) {
        return Err(NetError::Input(format!(
            "--twcc: extension id {} is not a one-byte header extension id (1–14)",
            opts.ext_id
        )));
    }
    let clock = Clock::new();
    let (sock, listen, mut waiter) = listen_socket(opts.listen, progress)?;
    progress(&format!("listening on {listen}; waiting for a sender"));
    let mut rec = TwccRecorder::new(rand::random());
    let mut s = State::default();
    let mut rx = vec![0u8; 65536];
    let mut ready = vec![];
    let mut next_feedback: Option<Instant> = None;
    let mut next_progress: Option<Instant> = None;
    let mut last_progress = 0u64;
    // Arrival instants handed to the recorder never run backwards.
    let mut floor = Instant::ZERO;
    loop {
        let now = clock.now();
        if stop.load(Ordering::Relaxed) || s.is_over(now, opts, progress) {
            break;
        }
        loop {
            match recv_stamped(&sock, &mut rx, &clock) {
                Ok((n, from, stamped, lag)) => {
                    if let Some(lag) = lag {
                        s.lag_us.push(lag.as_nanos() as f64 / 1e3);
                    }
                    s.on_datagram(&rx[..n], from, stamped.max(floor), opts.ext_id, &mut rec);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(io_ctx("receive")(e)),
            }
        }
        let now = clock.now();
        floor = now;
        if s.first.is_some() {
            let due = *next_feedback.get_or_insert(now + opts.interval);
            if now >= due {
                s.send_feedback(&sock, &mut rec);
                next_feedback = Some(now + opts.interval);
            }
            let due = *next_progress.get_or_insert(now + Duration::from_secs(1));
            if now >= due {
                progress(&progress_line(
                    "recv",
                    (now - s.first.unwrap_or(now)).as_secs_f64(),
                    (s.bytes - last_progress) as f64 * 8.0 / 1e3,
                    &format!(
                        "{} packets  {} feedback  {} lost",
                        s.packets, s.feedback_packets, s.lost
                    ),
                ));
                last_progress = s.bytes;
                next_progress = Some(due + Duration::from_secs(1));
            }
        }
        let deadline = [
            next_feedback,
            next_progress,
            s.last.map(|l| l + opts.idle_timeout),
            s.first.zip(opts.duration).map(|(f, d)| f + d),
        ]
        .into_iter()
        .flatten()
        .min();
        waiter.wait(deadline, &mut ready).map_err(io_ctx("wait"))?;
    }
    // What arrived since the last feedback.
    if rec.has_pending() {
        s.send_feedback(&sock, &mut rec);
    }
    Ok(s.report(listen, &rec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_core::packet::DataHeader;

    #[test]
    fn a_foreign_stream_over_loopback_gets_transport_wide_feedback() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = rx.local_addr().unwrap().port();
        drop(rx);
        let mut o = TwccRecvOptions::new(SocketAddr::from(([127, 0, 0, 1], port)));
        o.duration = Some(Duration::from_millis(600));
        let stop = AtomicBool::new(false);
        let h = std::thread::spawn(move || recv(&o, &stop, &mut |_| {}).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(100));
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.set_nonblocking(true).unwrap();
        // wisp's own packets carry the transport-wide sequence number as id 2 (and more that
        // this mode ignores); every third is never sent; plus one garbage datagram.
        let mut buf = vec![];
        tx.send_to(&[0x80, 96, 0], ("127.0.0.1", port)).unwrap();
        let mut feedback = vec![];
        for seq in 0..60u64 {
            if seq % 3 != 2 {
                let h = DataHeader {
                    seq,
                    size: wisp_core::DataSize::from_bytes(500),
                    ..Default::default()
                };
                rtp::encode(&h, 77, &mut buf).unwrap();
                tx.send_to(&buf, ("127.0.0.1", port)).unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            let mut b = [0u8; 1500];
            while let Ok(n) = tx.recv(&mut b) {
                feedback.push(twcc::decode(&b[..n]).unwrap());
            }
        }
        let rep = h.join().unwrap();
        let mut b = [0u8; 1500];
        while let Ok(n) = tx.recv(&mut b) {
            feedback.push(twcc::decode(&b[..n]).unwrap());
        }
        assert_eq!(rep.packets_received, 40);
        assert_eq!(rep.malformed_packets, 1);
        assert_eq!(rep.media_ssrc, Some(77));
        assert!(feedback.len() >= 4, "{feedback:?}");
        let covered: Vec<_> = feedback.iter().flat_map(|f| f.packets.clone()).collect();
        // Every sequence number in order, each with the right status, none twice.
        assert_eq!(covered.len(), 59, "{covered:?}");
        for (i, (seq, at)) in covered.iter().enumerate() {
            assert_eq!(usize::from(*seq), i);
            assert_eq!(at.is_some(), i % 3 != 2, "{covered:?}");
        }
        assert!(feedback.iter().all(|f| f.media_ssrc == 77));
    }
}
