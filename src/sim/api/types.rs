//! The Kubernetes object types the simulation stores, serde-shaped exactly as the API serves them.
//!
//! Field names follow the Kubernetes API verbatim (camelCase on the wire, snake_case in Rust).
//! Fields Kubernetes defines but the simulation does not act on are kept as opaque JSON so that
//! real manifests load, round-trip through `-o yaml`, and can be reported as "not simulated".

use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::apiextensions::CRD_API_VERSION;
pub use super::apiextensions::{CustomKind, CustomObject, CustomResourceDefinition};

/// Simulated time in milliseconds since the simulation started.
pub type Millis = u64;

pub use super::shared_str::Str;
/// Labels, annotations, selectors and resource lists: ordered so that everything observable is
/// deterministic, and compact (see [`super::string_map`]).
pub use super::string_map::{cmp_bytes, StringMap};

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

/// A timestamp on an object: simulated milliseconds, printed as RFC 3339 from a fixed epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub Millis);

/// The wall-clock instant simulated time zero maps to, so timestamps look like a real cluster's.
pub const EPOCH_UNIX_SECONDS: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

/// The last millisecond whose RFC 3339 form has a four-digit year (9999-12-31T23:59:59.999Z):
/// later times do not survive a JSON round trip.
pub const LAST_FOUR_DIGIT_YEAR: Millis = (253_402_300_799 - EPOCH_UNIX_SECONDS as u64) * 1000 + 999;

/// `v1.LastAppliedConfigAnnotation`: where `kubectl apply` keeps the manifest it last applied,
/// for its three-way merge.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// `metav1.FinalizerDeleteDependents`: holds an owner until its blocking dependents are deleted.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
/// `metav1.FinalizerOrphanDependents`: holds an owner until its dependents are orphaned.
pub const ORPHAN_FINALIZER: &str = "orphan";

impl Time {
    /// RFC 3339 with second precision, as Kubernetes serialises `metav1.Time`.
    pub fn to_rfc3339(self) -> String {
        match self.rfc3339_bytes() {
            Some(b) => String::from_utf8_lossy(&b).into_owned(),
            None => self.to_rfc3339_slow(),
        }
    }

    /// [`Time::to_rfc3339`] into a fixed buffer, without allocating (every object write
    /// serialises several times): None for years past 9999, which need more digits.
    fn rfc3339_bytes(self) -> Option<[u8; 20]> {
        let secs = EPOCH_UNIX_SECONDS + (self.0 / 1000) as i64;
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        if !(0..=9999).contains(&y) {
            return None;
        }
        let mut b = *b"0000-00-00T00:00:00Z";
        let mut put = |at: usize, v: u64, width: usize| {
            let mut v = v;
            for i in (0..width).rev() {
                b[at + i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        put(0, y as u64, 4);
        put(5, m as u64, 2);
        put(8, d as u64, 2);
        put(11, (rem / 3600) as u64, 2);
        put(14, ((rem % 3600) / 60) as u64, 2);
        put(17, (rem % 60) as u64, 2);
        Some(b)
    }

    fn to_rfc3339_slow(self) -> String {
        let secs = EPOCH_UNIX_SECONDS + (self.0 / 1000) as i64;
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            (rem % 3600) / 60,
            rem % 60
        )
    }

    /// Parses the RFC 3339 form written by [`Time::to_rfc3339`] (and fractional seconds).
    pub fn parse_rfc3339(s: &str) -> Option<Time> {
        let b = s.as_bytes();
        if b.len() < 20 {
            return None;
        }
        let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let mut millis = 0i64;
        if b.get(19) == Some(&b'.') {
            let frac: String = s[20..].chars().take_while(|c| c.is_ascii_digit()).collect();
            let padded = format!("{frac:0<3}");
            millis = padded.get(0..3)?.parse().ok()?;
        }
        let days = days_from_civil(y, mo, d);
        let unix = days * 86_400 + h * 3600 + mi * 60 + se;
        let ms = (unix - EPOCH_UNIX_SECONDS) * 1000 + millis;
        if ms < 0 {
            Some(Time(0))
        } else {
            Some(Time(ms as u64))
        }
    }
}

/// (year, month, day) of a day count since 1970-01-01, proleptic Gregorian (Howard Hinnant's
/// civil-from-days algorithm; avoids a date-time dependency for one conversion).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of [`civil_from_days`]).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

impl Serialize for Time {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.rfc3339_bytes() {
            Some(b) => s.serialize_str(std::str::from_utf8(&b).unwrap_or_default()),
            None => s.serialize_str(&self.to_rfc3339_slow()),
        }
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Time::parse_rfc3339(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse"
            ))
        })
    }
}

/// An int or a percentage string, as used by maxSurge, maxUnavailable and minAvailable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IntOrString {
    Int(i64),
    String(String),
}

impl Default for IntOrString {
    fn default() -> Self {
        IntOrString::Int(0)
    }
}

impl IntOrString {
    /// Resolves against a total the way `intstr.GetScaledValueFromIntOrPercent` does.
    pub fn scaled_value(&self, total: i64, round_up: bool) -> Result<i64, String> {
        match self {
            IntOrString::Int(i) => Ok(*i),
            IntOrString::String(s) => {
                let pct = s
                    .strip_suffix('%')
                    .and_then(|p| p.parse::<i64>().ok())
                    .ok_or_else(|| format!("invalid value for IntOrString: invalid type: string is not a percentage: {s:?}"))?;
                let v = pct * total;
                Ok(if round_up {
                    (v + 99).div_euclid(100)
                } else {
                    v.div_euclid(100)
                })
            }
        }
    }
}

/// Identifies the owner of an object; the garbage collector and ControllerRef logic follow these.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    pub api_version: Str,
    pub kind: Str,
    pub name: Str,
    pub uid: Str,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// Metadata every object carries; the API server owns uid, resourceVersion, generation and timestamps.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub name: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub generate_name: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub namespace: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub uid: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub resource_version: Str,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub generation: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub labels: StringMap,
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub annotations: StringMap,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Vec<OwnerReference>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    /// Accepted for compatibility with real manifests; not simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields: Option<Box<Json>>,
}

impl ObjectMeta {
    /// The owner reference with `controller: true`, if any (at most one is allowed).
    pub fn controller_ref(&self) -> Option<&OwnerReference> {
        self.owner_references
            .iter()
            .find(|r| r.controller == Some(true))
    }

