//! `wisp run --scheme alfalfa --video CLIP`: video.csv, determinism, and bad input.

mod common;
use common::{SpawnGuarded, assert_bad_input, wisp};

const RUN: [&str; 10] = [
    "run",
    "--scheme",
    "alfalfa",
    "--trace",
    "traces/cellular/Verizon-LTE-short.down",
    "--reverse-trace",
    "traces/cellular/Verizon-LTE-short.up",
    "--duration-s",
    "20",
    "--json",
];

fn video_csv(out: &std::path::Path) -> String {
    video_files(out).0
}

/// video.csv, display.csv and the stderr of a run.
fn video_files(out: &std::path::Path) -> (String, String, String) {
    let mut args = RUN.to_vec();
    let out_s = out.to_str().unwrap().to_string();
    args.extend(["--video", "media/bigbuckbunny-qcif-3s.y4m", "--out", &out_s]);
    let o = wisp(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        std::fs::read_to_string(out.join("video.csv")).unwrap(),
        std::fs::read_to_string(out.join("display.csv")).unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// display.csv: a row per capture instant (25/s for 20 s), the same bytes from the same seed,
/// and each row's frame on screen and displayed delay as recomputed here from video.csv by the
/// definition (at t_k = 40·k ms: the newest state displayed at or before t_k; delay t_k − its
/// capture; none before the first display).
#[test]
fn display_csv_is_the_screen_at_each_capture_instant() {
    let dir = tempfile::tempdir().unwrap();
    let (video, a, err) = video_files(&dir.path().join("a"));
    let (_, b, _) = video_files(&dir.path().join("b"));
    assert_eq!(a, b);
    assert!(err.contains("displayed at each capture instant"), "{err}");
    assert!(err.contains("the model codec's approximation"), "{err}");
    assert!(dir.path().join("a/video.json").exists());
    // (state, capture, display) of the frames shown.
    let shown: Vec<(u32, f64, f64)> = video
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| !r[3].is_empty())
        .map(|r| {
            (
                r[0].parse().unwrap(),
                r[2].parse().unwrap(),
                r[3].parse().unwrap(),
            )
        })
        .collect();
    assert!(!shown.is_empty());
    let mut lines = a.lines();
    assert_eq!(
        lines.next(),
        Some("picture,t_ms,state,source,delay_ms,ssim_db")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 500);
    let (mut blank, mut frozen) = (0, 0);
    for (k, r) in rows.iter().enumerate() {
        let t = 40.0 * k as f64;
        assert_eq!(r[0], k.to_string());
        assert!((r[1].parse::<f64>().unwrap() - t).abs() < 1e-6, "{r:?}");
        let on = shown.iter().filter(|f| f.2 <= t + 1e-6).max_by_key(|f| f.0);
        match on {
            None => {
                blank += 1;
                assert!(
                    r[2].is_empty() && r[4].is_empty() && r[5].is_empty(),
                    "{r:?}"
                );
            }
            Some(&(state, capture, _)) => {
                assert_eq!(r[2], state.to_string(), "{r:?}");
                let delay: f64 = r[4].parse().unwrap();
                assert!((delay - (t - capture)).abs() < 1e-3, "{r:?}: {capture}");
                frozen += usize::from(delay > 200.0);
                let q: f64 = r[5].parse().unwrap();
                assert!((0.0..=100.0).contains(&q), "{r:?}");
            }
        }
    }
    // The first frame needs a one-way trip at least: instant 0 is blank.
    assert!((1..25).contains(&blank), "{blank}");
    let share = frozen as f64 / (500 - blank) as f64;
    assert!(
        err.contains(&format!(
            "{:.1}% of instants frozen > 200 ms",
            100.0 * share
        )),
        "{share} {err}"
    );
}

#[test]
fn video_csv_has_a_row_per_coded_frame_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let a = video_csv(&dir.path().join("a"));
    let b = video_csv(&dir.path().join("b"));
    assert_eq!(a, b);
    let mut lines = a.lines();
    assert_eq!(
        lines.next(),
        Some("state,source,capture_ms,display_ms,bytes,ssim_db,base,intra,missing_base")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // 25 pictures/s (the clip's rate) for 20 s, some skipped.
    assert!(rows.len() > 250 && rows.len() <= 500, "{}", rows.len());
    for r in &rows {
        let capture: f64 = r[2].parse().unwrap();
        // Captures on the 40-ms grid of the clip's 25 frames/s.
        assert!(
            (capture / 40.0 - (capture / 40.0).round()).abs() < 1e-6,
            "{r:?}"
        );
        if !r[3].is_empty() {
            assert!(r[3].parse::<f64>().unwrap() >= capture);
        }
        assert!(r[4].parse::<usize>().unwrap() > 15);
    }
}

/// Without --out a video run prints its summary line and writes nothing: the same frames shown
/// as the run with --out.
#[test]
fn video_without_out_prints_the_summary() {
    let mut args = RUN.to_vec();
    args.extend(["--video", "media/bigbuckbunny-qcif-3s.y4m"]);
    let o = wisp(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let (csv, _, with_out) = video_files(&dir.path().join("a"));
    let shown = csv
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(3) != Some(""))
        .count();
    assert!(shown > 0);
    let line = |e: &str| {
        e.lines()
            .find(|l| l.starts_with("wisp run: video: "))
            .map(str::to_owned)
    };
    assert_eq!(line(&err), line(&with_out));
    assert!(
        line(&err)
            .unwrap()
            .starts_with(&format!("wisp run: video: {shown} of 500 pictures shown")),
        "{err}"
    );
}

#[test]
fn video_bad_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let clip = std::fs::read(common::root().join("media/bigbuckbunny-qcif-3s.y4m")).unwrap();
    let cut = dir.path().join("cut.y4m");
    std::fs::write(&cut, &clip[..100_000]).unwrap();
    let cut_s = cut.to_str().unwrap();
    let mut args = RUN.to_vec();
    args.extend(["--video", cut_s]);
    assert_bad_input(&args, "truncated");
    let mut args = RUN.to_vec();
    args[2] = "cubic";
    args.extend(["--video", "media/bigbuckbunny-qcif-3s.y4m"]);
    assert_bad_input(&args, "alfalfa");
    // `wisp send --video`: the same checks, before any socket opens.
    for (scheme, clip, needle) in [
        ("alfalfa", cut_s, "truncated"),
        ("cubic", "media/bigbuckbunny-qcif-3s.y4m", "alfalfa"),
        // The encoder's time is charged only in the simulator; over sockets it is real.
        (
            "alfalfa:encode-ms=3",
            "media/bigbuckbunny-qcif-3s.y4m",
            "encode-ms",
        ),
        (
            "gcc-video:hold=on",
            "media/bigbuckbunny-qcif-3s.y4m",
            "hold",
        ),
    ] {
        let o = wisp(&[
            "send",
            "--scheme",
            scheme,
            "--to",
            "127.0.0.1:9",
            "--video",
            clip,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{scheme}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{err}");
    }
}

/// `wisp send --scheme alfalfa --video CLIP` / `wisp recv --out DIR` over loopback: the
/// receiver decodes the diffs the packets carry and writes video.csv with `wisp run`'s columns.
#[test]
fn send_and_recv_write_video_csv_over_loopback() {
    let _real_time = common::real_time();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("recv");
    let port = common::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let recv = common::wisp_command()
        .args(["recv", "--listen", &listen, "--duration-s", "5", "--out"])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn_guarded();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let sent = wisp(&[
        "send",
        "--scheme",
        "alfalfa",
        "--to",
        &listen,
        "--duration-s",
        "2",
        "--video",
        "media/bigbuckbunny-qcif-3s.y4m",
        "--json",
    ]);
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    // The sender measured the wall-clock time of each frame's coding call.
    let report: serde_json::Value = serde_json::from_slice(&sent.stdout).unwrap();
    let coding = report["video_coding_ms_mean"].as_f64().unwrap();
    let coded = report["video_frames_coded"].as_u64().unwrap();
    assert!(coding > 0.0 && coding < 1000.0, "{report}");
    assert!((25..=50).contains(&coded), "{report}");
    assert!(report["flows"][0]["packets_sent"].as_u64().unwrap() > 0);
    let got = recv.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{err}");
    assert!(err.contains("0 bad pieces"), "{err}");
    let csv = std::fs::read_to_string(out.join("video.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("state,source,capture_ms,display_ms,bytes,ssim_db,base,intra,missing_base")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // 2 s at 25 pictures/s (a few skipped while Sprout's window opens), each shown after its
    // capture.
    assert!(rows.len() >= 25 && rows.len() <= 50, "{}", rows.len());
    for r in &rows {
        let capture: f64 = r[2].parse().unwrap();
        let display: f64 = r[3].parse().unwrap();
        assert!(display >= capture && display - capture < 100.0, "{r:?}");
        assert!(r[5].parse::<f64>().unwrap() > 0.0, "{r:?}");
    }
}

/// `--video` with `sprout`, `gcc`, `gcc-remb` and `cbr`: the same video layer under their rate
/// control, the same video.csv; the run names the video variant.
#[test]
fn other_rate_controls_write_the_same_video_csv() {
    let dir = tempfile::tempdir().unwrap();
    for (scheme, variant) in [
        ("sprout", "sprout-conventional"),
        ("gcc", "gcc-video"),
        ("gcc-remb", "gcc-video:rate=gcc-remb"),
        ("cbr:rate-kbps=500", "cbr-video"),
    ] {
        let out = dir.path().join(variant);
        let out_s = out.to_str().unwrap().to_string();
        let mut args = RUN.to_vec();
        args[2] = scheme;
        args.extend(["--video", "media/bigbuckbunny-qcif-3s.y4m", "--out", &out_s]);
        let o = wisp(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(variant),
            "{scheme}"
        );
        let csv = std::fs::read_to_string(out.join("video.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("state,source,capture_ms,display_ms,bytes,ssim_db,base,intra,missing_base")
        );
        let rows = lines.count();
        assert!(rows > 250 && rows <= 500, "{scheme}: {rows}");
    }
}

/// `wisp reproduce alfalfa --quick`: summary.json with its checks, table.csv, report.html and a
/// figure per direction, the same bytes twice; a missing traces folder is bad input.
#[test]
fn quick_reproduce_alfalfa_writes_its_files_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let out = dir.path().join(name);
        let o = wisp(&[
            "reproduce",
            "alfalfa",
            "--quick",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (a, b) = (run("a"), run("b"));
    for f in ["summary.json", "table.csv", "report.html"] {
        let x = std::fs::read(a.join(f)).unwrap();
        assert_eq!(x, std::fs::read(b.join(f)).unwrap(), "{f}");
    }
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("summary.json")).unwrap()).unwrap();
    let checks = s["checks"].as_array().unwrap();
    // §4's checks (issue 35): the delay two, the intra frames two, the missing references three.
    assert_eq!(checks.len(), 7);
    assert!(
        checks
            .iter()
            .all(|c| c["met"].is_boolean() && !c["measured"].as_str().unwrap().is_empty())
    );
    // Freezes by libwebrtc's rule are columns of the table.
    let header = std::fs::read_to_string(a.join("table.csv")).unwrap();
    assert!(
        header
            .lines()
            .next()
            .unwrap()
            .contains(",freezes,freezes_s,")
    );
    // 4 lossless directions + 2 lossy, 9 schemes each (alfalfa, alfalfa-paper,
    // alfalfa-loss-aware, sprout-conventional with and without parity, gcc-video, cbr-video,
    // alfalfa-closed8, alfalfa-hold), and a header.
    let table = std::fs::read_to_string(a.join("table.csv")).unwrap();
    assert_eq!(table.lines().count(), 1 + 6 * 9);
    assert_eq!(
        table
            .lines()
            .filter(|l| l.contains(",alfalfa-hold,"))
            .count(),
        6
    );
    // Per direction the quality-against-delay plot, per frame and displayed.
    let figures: Vec<_> = std::fs::read_dir(a.join("figures"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(figures.len(), 12, "{figures:?}");
    for f in &figures {
        let x = std::fs::read(a.join("figures").join(f)).unwrap();
        assert_eq!(
            x,
            std::fs::read(b.join("figures").join(f)).unwrap(),
            "{f:?}"
        );
    }
    assert!(
        figures
            .iter()
            .any(|f| f.to_str() == Some("displayed-quality-delay-Verizon-LTE-short.down.svg"))
    );
    assert!(table.lines().next().unwrap().contains("disp_delay_p95_ms"));
    // The report's runs come as two tables (per frame, displayed) of at most ten columns each,
    // with a header row per direction: one table of fifteen ran off a 1400-px page.
    let html = std::fs::read_to_string(a.join("report.html")).unwrap();
    let runs: Vec<&str> = html.split("<table class=\"runs\">").skip(1).collect();
    assert_eq!(runs.len(), 2, "{html}");
    for t in &runs {
        let t = &t[..t.find("</table>").unwrap()];
        let head = &t[..t.find("</tr>").unwrap()];
        let columns = head.matches("<th>").count();
        assert!((5..=10).contains(&columns), "{columns}: {head}");
        assert_eq!(t.matches("<tr class=\"group\">").count(), 6, "{t}");
    }
    let o = wisp(&[
        "reproduce",
        "alfalfa",
        "--quick",
        "--traces",
        "no/such/folder",
        "--out",
        dir.path().join("c").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("c").exists());
}
