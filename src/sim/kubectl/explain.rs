//! `kubectl explain`: a kind's or field's documentation, from the built-in kinds' OpenAPI
//! definitions and a CRD's schema, printed as kubectl's OpenAPI v3 plaintext template prints it.
//!
//! The layout follows `kubectl/pkg/explain/v2/templates/plaintext.tmpl`: the GROUP/KIND/VERSION
//! header, `FIELD:` for a field path, the description wrapped at 76 columns as sprig's `wrap`
//! does it (byte-counted, existing newlines kept), and the field list with each field's
//! `typeGuess`. The built-in descriptions are the v1.34 definitions' (`api::openapi::docs`);
//! those carry no `enum` lists, so built-in fields show none where a real cluster's OpenAPI v3
//! document lists some (a CRD's `enum` is shown).

use serde_json::Value as Json;

use super::args::{flag, Args, Flag, FlagKind};
use super::util::error;
use super::CommandOutput;
use crate::sim::api::apiextensions::JSONSchemaProps;
use crate::sim::api::openapi::{self, docs, TypeRef};
use crate::sim::api::types::Kind;
use crate::sim::world::Sim;
use crate::sort::StableSort;

pub const EXPLAIN_FLAGS: &[Flag] = &[
    flag("recursive", None, FlagKind::Bool),
    flag("api-version", None, FlagKind::Str),
    flag("output", Some('o'), FlagKind::Str),
];

/// A place in a schema: a built-in Go type, or a node of a CRD's schema.
#[derive(Clone)]
enum Node {
    Go(TypeRef),
    Crd(Box<JSONSchemaProps>),
    /// A CRD's root: the API server publishes it with `apiVersion`, `kind` and `metadata` added.
    CrdRoot(Box<JSONSchemaProps>),
}

struct Field {
    name: String,
    description: String,
    node: Node,
    required: bool,
    enum_: Vec<Json>,
}

impl Node {
    fn fields(&self, docs: &docs::Docs) -> Vec<Field> {
        match self {
            Node::Go(t) => t
                .fields()
                .into_iter()
                .map(|(name, ty)| {
                    let (description, required) = docs.field(*t, name);
                    Field {
                        name: name.to_string(),
                        description: description.to_string(),
                        node: Node::Go(ty),
                        required,
                        enum_: Vec::new(),
                    }
                })
                .collect(),
            Node::Crd(s) | Node::CrdRoot(s) => {
                let mut fields: Vec<Field> = s
                    .properties
                    .iter()
                    .map(|(name, p)| Field {
                        name: name.clone(),
                        description: p.description.clone(),
                        node: Node::Crd(Box::new(p.clone())),
                        required: s.required.contains(name),
                        enum_: p.enum_.clone(),
                    })
                    .collect();
                if matches!(self, Node::CrdRoot(_)) {
                    for (name, f) in type_meta_fields(docs) {
                        if !s.properties.contains_key(&name) {
                            fields.push(f);
                        }
                    }
                    fields.stable_sort_by(|a, b| a.name.cmp(&b.name));
                }
                fields
            }
        }
    }

    /// A list's items or a map's values.
    fn element(&self) -> Option<Node> {
        match self {
            Node::Go(t) => t.element().map(Node::Go),
            Node::Crd(s) | Node::CrdRoot(s) => s
                .items
                .clone()
                .or_else(|| match &s.additional_properties {
                    Some(v @ Json::Object(_)) => JSONSchemaProps::from_json(v).ok().map(Box::new),
                    _ => None,
                })
                .map(Node::Crd),
        }
    }

    /// The node's own description (a CRD node's; a Go struct's type description).
    fn own_description(&self, docs: &docs::Docs) -> String {
        match self {
            Node::Go(t) => docs.description(*t).to_string(),
            Node::Crd(s) | Node::CrdRoot(s) => s.description.clone(),
        }
    }

    fn type_guess(&self) -> String {
        match self {
            Node::Go(t) => t.type_guess(),
            Node::Crd(s) | Node::CrdRoot(s) => crd_type_guess(s),
        }
    }

