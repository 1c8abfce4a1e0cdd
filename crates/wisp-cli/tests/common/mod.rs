//! Helpers shared by the CLI's end-to-end tests (each test file uses some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root: the tests run `wisp` from there, as the README does.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `wisp`, from the repository root, without a `WISP_SEED` inherited from the environment.
pub fn wisp_command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wisp"));
    c.current_dir(root()).env_remove("WISP_SEED");
    c
}

/// Runs `wisp ARGS` to completion.
pub fn wisp(args: &[&str]) -> Output {
    wisp_command().args(args).output().expect("run wisp")
}

/// Asserts exit code 2, exactly one line on stderr containing `needle`, nothing on stdout and
/// no output folder (the command gets `--out` pointing at a fresh path).
pub fn assert_bad_input(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut full: Vec<&str> = args.to_vec();
    let out_s = out.to_str().unwrap().to_string();
    full.extend(["--out", &out_s]);
    let o = wisp(&full);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.lines().count(),
        1,
        "{args:?}: expected one line, got:\n{err}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: `{err}` does not mention `{needle}`"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty(), "{args:?}: stdout not empty");
    assert!(!out.exists(), "{args:?}: created {out:?}");
}

/// Every file below `dir`: its path relative to `dir` and its bytes, sorted by path.
pub fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// Asserts that the claims met in `checks` (a summary.json `checks` array; each claim named by
/// `name`) are exactly `expected`: a claim that stops being met fails, and so does one that
/// starts being met (then the expected list is updated, with the reason in the commit). An empty
/// `checks` array fails too.
pub fn assert_claims_met(
    checks: &serde_json::Value,
    name: impl Fn(&serde_json::Value) -> String,
    expected: &[&str],
) {
    let checks = checks.as_array().expect("a checks array");
    assert!(!checks.is_empty(), "no claims were checked");
    let mut met: Vec<String> = checks
        .iter()
        .filter(|c| c["met"].as_bool().expect("met is a boolean"))
        .map(&name)
        .collect();
    met.sort();
    let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    want.sort();
    let lost: Vec<&String> = want.iter().filter(|w| !met.contains(w)).collect();
    let gained: Vec<&String> = met.iter().filter(|m| !want.contains(m)).collect();
    assert!(
        lost.is_empty() && gained.is_empty(),
        "claims met changed.\n  no longer met: {lost:#?}\n  newly met (update the expected list): {gained:#?}"
    );
    assert_eq!(met, want, "a claim is listed twice");
}

/// Tests whose figures depend on timing (delays, rates) or that load the machine with traffic
/// take a share of this test binary's real-time slots before they start, so that the
/// harness's threads never run two heavy ones at once on a small machine (one would disturb
/// the other's figures). [`real_time`] takes every slot: the test runs alone among them (bulk
/// traffic, probe trains whose dispersion is the figure, video encoding, many flows at once).
/// [`real_time_shared`] takes one: two such tests may overlap. It is for tests that mostly
/// wait (a few flows at a few Mbit/s for tens of seconds, pings) and whose tolerances are in
/// milliseconds or percent, which a second light test's microseconds of CPU do not reach.
/// Each test binary has its own slots.
const REAL_TIME_SLOTS: u32 = 2;
static REAL_TIME_FREE: std::sync::Mutex<u32> = std::sync::Mutex::new(REAL_TIME_SLOTS);
static REAL_TIME_FREED: std::sync::Condvar = std::sync::Condvar::new();

/// The real-time slots, all of them: no other real-time test runs meanwhile.
pub fn real_time() -> RealTime {
    take_slots(REAL_TIME_SLOTS)
}

/// One real-time slot: another light real-time test may run beside this one
/// ([`REAL_TIME_SLOTS`]).
pub fn real_time_shared() -> RealTime {
    take_slots(1)
}

fn take_slots(n: u32) -> RealTime {
    let mut free = REAL_TIME_FREE.lock().unwrap_or_else(|e| e.into_inner());
    while *free < n {
        free = REAL_TIME_FREED
            .wait(free)
            .unwrap_or_else(|e| e.into_inner());
    }
    *free -= n;
    RealTime {
        slots: n,
        since: std::time::Instant::now(),
    }
}

