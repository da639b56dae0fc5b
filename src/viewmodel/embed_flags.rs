//! The playground's URL settings for share links and embedding, parsed without a browser.
//!
//! Content (the scenario) travels in the fragment (`#k1:…`, `#example/<name>`, see
//! [`crate::sim::share`]); settings that are not content travel in the query string, as
//! StackBlitz and the TypeScript playground do:
//!
//! | flag | meaning |
//! |---|---|
//! | `embed=1` | compact layout for an iframe: never rewrites its URL, never writes localStorage |
//! | `view=editor,cluster,events` | which panels show (see [`Panel`]: editor, lesson, cluster, loops, events, timeline, sequence, ownership, chart, console); the first activity tab listed is selected |
//! | `readonly=1` | the editor cannot be edited (Apply still applies what it shows) |
//! | `autoplay=1` | the clock starts running as soon as the playground is loaded |
//! | `speed=10` | simulated seconds per real second (0.01–1000) |
//! | `theme=light\|dark\|auto` | colours; `auto` follows the reader's system |
//! | `ctl=1` or `load=click` | click to load: nothing is built or run until the reader clicks |
//! | `faults=0` | hides the fault panel |
//! | `origins=https://a.example,https://b.example` | the only host pages that may drive the embed |
//! | `seed=N` | a seed overriding the scenario's |
//!
//! Unknown values are reported in [`Flags::warnings`] (shown in the console) and otherwise
//! ignored: a typo in a course page must not break the embed.

use crate::sort::StableSort;

/// One panel of the page (`view=` names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Panel {
    /// The YAML editor.
    Editor,
    /// The lesson card (description, "try this" actions, checks) of a built-in lesson.
    Lesson,
    /// Nodes and pods.
    Cluster,
    /// The reconcile-loop cards.
    Loops,
    /// Activity tab: the Events list.
    Events,
    /// Activity tab: each fault, what it hit, and when the system recovered.
    Timeline,
    /// Activity tab: the API conversation (sequence diagram).
    Sequence,
    /// Activity tab: the ownership tree.
    Ownership,
    /// Activity tab: desired vs ready over time.
    Chart,
    /// Activity tab: kubectl.
    Console,
}

impl Panel {
    /// Every panel, in page order.
    pub const ALL: [Panel; 10] = [
        Panel::Editor,
        Panel::Lesson,
        Panel::Cluster,
        Panel::Loops,
        Panel::Events,
        Panel::Timeline,
        Panel::Sequence,
        Panel::Ownership,
        Panel::Chart,
        Panel::Console,
    ];

    /// The `view=` word (and, for tabs, the `tab-<word>` test id the page uses).
    pub fn as_str(self) -> &'static str {
        match self {
            Panel::Editor => "editor",
            Panel::Lesson => "lesson",
            Panel::Cluster => "cluster",
            Panel::Loops => "loops",
            Panel::Events => "events",
            Panel::Timeline => "timeline",
            Panel::Sequence => "sequence",
            Panel::Ownership => "ownership",
            Panel::Chart => "chart",
            Panel::Console => "console",
        }
    }

    /// Reads a `view=` word; a few synonyms are accepted (`yaml`, `nodes`, `kubectl`, …).
    pub fn parse(word: &str) -> Option<Panel> {
        Some(match word.trim().to_ascii_lowercase().as_str() {
            "editor" | "yaml" | "spec" => Panel::Editor,
            "lesson" | "guide" | "description" => Panel::Lesson,
            "cluster" | "nodes" | "pods" => Panel::Cluster,
            "loops" | "loop" | "controllers" => Panel::Loops,
            "events" => Panel::Events,
            "timeline" | "incidents" => Panel::Timeline,
            "sequence" | "api" | "conversation" => Panel::Sequence,
            "ownership" | "owners" => Panel::Ownership,
            "chart" => Panel::Chart,
            "console" | "kubectl" => Panel::Console,
            _ => return None,
        })
    }

    /// True for the panels shown as tabs of the activity panel.
    pub fn is_tab(self) -> bool {
        !matches!(
            self,
            Panel::Editor | Panel::Lesson | Panel::Cluster | Panel::Loops
        )
    }
}

