//! Traffic sources: what an application gives the flow driver to send.
//!
//! * [`Source::Bulk`]: always backlogged (a file transfer).
//! * [`Source::Media`]: a real-time call — a video encoder model and an audio stream — shared by
//!   every rate-based scheme; see [`MediaSource`].

use crate::packet::Content;
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// The random stream a source draws from (seeded by whoever builds the flow: the simulator
/// derives it from the run's master seed).
pub type SourceRng = ChaCha8Rng;

/// An always-backlogged source (a bulk transfer): it always has data.
#[derive(Clone, Debug)]
pub struct BulkSource {
    /// The smallest packet it sends when a window allows less than a full packet; a window
    /// smaller than this sends nothing. Equal to the MTU, only full-size packets leave.
    pub min_packet: DataSize,
    /// Bytes still to send: a finite transfer ([`Source::limit`]); `None`: always backlogged.
    pub left: Option<u64>,
    /// When it offers nothing ([`Source::pause`]).
    pub pauses: Pauses,
    /// The end of the pause the last [`Source::advance`] fell in, if it fell in one.
    pub paused_until: Option<Instant>,
}

/// Windows `[from, to)` during which a source offers nothing: a paused call captures no frame
/// and no audio, a paused bulk transfer has nothing to send. Empty: never paused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pauses(Vec<(Instant, Instant)>);

impl Pauses {
    /// Adds the window `[from, to)` (none if empty).
    pub fn add(&mut self, from: Instant, to: Instant) {
        if from < to {
            self.0.push((from, to));
            self.0.sort();
        }
    }

    /// The end of the window `t` falls in, if it falls in one.
    pub fn resume_at(&self, t: Instant) -> Option<Instant> {
        (self.0.iter())
            .filter(|&&(a, b)| a <= t && t < b)
            .map(|&(_, b)| b)
            .max()
    }
}

/// What a flow sends.
#[derive(Clone, Debug)]
pub enum Source {
    Bulk(BulkSource),
    Media(Box<MediaSource>),
}

impl Source {
    /// A bulk source that only sends full `mtu`-size packets.
    pub fn bulk(mtu: DataSize) -> Self {
        Source::Bulk(BulkSource {
            min_packet: mtu,
            left: None,
            pauses: Pauses::default(),
            paused_until: None,
        })
    }

    /// A media source (see [`MediaSource`]); without `rng` the model has no size noise.
    /// `ip_udp_header` is the path's IP and UDP header bytes
    /// ([`SchemeContext::ip_udp_header`](crate::scheme::SchemeContext::ip_udp_header)).
    pub fn media(
        config: MediaConfig,
        rng: Option<SourceRng>,
        mtu: DataSize,
        ip_udp_header: DataSize,
    ) -> Self {
        Source::Media(Box::new(MediaSource::new(config, rng, mtu, ip_udp_header)))
    }

    /// Makes a bulk source a finite transfer with `bytes` more to send: `bytes` from now on if
    /// it was unlimited, else added to what it has left (a transport giving back the bytes of
    /// lost packets, to send them again). No-op for a media source.
    pub fn limit(&mut self, bytes: u64) {
        if let Source::Bulk(b) = self {
            b.left = Some(b.left.map_or(bytes, |l| l + bytes));
        }
    }

    /// Pauses the source over `[from, to)`: it offers nothing then (a media source captures no
    /// frame and no audio packet due in the window, and sends what it had queued before; a
    /// bulk source has nothing to send). The flow's controller goes on: only its data stops.
    pub fn pause(&mut self, from: Instant, to: Instant) {
        match self {
            Source::Bulk(b) => b.pauses.add(from, to),
            Source::Media(m) => m.pauses.add(from, to),
        }
    }

    /// Lets a time-driven source (a media encoder) produce data up to `now`, at `target` if the
    /// controller is rate-based; a bulk source learns whether `now` is in a pause.
    pub fn advance(&mut self, now: Instant, target: Option<Bitrate>) {
        match self {
            Source::Bulk(b) => b.paused_until = b.pauses.resume_at(now),
            Source::Media(m) => m.advance(now, target),
        }
    }

