//! The camera of `wisp browser-call`: a given Y4M clip, or a synthetic 640×480 one.
//!
//! The synthetic clip is textured value noise (three octaves, deterministic) that pans 4 pixels
//! a frame, with a bright square crossing it and slowly drifting colours: detail and motion in
//! every frame, so that the encoder spends what its target allows (as a camera view does)
//! rather than coding a still image for nothing. 640×480 is the resolution at which the issue
//! compares Chrome (its encoder caps near 1.7 Mbit/s there). Chromium loops the file.

use crate::error::CliError;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

pub const WIDTH: usize = 640;
pub const HEIGHT: usize = 480;
pub const FPS: usize = 30;
/// Two seconds, looped by Chromium.
pub const FRAMES: usize = 60;
/// Pan per frame, pixels.
const PAN: usize = 4;

/// A deterministic hash of a lattice point to [0, 1).
fn lattice(x: i64, y: i64, octave: u64) -> f64 {
    let mut h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ octave.wrapping_mul(0x1656_67B1_9E37_79F9);
    h ^= h >> 31;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 29;
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Value noise with cell size `cell`: the lattice bilinearly interpolated.
fn noise(x: usize, y: usize, cell: usize, octave: u64) -> f64 {
    let (cx, cy) = ((x / cell) as i64, (y / cell) as i64);
    let fx = (x % cell) as f64 / cell as f64;
    let fy = (y % cell) as f64 / cell as f64;
    let top = lattice(cx, cy, octave) * (1.0 - fx) + lattice(cx + 1, cy, octave) * fx;
    let bottom = lattice(cx, cy + 1, octave) * (1.0 - fx) + lattice(cx + 1, cy + 1, octave) * fx;
    top * (1.0 - fy) + bottom * fy
}

/// The panned luma texture, `WIDTH + PAN × FRAMES` wide.
fn texture() -> (Vec<u8>, usize) {
    let w = WIDTH + PAN * FRAMES;
    let mut t = vec![0u8; w * HEIGHT];
    for y in 0..HEIGHT {
        for x in 0..w {
            let v = 0.5 * noise(x, y, 64, 1) + 0.3 * noise(x, y, 16, 2) + 0.2 * noise(x, y, 4, 3);
            t[y * w + x] = (16.0 + v * 219.0) as u8;
        }
    }
    (t, w)
}

/// Frame `i`'s planes (Y, then U and V at half resolution) appended to `out`.
fn frame(tex: &[u8], tex_w: usize, i: usize, out: &mut Vec<u8>) {
    let (sx, sy) = ((i * 9) % (WIDTH - 96), 160 + (i * 3) % 160);
    for y in 0..HEIGHT {
        let row = &tex[y * tex_w + i * PAN..y * tex_w + i * PAN + WIDTH];
        out.extend(row.iter().enumerate().map(|(x, &v)| {
            let inside = (sx..sx + 96).contains(&x) && (sy..sy + 96).contains(&y);
            if inside { 235 - v / 4 } else { v }
        }));
    }
    let phase = i as f64 / FRAMES as f64 * std::f64::consts::TAU;
    for (k, shift) in [(0.0, 0.0), (1.0, 2.1)] {
        for y in 0..HEIGHT / 2 {
            out.extend((0..WIDTH / 2).map(|x| {
                let a = phase + shift + k + (x + y) as f64 / 80.0;
                (128.0 + 40.0 * a.sin()) as u8
            }));
        }
    }
}

/// Writes the synthetic clip to `path`.
pub fn write_synthetic(path: &Path) -> Result<(), CliError> {
    let io = |e: std::io::Error| CliError::Io(format!("cannot write {}: {e}", path.display()));
    let f = std::fs::File::create(path).map_err(io)?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    writeln!(w, "YUV4MPEG2 W{WIDTH} H{HEIGHT} F{FPS}:1 Ip A1:1 C420jpeg").map_err(io)?;
    let (tex, tex_w) = texture();
    let mut buf = Vec::with_capacity(WIDTH * HEIGHT * 3 / 2);
    for i in 0..FRAMES {
        buf.clear();
        frame(&tex, tex_w, i, &mut buf);
        w.write_all(b"FRAME\n").map_err(io)?;
        w.write_all(&buf).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Refuses a `--clip` that is not a readable 4:2:0 Y4M file (bad input, before anything runs).
pub fn check(path: &Path) -> Result<(), CliError> {
    let bad = |why: String| CliError::Input(format!("--clip {}: {why}", path.display()));
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| bad(e.to_string()))?;
    let line = head[..n].split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    if !line.starts_with("YUV4MPEG2 ") {
        return Err(bad("not a Y4M file (no YUV4MPEG2 header)".into()));
    }
    let colour = line.split(' ').find(|t| t.starts_with('C'));
    if colour.is_some_and(|c| !c.starts_with("C420")) {
        return Err(bad(format!(
            "Chromium reads 4:2:0 Y4M only, not {}",
            colour.unwrap_or_default()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_synthetic_clip_is_a_640x480_y4m_of_moving_frames() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.y4m");
        write_synthetic(&p).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let header = b"YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg\n";
        assert!(bytes.starts_with(header));
        let size = WIDTH * HEIGHT * 3 / 2 + 6;
        assert_eq!(bytes.len(), header.len() + FRAMES * size);
        let f0 = &bytes[header.len() + 6..header.len() + size];
        let f1 = &bytes[header.len() + size + 6..header.len() + 2 * size];
        let changed = f0.iter().zip(f1).filter(|(a, b)| a != b).count();
        assert!(
            changed > f0.len() / 2,
            "{changed} of {} bytes changed",
            f0.len()
        );
        check(&p).unwrap();
        assert!(check(&dir.path().join("missing.y4m")).is_err());
        std::fs::write(&p, b"YUV4MPEG2 W2 H2 F30:1 C444\n").unwrap();
        assert!(check(&p).is_err());
    }
}