    /// The resourceVersion as the integer the simulated store counts in.
    pub fn rv(&self) -> u64 {
        self.resource_version.parse().unwrap_or(0)
    }
}

/// A label selector; `matchExpressions` supports In, NotIn, Exists and DoesNotExist.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub match_labels: StringMap,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One requirement of a [`LabelSelector`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl LabelSelector {
    /// Parses a selector as kubectl and faults write it (`app=web,tier!=db,env in (a,b),!x,y`).
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut sel = LabelSelector::default();
        let mut parts = Vec::new();
        let mut depth = 0;
        let mut cur = String::new();
        for ch in s.chars() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(ch);
        }
        parts.push(cur);
        for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
            let set_op = |op: &str| -> Option<(String, Vec<String>)> {
                let idx = p.find(&format!(" {op} "))?;
                let key = p[..idx].trim().to_string();
                let rest = p[idx + op.len() + 2..].trim();
                let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
                Some((
                    key,
                    inner
                        .split(',')
                        .map(|v| v.trim().to_string())
                        .filter(|v| !v.is_empty())
                        .collect(),
                ))
            };
            if let Some((key, values)) = set_op("notin") {
                sel.match_expressions.push(LabelSelectorRequirement {
                    key,
                    operator: "NotIn".into(),
                    values,
                });
            } else if let Some((key, values)) = set_op("in") {
                sel.match_expressions.push(LabelSelectorRequirement {
                    key,
                    operator: "In".into(),
                    values,
                });
            } else if let Some((k, v)) = p.split_once("!=") {
                sel.match_expressions.push(LabelSelectorRequirement {
                    key: k.trim().into(),
                    operator: "NotIn".into(),
                    values: vec![v.trim().into()],
                });
            } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
                sel.match_labels.insert(k.trim(), v.trim());
            } else if let Some(k) = p.strip_prefix('!') {
                sel.match_expressions.push(LabelSelectorRequirement {
                    key: k.trim().into(),
                    operator: "DoesNotExist".into(),
                    values: vec![],
                });
            } else if p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
            {
                sel.match_expressions.push(LabelSelectorRequirement {
                    key: p.into(),
                    operator: "Exists".into(),
                    values: vec![],
                });
            } else {
                return Err(format!("unable to parse requirement: {p:?}"));
            }
        }
        Ok(sel)
    }

    /// True when the selector has no requirements, which selects everything.
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Whether a label set satisfies every requirement, as `metav1.LabelSelectorAsSelector` does.
    pub fn matches(&self, labels: &StringMap) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|e| {
                let got = labels.get(&e.key);
                match e.operator.as_str() {
                    "In" => got.is_some_and(|g| e.values.iter().any(|v| v == g)),
                    "NotIn" => got.is_none_or(|g| !e.values.iter().any(|v| v == g)),
                    "Exists" => got.is_some(),
                    "DoesNotExist" => got.is_none(),
                    _ => false,
                }
            })
    }

    /// The selector as `kubectl` prints it, e.g. `app=web,tier in (a,b)`.
    pub fn to_selector_string(&self) -> String {
        let mut parts: Vec<String> = self
            .match_labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for e in &self.match_expressions {
            parts.push(match e.operator.as_str() {
                "In" => format!("{} in ({})", e.key, e.values.join(",")),
                "NotIn" => format!("{} notin ({})", e.key, e.values.join(",")),
                "Exists" => e.key.clone(),
                _ => format!("!{}", e.key),
            });
        }
        parts.join(",")
    }
}

/// Whether a plain map selector (Services, nodeSelector) matches a label set.
pub fn map_selector_matches(selector: &StringMap, labels: &StringMap) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

// ---------------------------------------------------------------- Pods

/// Resource requests and limits; quantities stay strings as in the API and are parsed on use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequirements {
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub requests: StringMap,
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub limits: StringMap,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<Box<Json>>,
}

/// An HTTP GET probe action; the simulated app answers it according to its behaviour.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpGetAction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub port: IntOrString,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_headers: Option<Box<Json>>,
}

/// A readiness, liveness or startup probe with Kubernetes' timing fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HttpGetAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_delay_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_threshold: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_threshold: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

/// A container port; hostPort takes part in scheduling (NodePorts).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    pub container_port: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_port: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(rename = "hostIP", default, skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<String>,
}

/// A container in a pod template; fields the simulation ignores are kept opaque.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub name: Str,
    #[serde(default)]
    pub image: Str,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<Str>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ContainerPort>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_probe: Option<Box<Probe>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness_probe: Option<Box<Probe>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_probe: Option<Box<Probe>>,
    /// Only meaningful on init containers: `Always` makes a sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<Str>,
    // Accepted but not simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_from: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mounts: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_devices: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_message_path: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_message_policy: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin_once: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize_policy: Option<Box<Json>>,
}

/// A toleration; matches taints as `v1.Toleration.ToleratesTaint` does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

impl Toleration {
    /// Whether this toleration tolerates the taint (empty key with Exists tolerates everything).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if let Some(effect) = self.effect.as_deref() {
            if !effect.is_empty() && effect != taint.effect {
                return false;
            }
        }
        let key = self.key.as_deref().unwrap_or("");
        let op = self.operator.as_deref().unwrap_or("Equal");
        if key.is_empty() {
            return op == "Exists";
        }
        if key != taint.key {
            return false;
        }
        match op {
            "Exists" => true,
            _ => self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        }
    }
}

/// Node affinity, of which the scheduler simulates `requiredDuringScheduling…` and `preferred…`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<NodeAffinity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_affinity: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_anti_affinity: Option<Box<Json>>,
}

/// See [`Affinity`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeAffinity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_during_scheduling_ignored_during_execution: Vec<PreferredSchedulingTerm>,
}

/// A required node selector: terms are ORed, expressions within a term are ANDed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelector {
    #[serde(default)]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// See [`NodeSelector`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorTerm {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_fields: Vec<NodeSelectorRequirement>,
}

/// One node-selector requirement (In, NotIn, Exists, DoesNotExist, Gt, Lt).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirement {
    pub key: String,
    pub operator: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// A weighted preferred node-affinity term.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreferredSchedulingTerm {
    pub weight: i64,
    pub preference: NodeSelectorTerm,
}

