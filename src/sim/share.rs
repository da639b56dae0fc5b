//! Share links: the whole scenario in the URL fragment, compressed, base64url-encoded, versioned.
//!
//! The fragment never reaches a server. Format `#k1:<base64url(deflate(JSON))>`; the JSON leaves
//! defaults out so typical links stay short. Every version ever issued keeps decoding: a link in a
//! course page must open for years. Decoding is hostile-input safe: the fragment length and the
//! inflated size are capped, and every failure is a friendly message, never a panic.

use serde::{Deserialize, Serialize};

/// The newest format version this build writes.
pub const CURRENT_VERSION: u32 = 1;
/// The most a link may inflate to (decompression-bomb cap).
pub const MAX_INFLATED: usize = 1 << 20;
/// The longest fragment accepted (Chrome's URL limit is 2 MiB).
pub const MAX_FRAGMENT: usize = 2 << 20;
/// Past this many characters, chat tools and servers start cutting links: warn the author.
pub const LONG_LINK_WARNING: usize = 8 * 1024;

/// What a link carries: the editor text and the settings that change what a run shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    /// The scenario file (manifests plus an optional Scenario document).
    #[serde(rename = "y")]
    pub text: String,
    /// A seed overriding the scenario's.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Which panels to show (`view=`), when the author chose.
    #[serde(rename = "v", default, skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
    /// Simulation speed the author chose.
    #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
}

/// A link that could not be opened, with a message for the person who clicked it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// Cut off or corrupted in transit.
    Incomplete(String),
    /// Written by a newer Kubeloop.
    UnknownVersion(String),
    /// Inflates past the cap.
    TooLarge(String),
    /// Not a Kubeloop link at all.
    NotALink(String),
    /// `#example/<name>` naming no built-in example.
    UnknownExample(String),
}

impl std::fmt::Display for ShareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = match self {
            ShareError::Incomplete(m)
            | ShareError::UnknownVersion(m)
            | ShareError::TooLarge(m)
            | ShareError::NotALink(m)
            | ShareError::UnknownExample(m) => m,
        };
        f.write_str(m)
    }
}

/// What a fragment names: a built-in example, or an encoded scenario.
#[derive(Clone, Debug, PartialEq)]
pub enum Link {
    Example(String),
    Scenario(Shared),
}

/// base64url without padding (RFC 4648 §5).
pub fn base64url_encode(bytes: &[u8]) -> String {
    crate::sim::api::base64::encode_url(bytes)
}

/// Decodes base64url (padding and standard `+/` tolerated, as chat tools sometimes rewrite).
pub fn base64url_decode(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for (i, c) in s.trim_end_matches('=').bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => {
                return Err(format!(
                    "unexpected character {:?} at position {i}",
                    c as char
                ))
            }
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return Err("the encoded data ends in the middle of a byte".into());
    }
    Ok(out)
}

/// The fragment (without `#`) for a scenario, in the current format.
pub fn encode(shared: &Shared) -> String {
    let json = serde_json::to_vec(shared).unwrap_or_default();
    let deflated = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("k{CURRENT_VERSION}:{}", base64url_encode(&deflated))
}

/// A full share URL: `base` (without fragment) + `#` + fragment.
pub fn share_url(base: &str, shared: &Shared) -> String {
    let base = base.split('#').next().unwrap_or(base);
    format!("{base}#{}", encode(shared))
}

/// Reads a fragment (with or without `#`, or a whole URL) back into what it names.
pub fn decode(input: &str) -> Result<Link, ShareError> {
    if input.len() > MAX_FRAGMENT {
        return Err(ShareError::TooLarge(format!(
            "This link is {} characters long, more than Kubeloop accepts ({MAX_FRAGMENT}). It was not opened.",
            input.len()
        )));
    }
    let fragment = match input.split_once('#') {
        Some((_, f)) => f,
        None => input,
    };
    let fragment = fragment.trim();
    if let Some(name) = fragment.strip_prefix("example/") {
        let name = name.split(['?', '&']).next().unwrap_or(name);
        return Ok(Link::Example(name.to_string()));
    }
    let Some((tag, data)) = fragment.split_once(':') else {
        return Err(ShareError::NotALink(
            "This address does not contain a Kubeloop scenario.".into(),
        ));
    };
    let version: u32 = match tag.strip_prefix('k').and_then(|v| v.parse().ok()) {
        Some(v) => v,
        None => {
            return Err(ShareError::NotALink(
                "This address does not contain a Kubeloop scenario.".into(),
            ))
        }
    };
    match version {
        1 => decode_v1(data).map(Link::Scenario),
        v => Err(ShareError::UnknownVersion(format!(
            "This link was made by a newer version of Kubeloop (format {v}; this one reads up to {CURRENT_VERSION}). Reload the page to get the newest version."
        ))),
    }
}