    /// A Go struct, for cycle detection in `--recursive` (CRD schemas have no references).
    fn struct_ref(&self) -> Option<TypeRef> {
        match self {
            Node::Go(t) if t.is_struct() => Some(*t),
            _ => None,
        }
    }
}

fn crd_type_guess(s: &JSONSchemaProps) -> String {
    if let Some(items) = &s.items {
        return format!("[]{}", crd_type_guess(items));
    }
    if let Some(v @ Json::Object(_)) = &s.additional_properties {
        if let Ok(values) = JSONSchemaProps::from_json(v) {
            return format!("map[string]{}", crd_type_guess(&values));
        }
    }
    match s.type_.as_str() {
        "object" | "" => "Object".to_string(),
        other => other.to_string(),
    }
}

/// `apiVersion`, `kind` and `metadata` as the API server adds them to a CRD's published schema,
/// with the descriptions of the built-in kinds' same fields.
fn type_meta_fields(docs: &docs::Docs) -> Vec<(String, Field)> {
    let Some(config_map) = openapi::resource("v1", "ConfigMap") else {
        return Vec::new();
    };
    let root = config_map.root();
    ["apiVersion", "kind", "metadata"]
        .into_iter()
        .filter_map(|name| {
            let (ty, _) = root.field(name)?;
            let (description, _) = docs.field(root, name);
            let field = Field {
                name: name.to_string(),
                description: description.to_string(),
                node: Node::Go(ty),
                required: false,
                enum_: Vec::new(),
            };
            Some((name.to_string(), field))
        })
        .collect()
}

/// Whether a command line is `kubectl explain …`: the page loads the descriptions first.
pub fn wants_docs(line: &str) -> bool {
    let mut words = crate::sim::scenario::split_words(line).unwrap_or_default();
    if words.first().map(String::as_str) == Some("kubectl") {
        words.remove(0);
    }
    super::find_verb(&words).is_some_and(|i| words[i] == "explain")
}

/// `kubectl explain RESOURCE[.FIELD…]`.
pub fn explain(sim: &Sim, args: &Args) -> CommandOutput {
    let resource = match args.positional.as_slice() {
        [] => {
            return error("You must specify the type of resource to explain. Use \"kubectl api-resources\" for a complete list of supported resources.\n");
        }
        [one] => one,
        _ => return error("We accept only this format: explain RESOURCE\n"),
    };
    if let Some(o) = args.get("output").filter(|o| *o != "plaintext") {
        if o == "plaintext-openapiv2" {
            return super::util::unsupported(
                "kubectl explain --output=plaintext-openapiv2",
                "the playground prints the OpenAPI v3 layout (the default)",
            );
        }
        return error(format!(
            "unsupported output format: {o}; supported formats: plaintext, plaintext-openapiv2"
        ));
    }
    let Some(docs) = docs::get() else {
        return error(format!(
            "kubectl explain needs the API's descriptions ({}), which are not loaded yet: the page fetches them the first time explain runs; run it again in a moment",
            docs::PATH
        ));
    };
    let (kind, path) = match resolve(sim, resource) {
        Ok(found) => found,
        Err(e) => return error(e),
    };
    let Some((group, version, kind_name, root)) = schema_of(sim, kind) else {
        return error(format!("GVK {kind} not found in OpenAPI schema"));
    };
    if let Some(want) = args.get("api-version") {
        let served = if group.is_empty() {
            version.clone()
        } else {
            format!("{group}/{version}")
        };
        if want != served {
            let resource = kind.resource();
            let plural = resource.split('.').next().unwrap_or_default();
            return error(format!(
                "couldn't find resource for \"{}, Resource={plural}\"",
                gvr_string(want)
            ));
        }
    }
    let mut out = String::new();
    if !group.is_empty() {
        out.push_str(&format!("GROUP:      {group}\n"));
    }
    out.push_str(&format!(
        "KIND:       {kind_name}\nVERSION:    {version}\n\n"
    ));
    match render(root, &path, args.bool("recursive"), docs) {
        Ok(body) => out.push_str(&body),
        Err(e) => return error(e),
    }
    out.push('\n');
    CommandOutput::ok(out)
}

/// `apps/v1` as `schema.GroupVersion` prints in a GVR: `apps/v1`; `v1` stays `/v1`.
fn gvr_string(api_version: &str) -> String {
    if api_version.contains('/') {
        api_version.to_string()
    } else {
        format!("/{api_version}")
    }
}