/// The pod spec; the simulated subset drives scheduling, the kubelet and termination.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    #[serde(default)]
    pub containers: Vec<Container>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<Container>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub node_name: Str,
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub node_selector: StringMap,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Box<Affinity>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_policy: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<Str>,
    // Accepted but not simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secrets: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_network: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_spread_constraints: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automount_service_account_token: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdomain: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_service_links: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_policy: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_gates: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_process_namespace: Option<Box<Json>>,
    #[serde(rename = "hostPID", default, skip_serializing_if = "Option::is_none")]
    pub host_pid: Option<Box<Json>>,
    #[serde(rename = "hostIPC", default, skip_serializing_if = "Option::is_none")]
    pub host_ipc: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_config: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_aliases: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<Box<Json>>,
}

/// A pod template: metadata plus spec, as in Deployments and ReplicaSets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateSpec {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodSpec,
}

/// A condition on any object's status; the transition time moves only when `status` flips.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: Str,
    pub status: Str,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// Finds a condition by type in a condition list.
pub fn find_condition<'a>(conds: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conds.iter().find(|c| c.type_ == type_)
}

/// Sets a condition, keeping `lastTransitionTime` unless the status flips (as Kubernetes does).
pub fn set_condition(conds: &mut Vec<Condition>, mut new: Condition) {
    if let Some(existing) = conds.iter_mut().find(|c| c.type_ == new.type_) {
        if existing.status == new.status {
            new.last_transition_time = existing.last_transition_time.or(new.last_transition_time);
        }
        *existing = new;
    } else {
        conds.push(new);
    }
}

/// `waiting`, `running` or `terminated`: exactly one is set on a real container status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<ContainerStateWaiting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<ContainerStateRunning>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<ContainerStateTerminated>,
}

/// See [`ContainerState`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateWaiting {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Str>,
}

/// See [`ContainerState`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateRunning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
}

/// See [`ContainerState`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateTerminated {
    pub exit_code: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
}

/// The kubelet's report of one container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    pub name: Str,
    #[serde(default)]
    pub image: Str,
    #[serde(default)]
    pub ready: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<bool>,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(default)]
    pub state: ContainerState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_state: Option<ContainerState>,
    #[serde(rename = "imageID", default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<Str>,
    #[serde(
        rename = "containerID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub container_id: Option<Str>,
}

/// Pod status as the scheduler and kubelet write it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub phase: Str,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Str>,
    #[serde(rename = "hostIP", default, skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<Str>,
    #[serde(rename = "podIP", default, skip_serializing_if = "Option::is_none")]
    pub pod_ip: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominated_node_name: Option<Str>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_statuses: Vec<ContainerStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_container_statuses: Vec<ContainerStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos_class: Option<Str>,
}

/// A Pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Rc<PodSpec>,
    #[serde(default)]
    pub status: PodStatus,
}

impl Pod {
    /// The spec, to change: a pod's versions share one spec (a status write copies a pointer,
    /// not the containers), so the first change copies it.
    pub fn spec_mut(&mut self) -> &mut PodSpec {
        Rc::make_mut(&mut self.spec)
    }

    /// Ready condition True: the pod receives traffic and counts as ready for its owners.
    pub fn is_ready(&self) -> bool {
        find_condition(&self.status.conditions, "Ready").is_some_and(|c| c.status == "True")
    }

    /// The time the Ready condition last became True, for availability (minReadySeconds).
    pub fn ready_since(&self) -> Option<Time> {
        find_condition(&self.status.conditions, "Ready")
            .filter(|c| c.status == "True")
            .and_then(|c| c.last_transition_time)
    }

    /// Ready for at least `min_ready_seconds` at `now`, as `podutil.IsPodAvailable`.
    pub fn is_available(&self, min_ready_seconds: i64, now: Millis) -> bool {
        if !self.is_ready() {
            return false;
        }
        if min_ready_seconds == 0 {
            return true;
        }
        self.ready_since()
            .is_some_and(|t| t.0 + (min_ready_seconds as u64) * 1000 <= now)
    }

    /// Not Succeeded/Failed and not being deleted: what ReplicaSets count.
    pub fn is_active(&self) -> bool {
        self.status.phase != "Succeeded"
            && self.status.phase != "Failed"
            && self.metadata.deletion_timestamp.is_none()
    }

    /// The highest restart count of any container.
    pub fn max_restarts(&self) -> i32 {
        self.status
            .container_statuses
            .iter()
            .map(|c| c.restart_count)
            .max()
            .unwrap_or(0)
    }
}

// ---------------------------------------------------------------- ReplicaSets

/// ReplicaSet spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub min_ready_seconds: i32,
    #[serde(default)]
    pub selector: LabelSelector,
    #[serde(default)]
    pub template: PodTemplateSpec,
}

/// ReplicaSet status as the ReplicaSet controller computes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetStatus {
    #[serde(default)]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub fully_labeled_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub ready_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub available_replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A ReplicaSet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ReplicaSetSpec,
    #[serde(default)]
    pub status: ReplicaSetStatus,
}

// ---------------------------------------------------------------- Deployments

/// Rolling-update parameters; both default to 25%.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDeployment {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// `RollingUpdate` (default) or `Recreate`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStrategy {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDeployment>,
}

/// Deployment spec; defaulted by admission exactly as apps/v1 defaults it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default)]
    pub selector: LabelSelector,
    #[serde(default)]
    pub template: PodTemplateSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<DeploymentStrategy>,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub min_ready_seconds: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

/// Deployment status as the Deployment controller computes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStatus {
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub updated_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub ready_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub available_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub unavailable_replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

/// A Deployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: DeploymentSpec,
    #[serde(default)]
    pub status: DeploymentStatus,
}

// ---------------------------------------------------------------- Nodes

/// A node taint; `effect` is NoSchedule, PreferNoSchedule or NoExecute.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub effect: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_added: Option<Time>,
}

/// Node spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    #[serde(default, skip_serializing_if = "is_false")]
    pub unschedulable: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    #[serde(rename = "podCIDR", default, skip_serializing_if = "Option::is_none")]
    pub pod_cidr: Option<String>,
    #[serde(
        rename = "providerID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_id: Option<String>,
}