    /// The next packet's size and content, at most `mtu` and at most `limit` if given.
    pub fn peek(&self, mtu: DataSize, limit: Option<DataSize>) -> Option<(DataSize, Content)> {
        match self {
            Source::Bulk(b) => {
                let size = limit.map_or(mtu, |l| l.min(mtu));
                (size >= b.min_packet.min(mtu)
                    && size > DataSize::ZERO
                    && b.left != Some(0)
                    && b.paused_until.is_none())
                .then_some((size, Content::Bulk))
            }
            Source::Media(m) => m
                .peek()
                .filter(|&(size, _)| limit.is_none_or(|l| size <= l)),
        }
    }

    /// Removes the packet [`Source::peek`] returned.
    pub fn pop(&mut self, size: DataSize) {
        match self {
            Source::Bulk(b) => {
                if let Some(l) = b.left.as_mut() {
                    *l = l.saturating_sub(size.bytes());
                }
            }
            Source::Media(m) => m.pop(),
        }
    }

    /// How long the next packet has waited in the source (`None` for a bulk source or an
    /// audio packet).
    pub fn waited(&self, now: Instant) -> Option<Duration> {
        match self {
            Source::Bulk(_) => None,
            Source::Media(m) => m.waited(now),
        }
    }

    /// Discards the queued video packets that have waited longer than `limit` at `now`, and
    /// asks the encoder for a key frame if any went (a sender's discard of its RTP queue).
    /// Returns the bytes discarded.
    pub fn discard_older(&mut self, now: Instant, limit: Duration) -> DataSize {
        match self {
            Source::Bulk(_) => DataSize::ZERO,
            Source::Media(m) => m.discard_older(now, limit),
        }
    }

    /// Bytes ready to send; `None` if unlimited.
    pub fn backlog(&self) -> Option<DataSize> {
        match self {
            Source::Bulk(b) if b.paused_until.is_some() => Some(DataSize::ZERO),
            Source::Bulk(b) => b.left.map(DataSize::from_bytes),
            Source::Media(m) => Some(m.backlog()),
        }
    }

    /// When the source next produces data on its own (a frame, or the end of a pause), if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Source::Bulk(b) => b.paused_until,
            Source::Media(m) => m.next_event(),
        }
    }

    /// Asks a media source for a key frame at its next frame (no-op for other sources).
    pub fn request_key_frame(&mut self) {
        if let Source::Media(m) = self {
            m.request_key_frame();
        }
    }
}

/// RTP header bytes on every media packet.
pub const RTP_HEADER: DataSize = DataSize::from_bytes(12);

/// Parameters of the media source. `Default` is the encoder of the GCC Wi-Fi paper (ANRW'16
/// §4.2: 30 frames/s, 50–2500 kbit/s) with Opus-like audio.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaConfig {
    /// Video frames per second (0: no video).
    pub fps: u32,
    /// The encoder's rate range.
    pub min_rate: Bitrate,
    pub max_rate: Bitrate,
    /// Time constant of the encoder's first-order response to a new target.
    pub lag: Duration,
    /// Standard deviation of the log of a frame's size factor (log-normal, mean 1).
    pub size_sigma: f64,
    /// A key frame is this many times a nominal frame.
    pub key_frame_factor: f64,
    /// Frames over which the encoder pays back a key frame's excess.
    pub key_frame_payback: u32,
    /// Periodic key frames (besides the first frame and requests), if any.
    pub key_frame_interval: Option<Duration>,
    /// Largest RTP payload of a packet.
    pub max_payload: DataSize,
    /// Audio codec rate (0: no audio).
    pub audio_rate: Bitrate,
    /// Audio packet interval.
    pub audio_interval: Duration,
}

impl Default for MediaConfig {
    fn default() -> Self {
        MediaConfig {
            fps: 30,
            min_rate: Bitrate::from_kbps(50),
            max_rate: Bitrate::from_kbps(2500),
            lag: Duration::from_millis(100),
            size_sigma: 0.15,
            key_frame_factor: 4.0,
            key_frame_payback: 15,
            key_frame_interval: None,
            max_payload: DataSize::from_bytes(1200),
            audio_rate: Bitrate::from_kbps(32),
            audio_interval: Duration::from_millis(20),
        }
    }
}

