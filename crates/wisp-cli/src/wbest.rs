//! `wisp wbest server|client`: WBest over real sockets (`wisp_net::wbest`).

use crate::error::CliError;
use clap::{Args, Subcommand, ValueEnum};
use std::net::SocketAddr;
use wisp_core::probe::wbest::WbestConfig;
use wisp_net::wbest::{WbestError, WbestReport};
use wisp_net::wbest_wire::Direction;

const CLIENT_HELP: &str = "\
One WBest estimate (Li, Claypool, Kinicki 2008): --pairs packet pairs 10 ms apart give the
effective capacity C_e (median of L/T_i), a train of --train packets at C_e gives the available
bandwidth A = C_e (2 - C_e/R) with the train's loss correction. Each probe is one IP packet of
--size bytes on the wire (WBest's L; default 1500, a full Ethernet MTU): a UDP datagram of
--size - 28 bytes over IPv4, --size - 48 over IPv6, sent with don't-fragment, so a probe larger
than the path MTU fails the run (naming the MTU) instead of being fragmented. The server's UDP
port is its TCP control port.

--plus runs WBest+ (Farshad et al., SECON 2014), the form for links that aggregate frames
(802.11n A-MPDUs): 165 pairs sent in bursts of 33 (66 packets back to back), bursts 10 ms
apart, then a train of 100; --pairs and --train still override those counts.

Output (--json: one object): capacity_mbps (C_e) and available_mbps (A), rates of IP packets
(L = --size bytes per probe); bytes_sent, the probes' IP bytes; time_s; and what went into A:
achievable_mbps (R, the train's dispersion rate), pairs_used, gaps_used, train_lost and
gaps_sender_late (train gaps left out because the sending host sent their second packet
late, more than half a gap or 50 us behind its schedule: its scheduler, not the path);
foreign_datagrams, UDP datagrams that were not this run's (another address, or without the
session nonce the server gave on the control connection), ignored.

Examples:
  wisp wbest server --listen 0.0.0.0:9878
  wisp wbest client --server 10.0.0.1:9878 --json
  wisp wbest client --server 10.0.0.1:9878 --direction to-server --pairs 60
  wisp wbest client --server 10.0.0.1:9878 --plus --json";

const SERVER_HELP: &str = "\
Says where it listens on stderr, then serves one client at a time; each run's result (as the
client prints it: capacity_mbps, available_mbps, bytes_sent, time_s) goes to stdout, a run that
failed to stderr, saying what it awaited and for how long (e.g. `no UDP announcement from
10.0.0.2 within 10 s`). A client silent for 10 s is dropped. Probes count only from the address
of the client's control connection with the run's session nonce: anyone else's are counted in
foreign_datagrams and ignored, and never sent to.

Example:
  wisp wbest server --listen 0.0.0.0:9878 --clients 1 --json";

#[derive(Subcommand, Debug)]
pub enum WbestCommand {
    /// Serve WBest clients (one at a time).
    #[command(after_help = SERVER_HELP)]
    Server(ServerArgs),
    /// Run one WBest estimate against a server.
    #[command(after_help = CLIENT_HELP)]
    Client(ClientArgs),
}

#[derive(Args, Debug)]
pub struct ServerArgs {
    /// TCP control address; UDP probes use the same address and port.
    #[arg(long, default_value = "0.0.0.0:9878")]
    pub listen: SocketAddr,
    /// Exit after this many clients (default: serve forever).
    #[arg(allow_hyphen_values = true, long, value_parser = clap::value_parser!(u64).range(1..))]
    pub clients: Option<u64>,
    /// Print each run's result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DirectionArg {
    /// The client sends the probes.
    ToServer,
    /// The server sends the probes (WBest's direction: server → wireless client).
    FromServer,
}

