//! YUV4MPEG2 (Y4M) clips: a reader over bytes and a writer, 8-bit 4:2:0 only.
//!
//! The format (as `mjpegtools`' `yuv4mpeg(5)` defines it): a stream header line
//! `YUV4MPEG2` followed by space-separated parameters (`W` width, `H` height, `F` rate as
//! `num:den`, `I` interlacing, `A` pixel aspect, `C` colour space, `X` comments), then per frame a
//! line `FRAME` (with optional parameters) and the planes Y, U, V. Only the 8-bit 4:2:0 colour
//! spaces are accepted (`420`, `420jpeg`, `420mpeg2`, `420paldv`, or no `C` at all, which means
//! `420jpeg`); they differ only in chroma siting, which the video layer ignores. Progressive
//! (`Ip`) or unstated interlacing only.
//!
//! Parsing never panics: a bad header, an unsupported colour space, a frame header that is not
//! `FRAME`, a frame cut short are a [`Y4mError`] naming the frame and byte offset.

use core::fmt;

/// One picture, 8-bit 4:2:0: a luma plane of `width × height` and two chroma planes of
/// ⌈width/2⌉ × ⌈height/2⌉, row-major without padding.
#[derive(Clone, PartialEq, Eq)]
pub struct Picture {
    pub width: usize,
    pub height: usize,
    pub y: Vec<u8>,
    pub u: Vec<u8>,
    pub v: Vec<u8>,
}

impl fmt::Debug for Picture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Picture({}×{})", self.width, self.height)
    }
}

impl Picture {
    /// Width and height of each chroma plane.
    pub fn chroma_size(width: usize, height: usize) -> (usize, usize) {
        (width.div_ceil(2), height.div_ceil(2))
    }

    /// Bytes of one picture of this size.
    pub fn frame_bytes(width: usize, height: usize) -> usize {
        let (cw, ch) = Self::chroma_size(width, height);
        width * height + 2 * cw * ch
    }

    /// A picture of one colour (`y`, `u`, `v`): mid-grey is (128, 128, 128), black (16, 128, 128).
    pub fn filled(width: usize, height: usize, y: u8, u: u8, v: u8) -> Self {
        let (cw, ch) = Self::chroma_size(width, height);
        Picture {
            width,
            height,
            y: vec![y; width * height],
            u: vec![u; cw * ch],
            v: vec![v; cw * ch],
        }
    }
}

/// A clip: its frame rate and pictures, all of one size.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub width: usize,
    pub height: usize,
    /// Frame rate as a fraction.
    pub fps_num: u32,
    pub fps_den: u32,
    pub frames: Vec<Picture>,
}

impl Clip {
    /// Frames per second.
    pub fn fps(&self) -> f64 {
        f64::from(self.fps_num) / f64::from(self.fps_den)
    }
}

/// Why bytes are not a Y4M clip this reader accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Y4mError {
    #[error("not a Y4M stream: it does not start with \"YUV4MPEG2 \"")]
    Magic,
    #[error("the stream header has no end of line")]
    UnterminatedHeader,
    #[error("stream header parameter {param:?}: {reason}")]
    Header { param: String, reason: &'static str },
    #[error("unsupported colour space C{0} (only 8-bit 4:2:0 is read)")]
    Colourspace(String),
    #[error("unsupported interlacing I{0} (only progressive is read)")]
    Interlaced(String),
    #[error("frame {frame} at byte {offset}: expected a FRAME header")]
    FrameHeader { frame: usize, offset: usize },
    #[error("frame {frame} at byte {offset} is truncated: {needed} bytes of picture, {got} left")]
    Truncated {
        frame: usize,
        offset: usize,
        needed: usize,
        got: usize,
    },
    #[error("the clip has no frames")]
    Empty,
}

/// The largest width or height accepted (keeps a hostile header from asking for a huge buffer
/// before the data is seen to be there; every frame's size is checked against the input anyway).
pub const MAX_DIMENSION: usize = 16_384;

fn header_err(param: &str, reason: &'static str) -> Y4mError {
    Y4mError::Header {
        param: param.to_string(),
        reason,
    }
}

