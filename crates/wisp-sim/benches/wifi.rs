//! The 802.11 medium's speed: 10 saturated 11g stations at 54 Mbit/s, 1500-byte packets, for
//! 10 simulated seconds, with and without the per-attempt records. Measured on the shared
//! 2-core machine: 4.4 ms per run (≈ 2,300× real time, 8.1 M frames on air per CPU second);
//! with records 4.9 ms; after the PHY-side work 5.2–10.4 ms under a load average of 5–10 (the
//! code before it measured 5.6–8.4 ms in the same minutes). Also 10 saturated 11n stations with
//! Minstrel, an SNR and A-MPDU: 5.2–6.4 ms (8–10 M MPDUs per CPU second).
//!
//! Real-time factor = 10 s / time per iteration (the target: ≥ 1,000×); the throughput
//! criterion prints is transmission attempts (frames on the air; MPDUs for the A-MPDU case)
//! per second of CPU.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;
use wisp_sim::wifi::phy::{PhyRate, Standard};
use wisp_sim::wifi::saturation::SaturationConfig;

fn config() -> SaturationConfig {
    SaturationConfig {
        standard: Standard::G,
        rate: PhyRate::from_mbps(54.0).unwrap(),
        stations: 10,
        bytes: 1500,
        duration: wisp_core::Duration::from_secs(10),
        seed: 1,
        frame_error_rate: 0.0,
        qos: false,
        ampdu: false,
    }
}

fn bench(c: &mut Criterion) {
    let cfg = config();
    let end = wisp_core::Instant::ZERO + cfg.duration;
    let attempts = wisp_sim::wifi::saturation::run(&cfg).unwrap().attempts;
    let mut g = c.benchmark_group("wifi");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(attempts));
    g.bench_function("11g-54mbps-10-stations-10s", |b| {
        b.iter(|| {
            let mut m = cfg.medium().unwrap();
            m.set_recording(false);
            m.run_until(end);
            m.totals().delivered_packets
        })
    });
    g.bench_function("11g-54mbps-10-stations-10s/with-records", |b| {
        b.iter(|| {
            let mut m = cfg.medium().unwrap();
            m.run_until(end);
            m.records().len()
        })
    });
    // The PHY-side features together: 10 saturated 11n (5 GHz) stations, HT20 short GI,
    // Minstrel over MCS 0–7, a 25-dB SNR through the error model, A-MPDU on.
    let n_end = wisp_core::Instant::from_secs(10);
    let n_medium = || {
        use wisp_sim::wifi::ampdu::AmpduConfig;
        use wisp_sim::wifi::edca::AccessCategory;
        use wisp_sim::wifi::fer::Snr;
        use wisp_sim::wifi::medium::Medium;
        use wisp_sim::wifi::phy::Phy;
        use wisp_sim::wifi::rate_control::{MinstrelParams, RateControlConfig};
        use wisp_sim::wifi::station::StationConfig;
        let phy = Phy::new(Standard::N5);
        let mut m = Medium::new(phy, 1);
        m.set_recording(false);
        for _ in 0..10 {
            let mut c = StationConfig::edca(&phy, PhyRate::ht(7, 20, true).unwrap());
            c.saturated = Some((AccessCategory::Be, 1500));
            c.snr = Some(Snr::Constant(25.0));
            c.rate_control = Some(RateControlConfig::Minstrel(MinstrelParams::default()));
            c.ampdu = Some(AmpduConfig::default());
            m.add_station(c);
        }
        m
    };
    let mpdus = {
        let mut m = n_medium();
        m.run_until(n_end);
        m.totals().attempts
    };
    g.throughput(Throughput::Elements(mpdus));
    g.bench_function("11n-ht20-minstrel-ampdu-10-stations-10s", |b| {
        b.iter(|| {
            let mut m = n_medium();
            m.run_until(n_end);
            m.totals().delivered_packets
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
