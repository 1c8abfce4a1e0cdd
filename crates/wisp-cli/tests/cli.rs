//! The `wisp` command end to end: bad input, JSON output, determinism, shipped traces, bench.

mod common;
use common::*;

use std::process::{Command, Output};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let non_int = write("nonint.trace", "0\n5\n12a\n20\n");
    let decreasing = write("decr.trace", "0\n5\n20\n12\n");
    let empty = write("empty.trace", "");
    let missing = dir
        .path()
        .join("missing.trace")
        .to_str()
        .unwrap()
        .to_string();
    // `wisp run --scheme cbr` with these arguments must fail with one line holding `needle`.
    let bad_cbr_run = |args: &[&str], needle: &str| {
        let mut full = vec!["run", "--scheme", "cbr"];
        full.extend_from_slice(args);
        assert_bad_input(&full, needle);
    };
    bad_cbr_run(&["--trace", &non_int], &format!("{non_int}:3:"));
    bad_cbr_run(&["--trace", &decreasing], &format!("{decreasing}:4:"));
    bad_cbr_run(
        &["--trace", &empty],
        &format!("{empty}: trace has no timestamps"),
    );
    bad_cbr_run(&["--trace", &missing], &format!("{missing}: cannot read"));
    bad_cbr_run(
        &["--link", "const:1mbps", "--trace-offset-ms", "5"],
        "--trace-offset-ms needs a trace link",
    );
    bad_cbr_run(
        &["--trace", &non_int, "--trace-offset-ms", "-1"],
        "--trace-offset-ms",
    );
    bad_cbr_run(
        &["--link", "const:1mbps", "--timer-jitter-us", "-3"],
        "--timer-jitter-us",
    );
    bad_cbr_run(
        &["--link", &format!("trace:{decreasing}")],
        &format!("{decreasing}:4:"),
    );
    assert_bad_input(
        &["run", "--scheme", "warp", "--link", "const:1mbps"],
        "--scheme",
    );
    assert_bad_input(
        &["run", "--scheme", "cbr:speed=2", "--link", "const:1mbps"],
        "speed",
    );
    // Every scheme's parameters are checked the same way: an unknown key lists the accepted
    // ones; a value names its key; ranges and cross checks (GCC's rates as the UM family's).
    assert_bad_input(
        &["run", "--scheme", "cubic:gamma=1", "--link", "const:1mbps"],
        "accepted: c, beta, fast-convergence, hystart, iw, rto-min-ms, rwnd-kb",
    );
    assert_bad_input(
        &[
            "run",
            "--scheme",
            "gcc-remb:min-kbps=3000",
            "--link",
            "const:1mbps",
        ],
        "scheme `gcc-remb`: invalid value `3000` for `min-kbps`: expected min-kbps ≤ start-kbps ≤ max-kbps",
    );
    assert_bad_input(
        &[
            "send",
            "--scheme",
            "gcc-twcc:start-kbps=2600",
            "--to",
            "127.0.0.1:9",
        ],
        "scheme `gcc-twcc`: invalid value `2600` for `start-kbps`: expected min-kbps ≤ start-kbps ≤ max-kbps",
    );
    assert_bad_input(
        &["run", "--scheme", "um:max-kbps=40", "--link", "const:1mbps"],
        "invalid value `40` for `max-kbps`: expected min-kbps ≤ start-kbps ≤ max-kbps",
    );
    assert_bad_input(
        &[
            "run",
            "--scheme",
            "sprout:ticks=2.5",
            "--link",
            "const:1mbps",
        ],
        "invalid value `2.5` for `ticks`: expected a whole number",
    );
    assert_bad_input(
        &[
            "run",
            "--scheme",
            "gcc-remb",
            "--link",
            "const:1mbps",
            "--param",
            "max-kbps=200",
        ],
        "--param: scheme `gcc-remb`: invalid value `200` for `max-kbps`",
    );
    bad_cbr_run(&["--link", "const:1mbps", "--queue", "fifo"], "--queue");
    bad_cbr_run(
        &["--link", "const:1mbps", "--queue", "droptail:packets=0"],
        "--queue",
    );
    bad_cbr_run(
        &["--link", "const:1mbps", "--duration-s", "0"],
        "--duration-s",
    );
    bad_cbr_run(
        &["--link", "const:1mbps", "--duration-s", "-5"],
        "--duration-s",
    );
    bad_cbr_run(&["--link", "const:1mbps", "--warmup-s", "-1"], "--warmup-s");
    bad_cbr_run(&["--link", "const:1mbps", "--warmup-s", "60"], "--warmup-s");
    for loss in ["1", "1.5", "-0.1", "lots"] {
        bad_cbr_run(&["--link", "const:1mbps", "--loss", loss], "--loss");
    }
    bad_cbr_run(&["--link", "warp:9"], "--link");
    assert_bad_input(
        &[
            "run",
            "--scheme",
            "ideal",
            "--link",
            "const:1mbps",
            "--rate-kbps",
            "5",
        ],
        "--rate-kbps",
    );
    assert_bad_input(
        &[
            "bench",
            "--schemes",
            "cbr,warp",
            "--traces",
            "traces/cellular",
        ],
        "--schemes",
    );
    assert_bad_input(
        &["bench", "--schemes", "cbr", "--traces", &missing],
        &missing,
    );
    assert_bad_input(
        &["bench", "--schemes", "cbr", "--traces", &non_int],
        &format!("{non_int}:3:"),
    );
    let o = wisp(&["trace", "stats", &decreasing]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("{decreasing}:4:")));
}

