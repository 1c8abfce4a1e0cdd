//! `wisp`: the command-line front end. It parses, dispatches and prints; the algorithms live
//! in `wisp-core`, the simulator and metrics in `wisp-sim`, the plots in `wisp-report`.

/// `eprintln!` in one write. `eprintln!` writes a line in pieces (one `write` per literal and
/// argument), so a line of `wisp link`'s could be split by the output of the command it runs,
/// which shares its stderr: a test reading the namespace's address from "wisp link: namespace
/// ADDR" once read "namespace wisp recv: …". One `write` of a line under `PIPE_BUF` (4096
/// bytes) is never split by another writer's.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($arg)*);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

mod args;
mod bench;
mod browser;
mod error;
mod forecast;
mod link;
mod net;
mod output;
mod pingpair;
mod reproduce;
mod run;
mod saturate;
mod sim;
mod sweep;
mod trace;
mod wbest;
mod wifi;

use clap::{Parser, Subcommand};
use error::CliError;
use std::process::ExitCode;

const ABOUT: &str = "Bandwidth estimation and rate control for real-time media over wireless links";

const LONG_ABOUT: &str = "\
wisp runs rate-control schemes for real-time media (Sprout, GCC, the rate controllers of \
Mehrotra et al., Skype's UKF estimator and Kwikr) and TCP baselines over Wi-Fi and cellular link models in a deterministic \
simulator, and measures them the way their papers did: throughput, utilisation, one-way delay, \
Sprout's 95% end-to-end and self-inflicted delay, loss. `wisp schemes` lists them all. The same \
schemes (all but the simulation-only `ideal`) run over real UDP (`wisp send`, `wisp recv`), also \
behind an emulated link (`wisp link`).

