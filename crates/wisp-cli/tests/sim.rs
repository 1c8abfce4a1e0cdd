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
        ["packets.csv", "report.html", "run.json", "timeseries.csv"]
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run, b);
}
