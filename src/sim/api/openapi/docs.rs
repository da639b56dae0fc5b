//! The descriptions and required fields `kubectl explain` prints for the built-in kinds: the
//! prose of the v1.34 OpenAPI definitions, kept out of the first paint in a second generated
//! file (`www/explain/v1.34.json`, by `scripts/gen-openapi.py`).
//!
//! Native builds (the CLI, the tests) compile the file in. The page fetches it the first time
//! someone runs `kubectl explain` and hands it to [`install`]; until then [`get`] has nothing,
//! and explain says so. The file is data, not state: once installed it never changes, so what
//! explain prints does not depend on when it was loaded.

use std::sync::OnceLock;

use serde_json::Value as Json;

use super::{table, TypeRef};

/// Where the page fetches the descriptions from, relative to the page.
pub const PATH: &str = "www/explain/v1.34.json";

/// One struct type's prose.
#[derive(Debug, Default)]
struct TypeDocs {
    description: String,
    /// Each field's description, in the type's field order.
    fields: Vec<String>,
    required: Vec<String>,
}

/// The descriptions of every built-in type, by the same index as the types.
#[derive(Debug)]
pub struct Docs {
    types: Vec<Option<TypeDocs>>,
}

static DOCS: OnceLock<Docs> = OnceLock::new();

/// Reads the descriptions file; refuses one made for other types than the compiled-in ones.
fn parse(text: &str) -> Result<Docs, String> {
    let json: Json =
        serde_json::from_str(text).map_err(|e| format!("{PATH} is not valid JSON: {e}"))?;
    let count = table().types.len();
    if json["types"].as_u64() != Some(count as u64) {
        return Err(format!(
            "{PATH} describes {} types, and this build has {count}: regenerate both with `make openapi`",
            json["types"]
        ));
    }
    let text = |v: &Json| v.as_str().unwrap_or_default().to_string();
    let strings = |v: &Json| v.as_array().into_iter().flatten().map(text).collect();
    let types = json["docs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            d.is_array().then(|| TypeDocs {
                description: text(&d[0]),
                fields: strings(&d[1]),
                required: strings(&d[2]),
            })
        })
        .collect();
    Ok(Docs { types })
}

/// Installs the descriptions the page fetched. Installing twice keeps the first.
pub fn install(text: &str) -> Result<(), String> {
    if DOCS.get().is_none() {
        let docs = parse(text)?;
        let _ = DOCS.set(docs);
    }
    Ok(())
}

/// The descriptions, once there: always in a native build, after [`install`] in the page.
pub fn get() -> Option<&'static Docs> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        const BUNDLED: &str = include_str!("../../../../www/explain/v1.34.json");
        if DOCS.get().is_none() {
            let _ = install(BUNDLED);
        }
    }
    DOCS.get()
}

impl Docs {
    fn of(&self, t: TypeRef) -> Option<&TypeDocs> {
        self.types.get(t.0).and_then(Option::as_ref)
    }

    /// A struct type's own description (empty for other types).
    pub fn description(&self, t: TypeRef) -> &str {
        self.of(t).map_or("", |d| d.description.as_str())
    }

    /// A struct field's description and whether the type requires it.
    pub fn field(&self, t: TypeRef, name: &str) -> (&str, bool) {
        let Some(d) = self.of(t) else {
            return ("", false);
        };
        let at = t.fields().iter().position(|(n, _)| *n == name);
        let description = at.and_then(|i| d.fields.get(i)).map_or("", String::as_str);
        (description, d.required.iter().any(|r| r == name))
    }
}

#[cfg(test)]
mod tests {
    use super::super::resources;

    #[test]
    fn the_bundled_descriptions_match_the_compiled_types() {
        let docs = super::get().expect("native builds bundle the descriptions");
        let pod = resources().iter().find(|r| r.kind == "Pod").unwrap();
        assert_eq!(
            docs.description(pod.root()),
            "Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts."
        );
        let (spec, _) = pod.root().field("spec").unwrap();
        let (containers, _) = spec.field("containers").unwrap();
        let container = containers.item().unwrap();
        assert!(docs.field(container, "name").1, "a container needs a name");
        assert!(!docs.field(container, "image").1);
    }
}