#[derive(Args, Debug)]
pub struct ClientArgs {
    // As `help`, not a doc comment: rustdoc would read `[::1]` as a link.
    #[arg(
        long,
        value_name = "HOST:PORT",
        value_parser = crate::net::host_port,
        help = "The server's control address, HOST:PORT: e.g. 10.0.0.1:9878, localhost:9878, [::1]:9878."
    )]
    pub server: SocketAddr,
    /// Packet pairs n (1-1000) [default: 30; 165 with --plus].
    #[arg(allow_hyphen_values = true, long)]
    pub pairs: Option<u32>,
    /// Packets m in the train (2-1000) [default: 30; 100 with --plus].
    #[arg(allow_hyphen_values = true, long)]
    pub train: Option<u32>,
    /// WBest+: pairs in bursts of 33, bursts 10 ms apart, 165 pairs, a train of 100.
    #[arg(long)]
    pub plus: bool,
    /// Probe size in bytes: the IP packet on the wire, headers included (64-65535; the UDP
    /// payload is 28 bytes less over IPv4, 48 over IPv6).
    #[arg(allow_hyphen_values = true, long, default_value_t = 1500)]
    pub size: u32,
    /// Which way the probes go.
    #[arg(long, value_enum, default_value = "from-server")]
    pub direction: DirectionArg,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn wbest(command: WbestCommand) -> Result<(), CliError> {
    match command {
        WbestCommand::Server(a) => {
            let json = a.json;
            crate::net::check_listen("--listen", a.listen, true)?;
            wisp_net::wbest::server(
                a.listen,
                a.clients,
                |addr| say!("wisp wbest server: listening on {addr} (TCP control, UDP probes)"),
                |r| match r {
                    Ok(r) => print_report(&r, json),
                    Err(e) => say!("wisp wbest server: {e}"),
                },
            )
            .map_err(|e| CliError::Io(e.to_string()))
        }
        WbestCommand::Client(a) => {
            crate::net::check_port("--server", a.server)?;
            let base = if a.plus {
                WbestConfig::wbest_plus()
            } else {
                WbestConfig::default()
            };
            let cfg = WbestConfig {
                pairs: a.pairs.unwrap_or(base.pairs),
                train: a.train.unwrap_or(base.train),
                size: a.size,
                ..base
            };
            if a.plus && cfg.pairs >= 1 && cfg.burst > cfg.pairs {
                return Err(CliError::Input(format!(
                    "--pairs: must be at least {} with --plus (WBest+ sends bursts of {} pairs), not {}",
                    cfg.burst, cfg.burst, cfg.pairs
                )));
            }
            // The IP packet must hold the IP and UDP headers and wisp's probe header (49
            // bytes over IPv4, 69 over IPv6), and WBest's config asks for 64 at least.
            let min = wisp_net::wbest::min_probe_size(&a.server).max(64);
            if wisp_net::wbest::probe_payload(a.size, &a.server).is_none() || a.size < min {
                return Err(CliError::Input(format!(
                    "--size: must be {min} to 65535 bytes (the IP packet, {} bytes of IP and UDP header included), not {}",
                    wisp_net::wbest::ip_udp_header(&a.server),
                    a.size
                )));
            }
            cfg.validate().map_err(|e| match e.key {
                "pairs" | "train" | "size" => {
                    CliError::Input(format!("--{}: {}", e.key, e.message))
                }
                _ => CliError::input(e),
            })?;
            let direction = match a.direction {
                DirectionArg::ToServer => Direction::ToServer,
                DirectionArg::FromServer => Direction::FromServer,
            };
            let r = wisp_net::wbest::client(a.server, cfg, direction).map_err(|e| match e {
                WbestError::Config(c) => CliError::input(c),
                // Was "connect: Connection refused", naming neither the flag nor the address.
                WbestError::Io {
                    what: "connect",
                    err,
                } => CliError::Io(format!(
                    "--server {}: cannot connect: {err} (is `wisp wbest server` running there?)",
                    a.server
                )),
                // The server hung up on our Hello: most likely one of another version (it
                // drops what it cannot parse).
                WbestError::Io {
                    what: "control read",
                    err,
                } if matches!(
                    err.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof
                ) =>
                {
                    CliError::Io(format!(
                        "--server {}: the server closed the control connection ({err}); is it a `wisp wbest server` of this version (control format {})?",
                        a.server,
                        wisp_net::wbest_wire::VERSION
                    ))
                }
                e => CliError::Io(e.to_string()),
            })?;
            print_report(&r, a.json);
            Ok(())
        }
    }
}

fn print_report(r: &WbestReport, json: bool) {
    if json {
        println!(
            "{}",
            serde_json::json!({
                "capacity_mbps": r.capacity_mbps,
                "available_mbps": r.available_mbps,
                "bytes_sent": r.bytes_sent,
                "time_s": r.time_s,
                "achievable_mbps": r.achievable_mbps,
                "pairs_used": r.pairs_used,
                "gaps_used": r.gaps_used,
                "gaps_sender_late": r.gaps_sender_late,
                "train_lost": r.train_lost,
                "foreign_datagrams": r.foreign_datagrams,
            })
        );
    } else {
        println!(
            "capacity (C_e) {:.2} Mbit/s, available (A) {:.2} Mbit/s, {} bytes, {:.3} s",
            r.capacity_mbps, r.available_mbps, r.bytes_sent, r.time_s
        );
        let n = |k: u32, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
        println!(
            "  train: dispersion rate (R) {:.2} Mbit/s over {}, {} lost; {} used{}",
            r.achievable_mbps,
            n(r.gaps_used, "gap"),
            r.train_lost,
            n(r.pairs_used, "pair"),
            if r.gaps_sender_late > 0 {
                format!(
                    "; {} left out (the sender was descheduled)",
                    n(r.gaps_sender_late, "gap")
                )
            } else {
                String::new()
            }
        );
        if r.foreign_datagrams > 0 {
            println!(
                "  {} datagrams from others (not this run's address and session nonce) ignored",
                r.foreign_datagrams
            );
        }
    }
}
