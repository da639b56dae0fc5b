//! Scenario files: load (objects, nodes shorthand, steps, checks, tryThis) and run a minute of
//! simulated time, or be refused with diagnostics.
#![no_main]

use kubeloop::sim::session::Session;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mut s) = Session::load("fuzz.yaml", text, None) {
        s.script_try_this();
        s.advance_to(60_000, 50_000);
        let _ = s.checks();
    }
});