impl MediaConfig {
    /// The default source encoding within `min`..`max`, with an audio stream of `audio` (0: none).
    pub fn with_rates(min: Bitrate, max: Bitrate, audio: Bitrate) -> Self {
        MediaConfig {
            min_rate: min,
            max_rate: max,
            audio_rate: audio,
            ..MediaConfig::default()
        }
    }
}

/// Counters of what a media source produced.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MediaStats {
    pub frames: u64,
    pub key_frames: u64,
    pub audio_packets: u64,
    /// Payload bytes of all video frames.
    pub video_bytes: u64,
    /// The encoder's current rate (after its lag), bit/s.
    pub encoder_rate_bps: f64,
    /// Video packets discarded from the queue before they were sent
    /// ([`MediaSource::discard_older`]).
    pub discarded_packets: u64,
}

/// A real-time call: a video encoder model and an audio stream, packetised for the pacer.
///
/// **Video.** A frame is captured every 1/`fps` s. The encoder follows the controller's target
/// with a lag: at each frame its rate moves towards the video target by a first-order step,
///
/// ```text
/// r(k) = r(k−1) + (1 − e^(−Δ/τ)) · (v − r(k−1)),   Δ = 1/fps, τ = lag (100 ms),
/// v = clamp((A − audio wire rate) · P/(P + 40 B), min_rate, max_rate)
/// ```
///
/// (A the target; P/(P + 40) removes the RTP + IP/UDP header share at full-size payloads P), so
/// a step in the target is 85 % followed after ~0.2 s (a few frames, as a real encoder's rate
/// control re-targets within a few frames). The first frame starts at *v*. A frame's
/// payload is `r(k)/(8·fps) · X`, with X log-normal (σ = 0.15, mean 1) from the injected random
/// stream, so frame sizes scatter around the rate as a real encoder's do. The first frame, every
/// requested frame ([`MediaSource::request_key_frame`]) and, if configured, periodic frames are
/// key frames, 4× a nominal frame; the excess is paid back by shrinking the next 15 frames
/// evenly (an encoder's rate control keeps its average). Frames never drop below 100 bytes.
///
/// **Audio.** One packet every 20 ms of `audio_rate × 20 ms` payload (32 kbit/s: 80 B).
///
/// **Packetisation.** A frame of *S* payload bytes becomes ⌈S/P⌉ packets of (nearly) equal
/// payload, P = 1200 B at most (and at most the MTU − 40 B); each carries a 12-byte RTP header and
/// 28 bytes of IP/UDP. Audio packets go ahead of queued video packets; otherwise first in, first
/// out.
///
/// Without a random stream the model is deterministic (X = 1).
#[derive(Clone, Debug)]
pub struct MediaSource {
    config: MediaConfig,
    rng: Option<SourceRng>,
    /// Header bytes of every packet: RTP's and the path's IP and UDP headers.
    header: u64,
    max_payload: u64,
    start: Option<Instant>,
    next_frame: u64,
    next_audio: u64,
    encoder_rate: Option<f64>,
    key_requested: bool,
    last_key: Option<Instant>,
    payback_left: u32,
    payback_per_frame: f64,
    video: VecDeque<(DataSize, Content)>,
    /// When each packet of `video` was queued (its frame's time).
    video_queued: VecDeque<Instant>,
    audio: VecDeque<(DataSize, Content)>,
    backlog: u64,
    stats: MediaStats,
    /// When no frame and no audio is captured ([`Source::pause`]).
    pauses: Pauses,
}

