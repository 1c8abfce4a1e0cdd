//! Starting and stopping the headless Chromiums of `wisp browser-call`.

use crate::error::CliError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The flags both browsers run with: headless, no sandbox (we are root), a fresh profile, the
/// clip as the camera, media allowed without a prompt, real host addresses in the ICE
/// candidates (not mDNS names), no proxy, no background throttling of the pages' timers.
pub fn flags(profile: &Path, clip: &Path) -> Vec<OsString> {
    let mut f: Vec<OsString> = [
        "--headless=new",
        "--no-sandbox",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-sync",
        "--disable-component-update",
        "--disable-background-networking",
        "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding",
        "--disable-backgrounding-occluded-windows",
        "--no-proxy-server",
        "--mute-audio",
        "--autoplay-policy=no-user-gesture-required",
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        "--disable-features=WebRtcHideLocalIpsWithMdns",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let mut with = |k: &str, v: &Path| {
        let mut s = OsString::from(k);
        s.push(v);
        f.push(s);
    };
    with("--user-data-dir=", profile);
    with("--use-file-for-fake-video-capture=", clip);
    f
}

/// The Chromium to run: `--chromium`, else `chromium` or `chromium-browser` on the PATH.
pub fn find(given: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(p) = given {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(CliError::Input(format!(
                "--chromium {}: no such file",
                p.display()
            )))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(CliError::Input(
        "chromium is not installed (apt-get install chromium), or give its path with --chromium"
            .into(),
    ))
}

/// A browser on the host in a process group of its own; dropping it ends the whole group
/// (SIGTERM, then SIGKILL after two seconds) and reaps it.
#[derive(Debug)]
pub struct Browser {
    child: Child,
}

impl Browser {
    /// Starts `chromium FLAGS URL`, its output into `log`. It gets SIGKILL if the thread that
    /// started it ends (so also if wisp is killed).
    pub fn start(
        chromium: &Path,
        flags: &[OsString],
        url: &str,
        log: &Path,
    ) -> std::io::Result<Self> {
        use std::os::unix::process::CommandExt;
        let out = std::fs::File::create(log)?;
        let mut cmd = Command::new(chromium);
        cmd.args(flags)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(|e| std::io::Error::from_raw_os_error(e as i32))
            });
        }
        Ok(Browser {
            child: cmd.spawn()?,
        })
    }

    /// Whether it has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        let group = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(group, Signal::SIGTERM);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline && !self.exited() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Its helpers (renderer, GPU, zygote) are in the same group.
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// The last `n` lines of a browser's log, for an error message.
pub fn tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