/// Colours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    /// Follow the reader's system (`prefers-color-scheme`).
    #[default]
    Auto,
    Light,
    Dark,
}

impl Theme {
    /// The `theme=` word.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// The slowest and fastest speed a flag may ask for (the toolbar offers a subset).
pub const SPEED_RANGE: (f64, f64) = (0.01, 1000.0);

/// What an embed shows when the page gave no `view=`: the editor (and a lesson's card), the
/// cluster and the events.
pub const DEFAULT_EMBED_VIEW: [Panel; 4] =
    [Panel::Editor, Panel::Lesson, Panel::Cluster, Panel::Events];

/// Every setting the query string can carry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flags {
    pub embed: bool,
    /// The panels to show, in the order given; None when the page did not choose.
    pub view: Option<Vec<Panel>>,
    pub readonly: bool,
    pub autoplay: bool,
    pub speed: Option<f64>,
    pub theme: Theme,
    pub click_to_load: bool,
    /// Whether the fault panel is offered (`faults=0` hides it).
    pub faults: bool,
    /// Host origins allowed to drive the embed (`scheme://host[:port]`); empty means any host
    /// may complete the handshake (and is then the only one answered).
    pub origins: Vec<String>,
    pub seed: Option<u64>,
    /// Problems with the flags, for the console.
    pub warnings: Vec<String>,
}

/// Query parameters that only make sense inside an iframe: dropped from "Open in Kubeloop" links.
pub const EMBED_ONLY_PARAMS: &[&str] = &[
    "embed", "view", "readonly", "autoplay", "speed", "theme", "ctl", "load", "faults", "origins",
];