impl MediaSource {
    /// A source whose packets leave with RTP's header and `ip_udp_header` bytes of IP and UDP
    /// headers (IPv4's 28, [`IP_UDP_OVERHEAD`](crate::packet::IP_UDP_OVERHEAD), in the simulator; 48 over IPv6) around their
    /// payload, at most `mtu` in all.
    pub fn new(
        config: MediaConfig,
        rng: Option<SourceRng>,
        mtu: DataSize,
        ip_udp_header: DataSize,
    ) -> Self {
        let header = RTP_HEADER.bytes() + ip_udp_header.bytes();
        let max_payload = config
            .max_payload
            .bytes()
            .min(mtu.bytes().saturating_sub(header))
            .max(1);
        MediaSource {
            config,
            rng,
            header,
            max_payload,
            start: None,
            next_frame: 0,
            next_audio: 0,
            encoder_rate: None,
            key_requested: false,
            last_key: None,
            payback_left: 0,
            payback_per_frame: 0.0,
            video: VecDeque::new(),
            video_queued: VecDeque::new(),
            audio: VecDeque::new(),
            backlog: 0,
            stats: MediaStats::default(),
            pauses: Pauses::default(),
        }
    }

    pub fn stats(&self) -> MediaStats {
        self.stats
    }

    /// The next frame is a key frame.
    pub fn request_key_frame(&mut self) {
        self.key_requested = true;
    }

    fn frame_time(&self, start: Instant, k: u64) -> Option<Instant> {
        (self.config.fps > 0)
            .then(|| start + Duration::from_nanos(k * 1_000_000_000 / u64::from(self.config.fps)))
    }

    fn audio_time(&self, start: Instant, k: u64) -> Option<Instant> {
        (self.config.audio_rate > Bitrate::ZERO && !self.config.audio_interval.is_zero())
            .then(|| start + self.config.audio_interval * k)
    }

    /// When the source next produces a frame or an audio packet (after it has started); in a
    /// pause, when the pause ends.
    pub fn next_event(&self) -> Option<Instant> {
        let start = self.start?;
        let next = [
            self.frame_time(start, self.next_frame),
            self.audio_time(start, self.next_audio),
        ]
        .into_iter()
        .flatten()
        .min()?;
        Some(self.pauses.resume_at(next).unwrap_or(next))
    }

    /// Produces every frame and audio packet due at or before `now`.
    pub fn advance(&mut self, now: Instant, target: Option<Bitrate>) {
        let start = *self.start.get_or_insert(now);
        loop {
            let tf = self.frame_time(start, self.next_frame);
            let ta = self.audio_time(start, self.next_audio);
            match (tf, ta) {
                (_, Some(a)) if a <= now && tf.is_none_or(|f| a <= f) => {
                    if self.pauses.resume_at(a).is_none() {
                        self.emit_audio();
                    }
                    self.next_audio += 1;
                }
                (Some(f), _) if f <= now => {
                    if self.pauses.resume_at(f).is_none() {
                        self.emit_frame(f, target);
                    }
                    self.next_frame += 1;
                }
                _ => break,
            }
        }
    }

    fn audio_payload(&self) -> u64 {
        (self.config.audio_rate * self.config.audio_interval)
            .bytes()
            .max(1)
    }

    fn emit_audio(&mut self) {
        let size = DataSize::from_bytes(self.audio_payload() + self.header);
        self.audio.push_back((size, Content::Audio));
        self.backlog += size.bytes();
        self.stats.audio_packets += 1;
    }

    /// The video encoder's share of `target`, bit/s.
    fn video_target(&self, target: Bitrate) -> f64 {
        let c = &self.config;
        let audio_wire = if self.audio_time(Instant::ZERO, 0).is_some() {
            (self.audio_payload() + self.header) as f64 * 8.0 / c.audio_interval.as_secs_f64()
        } else {
            0.0
        };
        let p = self.max_payload as f64;
        let v = (target.bps() as f64 - audio_wire) * p / (p + self.header as f64);
        v.clamp(
            c.min_rate.bps() as f64,
            c.max_rate.bps().max(c.min_rate.bps()) as f64,
        )
    }

