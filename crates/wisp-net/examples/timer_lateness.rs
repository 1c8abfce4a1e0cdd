//! Measures how late [`wisp_net::timer::Waiter`] wakes after a deadline.
//!
//! `cargo run --release -p wisp-net --example timer_lateness -- [SPIN_US] [N]`
use wisp_core::Duration;
use wisp_net::{Clock, timer::Waiter};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let spin: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let mut w = Waiter::new(Duration::from_micros(spin))?;
    let clock = Clock::new();
    let mut ready = vec![];
    let mut late = Vec::with_capacity(n);
    for i in 0..n {
        let d = clock.now() + Duration::from_micros(500 + (i as u64 * 37) % 1000);
        w.wait(Some(d), &mut ready)?;
        late.push((clock.now() - d).as_nanos() as f64 / 1e3);
    }
    let q = wisp_core::stats::quantiles(&mut late, &[0.5, 0.9, 0.99, 0.999, 1.0]);
    println!(
        "spin {spin} us, {n} waits: lateness p50 {:.1} p90 {:.1} p99 {:.1} p99.9 {:.1} max {:.1} us",
        q[0].unwrap(),
        q[1].unwrap(),
        q[2].unwrap(),
        q[3].unwrap(),
        q[4].unwrap()
    );
    Ok(())
}
