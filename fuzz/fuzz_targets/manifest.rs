//! The manifest parser and validator: any bytes become objects or positioned diagnostics.
#![no_main]

use kubeloop::sim::api::validation::validate;
use kubeloop::sim::input::decode::decode_manifest_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let decoded = decode_manifest_bytes("fuzz.yaml", data);
    for o in &decoded.objects {
        assert!(
            validate(&o.object, None).is_empty(),
            "decoded an invalid object"
        );
    }
    for d in &decoded.diagnostics {
        assert!(d.line >= 1 && d.col >= 1 && !d.message.is_empty());
    }
});
