//! Waiting for "this socket is readable or it is time T", with sub-millisecond accuracy.
//!
//! `epoll_wait` has millisecond timeouts (the granularity that makes Mahimahi's `mm-link` add
//! about a millisecond per direction). [`Waiter`] uses `epoll_pwait2` (Linux ≥ 5.11), whose
//! timeout is a `timespec`: one system call waits for the sockets or TUN devices and for the
//! deadline, to the nanosecond. The thread's timer slack is set to 1 ns (`PR_SET_TIMERSLACK`;
//! the default 50 µs would delay every wake-up by up to that much). An optional spin margin
//! wakes that much early and polls until the deadline, trading CPU for the kernel's wake-up
//! latency. `examples/timer_lateness.rs` measures the lateness.

use crate::Clock;
use rustix::event::epoll;
use rustix::time::Timespec;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use wisp_core::{Duration, Instant};

/// An epoll set with deadlines.
pub struct Waiter {
    epoll: OwnedFd,
    spin: Duration,
    clock: Clock,
    events: Vec<epoll::Event>,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter")
            .field("epoll", &self.epoll)
            .field("spin", &self.spin)
            .finish()
    }
}

impl Waiter {
    /// A waiter for the calling thread (it sets the thread's timer slack). `spin` is the margin
    /// spent polling before a deadline (zero: sleep until it).
    pub fn new(spin: Duration) -> io::Result<Self> {
        // Best effort: without it wake-ups are up to 50 µs late, which is still usable.
        let _ = nix::sys::prctl::set_timerslack(1);
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        Ok(Waiter {
            epoll,
            spin,
            clock: Clock::new(),
            events: Vec::with_capacity(16),
        })
    }

    /// Watches `fd` for readability; `token` identifies it in [`Waiter::wait`]'s answer.
    pub fn add(&self, fd: impl AsFd, token: u64) -> io::Result<()> {
        Ok(epoll::add(
            &self.epoll,
            fd,
            epoll::EventData::new_u64(token),
            epoll::EventFlags::IN,
        )?)
    }

    /// Waits until a watched fd is readable or `deadline` (on [`Clock`]) has come; `None` waits
    /// for an fd only. The tokens of the readable fds are put in `ready`; an empty `ready` means
    /// the deadline came or a signal interrupted the wait (callers check the time again).
    pub fn wait(&mut self, deadline: Option<Instant>, ready: &mut Vec<u64>) -> io::Result<()> {
        ready.clear();
        let now = self.clock.now();
        match deadline {
            None => self.poll(None, ready),
            Some(d) if d <= now => self.poll(Some(Duration::ZERO), ready),
            Some(d) if d - now <= self.spin => self.spin_until(d, ready),
            Some(d) => {
                self.poll(Some(d - now - self.spin), ready)?;
                if ready.is_empty() && !self.spin.is_zero() {
                    self.spin_until(d, ready)?;
                }
                Ok(())
            }
        }
    }

    fn spin_until(&mut self, d: Instant, ready: &mut Vec<u64>) -> io::Result<()> {
        loop {
            self.poll(Some(Duration::ZERO), ready)?;
            if !ready.is_empty() || self.clock.now() >= d {
                return Ok(());
            }
            std::hint::spin_loop();
        }
    }

    /// One `epoll_pwait2`; an interrupted wait returns nothing.
    fn poll(&mut self, timeout: Option<Duration>, ready: &mut Vec<u64>) -> io::Result<()> {
        let ts = timeout.map(|t| Timespec {
            tv_sec: (t.as_nanos() / 1_000_000_000) as i64,
            tv_nsec: (t.as_nanos() % 1_000_000_000) as i64,
        });
        self.events.clear();
        match epoll::wait(
            &self.epoll,
            rustix::buffer::spare_capacity(&mut self.events),
            ts.as_ref(),
        ) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        ready.extend(self.events.iter().map(|e| e.data.u64()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    #[test]
    fn wakes_at_the_deadline_not_before() {
        let mut w = Waiter::new(Duration::ZERO).unwrap();
        let clock = Clock::new();
        let mut ready = vec![];
        for i in 0..20u64 {
            let d = clock.now() + Duration::from_micros(300 + 37 * i);
            w.wait(Some(d), &mut ready).unwrap();
            assert!(ready.is_empty());
            assert!(clock.now() >= d);
        }
    }

    #[test]
    fn reports_a_readable_socket_before_the_deadline() {
        let mut w = Waiter::new(Duration::from_micros(20)).unwrap();
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        w.add(&a, 7).unwrap();
        b.send_to(b"x", a.local_addr().unwrap()).unwrap();
        let clock = Clock::new();
        let mut ready = vec![];
        let deadline = clock.now() + Duration::from_secs(5);
        w.wait(Some(deadline), &mut ready).unwrap();
        assert_eq!(ready, [7]);
        assert!(clock.now() < deadline);
    }
}
