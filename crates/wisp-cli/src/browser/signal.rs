//! The signalling server of `wisp browser-call` (`tiny_http`): it serves the page to both
//! browsers, passes the offer and the answer between them, and collects what the pages report
//! (their getStats snapshots every 200 ms, their events). One server listens on loopback (for
//! the sender on the host), one on the link's host address (for the receiver in the
//! namespace); they share one [`Board`].

use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tiny_http::{Header, Method, Request, Response, Server};
use wisp_net::browser::Snapshot;

const PAGE: &str = include_str!("page.html");
/// A POST body larger than this is refused (an SDP is a few kB, a snapshot a few hundred bytes).
const MAX_BODY: u64 = 256 * 1024;
/// Snapshots kept per role: far more than a call of the longest --duration-s posts.
const MAX_SNAPSHOTS: usize = 100_000;

/// What the two pages have said, in the order it arrived.
#[derive(Debug, Default)]
pub struct Board {
    pub offer: Option<String>,
    pub answer: Option<String>,
    pub sender: Vec<Snapshot>,
    pub receiver: Vec<Snapshot>,
    /// (role, what): "state connected", "error …".
    pub events: Vec<(String, String)>,
}

/// A listening server and its thread; dropping it stops the thread.
#[derive(Debug)]
pub struct Listener {
    pub addr: SocketAddr,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Listens on `addr` (port 0: any free port) and serves `board` until dropped.
pub fn listen(addr: SocketAddr, board: Arc<Mutex<Board>>) -> std::io::Result<Listener> {
    let server = Server::http(addr).map_err(std::io::Error::other)?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| std::io::Error::other("not an IP listener"))?;
    let done = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&done);
    let thread = std::thread::Builder::new()
        .name("wisp-signal".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(Some(req)) = server.recv_timeout(std::time::Duration::from_millis(50)) {
                    serve(req, &board);
                }
            }
        })?;
    Ok(Listener {
        addr,
        done,
        thread: Some(thread),
    })
}

/// The role a request names (`?role=sender` or `?role=receiver`).
fn role(url: &str) -> Option<&'static str> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|kv| match kv {
        "role=sender" => Some("sender"),
        "role=receiver" => Some("receiver"),
        _ => None,
    })
}

fn serve(mut req: Request, board: &Mutex<Board>) {
    let url = req.url().to_string();
    let path = url.split('?').next().unwrap_or_default().to_string();
    let mut body = String::new();
    if *req.method() == Method::Post {
        let _ = req.as_reader().take(MAX_BODY).read_to_string(&mut body);
    }
    let mut b = board.lock().unwrap_or_else(|e| e.into_inner());
    let reply = match (req.method(), path.as_str(), role(&url)) {
        (Method::Get, "/", Some(_)) => Some((200, PAGE.to_string(), "text/html")),
        (Method::Get, "/offer", _) => b.offer.clone().map(|s| (200, s, "application/json")),
        (Method::Get, "/answer", _) => b.answer.clone().map(|s| (200, s, "application/json")),
        (Method::Post, "/offer", Some("sender")) => {
            b.offer = Some(body);
            Some((200, String::new(), "text/plain"))
        }
        (Method::Post, "/answer", Some("receiver")) => {
            b.answer = Some(body);
            Some((200, String::new(), "text/plain"))
        }
        (Method::Post, "/stats", Some(r)) => {
            let list = if r == "sender" {
                &mut b.sender
            } else {
                &mut b.receiver
            };
            if let Ok(mut s) = serde_json::from_str::<Snapshot>(&body)
                && list.len() < MAX_SNAPSHOTS
            {
                s.role = r.to_string();
                list.push(s);
            }
            Some((200, String::new(), "text/plain"))
        }
        (Method::Post, "/event", Some(r)) => {
            let what = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["what"].as_str().map(str::to_string))
                .unwrap_or(body);
            if b.events.len() < MAX_SNAPSHOTS {
                b.events.push((r.to_string(), what));
            }
            Some((200, String::new(), "text/plain"))
        }
        _ => None,
    };
    drop(b);
    // 204 while the offer or the answer is not there yet; 404 for anything else unknown.
    let (code, text, kind) = reply.unwrap_or_else(|| {
        let waiting = matches!(path.as_str(), "/offer" | "/answer");
        (if waiting { 204 } else { 404 }, String::new(), "text/plain")
    });
    let mut resp = Response::from_string(text).with_status_code(code);
    if let Ok(h) = Header::from_bytes("Content-Type", kind) {
        resp.add_header(h);
    }
    let _ = req.respond(resp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_come_from_the_query() {
        assert_eq!(role("/?role=sender&addr=1.2.3.4"), Some("sender"));
        assert_eq!(role("/stats?role=receiver"), Some("receiver"));
        assert_eq!(role("/stats?role=other"), None);
        assert_eq!(role("/stats"), None);
    }
}