/// Splits `deployments.apps.spec.replicas` into the longest prefix that names a resource and
/// the field path after it, as kubectl's `SplitAndParseResourceRequestWithMatchingPrefix` does.
fn resolve(sim: &Sim, arg: &str) -> Result<(Kind, Vec<String>), String> {
    let parts: Vec<&str> = arg.split('.').collect();
    for n in (1..=parts.len()).rev() {
        let name = parts[..n].join(".");
        let Ok(kind) = super::resources::kind_of(sim.api(), &name) else {
            continue;
        };
        // `pods.spec` is the pods resource and a field, not pods of a group named `spec`.
        let group = parts[1..n].join(".");
        let version = kind.api_version().rsplit('/').next().unwrap_or_default();
        if n == 1 || group == kind.group() || group == format!("{version}.{}", kind.group()) {
            return Ok((kind, parts[n..].iter().map(|s| s.to_string()).collect()));
        }
    }
    super::resources::kind_of(sim.api(), parts[0]).map(|k| (k, Vec::new()))
}

/// The kind's group, version, kind name and root schema.
fn schema_of(sim: &Sim, kind: Kind) -> Option<(String, String, String, Node)> {
    if let Kind::Custom(c) = kind {
        if !c.is_builtin() {
            let crd = sim.api().crd_of(c)?;
            let version = crd.storage_version()?;
            let schema = version
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.clone())
                .unwrap_or_default();
            return Some((
                crd.spec.group.clone(),
                version.name.clone(),
                crd.spec.names.kind.clone(),
                Node::CrdRoot(Box::new(schema)),
            ));
        }
    }
    let r = match kind {
        Kind::Custom(c) => openapi::resource_of(c)?,
        k => openapi::resource(k.api_version(), k.as_str())?,
    };
    Some((
        r.group.clone(),
        r.version.clone(),
        r.kind.clone(),
        Node::Go(r.root()),
    ))
}

/// The template's `output` for the node at the end of `path`: `FIELD:`, `DESCRIPTION:` and
/// `FIELDS:`.
fn render(
    root: Node,
    path: &[String],
    recursive: bool,
    docs: &docs::Docs,
) -> Result<String, String> {
    let mut out = String::new();
    let mut node = root;
    let mut field_description: Option<String> = None;
    let missing = || {
        format!(
            "field \"{}\" does not exist",
            path.last().map_or("", String::as_str)
        )
    };
    for (i, segment) in path.iter().enumerate() {
        loop {
            if let Some(f) = node.fields(docs).into_iter().find(|f| &f.name == segment) {
                if i + 1 == path.len() {
                    out.push_str(&format!("FIELD: {segment} <{}>\n", f.node.type_guess()));
                    if !f.enum_.is_empty() {
                        out.push_str("ENUM:");
                        for v in &f.enum_ {
                            out.push_str("\n    ");
                            out.push_str(&enum_value(v));
                        }
                    }
                    out.push_str("\n\n");
                }
                field_description = Some(f.description);
                node = f.node;
                break;
            }
            // Lists and maps are looked through: `pods.spec.containers.name`.
            match node.element() {
                Some(e) => node = e,
                None => return Err(missing()),
            }
        }
    }
    let mut description = String::new();
    if !matches!(node, Node::Crd(_)) {
        if let Some(d) = field_description.filter(|d| !d.is_empty()) {
            description.push_str(&d);
            description.push('\n');
        }
    }
    let mut at = Some(node.clone());
    while let Some(n) = at {
        let own = n.own_description(docs);
        if !own.is_empty() {
            description.push_str(&own);
            description.push('\n');
        }
        at = n.element();
    }
    if description.is_empty() {
        description.push_str("<empty>");
    }
    out.push_str("DESCRIPTION:\n");
    out.push_str(&indent(&wrap(&description, 76), 4));
    out.push('\n');
    let mut fields = String::new();
    field_list(&node, 1, &mut Vec::new(), recursive, docs, &mut fields);
    if !fields.is_empty() {
        out.push_str("FIELDS:\n");
        out.push_str(&fields);
    }
    Ok(out)
}

