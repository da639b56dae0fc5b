//! The playground's own document: `kind: Scenario` (seed, node shorthand, timeline, checks).
//!
//! A scenario file is ordinary Kubernetes manifests plus at most one Scenario document. It is the
//! unit of sharing: the editor, built-in lessons, share links, the embed SDK and the CLI all load it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::api::types::Millis;
use super::faults::Fault;
use super::time::parse_duration;
use crate::sort::StableSort;

/// `apiVersion` of the Scenario document.
pub const SCENARIO_API_VERSION: &str = "kubeloop.dev/v1alpha1";

/// A parsed Scenario document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    #[serde(default)]
    pub metadata: ScenarioMeta,
    #[serde(default)]
    pub spec: ScenarioSpec,
}

/// Scenario metadata: a name and free-form annotations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioMeta {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// Scenario spec: every field optional, so a file without one still runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioSpec {
    /// The seed of the one RNG; the same seed and inputs replay the same run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Shorthand for identical Nodes `node-1..node-N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodeShorthand>,
    /// A short explanation shown with a lesson.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The timeline, in simulated time since the start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    /// The course author's assertions, with `kubectl wait` semantics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// One-click actions a lesson offers ("try this").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub try_this: Vec<TryThis>,
    /// What the cluster has installed beyond Kubernetes itself: `kro` (its CRD and controller).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addons: Vec<String>,
}

/// The add-ons a scenario may install.
pub use super::addons::ADDONS;

/// `nodes: {count: 3, cpu: "4", memory: 8Gi}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeShorthand {
    pub count: u32,
    #[serde(default = "default_cpu")]
    pub cpu: String,
    #[serde(default = "default_memory")]
    pub memory: String,
    #[serde(default = "default_pods")]
    pub pods: String,
    /// Labels every generated Node carries.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Zones the nodes are spread over, in turn (`node-1` in the first, `node-2` in the second,
    /// …), as a cloud's node pools spread them: each Node gets `topology.kubernetes.io/zone`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
}

fn default_cpu() -> String {
    "4".into()
}
fn default_memory() -> String {
    "8Gi".into()
}
fn default_pods() -> String {
    "110".into()
}

impl Default for NodeShorthand {
    fn default() -> Self {
        NodeShorthand {
            count: 3,
            cpu: default_cpu(),
            memory: default_memory(),
            pods: default_pods(),
            labels: BTreeMap::new(),
            zones: Vec::new(),
        }
    }
}

/// What a step does: exactly one of a fault, a kubectl command, or manifests to apply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Step {
    /// A name checks and try-this steps can wait for (`after: pipeline-scales`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// When, as a Go duration since the start (`40s`, `2m`).
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubectl: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<String>,
}

/// A check: `wait: deployment/web --for=condition=Available --timeout=10m`, watching from the
/// moment its trigger happens (`after:`), or from the start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Check {
    /// A name other checks and try-this steps can wait for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    pub wait: String,
    /// What must have happened before the wait starts: the ids of try-this steps, timeline steps
    /// or checks (all of them, when a list), or — the older form — a duration since the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<After>,
    /// How long after its trigger the wait starts (`--timeout` counts from then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
}

/// `after: delete-pods`, `after: [make-edge, lose-event]`, or `after: 30s` (since the start).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum After {
    One(String),
    All(Vec<String>),
}

