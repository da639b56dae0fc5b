//! A lesson's progress: which try-this steps are offered and done, and when each trigger happened.
//!
//! Lessons follow the learner, not the clock. A check written `after: delete-pods` starts watching
//! when the pods are deleted, whoever deleted them: the step's button, the fault menu, the pod
//! menu or the console. So a step counts as done when any learner action has the step's effect:
//! the same changes to the same objects that the step's own action would have made at that moment
//! (worked out by running it on a detached copy of the store), or, for a fault that writes no
//! object (a machine powered off, a lost watch event), the same fault at the same target.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value as Json;

use super::api::apiserver::ApiServer;
use super::api::types::{Millis, Object, ObjectKey};
use super::faults::Fault;
use super::scenario::{split_words, StepAction, Trigger};
use crate::sort::StableSort;

/// A learner's action, as the session received it.
#[derive(Clone, Copy, Debug)]
pub enum LearnerAction<'a> {
    Fault(&'a Fault),
    Kubectl(&'a str),
    /// The editor's Apply (or the JS API's `apply`).
    Apply,
    /// The editor's Delete.
    Delete,
}

/// A try-this step's progress.
#[derive(Clone, Debug, PartialEq)]
pub struct TryThisProgress {
    /// What must have happened before it is offered.
    pub after: Vec<Trigger>,
    /// When the lesson's own timeline performs it (`at:`), if it says.
    pub at: Option<Millis>,
    /// When it was done, by its button or by an action with its effect.
    pub done_at: Option<Millis>,
    /// The typed action (None when the file's action does not decode; the scenario decoder
    /// refuses such files, so only a Scenario built in code has one).
    pub action: Option<StepAction>,
}

/// Whether the things a check or step waits for have happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TriggerState {
    /// All of them: the latest at this moment.
    Happened(Millis),
    /// Not yet: what the learner (or the timeline) still has to do, in words.
    Pending(String),
    /// One never will (a check it waits for failed).
    Never(String),
}

/// What an action changed: each object it touched, before and after (None: not there).
pub type Changes = BTreeMap<ObjectKey, (Option<Rc<Object>>, Option<Rc<Object>>)>;

/// The objects that differ between two states of the store (Events aside: no learner writes
/// them, and the API server's own bookkeeping of them is noise here).
pub fn changes(before: &ApiServer, after: &ApiServer) -> Changes {
    let mut out = Changes::new();
    for o in after.all_but_events() {
        let key = o.key();
        match before.get(&key) {
            Some(b) if Rc::ptr_eq(b, o) => {}
            b => {
                out.insert(key, (b.cloned(), Some(o.clone())));
            }
        }
    }
    for o in before.all_but_events() {
        let key = o.key();
        if after.get(&key).is_none() {
            out.insert(key, (Some(o.clone()), None));
        }
    }
    out
}

/// Gone, or on its way (a deletion timestamp that was not there before).
fn deleted(before: &Option<Rc<Object>>, after: &Option<Rc<Object>>) -> bool {
    let terminating = |o: &Option<Rc<Object>>| {
        o.as_ref()
            .is_some_and(|o| o.meta().deletion_timestamp.is_some())
    };
    after.is_none() || (terminating(after) && !terminating(before))
}

/// Fields nobody writes on purpose: the API server's bookkeeping, status (controllers' and
/// kubelets' business) and kubectl apply's record of itself, which `kubectl set image` and an
/// apply of the same change would leave different.
const NOISE: &[&str] = &[
    "/status",
    "/metadata/resourceVersion",
    "/metadata/generation",
    "/metadata/managedFields",
    "/metadata/uid",
    "/metadata/creationTimestamp",
    "/metadata/deletionTimestamp",
    "/metadata/deletionGracePeriodSeconds",
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
];