fn parse_dim(param: &str) -> Result<usize, Y4mError> {
    let v: usize = param[1..]
        .parse()
        .map_err(|_| header_err(param, "not a positive integer"))?;
    if v == 0 || v > MAX_DIMENSION {
        return Err(header_err(param, "must be between 1 and 16384"));
    }
    Ok(v)
}

fn parse_ratio(param: &str) -> Result<(u32, u32), Y4mError> {
    let (n, d) = param[1..]
        .split_once(':')
        .ok_or_else(|| header_err(param, "expected num:den"))?;
    let n: u32 = n
        .parse()
        .map_err(|_| header_err(param, "expected num:den"))?;
    let d: u32 = d
        .parse()
        .map_err(|_| header_err(param, "expected num:den"))?;
    Ok((n, d))
}

/// Parses a whole Y4M stream.
pub fn parse(bytes: &[u8]) -> Result<Clip, Y4mError> {
    const MAGIC: &[u8] = b"YUV4MPEG2 ";
    if !bytes.starts_with(MAGIC) {
        return Err(Y4mError::Magic);
    }
    let eol = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(Y4mError::UnterminatedHeader)?;
    let line = String::from_utf8_lossy(&bytes[MAGIC.len()..eol]);
    let (mut width, mut height, mut fps) = (None, None, None);
    for param in line.split(' ').filter(|p| !p.is_empty()) {
        match param.as_bytes()[0] {
            b'W' => width = Some(parse_dim(param)?),
            b'H' => height = Some(parse_dim(param)?),
            b'F' => {
                let (n, d) = parse_ratio(param)?;
                if n == 0 || d == 0 {
                    return Err(header_err(param, "the frame rate must be positive"));
                }
                fps = Some((n, d));
            }
            b'I' => {
                if !matches!(&param[1..], "p" | "?") {
                    return Err(Y4mError::Interlaced(param[1..].to_string()));
                }
            }
            b'C' => {
                if !matches!(&param[1..], "420" | "420jpeg" | "420mpeg2" | "420paldv") {
                    return Err(Y4mError::Colourspace(param[1..].to_string()));
                }
            }
            b'A' => {
                parse_ratio(param)?;
            }
            b'X' => {}
            _ => return Err(header_err(param, "unknown parameter")),
        }
    }
    let width = width.ok_or_else(|| header_err("W", "missing"))?;
    let height = height.ok_or_else(|| header_err("H", "missing"))?;
    let (fps_num, fps_den) = fps.ok_or_else(|| header_err("F", "missing"))?;
    let (cw, ch) = Picture::chroma_size(width, height);
    let needed = Picture::frame_bytes(width, height);
    let mut frames = Vec::new();
    let mut at = eol + 1;
    while at < bytes.len() {
        let frame = frames.len();
        let rest = &bytes[at..];
        let header_ok =
            rest.starts_with(b"FRAME") && matches!(rest.get(5), Some(b'\n') | Some(b' ') | None);
        let Some(eol) = rest.iter().position(|&b| b == b'\n').filter(|_| header_ok) else {
            return Err(Y4mError::FrameHeader { frame, offset: at });
        };
        let data = &rest[eol + 1..];
        if data.len() < needed {
            return Err(Y4mError::Truncated {
                frame,
                offset: at,
                needed,
                got: data.len(),
            });
        }
        let (y, tail) = data.split_at(width * height);
        let (u, tail) = tail.split_at(cw * ch);
        let v = &tail[..cw * ch];
        frames.push(Picture {
            width,
            height,
            y: y.to_vec(),
            u: u.to_vec(),
            v: v.to_vec(),
        });
        at += eol + 1 + needed;
    }
    if frames.is_empty() {
        return Err(Y4mError::Empty);
    }
    Ok(Clip {
        width,
        height,
        fps_num,
        fps_den,
        frames,
    })
}

/// Writes a clip as Y4M (`C420jpeg`, progressive, square pixels).
pub fn write(clip: &Clip) -> Vec<u8> {
    let mut out = header(clip.width, clip.height, clip.fps_num, clip.fps_den);
    for p in &clip.frames {
        push_frame(&mut out, p);
    }
    out
}