impl After {
    /// The references, in the order written.
    pub fn refs(&self) -> Vec<&str> {
        match self {
            After::One(s) => vec![s.as_str()],
            After::All(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

/// A lesson's one-click action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TryThis {
    /// A name checks and later steps can wait for (`after: delete-pods`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub label: String,
    /// What must have happened before the button is offered (and before its effect counts):
    /// ids of checks, timeline steps or other try-this steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<After>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubectl: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<String>,
    /// Scripted time for headless runs of the lesson (`kubeloop run` does it at this time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The step's point is the refusal (a frozen field, a shrink): it counts as done when its
    /// command is refused, and the refusal is what it shows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

impl TryThis {
    /// The typed action behind the button (a scenario that decoded has exactly one of the three).
    pub fn action(&self) -> Result<StepAction, String> {
        match (&self.fault, &self.kubectl, &self.apply) {
            (Some(f), None, None) => serde_json::from_value(f.clone())
                .map(StepAction::Fault)
                .map_err(|e| e.to_string()),
            (None, Some(k), None) => Ok(StepAction::Kubectl(k.clone())),
            (None, None, Some(a)) => Ok(StepAction::Apply(a.clone())),
            _ => Err("exactly one of fault, kubectl or apply is required".into()),
        }
    }
}

/// A step resolved to simulated time and a typed action.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedAction {
    pub at: Millis,
    pub action: StepAction,
    /// Its place in `spec.steps`.
    pub index: usize,
}

/// One thing a check or a try-this step waits for, resolved from `after:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Trigger {
    /// The older form, `after: 30s`: that moment of the run.
    At(Millis),
    /// The timeline step `spec.steps[i]` has run.
    Step(usize),
    /// The try-this step `spec.tryThis[i]` is done: by its button, or by anything that had its
    /// effect.
    TryThis(usize),
    /// The check `spec.checks[i]` has passed.
    Check(usize),
}

/// The typed form of a step.
#[derive(Clone, Debug, PartialEq)]
pub enum StepAction {
    Fault(Fault),
    Kubectl(String),
    Apply(String),
}

/// A decode problem in the Scenario document, with the field path it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

/// Decodes the Scenario document (already converted from YAML to JSON) strictly.
pub fn decode_scenario(doc: &Json) -> Result<Scenario, ScenarioError> {
    let mut body = doc.clone();
    if let Json::Object(m) = &mut body {
        m.remove("apiVersion");
        m.remove("kind");
    }
    // The strict decoder the typed kinds use: it knows the field path, and unknown fields come
    // out as findings (a second decoder here would compile the Scenario's types twice).
    let findings = Default::default();
    let result: Result<Scenario, _> = super::api::strict::decode_as(&body, &findings);
    let cannot = |inner: &str| {
        format!("Scenario in version \"v1alpha1\" cannot be handled as a Scenario: {inner}")
    };
    if let Some(path) = findings.borrow().unknown.first() {
        return Err(ScenarioError {
            field: path.clone(),
            message: cannot(&format!("strict decoding error: unknown field \"{path}\"")),
        });
    }
    let scenario = result.map_err(|e| ScenarioError {
        message: cannot(&e.message),
        field: e.path,
    })?;
    for (i, a) in scenario.spec.addons.iter().enumerate() {
        if !ADDONS.contains(&a.as_str()) {
            return Err(ScenarioError {
                field: format!("spec.addons[{i}]"),
                message: format!(
                    "Scenario {:?} is invalid: spec.addons[{i}]: Unsupported value: {a:?}: supported values: {}",
                    scenario.metadata.name,
                    ADDONS.map(|a| format!("{a:?}")).join(", ")
                ),
            });
        }
    }
    if let Some(n) = &scenario.spec.nodes {
        if let Some(e) =
            super::api::validation::check_node_count(u64::from(n.count), "spec.nodes.count")
        {
            return Err(ScenarioError {
                field: e.field.clone(),
                message: format!("Scenario {:?} is invalid: {e}", scenario.metadata.name),
            });
        }
        for (i, zone) in n.zones.iter().enumerate() {
            if let Some(why) = super::api::validation::is_valid_label_value(zone).first() {
                return Err(ScenarioError {
                    field: format!("spec.nodes.zones[{i}]"),
                    message: format!(
                        "Scenario {:?} is invalid: spec.nodes.zones[{i}]: Invalid value: {zone:?}: {why}",
                        scenario.metadata.name
                    ),
                });
            }
        }
    }
    scenario.timeline()?;
    for (i, c) in scenario.spec.checks.iter().enumerate() {
        parse_wait(&c.wait).map_err(|m| ScenarioError {
            field: format!("spec.checks[{i}].wait"),
            message: m,
        })?;
    }
    for (i, t) in scenario.spec.try_this.iter().enumerate() {
        let field = format!("spec.tryThis[{i}]");
        let n = t.fault.is_some() as u8 + t.kubectl.is_some() as u8 + t.apply.is_some() as u8;
        if n != 1 {
            return Err(ScenarioError {
                field,
                message: "exactly one of fault, kubectl or apply is required".into(),
            });
        }
        if let Some(f) = &t.fault {
            serde_json::from_value::<Fault>(f.clone()).map_err(|e| ScenarioError {
                field: format!("{field}.fault"),
                message: e.to_string(),
            })?;
        }
        if let Some(a) = &t.at {
            parse_duration(a).map_err(|m| ScenarioError {
                field: format!("{field}.at"),
                message: m,
            })?;
        }
    }
    scenario.check_references()?;
    Ok(scenario)
}

impl Scenario {
    /// Every `id:` with what it names, or the first id given twice.
    fn ids(&self) -> Result<BTreeMap<&str, (Trigger, String)>, ScenarioError> {
        let spec = &self.spec;
        let named = spec
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    s.id.as_deref(),
                    Trigger::Step(i),
                    format!("spec.steps[{i}].id"),
                )
            })
            .chain(spec.try_this.iter().enumerate().map(|(i, t)| {
                let field = format!("spec.tryThis[{i}].id");
                (t.id.as_deref(), Trigger::TryThis(i), field)
            }))
            .chain(spec.checks.iter().enumerate().map(|(i, c)| {
                let field = format!("spec.checks[{i}].id");
                (c.id.as_deref(), Trigger::Check(i), field)
            }));
        let mut ids = BTreeMap::new();
        for (id, trigger, field) in named {
            let Some(id) = id else { continue };
            let bad = if id.is_empty() {
                Some("an id must not be empty".to_string())
            } else if parse_duration(id).is_ok() {
                Some(format!(
                    "id {id:?} reads as a duration: `after: {id}` would mean that moment of the run"
                ))
            } else {
                ids.get(id).map(|(_, other): &(Trigger, String)| {
                    format!("duplicate id {id:?}: {other} has it already")
                })
            };
            if let Some(message) = bad {
                return Err(ScenarioError { field, message });
            }
            ids.insert(id, (trigger, field));
        }
        Ok(ids)
    }

    /// Resolves an `after:` (at `field`) to what it waits for.
    fn resolve_after(
        &self,
        ids: &BTreeMap<&str, (Trigger, String)>,
        after: Option<&After>,
        field: &str,
    ) -> Result<Vec<Trigger>, ScenarioError> {
        let Some(after) = after else {
            return Ok(Vec::new());
        };
        let refs = after.refs();
        if refs.is_empty() {
            return Err(ScenarioError {
                field: field.to_string(),
                message: "after: needs at least one id".into(),
            });
        }
        refs.into_iter()
            .map(|r| {
                if let Some((t, _)) = ids.get(r) {
                    return Ok(*t);
                }
                parse_duration(r).map(Trigger::At).map_err(|_| ScenarioError {
                    field: field.to_string(),
                    message: format!(
                        "no step, try-this step or check has id {r:?} (after: takes ids, or a duration since the start)"
                    ),
                })
            })
            .collect()
    }

    /// What the check `spec.checks[i]` waits for before it starts watching.
    pub fn check_triggers(&self, i: usize) -> Result<Vec<Trigger>, ScenarioError> {
        let ids = self.ids()?;
        let after = self.spec.checks.get(i).and_then(|c| c.after.as_ref());
        self.resolve_after(&ids, after, &format!("spec.checks[{i}].after"))
    }

    /// What must have happened before `spec.tryThis[i]` is offered.
    pub fn try_this_triggers(&self, i: usize) -> Result<Vec<Trigger>, ScenarioError> {
        let ids = self.ids()?;
        let after = self.spec.try_this.get(i).and_then(|t| t.after.as_ref());
        self.resolve_after(&ids, after, &format!("spec.tryThis[{i}].after"))
    }

    /// Ids are unique, every `after:` names something, and nothing waits for itself.
    fn check_references(&self) -> Result<(), ScenarioError> {
        let ids = self.ids()?;
        let mut edges: BTreeMap<Trigger, (Vec<Trigger>, String)> = BTreeMap::new();
        for (i, c) in self.spec.checks.iter().enumerate() {
            let field = format!("spec.checks[{i}].after");
            let t = self.resolve_after(&ids, c.after.as_ref(), &field)?;
            edges.insert(Trigger::Check(i), (t, field));
            if let Some(d) = &c.delay {
                parse_duration(d).map_err(|m| ScenarioError {
                    field: format!("spec.checks[{i}].delay"),
                    message: m,
                })?;
            }
        }
        for (i, t) in self.spec.try_this.iter().enumerate() {
            let field = format!("spec.tryThis[{i}].after");
            let t = self.resolve_after(&ids, t.after.as_ref(), &field)?;
            edges.insert(Trigger::TryThis(i), (t, field));
        }
        // Depth-first from each node; a node met again on the current path closes a cycle.
        fn visit(
            node: Trigger,
            edges: &BTreeMap<Trigger, (Vec<Trigger>, String)>,
            path: &mut Vec<Trigger>,
            done: &mut std::collections::BTreeSet<Trigger>,
        ) -> Option<Trigger> {
            if done.contains(&node) {
                return None;
            }
            if path.contains(&node) {
                return Some(node);
            }
            path.push(node);
            for next in edges.get(&node).map(|(t, _)| t.as_slice()).unwrap_or(&[]) {
                if let Some(c) = visit(*next, edges, path, done) {
                    return Some(c);
                }
            }
            path.pop();
            done.insert(node);
            None
        }
        let mut done = std::collections::BTreeSet::new();
        for node in edges.keys() {
            if let Some(c) = visit(*node, &edges, &mut Vec::new(), &mut done) {
                let field = edges.get(&c).map(|(_, f)| f.clone()).unwrap_or_default();
                return Err(ScenarioError {
                    field,
                    message:
                        "this waits, through its after: chain, for itself, so it would never start"
                            .into(),
                });
            }
        }
        Ok(())
    }

    /// The steps as typed actions ordered by time (stable for equal times).
    pub fn timeline(&self) -> Result<Vec<TimedAction>, ScenarioError> {
        let mut out = Vec::new();
        for (i, s) in self.spec.steps.iter().enumerate() {
            let field = format!("spec.steps[{i}]");
            let at = parse_duration(&s.at).map_err(|m| ScenarioError {
                field: format!("{field}.at"),
                message: m,
            })?;
            let action = match (&s.fault, &s.kubectl, &s.apply) {
                (Some(f), None, None) => {
                    StepAction::Fault(serde_json::from_value(f.clone()).map_err(|e| {
                        ScenarioError {
                            field: format!("{field}.fault"),
                            message: e.to_string(),
                        }
                    })?)
                }
                (None, Some(k), None) => StepAction::Kubectl(k.clone()),
                (None, None, Some(a)) => StepAction::Apply(a.clone()),
                _ => {
                    return Err(ScenarioError {
                        field,
                        message: "exactly one of fault, kubectl or apply is required".into(),
                    })
                }
            };
            out.push(TimedAction {
                at,
                action,
                index: i,
            });
        }
        out.stable_sort_by_key(|a| a.at);
        Ok(out)
    }
}

