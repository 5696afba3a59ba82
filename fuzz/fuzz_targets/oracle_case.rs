//! Any text as an Oracle-A case: parsed or refused, never a panic; a parsed case is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(case) = oracle::Case::from_json(text) {
        let _ = oracle::check(&case);
    }
});
