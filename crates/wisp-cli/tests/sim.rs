//! `wisp sim` end to end: the shipped scenarios run, are deterministic by seed, and bad files
//! fail with `FILE:LINE:COLUMN`, exit code 2 and nothing written.

mod common;
use common::*;

fn json(args: &[&str]) -> serde_json::Value {
    let o = wisp(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn bad_scenario_files_name_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(root().join("scenarios/cellular-shared.toml")).unwrap();
    // The shipped file names its traces relative to itself.
    let good = good.replace(
        "trace:../traces",
        &format!("trace:{}/traces", root().display()),
    );
    let case = |name: &str, text: &str, needle: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let p = p.to_str().unwrap().to_string();
        assert_bad_input(&["sim", &p], &format!("{p}:{needle}"));
    };
    let line_of =
        |text: &str, needle: &str| text[..text.find(needle).unwrap()].matches('\n').count() + 1;
    // An unknown key.
    let t = good.replace("dscp = 34", "dscp = 34\ncolour = \"red\"");
    case(
        "key.toml",
        &t,
        &format!("{}:1: unknown field `colour`", line_of(&t, "colour")),
    );
    // An unknown node (the value's column: `to = "` is 5 characters).
    let t = good.replace("to = \"phone\"\ndscp", "to = \"tablet\"\ndscp");
    case(
        "node.toml",
        &t,
        &format!("{}:6: unknown node `tablet`", line_of(&t, "\"tablet\"")),
    );
    // A bad link spec.
    let t = good.replace("spec = \"pipe\"", "spec = \"const:warp9\"");
    case(
        "spec.toml",
        &t,
        &format!("{}:8: bad link spec", line_of(&t, "warp9")),
    );
    // A missing trace.
    let t = good.replace("Verizon-LTE-short.up", "no-such.up");
    case(
        "trace.toml",
        &t,
        &format!("{}:11: link", line_of(&t, "no-such.up")),
    );
    // Not TOML at all.
    case("syntax.toml", "duration = \n", "1:");
    // A missing file.
    let missing = dir.path().join("missing.toml");
    let m = missing.to_str().unwrap();
    assert_bad_input(&["sim", m], &format!("{m}: cannot read"));
}

#[test]
fn a_scenario_is_deterministic_by_seed_and_writes_run_files() {
    let f = "scenarios/cellular-shared.toml";
    let a = json(&["sim", f, "--json"]);
    let flows = a["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3);
    for fl in flows {
        let thr = fl["throughput_kbps"].as_f64().unwrap();
        assert!(thr > 50.0, "{fl}");
        assert!(fl["delay_p50_ms"].as_f64().unwrap() >= 20.0, "{fl}");
    }
    assert_eq!(a["seed"], 1);
    assert_eq!(
        wisp(&["sim", f, "--json"]).stdout,
        wisp(&["sim", f, "--json"]).stdout
    );
    let b = json(&["sim", f, "--json", "--seed", "2"]);
    assert_eq!(b["seed"], 2);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = wisp(&["sim", f, "--out", out.to_str().unwrap(), "--seed", "2"]);
    assert_eq!(o.status.code(), Some(0));
    let names: Vec<String> = files(&out)
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "controller.csv",
            "packets.csv",
            "report.html",
            "run.json",
            "timeseries.csv"
        ]
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run, b);
    // The report states the delays as the file's links' (it said "0 ms one-way delay").
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("; delay per link; queue per link;"), "{html}");
}

