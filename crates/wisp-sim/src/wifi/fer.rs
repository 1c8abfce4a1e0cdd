//! Frame error rate per PHY rate and SNR — an analytic bit-error model in the style of ns-3's
//! NIST model (M. Pei and T. Henderson, "Validation of OFDM error rate model in ns-3", 2010)
//! and the YANS model (M. Lacage and T. Henderson, "Yet another network simulator", 2006),
//! written from the textbook formulas, not from their code.
//!
//! For an OFDM-family rate (11a/g, HT, VHT) at SNR `γ` (linear, in the PPDU's bandwidth):
//!
//! 1. Uncoded bit error probability of the subcarrier modulation (J. Proakis, *Digital
//!    Communications*, Gray-coded square M-QAM, nearest-neighbour approximation):
//!    BPSK `p = ½·erfc(√γ)`; M-QAM (QPSK = 4-QAM) with `k = log₂M` bits per symbol:
//!    `p = (2(1 − 1/√M)/k) · erfc(√(3γ / (2(M − 1))))`, i.e. QPSK `½·erfc(√(γ/2))`, 16-QAM
//!    `¾·½·erfc(√(γ/10))`, 64-QAM `7/12·½·erfc(√(γ/42))`, 256-QAM `15/32·½·erfc(√(γ/170))`.
//! 2. Hard-decision Viterbi decoding of the K = 7 code (133, 171 octal; 17.3.5.6) at rate ½ or
//!    punctured to ⅔, ¾, ⅚ with 802.11's patterns (17.3.5.6, 19.3.11.6): the union bound
//!    `P_b ≤ (1/P) Σ_d c_d · P_d(p)` with the pairwise error probability of two paths at
//!    Hamming distance d, `P_d = Σ_{k > d/2} C(d,k) p^k (1−p)^{d−k}` (+ `½·C(d, d/2)·p^{d/2}
//!    (1−p)^{d/2}` for even d), and `c_d` the information weight of the error events of output
//!    weight d summed over the P puncturing phases. The spectra `c_d` are computed here by a
//!    search of the code's trellis (the first 10 weights from the free distance), not typed
//!    in: the tests check the free distances 10, 6, 5, 4 and the rate-½ weights 36, 211, 1404
//!    (the published values for this code: IT++'s convolutional-code test prints the same
//!    `Cd = 36, 0, 211, 0, 1404, 0, 11633` for the K = 7 rate-½ code).
//! 3. Frame success: `(1 − P_b)^{N}` over the data bits `N = 16 + 8·L + 6` (SERVICE, PSDU,
//!    tail), times the same for the PHY header sent at BPSK ½ (L-SIG 24 bits; HT-SIG or
//!    VHT-SIG-A another 48). `FER = 1 − success`.
//!
//! For DSSS/CCK (11b): `P_b = ½·exp(−E_b/N_0)` (DBPSK) with `E_b/N_0 = γ · 22 MHz / R`.
//!
//! Deviations (and differences from ns-3's NIST model):
//! - The union bound is capped at ½ and uses the exact hard-decision `P_d` (NIST uses the
//!   Chernoff form `(4p(1−p))^{d/2}`), so our curves sit slightly left of NIST's (fewer
//!   errors at a given SNR).
//! - 11b: every rate (DQPSK, CCK) uses the DBPSK formula with the processing gain `22/R`; CCK's
//!   coding gain and DQPSK's differential-detection loss are ignored — a rough stand-in.
//! - One SNR per frame (no fading, no interference from other frames: collisions are separate).
//! - The SNR is taken as given for the PPDU's bandwidth; a wider channel's lower SNR (−3 dB
//!   per doubling at equal power) is the caller's to set.

use super::phy::PhyRate;
use std::sync::OnceLock;
use wisp_core::{Duration, Instant};

/// The complementary error function (W. H. Press et al., *Numerical Recipes*, `erfcc`:
/// a Chebyshev fit with fractional error below 1.2·10⁻⁷ everywhere).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Uncoded bit error probability of a subcarrier carrying `bits` bits per symbol (1: BPSK,
/// 2: QPSK, 4: 16-QAM, 6: 64-QAM, 8: 256-QAM) at linear SNR `snr`.
pub fn uncoded_ber(bits: u32, snr: f64) -> f64 {
    let snr = snr.max(0.0);
    if bits <= 1 {
        return 0.5 * erfc(snr.sqrt());
    }
    let m = f64::from(1u32 << bits);
    let k = f64::from(bits);
    let factor = 2.0 * (1.0 - 1.0 / m.sqrt()) / k;
    (factor * erfc((3.0 * snr / (2.0 * (m - 1.0))).sqrt())).min(0.5)
}