/// Node status: capacity and allocatable size the machine; conditions carry its health.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub capacity: StringMap,
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub allocatable: StringMap,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_info: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Box<Json>>,
    /// The attachable volumes the kubelet wants or still has mounted (unique names, sorted): what
    /// keeps the attach/detach controller from detaching them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes_in_use: Vec<String>,
    /// The volumes the attach/detach controller has attached (`[{name, devicePath}]`): what the
    /// kubelet waits for before mounting one. Kept as JSON, as `images` is: only names are read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes_attached: Option<Box<Json>>,
}

impl NodeStatus {
    /// The unique names in `volumesAttached`.
    pub fn attached_volumes(&self) -> impl Iterator<Item = &str> {
        self.volumes_attached
            .as_deref()
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("name").and_then(Json::as_str))
    }
}

/// A Node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: NodeSpec,
    #[serde(default)]
    pub status: NodeStatus,
}

impl Node {
    /// The Ready condition's status: "True", "False" or "Unknown" (absent reads as Unknown).
    pub fn ready_status(&self) -> &str {
        find_condition(&self.status.conditions, "Ready").map_or("Unknown", |c| c.status.as_str())
    }
}

/// A core/v1 Namespace: the scope namespaced objects live in. Deleting one makes it
/// `Terminating` until the namespace controller has deleted its content and removed the
/// `kubernetes` finalizer from `spec.finalizers`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Namespace {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: NamespaceSpec,
    #[serde(default)]
    pub status: NamespaceStatus,
}

/// See [`Namespace`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
}

/// See [`Namespace`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceStatus {
    /// `Active` or `Terminating`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// The finalizer the API server puts in a Namespace's `spec.finalizers`; the namespace
/// controller removes it once the namespace is empty.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// The namespaces a cluster starts with.
pub const INITIAL_NAMESPACES: [&str; 4] =
    ["default", "kube-node-lease", "kube-public", "kube-system"];

/// A node Lease in `kube-node-lease`, renewed by the kubelet as its heartbeat.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: LeaseSpec,
}

/// See [`Lease`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_identity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_time: Option<Time>,
}

// ---------------------------------------------------------------- Services

/// A Service port.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub port: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_port: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_protocol: Option<String>,
}

/// Service spec; the selector decides which pods become endpoints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    #[serde(default, skip_serializing_if = "StringMap::is_empty")]
    pub selector: StringMap,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ServicePort>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(rename = "clusterIP", default, skip_serializing_if = "Option::is_none")]
    pub cluster_ip: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub publish_not_ready_addresses: bool,
    // Accepted but not simulated.
    #[serde(
        rename = "clusterIPs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_ips: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_affinity: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_traffic_policy: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_traffic_policy: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_families: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_family_policy: Option<Box<Json>>,
    #[serde(
        rename = "loadBalancerIP",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub load_balancer_ip: Option<Box<Json>>,
    #[serde(
        rename = "externalIPs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub external_ips: Option<Box<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_name: Option<Box<Json>>,
}

/// A Service.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ServiceSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Box<Json>>,
}

/// One endpoint of an EndpointSlice with its ready/serving/terminating conditions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    #[serde(default)]
    pub addresses: Vec<String>,
    #[serde(default)]
    pub conditions: EndpointConditions,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<ObjectReference>,
}

/// See [`Endpoint`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointConditions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating: Option<bool>,
}

/// The slice of a Service's endpoints, maintained by the EndpointSlice controller.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSlice {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub address_type: String,
    #[serde(default)]
    pub endpoints: Vec<Endpoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Box<Json>>,
}

// ---------------------------------------------------------------- PodDisruptionBudgets

/// PDB spec: exactly one of minAvailable and maxUnavailable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_pod_eviction_policy: Option<String>,
}

/// PDB status as the disruption controller computes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetStatus {
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disrupted_pods: BTreeMap<String, Time>,
    #[serde(default)]
    pub disruptions_allowed: i32,
    #[serde(default)]
    pub current_healthy: i32,
    #[serde(default)]
    pub desired_healthy: i32,
    #[serde(default)]
    pub expected_pods: i32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A PodDisruptionBudget (policy/v1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudget {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodDisruptionBudgetSpec,
    #[serde(default)]
    pub status: PodDisruptionBudgetStatus,
}

// ---------------------------------------------------------------- Events

/// Points at the object an Event is about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub kind: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub namespace: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub name: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub uid: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub api_version: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub resource_version: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub field_path: Str,
}

/// Which component reported an Event.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSource {
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub component: Str,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub host: Str,
}

/// A core/v1 Event, aggregated the way client-go's EventCorrelator does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub involved_object: ObjectReference,
    #[serde(default)]
    pub reason: Str,
    #[serde(default)]
    pub message: Str,
    #[serde(default)]
    pub source: EventSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<Time>,
    #[serde(default)]
    pub count: i32,
    #[serde(rename = "type", default)]
    pub type_: Str,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporting_component: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporting_instance: Option<Str>,
}

// ---------------------------------------------------------------- The closed set of kinds

/// Every kind the simulation stores. Ordered so that stores iterate deterministically.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    Namespace,
    Node,
    Lease,
    Deployment,
    ReplicaSet,
    Pod,
    Service,
    EndpointSlice,
    PodDisruptionBudget,
    Event,
    CustomResourceDefinition,
    /// A kind served from a CustomResourceDefinition.
    Custom(CustomKind),
}

impl Kind {
    /// The built-in kinds, in store order (custom kinds come after them, by group and kind).
    pub const ALL: [Kind; 11] = [
        Kind::Namespace,
        Kind::Node,
        Kind::Lease,
        Kind::Deployment,
        Kind::ReplicaSet,
        Kind::Pod,
        Kind::Service,
        Kind::EndpointSlice,
        Kind::PodDisruptionBudget,
        Kind::Event,
        Kind::CustomResourceDefinition,
    ];

    /// A dense index: the built-in kinds' position in [`Kind::ALL`], and one shared slot after
    /// them for every custom kind.
    pub fn index(self) -> usize {
        match self {
            Kind::Custom(_) => Kind::ALL.len(),
            k => Kind::ALL
                .iter()
                .position(|a| *a == k)
                .unwrap_or(Kind::ALL.len()),
        }
    }

    /// The custom kind, if this is one.
    pub fn custom(self) -> Option<CustomKind> {
        match self {
            Kind::Custom(c) => Some(c),
            _ => None,
        }
    }

