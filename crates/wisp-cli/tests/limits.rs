//! Every input has a stated limit, checked before the expensive work, and a value
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

/// Exit code 2 and one line on stderr naming `needle`, within `secs` seconds (for commands
/// without `--out`).
fn assert_refused_quickly(args: &[&str], needle: &str, secs: f64) {
    let start = std::time::Instant::now();
    let o = wisp(args);
    let took = start.elapsed().as_secs_f64();
    let line = the_one_error_line(&o, &format!("{args:?}"), seed_line);
    assert!(line.contains(needle), "{args:?}: `{line}` lacks `{needle}`");
    assert!(took < secs, "{args:?} took {took:.1} s");
}

#[test]
fn endless_inputs_are_refused_at_their_size_limit() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["run", "--scheme", "cbr", "--link", "trace:/dev/zero"],
            "limit of 64 MiB",
        ),
        (&["sim", "/dev/zero"], "limit of 8 MiB"),
        (
            &[
                "run",
                "--scheme",
                "alfalfa",
                "--video",
                "/dev/zero",
                "--link",
                "const:2mbps",
            ],
            "limit of 256 MiB",
        ),
        (&["trace", "stats", "/dev/zero"], "limit of 64 MiB"),
        (&["analyze", "/dev/zero"], "limit of 256 MiB"),
    ];
    for (args, needle) in cases {
        assert_refused_quickly(args, needle, 20.0);
        if matches!(args[0], "run" | "sim") {
            assert_bad_input(args, needle);
        }
    }
}

#[test]
fn a_scenario_with_too_many_flows_is_refused_from_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.toml");
    let mut text = String::from(
        "duration = \"1s\"\n[nodes]\na = \"host\"\nb = \"host\"\n[[links]]\nfrom = \"a\"\n\
         to = \"b\"\nspec = \"const:10mbps\"\n",
    );
    text += &"[[flows]]\nscheme = \"cbr\"\nfrom = \"a\"\nto = \"b\"\n".repeat(70_000);
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    assert_refused_quickly(
        &["sim", p],
        "70000 flows, more than the limit of 65535",
        5.0,
    );
    assert_bad_input(&["sim", p], "more than the limit of 65535");
}
