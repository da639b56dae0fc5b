//! Share links: the whole scenario in the URL fragment, compressed, base64url-encoded, versioned.
//!
//! The fragment never reaches a server. Format `#k1:<base64url(deflate(JSON))>`; the JSON leaves
//! defaults out so typical links stay short. Format 2 (`#k2:`) is the same JSON with a run in it
//! ([`RunLink`]): how the run started, the learner's actions each at its moment, and the moment
//! shown, which the simulation's determinism replays exactly ([`crate::sim::run`]). Every version ever issued keeps decoding: a link in a
//! course page must open for years. Decoding is hostile-input safe: the fragment length and the
//! inflated size are capped, and every failure is a friendly message, never a panic.

use serde::{Deserialize, Serialize};

/// The newest format version this build writes (format 1 for a link without a run, which any
/// build since the first opens).
pub const CURRENT_VERSION: u32 = 2;
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
    /// The run to replay (format 2); without one, the text opens at t=0.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunLink>,
}

/// A run as a link carries it: its start, the learner's actions and the moment it shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunLink {
    /// The scenario text the run was opened from (as the editor's file, `playground.yaml`);
    /// absent: the empty playground (three nodes).
    #[serde(rename = "b", default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The seed the run used.
    #[serde(rename = "s")]
    pub seed: u64,
    /// The learner's actions in order, each in [`crate::sim::run::Entry`]'s compact form.
    #[serde(rename = "a", default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<serde_json::Value>,
    /// Whether each action's moment is written as the distance from the one before (the first
    /// from the run's start), which keeps an hour of clicking short: small numbers, and the
    /// same ones again, which deflate well. Links made before this field have absolute moments.
    #[serde(rename = "d", default, skip_serializing_if = "std::ops::Not::not")]
    pub delta: bool,
    /// The moment shown: simulated milliseconds and events processed.
    #[serde(rename = "m")]
    pub at: [u64; 2],
    /// The version of the simulation that made the run ([`crate::sim::run::SIM_VERSION`]).
    #[serde(rename = "w")]
    pub version: String,
}

impl RunLink {
    /// A session's run as a link carries it: its start, its journal and its moment.
    pub fn of(session: &crate::sim::session::Session) -> RunLink {
        let at = session.moment();
        let mut before = crate::sim::run::Moment::default();
        let actions = session
            .actions()
            .iter()
            .map(|e| {
                let mut relative = e.clone();
                relative.at = crate::sim::run::Moment {
                    time: e.at.time.saturating_sub(before.time),
                    events: e.at.events.saturating_sub(before.events),
                };
                before = e.at;
                relative.to_json()
            })
            .collect();
        RunLink {
            base: session.origin().map(str::to_string),
            seed: session.sim.config().seed,
            actions,
            delta: true,
            at: [at.time, at.events],
            version: crate::sim::run::SIM_VERSION.to_string(),
        }
    }

    /// The actions, read back, each at its moment of the run; `Err` names the first one this
    /// build cannot read.
    pub fn entries(&self) -> Result<Vec<crate::sim::run::Entry>, String> {
        let mut before = crate::sim::run::Moment::default();
        self.actions
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let unreadable = || format!("this link's action {} cannot be read", i + 1);
                let mut e = crate::sim::run::Entry::from_json(v).ok_or_else(unreadable)?;
                if self.delta {
                    e.at = crate::sim::run::Moment {
                        time: before.time.checked_add(e.at.time).ok_or_else(unreadable)?,
                        events: before
                            .events
                            .checked_add(e.at.events)
                            .ok_or_else(unreadable)?,
                    };
                    before = e.at;
                }
                Ok(e)
            })
            .collect()
    }

    /// The moment shown.
    pub fn moment(&self) -> crate::sim::run::Moment {
        crate::sim::run::Moment {
            time: self.at[0],
            events: self.at[1],
        }
    }
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
    let version = if shared.run.is_some() { 2 } else { 1 };
    format!("k{version}:{}", base64url_encode(&deflated))
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
        // Format 2 adds the run to format 1's JSON; a format-1 link never has one.
        1 => decode_json(data)
            .map(|s| Shared { run: None, ..s })
            .map(Link::Scenario),
        2 => decode_json(data).map(Link::Scenario),
        v => Err(ShareError::UnknownVersion(format!(
            "This link was made by a newer version of Kubeloop (format {v}; this one reads up to {CURRENT_VERSION}). Reload the page to get the newest version."
        ))),
    }
}

fn incomplete() -> ShareError {
    ShareError::Incomplete("This link looks incomplete — it may have been cut off when it was copied. Nothing was changed; your own scenario is still here.".into())
}

fn decode_json(data: &str) -> Result<Shared, ShareError> {
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
            speed: Some(2.0),
            ..Default::default()
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
    fn a_run_travels_in_format_2_and_format_1_stays_for_links_without_one() {
        let run = RunLink {
            seed: 3,
            actions: vec![serde_json::json!([1200, 40, "k", "get pods"])],
            at: [120_000, 900],
            version: "0.1.0".into(),
            ..Default::default()
        };
        let s = Shared {
            text: "kind: Pod\n".into(),
            run: Some(run.clone()),
            ..Default::default()
        };
        let frag = encode(&s);
        assert!(frag.starts_with("k2:"), "{frag}");
        assert_eq!(decode(&frag), Ok(Link::Scenario(s)));
        assert_eq!(run.moment().time, 120_000);
        assert_eq!(run.entries().unwrap()[0].at.events, 40);
        let without = Shared {
            text: "kind: Pod\n".into(),
            ..Default::default()
        };
        assert!(encode(&without).starts_with("k1:"));
    }

    #[test]
    fn a_runs_moments_travel_as_distances_and_read_back_as_the_runs_own() {
        let mut session = crate::sim::session::Session::new(4);
        session.advance_to(12_000, usize::MAX);
        session.kubectl("cordon node-1");
        session.advance_to(30_000, usize::MAX);
        session.kubectl("uncordon node-1");
        let run = RunLink::of(&session);
        assert!(run.delta);
        assert_eq!(run.entries().as_deref(), Ok(session.actions()));
        let second = crate::sim::run::Entry::from_json(&run.actions[1]).unwrap();
        assert_eq!(second.at.time, 18_000, "the distance from the first action");
        let frag = encode(&Shared {
            run: Some(run.clone()),
            ..Default::default()
        });
        assert_eq!(
            decode(&frag),
            Ok(Link::Scenario(Shared {
                run: Some(run),
                ..Default::default()
            }))
        );
    }

    #[test]
    fn a_distance_that_overflows_the_clock_is_an_action_that_cannot_be_read() {
        let run = RunLink {
            seed: 1,
            actions: vec![
                serde_json::json!([u64::MAX, 1, "k", "get pods"]),
                serde_json::json!([1, 1, "k", "get pods"]),
            ],
            delta: true,
            ..Default::default()
        };
        assert_eq!(
            run.entries(),
            Err("this link's action 2 cannot be read".to_string())
        );
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
            let s = Shared { text, seed, ..Default::default() };
            prop_assert_eq!(decode(&encode(&s)), Ok(Link::Scenario(s)));
        }

        #[test]
        fn garbage_never_panics(s in ".{0,200}") {
            let _ = decode(&s);
            let _ = decode(&format!("k1:{s}"));
        }
    }
}