#[test]
fn run_json_is_one_object_and_the_seed_replays() {
    let args = [
        "run",
        "--scheme",
        "cbr:rate-kbps=3000",
        "--trace",
        "traces/cellular/Verizon-LTE-short.down",
        "--loss",
        "0.05",
        "--seed",
        "7",
        "--json",
    ];
    let a = wisp(&args);
    let b = wisp(&args);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout, "same seed, different output");
    let text = String::from_utf8(a.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["scheme"], "cbr:rate-kbps=3000");
    assert_eq!(v["trace"], "Verizon-LTE-short.down");
    assert_eq!(v["seed"], 7);
    let f = &v["flows"][0];
    for key in [
        "throughput_kbps",
        "capacity_kbps",
        "utilization",
        "delay_p50_ms",
        "delay_p95_ms",
        "e2e_delay_p95_ms",
        "ideal_e2e_delay_p95_ms",
        "self_inflicted_delay_ms",
        "loss_rate",
    ] {
        assert!(f[key].is_number(), "{key} missing in {f}");
    }
    assert!((f["loss_rate"].as_f64().unwrap() - 0.05).abs() < 0.01);
    assert!(stderr(&b).contains("seed 7"));
    // A different seed loses different packets.
    let c = wisp(&[
        "run",
        "--scheme",
        "cbr:rate-kbps=3000",
        "--trace",
        "traces/cellular/Verizon-LTE-short.down",
        "--loss",
        "0.05",
        "--seed",
        "8",
        "--json",
    ]);
    assert_ne!(c.stdout, b.stdout);
    // WISP_SEED replays when --seed is absent.
    let o = Command::new(env!("CARGO_BIN_EXE_wisp"))
        .args([
            "run",
            "--scheme",
            "cbr",
            "--link",
            "const:2mbps",
            "--duration-s",
            "2",
            "--json",
        ])
        .env("WISP_SEED", "42")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seed"], 42);
}