    fn emit_frame(&mut self, at: Instant, target: Option<Bitrate>) {
        let fps = f64::from(self.config.fps);
        let rate = match (self.encoder_rate, target) {
            (None, Some(t)) => self.video_target(t),
            (None, None) => self.config.min_rate.bps() as f64,
            (Some(r), None) => r,
            (Some(r), Some(t)) => {
                let tau = self.config.lag.as_secs_f64();
                let step = if tau > 0.0 {
                    1.0 - (-1.0 / fps / tau).exp()
                } else {
                    1.0
                };
                r + step * (self.video_target(t) - r)
            }
        };
        self.encoder_rate = Some(rate);
        self.stats.encoder_rate_bps = rate;
        let nominal = rate / 8.0 / fps;
        let noise = match self.rng.as_mut() {
            Some(rng) => {
                let s = self.config.size_sigma;
                (s * crate::stats::standard_normal(rng) - s * s / 2.0).exp()
            }
            None => 1.0,
        };
        let periodic = self
            .config
            .key_frame_interval
            .is_some_and(|i| self.last_key.is_some_and(|l| at - l >= i));
        let key = self.stats.frames == 0 || self.key_requested || periodic;
        let mut size = nominal * noise;
        if key {
            self.key_requested = false;
            self.last_key = Some(at);
            self.stats.key_frames += 1;
            let factor = self.config.key_frame_factor.max(1.0);
            size *= factor;
            self.payback_left = self.config.key_frame_payback;
            self.payback_per_frame = if self.payback_left > 0 {
                (factor - 1.0) * nominal / f64::from(self.payback_left)
            } else {
                0.0
            };
        } else if self.payback_left > 0 {
            size -= self.payback_per_frame;
            self.payback_left -= 1;
        }
        let payload = (size.round() as u64).max(100);
        let frame = self.stats.frames as u32;
        self.stats.frames += 1;
        self.stats.video_bytes += payload;
        let n = payload.div_ceil(self.max_payload);
        for i in 0..n {
            // Equal shares; the first `payload % n` packets carry one byte more.
            let share = payload / n + u64::from(i < payload % n);
            let size = DataSize::from_bytes(share + self.header);
            self.video.push_back((
                size,
                Content::Video {
                    frame,
                    last: i + 1 == n,
                    key,
                },
            ));
            self.video_queued.push_back(at);
            self.backlog += size.bytes();
        }
    }

    /// The next packet to send: audio first.
    pub fn peek(&self) -> Option<(DataSize, Content)> {
        self.audio.front().or(self.video.front()).copied()
    }

    /// Removes the packet [`MediaSource::peek`] returned.
    pub fn pop(&mut self) {
        let p = if self.audio.is_empty() {
            self.video_queued.pop_front();
            self.video.pop_front()
        } else {
            self.audio.pop_front()
        };
        if let Some((size, _)) = p {
            self.backlog -= size.bytes();
        }
    }

    /// How long the next packet (if video) has waited since its frame was queued.
    pub fn waited(&self, now: Instant) -> Option<Duration> {
        if !self.audio.is_empty() {
            return None;
        }
        self.video_queued
            .front()
            .map(|&t| now.saturating_duration_since(t))
    }

    /// Discards the queued video packets that have waited longer than `limit`; if any went,
    /// the next frame is a key frame. Returns the bytes discarded.
    pub fn discard_older(&mut self, now: Instant, limit: Duration) -> DataSize {
        let mut gone = 0;
        while self
            .video_queued
            .front()
            .is_some_and(|&t| now.saturating_duration_since(t) > limit)
        {
            self.video_queued.pop_front();
            if let Some((size, _)) = self.video.pop_front() {
                gone += size.bytes();
                self.stats.discarded_packets += 1;
            }
        }
        if gone > 0 {
            self.backlog -= gone;
            self.key_requested = true;
        }
        DataSize::from_bytes(gone)
    }