fn incomplete() -> ShareError {
    ShareError::Incomplete("This link looks incomplete — it may have been cut off when it was copied. Nothing was changed; your own scenario is still here.".into())
}

fn decode_v1(data: &str) -> Result<Shared, ShareError> {
    let bytes = base64url_decode(data).map_err(|_| incomplete())?;
    let json = match miniz_oxide::inflate::decompress_to_vec_with_limit(&bytes, MAX_INFLATED) {
        Ok(j) => j,
        Err(e) if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
            return Err(ShareError::TooLarge(format!(
                "This link expands to more than {} KiB, more than a scenario can be. It was refused.",
                MAX_INFLATED / 1024
            )))
        }
        Err(_) => return Err(incomplete()),
    };
    serde_json::from_slice::<Shared>(&json).map_err(|_| incomplete())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_scenario_survives_the_round_trip() {
        let s = Shared {
            text: "apiVersion: v1\nkind: Pod\n".into(),
            seed: Some(7),
            view: None,
            speed: Some(2.0),
        };
        let frag = encode(&s);
        assert!(frag.starts_with("k1:"));
        assert_eq!(
            decode(&format!("https://x.test/#{frag}")),
            Ok(Link::Scenario(s))
        );
    }

    #[test]
    fn version_1_links_issued_in_2026_still_open() {
        // Frozen: made with an independent deflate (Python's zlib, raw mode). Must decode forever.
        let frozen = "https://kubeloop.example/#k1:q1aqVLJSys7MS7FSCMhPiclTqgUA";
        let s = Shared {
            text: "kind: Pod\n".into(),
            ..Default::default()
        };
        assert_eq!(decode(frozen), Ok(Link::Scenario(s)));
    }

    #[test]
    fn example_links_name_the_example() {
        assert_eq!(
            decode("#example/node-failure"),
            Ok(Link::Example("node-failure".into()))
        );
    }

    #[test]
    fn a_truncated_link_says_it_looks_incomplete() {
        let frag = encode(&Shared {
            text: "x".repeat(500),
            ..Default::default()
        });
        let cut = &frag[..frag.len() - 7];
        assert!(matches!(decode(cut), Err(ShareError::Incomplete(_))));
    }

    #[test]
    fn a_decompression_bomb_is_refused() {
        let bomb = miniz_oxide::deflate::compress_to_vec(&vec![b'a'; 64 << 20], 9);
        let link = format!("k1:{}", base64url_encode(&bomb));
        assert!(link.len() < 200_000);
        assert!(matches!(decode(&link), Err(ShareError::TooLarge(_))));
    }

    #[test]
    fn links_from_newer_versions_are_refused_with_a_reason() {
        assert!(matches!(
            decode("k9:abc"),
            Err(ShareError::UnknownVersion(_))
        ));
        assert!(matches!(
            decode("https://example.com/"),
            Err(ShareError::NotALink(_))
        ));
    }

    proptest! {
        #[test]
        fn base64url_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(base64url_decode(&base64url_encode(&bytes)).unwrap(), bytes);
        }

        #[test]
        fn any_scenario_text_round_trips(text in ".{0,400}", seed in proptest::option::of(any::<u64>())) {
            let s = Shared { text, seed, view: None, speed: None };
            prop_assert_eq!(decode(&encode(&s)), Ok(Link::Scenario(s)));
        }

        #[test]
        fn garbage_never_panics(s in ".{0,200}") {
            let _ = decode(&s);
            let _ = decode(&format!("k1:{s}"));
        }
    }
}