    /// The `kind` field value.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Namespace => "Namespace",
            Kind::Node => "Node",
            Kind::Lease => "Lease",
            Kind::Deployment => "Deployment",
            Kind::ReplicaSet => "ReplicaSet",
            Kind::Pod => "Pod",
            Kind::Service => "Service",
            Kind::EndpointSlice => "EndpointSlice",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
            Kind::Event => "Event",
            Kind::CustomResourceDefinition => "CustomResourceDefinition",
            Kind::Custom(c) => c.names().kind,
        }
    }

    /// The `apiVersion` the API serves this kind at.
    pub fn api_version(self) -> &'static str {
        match self {
            Kind::Namespace | Kind::Node | Kind::Pod | Kind::Service | Kind::Event => "v1",
            Kind::Lease => "coordination.k8s.io/v1",
            Kind::Deployment | Kind::ReplicaSet => "apps/v1",
            Kind::EndpointSlice => "discovery.k8s.io/v1",
            Kind::PodDisruptionBudget => "policy/v1",
            Kind::CustomResourceDefinition => CRD_API_VERSION,
            Kind::Custom(c) => c.names().api_version,
        }
    }

    /// The resource name with group, as API error messages print it (`deployments.apps`).
    pub fn resource(self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(match self {
            Kind::Namespace => "namespaces",
            Kind::Node => "nodes",
            Kind::Lease => "leases.coordination.k8s.io",
            Kind::Deployment => "deployments.apps",
            Kind::ReplicaSet => "replicasets.apps",
            Kind::Pod => "pods",
            Kind::Service => "services",
            Kind::EndpointSlice => "endpointslices.discovery.k8s.io",
            Kind::PodDisruptionBudget => "poddisruptionbudgets.policy",
            Kind::Event => "events",
            Kind::CustomResourceDefinition => "customresourcedefinitions.apiextensions.k8s.io",
            Kind::Custom(c) => return std::borrow::Cow::Owned(c.resource()),
        })
    }

    /// The resource's plural without its group (`deployments`, `crontabs`).
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Custom(c) => c.names().plural,
            k => match k.resource() {
                std::borrow::Cow::Borrowed(r) => r.split('.').next().unwrap_or(r),
                std::borrow::Cow::Owned(_) => "",
            },
        }
    }

    /// The API group (`apps`, `stable.example.com`; empty for the core group).
    pub fn group(self) -> &'static str {
        self.api_version().rsplit_once('/').map_or("", |(g, _)| g)
    }

    /// Whether objects of this kind live in a namespace.
    pub fn namespaced(self) -> bool {
        match self {
            Kind::Namespace | Kind::Node | Kind::CustomResourceDefinition => false,
            Kind::Custom(c) => c.names().namespaced,
            _ => true,
        }
    }

    /// Whether the kind has a status subresource (main-resource writes then ignore status).
    pub fn has_status_subresource(self) -> bool {
        matches!(
            self,
            Kind::Namespace
                | Kind::Node
                | Kind::Deployment
                | Kind::ReplicaSet
                | Kind::Pod
                | Kind::Service
                | Kind::PodDisruptionBudget
        )
    }

    /// Parses a `kind` field value.
    pub fn from_kind_str(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The kind an `apiVersion` and `kind` pair names (an ownerReference's), matched by group
    /// and kind as the REST mapper does: a built-in kind of that group, else a custom kind.
    pub fn of_type(api_version: &str, kind: &str) -> Option<Kind> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        Kind::from_kind_str(kind)
            .filter(|k| k.group() == group)
            .or_else(|| CustomKind::find(group, kind).map(Kind::Custom))
    }

    /// Parses a kind's name in any letter case (`Pod`, `pod`), as faults and scenarios write it.
    pub fn parse(s: &str) -> Result<Kind, String> {
        Kind::from_kind_str(s)
            .or_else(|| {
                Kind::ALL
                    .into_iter()
                    .find(|k| k.as_str().eq_ignore_ascii_case(s))
            })
            .ok_or_else(|| format!("unknown kind {s:?}"))
    }

    /// Resolves what a kubectl user types (`deploy`, `pods`, `rs`, `Deployment`, `deployments.apps`).
    pub fn from_resource_name(s: &str) -> Option<Kind> {
        let s = s.to_ascii_lowercase();
        let s = s.split('.').next().unwrap_or(&s).to_string();
        Some(match s.as_str() {
            "namespace" | "namespaces" | "ns" => Kind::Namespace,
            "node" | "nodes" | "no" => Kind::Node,
            "lease" | "leases" => Kind::Lease,
            "deployment" | "deployments" | "deploy" => Kind::Deployment,
            "replicaset" | "replicasets" | "rs" => Kind::ReplicaSet,
            "pod" | "pods" | "po" => Kind::Pod,
            "service" | "services" | "svc" => Kind::Service,
            "endpointslice" | "endpointslices" => Kind::EndpointSlice,
            "poddisruptionbudget" | "poddisruptionbudgets" | "pdb" => Kind::PodDisruptionBudget,
            "event" | "events" | "ev" => Kind::Event,
            "customresourcedefinition" | "customresourcedefinitions" | "crd" | "crds" => {
                Kind::CustomResourceDefinition
            }
            _ => return None,
        })
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Declares [`Object`] and its `From` for each kind's type.
macro_rules! objects {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        /// Any stored object. One variant per kind keeps every match exhaustive. Each is boxed:
        /// the enum is a pointer wide, so a stored version takes the room of its own kind, not
        /// of the largest (an Event or a Lease filed in a Deployment-sized slot, 1,232 bytes
        /// natively, was a fifth of the store at 10,000 pods).
        #[derive(Clone, Debug, PartialEq)]
        pub enum Object {
            $($variant(Box<$ty>),)*
        }

        $(impl From<$ty> for Object {
            fn from(o: $ty) -> Object {
                Object::$variant(Box::new(o))
            }
        })*
    };
}

objects!(
    Namespace(Namespace),
    Node(Node),
    Lease(Lease),
    Deployment(Deployment),
    ReplicaSet(ReplicaSet),
    Pod(Pod),
    Service(Service),
    EndpointSlice(EndpointSlice),
    PodDisruptionBudget(PodDisruptionBudget),
    Event(Event),
    CustomResourceDefinition(CustomResourceDefinition),
    Custom(CustomObject),
);

macro_rules! each_variant {
    ($obj:expr, $o:ident => $body:expr) => {
        match $obj {
            Object::Namespace($o) => $body,
            Object::Node($o) => $body,
            Object::Lease($o) => $body,
            Object::Deployment($o) => $body,
            Object::ReplicaSet($o) => $body,
            Object::Pod($o) => $body,
            Object::Service($o) => $body,
            Object::EndpointSlice($o) => $body,
            Object::PodDisruptionBudget($o) => $body,
            Object::Event($o) => $body,
            Object::CustomResourceDefinition($o) => $body,
            Object::Custom($o) => $body,
        }
    };
}

impl Object {
    /// The object's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Object::Namespace(_) => Kind::Namespace,
            Object::Node(_) => Kind::Node,
            Object::Lease(_) => Kind::Lease,
            Object::Deployment(_) => Kind::Deployment,
            Object::ReplicaSet(_) => Kind::ReplicaSet,
            Object::Pod(_) => Kind::Pod,
            Object::Service(_) => Kind::Service,
            Object::EndpointSlice(_) => Kind::EndpointSlice,
            Object::PodDisruptionBudget(_) => Kind::PodDisruptionBudget,
            Object::Event(_) => Kind::Event,
            Object::CustomResourceDefinition(_) => Kind::CustomResourceDefinition,
            Object::Custom(o) => Kind::Custom(o.kind),
        }
    }

    /// The object's metadata.
    pub fn meta(&self) -> &ObjectMeta {
        each_variant!(self, o => &o.metadata)
    }

    /// The object's metadata, mutably (only the API server and admission should write it).
    pub fn meta_mut(&mut self) -> &mut ObjectMeta {
        each_variant!(self, o => &mut o.metadata)
    }

    /// The key the store files this object under.
    pub fn key(&self) -> ObjectKey {
        ObjectKey::of(self.kind(), self.meta())
    }

    /// The object as the API serves it: JSON with apiVersion and kind first.
    pub fn to_json(&self) -> Json {
        let body = match self {
            Object::Custom(o) => return o.to_json(),
            _ => each_variant!(self, o => serde_json::to_value(o)),
        };
        let mut map = serde_json::Map::new();
        map.insert(
            "apiVersion".into(),
            Json::String(self.kind().api_version().into()),
        );
        map.insert("kind".into(), Json::String(self.kind().as_str().into()));
        if let Ok(Json::Object(fields)) = body {
            map.extend(fields);
        }
        Json::Object(map)
    }

    /// Builds an object of a known kind from JSON (apiVersion and kind are ignored here), with
    /// the strict decoder every typed object is read with ([`super::strict`]).
    pub fn from_json(kind: Kind, mut value: Json) -> Result<Object, super::strict::DecodeError> {
        if let Kind::Custom(c) = kind {
            return CustomObject::from_json(c, value).map(Object::from);
        }
        if let Json::Object(m) = &mut value {
            m.remove("apiVersion");
            m.remove("kind");
        }
        fn read<T: serde::de::DeserializeOwned>(
            value: &Json,
        ) -> Result<T, super::strict::DecodeError> {
            super::strict::decode_as(value, &Default::default())
        }
        Ok(match kind {
            Kind::Namespace => Object::from(read::<Namespace>(&value)?),
            Kind::Node => Object::from(read::<Node>(&value)?),
            Kind::Lease => Object::from(read::<Lease>(&value)?),
            Kind::Deployment => Object::from(read::<Deployment>(&value)?),
            Kind::ReplicaSet => Object::from(read::<ReplicaSet>(&value)?),
            Kind::Pod => Object::from(read::<Pod>(&value)?),
            Kind::Service => Object::from(read::<Service>(&value)?),
            Kind::EndpointSlice => Object::from(read::<EndpointSlice>(&value)?),
            Kind::PodDisruptionBudget => Object::from(read::<PodDisruptionBudget>(&value)?),
            Kind::Event => Object::from(read::<Event>(&value)?),
            // Read by hand (api/fields.rs): serde's derive for the CRD's forty schema keywords
            // weighed about 60 kB of the page's wasm.
            Kind::CustomResourceDefinition => {
                Object::from(CustomResourceDefinition::from_json(&value)?)
            }
            Kind::Custom(c) => return CustomObject::from_json(c, value).map(Object::from),
        })
    }

    /// The object's `spec` as JSON, for generation bumps and spec/status gap displays.
    pub fn spec_json(&self) -> Json {
        self.to_json().get("spec").cloned().unwrap_or(Json::Null)
    }

    /// The object's `status` as JSON.
    pub fn status_json(&self) -> Json {
        self.to_json().get("status").cloned().unwrap_or(Json::Null)
    }
}

