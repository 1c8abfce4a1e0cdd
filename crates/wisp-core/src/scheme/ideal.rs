//! `ideal` — the oracle sender of the Sprout paper (Winstein et al., NSDI 2013, §6.2).
//!
//! "An ideal protocol: one that sends packets timed to arrive exactly when the network is ready
//! to dequeue and transmit a packet. This ideal protocol will achieve 100% of the available
//! throughput of the link and its packets will never sit in a queue."
//!
//! The sender is given the link's schedule (by the simulator, which knows the trace): for each
//! delivery opportunity at time *T* carrying *B* bytes, *B* bytes of credit at *T − d*, where *d*
//! is the one-way propagation delay in front of the bottleneck. It sends full-size packets as
//! soon as the credit allows, so each packet reaches the queue exactly at its opportunity.
//!
//! Deviations: opportunities earlier than *d* after the start cannot be reached by any sender and
//! are skipped (the simulator's ideal-delay metric skips them too).

use super::cbr::SilentReceiver;
use super::params::{Checked, Given, Validate, scheme_config};
use super::registry::{Halves, Scheme};
use super::{BuildError, Built, Needs, SchemeContext, listed_as};
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::pacer::Pacer;
use crate::packet::DataHeader;
use crate::source::Source;
use crate::time::Instant;
use crate::units::DataSize;
use crate::wire::NoFeedback;
use core::fmt;

/// The ideal sender's schedule: `(send time, bytes)` in non-decreasing time order.
pub type IdealSchedule = Box<dyn Iterator<Item = (Instant, DataSize)> + Send>;

scheme_config! {
    /// Configuration of [`IdealSender`] (it has no parameters; the schedule comes from the link).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IdealConfig;
}

impl Validate for IdealConfig {
    fn validate(&self, _: &Given<'_>) -> Checked {
        Ok(())
    }
}

/// Sends exactly what the link will deliver, exactly in time.
pub struct IdealSender {
    schedule: IdealSchedule,
    next: Option<(Instant, DataSize)>,
    credit: u64,
}

impl fmt::Debug for IdealSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdealSender")
            .field("next", &self.next)
            .field("credit", &self.credit)
            .finish()
    }
}

impl IdealSender {
    pub fn new(mut schedule: IdealSchedule) -> Self {
        let next = schedule.next();
        IdealSender {
            schedule,
            next,
            credit: 0,
        }
    }

    fn accrue(&mut self, now: Instant) {
        while let Some((t, bytes)) = self.next {
            if t > now {
                break;
            }
            self.credit += bytes.bytes();
            self.next = self.schedule.next();
        }
    }
}

impl Sender for IdealSender {
    type Feedback = NoFeedback;
    type Fields = ();
    fn on_packet_sent(&mut self, _now: Instant, packet: &DataHeader, _ctx: &SendContext) {
        self.credit = self.credit.saturating_sub(packet.size.bytes());
    }
    fn on_feedback(&mut self, _now: Instant, feedback: &NoFeedback) {
        match *feedback {}
    }
    fn on_time(&mut self, now: Instant) {
        self.accrue(now);
    }
    fn allowance(&self, _now: Instant) -> Allowance {
        Allowance::Window {
            bytes: DataSize::from_bytes(self.credit),
            pacing: None,
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next.map(|(t, _)| t)
    }
    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: None,
            window: Some(DataSize::from_bytes(self.credit)),
        }
    }
}

impl Scheme for IdealConfig {
    type Sender = IdealSender;
    type Receiver = SilentReceiver;
    listed_as! {
        "ideal",
        "oracle sender of the Sprout paper: uses every delivery opportunity, never queues (simulation only)",
        IdealConfig,
    }

    /// A bulk source, unpaced: the sender's credit is the pacing. Needs the link's schedule.
    /// The schedule is the link's own: the sender is woken at exactly its instants.
    fn needs(&self) -> Needs {
        Needs {
            exact_timers: true,
            ..Needs::default()
        }
    }

    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let mtu = ctx.mtu();
        let schedule = ctx.ideal_schedule.ok_or(BuildError::NeedsOracle("ideal"))?;
        Ok(Halves {
            sender: IdealSender::new(schedule),
            receiver: SilentReceiver,
            source: Source::bulk(mtu),
            pacer: Pacer::default(),
            mtu,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn credit_follows_schedule() {
        let sched = vec![
            (Instant::ZERO + ms(10), DataSize::from_bytes(1500)),
            (Instant::ZERO + ms(10), DataSize::from_bytes(1500)),
            (Instant::ZERO + ms(12), DataSize::from_bytes(1500)),
        ];
        let mut s = IdealSender::new(Box::new(sched.into_iter()));
        s.on_time(Instant::ZERO);
        assert_eq!(
            s.allowance(Instant::ZERO),
            Allowance::Window {
                bytes: DataSize::ZERO,
                pacing: None
            }
        );
        assert_eq!(s.poll_timeout(), Some(Instant::ZERO + ms(10)));
        s.on_time(Instant::ZERO + ms(10));
        assert_eq!(
            s.allowance(Instant::ZERO + ms(10)),
            Allowance::Window {
                bytes: DataSize::from_bytes(3000),
                pacing: None
            }
        );
        let h = DataHeader {
            size: DataSize::from_bytes(1500),
            ..Default::default()
        };
        s.on_packet_sent(Instant::ZERO + ms(10), &h, &SendContext::default());
        assert_eq!(s.poll_timeout(), Some(Instant::ZERO + ms(12)));
        s.on_time(Instant::ZERO + ms(11));
        assert_eq!(
            s.allowance(Instant::ZERO + ms(11)),
            Allowance::Window {
                bytes: DataSize::from_bytes(1500),
                pacing: None
            }
        );
    }
}
