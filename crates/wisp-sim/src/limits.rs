//! The limits on every input a command reads, checked before the expensive work:
//! a file is read with a size cap ([`read_capped`], never more than the limit and one byte),
//! and counts (lines, flows, nodes) are taken before anything is built from them. A breach is
//! bad input whose message names the limit. `docs/usage.md` lists them all.

use std::io::Read;
use std::path::Path;
use wisp_core::Bitrate;

/// The largest trace file: 64 MiB (the shipped traces are at most 2.3 MB).
pub const MAX_TRACE_BYTES: u64 = 64 << 20;
/// The most lines (opportunities) a trace may have: 8,000,000.
pub const MAX_TRACE_LINES: usize = 8_000_000;
/// The largest scenario file: 8 MiB.
pub const MAX_SCENARIO_BYTES: u64 = 8 << 20;
/// The most flows a scenario may have.
pub const MAX_FLOWS: usize = u16::MAX as usize;
/// The most nodes a scenario may name.
pub const MAX_NODES: usize = 1024;
/// The most links of a scenario, each direction counted (routes are searched per flow).
pub const MAX_LINKS: usize = 4096;
/// The largest Y4M clip (`--video`): 256 MiB. (Its frames' width and height are at most
/// [`wisp_core::video::y4m::MAX_DIMENSION`].)
pub const MAX_CLIP_BYTES: u64 = 256 << 20;

/// The largest link log `wisp analyze` reads: 256 MiB.
pub const MAX_LOG_BYTES: u64 = 256 << 20;

/// The fastest link rate a spec may name (`const:`, `steps:`, `wifi-outage:` and the mobile
/// profiles' `rate` and `radio`), and the fastest average rate of a trace link: 10 Gbit/s, five
/// times the emulator's tested 2 Gbit/s and the bound of `wifi:load=udp:RATE`. A run's cost
/// grows with rate × duration (the ideal sender's deliveries are counted packet by packet:
/// 1e12 Mbit/s for 5 s took 74 s), so a faster rate is refused rather than run.
pub const MAX_LINK_RATE: Bitrate = Bitrate::from_mbps(10_000);

/// Refuses a rate above [`MAX_LINK_RATE`] (naming it).
pub fn check_link_rate(r: Bitrate) -> Result<Bitrate, String> {
    if r > MAX_LINK_RATE {
        return Err(format!(
            "the rate {r} is above the limit of 10gbps (10 Gbit/s)"
        ));
    }
    Ok(r)
}

/// A reader that fails once more than `limit` bytes came through it, with the message of
/// [`too_large`]: for inputs read as a stream (a link log), so that `/dev/zero` ends.
#[derive(Debug)]
pub struct Capped<R> {
    inner: std::io::Take<R>,
    limit: u64,
    what: &'static str,
}

impl<R: Read> Capped<R> {
    pub fn new(inner: R, limit: u64, what: &'static str) -> Self {
        Capped {
            inner: inner.take(limit + 1),
            limit,
            what,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.inner.limit() == 0 {
            return Err(std::io::Error::other(too_large(self.what, self.limit)));
        }
        Ok(n)
    }
}

/// A size in bytes as the limits are stated: `64 MiB`.
pub fn show_bytes(n: u64) -> String {
    if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n % (1 << 10) == 0 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// Reads `path`, at most `limit` bytes: a longer file (or an endless one, `/dev/zero`) is an
/// error naming the limit after reading `limit + 1` bytes at most. `what` names the input
/// (`trace`, `scenario`).
pub fn read_capped(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read the {what}: {e}"))?;
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the {what}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(what, limit));
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text.
pub fn read_text_capped(path: &Path, limit: u64, what: &str) -> Result<String, String> {
    String::from_utf8(read_capped(path, limit, what)?)
        .map_err(|_| format!("cannot read the {what}: it is not UTF-8 text"))
}

/// The message of an input larger than `limit`.
pub fn too_large(what: &str, limit: u64) -> String {
    format!(
        "the {what} is larger than the limit of {} ({limit} bytes)",
        show_bytes(limit)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_after_the_limit() {
        let e = read_capped(Path::new("/dev/zero"), 1000, "trace").unwrap_err();
        assert_eq!(
            e,
            "the trace is larger than the limit of 1000 bytes (1000 bytes)"
        );
        assert_eq!(
            too_large("scenario", MAX_SCENARIO_BYTES),
            "the scenario is larger than the limit of 8 MiB (8388608 bytes)"
        );
    }

    #[test]
    fn a_capped_stream_fails_past_its_limit() {
        let mut out = Vec::new();
        let mut r = Capped::new(&[7u8; 10][..], 10, "log");
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out.len(), 10);
        let f = std::fs::File::open("/dev/zero").unwrap();
        let e = Capped::new(f, 1 << 10, "log")
            .read_to_end(&mut out)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the log is larger than the limit of 1 KiB (1024 bytes)"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_whole() {
        let p = std::env::temp_dir().join(format!("wisp-capped-{}", std::process::id()));
        std::fs::write(&p, [b'x'; 100]).unwrap();
        assert_eq!(read_capped(&p, 100, "trace").unwrap().len(), 100);
        assert!(read_capped(&p, 99, "trace").is_err());
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(
            read_text_capped(&p, 100, "trace")
                .unwrap_err()
                .contains("not UTF-8")
        );
        std::fs::remove_file(&p).unwrap();
        assert!(
            read_capped(&p, 100, "trace")
                .unwrap_err()
                .starts_with("cannot read the trace")
        );
    }

    proptest::proptest! {
        /// Whatever the length and the limit, a file is read whole when it fits and refused,
        /// naming the limit, when it does not.
        #[test]
        fn read_capped_keeps_a_file_within_the_limit(len in 0usize..5000, limit in 0u64..5000) {
            let p = std::env::temp_dir()
                .join(format!("wisp-capped-prop-{}-{len}-{limit}", std::process::id()));
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(&p, &bytes).unwrap();
            let r = read_capped(&p, limit, "trace");
            std::fs::remove_file(&p).unwrap();
            if len as u64 <= limit {
                proptest::prop_assert_eq!(r.unwrap(), bytes);
            } else {
                proptest::prop_assert_eq!(r.unwrap_err(), too_large("trace", limit));
            }
        }
    }
}