/// Decodes `%XX` escapes and `+` (as spaces), as `URLSearchParams` does; invalid escapes stay as
/// they are, and the result is UTF-8 with replacement characters where the bytes were not.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query string's pairs (`?a=1&b=2`, leading `?` optional), decoded, in order.
pub fn query_pairs(search: &str) -> Vec<(String, String)> {
    search
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn truthy(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Reads `view=`: panel words separated by commas, spaces or `+`. Unknown words are reported.
pub fn parse_view(s: &str) -> (Vec<Panel>, Vec<String>) {
    let mut panels = Vec::new();
    let mut unknown = Vec::new();
    for w in s
        .split([',', ' ', '+', '|'])
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        match Panel::parse(w) {
            Some(p) if !panels.contains(&p) => panels.push(p),
            Some(_) => {}
            None => unknown.push(w.chars().take(40).collect()),
        }
    }
    (panels, unknown)
}

/// The panels as a space-separated list (for a `data-` attribute matched with `~=` in CSS).
pub fn view_attr(panels: &[Panel]) -> String {
    let mut sorted: Vec<Panel> = panels.to_vec();
    sorted.stable_sort();
    sorted
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `view=` string for a list of panels (comma-separated, in the order given).
pub fn view_param(panels: &[Panel]) -> String {
    panels
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The activity tab to select: the first tab listed.
pub fn first_tab(panels: &[Panel]) -> Option<Panel> {
    panels.iter().copied().find(|p| p.is_tab())
}

/// `scheme://host[:port]` in lower case when `s` is a web origin (http or https, no path, query,
/// fragment or user info), else None. A trailing `/` is tolerated.
pub fn normalize_origin(s: &str) -> Option<String> {
    let s = s.trim();
    let s = s.strip_suffix('/').unwrap_or(s);
    let (scheme, rest) = s.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    if rest.is_empty() || rest.contains(['/', '?', '#', '@', ' ', '\\']) {
        return None;
    }
    let (host, port) = match rest.rsplit_once(':') {
        // An IPv6 literal without a port: `[::1]`.
        Some((h, p)) if !p.contains(']') => (h, Some(p)),
        _ => (rest, None),
    };
    if host.is_empty()
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':'))
    {
        return None;
    }
    let port = match port {
        None => String::new(),
        Some(p) => {
            let n: u16 = p.parse().ok()?;
            let default = (scheme == "http" && n == 80) || (scheme == "https" && n == 443);
            if default {
                String::new()
            } else {
                format!(":{n}")
            }
        }
    };
    Some(format!("{scheme}://{}{port}", host.to_ascii_lowercase()))
}

/// Reads the query string (`location.search`).
pub fn parse_query(search: &str) -> Flags {
    let mut f = Flags {
        faults: true,
        ..Flags::default()
    };
    let warn = |f: &mut Flags, m: String| f.warnings.push(m);
    for (k, v) in query_pairs(search) {
        match k.as_str() {
            "embed" => match truthy(&v) {
                Some(b) => f.embed = b,
                None => warn(&mut f, format!("embed={v}: expected 1 or 0")),
            },
            "view" => {
                let (panels, unknown) = parse_view(&v);
                for u in unknown {
                    warn(&mut f, format!("view: unknown panel \"{u}\" (known: editor, lesson, cluster, loops, events, timeline, sequence, ownership, chart, console)"));
                }
                if !panels.is_empty() {
                    f.view = Some(panels);
                }
            }
            "readonly" => f.readonly = truthy(&v).unwrap_or(false),
            "autoplay" => f.autoplay = truthy(&v).unwrap_or(false),
            "speed" => match v.trim().trim_end_matches('x').parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 => {
                    f.speed = Some(s.clamp(SPEED_RANGE.0, SPEED_RANGE.1))
                }
                _ => warn(&mut f, format!("speed={v}: expected a positive number")),
            },
            "theme" => match v.trim().to_ascii_lowercase().as_str() {
                "light" => f.theme = Theme::Light,
                "dark" => f.theme = Theme::Dark,
                "auto" | "" | "system" => f.theme = Theme::Auto,
                _ => warn(&mut f, format!("theme={v}: expected light, dark or auto")),
            },
            "ctl" => f.click_to_load = truthy(&v).unwrap_or(false),
            "load" => match v.trim().to_ascii_lowercase().as_str() {
                "click" => f.click_to_load = true,
                "eager" | "lazy" | "" => f.click_to_load = false,
                _ => warn(&mut f, format!("load={v}: expected click or eager")),
            },
            "faults" => f.faults = truthy(&v).unwrap_or(true),
            "origins" => {
                for o in v.split([',', ' ']).filter(|o| !o.trim().is_empty()) {
                    match normalize_origin(o) {
                        Some(n) if !f.origins.contains(&n) => f.origins.push(n),
                        Some(_) => {}
                        None => warn(
                            &mut f,
                            format!(
                                "origins: \"{}\" is not an origin such as https://course.example",
                                o.chars().take(80).collect::<String>()
                            ),
                        ),
                    }
                }
            }
            "seed" => match v.trim().parse::<u64>() {
                Ok(s) => f.seed = Some(s),
                Err(_) => warn(&mut f, format!("seed={v}: expected a whole number")),
            },
            _ => {}
        }
    }
    f
}

impl Flags {
    /// The panels to show: the page's choice, or every panel outside an embed and
    /// [`DEFAULT_EMBED_VIEW`] inside one.
    pub fn panels(&self) -> Vec<Panel> {
        match &self.view {
            Some(v) => v.clone(),
            None if self.embed => DEFAULT_EMBED_VIEW.to_vec(),
            None => Panel::ALL.to_vec(),
        }
    }

    /// Whether a host page at `origin` may complete the handshake.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        if self.origins.is_empty() {
            // Any web origin; never an opaque one ("null": sandboxed frames, file: pages).
            return normalize_origin(origin).is_some();
        }
        normalize_origin(origin).is_some_and(|o| self.origins.contains(&o))
    }
}

/// The full playground's address for `href` (the current page, embed or not) with `fragment`
/// (without `#`): the iframe-only query parameters and the old fragment are dropped, anything
/// else (`seed=`, a path under a sub-path deployment) is kept.
pub fn playground_url(href: &str, fragment: &str) -> String {
    let no_hash = href.split('#').next().unwrap_or(href);
    let (path, query) = match no_hash.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (no_hash, None),
    };
    let kept: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| {
            let k = p.split_once('=').map_or(*p, |(k, _)| k);
            !EMBED_ONLY_PARAMS.contains(&percent_decode(k).as_str())
        })
        .collect();
    let mut url = path.to_string();
    if !kept.is_empty() {
        url.push('?');
        url.push_str(&kept.join("&"));
    }
    if !fragment.is_empty() {
        url.push('#');
        url.push_str(fragment);
    }
    url
}