/// What a check waits for, as `kubectl wait --for=…` spells it.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitFor {
    /// `--for=condition=Available` (status defaults to True).
    Condition { type_: String, status: String },
    /// `--for=jsonpath='{.status.readyReplicas}'=3` (value optional: then the path must exist).
    JsonPath { path: String, value: Option<String> },
    /// `--for=delete`.
    Delete,
    /// `--for=create`.
    Create,
}

/// A parsed `kubectl wait` expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Wait {
    /// `deployment/web`, `pod/x`, or `pods` with a selector.
    pub resource: String,
    pub selector: Option<String>,
    pub namespace: String,
    pub all: bool,
    pub for_: WaitFor,
    pub timeout: Millis,
}

/// Parses `RESOURCE[/NAME] --for=… [--timeout=…] [-l sel] [-n ns] [--all]` (leading `kubectl wait` optional).
pub fn parse_wait(s: &str) -> Result<Wait, String> {
    let words = split_words(s)?;
    let mut words: Vec<&str> = words.iter().map(|w| w.as_str()).collect();
    if words.first() == Some(&"kubectl") {
        words.remove(0);
    }
    if words.first() == Some(&"wait") {
        words.remove(0);
    }
    let mut resource = None;
    let mut for_ = None;
    let mut timeout = 30_000;
    let mut selector = None;
    let mut namespace = "default".to_string();
    let mut all = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) if f.starts_with('-') => (f, Some(v.to_string())),
            _ => (w, None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            words
                .get(i)
                .map(|v| v.to_string())
                .ok_or_else(|| format!("error: flag needs an argument: {flag}"))
        };
        match flag {
            "--for" => {
                let v = value()?;
                for_ = Some(parse_for(&v)?);
            }
            "--timeout" => timeout = parse_duration(&value()?)?,
            "-l" | "--selector" => selector = Some(value()?),
            "-n" | "--namespace" => namespace = value()?,
            "--all" => all = true,
            f if f.starts_with('-') => return Err(format!("error: unknown flag: {f}")),
            _ => {
                if resource.is_some() {
                    return Err(format!("error: unexpected argument {w:?}"));
                }
                resource = Some(w.to_string());
            }
        }
        i += 1;
    }
    let resource = resource.ok_or("error: resource(s) were provided, but no name was specified")?;
    let for_ = for_.ok_or("error: --for must be specified")?;
    Ok(Wait {
        resource,
        selector,
        namespace,
        all,
        for_,
        timeout,
    })
}