/// 802.11's puncturing patterns per code rate: which of the mother code's outputs `(A, B)`
/// are sent, per input bit of one period (17.3.5.6; ⅚ from 19.3.11.6).
fn puncture(num: u32, den: u32) -> &'static [(bool, bool)] {
    match (num, den) {
        (2, 3) => &[(true, true), (true, false)],
        (3, 4) => &[(true, true), (true, false), (false, true)],
        (5, 6) => &[
            (true, true),
            (true, false),
            (false, true),
            (true, false),
            (false, true),
        ],
        _ => &[(true, true)],
    }
}

/// The distance spectrum of one code rate: `(d_free, c_d for d = d_free, d_free + 1, …)`,
/// divided by the puncturing period.
#[derive(Clone, Debug)]
pub struct Spectrum {
    pub free_distance: u32,
    pub weights: Vec<f64>,
}

const TERMS: usize = 10;

/// Searches the trellis of the K = 7 (133, 171) code punctured by `pattern` for the error
/// events that leave state 0 and return to it, collecting the information weight per output
/// weight below `d_free + TERMS`.
fn search(pattern: &[(bool, bool)]) -> Spectrum {
    const G0: u32 = 0o133;
    const G1: u32 = 0o171;
    // A generous bound on the output weight; the spectrum keeps TERMS entries from d_free.
    const CAP: usize = 24;
    let period = pattern.len();
    let out = |state: u32, input: u32, phase: usize| -> usize {
        let reg = (input << 6) | state;
        let (a, b) = pattern[phase];
        usize::from(a && (reg & G0).count_ones() % 2 == 1)
            + usize::from(b && (reg & G1).count_ones() % 2 == 1)
    };
    let next = |state: u32, input: u32| (input << 5) | (state >> 1);
    // info[d] summed over the events of output weight d.
    let mut info = [0.0f64; CAP + 1];
    // Paths: (state, phase, weight) → (number of paths, sum of their information weights).
    let idx = |s: u32, p: usize, w: usize| ((s as usize * period + p) * (CAP + 1)) + w;
    let size = 64 * period * (CAP + 1);
    let mut cur = vec![(0.0f64, 0.0f64); size];
    for start in 0..period {
        // The event starts with a 1 leaving state 0.
        let w = out(0, 1, start);
        let s = next(0, 1);
        let e = &mut cur[idx(s, (start + 1) % period, w)];
        e.0 += 1.0;
        e.1 += 1.0;
    }
    for _ in 0..400 {
        let mut nxt = vec![(0.0f64, 0.0f64); size];
        let mut alive = false;
        for s in 1..64u32 {
            for p in 0..period {
                for w in 0..=CAP {
                    let (n, iw) = cur[idx(s, p, w)];
                    if n == 0.0 {
                        continue;
                    }
                    for input in 0..2u32 {
                        let w2 = w + out(s, input, p);
                        if w2 > CAP {
                            continue;
                        }
                        let s2 = next(s, input);
                        let iw2 = iw + n * f64::from(input);
                        if s2 == 0 {
                            info[w2] += iw2;
                        } else {
                            let e = &mut nxt[idx(s2, (p + 1) % period, w2)];
                            e.0 += n;
                            e.1 += iw2;
                            alive = true;
                        }
                    }
                }
            }
        }
        cur = nxt;
        if !alive {
            break;
        }
    }
    let free = info.iter().position(|&c| c > 0.0).unwrap_or(CAP);
    let weights = (free..(free + TERMS).min(CAP + 1))
        .map(|d| info[d] / period as f64)
        .collect();
    Spectrum {
        free_distance: free as u32,
        weights,
    }
}

/// The spectrum of code rate `num/den` (½, ⅔, ¾, ⅚), computed once.
pub fn spectrum(num: u32, den: u32) -> &'static Spectrum {
    static CELLS: [OnceLock<Spectrum>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let i = match (num, den) {
        (2, 3) => 1,
        (3, 4) => 2,
        (5, 6) => 3,
        _ => 0,
    };
    CELLS[i].get_or_init(|| search(puncture(num, den)))
}