/// An object's leaves, by JSON pointer, less [`NOISE`].
fn leaves(o: &Object) -> BTreeMap<String, Json> {
    fn walk(v: &Json, path: &mut String, out: &mut BTreeMap<String, Json>) {
        if NOISE.contains(&path.as_str()) {
            return;
        }
        match v {
            Json::Object(m) if !m.is_empty() => {
                for (k, v) in m {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    walk(v, path, out);
                    path.truncate(len);
                }
            }
            Json::Array(a) if !a.is_empty() => {
                for (i, v) in a.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    walk(v, path, out);
                    path.truncate(len);
                }
            }
            leaf => {
                out.insert(path.clone(), leaf.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&o.to_json(), &mut String::new(), &mut out);
    out
}

/// Whether `real` (what the learner's action changed) includes every change in `step` (what the
/// step's own action would have changed from the same state): the same objects deleted, and the
/// same fields set to the same values (or removed). Other changes beside them do not matter.
pub fn covers(step: &Changes, real: &Changes) -> bool {
    !step.is_empty()
        && step.iter().all(|(key, (s_before, s_after))| {
            let Some((r_before, r_after)) = real.get(key) else {
                return false;
            };
            match (deleted(s_before, s_after), deleted(r_before, r_after)) {
                (true, true) => true,
                (true, false) | (false, true) => false,
                (false, false) => {
                    let (Some(s_after), Some(r_after)) = (s_after, r_after) else {
                        return false;
                    };
                    let was = s_before.as_deref().map(leaves).unwrap_or_default();
                    let want = leaves(s_after);
                    let got = leaves(r_after);
                    let set = want
                        .iter()
                        .filter(|(p, v)| was.get(*p) != Some(*v))
                        .all(|(p, v)| got.get(p) == Some(v));
                    let removed = was
                        .keys()
                        .filter(|p| !want.contains_key(*p))
                        .all(|p| !got.contains_key(p));
                    set && removed
                }
            }
        })
}

/// Faults that write objects (their effect is compared as changes); the others act on machines,
/// containers or components, and match by what they hit.
pub fn writes_objects(f: &Fault) -> bool {
    matches!(f, Fault::DeletePod { .. } | Fault::EditObject { .. })
}

/// Two faults of the same kind aimed at the same thing: how long, how often or with which exit
/// code does not make them different steps (the fault menu has its own defaults).
pub fn same_target(a: &Fault, b: &Fault) -> bool {
    const PARAMETERS: &[&str] = &["duration", "count", "probability", "exitCode", "delay"];
    let strip = |f: &Fault| {
        let mut v = serde_json::to_value(f).unwrap_or(Json::Null);
        if let Json::Object(m) = &mut v {
            for p in PARAMETERS {
                m.remove(*p);
            }
        }
        v
    };
    strip(a) == strip(b)
}

/// Flags whose value is the next word when not written `--flag=value`.
const VALUE_FLAGS: &[&str] = &[
    "-l",
    "--selector",
    "-n",
    "--namespace",
    "-o",
    "--output",
    "-f",
    "--filename",
    "-c",
    "--container",
    "--field-selector",
    "--sort-by",
    "--for",
    "--timeout",
    "--replicas",
    "--to-revision",
    "--grace-period",
];

/// A read-only command's gist: the verb (with its subcommand for `rollout`, `create`, …) and
/// the kinds it names, so `kubectl get po` does what `get pods -l app=web` asks for.
pub fn command_gist(cmd: &str) -> Option<(String, Vec<String>)> {
    let words = split_words(cmd).ok()?;
    let mut words = words.into_iter().peekable();
    if words.peek().map(String::as_str) == Some("kubectl") {
        words.next();
    }
    let mut verb = words.next()?;
    let mut positional = Vec::new();
    let mut skip = false;
    for w in words {
        if skip {
            skip = false;
        } else if w.starts_with('-') {
            skip = VALUE_FLAGS.contains(&w.as_str());
        } else {
            positional.push(w);
        }
    }
    if matches!(
        verb.as_str(),
        "rollout" | "create" | "set" | "config" | "top" | "auth"
    ) && !positional.is_empty()
    {
        verb = format!("{verb} {}", positional.remove(0));
    }
    let kinds = positional
        .first()
        .map(|w| {
            let mut kinds: Vec<String> = w
                .split(',')
                .map(|r| {
                    let r = r.split('/').next().unwrap_or(r);
                    super::kubectl::resources::builtin_kind_of(r)
                        .map_or_else(|_| r.to_ascii_lowercase(), |k| k.as_str().to_string())
                })
                .collect();
            kinds.stable_sort();
            kinds
        })
        .unwrap_or_default();
    Some((verb, kinds))
}

/// `Delete every web pod` → `delete every web pod`, for "after you …". A first word with
/// another capital in it (`ReplicaSet`, `CPU`) is a name and keeps its case.
pub fn lower_first(label: &str) -> String {
    let first_word = label.split_whitespace().next().unwrap_or("");
    if first_word.chars().skip(1).any(char::is_uppercase) {
        return label.to_string();
    }
    let mut c = label.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::faults::PodTarget;

    #[test]
    fn faults_at_the_same_target_match_whatever_their_duration() {
        let a: Fault = serde_json::from_str(
            r#"{"type":"CrashLoop","selector":"app=web","exitCode":1,"duration":"2m"}"#,
        )
        .unwrap();
        let b: Fault =
            serde_json::from_str(r#"{"type":"CrashLoop","selector":"app=web","duration":"5m"}"#)
                .unwrap();
        let c: Fault =
            serde_json::from_str(r#"{"type":"CrashLoop","selector":"app=api"}"#).unwrap();
        assert!(same_target(&a, &b));
        assert!(!same_target(&a, &c));
        let down = Fault::NodeDown {
            node: "node-2".into(),
        };
        let up = Fault::NodeUp {
            node: "node-2".into(),
        };
        assert!(!same_target(&down, &up));
        assert!(!writes_objects(&down));
        assert!(writes_objects(&Fault::DeletePod {
            target: PodTarget::default()
        }));
    }

    #[test]
    fn a_commands_gist_is_its_verb_and_the_kinds_it_names() {
        assert_eq!(
            command_gist("kubectl get pods -l app=web"),
            Some(("get".into(), vec!["Pod".into()]))
        );
        assert_eq!(command_gist("get po"), command_gist("get pods -o wide"));
        assert_eq!(
            command_gist("rollout history deployment/web"),
            Some(("rollout history".into(), vec!["Deployment".into()]))
        );
        assert_ne!(command_gist("get pods"), command_gist("get deployments"));
        assert_eq!(
            command_gist("get -n default events"),
            Some(("get".into(), vec!["Event".into()]))
        );
    }

    #[test]
    fn labels_read_after_you() {
        assert_eq!(lower_first("Delete every web pod"), "delete every web pod");
        assert_eq!(lower_first("ReplicaSet first"), "ReplicaSet first");
    }
}