/// The stream header [`write()`] writes for pictures of `width × height` at `fps_num/fps_den`.
pub fn header(width: usize, height: usize, fps_num: u32, fps_den: u32) -> Vec<u8> {
    format!("YUV4MPEG2 W{width} H{height} F{fps_num}:{fps_den} Ip A1:1 C420jpeg\n").into_bytes()
}

/// Appends one picture (its `FRAME` line and planes) to a stream begun with [`header`].
pub fn push_frame(out: &mut Vec<u8>, p: &Picture) {
    out.extend_from_slice(b"FRAME\n");
    out.extend_from_slice(&p.y);
    out.extend_from_slice(&p.u);
    out.extend_from_slice(&p.v);
}

/// A fingerprint of a clip's pictures: 64-bit FNV-1a over its width, height, frame rate,
/// picture count (each as u64 little-endian) and every picture's planes in order. The sender of
/// a video flow announces it so that a receiver measuring against another clip can refuse the
/// flow; it tells clips apart by accident, not against an adversary (not cryptographic).
pub fn fingerprint(clip: &Clip) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(PRIME);
        }
    };
    for n in [
        clip.width as u64,
        clip.height as u64,
        u64::from(clip.fps_num),
        u64::from(clip.fps_den),
        clip.frames.len() as u64,
    ] {
        eat(&n.to_le_bytes());
    }
    for p in &clip.frames {
        eat(&p.y);
        eat(&p.u);
        eat(&p.v);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Both shipped clips (`media/`, see its README) parse as 75 QCIF pictures at 25 frames/s.
    #[test]
    fn the_shipped_clips_parse() {
        let media = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../media");
        for name in ["bigbuckbunny-qcif-3s.y4m", "astronaut-talking-qcif-3s.y4m"] {
            let clip = parse(&std::fs::read(media.join(name)).unwrap()).unwrap();
            let shape = (clip.width, clip.height, clip.fps(), clip.frames.len());
            assert_eq!(shape, (176, 144, 25.0, 75), "{name}");
        }
    }

    /// FNV-1a 64's published test vectors (the empty input and "a"), then: one pixel or the
    /// frame rate changed changes the fingerprint; the same clip gives the same one.
    #[test]
    fn fingerprint_is_fnv1a_and_tells_clips_apart() {
        let empty = Clip {
            width: 0,
            height: 0,
            fps_num: 0,
            fps_den: 0,
            frames: vec![],
        };
        // 40 zero bytes hashed: checked against FNV-1a's definition step by step below.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for _ in 0..40 {
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(fingerprint(&empty), h);
        // The published vector for "a": 0xaf63dc4c8601ec8c.
        assert_eq!(
            (0xcbf2_9ce4_8422_2325u64 ^ u64::from(b'a')).wrapping_mul(0x0100_0000_01b3),
            0xaf63_dc4c_8601_ec8c
        );
        let a = clip(16, 8, 3);
        assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
        let mut b = a.clone();
        b.frames[2].v[5] ^= 1;
        assert_ne!(fingerprint(&a), fingerprint(&b));
        let mut c = a.clone();
        c.fps_num += 1;
        assert_ne!(fingerprint(&a), fingerprint(&c));
    }

    fn clip(w: usize, h: usize, n: usize) -> Clip {
        Clip {
            width: w,
            height: h,
            fps_num: 30000,
            fps_den: 1001,
            frames: (0..n)
                .map(|i| Picture::filled(w, h, (16 + i * 7) as u8, 100, 200))
                .collect(),
        }
    }

    #[test]
    fn a_written_clip_reads_back() {
        // Odd sizes: chroma planes round up (5×3 luma → 3×2 chroma).
        let c = clip(5, 3, 4);
        let bytes = write(&c);
        let header = "YUV4MPEG2 W5 H3 F30000:1001 Ip A1:1 C420jpeg\n".len();
        assert_eq!(bytes.len(), header + 4 * (6 + 15 + 2 * 6));
        assert_eq!(parse(&bytes).unwrap(), c);
        assert!((c.fps() - 29.97).abs() < 0.01);
    }

    #[test]
    fn ffmpeg_style_headers_and_frame_parameters_are_accepted() {
        // ffmpeg writes C420mpeg2 with X comments; frame lines may carry parameters.
        let mut b =
            b"YUV4MPEG2 W2 H2 F25:1 Ip A1:1 C420mpeg2 XYSCSS=420MPEG2 XCOLORRANGE=LIMITED\n"
                .to_vec();
        b.extend_from_slice(b"FRAME Ixyz\n");
        b.extend_from_slice(&[1, 2, 3, 4, 5, 6]);
        let c = parse(&b).unwrap();
        assert_eq!((c.width, c.height, c.fps_num, c.fps_den), (2, 2, 25, 1));
        assert_eq!(c.frames[0].y, vec![1, 2, 3, 4]);
        assert_eq!((c.frames[0].u[0], c.frames[0].v[0]), (5, 6));
    }

    #[test]
    fn bad_input_is_an_error_naming_where() {
        let good = write(&clip(4, 4, 2));
        // Truncated in the second frame's planes.
        let cut = &good[..good.len() - 3];
        assert_eq!(
            parse(cut),
            Err(Y4mError::Truncated {
                frame: 1,
                offset: good.len() - 6 - 24,
                needed: 24,
                got: 21
            })
        );
        // Garbage where a frame header should be.
        let mut g = good.clone();
        let second = good.len() - 6 - 24;
        g[second] = b'X';
        assert_eq!(
            parse(&g),
            Err(Y4mError::FrameHeader {
                frame: 1,
                offset: second
            })
        );
        assert_eq!(parse(b"RIFF...."), Err(Y4mError::Magic));
        assert_eq!(parse(b"YUV4MPEG2 W4"), Err(Y4mError::UnterminatedHeader));
        assert_eq!(parse(b"YUV4MPEG2 W4 H4 F25:1\n"), Err(Y4mError::Empty));
        assert!(matches!(
            parse(b"YUV4MPEG2 W4 H4 F25:1 C444\nFRAME\n"),
            Err(Y4mError::Colourspace(c)) if c == "444"
        ));
        assert!(matches!(
            parse(b"YUV4MPEG2 W4 H4 F25:1 It\n"),
            Err(Y4mError::Interlaced(_))
        ));
        assert!(matches!(
            parse(b"YUV4MPEG2 W4 H0 F25:1\n"),
            Err(Y4mError::Header { param, .. }) if param == "H0"
        ));
        assert!(matches!(
            parse(b"YUV4MPEG2 W4 H4 F25:0\n"),
            Err(Y4mError::Header { param, .. }) if param == "F25:0"
        ));
        assert!(matches!(
            parse(b"YUV4MPEG2 W4 H4\n"),
            Err(Y4mError::Header { param, .. }) if param == "F"
        ));
    }

    #[test]
    fn the_shipped_clip_reads() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../media/bigbuckbunny-qcif-3s.y4m"
        );
        let c = parse(&std::fs::read(path).unwrap()).unwrap();
        assert_eq!((c.width, c.height, c.fps_num, c.fps_den), (176, 144, 25, 1));
        assert_eq!(c.frames.len(), 75);
        // Real content: the luma is not flat.
        let y = &c.frames[0].y;
        let (min, max) = (y.iter().min().unwrap(), y.iter().max().unwrap());
        assert!(max - min > 100, "{min}..{max}");
    }

    proptest! {
        #[test]
        fn any_prefix_or_corruption_is_an_error_or_a_clip_never_a_panic(
            cut in 0usize..200,
            flips in proptest::collection::vec((0usize..200, any::<u8>()), 0..4),
        ) {
            let mut b = write(&clip(6, 4, 3));
            for (i, v) in flips {
                let n = b.len();
                b[i % n] = v;
            }
            b.truncate(cut.min(b.len()));
            let _ = parse(&b);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut with_magic = b"YUV4MPEG2 ".to_vec();
            with_magic.extend_from_slice(&bytes);
            let _ = parse(&bytes);
            let _ = parse(&with_magic);
        }
    }
}