/// `P_d`: two paths at Hamming distance `d`, hard decisions with crossover probability `p`.
fn pairwise(d: u32, p: f64) -> f64 {
    let q = 1.0 - p;
    let mut sum = 0.0;
    let mut binom = 1.0; // C(d, k), built up from k = 0
    for k in 0..=d {
        if k > 0 {
            binom = binom * f64::from(d - k + 1) / f64::from(k);
        }
        let term = binom * p.powi(k as i32) * q.powi((d - k) as i32);
        if 2 * k > d {
            sum += term;
        } else if 2 * k == d {
            sum += 0.5 * term;
        }
    }
    sum
}

/// Decoded bit error probability of code rate `num/den` over a channel with uncoded bit error
/// probability `p` (the union bound, at most ½).
pub fn coded_ber(num: u32, den: u32, p: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    let s = spectrum(num, den);
    let sum: f64 = s
        .weights
        .iter()
        .enumerate()
        .map(|(i, c)| c * pairwise(s.free_distance + i as u32, p))
        .sum();
    sum.min(0.5)
}

/// `10^(dB/10)`.
pub fn db_to_linear(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

/// Decoded bit error probability of `rate` at `snr_db`.
pub fn bit_error_rate(rate: PhyRate, snr_db: f64) -> f64 {
    let snr = db_to_linear(snr_db);
    match rate.coding() {
        Some((bits, num, den)) => coded_ber(num, den, uncoded_ber(bits, snr)),
        None => {
            // DSSS/CCK: DBPSK with the processing gain 22 MHz / R.
            let ebn0 = snr * 22.0 / rate.mbps().max(0.1);
            (0.5 * (-ebn0).exp()).min(0.5)
        }
    }
}

/// Probability that the data part of a PPDU carrying `bytes` (the PSDU, or one MPDU of an
/// A-MPDU) at `rate` is received without error, at `snr_db`: `(1 − P_b)^(22 + 8·bytes)`.
pub fn data_success_rate(rate: PhyRate, snr_db: f64, bytes: u32) -> f64 {
    if !snr_db.is_finite() {
        return if snr_db > 0.0 { 1.0 } else { 0.0 };
    }
    data_success_from_ber(bit_error_rate(rate, snr_db), bytes)
}

/// [`data_success_rate`] from a known decoded bit error probability.
pub fn data_success_from_ber(ber: f64, bytes: u32) -> f64 {
    (1.0 - ber).powf(22.0 + 8.0 * f64::from(bytes))
}

/// Probability that the PHY header (L-SIG, plus HT-SIG / VHT-SIG-A for an MCS, at BPSK ½) is
/// received, at `snr_db`; 1 for DSSS/CCK (whose header is part of the data model).
pub fn header_success_rate(rate: PhyRate, snr_db: f64) -> f64 {
    if rate.is_dsss() {
        return 1.0;
    }
    if !snr_db.is_finite() {
        return if snr_db > 0.0 { 1.0 } else { 0.0 };
    }
    let header_bits = if rate.mcs().is_some() { 72.0 } else { 24.0 };
    let p = coded_ber(1, 2, uncoded_ber(1, db_to_linear(snr_db)));
    (1.0 - p).powf(header_bits)
}

/// Probability that a PPDU carrying `bytes` (the PSDU) at `rate` is received, at `snr_db`:
/// header and data.
pub fn frame_success_rate(rate: PhyRate, snr_db: f64, bytes: u32) -> f64 {
    header_success_rate(rate, snr_db) * data_success_rate(rate, snr_db, bytes)
}

/// `1 − frame_success_rate`.
pub fn frame_error_rate(rate: PhyRate, snr_db: f64, bytes: u32) -> f64 {
    1.0 - frame_success_rate(rate, snr_db, bytes)
}

/// A station's SNR over time: constant, or a step schedule (the value of the last point at or
/// before the time; the first point's value before it).
#[derive(Clone, Debug, PartialEq)]
pub enum Snr {
    Constant(f64),
    /// `(time since the start, SNR in dB)`, in time order.
    Schedule(Vec<(Duration, f64)>),
}

impl Snr {
    /// The SNR (dB) at `t`.
    pub fn at(&self, t: Instant) -> f64 {
        match self {
            Snr::Constant(db) => *db,
            Snr::Schedule(points) => {
                let since = t.saturating_duration_since(Instant::ZERO);
                let i = points.partition_point(|p| p.0 <= since);
                points
                    .get(i.saturating_sub(1))
                    .map_or(f64::INFINITY, |p| p.1)
            }
        }
    }

    /// Parses `25` (dB) or a schedule `0s:30,10s:12,20s:25` (time: dB, times increasing).
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if !s.contains(':') {
            return parse_db(s).map(Snr::Constant);
        }
        let mut points: Vec<(Duration, f64)> = vec![];
        for part in s.split([',', ';']) {
            let (t, db) = part
                .split_once(':')
                .ok_or_else(|| format!("`{part}` is not TIME:DB (e.g. 10s:20)"))?;
            let t = parse_time(t.trim())?;
            if let Some(last) = points.last()
                && t <= last.0
            {
                return Err(format!("the schedule's times must increase (`{part}`)"));
            }
            points.push((t, parse_db(db.trim())?));
        }
        Ok(Snr::Schedule(points))
    }
}

