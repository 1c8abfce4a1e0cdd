//! The browsers' snapshots as CSV (`wisp browser-call --out DIR`: DIR/stats.csv).

use wisp_net::browser::Snapshot;

/// The snapshots of both pages as CSV, one row each, the sender's first.
pub fn csv(sender: &[Snapshot], receiver: &[Snapshot]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for s in sender.iter().chain(receiver) {
        w.serialize(s)?;
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_has_a_row_per_snapshot_and_a_header() {
        let text = String::from_utf8(
            csv(
                &[Snapshot {
                    role: "sender".into(),
                    t_s: 0.2,
                    estimate_bps: Some(1000.0),
                    ..Snapshot::default()
                }],
                &[Snapshot {
                    role: "receiver".into(),
                    ..Snapshot::default()
                }],
            )
            .unwrap(),
        )
        .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].starts_with("role,t_s,estimate_bps,"),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("sender,0.2,1000.0,"), "{}", lines[1]);
    }
}
