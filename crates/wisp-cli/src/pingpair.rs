//! `wisp pingpair`: Ping-Pair against a gateway (CoNEXT'17 §5) — per-pair T_q and validity, the
//! WMM check and a congestion verdict. The sockets and the loop are `wisp_net::pingpair`'s, the
//! algorithm `wisp_core::pingpair`'s.

use crate::error::CliError;
use crate::output;
use clap::Args;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use wisp_core::Duration;
use wisp_core::pingpair::{
    self, Congestion, Invalid, ProberConfig, ProberEvent, Sustained, classify,
};
use wisp_net::pingpair::{IcmpSocket, OpenError, Summary, run};

pub const LONG_ABOUT: &str = "\
Ping-Pair (Das et al., CoNEXT'17 §5): measure the queueing delay of a Wi-Fi access point's \
downlink. Each pair is a normal-priority echo request (TOS 0x00) followed at once by a \
high-priority one (--tos-high, 0xb8 = EF: AC_VO on RFC 8325 stacks, AC_VI on older ones); the \
target's replies copy the TOS, so with WMM the high-priority reply overtakes the best-effort \
queue. A pair is valid when that reply arrives first, and T_q is the gap between the two \
replies (kernel receive timestamps). Before the pairs, five triplets (a large high-priority \
ping, then a small normal and a small intermediate one, TOS 0x80) check that the target \
prioritises: WMM is deemed enabled when the small replies come back reversed in at least 3 of 5. \
The verdict classifies the median T_q of the valid pairs: above 5 ms a persistent queue (§8.1); \
'sustained' when at least 3 pairs in a row were above it.

Uses an unprivileged ping socket when net.ipv4.ping_group_range allows the caller's group, \
else a raw socket (root or CAP_NET_RAW); without either it says how to grant one and exits \
with code 2. Replies that are not ours (other programs' pings, other ICMP) or malformed are \
counted and dropped.

Examples:
  wisp pingpair --target 192.168.1.1 --count 50
  wisp pingpair --target 192.168.1.1 --interval-ms 500 --tos-high 0xc0 --json
  sudo wisp link --downlink const:10mbps --uplink const:10mbps --wmm -- \\
       sh -c 'wisp pingpair --target $WISP_LINK_PEER --count 20'";

#[derive(Args, Debug)]
pub struct PingPairArgs {
    /// The gateway (access point) to probe: an IPv4 address, or a host name with one.
    #[arg(long, value_name = "ADDR")]
    pub target: String,

    /// Time between pairs, ms (§8.1 validates at 200, Kwikr probes every 500).
    #[arg(
        allow_hyphen_values = true,
        long,
        value_name = "MS",
        default_value_t = 200
    )]
    pub interval_ms: u64,

    /// Pairs to send (default: until Ctrl-C).
    #[arg(allow_hyphen_values = true, long, value_name = "N")]
    pub count: Option<u64>,

    /// TOS byte of the high-priority ping (0xb8 = DSCP EF; 0xc0/0xe0 reach AC_VO on every
    /// mapping).
    #[arg(long, value_name = "TOS", default_value = "0xb8")]
    pub tos_high: String,

    /// Dual Ping-Pair (§5.6): send two pairs each round and discard the measurement when they
    /// differ by more than 5 ms (a retransmitted reply).
    #[arg(long)]
    pub dual: bool,

    /// Print one JSON object on stdout at the end instead of lines as results come.
    #[arg(long)]
    pub json: bool,
}

fn parse_tos(s: &str) -> Result<u8, CliError> {
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16),
        None => s.parse::<u8>(),
    };
    v.map_err(|_| {
        CliError::Input(format!(
            "--tos-high: `{s}` is not a TOS byte (0 to 255, or hex like 0xb8)"
        ))
    })
}

fn reason(e: Invalid) -> &'static str {
    match e {
        Invalid::Lost => "a reply was lost",
        Invalid::NotOvertaken => "the high-priority reply did not arrive first",
        Invalid::DualMismatch => "the dual pairs disagree",
    }
}

