//! The share-link decoder: any fragment opens as a scenario or is refused with a message; a
//! scenario that opens is loaded as the playground would load it.
#![no_main]

use kubeloop::sim::session::Session;
use kubeloop::sim::share::{decode, Link};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match decode(text) {
        Ok(Link::Scenario(shared)) => {
            if let Ok(mut s) = Session::load("<link>", &shared.text, shared.seed) {
                s.advance_to(5_000, 20_000);
            }
        }
        Ok(Link::Example(_)) => {}
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
