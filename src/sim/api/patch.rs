//! The three patch types the API server takes, as pure functions over JSON: a JSON merge patch
//! (RFC 7386), a strategic merge patch (apimachinery's `strategicpatch`: lists merge item by
//! item where the Go types say so) and a JSON patch (RFC 6902). The store applies merge patches;
//! the other two are turned into the merge patch that has the same effect on the object they
//! are applied to ([`merge_diff`]).

use serde_json::{Map, Value as Json};

use super::openapi::{PatchMeta, TypeRef};
use crate::sort::{CollectTree, StableSort};

/// RFC 7386: `patch` merged into `target`; `null` deletes.
pub fn merge(target: &mut Json, patch: &Json) {
    let Json::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Json::Object(Map::new());
    }
    if let Json::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge(t.entry(k.clone()).or_insert(Json::Null), v);
            }
        }
    }
}

/// The JSON merge patch that turns `from` into `to` (lists are replaced whole).
pub fn merge_diff(from: &Json, to: &Json) -> Json {
    let (Json::Object(a), Json::Object(b)) = (from, to) else {
        return to.clone();
    };
    let mut out = Map::new();
    for k in a.keys().filter(|k| !b.contains_key(*k)) {
        out.insert(k.clone(), Json::Null);
    }
    for (k, v) in b {
        match a.get(k) {
            Some(old) if old == v => {}
            Some(old @ Json::Object(_)) if v.is_object() => {
                out.insert(k.clone(), merge_diff(old, v));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Json::Object(out)
}

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

/// A strategic merge patch applied to `original`, whose Go type is `ty`. Maps merge as in a JSON
/// merge patch; a list whose field says `x-kubernetes-patch-strategy: merge` merges its items by
/// their `x-kubernetes-patch-merge-key` (containers by `name`), or as a set of values when it has
/// none (finalizers); other lists are replaced. The directives `$patch: replace|delete|merge`,
/// `$retainKeys` and `$deleteFromPrimitiveList/<field>` are honoured; `$setElementOrder/<field>`
/// is accepted and ignored (merged items keep the original's order, new ones come last).
pub fn strategic_merge(original: &Json, patch: &Json, ty: TypeRef) -> Result<Json, String> {
    let Json::Object(p) = patch else {
        return Err("invalid JSON document: a strategic merge patch must be an object".into());
    };
    let base = original.as_object().cloned().unwrap_or_default();
    Ok(merge_map(base, p, Some(ty))?.map_or(Json::Null, Json::Object))
}

/// Merges a patch map into `original`; `None` when a `$patch: delete` removes the map.
fn merge_map(
    mut original: Map<String, Json>,
    patch: &Map<String, Json>,
    ty: Option<TypeRef>,
) -> Result<Option<Map<String, Json>>, String> {
    match patch.get(DIRECTIVE).and_then(Json::as_str) {
        Some("delete") => return Ok(None),
        Some("replace") => return Ok(Some(strip_directives(patch))),
        Some("merge") | None => {}
        Some(other) => return Err(format!("Unknown patch type: {other}")),
    }
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let keep: Vec<&str> = retain
            .as_array()
            .ok_or_else(|| format!("invalid {RETAIN_KEYS}: must be a list"))?
            .iter()
            .filter_map(Json::as_str)
            .collect();
        original.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (key, value) in patch {
        if key == DIRECTIVE || key == RETAIN_KEYS || key.starts_with(SET_ELEMENT_ORDER) {
            continue;
        }
        if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let gone = value.as_array().cloned().unwrap_or_default();
            if let Some(Json::Array(items)) = original.get_mut(field) {
                items.retain(|v| !gone.contains(v));
            }
            continue;
        }
        if value.is_null() {
            original.remove(key);
            continue;
        }
        let (child_ty, meta) = match ty.and_then(|t| t.field(key)) {
            Some((t, m)) => (Some(t), m),
            None => (None, PatchMeta::default()),
        };
        let current = original.remove(key).unwrap_or(Json::Null);
        let merged = match (current, value) {
            (Json::Object(o), Json::Object(p)) => merge_map(o, p, child_ty)?.map(Json::Object),
            (Json::Null, Json::Object(p)) => merge_map(Map::new(), p, child_ty)?.map(Json::Object),
            (Json::Array(o), Json::Array(p)) => Some(merge_list(o, p, &meta, child_ty)?),
            (Json::Null, Json::Array(p)) => Some(merge_list(Vec::new(), p, &meta, child_ty)?),
            (_, v) => Some(v.clone()),
        };
        if let Some(v) = merged {
            original.insert(key.clone(), v);
        }
    }
    Ok(Some(original))
}

fn strip_directives(m: &Map<String, Json>) -> Map<String, Json> {
    m.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect_object()
}

/// Merges a patch list into `original` as the field's patch strategy says.
fn merge_list(
    original: Vec<Json>,
    patch: &[Json],
    meta: &PatchMeta,
    list_ty: Option<TypeRef>,
) -> Result<Json, String> {
    let replace = patch
        .iter()
        .any(|i| i.get(DIRECTIVE).and_then(Json::as_str) == Some("replace"));
    if !meta.merge || replace {
        let items = patch
            .iter()
            .filter(|i| i.get(DIRECTIVE).is_none())
            .map(|i| match i {
                Json::Object(m) => Json::Object(strip_directives(m)),
                other => other.clone(),
            })
            .collect();
        return Ok(Json::Array(items));
    }
    let item_ty = list_ty.and_then(TypeRef::item);
    let Some(key) = meta.merge_key.as_deref() else {
        // A set of values: the patch's new ones come after the original's.
        let mut items = original;
        for v in patch {
            if !items.contains(v) {
                items.push(v.clone());
            }
        }
        return Ok(Json::Array(items));
    };
    let mut items = original;
    for p in patch {
        let Json::Object(pm) = p else {
            return Err(format!(
                "Invalid value: {p}: the list's items must be maps with the merge key {key:?}"
            ));
        };
        let Some(id) = pm.get(key) else {
            return Err(format!(
                "map: {} does not contain declared merge key: {key}",
                go_map(pm)
            ));
        };
        let at = items.iter().position(|o| o.get(key) == Some(id));
        if pm.get(DIRECTIVE).and_then(Json::as_str) == Some("delete") {
            items.retain(|o| o.get(key) != Some(id));
            continue;
        }
        match at {
            Some(i) => {
                let current = items[i].as_object().cloned().unwrap_or_default();
                match merge_map(current, pm, item_ty)? {
                    Some(m) => items[i] = Json::Object(m),
                    None => {
                        items.remove(i);
                    }
                }
            }
            None => {
                if let Some(m) = merge_map(Map::new(), pm, item_ty)? {
                    items.push(Json::Object(m));
                }
            }
        }
    }
    Ok(Json::Array(items))
}

/// Go's `%v` of a map, as strategicpatch's errors print a list item: `map[image:nginx]`.
fn go_map(m: &Map<String, Json>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.stable_sort();
    let cells: Vec<String> = keys
        .into_iter()
        .map(|k| {
            let v = match &m[k] {
                Json::String(s) => s.clone(),
                Json::Object(o) => go_map(o),
                other => other.to_string(),
            };
            format!("{k}:{v}")
        })
        .collect();
    format!("map[{}]", cells.join(" "))
}

/// RFC 6902: applies each operation in turn (`add`, `remove`, `replace`, `move`, `copy`,
/// `test`), failing with the evanphx/json-patch library's words.
pub fn json_patch(original: &Json, ops: &Json) -> Result<Json, String> {
    let Json::Array(ops) = ops else {
        return Err("json: cannot unmarshal object into Go value of type jsonpatch.Patch".into());
    };
    let mut doc = original.clone();
    for op in ops {
        let name = op.get("op").and_then(Json::as_str).unwrap_or_default();
        let path = op
            .get("path")
            .and_then(Json::as_str)
            .ok_or_else(|| format!("jsonpatch {name} operation missing path"))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| format!("jsonpatch {name} operation missing value"))
        };
        let from = || {
            op.get("from")
                .and_then(Json::as_str)
                .ok_or_else(|| format!("jsonpatch {name} operation missing from"))
        };
        match name {
            "add" => add(&mut doc, path, value()?)?,
            "remove" => {
                remove(&mut doc, path).map_err(|e| {
                    format!("jsonpatch remove operation does not apply: doc is missing path: {path:?}: {e}")
                })?;
            }
            "replace" => {
                let v = value()?;
                let slot = doc.pointer_mut(path).ok_or_else(|| {
                    format!("jsonpatch replace operation does not apply: doc is missing key: {path}: missing value")
                })?;
                *slot = v;
            }
            "move" => {
                let from = from()?;
                let v = remove(&mut doc, from).map_err(|e| {
                    format!("jsonpatch move operation does not apply: doc is missing from path: {from}: {e}")
                })?;
                add(&mut doc, path, v)?;
            }
            "copy" => {
                let from = from()?;
                let v = doc.pointer(from).cloned().ok_or_else(|| {
                    format!("jsonpatch copy operation does not apply: doc is missing from path: {from}: missing value")
                })?;
                add(&mut doc, path, v)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&value()?) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(doc)
}

/// Splits a JSON pointer into its parent's pointer and its last token, unescaped.
fn split_pointer(path: &str) -> Option<(&str, String)> {
    let (parent, last) = path.rsplit_once('/')?;
    Some((parent, last.replace("~1", "/").replace("~0", "~")))
}

fn add(doc: &mut Json, path: &str, value: Json) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let missing = || {
        format!(
            "jsonpatch add operation does not apply: doc is missing path: {path:?}: missing value"
        )
    };
    let (parent, last) = split_pointer(path).ok_or_else(missing)?;
    match doc.pointer_mut(parent).ok_or_else(missing)? {
        Json::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Json::Array(items) => {
            let at = if last == "-" {
                items.len()
            } else {
                last.parse::<usize>()
                    .ok()
                    .filter(|i| *i <= items.len())
                    .ok_or_else(|| {
                        format!("Unable to access invalid index: {last}: invalid index referenced")
                    })?
            };
            items.insert(at, value);
            Ok(())
        }
        _ => Err(missing()),
    }
}

fn remove(doc: &mut Json, path: &str) -> Result<Json, String> {
    let (parent, last) = split_pointer(path).ok_or("missing value")?;
    match doc.pointer_mut(parent).ok_or("missing value")? {
        Json::Object(m) => m.remove(&last).ok_or_else(|| "missing value".into()),
        Json::Array(items) => {
            let i = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i < items.len())
                .ok_or_else(|| format!("Unable to remove invalid index: {last}"))?;
            Ok(items.remove(i))
        }
        _ => Err("missing value".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::openapi;
    use serde_json::json;

    fn deployment() -> TypeRef {
        openapi::resource("apps/v1", "Deployment")
            .expect("served")
            .root()
    }

    fn live() -> Json {
        json!({"spec": {"template": {"metadata": {"finalizers": ["a"]}, "spec": {"containers": [
            {"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}]},
            {"name": "log", "image": "busybox"}
        ]}}}})
    }

    #[test]
    fn a_merge_patch_deletes_nulls_merges_maps_and_replaces_lists() {
        let mut t = json!({"a": {"b": 1, "c": 2}, "d": [1]});
        merge(&mut t, &json!({"a": {"b": null, "e": 3}, "d": [2]}));
        assert_eq!(t, json!({"a": {"c": 2, "e": 3}, "d": [2]}));
    }

    #[test]
    fn a_container_patched_by_name_keeps_its_other_fields_and_siblings() {
        let p = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.26"}
        ]}}}});
        let out = strategic_merge(&live(), &p, deployment()).unwrap();
        assert_eq!(
            out.pointer("/spec/template/spec/containers").unwrap(),
            &json!([
                {"name": "web", "image": "nginx:1.26", "ports": [{"containerPort": 80}]},
                {"name": "log", "image": "busybox"}
            ])
        );
        // A JSON merge patch of the same document replaces the list.
        let mut merged = live();
        merge(&mut merged, &p);
        assert_eq!(
            merged.pointer("/spec/template/spec/containers").unwrap(),
            &json!([{"name": "web", "image": "nginx:1.26"}])
        );
    }

    #[test]
    fn directives_delete_replace_and_add_items() {
        let p = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "log", "$patch": "delete"},
            {"name": "sidecar", "image": "envoy"}
        ]}}}});
        let out = strategic_merge(&live(), &p, deployment()).unwrap();
        let names: Vec<&str> = out
            .pointer("/spec/template/spec/containers")
            .and_then(Json::as_array)
            .unwrap()
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(names, ["web", "sidecar"]);
        let p = json!({"spec": {"template": {"spec": {"containers": [
            {"$patch": "replace"}, {"name": "only", "image": "x"}
        ]}}}});
        let out = strategic_merge(&live(), &p, deployment()).unwrap();
        assert_eq!(
            out.pointer("/spec/template/spec/containers").unwrap(),
            &json!([{"name": "only", "image": "x"}])
        );
    }

    #[test]
    fn a_set_of_values_merges_and_a_delete_from_primitive_list_removes() {
        let p = json!({"spec": {"template": {"metadata": {"finalizers": ["b", "a"]}}}});
        let out = strategic_merge(&live(), &p, deployment()).unwrap();
        assert_eq!(
            out.pointer("/spec/template/metadata/finalizers").unwrap(),
            &json!(["a", "b"])
        );
        let p = json!({"spec": {"template": {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}}});
        let out = strategic_merge(&live(), &p, deployment()).unwrap();
        assert_eq!(
            out.pointer("/spec/template/metadata/finalizers").unwrap(),
            &json!([])
        );
    }

    #[test]
    fn an_item_without_its_merge_key_is_refused_in_strategicpatch_words() {
        let p = json!({"spec": {"template": {"spec": {"containers": [{"image": "nginx"}]}}}});
        assert_eq!(
            strategic_merge(&live(), &p, deployment()),
            Err("map: map[image:nginx] does not contain declared merge key: name".into())
        );
    }

    #[test]
    fn the_merge_diff_of_a_patched_object_has_the_patchs_effect() {
        let p = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.26"}
        ]}}}});
        let before = live();
        let after = strategic_merge(&before, &p, deployment()).unwrap();
        let mut replayed = before.clone();
        merge(&mut replayed, &merge_diff(&before, &after));
        assert_eq!(replayed, after);
    }

    #[test]
    fn json_patch_operations_apply_in_order_and_fail_in_the_librarys_words() {
        let doc = json!({"spec": {"replicas": 1, "list": ["a"]}});
        let ops = json!([
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "add", "path": "/spec/list/-", "value": "b"},
            {"op": "test", "path": "/spec/replicas", "value": 3},
            {"op": "copy", "from": "/spec/replicas", "path": "/spec/copy"},
            {"op": "move", "from": "/spec/copy", "path": "/spec/moved"},
            {"op": "remove", "path": "/spec/list/0"}
        ]);
        assert_eq!(
            json_patch(&doc, &ops).unwrap(),
            json!({"spec": {"replicas": 3, "list": ["b"], "moved": 3}})
        );
        assert_eq!(
            json_patch(&doc, &json!([{"op": "replace", "path": "/spec/nope", "value": 1}])),
            Err("jsonpatch replace operation does not apply: doc is missing key: /spec/nope: missing value".into())
        );
        assert_eq!(
            json_patch(
                &doc,
                &json!([{"op": "test", "path": "/spec/replicas", "value": 2}])
            ),
            Err("testing value /spec/replicas failed: test failed".into())
        );
    }
}
