//! The call's course: the link with the receiver inside, the signalling servers, the sender,
//! waiting for the connection, the call's duration, and the teardown.

use crate::browser::chrome::{self, Browser};
use crate::browser::signal::{self, Board, Listener};
use crate::error::CliError;
use std::ffi::OsString;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wisp_net::emulator::LinkOptions;
use wisp_net::emulator::netns::Addresses;

/// How long both browsers have to start, signal and connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the sender side needs.
#[derive(Debug)]
pub struct Call {
    pub chromium: PathBuf,
    pub flags: Vec<OsString>,
    pub sender_log: PathBuf,
    pub receiver_log: PathBuf,
    pub audio: bool,
    pub duration: Duration,
    pub board: Arc<Mutex<Board>>,
}

/// How the call went.
#[derive(Debug)]
pub struct Outcome {
    /// It connected and ran for its whole duration.
    pub completed: bool,
    /// From when it connected to when it ended, ms since the Unix epoch.
    pub window_unix_ms: Option<(f64, f64)>,
}

fn unix_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// Whether both pages said "state connected"; an error or a failed state of either, as text.
fn connection(board: &Mutex<Board>) -> (bool, Option<String>) {
    let b = board.lock().unwrap_or_else(|e| e.into_inner());
    let said = |role: &str, what: &str| b.events.iter().any(|(r, w)| r == role && w == what);
    let failure = b
        .events
        .iter()
        .find(|(_, w)| w.starts_with("error") || w == "state failed" || w == "state closed")
        .map(|(r, w)| format!("the {r}'s page: {w}"));
    let connected = said("sender", "state connected") && said("receiver", "state connected");
    (connected, failure)
}

/// The sender's side of the call, on its own thread: starts the sender's browser, waits for the
/// connection, lets the call run, and ends the sender (dropping it) before returning.
fn sender_side(call: &Call, url: &str, stop: &AtomicBool) -> Result<Outcome, CliError> {
    let mut browser = Browser::start(&call.chromium, &call.flags, url, &call.sender_log)
        .map_err(|e| CliError::Io(format!("cannot start {}: {e}", call.chromium.display())))?;
    say!("browser-call: both browsers started; connecting");
    let start = Instant::now();
    let fail = |why: String| {
        CliError::Io(format!(
            "{why}; the sender's last log lines:\n{}",
            chrome::tail(&call.sender_log, 5)
        ))
    };
    let mut connected_at = None;
    while !stop.load(Ordering::Relaxed) {
        let (connected, failure) = connection(&call.board);
        if let Some(f) = failure {
            return Err(fail(f));
        }
        if browser.exited() {
            return Err(fail("the sender's browser exited".into()));
        }
        match connected_at {
            None if connected => {
                say!(
                    "browser-call: connected after {:.1} s; the call runs {} s",
                    start.elapsed().as_secs_f64(),
                    call.duration.as_secs()
                );
                connected_at = Some((Instant::now(), unix_ms()));
            }
            None if start.elapsed() > CONNECT_TIMEOUT => {
                return Err(fail(format!(
                    "the call did not connect within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
            Some((t, from)) if t.elapsed() >= call.duration => {
                return Ok(Outcome {
                    completed: true,
                    window_unix_ms: Some((from, unix_ms())),
                });
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Outcome {
        completed: false,
        window_unix_ms: connected_at.map(|(_, from)| (from, unix_ms())),
    })
}

/// Runs the call: the link with the receiver's command (`opts`), whose URL is written to
/// `ready` once its server listens; the sender's side on a thread of its own. Returns the
/// sender side's result (the outer error: the link's) and the link's addresses.
pub fn run(
    call: Call,
    opts: LinkOptions,
    ready: &Path,
    stop: Arc<AtomicBool>,
) -> Result<(Result<Outcome, CliError>, Addresses), CliError> {
    let loopback = signal::listen(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        Arc::clone(&call.board),
    )
    .map_err(|e| CliError::Io(format!("cannot listen on loopback: {e}")))?;
    let audio = if call.audio { "&audio=1" } else { "" };
    let mut link_server: Option<Listener> = None;
    let mut sender: Option<std::thread::JoinHandle<Result<Outcome, CliError>>> = None;
    let mut addresses = None;
    let mut setup_error = None;
    let call = Arc::new(call);
    let summary = wisp_net::emulator::run(opts, Arc::clone(&stop), &mut |addrs| {
        addresses = Some(*addrs);
        let started = start_sides(&call, *addrs, &loopback, ready, audio, &stop);
        match started {
            Ok((server, thread)) => {
                link_server = Some(server);
                sender = Some(thread);
            }
            Err(e) => {
                setup_error = Some(e);
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    // The link has ended (the receiver exited, or was ended): the sender's side ends too.
    let receiver_ended_itself = !stop.swap(true, Ordering::Relaxed);
    let outcome = sender.map(|t| {
        t.join()
            .unwrap_or_else(|_| Err(CliError::Io("the sender's thread panicked".into())))
    });
    drop(link_server);
    drop(loopback);
    let summary = summary.map_err(crate::link::link_error)?;
    if let Some(e) = setup_error {
        return Err(e);
    }
    let addrs = addresses.ok_or_else(|| CliError::Io("the link did not start".into()))?;
    let outcome = outcome.unwrap_or_else(|| Err(CliError::Io("the call did not start".into())));
    crate::link::report(&summary);
    let outcome = match outcome {
        Ok(_) if receiver_ended_itself => Err(CliError::Io(format!(
            "the receiver's browser exited during the call (code {}); its last log lines:\n{}",
            summary.exit_code,
            chrome::tail(&call.receiver_log, 5)
        ))),
        other => other,
    };
    Ok((outcome, addrs))
}

/// Once the link carries traffic: the receiver's server on the link's host address, its origin
/// and URL into `ready` (written whole, then renamed), and the sender's side on its thread.
fn start_sides(
    call: &Arc<Call>,
    addrs: Addresses,
    loopback: &Listener,
    ready: &Path,
    audio: &str,
    stop: &Arc<AtomicBool>,
) -> Result<(Listener, std::thread::JoinHandle<Result<Outcome, CliError>>), CliError> {
    let server = signal::listen(SocketAddr::from((addrs.host, 0)), Arc::clone(&call.board))
        .map_err(|e| CliError::Io(format!("cannot listen on {}: {e}", addrs.host)))?;
    let origin = format!("http://{}", server.addr);
    let lines = format!("{origin}\n{origin}/?role=receiver&addr={}\n", addrs.ns);
    let tmp = ready.with_extension("tmp");
    std::fs::write(&tmp, lines)
        .and_then(|()| std::fs::rename(&tmp, ready))
        .map_err(|e| CliError::Io(format!("cannot write {}: {e}", ready.display())))?;
    let sender_url = format!(
        "http://{}/?role=sender&addr={}{audio}",
        loopback.addr, addrs.host
    );
    let (call, stop) = (Arc::clone(call), Arc::clone(stop));
    let thread = std::thread::Builder::new()
        .name("wisp-call".into())
        .spawn(move || {
            let r = sender_side(&call, &sender_url, &stop);
            // The call is over (or failed): end the receiver, and with it the link.
            stop.store(true, Ordering::Relaxed);
            r
        })
        .map_err(|e| CliError::Io(format!("cannot start a thread: {e}")))?;
    Ok((server, thread))
}