#[test]
fn ideal_uses_the_link_and_cbr_queues_without_aqm() {
    let o = wisp(&[
        "run",
        "--scheme",
        "ideal",
        "--trace",
        "traces/cellular/Verizon-LTE-short.down",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["flows"][0];
    assert!(f["utilization"].as_f64().unwrap() >= 0.99, "{f}");
    assert!(f["self_inflicted_delay_ms"].as_f64().unwrap() <= 1.0, "{f}");
    let e2e = |queue: &str| {
        let o = wisp(&[
            "run",
            "--scheme",
            "cbr",
            "--rate-kbps",
            "2000",
            "--trace",
            "traces/cellular/TMobile-UMTS-driving.down",
            "--queue",
            queue,
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["flows"][0]["e2e_delay_p95_ms"].as_f64().unwrap()
    };
    let (inf, codel) = (e2e("infinite"), e2e("codel"));
    assert!(inf > 2000.0, "infinite queue e2e p95 {inf} ms");
    assert!(codel < inf / 4.0, "codel {codel} ms vs infinite {inf} ms");
}

#[test]
fn shipped_trace_stats() {
    // Durations and mean rates of traces/README.md (1500 B per line).
    let expected = [
        ("cellular/Verizon-LTE-short.up", 140.0, 5.946),
        ("cellular/Verizon-LTE-short.down", 140.0, 5.028),
        ("cellular/TMobile-LTE-short.up", 140.0, 13.318),
        ("cellular/TMobile-LTE-short.down", 139.986, 16.703),
        ("cellular/ATT-LTE-driving.up", 1012.472, 0.834),
        ("cellular/ATT-LTE-driving.down", 786.112, 5.173),
        ("cellular/TMobile-UMTS-driving.up", 931.233, 0.943),
        ("cellular/TMobile-UMTS-driving.down", 928.424, 2.020),
        ("cellular/Verizon-EVDO-driving.up", 1064.718, 0.843),
        ("cellular/Verizon-EVDO-driving.down", 1062.016, 0.521),
        ("wifi/google-wifi-3mbps.rx", 299.0, 3.78),
    ];
    let paths: Vec<String> = expected
        .iter()
        .map(|(p, _, _)| format!("traces/{p}"))
        .collect();
    let mut args = vec!["trace", "stats", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let o = wisp(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let traces = v["traces"].as_array().unwrap();
    assert_eq!(traces.len(), expected.len());
    for (t, (name, dur, mean)) in traces.iter().zip(expected) {
        let d = t["duration_s"].as_f64().unwrap();
        let m = t["mean_mbps"].as_f64().unwrap();
        assert!(
            (d - dur).abs() / dur <= 0.005,
            "{name}: duration {d} vs {dur}"
        );
        assert!(
            (m - mean).abs() / mean <= 0.005,
            "{name}: mean {m} vs {mean}"
        );
    }
}

#[test]
fn bench_writes_results_a_summary_a_scatter_per_trace_and_a_series_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench");
    let o = wisp(&[
        "bench",
        "--schemes",
        "ideal,cbr:rate-kbps=1500",
        "--traces",
        "traces/cellular/Verizon-LTE-short.down,traces/cellular/Verizon-LTE-short.up",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 4);
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(on_disk, list);
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(html.matches("<figure class=\"scatter\">").count(), 2);
    assert_eq!(html.matches("<figure class=\"timeseries\">").count(), 4);
    assert!(
        !html.contains("<script") && !html.contains("src=\"http"),
        "the report must be self-contained"
    );
    for t in ["Verizon-LTE-short.down", "Verizon-LTE-short.up"] {
        let svg = std::fs::read_to_string(out.join("plots").join(format!("{t}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.matches("<circle").count() == 2,
            "{t}"
        );
        // Each run's time series is a file of its own, which the page shows folded.
        for s in ["ideal", "cbr_rate-kbps_1500"] {
            let path = format!("figures/{t}/{s}.svg");
            let svg = std::fs::read_to_string(out.join(&path)).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.contains("queueing delay"),
                "{path}"
            );
            assert!(html.contains(&format!("<img src=\"{path}\"")), "{path}");
        }
    }
    // The summary comes first: a row and a large marker per scheme (its medians), and a small
    // marker per run.
    assert!(
        html.find("<h2 id=\"summary\">").unwrap()
            < html.find("<figure class=\"scatter\">").unwrap()
    );
    assert_eq!(html.matches("<table class=\"summary\">").count(), 1);
    let summary = std::fs::read_to_string(out.join("summary.svg")).unwrap();
    assert_eq!(summary.matches("r=\"6\"").count(), 2, "{summary}");
    assert_eq!(summary.matches("r=\"3\"").count(), 4, "{summary}");
    // The paired trace carries the feedback.
    assert_eq!(list[0]["reverse"], "Verizon-LTE-short.up");
}

/// The help names only schemes that exist: a rate-control scheme or probe a user may look for
/// (those of the papers wisp is to reproduce next, and well-known others) appears in `wisp
/// --help` or a subcommand's help only if `wisp schemes` lists it.
#[test]
fn the_help_names_only_schemes_that_exist() {
    let top = wisp(&["--help"]);
    assert!(top.status.success());
    let top = String::from_utf8_lossy(&top.stdout).into_owned();
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A command's line; its description's continuation lines are indented further.
        .filter_map(|l| l.strip_prefix("  ").filter(|r| !r.starts_with(' ')))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect();
    assert!(commands.len() >= 10, "subcommands parsed: {commands:?}");
    let mut help = top.clone();
    for c in &commands {
        let o = wisp(&[c, "--help"]);
        assert!(o.status.success(), "wisp {c} --help: {}", stderr(&o));
        help.push_str(&String::from_utf8_lossy(&o.stdout));
    }
    let schemes = wisp(&["schemes"]);
    assert!(schemes.status.success());
    let schemes = String::from_utf8_lossy(&schemes.stdout).to_lowercase();
    let help = help.to_lowercase();
    // Tools that exist as commands (`wisp wbest`, `wisp pingpair`) are not schemes; what is
    // checked here is that no scheme is named that does not exist.
    for name in [
        "kwikr", "salsify", "bbr", "copa", "verus", "pcc", "nada", "scream",
    ] {
        assert!(
            !help.contains(name) || schemes.contains(name),
            "the help names `{name}`, which `wisp schemes` does not list"
        );
    }
}

#[test]
fn schemes_lists_every_parameter_with_its_default_and_help() {
    let o = wisp(&["schemes", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let schemes = v["schemes"].as_array().unwrap();
    // Every registered scheme, each once (the registry's own list, not a count pinned here).
    let names: Vec<&str> = schemes
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let registered: Vec<&str> = wisp_core::scheme::schemes()
        .iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, registered);
    for s in schemes {
        let listed: Vec<String> = s["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| !p["default"].is_null())
            .map(|p| {
                format!(
                    "{}={}",
                    p["name"].as_str().unwrap(),
                    p["default"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            listed.join(","),
            s["params"].as_str().unwrap(),
            "{}",
            s["name"]
        );
        for p in s["parameters"].as_array().unwrap() {
            assert!(
                !p["doc"].as_str().unwrap().is_empty(),
                "{} {}",
                s["name"],
                p["name"]
            );
        }
        // The listed defaults parse back as a spec.
        let spec = format!(
            "{}:{}",
            s["name"].as_str().unwrap(),
            s["params"].as_str().unwrap()
        );
        let o = wisp(&[
            "run",
            "--scheme",
            &spec,
            "--link",
            "const:1mbps",
            "--duration-s",
            "1",
            "--warmup-s",
            "0",
        ]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
    }
    let o = wisp(&["schemes", "--params"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("packet-bytes") && text.contains("min-kbps=50"),
        "{text}"
    );
}

/// `wisp wifi bianchi`: one JSON object with the inputs and the three throughputs, replayed by
/// its seed; bad input is one line and exit code 2.
#[test]
fn wifi_bianchi_json_and_bad_input() {
    let args = [
        "wifi",
        "bianchi",
        "--std",
        "11a",
        "--rate-mbps",
        "54",
        "--stations",
        "10",
        "--duration-s",
        "5",
        "--seed",
        "3",
        "--json",
    ];
    let a = wisp(&args);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, wisp(&args).stdout, "same seed, different output");
    let text = String::from_utf8(a.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["std"], "11a");
    assert_eq!(v["rate_mbps"], 54.0);
    assert_eq!(v["stations"], 10);
    assert_eq!(v["bytes"], 1500);
    assert_eq!(v["seed"], 3);
    let sim = v["simulated_mbps"].as_f64().unwrap();
    let difs = v["bianchi_difs_mbps"].as_f64().unwrap();
    let eifs = v["bianchi_eifs_mbps"].as_f64().unwrap();
    assert!(eifs < difs, "{v}");
    let nearer = ((sim - difs).abs() / difs).min((sim - eifs).abs() / eifs);
    assert!(nearer < 0.03, "{v}");

    // Text output names the same quantities.
    let t = wisp(&[
        "wifi",
        "bianchi",
        "--std",
        "11b",
        "--rate-mbps",
        "11",
        "--stations",
        "5",
        "--duration-s",
        "2",
    ]);
    assert!(t.status.success(), "{}", stderr(&t));
    let out = String::from_utf8(t.stdout).unwrap();
    for key in ["simulated_mbps", "bianchi_difs_mbps", "bianchi_eifs_mbps"] {
        assert!(out.contains(key), "{out}");
    }

    let bad = |extra: &[&str], needle: &str| {
        let mut full = vec!["wifi", "bianchi"];
        full.extend_from_slice(extra);
        let o = wisp(&full);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{full:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{full:?}: {err}");
        assert!(err.contains(needle), "{full:?}: `{err}` lacks `{needle}`");
        assert!(o.stdout.is_empty(), "{full:?}");
    };
    let base = ["--std", "11a", "--rate-mbps", "54", "--stations", "5"];
    bad(
        &["--std", "11a", "--rate-mbps", "11", "--stations", "5"],
        "--rate-mbps: 11 Mbit/s is not an 802.11a rate (6, 9, 12, 18, 24, 36, 48, 54)",
    );
    bad(
        &["--std", "11x", "--rate-mbps", "54", "--stations", "5"],
        "--std",
    );
    bad(
        &[
            "--std",
            "11ac",
            "--rate-mbps",
            "433.3",
            "--bw",
            "40",
            "--stations",
            "5",
        ],
        "--rate-mbps: 433.3 Mbit/s is not an 802.11ac rate at 40 MHz, long GI (13.5, 27,",
    );
    bad(
        &[
            "--std",
            "11n-5",
            "--rate-mbps",
            "65",
            "--bw",
            "80",
            "--stations",
            "5",
        ],
        "--bw: 80 MHz",
    );
    bad(
        &[
            "--std",
            "11g",
            "--rate-mbps",
            "54",
            "--gi",
            "short",
            "--stations",
            "5",
        ],
        "--bw/--gi",
    );
    // 11n: HT20 MCS 7 short GI is 72.2 Mbit/s; the JSON names the MCS, width and GI.
    let n = wisp(&[
        "wifi",
        "bianchi",
        "--std",
        "11n-5",
        "--rate-mbps",
        "72.2",
        "--gi",
        "short",
        "--stations",
        "5",
        "--duration-s",
        "5",
        "--json",
    ]);
    assert!(n.status.success(), "{}", stderr(&n));
    let v: serde_json::Value = serde_json::from_slice(&n.stdout).unwrap();
    assert_eq!(
        (v["std"].as_str(), v["mcs"].as_u64()),
        (Some("11n-5"), Some(7))
    );
    assert!(
        (v["rate_mbps"].as_f64().unwrap() - 650.0 / 9.0).abs() < 1e-9,
        "{v}"
    );
    bad(
        &["--std", "11a", "--rate-mbps", "x", "--stations", "5"],
        "--rate-mbps",
    );
    bad(
        &["--std", "11a", "--rate-mbps", "54", "--stations", "0"],
        "--stations",
    );
    bad(
        &["--std", "11a", "--rate-mbps", "54", "--stations", "-1"],
        "--stations",
    );
    bad(&[&base[..], &["--bytes", "3000"]].concat(), "--bytes");
    bad(
        &[&base[..], &["--duration-s", "-1"]].concat(),
        "--duration-s",
    );
    bad(&["--std", "11a", "--stations", "5"], "--rate-mbps");
    bad(
        &[&base[..], &["--ampdu"]].concat(),
        "--ampdu: A-MPDU needs an HT",
    );

    // --ampdu: one saturated 11n-5 station at MCS 7 (65 Mbit/s) more than doubles its goodput
    // with A-MPDUs (32.1 → 61.0 Mbit/s, `ampdu_multiplies_one_ht_stations_goodput`); the model
    // (one MPDU per access) has no figure.
    let ht = |extra: &[&str]| {
        let mut args = vec![
            "wifi",
            "bianchi",
            "--std",
            "11n-5",
            "--rate-mbps",
            "65",
            "--stations",
            "1",
            "--duration-s",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = wisp(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let (single, agg) = (ht(&[]), ht(&["--ampdu"]));
    let mbps = |v: &serde_json::Value| v["goodput_udp_mbps"].as_f64().unwrap();
    assert!(mbps(&agg) > 1.8 * mbps(&single), "{single} {agg}");
    assert!(agg["bianchi_difs_mbps"].is_null() && agg["bianchi_eifs_mbps"].is_null());
    assert!(single["bianchi_difs_mbps"].is_f64());
}

/// Values the simulator cannot honour are refused with one line naming the flag, before
/// anything runs: numbers beyond what a time or rate holds (they used to saturate silently, or
/// to spin forever: `cbr` at 1e30 kbit/s, a run of 1e30 s), a duration that rounds to nothing
/// (it used to blame --warmup-s), a negative --rate-kbps (it used to be taken for a flag), the
/// same scheme or trace name twice in a bench.
#[test]
fn sim_side_values_out_of_range_name_their_flag() {
    let run = |extra: &[&str], needle: &str| {
        let mut full = vec!["run", "--scheme", "cbr", "--link", "const:1mbps"];
        full.extend_from_slice(extra);
        assert_bad_input(&full, needle);
    };
    run(
        &["--rate-kbps", "-5"],
        "--rate-kbps: scheme `cbr`: invalid value `-5`",
    );
    run(&["--rate-kbps", "1e30"], "at most 1000000 (1 Gbit/s)");
    run(
        &["--duration-s", "1e30"],
        "'--duration-s <S>': must be at most 86400 s",
    );
    run(
        &["--duration-s", "1e-12"],
        "'--duration-s <S>': must be at least 1 ns",
    );
    run(
        &["--delay-ms", "1e30"],
        "'--delay-ms <MS>': must be at most 60000 ms",
    );
    run(
        &["--warmup-s", "1e30"],
        "'--warmup-s <S>': must be at most 86400 s",
    );
    assert_bad_input(
        &[
            "run",
            "--scheme",
            "cbr:rate=20gbps",
            "--link",
            "const:1mbps",
        ],
        "1 Gbit/s",
    );
    for link in ["const:1e30mbps", "steps:1mbps@0,2mbps@1e30s"] {
        assert_bad_input(
            &[
                "run",
                "--scheme",
                "cbr",
                "--link",
                link,
                "--duration-s",
                "1",
            ],
            "too large",
        );
    }
    assert_bad_input(
        &["sweep", "--link", "const:1mbps", "--rates", "1e30"],
        "1 Gbit/s",
    );
    assert_bad_input(
        &["sweep", "--link", "const:10gbps", "--duration-s", "1"],
        "give --rates",
    );
    // Faster than any link may be: refused as a spec.
    assert_bad_input(
        &["sweep", "--link", "const:1e12mbps", "--duration-s", "1"],
        "limit of 10gbps",
    );
    let trace = "traces/cellular/Verizon-LTE-short.down";
    let o = wisp(&["forecast", "--trace", trace, "--duration-s", "1e30"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'--duration-s <S>': must be at most 86400 s"),
        "{}",
        stderr(&o)
    );
    assert_bad_input(
        &[
            "bench",
            "--schemes",
            "cbr,cbr:rate-kbps=1000",
            "--traces",
            trace,
        ],
        "--schemes names `cbr:rate-kbps=1000` twice",
    );
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("Verizon-LTE-short.down");
    std::fs::copy(root().join(trace), &copy).unwrap();
    let both = format!("{trace},{}", dir.path().display());
    assert_bad_input(
        &["bench", "--schemes", "cbr", "--traces", &both],
        "have the same name",
    );
}

/// An --out that cannot be a folder (a file, or a path below a file) is bad input named before
/// the run, not an I/O error after it; a folder where a file goes leaves nothing half written.
#[test]
fn an_out_that_cannot_be_a_folder_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let below = file.join("sub");
    let scenario = root().join("scenarios/wifi-mixed.toml");
    let scenario = scenario.to_str().unwrap();
    for out in [&file, &below] {
        let out = out.to_str().unwrap();
        for args in [
            &[
                "run",
                "--scheme",
                "cbr",
                "--link",
                "const:1mbps",
                "--out",
                out,
            ][..],
            &["sim", scenario, "--out", out],
            &[
                "bench",
                "--schemes",
                "cbr",
                "--traces",
                "traces/cellular/Verizon-LTE-short.down",
                "--out",
                out,
            ],
            &[
                "sweep",
                "--link",
                "const:1mbps",
                "--rates",
                "500",
                "--out",
                out,
            ],
            &["reproduce", "alfalfa", "--quick", "--out", out],
        ] {
            let o = wisp(args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.contains(&format!("--out {out}")), "{args:?}: {err}");
            assert!(err.contains("is a file, not a folder"), "{args:?}: {err}");
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    // --decoded FILE: a folder, or below a file.
    let clip = root().join("media/bigbuckbunny-qcif-3s.y4m");
    let below_s = below.join("x.y4m");
    let dir_s = dir.path().to_str().unwrap().to_string();
    for (decoded, needle) in [
        (
            dir_s.clone(),
            format!("--decoded {dir_s}: is a folder, not a file"),
        ),
        (
            below_s.to_str().unwrap().to_string(),
            format!("{} is a file, not a folder", file.display()),
        ),
    ] {
        let o = wisp(&[
            "run",
            "--scheme",
            "alfalfa:codec=vp8",
            "--link",
            "const:1mbps",
            "--video",
            clip.to_str().unwrap(),
            "--decoded",
            &decoded,
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&needle), "{err}");
    }
    // A folder in the place of report.html: an I/O error, and none of the other files.
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("report.html")).unwrap();
    let o = wisp(&[
        "run",
        "--scheme",
        "cbr",
        "--link",
        "const:1mbps",
        "--duration-s",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["report.html"], "{}", stderr(&o));
}

/// Clap's errors stay one line but keep what helps: the accepted values of an enum option, a
/// similarly spelt option, every missing argument (not the first only), and for a command
/// without its subcommand, its usage (it used to print the command's one-line summary).
#[test]
fn argument_errors_are_one_line_with_their_hints() {
    let one_line = |args: &[&str], needles: &[&str]| {
        let o = wisp(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: `{err}` lacks `{n}`");
        }
        assert!(!err.contains("For more information"), "{err}");
    };
    one_line(
        &["reproduce", "nosuch"],
        // A few of the registry's papers (wisp_report::PAPERS): the list is not pinned here.
        &["[possible values: ", "gcc-wifi", "sprout", "kwikr"],
    );
    one_line(
        &[
            "run",
            "--scheme",
            "cbr",
            "--link",
            "const:1mbps",
            "--dleay-ms",
            "5",
        ],
        &[
            "'--dleay-ms'",
            "tip: a similar argument exists: '--delay-ms'",
        ],
    );
    one_line(
        &["wifi", "bianchi"],
        &["--std <STD>, --rate-mbps <R>, --stations <N>"],
    );
    one_line(
        &["trace"],
        &["a subcommand is missing: wisp trace <COMMAND>"],
    );
}

/// A trace whose last line says 1e12 ms (31 years; a corrupt timestamp) and a 1-ns correlation
/// bin: each command refuses it in one line before allocating per second, per tick or per bin
/// (they aborted, out of memory) or simulating for its period.
#[test]
fn a_trace_spanning_years_is_refused_not_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.down");
    std::fs::write(&long, "1\n1000000000000\n").unwrap();
    let long = long.to_str().unwrap();
    let refused = |args: &[&str], needle: &str| {
        let o = wisp(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    refused(&["trace", "stats", long], "lasts 1000000000 s");
    refused(
        &["run", "--scheme", "cbr", "--trace", long],
        "give --duration-s",
    );
    refused(&["forecast", "--trace", long], "give --duration-s");
    refused(
        &["bench", "--schemes", "cbr", "--traces", long],
        "give --duration-s",
    );
    let t = "traces/cellular/Verizon-LTE-short.down";
    refused(
        &["trace", "compare", t, t, "--bin-ms", "0.000001"],
        "--bin-ms: 140001000000 bins",
    );
    // With a --duration-s the run is fine.
    let o = wisp(&[
        "run",
        "--scheme",
        "cbr",
        "--trace",
        long,
        "--duration-s",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Every simulator-side command's --help shows examples, each line a command (or its
/// continuation): under 100 columns, so that clap does not break one in two.
#[test]
fn simulator_commands_show_examples() {
    for cmd in [
        "run",
        "sim",
        "bench",
        "sweep",
        "reproduce",
        "trace",
        "forecast",
    ] {
        let o = wisp(&[cmd, "--help"]);
        assert!(o.status.success(), "{cmd}");
        let help = String::from_utf8_lossy(&o.stdout);
        let examples = help
            .split("Examples:")
            .nth(1)
            .unwrap_or_else(|| panic!("{cmd} --help has no examples:\n{help}"));
        let lines: Vec<&str> = examples
            .lines()
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .collect();
        assert!(!lines.is_empty(), "{cmd}");
        for l in &lines {
            assert!(
                l.trim_start().starts_with("wisp ") || l.starts_with("       "),
                "{cmd}: `{l}`"
            );
        }
    }
}

/// An --out this user may not write into is bad input named before the run (it was an I/O
/// error after the whole simulation). Runs as `nobody` through setpriv; skipped without root.
#[test]
fn an_out_this_user_cannot_write_is_refused_first() {
    let t = "an_out_this_user_cannot_write_is_refused_first";
    if !privileged(t) || !have(t, "setpriv") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = locked.join("out");
    let out_s = out.to_str().unwrap();
    let o = wisp_as_nobody(
        dir.path(),
        &[
            "run",
            "--scheme",
            "cbr",
            "--link",
            "const:1mbps",
            "--out",
            out_s,
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "--out {out_s}: cannot write into {}",
            locked.display()
        )),
        "{err}"
    );
    assert!(!out.exists());
}
