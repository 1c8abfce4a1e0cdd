//! `docs/adding-a-scheme.md`, followed: a scheme added from outside wisp-core in one module
//! (`toy`, below) and one registry line (`Registry::builtin().with::<toy::ToyConfig>()`), then
//! run in the simulator like any built-in scheme.
//!
//! The toy is AIMD on delay: the receiver reports every 50 ms the largest one-way delay it saw
//! and the sender's rate stamp it last received (its own message type); the sender adds 50 kbit/s
//! per report while the delay stays within `target-ms` of the smallest seen, and cuts by
//! `beta` otherwise. Each packet carries the sender's current rate in kbit/s as the scheme's own
//! header field, which the receiver echoes: the test checks both kinds of message cross the
//! simulated path intact.

mod toy {
    use wisp_core::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
    use wisp_core::pacer::Pacer;
    use wisp_core::packet::{DataHeader, HeaderFields, SchemeFields};
    use wisp_core::scheme::params::{Checked, Given, Validate, range, scheme_config};
    use wisp_core::scheme::{Built, Halves, Scheme, SchemeContext, listed_as};
    use wisp_core::source::Source;
    use wisp_core::units::serde_as::{kbps, ms};
    use wisp_core::wire::{Message, Reader, WireError, Writer, frame, unframe};
    use wisp_core::{Bitrate, Duration, Instant};

    scheme_config! {
        /// The configuration: the factory of the two halves. Its fields are its parameters,
        /// each doc comment a key's help text; adapters write the typed values in the key's unit.
        #[derive(Clone, Debug, PartialEq)]
        pub struct ToyConfig {
            /// The rate at the start, kbit/s.
            #[serde(rename = "start-kbps", with = "kbps")]
            pub start: Bitrate,
            /// Queueing delay tolerated before a cut, ms.
            #[serde(rename = "target-ms", with = "ms")]
            pub target: Duration,
            /// The multiplicative decrease.
            pub beta: f64,
        }
    }

    /// Ranges, on the values as given (`given` holds them as written).
    impl Validate for ToyConfig {
        fn validate(&self, given: &Given<'_>) -> Checked {
            let start = given.number("start-kbps", self.start.kbps_f64());
            range("start-kbps", start, 10.0, 1e6, "10 to 1000000 kbit/s")?;
            let target = given.number("target-ms", self.target.as_millis_f64());
            range("target-ms", target, 1.0, 1e4, "1 to 10000 ms")?;
            range("beta", self.beta, 0.1, 0.99, "0.1 to 0.99")
        }
    }

    impl Scheme for ToyConfig {
        type Sender = ToySender;
        type Receiver = ToyReceiver;
        listed_as! {
            "toy",
            "AIMD on delay (a test of the scheme seam)",
            ToyConfig {
                start: Bitrate::from_kbps(300),
                target: Duration::from_millis(40),
                beta: 0.85,
            },
        }

        fn build(&self, ctx: SchemeContext) -> Built<Self> {
            let mtu = ctx.mtu();
            Ok(Halves {
                sender: ToySender {
                    rate: self.start,
                    target: self.target,
                    beta: self.beta,
                    min_delay: None,
                    reports: 0,
                    echoed: 0,
                },
                receiver: ToyReceiver::default(),
                source: Source::bulk(mtu),
                pacer: Pacer::default(),
                mtu,
            })
        }
    }