/// Real-time slots held by one test ([`real_time`], [`real_time_shared`]). When the test ends
/// it gives them back and appends a line to `target/tmp/real-time-tests.tsv`: the test's name
/// (libtest names its thread after it), the seconds it held them, and the time: what
/// `scripts/test.sh` ranks the slowest tests by.
pub struct RealTime {
    slots: u32,
    since: std::time::Instant,
}

impl Drop for RealTime {
    fn drop(&mut self) {
        use std::io::Write;
        {
            let mut free = REAL_TIME_FREE.lock().unwrap_or_else(|e| e.into_inner());
            *free += self.slots;
            REAL_TIME_FREED.notify_all();
        }
        let name = std::thread::current().name().unwrap_or("?").to_string();
        let secs = self.since.elapsed().as_secs_f64();
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-time-tests.tsv");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let bin = std::env::args()
                .next()
                .and_then(|a| {
                    Path::new(&a)
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                })
                .unwrap_or_default();
            // `net-d5b2807424414107` → `net`.
            let bin = bin.rsplit_once('-').map_or(bin.as_str(), |(b, _)| b);
            let _ = writeln!(f, "{secs:.1}\t{bin}::{name}\t{at}");
        }
    }
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_wisp")
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether this test can use namespaces and TUN devices; in CI their absence is a failure.
pub fn privileged(test: &str) -> bool {
    let ok = nix::unistd::geteuid().is_root() && Path::new("/dev/net/tun").exists();
    if !ok {
        assert!(
            !in_ci(),
            "{test}: needs root and /dev/net/tun (CI runs as root)"
        );
        eprintln!("skipping {test}: needs root (network namespaces, TUN devices)");
    }
    ok
}

/// A UDP port free on loopback now.
pub fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `bytes` as JSON, or a panic that shows them.
pub fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

/// Reads a running `wisp link`'s stderr up to the line naming the namespace's address; returns
/// that address and a thread that drains (and returns) the rest of stderr.
pub fn namespace_address(
    link: &mut std::process::Child,
) -> (String, std::thread::JoinHandle<String>) {
    use std::io::{BufRead, BufReader, Read};
    let mut err = BufReader::new(link.stderr.take().expect("wisp link's stderr is piped"));
    let mut ns = None;
    let mut line = String::new();
    while ns.is_none() && err.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.split("namespace ").nth(1) {
            ns = rest.split_whitespace().next().map(str::to_string);
        }
        line.clear();
    }
    let ns = ns.expect("wisp link names the namespace's address");
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
        rest
    });
    (ns, drain)
}

/// Waits for `child` up to `limit` and returns its exit status; past the limit, kills it and
/// returns `None` (an iperf3 server whose client's last control segment was still in the link
/// when the link exited waits forever).
pub fn reap(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Whether `tool` is installed; in CI its absence is a failure.
pub fn have(test: &str, tool: &str) -> bool {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !in_ci(),
            "{test}: `{tool}` is not installed (CI installs it)"
        );
        eprintln!("skipping {test}: `{tool}` is not installed");
    }
    ok
}

/// Asserts exit code 2, no panic, and exactly one line on stderr once the lines `ignore` picks
/// are dropped (the seed, where a receiver listened); returns that line. `what` names the case.
pub fn the_one_error_line(o: &Output, what: &str, ignore: fn(&str) -> bool) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !ignore(l)).collect();
    assert_eq!(lines.len(), 1, "{what}: {err}");
    lines[0].to_string()
}

/// The seed line every run prints, for [`the_one_error_line`].
pub fn seed_line(line: &str) -> bool {
    line.starts_with("wisp: seed")
}

/// Asserts that a command succeeded, showing its exit status and output if not.
pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `wisp ARGS` as the unprivileged user `nobody` (uid 65534, no capabilities), through
/// `setpriv`; the binary is copied into a world-readable `dir` first, and runs from there.
pub fn wisp_as_nobody(dir: &Path, args: &[&str]) -> Output {
    let exe = dir.join("wisp");
    std::fs::copy(bin(), &exe).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&exe)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run setpriv")
}