fn parse_db(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches("db")
        .trim_end_matches("dB")
        .parse()
        .map_err(|_| format!("`{s}` is not an SNR in dB"))?;
    if !(-20.0..=100.0).contains(&v) {
        return Err(format!("SNR {v} dB is outside -20 to 100 dB"));
    }
    Ok(v)
}

/// `10s`, `250ms`, `1.5s`, or plain seconds.
pub fn parse_time(s: &str) -> Result<Duration, String> {
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a time (e.g. 10s, 250ms)"))?;
    let secs = v * scale;
    if !(0.0..=1e6).contains(&secs) {
        return Err(format!("`{s}` is not a time from 0 to 10^6 s"));
    }
    Ok(Duration::from_nanos((secs * 1e9).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_tabulated_values() {
        // Abramowitz & Stegun Table 7.1: erfc(0.5) = 0.4795001222, erfc(1) = 0.1572992071,
        // erfc(2) = 0.0046777350, erfc(3) = 2.209049700e-5.
        for (x, v) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122_2),
            (1.0, 0.157_299_207_1),
            (2.0, 0.004_677_735_0),
            (3.0, 2.209_049_700e-5),
            (-1.0, 1.842_700_792_9),
        ] {
            assert!((erfc(x) - v).abs() <= 2e-7 * v, "erfc({x}) = {}", erfc(x));
        }
    }

    #[test]
    fn the_trellis_search_finds_the_published_spectra() {
        // K = 7 (133, 171): d_free 10 with information weights 36, 0, 211, 0, 1404 (the values
        // published for this code, e.g. IT++'s convolutional-code test output; odd distances
        // have none at rate ½). Punctured: d_free 6 (⅔), 5 (¾), 4 (⅚) — the
        // values 802.11's patterns are chosen for.
        let half = spectrum(1, 2);
        assert_eq!(half.free_distance, 10);
        assert_eq!(&half.weights[..5], &[36.0, 0.0, 211.0, 0.0, 1404.0]);
        assert_eq!(spectrum(2, 3).free_distance, 6);
        assert_eq!(spectrum(3, 4).free_distance, 5);
        assert_eq!(spectrum(5, 6).free_distance, 4);
    }

    #[test]
    fn uncoded_ber_reduces_to_the_textbook_forms() {
        let g = 10.0;
        assert!(
            (uncoded_ber(2, g) - 0.5 * erfc((g / 2.0).sqrt())).abs()
                < 1e-12 * uncoded_ber(1, g).max(1e-300) + 1e-18
        );
        assert!(
            (uncoded_ber(4, g) - 0.75 * 0.5 * erfc((g / 10.0).sqrt())).abs()
                < 1e-12 * uncoded_ber(1, g).max(1e-300) + 1e-18
        );
        assert!(
            (uncoded_ber(6, g) - 7.0 / 12.0 * 0.5 * erfc((g / 42.0).sqrt())).abs()
                < 1e-12 * uncoded_ber(1, g).max(1e-300) + 1e-18
        );
        assert!(
            (uncoded_ber(8, g) - 15.0 / 32.0 * 0.5 * erfc((g / 170.0).sqrt())).abs()
                < 1e-12 * uncoded_ber(1, g).max(1e-300) + 1e-18
        );
    }

    fn r(mbps: f64) -> PhyRate {
        PhyRate::from_mbps(mbps).unwrap()
    }

    #[test]
    fn fer_falls_with_snr_and_rises_with_rate_and_length() {
        // Monotone in SNR for every 11a rate and HT MCS; higher rates need more SNR.
        let rates: Vec<PhyRate> = [6.0, 9.0, 12.0, 18.0, 24.0, 36.0, 48.0, 54.0]
            .map(r)
            .into_iter()
            .chain((0..8).map(|i| PhyRate::ht(i, 20, false).unwrap()))
            .collect();
        for rate in &rates {
            let mut last = 1.0;
            for db in (-5..40).map(f64::from) {
                let f = frame_error_rate(*rate, db, 1500);
                assert!(f <= last + 1e-12, "{rate:?} at {db} dB: {f} > {last}");
                last = f;
            }
            assert!(last < 1e-6, "{rate:?} still loses {last} at 39 dB");
        }
        // The 50%-FER SNR increases with the 11a rate.
        let threshold = |rate: PhyRate| {
            (0..=400)
                .map(|i| f64::from(i) * 0.1 - 5.0)
                .find(|&db| frame_error_rate(rate, db, 1500) < 0.5)
                .unwrap()
        };
        let t: Vec<f64> = rates[..8].iter().map(|&x| threshold(x)).collect();
        for w in t.windows(2) {
            assert!(w[1] > w[0], "{t:?}");
        }
        assert!(t[7] - t[0] > 12.0, "{t:?}");
        // Longer frames fail more often.
        assert!(frame_error_rate(r(54.0), 21.5, 1500) > 1.5 * frame_error_rate(r(54.0), 21.5, 100));
    }

    #[test]
    fn fer_thresholds_follow_the_standards_sensitivity_table() {
        // IEEE 802.11-2016 Table 17-18: the receiver minimum input sensitivity for 10% PER with
        // 1000-byte PSDUs is −82, −81, −79, −77, −74, −70, −66, −65 dBm at 6 … 54 Mbit/s. The
        // steps between rates are SNR steps: ours are each within 3 dB of them, and 6 Mbit/s
        // needs less than the 9 dB that −82 dBm is above the table's noise floor
        // (−174 dBm/Hz + 73 dB + a 10-dB noise figure = −91 dBm).
        let at = |rate: PhyRate| {
            (0..=800)
                .map(|i| f64::from(i) * 0.05 - 5.0)
                .find(|&db| frame_error_rate(rate, db, 1000) < 0.1)
                .unwrap()
        };
        let table = [-82.0, -81.0, -79.0, -77.0, -74.0, -70.0, -66.0, -65.0];
        let ours: Vec<f64> = [6.0, 9.0, 12.0, 18.0, 24.0, 36.0, 48.0, 54.0]
            .iter()
            .map(|&m| at(r(m)))
            .collect();
        eprintln!("10% PER SNR (dB), 1000 B: {ours:?}");
        for i in 0..8 {
            let step_table = table[i] - table[0];
            let step_ours = ours[i] - ours[0];
            assert!((step_ours - step_table).abs() <= 3.0, "{ours:?}");
        }
        assert!(ours[0] < 9.0, "{ours:?}");
        // HT20 (Table 19-23): MCS 0–7 at −82, −79, −77, −74, −70, −66, −65, −64 dBm (4096-byte
        // PSDUs there; 1000 here, as the steps are what we compare).
        let table = [-82.0, -79.0, -77.0, -74.0, -70.0, -66.0, -65.0, -64.0];
        let ours: Vec<f64> = (0..8)
            .map(|i| at(PhyRate::ht(i, 20, false).unwrap()))
            .collect();
        for i in 0..8 {
            assert!(
                ((ours[i] - ours[0]) - (table[i] - table[0])).abs() <= 3.0,
                "{ours:?}"
            );
        }
    }

    #[test]
    fn snr_schedules_parse_and_step() {
        let s = Snr::parse("0s:30,10s:12,20.5s:25").unwrap();
        assert_eq!(s.at(Instant::from_secs(5)), 30.0);
        assert_eq!(s.at(Instant::from_secs(10)), 12.0);
        assert_eq!(s.at(Instant::from_secs(30)), 25.0);
        assert_eq!(Snr::parse("25").unwrap(), Snr::Constant(25.0));
        assert!(Snr::parse("10s:20,5s:30").unwrap_err().contains("increase"));
        assert!(Snr::parse("x").unwrap_err().contains("`x`"));
        assert!(Snr::parse("1000").unwrap_err().contains("outside"));
        assert!(Snr::parse("1q:3").unwrap_err().contains("time"));
    }
}
