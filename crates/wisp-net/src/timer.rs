//! Waiting for "this socket is readable or it is time T", with sub-millisecond accuracy.
//!
//! `epoll` alone has millisecond timeouts (the granularity that makes Mahimahi's `mm-link` add
//! about 1 ms per direction). [`Waiter`] arms a `timerfd` on `CLOCK_MONOTONIC` at the absolute
//! deadline (nanosecond resolution, no drift from relative timeouts) and waits on it together
//! with the sockets or TUN devices in one `epoll` set. The thread's timer slack is set to 1 ns
//! (`PR_SET_TIMERSLACK`; the default 50 µs would delay every wake-up by up to that much). An
//! optional spin margin wakes that much early and polls until the deadline, trading CPU for the
//! kernel's wake-up latency. The benchmark `timer` measures the lateness.

use crate::Clock;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::io;
use std::os::fd::AsFd;
use wisp_core::{Duration, Instant};

const TIMER_TOKEN: u64 = u64::MAX;

/// An epoll set plus a deadline timer.
#[derive(Debug)]
pub struct Waiter {
    epoll: Epoll,
    timer: TimerFd,
    spin: Duration,
    clock: Clock,
    events: Vec<EpollEvent>,
}

fn io_err(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

impl Waiter {
    /// A waiter for the calling thread (it sets the thread's timer slack). `spin` is the margin
    /// spent polling before a deadline (zero: sleep until the timer fires).
    pub fn new(spin: Duration) -> io::Result<Self> {
        // Best effort: without it wake-ups are up to 50 µs late, which is still usable.
        let _ = nix::sys::prctl::set_timerslack(1);
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(io_err)?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .map_err(io_err)?;
        epoll
            .add(&timer, EpollEvent::new(EpollFlags::EPOLLIN, TIMER_TOKEN))
            .map_err(io_err)?;
        Ok(Waiter {
            epoll,
            timer,
            spin,
            clock: Clock::new(),
            events: vec![EpollEvent::empty(); 16],
        })
    }

    /// Watches `fd` for readability; `token` identifies it in [`Waiter::wait`]'s answer.
    pub fn add(&self, fd: impl AsFd, token: u64) -> io::Result<()> {
        assert_ne!(token, TIMER_TOKEN, "token reserved for the timer");
        self.epoll
            .add(fd, EpollEvent::new(EpollFlags::EPOLLIN, token))
            .map_err(io_err)
    }

    /// Waits until a watched fd is readable or `deadline` (on [`Clock`]) has come; `None` waits
    /// for an fd only. The tokens of the readable fds are put in `ready` (empty: the deadline).
    pub fn wait(&mut self, deadline: Option<Instant>, ready: &mut Vec<u64>) -> io::Result<()> {
        ready.clear();
        let now = self.clock.now();
        match deadline {
            Some(d) if d <= now => return self.poll(EpollTimeout::ZERO, ready),
            Some(d) if d - now <= self.spin => return self.spin_until(d, ready),
            Some(d) => {
                let wake = d.saturating_sub(self.spin);
                let ts = TimeSpec::new(
                    (wake.as_nanos() / 1_000_000_000) as i64,
                    (wake.as_nanos() % 1_000_000_000) as i64,
                );
                self.timer
                    .set(
                        Expiration::OneShot(ts),
                        TimerSetTimeFlags::TFD_TIMER_ABSTIME,
                    )
                    .map_err(io_err)?;
            }
            None => self.timer.unset().map_err(io_err)?,
        }
        loop {
            self.poll(EpollTimeout::NONE, ready)?;
            if !ready.is_empty() {
                return Ok(());
            }
            match deadline {
                Some(d) if self.clock.now() < d => {
                    if self.spin.is_zero() {
                        // A spurious timer event (an old expiration): wait again.
                        continue;
                    }
                    return self.spin_until(d, ready);
                }
                _ => return Ok(()),
            }
        }
    }

    fn spin_until(&mut self, d: Instant, ready: &mut Vec<u64>) -> io::Result<()> {
        loop {
            self.poll(EpollTimeout::ZERO, ready)?;
            if !ready.is_empty() || self.clock.now() >= d {
                return Ok(());
            }
            std::hint::spin_loop();
        }
    }

    /// One `epoll_wait`; timer events are consumed and not reported.
    fn poll(&mut self, timeout: EpollTimeout, ready: &mut Vec<u64>) -> io::Result<()> {
        let n = loop {
            match self.epoll.wait(&mut self.events, timeout) {
                Ok(n) => break n,
                Err(nix::Error::EINTR) => {
                    if timeout == EpollTimeout::ZERO {
                        break 0;
                    }
                }
                Err(e) => return Err(io_err(e)),
            }
        };
        for e in &self.events[..n] {
            if e.data() == TIMER_TOKEN {
                // Drain the expiration count (non-blocking; EAGAIN if already drained).
                let mut b = [0u8; 8];
                let _ = nix::unistd::read(&self.timer, &mut b);
            } else {
                ready.push(e.data());
            }
        }
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