macro_rules! accessors {
    ($($as_ref:ident, $as_mut:ident, $variant:ident, $ty:ty);* $(;)?) => {
        impl Object {
            $(
                /// The object as this kind, if it is one.
                pub fn $as_ref(&self) -> Option<&$ty> {
                    if let Object::$variant(o) = self { Some(o) } else { None }
                }
                /// The object as this kind, mutably, if it is one.
                pub fn $as_mut(&mut self) -> Option<&mut $ty> {
                    if let Object::$variant(o) = self { Some(o) } else { None }
                }
            )*
        }
    };
}

accessors! {
    as_namespace, as_namespace_mut, Namespace, Namespace;
    as_node, as_node_mut, Node, Node;
    as_lease, as_lease_mut, Lease, Lease;
    as_deployment, as_deployment_mut, Deployment, Deployment;
    as_replica_set, as_replica_set_mut, ReplicaSet, ReplicaSet;
    as_pod, as_pod_mut, Pod, Pod;
    as_service, as_service_mut, Service, Service;
    as_endpoint_slice, as_endpoint_slice_mut, EndpointSlice, EndpointSlice;
    as_pdb, as_pdb_mut, PodDisruptionBudget, PodDisruptionBudget;
    as_event, as_event_mut, Event, Event;
    as_crd, as_crd_mut, CustomResourceDefinition, CustomResourceDefinition;
    as_custom, as_custom_mut, Custom, CustomObject;
}

/// One object's key, allocated once by the API server's store and shared by every informer
/// cache's object map and indexes (an `ObjectKey` is two strings: a 10,000-pod cluster's caches
/// held some 95,000 copies before).
pub type SharedKey = std::rc::Rc<ObjectKey>;

