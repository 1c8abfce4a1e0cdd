//! Helpers shared by the integration tests (`mod common;` in each).

use std::path::PathBuf;
use wisp_sim::link::{LinkModel, LinkSpec};

/// A shipped cellular trace (`traces/cellular/NAME`, Mahimahi format, milliseconds), loaded.
pub fn cellular(name: &str) -> LinkModel {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/cellular")
        .join(name);
    LinkSpec::Trace {
        path: p,
        unit: wisp_sim::trace::TraceUnit::Millis,
    }
    .load()
    .unwrap_or_else(|e| panic!("loading traces/cellular/{name}: {e}"))
}