Examples:
  wisp run --scheme cbr --rate-kbps 2000 --trace traces/cellular/TMobile-UMTS-driving.down
  wisp run --scheme ideal --link trace:traces/cellular/Verizon-LTE-short.down --json
  wisp sim scenarios/wifi-mixed.toml --json
  wisp bench --schemes ideal,cbr --traces traces/cellular --out results
  wisp run --scheme adaptive-um --link 3g-up --duration-s 120
  wisp sweep --link wimax-down --rates 1mbps,3mbps,4.9mbps,5.1mbps,6mbps
  wisp trace stats traces/cellular/*.down
  wisp reproduce gcc-wifi --quick --out /tmp/gcc-wifi
  wisp reproduce sprout --out /tmp/sprout
  wisp forecast --trace traces/cellular/Verizon-LTE-short.down --duration-s 10
  wisp wifi bianchi --std 11g --rate-mbps 54 --stations 10
  wisp schemes
  wisp recv --listen 0.0.0.0:9000 --json            # then, elsewhere:
  wisp send --scheme cbr --rate-kbps 2000 --to HOST:9000 --duration-s 30
  sudo wisp link --downlink traces/cellular/Verizon-LTE-short.down \
       --uplink traces/cellular/Verizon-LTE-short.up --log logs -- sh -c 'ping -c 10 $WISP_LINK_PEER'
  wisp analyze logs/downlink.log
  sudo wisp browser-call --link const:2mbps         # a real Chrome call through the link
  wisp pingpair --target 192.168.1.1 --count 20     # Wi-Fi downlink queueing (Ping-Pair)
  wisp saturate server                              # then, behind the link under test:
  wisp saturate client --server HOST:9500 --duration-s 30 --out rec/link   # rec/link.{up,down}
  wisp trace compare rec/link.down traces/cellular/Verizon-LTE-short.down --json

Exit codes: 0 success, 1 an I/O failure, 2 bad input (a message names the option, or the file \
and line). Every run logs its seed on stderr; WISP_SEED=N replays it.";

const LINK_HELP: &str = "\
The command runs in a network namespace of its own; its traffic to the host side ($WISP_LINK_PEER, \
also $MAHIMAHI_BASE) crosses the emulated link: random loss, the one-way delay, then the \
bottleneck queue drained by the trace (Mahimahi semantics: each line is an opportunity to \
deliver 1500 bytes), the same code as `wisp run`. Only traffic between the two link addresses \
is carried. The command also gets $WISP_LINK_ADDR (its own address) and $WISP_LINK_EPOCH_NS \
(when the traces started, for `wisp recv --link`).

Output: on stderr the two addresses once the link carries traffic, and at the end a summary line \
(packets and drops per direction, how late the link's writes were, its CPU time); with --log DIR, \
DIR/uplink.log and DIR/downlink.log (Mahimahi's format, for `wisp analyze`) and DIR/summary.json.

wisp link exits with the command's exit code (128 + signal if it was killed). On exit (also on \
Ctrl-C, SIGTERM, or when the command fails or is killed) the devices, their routes and the \
namespace go away, and processes the command left in the namespace are killed. If wisp link \
itself is killed with SIGKILL, the kernel removes the devices and their routes, and the command \
gets SIGKILL too (its parent-death signal); processes the command started in the background \
then live on.

Examples:
  wisp link --downlink 12mbps.trace --uplink 12mbps.trace -- sh -c 'ping -c 10 $WISP_LINK_PEER'
  wisp link --downlink const:12mbps --uplink const:12mbps -- sh -c 'ping -c 10 $WISP_LINK_PEER'
  wisp link --downlink traces/cellular/Verizon-LTE-short.down \\
       --uplink traces/cellular/Verizon-LTE-short.up --downlink-queue droptail:packets=100 \\
       --log logs -- sh -c 'iperf3 -c $WISP_LINK_PEER -u -b 20M -R'
  wisp link --downlink const:20mbps --uplink const:2mbps --wmm -- \\
       sh -c 'ping -Q 0xb8 $WISP_LINK_PEER'   # EF: the voice queue
  wisp link --downlink wifi:std=11g,rate=54mbps,stations=4,load=saturated -- \
       sh -c 'ping -c 20 $WISP_LINK_PEER'   # both ways on one contended 802.11 channel";

#[derive(Parser, Debug)]
#[command(name = "wisp", version, about = ABOUT, long_about = LONG_ABOUT, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const RUN_EXAMPLES: &str = "\
Examples:
  wisp run --scheme sprout --trace traces/cellular/Verizon-LTE-short.down --out /tmp/run
  wisp run --scheme cbr --rate-kbps 2000 --link const:3mbps --queue codel --loss 0.01
  wisp run --scheme gcc --link wifi:std=11g,rate=54mbps,stations=4,load=tcp --duration-s 60 --json
  wisp run --scheme alfalfa --video media/bigbuckbunny-qcif-3s.y4m \\
       --trace traces/cellular/Verizon-LTE-short.down --out /tmp/video";

const SIM_EXAMPLES: &str = "\
Examples:
  wisp sim scenarios/wifi-mixed.toml --out /tmp/mixed
  wisp sim scenarios/cellular-shared.toml --seed 7 --json";

const BENCH_EXAMPLES: &str = "\
Examples:
  wisp bench --schemes sprout,cubic,cbr:rate-kbps=1500 --traces traces/cellular --out results
  wisp bench --schemes gcc,sprout --traces traces/cellular --duration-s 30 --json";

const REPRODUCE_EXAMPLES: &str = "\
Examples:
  wisp reproduce alfalfa --quick --out /tmp/alfalfa
  wisp reproduce gcc-wifi --quick --out /tmp/gcc-wifi
  wisp reproduce sprout --out /tmp/sprout";

const TRACE_EXAMPLES: &str = "\
Examples:
  wisp trace stats traces/cellular/*.down
  wisp trace compare rec/link.down traces/cellular/Verizon-LTE-short.down --from-ms 1000 --json";

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate a scheme over a link and print its metrics.
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<run::RunArgs>),
    /// Simulate a scenario file: nodes, links (traces, rates, the Wi-Fi medium) and flows of any
    /// scheme; print every flow's metrics.
    #[command(long_about = sim::LONG_ABOUT, after_help = SIM_EXAMPLES)]
    Sim(Box<sim::SimArgs>),
    /// Run every scheme over every trace in parallel; write results.json, results.csv and
    /// report.html.
    #[command(after_help = BENCH_EXAMPLES)]
    Bench(Box<bench::BenchArgs>),
    /// Characterise a path: constant-bit-rate traffic at a list of rates; queueing delay and loss
    /// per rate, the congestion-free and congested zones, the delay threshold δ_T.
    #[command(long_about = sweep::LONG_ABOUT)]
    Sweep(Box<sweep::SweepArgs>),
    /// Re-run a paper's experiments; write its figures (SVG in an HTML page) and data (CSV,
    /// JSON), and print its claims as measured.
    #[command(after_help = REPRODUCE_EXAMPLES)]
    Reproduce(Box<reproduce::ReproduceArgs>),
    /// List the schemes with their parameters.
    Schemes {
        /// Print one JSON object instead of a table (each parameter with its default and help).
        #[arg(long)]
        json: bool,
        /// List each parameter on a line of its own, with its default and help text.
        #[arg(long)]
        params: bool,
    },
    /// Inspect link traces.
    #[command(after_help = TRACE_EXAMPLES)]
    Trace {
        #[command(subcommand)]
        command: trace::TraceCommand,
    },
    /// Send one flow of a scheme to `wisp recv` over UDP (RTP with RTCP feedback).
    #[command(after_long_help = net::SEND_HELP)]
    Send(net::SendArgs),
    /// Receive one flow from `wisp send`, run the scheme's receiver half, send its feedback.
    #[command(after_long_help = net::RECV_HELP)]
    Recv(net::RecvArgs),
    /// Run a command behind an emulated link (trace-driven queues in a network namespace,
    /// like Mahimahi's mm-link); needs root.
    #[command(after_long_help = LINK_HELP)]
    Link(link::LinkArgs),
    /// A real WebRTC call between two headless Chromiums through an emulated link (`wisp link`):
    /// the link's figures and the browsers' (bandwidth estimate, frames, freezes); needs root.
    #[command(long_about = browser::LONG_ABOUT)]
    BrowserCall(Box<browser::BrowserCallArgs>),
    /// Compute throughput, capacity, delays and what the trace offered from `wisp link` logs.
    #[command(after_long_help = link::ANALYZE_HELP)]
    Analyze(link::AnalyzeArgs),
    /// Feed a trace to a Sprout receiver as a saturated link and print its forecast every
    /// tick (CSV).
    Forecast(forecast::ForecastArgs),
    /// The simulated 802.11 medium: `wisp wifi bianchi` compares N saturated stations with
    /// Bianchi's model.
    Wifi {
        #[command(subcommand)]
        command: wifi::WifiCommand,
    },
    /// WBest over real sockets: `wisp wbest server` and `wisp wbest client --server ADDR`
    /// estimate a path's effective capacity and available bandwidth in well under a second.
    Wbest {
        #[command(subcommand)]
        command: wbest::WbestCommand,
    },
    /// Ping-Pair: the queueing delay of a Wi-Fi AP's downlink from prioritised ping pairs, the
    /// WMM check and a congestion verdict (CoNEXT'17 §5); needs ping sockets or CAP_NET_RAW
    #[command(long_about = pingpair::LONG_ABOUT)]
    Pingpair(pingpair::PingPairArgs),
    /// The Saturator: keep a link backlogged and record its delivery opportunities as a
    /// Mahimahi trace (`wisp saturate server`, `wisp saturate client --server ADDR`).
    #[command(long_about = saturate::LONG_ABOUT)]
    Saturate {
        #[command(subcommand)]
        command: saturate::SaturateCommand,
    },
}

/// A closed pipe on stdout (`wisp schemes | head`) ends the process quietly, as it does any
/// Unix filter, instead of making every `println!` panic: Rust starts programs with SIGPIPE
/// ignored, so the default action is restored first.
fn default_sigpipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: SIG_DFL installs no handler of ours, and this runs before any thread is started.
    #[allow(unsafe_code)]
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}

fn main() -> ExitCode {
    default_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // One line: clap's message without its usage and hints (a message that ends in a
            // colon continues on the next line: the missing arguments).
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("invalid arguments");
            // The lines up to the usage: after a colon, the missing arguments (all of them);
            // then clap's hints, the accepted values of an enum option or a similar spelling.
            let mut line = first.to_string();
            for l in lines
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|_| first.starts_with("error:"))
            {
                if first.ends_with(':') && !l.starts_with("tip:") && !l.starts_with('[') {
                    line.push_str(if line.ends_with(':') { " " } else { ", " });
                } else if l.starts_with('[') {
                    line.push(' ');
                } else {
                    line.push_str("; ");
                }
                line.push_str(l);
            }
            // A command without its subcommand: clap renders the help; its usage line says
            // what is missing.
            if !first.starts_with("error:")
                && let Some(usage) = text.lines().find_map(|l| l.trim().strip_prefix("Usage:"))
            {
                line = format!(
                    "error: a subcommand is missing: {} (see --help)",
                    usage.trim()
                );
            }
            say!("wisp: {line}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Run(a) => run::run(*a),
        Command::Sim(a) => sim::sim(*a),
        Command::Bench(a) => bench::bench(*a),
        Command::Sweep(a) => sweep::sweep(*a),
        Command::Reproduce(a) => reproduce::reproduce(*a),
        Command::Schemes { json, params } => schemes(json, params),
        Command::Trace { command } => trace::trace(command),
        Command::Send(a) => net::send(a),
        Command::Recv(a) => net::recv(a),
        Command::Link(a) => match link::link(a) {
            // The command's own exit code.
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
        Command::BrowserCall(a) => browser::browser_call(*a),
        Command::Analyze(a) => link::analyze(a),
        Command::Forecast(a) => forecast::forecast(a),
        Command::Wifi { command } => wifi::wifi(command),
        Command::Wbest { command } => wbest::wbest(command),
        Command::Pingpair(a) => pingpair::pingpair(a),
        Command::Saturate { command } => saturate::saturate(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say!("wisp: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Each key of a scheme with its default (`None` for an optional key that is unset by
/// default, such as `cbr`'s `packet-bytes`) and its help text.
fn schemes(json: bool, long: bool) -> Result<(), CliError> {
    let schemes = wisp_core::scheme::schemes();
    if json {
        let list: Vec<_> = schemes
            .iter()
            .map(|s| {
                let params: Vec<_> = s
                    .parameters()
                    .into_iter()
                    .map(|(k, v, doc)| serde_json::json!({"name": k, "default": v, "doc": doc}))
                    .collect();
                serde_json::json!({
                    "name": s.name,
                    "summary": s.summary,
                    "params": s.params(),
                    "parameters": params,
                })
            })
            .collect();
        output::print_json(&serde_json::json!({ "schemes": list }))
    } else {
        let w = schemes.iter().map(|s| s.name.len()).max().unwrap_or(0);
        for s in &schemes {
            println!("{:w$}  {}", s.name, s.summary);
            if long {
                let list: Vec<_> = s
                    .parameters()
                    .into_iter()
                    .map(|(k, v, doc)| (v.map_or(k.clone(), |v| format!("{k}={v}")), doc))
                    .collect();
                let kw = list.iter().map(|(kv, _)| kv.len()).max().unwrap_or(0);
                for (kv, doc) in list {
                    println!("{:w$}    {kv:kw$}  {doc}", "");
                }
                continue;
            }
            let params = s.params();
            if !params.is_empty() {
                println!("{:w$}  params: {params}", "");
            }
        }
        Ok(())
    }
}