/// Kind, namespace and name: how the store, caches and work queues address an object.
///
/// Ordered by kind, then namespace, then name, byte by byte (as a derived `Ord` would), but
/// compared eight bytes at a time, and not at all where both share one allocation: every store,
/// cache and queue is a B-tree of these, and the names of one ReplicaSet's pods share a long
/// prefix. In the browser `memcmp` is a byte loop, and
/// key comparisons were about a seventh of the simulation's time in a 10,000-pod rollout.
///
/// A key carries its hash, computed once when it is built: a `Str` keeps its length and bytes in
/// its heap block, so hashing a key read two cold lines (the key's and its name's) for every
/// lookup in the store, a cache or a work queue, and comparing one with a candidate read two
/// more. Now a lookup reads the key's own line, and equal hashes are the first test of equality.
/// The fields stay public for reading; a key whose namespace or name changes must be built anew
/// ([`ObjectKey::shared`]), which debug builds check at every hash and comparison.
#[derive(Clone, Serialize, Deserialize)]
#[serde(from = "KeyFields")]
pub struct ObjectKey {
    pub kind: Kind,
    pub namespace: Str,
    pub name: Str,
    #[serde(skip)]
    hash: u64,
}

/// A key as it is written: what [`ObjectKey`] reads before computing its hash.
#[derive(Deserialize)]
struct KeyFields {
    kind: Kind,
    namespace: Str,
    name: Str,
}

impl From<KeyFields> for ObjectKey {
    fn from(k: KeyFields) -> ObjectKey {
        ObjectKey::from_parts(k.kind, k.namespace, k.name)
    }
}

// Its parts, as a derive would print them without the hash (which is theirs again).
impl std::fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectKey")
            .field("kind", &self.kind)
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .finish()
    }
}

impl PartialEq for ObjectKey {
    fn eq(&self, other: &Self) -> bool {
        self.check_hash();
        other.check_hash();
        // One key found through two references to its one allocation (a shared key looked up in
        // a map that holds it) is equal without reading it.
        std::ptr::eq(self, other)
            || (self.hash == other.hash
                && self.kind == other.kind
                && self.name == other.name
                && self.namespace == other.namespace)
    }
}

impl Eq for ObjectKey {}

impl Ord for ObjectKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.kind
            .cmp(&other.kind)
            .then_with(|| self.namespace.cmp(&other.namespace))
            .then_with(|| self.name.cmp(&other.name))
    }
}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl ObjectKey {
    /// Parses `Kind/namespace/name` or `Kind/name` (namespace `default`), as faults name objects.
    pub fn parse_ref(s: &str) -> Result<ObjectKey, String> {
        let parts: Vec<&str> = s.split('/').collect();
        let (kind, ns, name) = match parts.as_slice() {
            [k, n] => (*k, "default", *n),
            [k, ns, n] => (*k, *ns, *n),
            _ => return Err(format!("expected Kind/namespace/name, got {s:?}")),
        };
        Ok(ObjectKey::new(Kind::parse(kind)?, ns, name))
    }

    /// Builds a key; cluster-scoped kinds drop the namespace.
    pub fn new(kind: Kind, namespace: &str, name: &str) -> ObjectKey {
        let namespace = if kind.namespaced() {
            Str::from(namespace)
        } else {
            Str::EMPTY
        };
        ObjectKey::from_parts(kind, namespace, Str::from(name))
    }

    /// The key of the object `meta` describes, sharing its strings (no allocation).
    pub fn of(kind: Kind, meta: &ObjectMeta) -> ObjectKey {
        ObjectKey::shared(kind, &meta.namespace, &meta.name)
    }

    /// [`ObjectKey::new`] from strings it shares (no allocation).
    pub fn shared(kind: Kind, namespace: &Str, name: &Str) -> ObjectKey {
        let namespace = if kind.namespaced() {
            namespace.clone()
        } else {
            Str::EMPTY
        };
        ObjectKey::from_parts(kind, namespace, name.clone())
    }

    /// The key of exactly these parts, namespace included whatever the kind's scope: the bounds
    /// of a range (an empty name sorts before every object of its namespace).
    pub fn from_parts(kind: Kind, namespace: Str, name: Str) -> ObjectKey {
        let hash = key_hash(kind, &namespace, &name);
        ObjectKey {
            kind,
            namespace,
            name,
            hash,
        }
    }

    /// Debug builds catch a key whose fields were changed after its hash was computed: it would
    /// be missed by every lookup.
    fn check_hash(&self) {
        debug_assert_eq!(
            self.hash,
            key_hash(self.kind, &self.namespace, &self.name),
            "the key {self} changed after it was built"
        );
    }
}

// The kind, the name and the namespace's length, not its text: equal keys still hash alike,
// keys that differ only in namespace share a hash, and every watch event hashes its key in a
// dozen caches, where the namespace's bytes were a fifth of the work. Out of line: keys are
// built in hundreds of places, and inlined into each it weighed on the page's download.
#[inline(never)]
fn key_hash(kind: Kind, namespace: &Str, name: &Str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = crate::vec_map::FxHasher::default();
    kind.hash(&mut h);
    h.write(name.as_bytes());
    h.write_usize(namespace.len());
    h.finish()
}

impl std::hash::Hash for ObjectKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.check_hash();
        state.write_u64(self.hash);
    }
}

impl ObjectKey {
    /// The pieces of the key's text: `Kind/namespace/name`, or `Kind/name` when cluster-scoped.
    fn text_parts(&self) -> [&str; 5] {
        let namespace_end = if self.namespace.is_empty() { "" } else { "/" };
        [
            self.kind.as_str(),
            "/",
            &self.namespace,
            namespace_end,
            &self.name,
        ]
    }

    /// The key as the trace names objects (its `Display`), in one allocation: every watch event
    /// and trace entry names one, where `to_string` grows its string piece by piece.
    pub fn trace_name(&self) -> String {
        crate::sim::text::concat(&self.text_parts())
    }
}

