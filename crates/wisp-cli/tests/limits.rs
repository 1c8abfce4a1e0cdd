//! Issue 37: every input has a stated limit, checked before the expensive work, and a value
//! out of its range is bad input (exit code 2, one line naming the limit, no output folder).

mod common;
use common::*;

#[test]
fn parameters_out_of_range_name_the_range() {
    for (key, value, range) in [
        ("heartbeat-ms", "1e308", "(0, 60000]"),
        ("heartbeat-ms", "18446744073709551616", "(0, 60000]"),
        ("heartbeat-max-ms", "1e308", "0 to 600000"),
        ("reorder-ms", "18446744073709551616", "0 to 10000"),
        ("heartbeat-ms", "0.0000001", "whole ns"),
    ] {
        let param = format!("{key}={value}");
        assert_bad_input(
            &[
                "run",
                "--scheme",
                "sprout",
                "--link",
                "const:2mbps",
                "--duration-s",
                "1",
                "--param",
                &param,
            ],
            range,
        );
    }
}

#[test]
fn link_rates_above_the_limit_are_refused_at_once() {
    for link in [
        "const:1e12mbps",
        "const:1e6mbps",
        "steps:1mbps@0,20gbps@1s",
        "wifi-outage:rate=1mbps,burst=11gbps",
        "3g-up:rate=1e6mbps",
    ] {
        let start = std::time::Instant::now();
        assert_bad_input(
            &[
                "run",
                "--scheme",
                "cbr",
                "--rate-kbps",
                "1000",
                "--link",
                link,
                "--duration-s",
                "5",
            ],
            "limit of 10gbps",
        );
        assert!(
            start.elapsed().as_secs() < 5,
            "{link}: {:?}",
            start.elapsed()
        );
    }
}