/// `wisp run --link wifi:…` with `stations` contenders running `load`: flow 0's throughput and
/// median and 95th-percentile delay.
fn over_wifi(scheme: &str, stations: u32, load: &str) -> (f64, f64, f64) {
    let link = format!("wifi:std=11g,rate=54mbps,stations={stations},load={load}");
    let args = [
        "run",
        "--scheme",
        scheme,
        "--link",
        &link,
        "--duration-s",
        "20",
        "--json",
    ];
    let o = wisp(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Deterministic: the same bytes again.
    assert_eq!(wisp(&args).stdout, o.stdout, "{scheme} over {link}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let trace = v["trace"].as_str().unwrap();
    assert!(trace.contains(&format!(",stations={stations},")), "{trace}");
    let f = &v["flows"][0];
    (
        f["throughput_kbps"].as_f64().unwrap(),
        f["delay_p50_ms"].as_f64().unwrap(),
        f["delay_p95_ms"].as_f64().unwrap(),
    )
}

#[test]
fn run_over_the_wifi_medium_contends_with_its_stations() {
    // Flows that fill the medium get less beside 4 bulk downloads from the same AP (it serves
    // five stations in turn).
    for scheme in ["sprout", "cubic"] {
        let (alone, _, _) = over_wifi(scheme, 0, "tcp");
        let (shared, _, _) = over_wifi(scheme, 4, "tcp");
        assert!(alone > 10_000.0, "{scheme}: {alone}");
        assert!(
            shared < alone / 2.0,
            "{scheme}: {shared} with 4 TCP downloads, {alone} alone"
        );
    }
    // GCC ramps from 300 kbit/s and stays below what 4 downloads leave it; 10 saturated
    // stations (an eleventh of the channel each, the AP too) vary its delay, and it sends less.
    let (alone, _, p95_alone) = over_wifi("gcc-remb", 0, "saturated");
    let (shared, _, p95_shared) = over_wifi("gcc-remb", 10, "saturated");
    assert!(
        shared < alone,
        "gcc-remb: {shared} with 10 saturated stations, {alone} alone"
    );
    assert!(
        p95_shared > p95_alone,
        "gcc-remb: p95 {p95_shared} vs {p95_alone}"
    );
    // A 4 Mbit/s CBR fits either way, but waits for the medium behind the downloads.
    let (alone, d_alone, _) = over_wifi("cbr:rate-kbps=4000", 0, "tcp");
    let (shared, d_shared, _) = over_wifi("cbr:rate-kbps=4000", 4, "tcp");
    assert!(
        (alone - 4000.0).abs() < 40.0 && (shared - 4000.0).abs() < 40.0,
        "{alone} {shared}"
    );
    // 20 ms of wire each way is the floor; the medium adds its access and airtime.
    assert!(d_alone > 20.0 && d_shared > d_alone, "{d_alone} {d_shared}");
    // Bad wifi specs and options that do not apply fail as bad input.
    assert_bad_input(&["run", "--scheme", "cbr", "--link", "wifi:std=11q"], "std");
    assert_bad_input(
        &[
            "run", "--scheme", "cbr", "--link", "wifi:", "--queue", "codel",
        ],
        "--queue does not apply",
    );
}

#[test]
fn the_wifi_scenario_gives_all_three_flows_deterministic_by_seed() {
    let f = "scenarios/wifi-mixed.toml";
    let a = wisp(&["sim", f, "--json", "--seed", "3"]);
    assert_eq!(
        a.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );
    assert_eq!(wisp(&["sim", f, "--json", "--seed", "3"]).stdout, a.stdout);
    assert_ne!(wisp(&["sim", f, "--json", "--seed", "4"]).stdout, a.stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let flows = v["flows"].as_array().unwrap();
    let names: Vec<&str> = flows.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["call", "download", "upload"]);
    let get = |i: usize, k: &str| flows[i][k].as_f64().unwrap();
    // The call ramps up (GCC starts at 300 kbit/s; its encoder gives at most 2.5 Mbit/s, plus
    // audio, headers and, in the application-limited region it reaches, probes every 5 s).
    assert!(get(0, "throughput_kbps") > 300.0 && get(0, "throughput_kbps") <= 2700.0);
    // The download takes what is left of 11g's ~30 Mbit/s of goodput.
    assert!(get(1, "throughput_kbps") > 5000.0 && get(1, "throughput_kbps") < 30_000.0);
    // The upload is a 2 Mbit/s CBR: all of it arrives.
    assert!((get(2, "throughput_kbps") - 2000.0).abs() < 40.0);
    for f in flows {
        // 10 ms of wire is every packet's floor.
        assert!(f["delay_p50_ms"].as_f64().unwrap() > 10.0, "{f}");
        assert!(f["loss_rate"].as_f64().unwrap() < 0.05, "{f}");
    }
    assert_eq!(flows[0]["path"], "server > ap > a");
    assert_eq!(flows[2]["path"], "c > ap > server");
    assert_eq!(
        v["media"][0]["spec"].as_str().unwrap().split(',').next(),
        Some("wifi:std=11g")
    );
}

#[test]
fn a_scenario_file_and_wisp_run_build_the_same_wifi_network() {
    // scenarios/gcc-wifi-edca.toml spells out what `wisp run --link wifi:…` builds: every
    // metric of the call is the same.
    let sim = json(&["sim", "scenarios/gcc-wifi-edca.toml", "--json"]);
    let run = json(&[
        "run",
        "--scheme",
        "gcc-remb",
        "--link",
        "wifi:std=11g,rate=54mbps,stations=10,load=saturated",
        "--duration-s",
        "60",
        "--json",
    ]);
    let (s, r) = (&sim["flows"][0], &run["flows"][0]);
    let metrics = r.as_object().unwrap();
    assert!(metrics.len() >= 15, "{r}");
    for (k, v) in metrics {
        assert_eq!(&s[k], v, "{k}");
    }
    assert!(r["packets_delivered"].as_u64().unwrap() > 1000, "{r}");
}
