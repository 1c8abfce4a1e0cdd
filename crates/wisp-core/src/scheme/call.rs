//! The rates of a video call, the parameters its rate controllers share.

use super::params::{Checked, Given, ordered, range, scheme_config};
use crate::source::MediaConfig;
use crate::units::Bitrate;
use crate::units::serde_as::kbps;

scheme_config! {
    /// A call's rates: the keys the rate controllers of a video call share (every GCC form, the
    /// UKF schemes, the Mehrotra family). "The rate" is the controller's (GCC's A, the
    /// family's R).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CallRates {
        /// The rate at the start, before any feedback, kbit/s.
        #[serde(rename = "start-kbps", with = "kbps")]
        pub start: Bitrate,
        /// The lowest rate, the controller's and the encoder's, kbit/s.
        #[serde(rename = "min-kbps", with = "kbps")]
        pub min: Bitrate,
        /// The highest rate, the controller's and the encoder's, kbit/s.
        #[serde(rename = "max-kbps", with = "kbps")]
        pub max: Bitrate,
        /// The pacing rate, as a multiple of the rate.
        pub pace_factor: f64,
        /// The audio stream, kbit/s (0 for none).
        #[serde(rename = "audio-kbps", with = "kbps")]
        pub audio: Bitrate,
    }
}

impl Default for CallRates {
    /// 300 kbit/s at the start (libwebrtc's), the encoder's range, pacing at 2.5 × the rate, its audio.
    fn default() -> Self {
        let media = MediaConfig::default();
        CallRates {
            start: Bitrate::from_kbps(300),
            min: media.min_rate,
            max: media.max_rate,
            pace_factor: 2.5,
            audio: media.audio_rate,
        }
    }
}

impl CallRates {
    /// The keys' checks: each in range, and `min-kbps ≤ start-kbps ≤ max-kbps`.
    pub(crate) fn check(&self, given: &Given<'_>) -> Checked {
        let kbps = "a rate in kbit/s, 1 to 1e7";
        given.rate_kbps("start-kbps", self.start, 1.0, 1e7, kbps)?;
        given.rate_kbps("min-kbps", self.min, 1.0, 1e7, kbps)?;
        given.rate_kbps("max-kbps", self.max, 1.0, 1e7, kbps)?;
        range(
            "pace-factor",
            self.pace_factor,
            1.0,
            100.0,
            "a factor, 1 to 100",
        )?;
        given.rate_kbps(
            "audio-kbps",
            self.audio,
            0.0,
            1000.0,
            "a rate in kbit/s, 0 to 1000",
        )?;
        ordered(&[
            ("min-kbps", self.min.kbps_f64()),
            ("start-kbps", self.start.kbps_f64()),
            ("max-kbps", self.max.kbps_f64()),
        ])
    }

    /// The call's media source: the encoder's range and the audio stream are the call's.
    pub fn media(&self) -> MediaConfig {
        MediaConfig::with_rates(self.min, self.max, self.audio)
    }
}