pub fn pingpair(a: PingPairArgs) -> Result<(), CliError> {
    let (target, tos_high) = checked(&a)?;
    let sock = IcmpSocket::open().map_err(|e| match e {
        OpenError::Permission { .. } => CliError::Input(e.to_string()),
        OpenError::Other(_) => CliError::Io(e.to_string()),
    })?;
    let config = ProberConfig {
        interval: Duration::from_millis(a.interval_ms),
        count: a.count,
        tos_high,
        dual: a.dual,
        ..ProberConfig::default()
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let json = a.json;
    if !json {
        println!(
            "Ping-Pair to {target} ({} socket), TOS 0x00 then 0x{tos_high:02x}, every {} ms",
            sock.kind().name(),
            a.interval_ms
        );
    }
    let s = run(&sock, target, config, &stop, |e| {
        if !json {
            print_event(e);
        }
    })
    .map_err(|e| CliError::Io(format!("wisp pingpair: {target}: {e}")))?;
    let verdict = Verdict::of(&s);
    if json {
        return output::print_json(&summary_json(
            &a,
            target,
            tos_high,
            sock.kind().name(),
            &s,
            &verdict,
        ));
    }
    print_summary(&s, &verdict);
    Ok(())
}

/// The target and the high-priority TOS, after every check of the arguments.
fn checked(a: &PingPairArgs) -> Result<(Ipv4Addr, u8), CliError> {
    let target: Ipv4Addr = wisp_net::resolve_ipv4_host(&a.target)
        .map_err(|e| CliError::Input(format!("--target: {e}")))?;
    if !(1..=60_000).contains(&a.interval_ms) {
        return Err(CliError::Input(format!(
            "--interval-ms: {} is out of range (1 to 60000)",
            a.interval_ms
        )));
    }
    if a.count == Some(0) {
        return Err(CliError::Input("--count: must be at least 1".into()));
    }
    let tos_high = parse_tos(&a.tos_high)?;
    // The normal ping's TOS is 0x00: a "high-priority" ping of the same class never overtakes
    // it, so every pair would be invalid.
    if tos_high & 0xfc == 0 {
        return Err(CliError::Input(format!(
            "--tos-high: `{}` is the normal ping's class (TOS 0x00); give a higher one, e.g. 0xb8",
            a.tos_high
        )));
    }
    Ok((target, tos_high))
}

/// A line per WMM triplet and per pair, as they come.
fn print_event(e: &ProberEvent) {
    match e {
        ProberEvent::Triplet(t) => println!(
            "WMM triplet: {}",
            if t.reversed() { "reversed" } else { "in order" }
        ),
        ProberEvent::Pair(p) => match p.t_q {
            Ok(t) => println!(
                "pair {}: T_q {:.3} ms ({})",
                p.index + 1,
                t.as_millis_f64(),
                classify(t).name()
            ),
            Err(e) => println!("pair {}: invalid: {}", p.index + 1, reason(e)),
        },
    }
}

/// What the pairs say together: the valid T_q (ms, sorted), their median and its class, and
/// whether persistent congestion was ever sustained.
struct Verdict {
    valid: Vec<f64>,
    median: Option<f64>,
    class: Option<Congestion>,
    sustained: bool,
}

impl Verdict {
    fn of(s: &Summary) -> Verdict {
        let mut valid: Vec<f64> = s
            .pairs
            .iter()
            .filter_map(|p| p.t_q.ok())
            .map(|t| t.as_millis_f64())
            .collect();
        valid.sort_by(f64::total_cmp);
        let median = wisp_core::stats::quantile_sorted(&valid, 0.5);
        let class = median.map(|m| classify(Duration::from_millis_f64(m)));
        let mut sustained = Sustained::default();
        let mut ever = false;
        for p in &s.pairs {
            let persistent = p.t_q.is_ok_and(|t| classify(t) == Congestion::Persistent);
            ever |= sustained.on_test(persistent);
        }
        Verdict {
            valid,
            median,
            class,
            sustained: ever,
        }
    }
}

/// `--json`'s object.
fn summary_json(
    a: &PingPairArgs,
    target: Ipv4Addr,
    tos_high: u8,
    socket: &str,
    s: &Summary,
    v: &Verdict,
) -> serde_json::Value {
    let pairs: Vec<_> = s
        .pairs
        .iter()
        .map(|p| {
            serde_json::json!({
                "index": p.index,
                "valid": p.t_q.is_ok(),
                "t_q_ms": p.t_q.ok().map(|t| t.as_millis_f64()),
                "class": p.t_q.ok().map(|t| classify(t).name()),
                "invalid": p.t_q.err().map(reason),
            })
        })
        .collect();
    serde_json::json!({
        "target": target.to_string(),
        "socket": socket,
        "tos_normal": pingpair::TOS_NORMAL,
        "tos_high": tos_high,
        "interval_ms": a.interval_ms,
        "dual": a.dual,
        "pairs": pairs,
        "valid_pairs": v.valid.len(),
        "t_q_p50_ms": v.median,
        "wmm": s.wmm.map(|w| serde_json::json!({
            "runs": w.runs, "reversals": w.reversals, "enabled": w.enabled
        })),
        "congestion": v.class.map(Congestion::name),
        "sustained": v.sustained,
        "malformed": s.malformed,
        "foreign": s.foreign,
        "unmatched": s.unmatched,
        "interrupted": s.interrupted,
    })
}

/// The closing lines: the WMM check, the congestion verdict, what was dropped.
fn print_summary(s: &Summary, v: &Verdict) {
    match s.wmm {
        Some(w) => println!(
            "WMM check: {} of {} triplets reversed: prioritisation {}",
            w.reversals,
            w.runs,
            if w.enabled {
                "enabled"
            } else {
                "NOT detected (T_q under-estimates the queue)"
            }
        ),
        None => println!("WMM check: incomplete"),
    }
    match (v.median, v.class) {
        (Some(m), Some(class)) => println!(
            "congestion: {} (median T_q {m:.3} ms over {} valid of {} pairs{})",
            class.name(),
            v.valid.len(),
            s.pairs.len(),
            if v.sustained {
                "; sustained: 3 or more in a row above 5 ms"
            } else {
                ""
            }
        ),
        // Why no pair was valid depends on the WMM check: with prioritisation detected, the
        // high-priority replies had no queue to overtake (it said "without WMM" there too).
        _ => println!(
            "congestion: unknown (no valid pair of {}; {})",
            s.pairs.len(),
            match s.wmm {
                _ if s.pairs.is_empty() => "no pair was sent",
                Some(w) if w.enabled => {
                    "WMM is on, so no queue held the best-effort reply back: the link looks idle"
                }
                Some(_) => "without WMM the replies keep their order",
                None => "the WMM check did not finish",
            }
        ),
    }
    println!(
        "dropped: {} malformed, {} foreign, {} late or duplicate replies",
        s.malformed, s.foreign, s.unmatched
    );
}