fn parse_for(v: &str) -> Result<WaitFor, String> {
    if v == "delete" {
        return Ok(WaitFor::Delete);
    }
    if v == "create" {
        return Ok(WaitFor::Create);
    }
    if let Some(c) = v.strip_prefix("condition=") {
        let (type_, status) = match c.split_once('=') {
            Some((t, s)) => (t.to_string(), s.to_string()),
            None => (c.to_string(), "True".to_string()),
        };
        return Ok(WaitFor::Condition { type_, status });
    }
    if let Some(j) = v.strip_prefix("jsonpath=") {
        let (path, value) = match j.rfind("}=") {
            Some(i) => (
                &j[..=i],
                Some(j[i + 2..].trim_matches(['\'', '"']).to_string()),
            ),
            None => (j, None),
        };
        let path = path.trim_matches(['\'', '"']);
        let inner = path
            .strip_prefix('{')
            .and_then(|p| p.strip_suffix('}'))
            .ok_or_else(|| format!("unrecognized jsonpath expression {path:?}"))?;
        super::input::jsonpath::Template::parse(path)
            .map_err(|e| format!("error parsing jsonpath {path}, {e}"))?;
        return Ok(WaitFor::JsonPath {
            path: inner.to_string(),
            value,
        });
    }
    Err(format!("error: unrecognized condition: {v:?}"))
}