    /// The receiver's report, kind 200 (a scheme outside the tree).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Report {
        pub max_delay: Duration,
        pub packets: u32,
        /// The last rate stamp received.
        pub echo_kbps: u32,
    }

    impl Message for Report {
        fn emit(&self, out: &mut Vec<u8>) {
            frame(out, 200, |out| {
                out.put_u64(self.max_delay.as_nanos());
                out.put_u32(self.packets);
                out.put_u32(self.echo_kbps);
            });
        }
        fn parse(buf: &[u8]) -> Result<Self, WireError> {
            let (kind, mut p) = unframe(buf)?;
            if kind != 200 {
                return Err(WireError::UnknownKind(kind));
            }
            let r = Report {
                max_delay: Duration::from_nanos(p.u64()?),
                packets: p.u32()?,
                echo_kbps: p.u32()?,
            };
            p.finish()?;
            Ok(r)
        }
    }

    /// The sender's per-packet field: its rate in kbit/s.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct RateStamp(pub u32);

    impl HeaderFields for RateStamp {
        fn emit(&self) -> SchemeFields {
            SchemeFields::new(&self.0.to_be_bytes()).expect("4 bytes fit")
        }
        fn parse(fields: &SchemeFields) -> Result<Self, WireError> {
            let mut r = Reader::new(fields.as_slice());
            let v = r.u32()?;
            r.finish()?;
            Ok(RateStamp(v))
        }
    }

    #[derive(Debug)]
    pub struct ToySender {
        rate: Bitrate,
        target: Duration,
        beta: f64,
        min_delay: Option<Duration>,
        pub reports: u32,
        /// The last rate the receiver echoed.
        pub echoed: u32,
    }

    impl Sender for ToySender {
        type Feedback = Report;
        type Fields = RateStamp;

        fn on_packet_sent(&mut self, _: Instant, _: &DataHeader, _: &SendContext) -> RateStamp {
            RateStamp(self.rate.kbps_f64().round() as u32)
        }

        fn on_feedback(&mut self, _now: Instant, r: &Report) {
            self.reports += 1;
            self.echoed = r.echo_kbps;
            // Only a report that echoes a rate stamp counts: the rate moves only if both the
            // scheme's feedback and its header field crossed the path.
            if r.packets == 0 || r.echo_kbps == 0 {
                return;
            }
            let min = self.min_delay.get_or_insert(r.max_delay);
            *min = (*min).min(r.max_delay);
            self.rate = if r.max_delay > *min + self.target {
                self.rate.mul_f64(self.beta)
            } else {
                self.rate + Bitrate::from_kbps(50)
            };
        }

        fn allowance(&self, _now: Instant) -> Allowance {
            Allowance::Rate {
                target: self.rate,
                pacing: self.rate,
            }
        }

        fn stats(&self) -> SenderStats {
            SenderStats {
                target_rate: Some(self.rate),
                window: None,
            }
        }
    }

    #[derive(Debug, Default)]
    pub struct ToyReceiver {
        max_delay: Duration,
        packets: u32,
        echo: u32,
        next: Option<Instant>,
        due: bool,
    }

    impl Receiver for ToyReceiver {
        type Feedback = Report;
        type Fields = RateStamp;

        fn on_packet_received(&mut self, now: Instant, p: &DataHeader, stamp: &RateStamp) {
            self.max_delay = self.max_delay.max(now - p.send_time);
            self.packets += 1;
            self.echo = stamp.0;
            self.next.get_or_insert(now + Duration::from_millis(50));
        }

        fn poll_feedback(&mut self, _now: Instant) -> Option<Report> {
            if !std::mem::take(&mut self.due) {
                return None;
            }
            let r = Report {
                max_delay: self.max_delay,
                packets: self.packets,
                echo_kbps: self.echo,
            };
            self.max_delay = Duration::ZERO;
            self.packets = 0;
            Some(r)
        }

        fn poll_timeout(&self) -> Option<Instant> {
            self.next
        }

        fn on_timeout(&mut self, now: Instant) {
            if self.next.is_some_and(|t| t <= now) {
                self.due = true;
                self.next = Some(now + Duration::from_millis(50));
            }
        }
    }
}

use wisp_core::scheme::{ParamError, Registry, SchemeConfig};
use wisp_sim::link::LinkSpec;
use wisp_sim::run::run;
use wisp_sim::sim::Scenario;

/// The one registry line.
fn registry() -> Registry {
    Registry::builtin().with::<toy::ToyConfig>()
}

#[test]
fn the_toy_scheme_is_listed_parsed_and_validated_like_a_built_in_one() {
    let r = registry();
    assert!(r.schemes().any(|s| s.name == "toy"));
    assert!(
        r.schemes().any(|s| s.name == "sprout"),
        "the built-ins stay"
    );
    let c = r.parse("toy:start-kbps=500,beta=0.7").unwrap();
    assert_eq!(c.name(), "toy");
    assert_eq!(c.to_string(), "toy:start-kbps=500,beta=0.7");
    assert_eq!(r.parse(&c.to_string()).unwrap(), c);
    assert_ne!(r.parse("toy").unwrap(), c);
    // The same error shape as every scheme's.
    let e = r.parse("toy:speed=3").unwrap_err();
    assert!(
        matches!(&e, ParamError::UnknownParam { scheme, key, accepted }
            if scheme == "toy" && key == "speed" && accepted.contains("target-ms")),
        "{e:?}"
    );
    assert!(matches!(
        r.parse("toy:beta=2"),
        Err(ParamError::BadValue { .. })
    ));
    // A key given twice is refused, as in every KEY=VALUE list (`_` reads as `-`).
    for spec in ["toy:beta=0.7,beta=0.8", "toy:target_ms=20,target-ms=30"] {
        let e = r.parse(spec).unwrap_err();
        assert!(matches!(e, ParamError::GivenTwice { .. }), "{spec}: {e:?}");
        assert!(
            e.to_string().starts_with("scheme `toy`: parameter `"),
            "{e}"
        );
        assert!(e.to_string().ends_with("` given twice"), "{e}");
    }
    // The built-in registry does not know it.
    assert!(matches!(
        "toy".parse::<SchemeConfig>(),
        Err(ParamError::UnknownScheme { .. })
    ));
}

#[test]
fn the_toy_scheme_runs_in_the_simulator_and_its_messages_cross_the_path() {
    let link = "const:2mbps".parse::<LinkSpec>().unwrap().load().unwrap();
    let mut s = Scenario::new(link, registry().parse("toy").unwrap());
    s.run.duration = wisp_core::Duration::from_secs(30);
    s.run.warmup = wisp_core::Duration::from_secs(5);
    let a = run(&s, None).unwrap();
    let f = &a.report.flows[0];
    println!("{f:?}");
    // AIMD on delay holds a 2 Mbit/s link mostly busy with a bounded queue.
    assert!(
        f.utilization > 0.6 && f.utilization <= 1.0,
        "utilization {}",
        f.utilization
    );
    assert!(
        f.queue_delay_p95_ms.unwrap() < 200.0,
        "queueing p95 {:?}",
        f.queue_delay_p95_ms
    );
    // Same seed, same result.
    let b = run(&s, None).unwrap();
    assert_eq!(
        serde_json::to_string(&a.report).unwrap(),
        serde_json::to_string(&b.report).unwrap()
    );
}
