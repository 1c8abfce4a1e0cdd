//! `wisp forecast`: output shape, help, and bad input.

mod common;
use common::*;

#[test]
fn prints_one_csv_row_per_tick() {
    let o = wisp(&[
        "forecast",
        "--trace",
        "traces/cellular/Verizon-LTE-short.down",
        "--duration-s",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "t_ms,received_or_lost,counts0,counts1,counts2,counts3,counts4,counts5,counts6,counts7"
        )
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    // The trace starts at 0 ms: ticks end at 20, 40, …, 1980.
    assert_eq!(rows.len(), 99);
    assert_eq!(rows[0][0], 20.0);
    for r in &rows {
        assert_eq!(r.len(), 10);
        assert!(r[2..].windows(2).all(|w| w[0] <= w[1]), "{r:?}");
    }
    assert!(rows.windows(2).all(|w| w[0][1] <= w[1][1]));
}

#[test]
fn help_and_bad_input() {
    let o = wisp(&["forecast", "--help"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("received_or_lost"));
    for args in [
        &["forecast", "--trace", "no/such/file"][..],
        &["forecast", "--trace", "Cargo.toml"],
        &[
            "forecast",
            "--trace",
            "traces/cellular/Verizon-LTE-short.down",
            "--duration-s",
            "0",
        ],
        &[
            "forecast",
            "--trace",
            "traces/cellular/Verizon-LTE-short.down",
            "--scheme",
            "cbr",
        ],
        &["forecast"],
    ] {
        let o = wisp(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // A scheme that makes no forecast is refused with those that do (the registry's).
    let o = wisp(&[
        "forecast",
        "--trace",
        "traces/cellular/Verizon-LTE-short.down",
        "--scheme",
        "cubic",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`cubic` makes no forecast (schemes that do: sprout, sprout-ewma)"),
        "{err}"
    );
}
