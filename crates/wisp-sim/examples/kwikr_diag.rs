//! A diagnostic of the Kwikr call experiments (not a check): one run of `kwikr-fig8` or
//! `kwikr-table2` with the calls' schemes set, printing each Ping-Pair (T_q, n_a, T_c, the
//! smoothed T_c, and from the packet log the frames of every call delivered between the two
//! replies) and each call's rate and one-way delay per 5 s. docs/kwikr.md ("Part B") quotes it.
//!
//! `WISP_DIAG=table2 WISP_DIAG_A=skype-ukf WISP_DIAG_B=kwikr WISP_DIAG_SEED=1 cargo run -p
//! wisp-sim --release --example kwikr_diag` (`WISP_DIAG=fig8` runs the Fig. 8 file with
//! `WISP_DIAG_A` as the call's scheme).

use wisp_core::scheme::SchemeConfig;
use wisp_sim::pingpair::default_for;
use wisp_sim::reproduce::kwikr_calls::{FIG8, TABLE2, scenario};
use wisp_sim::run::run_network;

fn env(k: &str, d: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| d.to_string())
}

fn main() {
    let which = env("WISP_DIAG", "table2");
    let a = env("WISP_DIAG_A", "skype-ukf");
    let b = env("WISP_DIAG_B", "kwikr");
    let seed: u64 = env("WISP_DIAG_SEED", "1").parse().unwrap();
    let (src, calls): (_, Vec<(&str, String)>) = if which == "fig8" {
        (FIG8, vec![("call", a)])
    } else {
        (TABLE2, vec![("call-a", a), ("call-b", b)])
    };
    let file = scenario(src).unwrap();
    let mut net = file.network.clone();
    net.run.seed = seed;
    let mut idx = vec![];
    for (name, scheme) in &calls {
        let i = file.flows.iter().position(|f| f.name == *name).unwrap();
        let s: SchemeConfig = scheme.parse().unwrap();
        net.flows[i].pingpair = default_for(&s, &net.flows[i].data);
        net.flows[i].spec.scheme = s;
        idx.push(i as u16);
    }
    let r = run_network(&net, None).unwrap();
    let log = &r.log;
    // Deliveries per call, sorted, to count the frames between two replies.
    let delivered: Vec<Vec<wisp_core::Instant>> = idx
        .iter()
        .map(|&f| {
            let mut v: Vec<_> = log
                .packets
                .iter()
                .filter(|p| p.flow == f)
                .filter_map(|p| p.delivered)
                .collect();
            v.sort_unstable();
            v
        })
        .collect();
    let between = |v: &[wisp_core::Instant], lo, hi| {
        v.partition_point(|&t| t <= hi) - v.partition_point(|&t| t <= lo)
    };
    println!(
        "pairs: flow sent_s valid t_q_ms n_a t_c_ms t_c_smooth_ms backlog | frames of each call between the replies"
    );
    for p in &log.pings {
        let (Some(h), Some(n)) = (p.high_reply, p.normal_reply) else {
            println!("{} {:.1} lost", p.flow, p.sent.as_secs_f64());
            continue;
        };
        let counts: Vec<usize> = delivered.iter().map(|v| between(v, h, n)).collect();
        println!(
            "{} {:.1} {} {:.1} {:?} {:.1} {:.1} {:?} | {:?}",
            p.flow,
            p.sent.as_secs_f64(),
            p.t_q.is_some(),
            (n.as_secs_f64() - h.as_secs_f64()) * 1e3,
            p.n_a,
            p.t_c.map_or(f64::NAN, |d| d.as_millis_f64()),
            p.t_c_smoothed.map_or(f64::NAN, |d| d.as_millis_f64()),
            p.truth_backlog,
            counts
        );
    }
    print_rates(log, &idx, net.run.duration.as_secs_f64());
}

/// Each call's rate over the whole run, then its rate and mean one-way delay per 5 s.
fn print_rates(log: &wisp_sim::log::RunLog, idx: &[u16], end: f64) {
    let whole: Vec<String> = idx
        .iter()
        .map(|&f| {
            let b: u64 = log
                .packets
                .iter()
                .filter(|p| p.flow == f)
                .map(|p| p.header.size.bytes())
                .sum();
            format!("{:.0}", b as f64 * 8.0 / end / 1000.0)
        })
        .collect();
    println!("whole call, kbit/s sent: {}", whole.join(" "));
    println!("per 5 s: t_s, then per call: sent kbit/s, mean one-way delay ms");
    let mut t = 0.0;
    while t < end {
        let mut line = format!("{t:5.0}");
        for &f in idx {
            let (mut bytes, mut owd, mut n) = (0u64, 0.0, 0u64);
            for p in log.packets.iter().filter(|p| p.flow == f) {
                let s = p.sent().as_secs_f64();
                if s < t || s >= t + 5.0 {
                    continue;
                }
                bytes += p.header.size.bytes();
                if let Some(d) = p.delivered {
                    owd += (d - p.sent()).as_millis_f64();
                    n += 1;
                }
            }
            line += &format!(
                " | {:7.0} {:7.1}",
                bytes as f64 * 8.0 / 5.0 / 1000.0,
                owd / n.max(1) as f64
            );
        }
        println!("{line}");
        t += 5.0;
    }
}