    /// Bytes queued.
    pub fn backlog(&self) -> DataSize {
        DataSize::from_bytes(self.backlog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::IP_UDP_OVERHEAD;
    use rand::SeedableRng;

    /// A limited bulk source sends its bytes and stops; bytes given back are sent again.
    #[test]
    fn a_limited_bulk_source_sends_its_size_then_what_is_given_back() {
        let mtu = DataSize::from_bytes(1500);
        let mut s = Source::bulk(mtu);
        assert_eq!(s.backlog(), None);
        s.limit(3000);
        let mut sent = 0;
        while let Some((size, _)) = s.peek(mtu, None) {
            s.pop(size);
            sent += size.bytes();
        }
        assert_eq!((sent, s.backlog()), (3000, Some(DataSize::ZERO)));
        s.limit(1500);
        assert!(s.peek(mtu, None).is_some());
    }

    /// A paused bulk source offers nothing in its pause (and wakes at its end), then sends.
    #[test]
    fn a_paused_bulk_source_offers_nothing_until_the_pause_ends() {
        let mtu = DataSize::from_bytes(1500);
        let mut s = Source::bulk(mtu);
        s.pause(Instant::from_secs(1), Instant::from_secs(2));
        for (t, sends) in [(0, true), (1, false), (2, true)] {
            s.advance(Instant::from_secs(t), None);
            assert_eq!(s.peek(mtu, None).is_some(), sends, "at {t} s");
        }
        s.advance(Instant::from_millis(1500), None);
        assert_eq!(s.poll_timeout(), Some(Instant::from_secs(2)));
        assert_eq!(s.backlog(), Some(DataSize::ZERO));
    }

    /// A paused media source captures nothing due in its pause: no backlog of the paused time
    /// at the resume, and it next wakes at the resume.
    #[test]
    fn a_paused_media_source_captures_nothing_in_its_pause() {
        let mut s = Source::media(MediaConfig::default(), None, MTU, IP_UDP_OVERHEAD);
        let rate = Some(Bitrate::from_kbps(1000));
        s.pause(Instant::from_secs(1), Instant::from_secs(3));
        s.advance(Instant::ZERO, rate);
        while let Some((size, _)) = s.peek(MTU, None) {
            s.pop(size);
        }
        s.advance(Instant::from_millis(990), rate);
        assert!(s.backlog().is_some_and(|b| b > DataSize::ZERO));
        while let Some((size, _)) = s.peek(MTU, None) {
            s.pop(size);
        }
        s.advance(Instant::from_millis(2999), rate);
        assert_eq!(s.backlog(), Some(DataSize::ZERO));
        assert_eq!(s.poll_timeout(), Some(Instant::from_secs(3)));
        // At the resume: the frame and the audio packet due then, no more.
        s.advance(Instant::from_secs(3), rate);
        let Source::Media(m) = &s else { panic!() };
        assert_eq!((m.stats().frames, m.stats().audio_packets), (31, 51));
    }

    const MTU: DataSize = DataSize::from_bytes(1500);

    fn drain(s: &mut MediaSource) -> Vec<(DataSize, Content)> {
        let mut out = vec![];
        while let Some(p) = s.peek() {
            s.pop();
            out.push(p);
        }
        out
    }

    /// A sender's discard of its queue: the video that waited longer than the limit goes (not
    /// the audio), the backlog follows, and the next frame is a key frame.
    #[test]
    fn discarding_old_video_requests_a_key_frame() {
        let mut s = MediaSource::new(MediaConfig::default(), None, MTU, IP_UDP_OVERHEAD);
        let t = Instant::from_secs(1);
        s.advance(t, Some(Bitrate::from_kbps(1000)));
        let queued = s.backlog();
        assert!(queued > DataSize::ZERO);
        // The first frame (a key frame) and the first audio packet at t.
        assert_eq!(s.waited(t + Duration::from_millis(5)), None, "audio first");
        assert_eq!(
            s.discard_older(t + Duration::from_millis(10), Duration::from_millis(10)),
            DataSize::ZERO
        );
        let gone = s.discard_older(t + Duration::from_millis(11), Duration::from_millis(10));
        assert!(gone > DataSize::ZERO);
        assert_eq!(s.backlog() + gone, queued);
        assert!(s.stats().discarded_packets >= 1);
        // Only the audio is left.
        assert_eq!(
            drain(&mut s)
                .iter()
                .filter(|p| p.1 != Content::Audio)
                .count(),
            0
        );
        let keys = s.stats().key_frames;
        s.advance(
            t + Duration::from_millis(34),
            Some(Bitrate::from_kbps(1000)),
        );
        assert_eq!(s.stats().key_frames, keys + 1);
    }

    #[test]
    fn frames_follow_the_target_rate_over_time() {
        let mut s = MediaSource::new(
            MediaConfig::default(),
            Some(SourceRng::seed_from_u64(7)),
            MTU,
            IP_UDP_OVERHEAD,
        );
        let target = Bitrate::from_kbps(1000);
        let mut bytes = 0u64;
        let mut t = Instant::ZERO;
        while t < Instant::from_secs(20) {
            s.advance(t, Some(target));
            bytes += drain(&mut s).iter().map(|p| p.0.bytes()).sum::<u64>();
            t = s.next_event().unwrap();
        }
        // The wire rate (headers included) is the target within noise.
        let kbps = bytes as f64 * 8.0 / 20.0 / 1e3;
        assert!((kbps - 1000.0).abs() < 30.0, "{kbps}");
        let st = s.stats();
        assert_eq!(st.frames, 600);
        assert_eq!(st.audio_packets, 1000);
        assert_eq!(st.key_frames, 1);
    }

    #[test]
    fn packetisation_and_priorities() {
        let mut s = MediaSource::new(MediaConfig::default(), None, MTU, IP_UDP_OVERHEAD);
        s.advance(Instant::ZERO, Some(Bitrate::from_kbps(2000)));
        let pkts = drain(&mut s);
        // Audio first, then the key frame in equal packets of at most 1200 B payload.
        assert_eq!(pkts[0], (DataSize::from_bytes(80 + 40), Content::Audio));
        let video: Vec<_> = pkts[1..].to_vec();
        assert!(video.iter().all(|p| p.0.bytes() <= 1240));
        let max = video.iter().map(|p| p.0.bytes()).max().unwrap();
        let min = video.iter().map(|p| p.0.bytes()).min().unwrap();
        assert!(max - min <= 1);
        assert!(matches!(
            video.last().unwrap().1,
            Content::Video {
                frame: 0,
                last: true,
                key: true
            }
        ));
        assert!(video[..video.len() - 1].iter().all(|p| matches!(
            p.1,
            Content::Video {
                frame: 0,
                last: false,
                key: true
            }
        )));
        // A key frame is 4× a nominal frame: (2000k − 48k)·1200/1240 / 8 / 30 · 4 ≈ 31.5 kB.
        let payload: u64 = video.iter().map(|p| p.0.bytes() - 40).sum();
        let nominal = (2_000_000.0 - 48_000.0) * 1200.0 / 1240.0 / 8.0 / 30.0;
        assert!((payload as f64 - 4.0 * nominal).abs() < 2.0, "{payload}");
        assert_eq!(s.backlog(), DataSize::ZERO);
    }

    #[test]
    fn the_encoder_lags_a_step_and_key_frames_come_on_request() {
        let mut s = MediaSource::new(MediaConfig::default(), None, MTU, IP_UDP_OVERHEAD);
        let frame = |k: u64| Instant::ZERO + Duration::from_nanos(k * 1_000_000_000 / 30);
        s.advance(frame(0), Some(Bitrate::from_kbps(500)));
        let r0 = s.stats().encoder_rate_bps;
        // Step to 1500 kbit/s: one frame later the encoder has moved 1 − e^(−Δ/τ) of it
        // (Δ = 1/30 s, τ = 100 ms: 28 %).
        s.advance(frame(1), Some(Bitrate::from_kbps(1500)));
        let r1 = s.stats().encoder_rate_bps;
        let v = s.video_target(Bitrate::from_kbps(1500));
        assert!(((r1 - r0) / (v - r0) - (1.0 - (-1.0f64 / 3.0).exp())).abs() < 1e-9);
        // After 1 s (30 frames) it is within 1 % of the target.
        s.advance(frame(31), Some(Bitrate::from_kbps(1500)));
        assert!((s.stats().encoder_rate_bps - v).abs() / v < 0.01);
        drain(&mut s);
        s.request_key_frame();
        s.advance(frame(32), Some(Bitrate::from_kbps(1500)));
        let key = drain(&mut s)
            .iter()
            .filter(|p| matches!(p.1, Content::Video { key: true, .. }))
            .count();
        assert!(key >= 15, "{key}");
        assert_eq!(s.stats().key_frames, 2);
    }
}
