//! The PHY-side keys of a `wifi:` link spec and how they set up a station: `bw=` (channel
//! width, MHz), `gi=` (long or short guard interval), `snr=` (dB, or a schedule
//! `0s:30,10s:12`), `ra=` (`fixed`, `minstrel` or `script:0s:54,5s:24`) and `ampdu=` (on or
//! off). Each error names its key.

use super::ampdu::AmpduConfig;
use super::fer::Snr;
use super::phy::{Phy, PhyRate};
use super::rate_control::RateControlConfig;
use super::station::StationConfig;

/// The keys [`PhyOptions::set`] knows (for error messages).
pub const PHY_KEYS: &str = "bw, gi, snr, ra, ampdu";

/// PHY-side options of a spec, as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhyOptions {
    /// Channel width in MHz (default 20).
    pub bw: Option<u16>,
    /// Short guard interval (default long).
    pub short_gi: Option<bool>,
    pub snr: Option<Snr>,
    /// The `ra=` text, resolved against the rate set by [`PhyOptions::apply`].
    pub ra: Option<String>,
    pub ampdu: Option<bool>,
}

impl PhyOptions {
    /// Takes `key=value` if it is one of [`PHY_KEYS`]: `Ok(true)` when taken, `Ok(false)` when
    /// the key is not a PHY key, `Err` (the reason) for a bad value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let v = value.trim();
        match key {
            "bw" => {
                let mhz = v.trim_end_matches("mhz").trim_end_matches("MHz");
                self.bw = Some(match mhz.parse() {
                    Ok(w @ (20 | 40 | 80)) => w,
                    _ => return Err(format!("must be 20, 40 or 80 (MHz), not `{v}`")),
                });
            }
            "gi" => {
                self.short_gi = Some(match v {
                    "long" | "800" | "0.8" => false,
                    "short" | "400" | "0.4" => true,
                    _ => return Err(format!("must be long or short, not `{v}`")),
                })
            }
            "snr" => self.snr = Some(Snr::parse(v)?),
            "ra" => {
                if !(v == "fixed" || v == "minstrel" || v == "arf" || v.starts_with("script:")) {
                    return Err(format!(
                        "must be fixed, minstrel, arf or script:TIME:MBPS,… (e.g. script:0s:54,5s:24), not `{v}`"
                    ));
                }
                self.ra = Some(v.to_string());
            }
            "ampdu" => {
                self.ampdu = Some(match v {
                    "on" | "true" | "1" => true,
                    "off" | "false" | "0" => false,
                    _ => return Err(format!("must be on or off, not `{v}`")),
                })
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The data rate of the `rate=` key (`(text, Mbit/s)`) at the spec's width and guard
    /// interval, or the PHY's fastest there when `None`. Errors are `(key, reason)`.
    pub fn rate(
        &self,
        phy: &Phy,
        given: Option<(&str, f64)>,
    ) -> Result<PhyRate, (&'static str, String)> {
        let std = phy.standard;
        let bw = self.bw.unwrap_or(20);
        let sgi = self.short_gi.unwrap_or(false);
        if !std.is_ht() {
            if bw != 20 {
                return Err(("bw", format!("802.{} has 20-MHz channels only", std.name())));
            }
            if sgi {
                return Err((
                    "gi",
                    format!("802.{} has the long guard interval only", std.name()),
                ));
            }
            if self.ampdu == Some(true) {
                return Err((
                    "ampdu",
                    format!("A-MPDU needs 802.11n or 11ac, not 802.{}", std.name()),
                ));
            }
        } else if bw > std.max_width_mhz() {
            return Err((
                "bw",
                format!(
                    "{bw} MHz is wider than 802.{} allows ({} MHz)",
                    std.name(),
                    std.max_width_mhz()
                ),
            ));
        }
        let rates = phy.data_rates(bw, sgi);
        let list = rates
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        match given {
            None => Ok(*rates.last().expect("a PHY has rates")),
            Some((text, m)) => phy.find_rate(m, bw, sgi).ok_or_else(|| {
                let message = if std.is_ht() {
                    format!(
                        "`{text}` is not an 802.{} rate at {bw} MHz, {} GI ({list} Mbit/s)",
                        std.name(),
                        if sgi { "short" } else { "long" },
                    )
                } else {
                    format!("`{text}` is not an 802.{} rate ({list} Mbit/s)", std.name())
                };
                ("rate", message)
            }),
        }
    }

    /// Sets a station up with these options at `rate` (from [`PhyOptions::rate`]).
    pub fn apply(
        &self,
        config: &mut StationConfig,
        phy: &Phy,
        rate: PhyRate,
    ) -> Result<(), (&'static str, String)> {
        config.rate = rate;
        config.snr = self.snr.clone();
        config.ampdu = (self.ampdu == Some(true)).then(AmpduConfig::default);
        if let Some(ra) = &self.ra {
            let rates = match rate.mcs() {
                Some(m) => phy.mcs_rates(m.width_mhz, m.short_gi),
                None => phy.data_rates(20, false),
            };
            config.rate_control =
                Some(RateControlConfig::parse(ra, rate, &rates).map_err(|e| ("ra", e))?);
        }
        Ok(())
    }

    /// The options as spec text (`,bw=40,gi=short,…`; only those given), for a canonical
    /// spec.
    pub fn to_spec(&self) -> String {
        let mut s = String::new();
        if let Some(bw) = self.bw {
            s += &format!(",bw={bw}");
        }
        if let Some(g) = self.short_gi {
            s += if g { ",gi=short" } else { ",gi=long" };
        }
        if let Some(snr) = &self.snr {
            s += ",snr=";
            s += &match snr {
                Snr::Constant(db) => format!("{db}"),
                Snr::Schedule(points) => points
                    .iter()
                    .map(|(t, db)| format!("{}s:{db}", t.as_secs_f64()))
                    .collect::<Vec<_>>()
                    .join(";"),
            };
        }
        if let Some(ra) = &self.ra {
            s += &format!(",ra={}", ra.replace(',', ";"));
        }
        if let Some(a) = self.ampdu {
            s += if a { ",ampdu=on" } else { ",ampdu=off" };
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::Standard;

    fn opts(pairs: &[(&str, &str)]) -> Result<PhyOptions, String> {
        let mut o = PhyOptions::default();
        for (k, v) in pairs {
            assert!(o.set(k, v)?, "{k} not taken");
        }
        Ok(o)
    }

    #[test]
    fn keys_set_up_a_station() {
        let phy = Phy::new(Standard::N5);
        let o = opts(&[
            ("bw", "40"),
            ("gi", "short"),
            ("snr", "0s:30;10s:12"),
            ("ra", "minstrel"),
            ("ampdu", "on"),
        ])
        .unwrap();
        let r = o.rate(&phy, Some(("150", 150.0))).unwrap();
        assert_eq!(r, PhyRate::ht(7, 40, true).unwrap());
        assert_eq!(o.rate(&phy, None).unwrap(), r);
        let mut c = StationConfig::edca(&phy, PhyRate::ht(0, 20, false).unwrap());
        o.apply(&mut c, &phy, r).unwrap();
        assert_eq!(c.rate, r);
        assert!(c.ampdu.is_some());
        assert!(matches!(
            c.rate_control,
            Some(RateControlConfig::Minstrel(_))
        ));
        assert_eq!(
            c.snr
                .as_ref()
                .unwrap()
                .at(wisp_core::Instant::from_secs(11)),
            12.0
        );
        assert!(!PhyOptions::default().set("stations", "3").unwrap());
        // The canonical text parses back to the same options.
        let text = o.to_spec();
        let mut back = PhyOptions::default();
        for (k, v) in wisp_core::spec::key_values(&text).unwrap() {
            back.set(k, v).unwrap();
        }
        assert_eq!(back, o, "{text}");
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad_value = |k: &str, v: &str| PhyOptions::default().set(k, v).unwrap_err();
        assert!(bad_value("bw", "30").contains("20, 40 or 80"));
        assert!(bad_value("gi", "medium").contains("long or short"));
        assert!(bad_value("snr", "loud").contains("`loud`"));
        assert!(bad_value("ra", "aarf").contains("minstrel"));
        assert!(bad_value("ampdu", "maybe").contains("on or off"));
        let g = Phy::new(Standard::G);
        let key = |pairs: &[(&str, &str)], phy: &Phy, mbps: Option<(&str, f64)>| {
            opts(pairs).unwrap().rate(phy, mbps).unwrap_err().0
        };
        assert_eq!(key(&[("bw", "40")], &g, None), "bw");
        assert_eq!(key(&[("gi", "short")], &g, None), "gi");
        assert_eq!(key(&[("ampdu", "on")], &g, None), "ampdu");
        assert_eq!(key(&[("bw", "80")], &Phy::new(Standard::N24), None), "bw");
        assert_eq!(
            key(&[], &Phy::new(Standard::N5), Some(("54", 54.0))),
            "rate"
        );
        let n = Phy::new(Standard::N5);
        let o = opts(&[("ra", "script:0s:65,1s:54")]).unwrap();
        let r = o.rate(&n, Some(("65", 65.0))).unwrap();
        let mut c = StationConfig::edca(&n, r);
        let e = o.apply(&mut c, &n, r).unwrap_err();
        assert_eq!(e.0, "ra");
        assert!(e.1.contains("54 Mbit/s is not one of"), "{}", e.1);
    }
}