/// The template's `fieldList`: each field (with its description, or one line per field and
/// nested fields under it when `recursive`), looking through lists and maps.
fn field_list(
    node: &Node,
    level: usize,
    history: &mut Vec<TypeRef>,
    recursive: bool,
    docs: &docs::Docs,
    out: &mut String,
) {
    let entered = node.struct_ref();
    if let Some(t) = entered {
        if history.contains(&t) {
            return;
        }
        history.push(t);
    }
    let pad = level * 2;
    for f in node.fields(docs) {
        out.push_str(&" ".repeat(pad));
        out.push_str(&format!("{}\t<{}>", f.name, f.node.type_guess()));
        if f.required {
            out.push_str(" -required-");
        }
        if !f.enum_.is_empty() {
            out.push('\n');
            out.push_str(&" ".repeat(pad));
            out.push_str("enum: ");
            let shown: Vec<String> = f.enum_.iter().take(4).map(enum_value).collect();
            out.push_str(&shown.join(", "));
            if f.enum_.len() > 4 {
                out.push_str(", ....");
            }
        }
        out.push('\n');
        if recursive {
            field_list(&f.node, level + 1, history, recursive, docs, out);
        } else {
            let text = if f.description.is_empty() {
                "<no description>"
            } else {
                &f.description
            };
            out.push_str(&indent(&wrap(text, 78 - pad), pad + 2));
            out.push_str("\n\n");
        }
    }
    if let Some(e) = node.element() {
        field_list(&e, level, history, recursive, docs, out);
    }
    if entered.is_some() {
        history.pop();
    }
}

/// An enum value as the template prints it: strings bare, `""` for the empty string.
fn enum_value(v: &Json) -> String {
    match v {
        Json::String(s) if s.is_empty() => "\"\"".to_string(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// sprig's `indent`: every line, the first included, gets `n` spaces.
fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    format!("{pad}{}", text.replace('\n', &format!("\n{pad}")))
}

/// sprig's `wrap` (goutils `WrapCustom` without breaking long words): breaks at the last space
/// that keeps a line within `width` bytes, or after a longer word at the next space; newlines
/// already in the text do not restart the count.
fn wrap(text: &str, width: usize) -> String {
    let bytes = text.as_bytes();
    let width = width.max(1);
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() + 16);
    let mut offset = 0;
    while bytes.len() - offset > width {
        if bytes[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = width + offset + 1;
        match bytes[offset..end].iter().rposition(|b| *b == b' ') {
            Some(space) => {
                out.extend_from_slice(&bytes[offset..offset + space]);
                out.push(b'\n');
                offset += space + 1;
            }
            None => match bytes[offset + width..].iter().position(|b| *b == b' ') {
                Some(space) => {
                    let at = offset + width + space;
                    out.extend_from_slice(&bytes[offset..at]);
                    out.push(b'\n');
                    offset = at + 1;
                }
                None => {
                    out.extend_from_slice(&bytes[offset..]);
                    offset = bytes.len();
                }
            },
        }
    }
    out.extend_from_slice(&bytes[offset..]);
    // Breaks fall only on ASCII spaces, so every piece is whole UTF-8.
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{wants_docs, wrap};

    #[test]
    fn explain_is_found_behind_global_flags_and_nothing_else_wants_the_descriptions() {
        assert!(wants_docs("kubectl explain pods"));
        assert!(wants_docs("-n kube-system explain pods.spec"));
        assert!(!wants_docs("get pods"));
        assert!(
            !wants_docs("get explain"),
            "a resource named explain is not the command"
        );
    }

    #[test]
    fn wrap_breaks_at_the_last_space_within_the_width_and_keeps_long_words_whole() {
        assert_eq!(wrap("aaa bbb ccc", 7), "aaa bbb\nccc");
        assert_eq!(
            wrap("see https://example.com/a/very/long/url here", 10),
            "see\nhttps://example.com/a/very/long/url\nhere"
        );
        assert_eq!(wrap("short", 76), "short");
        assert_eq!(
            wrap("ünïcödé wörds änd möre", 12),
            "ünïcödé\nwörds änd\nmöre"
        );
    }
}