/// Starts `wisp ARGS`, a server (`saturate server`, `wbest server`), in the background from the
/// repository root: stdout discarded. Returns once it is ready: when it has printed its
/// `listening on` line (both servers print it once their sockets are bound), and when `socket`
/// (a Unix socket it creates) exists; each waited for at most 10 s. Its stderr is kept for
/// [`Guarded::wait_with_output`] when `keep_stderr` (else read and dropped).
///
/// A fixed 300-ms wait stood here before; under CI's load a `wbest server` was not yet
/// listening when its client connected ("Connection refused").
pub fn wisp_server(args: &[&str], keep_stderr: bool, socket: Option<&Path>) -> Guarded {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut server = wisp_command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn_guarded();
    await_listening(&mut server, keep_stderr);
    if let Some(sock) = socket {
        let t = Instant::now();
        while !sock.exists() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    server
}

/// Waits (at most 10 s) until `child`, spawned with its stderr piped, prints a line holding
/// `listening on` (`wisp recv` and the servers print it once their sockets are bound), or ends.
/// A thread reads its stderr from then on, keeping it for [`Guarded::wait_with_output`] and
/// [`Guarded::kept_stderr`] when `keep_stderr`. If the line never comes the test fails later on
/// what the child said or on its peer's error.
pub fn await_listening(child: &mut Guarded, keep_stderr: bool) {
    use std::io::BufRead;
    let stderr = child.stderr.take().expect("stderr piped");
    let (ready_tx, ready) = std::sync::mpsc::channel();
    child.1 = Some(std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut lines = std::io::BufReader::new(stderr);
        let mut line = Vec::new();
        while lines.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            if line.windows(12).any(|w| w == b"listening on") {
                let _ = ready_tx.send(());
            }
            if keep_stderr {
                kept.extend_from_slice(&line);
            }
            line.clear();
        }
        kept
    }));
    let _ = ready.recv_timeout(std::time::Duration::from_secs(10));
}

/// A child process killed and reaped when it is dropped unless it was waited for: a test that
/// fails between starting `wisp link` (or a server) and waiting for it leaves nothing running
/// (what `wisp link` runs dies with it, `PR_SET_PDEATHSIG`).
pub struct Guarded(
    Option<std::process::Child>,
    /// Reads the child's stderr when [`wisp_server`] took it; gives back what it kept.
    Option<std::thread::JoinHandle<Vec<u8>>>,
);

impl Guarded {
    /// Waits for the process and collects its output (see `Child::wait_with_output`).
    pub fn wait_with_output(mut self) -> std::io::Result<std::process::Output> {
        let mut o = self.0.take().expect("not waited yet").wait_with_output()?;
        if let Some(reader) = self.1.take() {
            o.stderr = reader.join().expect("stderr reader");
        }
        Ok(o)
    }

    /// What a [`wisp_server`] started with `keep_stderr` printed; call it once the server
    /// has ended (it waits for the end of its stderr).
    pub fn kept_stderr(&mut self) -> String {
        let reader = self.1.take().expect("a wisp_server's stderr");
        String::from_utf8_lossy(&reader.join().expect("stderr reader")).into_owned()
    }
}

impl std::ops::Deref for Guarded {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        self.0.as_ref().expect("not waited yet")
    }
}

impl std::ops::DerefMut for Guarded {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        self.0.as_mut().expect("not waited yet")
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            if let Ok(None) = c.try_wait() {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

/// `Command::spawn` into a [`Guarded`] child.
pub trait SpawnGuarded {
    fn spawn_guarded(&mut self) -> Guarded;
}

impl SpawnGuarded for std::process::Command {
    fn spawn_guarded(&mut self) -> Guarded {
        let program = self.get_program().to_string_lossy().into_owned();
        Guarded(
            Some(
                self.spawn()
                    .unwrap_or_else(|e| panic!("start {program}: {e}")),
            ),
            None,
        )
    }
}