/// Splits a command line into words, honouring single and double quotes (as a shell would).
pub fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut has = false;
    for ch in s.chars() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => cur.push(ch),
            None if ch == '\'' || ch == '"' => {
                quote = Some(ch);
                has = true;
            }
            None if ch.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            None => cur.push(ch),
        }
    }
    if quote.is_some() {
        return Err("unterminated quote".into());
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// Evaluates a simple JSONPath (`.status.conditions[0].type`, `.status.readyReplicas`) on JSON.
pub fn json_path<'a>(root: &'a Json, path: &str) -> Option<&'a Json> {
    let mut cur = root;
    let path = path.strip_prefix('.').unwrap_or(path);
    if path.is_empty() {
        return Some(root);
    }
    for part in path.split('.') {
        let (name, idx) = match part.split_once('[') {
            Some((n, rest)) => (n, Some(rest.trim_end_matches(']'))),
            None => (part, None),
        };
        if !name.is_empty() {
            cur = cur.get(name)?;
        }
        if let Some(i) = idx {
            cur = cur.get(i.parse::<usize>().ok()?)?;
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_scenario_document_decodes() {
        let doc = json!({
            "apiVersion": "kubeloop.dev/v1alpha1", "kind": "Scenario",
            "metadata": {"name": "node-failure"},
            "spec": {
                "seed": 7,
                "nodes": {"count": 3, "cpu": "4", "memory": "8Gi"},
                "steps": [
                    {"at": "2m", "kubectl": "scale deployment/web --replicas=5"},
                    {"at": "40s", "fault": {"type": "NodeDown", "node": "node-2"}}
                ],
                "checks": [{"name": "web is available again", "wait": "deployment/web --for=condition=Available --timeout=10m"}]
            }
        });
        let s = decode_scenario(&doc).unwrap();
        assert_eq!(s.spec.seed, Some(7));
        let t = s.timeline().unwrap();
        assert_eq!(t[0].at, 40_000);
        assert_eq!(
            t[0].action,
            StepAction::Fault(Fault::NodeDown {
                node: "node-2".into()
            })
        );
        assert_eq!(
            t[1].action,
            StepAction::Kubectl("scale deployment/web --replicas=5".into())
        );
    }

    #[test]
    fn unknown_scenario_fields_are_strict_decoding_errors() {
        let err = decode_scenario(&json!({"spec": {"stepz": []}})).unwrap_err();
        assert_eq!(err.field, "spec.stepz");
        assert!(
            err.message
                .ends_with("strict decoding error: unknown field \"spec.stepz\""),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_step_with_a_bad_duration_names_its_field() {
        let err =
            decode_scenario(&json!({"spec": {"steps": [{"at": "soon", "kubectl": "get pods"}]}}))
                .unwrap_err();
        assert_eq!(err.field, "spec.steps[0].at");
        assert_eq!(err.message, "time: invalid duration \"soon\"");
    }

    #[test]
    fn checks_and_steps_wait_for_ids_and_resolve_to_their_triggers() {
        let doc = json!({"spec": {
            "steps": [{"id": "pipeline", "at": "30s", "kubectl": "scale deployment/web --replicas=6"}],
            "tryThis": [
                {"id": "delete", "label": "Delete", "fault": {"type": "DeletePod", "selector": "app=web"}, "after": "up", "at": "40s"},
                {"label": "Look", "kubectl": "get pods", "after": ["delete", "pipeline"], "at": "50s"}
            ],
            "checks": [
                {"id": "up", "name": "up", "wait": "deployment/web --for=condition=Available"},
                {"name": "gap", "wait": "deployment/web --for=condition=Available=False", "after": "delete", "delay": "5s"},
                {"name": "old form", "wait": "deployment/web --for=condition=Available", "after": "2m"}
            ]
        }});
        let s = decode_scenario(&doc).unwrap();
        assert_eq!(s.check_triggers(0).unwrap(), vec![]);
        assert_eq!(s.check_triggers(1).unwrap(), vec![Trigger::TryThis(0)]);
        assert_eq!(s.check_triggers(2).unwrap(), vec![Trigger::At(120_000)]);
        assert_eq!(s.try_this_triggers(0).unwrap(), vec![Trigger::Check(0)]);
        assert_eq!(
            s.try_this_triggers(1).unwrap(),
            vec![Trigger::TryThis(0), Trigger::Step(0)]
        );
    }

    #[test]
    fn a_zone_that_is_not_a_label_value_is_refused_at_its_field() {
        let doc = serde_json::json!({"apiVersion": "kubeloop.dev/v1alpha1", "kind": "Scenario",
            "metadata": {"name": "z"}, "spec": {"nodes": {"count": 2, "zones": ["zone-a", "zone b"]}}});
        let e = decode_scenario(&doc).expect_err("refused");
        assert_eq!(e.field, "spec.nodes.zones[1]");
        assert!(e.message.starts_with("Scenario \"z\" is invalid: spec.nodes.zones[1]: Invalid value: \"zone b\": a valid label must be"), "{}", e.message);
    }

    #[test]
    fn a_bad_id_or_after_is_refused_at_its_field() {
        let err = |spec: serde_json::Value| decode_scenario(&json!({ "spec": spec })).unwrap_err();
        let check = |after: serde_json::Value| json!({"checks": [{"id": "a", "name": "a", "wait": "pods --for=create", "after": after}]});
        let e = err(check(json!("nothing")));
        assert_eq!(e.field, "spec.checks[0].after");
        assert!(
            e.message
                .starts_with("no step, try-this step or check has id \"nothing\""),
            "{}",
            e.message
        );
        let e = err(check(json!("a")));
        assert_eq!(e.field, "spec.checks[0].after");
        assert!(e.message.contains("for itself"), "{}", e.message);
        let e = err(json!({"checks": [
            {"id": "a", "name": "a", "wait": "pods --for=create"},
            {"id": "a", "name": "b", "wait": "pods --for=create"}]}));
        assert_eq!(e.field, "spec.checks[1].id");
        assert_eq!(
            e.message,
            "duplicate id \"a\": spec.checks[0].id has it already"
        );
        let e = err(json!({"checks": [{"id": "30s", "name": "a", "wait": "pods --for=create"}]}));
        assert!(e.message.contains("reads as a duration"), "{}", e.message);
        let e =
            err(json!({"checks": [{"name": "a", "wait": "pods --for=create", "delay": "soon"}]}));
        assert_eq!(e.field, "spec.checks[0].delay");
    }

    #[test]
    fn kubectl_wait_expressions_parse() {
        let w = parse_wait("deployment/web --for=condition=Available --timeout=10m").unwrap();
        assert_eq!(
            w.for_,
            WaitFor::Condition {
                type_: "Available".into(),
                status: "True".into()
            }
        );
        assert_eq!(w.timeout, 600_000);
        let w =
            parse_wait("kubectl wait deployment/web --for=jsonpath='{.status.readyReplicas}'=3")
                .unwrap();
        assert_eq!(
            w.for_,
            WaitFor::JsonPath {
                path: ".status.readyReplicas".into(),
                value: Some("3".into())
            }
        );
        assert!(parse_wait("deployment/web").is_err());
    }

    #[test]
    fn json_paths_walk_maps_and_lists() {
        let v = json!({"status": {"conditions": [{"type": "Available"}]}});
        assert_eq!(
            json_path(&v, ".status.conditions[0].type"),
            Some(&json!("Available"))
        );
        assert_eq!(json_path(&v, ".status.missing"), None);
    }
}