impl std::fmt::Display for ObjectKey {
    /// `Kind/namespace/name`, or `Kind/name` when cluster-scoped: the trace's object notation.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text_parts().iter().try_for_each(|p| f.write_str(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn byte_comparison_agrees_with_slices_on_any_bytes(
            prefix in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..24),
            a in proptest::collection::vec(0u8..4, 0..20),
            b in proptest::collection::vec(0u8..4, 0..20),
        ) {
            // A shared prefix of any length, then a few bytes from a small alphabet, so the
            // differences fall at every offset in and across words.
            let a = [prefix.as_slice(), a.as_slice()].concat();
            let b = [prefix.as_slice(), b.as_slice()].concat();
            proptest::prop_assert_eq!(cmp_bytes(&a, &b), a.as_slice().cmp(b.as_slice()));
        }
    }

    #[test]
    fn a_key_read_back_from_json_is_found_where_the_key_it_was_written_from_is() {
        use std::hash::BuildHasher;
        let built = ObjectKey::new(Kind::Pod, "default", "web-7d4b9c8f5-x2x4z");
        let json = serde_json::to_string(&built).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"Pod","namespace":"default","name":"web-7d4b9c8f5-x2x4z"}"#
        );
        let read: ObjectKey = serde_json::from_str(&json).unwrap();
        let shared = ObjectKey::shared(Kind::Pod, &"default".into(), &built.name);
        let hasher = std::hash::BuildHasherDefault::<crate::vec_map::FxHasher>::default();
        for k in [&read, &shared] {
            assert_eq!(*k, built);
            assert_eq!(hasher.hash_one(k), hasher.hash_one(&built));
        }
        let mut map = crate::vec_map::LookupMap::default();
        map.insert(Rc::new(built), 1);
        assert_eq!(map.get(&read), Some(&1));
    }

    #[test]
    fn the_keys_of_pods_numbered_in_sequence_spread_over_a_maps_buckets() {
        use std::hash::BuildHasher;
        let hasher = std::hash::BuildHasherDefault::<crate::vec_map::FxHasher>::default();
        // 10,000 random hashes fill about 7,500 of the 16,384 buckets such a map has.
        let buckets: std::collections::BTreeSet<u64> = (0..10_000)
            .map(|i| hasher.hash_one(ObjectKey::new(Kind::Pod, "default", &format!("p-{i}"))))
            .map(|h| h & 0x3fff)
            .collect();
        assert!(buckets.len() > 7_000, "{} buckets", buckets.len());
    }

    #[test]
    fn keys_that_differ_in_any_part_are_not_equal_even_where_their_hashes_meet() {
        // The hash reads the namespace's length, not its text: these two share a hash.
        let a = ObjectKey::new(Kind::Pod, "ns-a", "web");
        let b = ObjectKey::new(Kind::Pod, "ns-b", "web");
        assert_eq!(a.hash, b.hash);
        assert_ne!(a, b);
        assert_ne!(a, ObjectKey::new(Kind::ReplicaSet, "ns-a", "web"));
        assert_ne!(a, ObjectKey::new(Kind::Pod, "ns-a", "web2"));
        assert_eq!(a, a.clone());
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "changed after it was built")]
    fn a_key_renamed_after_it_was_built_is_caught_at_its_next_lookup() {
        let mut k = ObjectKey::new(Kind::Pod, "default", "web");
        k.name = Str::from("other");
        let mut map = crate::vec_map::LookupMap::default();
        map.insert(k, 1);
    }

    #[test]
    fn byte_comparison_orders_exactly_as_slices_do() {
        let words = [
            "",
            "a",
            "b",
            "ab",
            "abc",
            "default",
            "default2",
            "kube-system",
            "web-7d4b9c8f5-x2x4z",
            "web-7d4b9c8f5-x2x4y",
            "web-7d4b9c8f5-x2x4",
            "web-7d4b9c8f5-x2x4zz",
            "abcdefgh",
            "abcdefgi",
            "abcdefgh\u{0}",
            "abcdefghabcdefgh",
            "abcdefghabcdefgi",
            "é",
            "e\u{ff}",
            "Z",
            "z",
        ];
        for a in words {
            for b in words {
                assert_eq!(
                    cmp_bytes(a.as_bytes(), b.as_bytes()),
                    a.as_bytes().cmp(b.as_bytes()),
                    "{a:?} against {b:?}"
                );
                let ka = ObjectKey::new(Kind::Pod, a, b);
                let kb = ObjectKey::new(Kind::Pod, b, a);
                assert_eq!(
                    ka.cmp(&kb),
                    (Kind::Pod, a, b).cmp(&(Kind::Pod, b, a)),
                    "keys {a:?}/{b:?}"
                );
            }
        }
    }

    #[test]
    fn time_round_trips_through_rfc3339() {
        let t = Time(90_061_000);
        assert_eq!(t.to_rfc3339(), "2026-01-02T01:01:01Z");
        assert_eq!(Time::parse_rfc3339(&t.to_rfc3339()), Some(t));
    }

    #[test]
    fn the_fast_rfc3339_form_matches_the_formatted_one_for_every_year() {
        for ms in [
            0,
            999,
            1_000,
            90_061_500,
            31_536_000_000,
            251_635_075_199_999,
        ] {
            assert_eq!(Time(ms).to_rfc3339(), Time(ms).to_rfc3339_slow(), "{ms}");
        }
        // Past the year 9999 the year needs five digits and takes the formatted path.
        let far = Time(251_635_075_200_000);
        assert_eq!(far.to_rfc3339(), far.to_rfc3339_slow());
        assert!(far.to_rfc3339().starts_with("10000-"));
    }

    #[test]
    fn percentages_round_up_or_down_as_asked() {
        let p = IntOrString::String("25%".into());
        assert_eq!(p.scaled_value(10, true), Ok(3));
        assert_eq!(p.scaled_value(10, false), Ok(2));
        assert!(IntOrString::String("x".into())
            .scaled_value(10, true)
            .is_err());
    }

    #[test]
    fn empty_key_exists_toleration_tolerates_every_taint() {
        let t = Toleration {
            operator: Some("Exists".into()),
            ..Default::default()
        };
        let taint = Taint {
            key: "a".into(),
            value: None,
            effect: "NoExecute".into(),
            time_added: None,
        };
        assert!(t.tolerates(&taint));
    }

    #[test]
    fn selector_expressions_are_anded_with_match_labels() {
        let sel = LabelSelector {
            match_labels: [("app".to_string(), "web".to_string())].into(),
            match_expressions: vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: vec!["a".into()],
            }],
        };
        let mut labels: StringMap = [("app".to_string(), "web".to_string())].into();
        assert!(!sel.matches(&labels));
        labels.insert("tier", "a");
        assert!(sel.matches(&labels));
        assert_eq!(sel.to_selector_string(), "app=web,tier in (a)");
    }
}