/// The page's address without its fragment (the base of a share link).
pub fn without_fragment(href: &str) -> &str {
    href.split('#').next().unwrap_or(href)
}

/// The fragment of a URL as `location.hash` gives it: from the `#` on, or empty.
pub fn fragment_of(href: &str) -> &str {
    href.find('#').map_or("", |i| &href[i..])
}

/// Whether the page may write the editor's link into the address bar, which it last left
/// showing `written` and which shows `now`: not while they differ, because then the reader (or a
/// course page) navigated to another link whose `hashchange` has not been handled yet, and
/// overwriting it would make that handler open the editor's own link instead.
pub fn may_rewrite_address_bar(written: &str, now: &str) -> bool {
    written == now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_never_overwrites_a_link_navigated_to_and_not_yet_opened() {
        assert!(may_rewrite_address_bar("#k1:mine", "#k1:mine"));
        assert!(may_rewrite_address_bar("", ""));
        assert!(!may_rewrite_address_bar("#k1:mine", "#k9:AAAA"));
        assert!(!may_rewrite_address_bar("", "#example/node-dies"));
        assert_eq!(fragment_of("http://127.0.0.1:8080/#k9:AAAA"), "#k9:AAAA");
        assert_eq!(fragment_of("http://127.0.0.1:8080/?embed=1"), "");
        assert_eq!(fragment_of("http://h/#a#b"), "#a#b");
    }

    #[test]
    fn no_query_means_the_full_playground() {
        let f = parse_query("");
        assert!(!f.embed && !f.readonly && !f.autoplay && !f.click_to_load);
        assert!(f.faults);
        assert_eq!(f.theme, Theme::Auto);
        assert_eq!(f.panels(), Panel::ALL.to_vec());
        assert!(f.warnings.is_empty());
    }

    #[test]
    fn every_embed_flag_is_read() {
        let f = parse_query("?embed=1&view=cluster,events&readonly=1&autoplay=true&speed=10&theme=dark&ctl=1&faults=0&seed=7");
        assert!(f.embed && f.readonly && f.autoplay && f.click_to_load);
        assert!(!f.faults);
        assert_eq!(f.view, Some(vec![Panel::Cluster, Panel::Events]));
        assert_eq!(f.speed, Some(10.0));
        assert_eq!(f.theme, Theme::Dark);
        assert_eq!(f.seed, Some(7));
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn load_click_is_click_to_load_and_an_embed_defaults_to_editor_cluster_events() {
        let f = parse_query("embed=1&load=click");
        assert!(f.click_to_load);
        assert_eq!(f.panels(), DEFAULT_EMBED_VIEW.to_vec());
        assert!(!parse_query("embed=1&load=eager").click_to_load);
    }

    #[test]
    fn bad_values_are_warned_about_and_ignored() {
        let f =
            parse_query("embed=maybe&speed=fast&theme=purple&view=editor,bogus&seed=-1&speed=-3");
        assert!(!f.embed);
        assert_eq!(f.speed, None);
        assert_eq!(f.theme, Theme::Auto);
        assert_eq!(f.view, Some(vec![Panel::Editor]));
        assert_eq!(f.seed, None);
        assert_eq!(f.warnings.len(), 6, "{:#?}", f.warnings);
        assert!(f.warnings.iter().any(|w| w.contains("\"bogus\"")));
    }

    #[test]
    fn speeds_are_clamped_and_may_end_in_x() {
        assert_eq!(parse_query("speed=5x").speed, Some(5.0));
        assert_eq!(parse_query("speed=1e9").speed, Some(1000.0));
        assert_eq!(parse_query("speed=0.0001").speed, Some(0.01));
        assert_eq!(parse_query("speed=NaN").speed, None);
        assert_eq!(parse_query("speed=inf").speed, None);
    }

    #[test]
    fn views_accept_synonyms_separators_and_drop_duplicates() {
        let (p, unknown) = parse_view("yaml+nodes kubectl,editor guide");
        assert_eq!(
            p,
            vec![Panel::Editor, Panel::Cluster, Panel::Console, Panel::Lesson]
        );
        assert!(unknown.is_empty());
        assert_eq!(view_attr(&[Panel::Events, Panel::Editor]), "editor events");
        assert_eq!(view_param(&[Panel::Events, Panel::Editor]), "events,editor");
        assert_eq!(
            first_tab(&[Panel::Editor, Panel::Chart, Panel::Events]),
            Some(Panel::Chart)
        );
        assert_eq!(first_tab(&[Panel::Editor, Panel::Cluster]), None);
        let f = parse_query("view=%20");
        assert_eq!(f.view, None, "an empty view keeps the default");
    }

    #[test]
    fn the_fault_timeline_is_an_activity_tab_with_its_own_view_word() {
        let (p, unknown) = parse_view("cluster,timeline");
        assert_eq!(p, vec![Panel::Cluster, Panel::Timeline]);
        assert!(unknown.is_empty());
        assert_eq!(first_tab(&p), Some(Panel::Timeline));
        assert_eq!(Panel::parse("incidents"), Some(Panel::Timeline));
        assert_eq!(Panel::Timeline.as_str(), "timeline");
    }

    #[test]
    fn percent_decoding_matches_url_search_params() {
        assert_eq!(percent_decode("a%2Cb+c"), "a,b c");
        assert_eq!(percent_decode("%E2%9C%93"), "✓");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%FF"), "\u{FFFD}");
    }

    #[test]
    fn origins_are_normalised_and_checked_exactly() {
        assert_eq!(
            normalize_origin("HTTPS://Course.Example/"),
            Some("https://course.example".into())
        );
        assert_eq!(
            normalize_origin("https://a.example:443"),
            Some("https://a.example".into())
        );
        assert_eq!(
            normalize_origin("http://127.0.0.1:8080"),
            Some("http://127.0.0.1:8080".into())
        );
        assert_eq!(
            normalize_origin("http://[::1]:3000"),
            Some("http://[::1]:3000".into())
        );
        for bad in [
            "null",
            "",
            "file:///x",
            "https://a.example/path",
            "https://u@a.example",
            "javascript:alert(1)",
            "https://a.example:99999",
            "https://",
        ] {
            assert_eq!(normalize_origin(bad), None, "{bad}");
        }
        let f = parse_query("origins=https%3A%2F%2Fcourse.example,http://127.0.0.1:8080,nonsense");
        assert_eq!(
            f.origins,
            vec!["https://course.example", "http://127.0.0.1:8080"]
        );
        assert_eq!(f.warnings.len(), 1);
        assert!(f.origin_allowed("https://course.example"));
        assert!(f.origin_allowed("http://127.0.0.1:8080"));
        assert!(!f.origin_allowed("http://127.0.0.1:8081"));
        assert!(!f.origin_allowed("https://course.example.evil.test"));
        assert!(!f.origin_allowed("null"));
        let open = parse_query("embed=1");
        assert!(open.origin_allowed("https://anyone.example"));
        assert!(
            !open.origin_allowed("null"),
            "opaque origins never drive an embed"
        );
    }

    #[test]
    fn the_full_playground_link_drops_iframe_flags_and_keeps_the_rest() {
        assert_eq!(
            playground_url("https://x.test/kubeloop/index.html?embed=1&view=cluster&seed=4&readonly=1#example/thermostat", "k1:abc"),
            "https://x.test/kubeloop/index.html?seed=4#k1:abc"
        );
        assert_eq!(
            playground_url("http://h/?embed=1&ctl=1", "k1:x"),
            "http://h/#k1:x"
        );
        assert_eq!(playground_url("http://h/", ""), "http://h/");
        assert_eq!(without_fragment("http://h/a?b=1#k1:zz"), "http://h/a?b=1");
    }
}
