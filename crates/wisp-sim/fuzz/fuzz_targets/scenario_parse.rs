//! `wisp_sim::scenario_file::parse_without_files` on arbitrary text: a scenario or an error
//! that names a place inside the text, never a panic. (It reads no file the text names.)
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = wisp_sim::scenario_file::parse_without_files("fuzz.toml", text) {
        if let Some((line, column)) = e.at {
            let lines = text.split('\n').count();
            assert!(line >= 1 && line <= lines, "{e}");
            assert!(column >= 1, "{e}");
        }
    }
});
