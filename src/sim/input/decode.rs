//! From manifest text to validated, defaulted objects, with diagnostics that say what and where.
//!
//! The pipeline per document, each step reporting in kubectl's words:
//! 1. YAML → JSON with positions ([`yaml::parse_documents`]); a syntax error stops the file.
//! 2. `apiVersion` and `kind` are resolved: a simulated kind, a built-in kind the playground
//!    only stores (ConfigMap, Secret, StatefulSet…, read from the upstream definitions), or a
//!    served custom kind; anything else is kubectl's "no matches for kind".
//! 3. Strict decoding: every built-in kind is first decoded as Go decodes it into its upstream
//!    type ([`openapi::check`]), so a type mismatch anywhere is refused in Go's words; the
//!    simulated kinds then decode into the typed structs of `types.rs`, whose unknown fields are
//!    errors and whose fields kept as opaque JSON are reported once as "accepted but not
//!    simulated". Each finding is positioned at its field.
//! 4. Defaulting ([`admission::apply_defaults`]) then validation ([`validation::validate`]).
//!
//! A document with any error is dropped; the others still load. Nothing here panics on any
//! input (a property test feeds it random and mutated manifests).

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::controller_doc::{ControllerDoc, CONTROLLER_KIND};
use super::diagnostic::{Diagnostic, Severity};
use super::yaml::{self, push_index, push_key, Span, YamlDoc};
use crate::sim::api::admission::apply_defaults;
use crate::sim::api::apiextensions::{CustomResourceDefinition, CRD_API_VERSION};
use crate::sim::api::limits;
use crate::sim::api::openapi;
use crate::sim::api::strict::{decode_as, decode_at, json_type_for_go};
pub use crate::sim::api::strict::{DecodeError, DecodeErrorKind, DecodeFindings};
use crate::sim::api::types::{CustomKind, CustomObject, Kind, Object, ObjectKey, ObjectMeta};
use crate::sim::api::validation::{invalid_status_message, validate, BadValue, FieldError};
use crate::sort::{CollectTree, StableSort};

/// An object that decoded, defaulted and validated cleanly.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedObject {
    /// The object, defaulted as the API server would store it.
    pub object: Object,
    /// The document as written, before defaulting: what `kubectl apply` records in the
    /// last-applied annotation and merges, so that fields the user never wrote stay the server's.
    pub written: Json,
    /// Where its document starts (for "jump to definition" in the editor).
    pub span: Span,
    /// Which non-empty document of the file it came from, counting from 0.
    pub doc_index: usize,
}

/// Everything a manifest file yielded: objects, the playground scenario if any, and findings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded {
    /// Objects that loaded cleanly, in file order.
    pub objects: Vec<DecodedObject>,
    /// The raw `kubeloop.dev/v1alpha1` `Scenario` document, for the scenario module to decode.
    pub scenario: Option<(Json, YamlDoc)>,
    /// The learners' controllers the file declares (`kubeloop.dev/v1alpha1` `Controller`).
    pub controllers: Vec<ControllerDoc>,
    /// Everything worth telling the user, errors first within each document.
    pub diagnostics: Vec<Diagnostic>,
}

impl Decoded {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
}

/// The `apiVersion` of the playground's own documents.
pub const SCENARIO_API_VERSION: &str = "kubeloop.dev/v1alpha1";
/// The `kind` of the playground's scenario document.
pub const SCENARIO_KIND: &str = "Scenario";

/// Which custom kinds a file may use, and how a CRD in the same file counts.
#[derive(Clone, Debug, Default)]
pub struct Kinds {
    /// The CRDs the cluster serves (Established, not terminating).
    pub served: Vec<CustomResourceDefinition>,
    /// Whether a CRD written in the file serves its kind to the rest of the file, and CRDs are
    /// applied first: how a scenario loads (as Helm and Argo CD apply), not plain `kubectl apply`,
    /// whose resource mapping is made before anything is sent.
    pub file_crds_first: bool,
    /// What becomes of fields the kind does not have (`kubectl apply --validate`).
    pub field_validation: FieldValidation,
}

/// The API server's field validation (`fieldValidation`, which `kubectl --validate` sets): what
/// becomes of a field the kind does not have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Refused: `strict decoding error: unknown field "spec.x"` (kubectl's default).
    #[default]
    Strict,
    /// Dropped, with a warning per field: `unknown field "spec.x"`.
    Warn,
    /// Dropped silently.
    Ignore,
}

impl FieldValidation {
    /// kubectl's `--validate` value: `strict` (or `true`), `warn`, `ignore` (or `false`).
    pub fn from_flag(value: &str) -> Result<FieldValidation, String> {
        match value {
            "strict" | "true" => Ok(FieldValidation::Strict),
            "warn" => Ok(FieldValidation::Warn),
            "ignore" | "false" => Ok(FieldValidation::Ignore),
            other => Err(format!(
                "invalid - validate option {other:?}; must be one of: strict (or true), warn, ignore (or false)"
            )),
        }
    }
}

impl Kinds {
    /// A scenario's kinds: the cluster's CRDs and the file's own, CRDs first.
    pub fn for_scenario(served: Vec<CustomResourceDefinition>) -> Kinds {
        Kinds {
            served,
            file_crds_first: true,
            field_validation: FieldValidation::Strict,
        }
    }

    /// `kubectl apply -f`'s kinds: only what the cluster serves before the command runs.
    pub fn for_kubectl(served: Vec<CustomResourceDefinition>) -> Kinds {
        Kinds {
            served,
            file_crds_first: false,
            field_validation: FieldValidation::Strict,
        }
    }
}

/// The CRD among `crds` that serves `kind` at `api_version`.
fn serving<'c>(
    crds: &'c [CustomResourceDefinition],
    api_version: &str,
    kind: &str,
) -> Option<&'c CustomResourceDefinition> {
    let (group, version) = api_version.rsplit_once('/')?;
    crds.iter().find(|c| {
        c.spec.group == group && c.spec.names.kind == kind && c.served_version(version).is_some()
    })
}

/// Decodes every document of a manifest file, with no custom kinds served but those the file
/// defines. Never fails: problems are diagnostics.
pub fn decode_manifests(file: &str, text: &str) -> Decoded {
    decode_manifests_with(file, text, &Kinds::for_scenario(Vec::new()))
}

/// Decodes every document of a manifest file against the custom kinds of `kinds`.
pub fn decode_manifests_with(file: &str, text: &str, kinds: &Kinds) -> Decoded {
    let mut out = Decoded::default();
    let docs = match yaml::parse_documents(text) {
        Ok(docs) => docs,
        Err(mut d) => {
            d.file = file.to_string();
            out.diagnostics.push(d);
            return out;
        }
    };
    let mut seen: BTreeMap<ObjectKey, u32> = BTreeMap::new();
    let mut over_cap = false;
    let (file_crds, generated) = if kinds.file_crds_first {
        (file_crds(&docs), generated_crds(&docs))
    } else {
        (Vec::new(), Vec::new())
    };
    // A scenario's add-ons are installed before its objects are applied: their kinds are served.
    let mut served = kinds.served.clone();
    if kinds.file_crds_first {
        served.extend(addon_crds(&docs));
    }
    for (index, doc) in docs.into_iter().enumerate() {
        let mut ctx = DocContext {
            file,
            index,
            out: &mut out,
            seen: &mut seen,
            over_cap: &mut over_cap,
            served: &served,
            file_crds: &file_crds,
            generated: &generated,
            field_validation: kinds.field_validation,
            text,
        };
        ctx.decode_document(doc);
    }
    if kinds.file_crds_first {
        // What the rest lives in or is defined by goes first, as Helm and Argo CD order an
        // install: Namespaces, then CustomResourceDefinitions.
        out.objects.stable_sort_by_key(|o| match o.object.kind() {
            Kind::Namespace => 0,
            Kind::CustomResourceDefinition => 1,
            _ => 2,
        });
    }
    out
}

/// The CustomResourceDefinitions a file writes, decoded and defaulted as they will be created.
fn file_crds(docs: &[YamlDoc]) -> Vec<CustomResourceDefinition> {
    docs.iter()
        .filter(|d| {
            d.value.get("kind").and_then(Json::as_str) == Some("CustomResourceDefinition")
                && d.value.get("apiVersion").and_then(Json::as_str) == Some(CRD_API_VERSION)
        })
        .filter_map(|d| {
            let (mut o, _) = decode_object(Kind::CustomResourceDefinition, &d.value).ok()?;
            apply_defaults(&mut o);
            if !validate(&o, None).is_empty() {
                return None;
            }
            match o {
                Object::CustomResourceDefinition(c) => Some(*c),
                _ => None,
            }
        })
        .collect()
}

/// The CRDs the add-ons of the file's Scenario document install (`spec.addons: [kro]`).
fn addon_crds(docs: &[YamlDoc]) -> Vec<CustomResourceDefinition> {
    let scenario = docs.iter().find(|d| {
        d.value.get("kind").and_then(Json::as_str) == Some(SCENARIO_KIND)
            && d.value.get("apiVersion").and_then(Json::as_str) == Some(SCENARIO_API_VERSION)
    });
    let Some(addons) = scenario
        .and_then(|d| d.value.pointer("/spec/addons"))
        .and_then(Json::as_array)
    else {
        return Vec::new();
    };
    let mut names: Vec<&str> = addons.iter().filter_map(Json::as_str).collect();
    names.dedup();
    names
        .into_iter()
        .flat_map(crate::sim::addons::crds)
        .filter_map(|json| {
            let (mut o, _) = decode_object(Kind::CustomResourceDefinition, &json).ok()?;
            apply_defaults(&mut o);
            match o {
                Object::CustomResourceDefinition(c) => Some(*c),
                _ => None,
            }
        })
        .collect()
}

/// The CRDs kro will generate from the ResourceGraphDefinitions a file writes (those whose graph
/// it accepts): their instances in the same file decode against them, and are created once kro
/// has made the kind served.
fn generated_crds(docs: &[YamlDoc]) -> Vec<CustomResourceDefinition> {
    docs.iter()
        .filter(|d| {
            d.value.get("kind").and_then(Json::as_str) == Some("ResourceGraphDefinition")
                && d.value.get("apiVersion").and_then(Json::as_str) == Some("kro.run/v1alpha1")
        })
        .filter_map(|d| {
            let spec = d.value.get("spec")?;
            let graph = crate::sim::kro::graph::build(spec).ok()?;
            let name = d.value.pointer("/metadata/name")?.as_str()?;
            let json = crate::sim::kro::crd::generate(&graph, name, "").ok()?;
            let (mut o, _) = decode_object(Kind::CustomResourceDefinition, &json).ok()?;
            apply_defaults(&mut o);
            match o {
                Object::CustomResourceDefinition(c) => Some(*c),
                _ => None,
            }
        })
        .collect()
}

/// Like [`decode_manifests`] for raw bytes: invalid UTF-8 is reported at its line and column.
pub fn decode_manifest_bytes(file: &str, bytes: &[u8]) -> Decoded {
    match std::str::from_utf8(bytes) {
        Ok(text) => decode_manifests(file, text),
        Err(e) => {
            let valid = String::from_utf8_lossy(&bytes[..e.valid_up_to()]);
            let line = valid.matches('\n').count() + 1;
            let col = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let reason = match e.error_len() {
                Some(_) => format!(
                    "invalid leading UTF-8 octet 0x{:02X}",
                    bytes[e.valid_up_to()]
                ),
                None => "incomplete UTF-8 octet sequence".to_string(),
            };
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            Decoded {
                diagnostics: vec![Diagnostic {
                    file: file.to_string(),
                    line,
                    col: u32::try_from(col).unwrap_or(u32::MAX),
                    severity: Severity::Error,
                    message: format!("error converting YAML to JSON: yaml: line {line}: {reason}"),
                    field: None,
                }],
                ..Decoded::default()
            }
        }
    }
}

struct DocContext<'a> {
    file: &'a str,
    index: usize,
    out: &'a mut Decoded,
    seen: &'a mut BTreeMap<ObjectKey, u32>,
    /// Set once the file went over `limits::MAX_OBJECTS_PER_FILE` (reported once).
    over_cap: &'a mut bool,
    /// The CRDs the cluster serves.
    served: &'a [CustomResourceDefinition],
    /// The CRDs the file defines, when they serve the rest of the file.
    file_crds: &'a [CustomResourceDefinition],
    /// The CRDs kro will generate from the file's ResourceGraphDefinitions.
    generated: &'a [CustomResourceDefinition],
    field_validation: FieldValidation,
    /// The whole file (positions inside a Controller's source are found in it).
    text: &'a str,
}

impl DocContext<'_> {
    /// A learner's controller.
    fn decode_controller(&mut self, doc: &YamlDoc) {
        match super::controller_doc::read(doc, self.text) {
            Ok(c) => {
                if self.out.controllers.iter().any(|o| o.name == c.name) {
                    let msg = format!(
                        "Controller {:?} is declared twice in this file; this one was ignored",
                        c.name
                    );
                    self.push(Severity::Error, doc.span_of("metadata.name"), msg, None);
                } else {
                    self.out.controllers.push(c);
                }
            }
            Err(problems) => {
                for p in problems {
                    self.push(Severity::Error, p.span, p.message, p.field);
                }
            }
        }
    }

    fn push(&mut self, severity: Severity, span: Span, message: String, field: Option<String>) {
        self.out.diagnostics.push(Diagnostic {
            file: self.file.to_string(),
            line: span.line,
            col: span.col,
            severity,
            message,
            field,
        });
    }

    fn decode_document(&mut self, doc: YamlDoc) {
        let kind = doc
            .value
            .get("kind")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let api_version = doc
            .value
            .get("apiVersion")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        if !doc.value.is_object() || kind.is_empty() {
            let msg = format!("Object 'Kind' is missing in '{}'", compact_json(&doc.value));
            self.push(Severity::Error, doc.start, msg, None);
            return;
        }
        if api_version.is_empty() {
            let msg = format!(
                "Object 'apiVersion' is missing in '{}'",
                compact_json(&doc.value)
            );
            self.push(Severity::Error, doc.start, msg, None);
            return;
        }
        let kind_span = doc.span_of("kind");
        if kind == "List" && api_version == "v1" {
            self.decode_list(&doc);
            return;
        }
        if kind == SCENARIO_KIND && api_version == SCENARIO_API_VERSION {
            if self.out.scenario.is_some() {
                let msg = "only one Scenario document is allowed per file; this one was ignored"
                    .to_string();
                self.push(Severity::Error, kind_span, msg, None);
            } else {
                self.out.scenario = Some((doc.value.clone(), doc));
            }
            return;
        }
        if kind == CONTROLLER_KIND && api_version == SCENARIO_API_VERSION {
            self.decode_controller(&doc);
            return;
        }
        let builtin = Kind::from_kind_str(&kind).filter(|k| !matches!(k, Kind::Custom(_)));
        let Some(k) = builtin else {
            if let Some(crd) = serving(self.served, &api_version, &kind) {
                self.decode_custom_doc(crd, &api_version, &doc, None);
                return;
            }
            if let Some(crd) = serving(self.file_crds, &api_version, &kind) {
                let note = format!(
                    "plain kubectl apply would refuse this {kind} the first time (no matches for kind {kind:?} in version {api_version:?}; ensure CRDs are installed first): the playground applies the CustomResourceDefinition first, as Helm and Argo CD do"
                );
                self.decode_custom_doc(crd, &api_version, &doc, Some(note));
                return;
            }
            if let Some(crd) = serving(self.generated, &api_version, &kind) {
                let note = format!(
                    "the playground creates this {kind} once kro serves its kind, from the ResourceGraphDefinition in this file (CustomResourceDefinition {})",
                    crd.metadata.name
                );
                self.decode_custom_doc(crd, &api_version, &doc, Some(note));
                return;
            }
            let stored = openapi::resource(&api_version, &kind)
                .and_then(|r| Some((openapi::stored_kind(&r.group, &r.kind)?, r)));
            if let Some((ck, resource)) = stored {
                self.decode_stored_doc(ck, resource, &api_version, &doc);
            } else {
                let mut msg = format!("no matches for kind {kind:?} in version {api_version:?}");
                if api_version.contains('/') {
                    let name = doc
                        .value
                        .pointer("/metadata/name")
                        .and_then(Json::as_str)
                        .unwrap_or("");
                    let ns = doc
                        .value
                        .pointer("/metadata/namespace")
                        .and_then(Json::as_str)
                        .unwrap_or("");
                    msg = format!(
                        "resource mapping not found for name: {name:?} namespace: {ns:?} from {:?}: {msg}\nensure CRDs are installed first",
                        self.file
                    );
                }
                self.push(Severity::Error, kind_span, msg, Some("kind".into()));
                if kind == "ResourceGraphDefinition" && api_version.starts_with("kro.run/") {
                    let tip = "kro is not installed in this cluster: a Scenario document with \
                               `addons: [kro]` installs it (Reset), as the lesson \
                               \"An operator is just a controller\" does"
                        .to_string();
                    self.push(Severity::Info, kind_span, tip, None);
                }
            }
            return;
        };
        if api_version != k.api_version() {
            let msg = format!("no matches for kind {kind:?} in version {api_version:?}");
            self.push(
                Severity::Error,
                doc.span_of("apiVersion"),
                msg,
                Some("apiVersion".into()),
            );
            return;
        }
        self.decode_typed(k, &api_version, &doc);
    }

    /// A document of a built-in kind the playground stores without simulating it: decoded as Go
    /// decodes it into the upstream type (type errors and unknown fields refused in the API
    /// server's words, at their line), then kept with a note that nothing acts on it.
    fn decode_stored_doc(
        &mut self,
        ck: CustomKind,
        resource: &openapi::Resource,
        api_version: &str,
        doc: &YamlDoc,
    ) {
        let kind_name = &resource.kind;
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        let cannot = |msg: &str| {
            format!("{kind_name} in version {version:?} cannot be handled as a {kind_name}: {msg}")
        };
        let unknown = match openapi::check(resource, &doc.value) {
            Ok(unknown) => unknown,
            Err(e) => {
                let span = locate(doc, &e.path, None);
                self.push(Severity::Error, span, cannot(&e.message), Some(e.path));
                return;
            }
        };
        if self.refuse_unknown(doc, &unknown, &cannot) {
            return;
        }
        // Under `--validate=warn|ignore` the server stores the object without them.
        let mut value = doc.value.clone();
        for path in &unknown {
            remove_path(&mut value, path);
        }
        let findings = RefCell::new(DecodeFindings::default());
        let obj = match decode_custom(ck, &value, &findings) {
            Ok(o) => o,
            Err(e) => {
                let span = locate(doc, &e.path, None);
                self.push(Severity::Error, span, cannot(&e.message), Some(e.path));
                return;
            }
        };
        if openapi::controller_of(ck).is_none() {
            let later = if kind_name == "CronJob" {
                " (the CronJob controller may come later: make a Job to see one run)"
            } else {
                ""
            };
            let msg = format!(
                "{kind_name} is stored and served; no controller acts on it in the playground{later}"
            );
            self.push(Severity::Info, doc.span_of("kind"), msg, None);
        }
        const MAX_UNAVAILABLE: &str = "spec.updateStrategy.rollingUpdate.maxUnavailable";
        if kind_name == "StatefulSet"
            && doc
                .value
                .pointer("/spec/updateStrategy/rollingUpdate/maxUnavailable")
                .is_some()
        {
            let msg = "maxUnavailable is accepted and ignored: its feature gate \
                       (MaxUnavailableStatefulSet) is alpha and off in Kubernetes v1.34, so pods \
                       are replaced one at a time";
            self.push(
                Severity::Info,
                doc.span_of(MAX_UNAVAILABLE),
                msg.into(),
                Some(MAX_UNAVAILABLE.into()),
            );
        }
        self.finish(Object::from(obj), doc);
    }

    /// A document of a custom kind: its metadata strictly, the rest against its CRD's schema
    /// (unknown fields refused as kubectl's strict field validation refuses them, then schema
    /// defaults and value validation), each problem at its line. `note` is said at its `kind`.
    fn decode_custom_doc(
        &mut self,
        crd: &CustomResourceDefinition,
        api_version: &str,
        doc: &YamlDoc,
        note: Option<String>,
    ) {
        let Some(ck) = CustomKind::of(crd) else {
            let msg = format!(
                "no matches for kind {:?} in version {api_version:?}",
                crd.spec.names.kind
            );
            self.push(
                Severity::Error,
                doc.span_of("kind"),
                msg,
                Some("kind".into()),
            );
            return;
        };
        let kind = Kind::Custom(ck);
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        let name = doc
            .value
            .pointer("/metadata/name")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let kind_name = ck.names().kind;
        let cannot = |msg: &str| {
            format!("{kind_name} in version {version:?} cannot be handled as a {kind_name}: {msg}")
        };
        let findings = RefCell::new(DecodeFindings::default());
        let mut obj = match decode_custom(ck, &doc.value, &findings) {
            Ok(o) => o,
            Err(e) => {
                let span = locate(doc, &e.path, None);
                self.push(Severity::Error, span, cannot(&e.message), Some(e.path));
                return;
            }
        };
        if let Some(note) = note {
            self.push(Severity::Info, doc.span_of("kind"), note, None);
        }
        let findings = findings.into_inner();
        if self.refuse_unknown(doc, &findings.unknown, &cannot) {
            return;
        }
        let schema = crd
            .served_version(version)
            .and_then(|v| v.schema.as_ref())
            .and_then(|s| s.open_api_v3_schema.as_ref());
        if let Some(schema) = schema {
            let mut content = Json::Object(std::mem::take(&mut obj.content));
            let unknown = crate::sim::api::schema::prune(&mut content, schema);
            if self.refuse_unknown(doc, &unknown, &cannot) {
                return;
            }
            crate::sim::api::schema::apply_defaults(&mut content, schema);
            let errs = crate::sim::api::schema::validate_value(&content, schema);
            if !errs.is_empty() {
                self.push_invalid(doc, kind, &name, &errs);
                return;
            }
            if let Json::Object(m) = content {
                obj.content = m;
            }
            if crate::sim::api::schema::has_cel_rules(schema) {
                let msg = "the schema's x-kubernetes-validations rules are stored but not enforced by the playground yet";
                self.push(Severity::Info, doc.span_of("kind"), msg.into(), None);
            }
        }
        self.lint_graph(ck, &obj, doc);
        self.finish(Object::from(obj), doc);
    }

    /// A ResourceGraphDefinition kro will refuse: the API server stores it, and kro then reports
    /// it Inactive (GraphAccepted False); the editor says so now, at the field kro names.
    fn lint_graph(&mut self, ck: CustomKind, obj: &CustomObject, doc: &YamlDoc) {
        let names = ck.names();
        if names.group != crate::sim::kro::DEFAULT_GROUP || names.kind != "ResourceGraphDefinition"
        {
            return;
        }
        let Some(spec) = obj.content.get("spec") else {
            return;
        };
        if let Err(e) = crate::sim::kro::graph::build(spec) {
            let msg = format!(
                "kro will not accept this graph (GraphAccepted False): {}",
                e.message
            );
            self.push(Severity::Warning, doc.span_of(&e.field), msg, Some(e.field));
        }
    }

    /// Refuses the fields strict decoding does not know, each at its line, in text order, as
    /// `cannot` words it; true when there were any. Under `--validate=warn` each is a warning
    /// instead, and under `ignore` nothing: the object goes on without them.
    fn refuse_unknown(
        &mut self,
        doc: &YamlDoc,
        paths: &[String],
        cannot: &dyn Fn(&str) -> String,
    ) -> bool {
        for (span, path) in in_text_order(doc, paths) {
            match self.field_validation {
                FieldValidation::Strict => {
                    let msg = cannot(&format!("strict decoding error: unknown field {path:?}"));
                    self.push(Severity::Error, span, msg, Some(path));
                }
                // The decoded object never had the field: it is pruned, as the server prunes it.
                FieldValidation::Warn => {
                    let msg = format!("unknown field {path:?}");
                    self.push(Severity::Warning, span, msg, Some(path));
                }
                FieldValidation::Ignore => {}
            }
        }
        self.field_validation == FieldValidation::Strict && !paths.is_empty()
    }

    /// Each validation error at its field, in the API server's words.
    fn push_invalid(&mut self, doc: &YamlDoc, kind: Kind, name: &str, errs: &[FieldError]) {
        for e in errs {
            let span = locate(doc, &e.field, e.value());
            let msg = invalid_status_message(kind, name, std::slice::from_ref(e));
            self.push(Severity::Error, span, msg, Some(e.field.clone()));
        }
    }

    /// Admission's defaults and validation, then the object is kept (or its errors reported).
    fn finish(&mut self, mut object: Object, doc: &YamlDoc) {
        apply_defaults(&mut object);
        let errs = validate(&object, None);
        if errs.is_empty() {
            self.keep(object, doc);
        } else {
            let name = object.meta().name.clone();
            self.push_invalid(doc, object.kind(), &name, &errs);
        }
    }

    /// Files a decoded object, warning when the file defines it twice.
    fn keep(&mut self, object: Object, doc: &YamlDoc) {
        let key = object.key();
        // Objects named by generateName get distinct names on create: not duplicates.
        if !key.name.is_empty() {
            if let Some(first_line) = self.seen.get(&key) {
                let msg = format!(
                    "{key} is also defined at line {first_line}; the later definition wins"
                );
                self.push(Severity::Warning, doc.start, msg, None);
            }
            self.seen.insert(key, doc.start.line);
        }
        self.out.objects.push(DecodedObject {
            object,
            written: doc.value.clone(),
            span: doc.start,
            doc_index: self.index,
        });
    }

    /// `kind: List` (what `kubectl get -o yaml` prints for several objects): decode each item.
    fn decode_list(&mut self, doc: &YamlDoc) {
        let items = doc
            .value
            .get("items")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, item) in items.into_iter().enumerate() {
            let prefix = push_index("items", i);
            // The item's paths are a contiguous run of the sorted map (`items[1]`, `items[1].x`,
            // also `items[10]…`, filtered out below): a range, not a scan of every span, keeps a
            // List of thousands of items linear.
            let spans = doc
                .spans
                .range::<str, _>((
                    std::ops::Bound::Included(prefix.as_str()),
                    std::ops::Bound::Unbounded,
                ))
                .take_while(|(p, _)| p.starts_with(&prefix))
                .filter_map(|(p, s)| {
                    let rest = p.strip_prefix(&prefix)?;
                    let rest = rest
                        .strip_prefix('.')
                        .or_else(|| rest.is_empty().then_some(rest))?;
                    Some((rest.to_string(), *s))
                })
                .collect_map();
            let start = doc.span_of(&prefix);
            self.decode_document(YamlDoc {
                value: item,
                spans,
                start,
            });
        }
    }

    fn decode_typed(&mut self, kind: Kind, api_version: &str, doc: &YamlDoc) {
        if self.out.objects.len() >= limits::MAX_OBJECTS_PER_FILE {
            if !*self.over_cap {
                *self.over_cap = true;
                self.push(
                    Severity::Error,
                    doc.start,
                    limits::too_many_objects_message(),
                    None,
                );
            }
            return;
        }
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        let cannot = |msg: &str| {
            format!("{kind} in version {version:?} cannot be handled as a {kind}: {msg}")
        };
        let (object, findings) = match decode_object(kind, &doc.value) {
            Ok(ok) => ok,
            Err(e) => {
                let span = locate(doc, &e.path, None);
                let (message, field) = match &e.kind {
                    DecodeErrorKind::Required => {
                        let name = doc
                            .value
                            .pointer("/metadata/name")
                            .and_then(Json::as_str)
                            .unwrap_or("");
                        let fe = FieldError::required(e.path.clone(), "");
                        (invalid_status_message(kind, name, &[fe]), e.path.clone())
                    }
                    DecodeErrorKind::Type | DecodeErrorKind::Other => {
                        (cannot(&e.message), e.path.clone())
                    }
                };
                self.push(Severity::Error, span, message, Some(field));
                return;
            }
        };
        for (span, path) in in_text_order(doc, &findings.opaque) {
            let msg = format!("{path} is accepted but not simulated");
            self.push(Severity::Info, span, msg, Some(path));
        }
        if self.refuse_unknown(doc, &findings.unknown, &cannot) {
            return;
        }
        self.finish(object, doc);
    }
}

/// Removes the field at a Kubernetes field path (`spec.template.spec.containers[0].imagee`,
/// `metadata.labels[app.kubernetes.io/name]`) from `value`, if it is there.
fn remove_path(value: &mut Json, path: &str) {
    let mut segments: Vec<String> = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            segments.push(inner[..end].to_string());
            rest = inner.get(end + 1..).unwrap_or("");
        } else {
            let rest_trimmed = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_trimmed.find(['.', '[']).unwrap_or(rest_trimmed.len());
            segments.push(rest_trimmed[..end].to_string());
            rest = &rest_trimmed[end..];
        }
    }
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut at = value;
    for seg in parents {
        let next = match at {
            Json::Object(m) => m.get_mut(seg.as_str()),
            Json::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        let Some(next) = next else {
            return;
        };
        at = next;
    }
    if let Json::Object(m) = at {
        m.remove(last.as_str());
    }
}

/// Findings come in decoding order (fields sorted by name): each with its place, in text order.
fn in_text_order(doc: &YamlDoc, paths: &[String]) -> Vec<(Span, String)> {
    let mut located: Vec<(Span, String)> = paths
        .iter()
        .map(|p| (locate(doc, p, None), p.clone()))
        .collect();
    located.stable_sort();
    located
}

/// The JSON as Kubernetes quotes it in "missing" errors, cut short for huge documents.
fn compact_json(v: &Json) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        let cut: String = s.chars().take(200).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// Where to point for a field path from validation (`limits[cpu]`) or decoding.
///
/// Tries the value as a map key under the field first (label-key errors name the labels map
/// and carry the key as value), then the path with Kubernetes' `[key]` segments rewritten to
/// the YAML layer's notation, then its parents, then the document start.
fn locate(doc: &YamlDoc, field: &str, value: Option<&BadValue>) -> Span {
    let field = normalize_path(field);
    if let Some(BadValue::Str(s)) = value {
        if let Some(span) = doc.spans.get(&push_key(&field, s)) {
            return *span;
        }
    }
    doc.span_of(&field)
}

fn normalize_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let seg = &after[..close];
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(seg);
            out.push(']');
        } else {
            out = push_key(&out, seg);
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------- strict decoding

/// Decodes JSON into a typed object strictly: collects unknown and opaque fields, and fails on
/// the first type mismatch with Go's `json: cannot unmarshal …` message.
///
/// `apiVersion` and `kind` at the top level are accepted and ignored. Like Go, `null` means
/// "unset" for every field.
pub fn decode_object(kind: Kind, value: &Json) -> Result<(Object, DecodeFindings), DecodeError> {
    // The upstream types first: they know every field, so a value the playground keeps opaque
    // (`env[].value: 8080`) is refused as Go refuses it. Unknown fields are the typed pass's to
    // report, with what it keeps opaque; the CRD's are the upstream types' (below).
    let mut unknown = Vec::new();
    if let Some(resource) = openapi::resource(kind.api_version(), kind.as_str()) {
        unknown = openapi::check(resource, value).map_err(|e| DecodeError {
            kind: if e.message.starts_with("json: cannot unmarshal") {
                DecodeErrorKind::Type
            } else {
                DecodeErrorKind::Other
            },
            path: e.path,
            message: e.message,
        })?;
    }
    let findings = RefCell::new(DecodeFindings::default());
    let object = match kind {
        Kind::Namespace => Object::Namespace(decode_as(value, &findings)?),
        Kind::Node => Object::Node(decode_as(value, &findings)?),
        Kind::Lease => Object::Lease(decode_as(value, &findings)?),
        Kind::Deployment => Object::Deployment(decode_as(value, &findings)?),
        Kind::ReplicaSet => Object::ReplicaSet(decode_as(value, &findings)?),
        Kind::Pod => Object::Pod(decode_as(value, &findings)?),
        Kind::Service => Object::Service(decode_as(value, &findings)?),
        Kind::EndpointSlice => Object::EndpointSlice(decode_as(value, &findings)?),
        Kind::PodDisruptionBudget => Object::PodDisruptionBudget(decode_as(value, &findings)?),
        Kind::Event => Object::Event(decode_as(value, &findings)?),
        Kind::CustomResourceDefinition => {
            // Go's decoding above checked every type and found the unknown fields; what is left
            // is reading the value, with the plain serde decoder the store uses (a strict one
            // for the CRD's forty schema keywords cost about 80 kB of wasm).
            findings.borrow_mut().unknown = std::mem::take(&mut unknown);
            Object::from_json(kind, value.clone())?
        }
        Kind::Custom(c) => Object::from(decode_custom(c, value, &findings)?),
    };
    Ok((object, findings.into_inner()))
}

/// A custom object: its metadata decoded strictly like every object's, the rest kept for the
/// schema of its CRD to judge.
fn decode_custom(
    kind: CustomKind,
    value: &Json,
    findings: &RefCell<DecodeFindings>,
) -> Result<CustomObject, DecodeError> {
    let Json::Object(map) = value else {
        return Err(DecodeError {
            kind: DecodeErrorKind::Type,
            path: String::new(),
            message: format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_type_for_go(value)
            ),
        });
    };
    let metadata = match map.get("metadata") {
        None => ObjectMeta::default(),
        Some(m) => decode_at(m, "metadata", "ObjectMeta", findings)?,
    };
    let api_version = map
        .get("apiVersion")
        .and_then(Json::as_str)
        .unwrap_or(kind.names().api_version)
        .to_string();
    let content = map
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect_object();
    Ok(CustomObject {
        kind,
        api_version,
        metadata,
        content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/manifests/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Every diagnostic rendered `FILE:LINE:COL: [severity] message`, one per line.
    fn render(d: &Decoded) -> String {
        d.diagnostics
            .iter()
            .map(|d| format!("{d} [{}]\n", d.severity))
            .collect()
    }

    fn decode(text: &str) -> Decoded {
        decode_manifests("web.yaml", text)
    }

    #[test]
    fn real_manifests_from_the_docs_load_cleanly() {
        let cases = [
            ("nginx-deployment.yaml", 1),
            ("service.yaml", 1),
            ("pdb.yaml", 1),
            ("pod-full.yaml", 1),
            ("multi-doc.yaml", 4),
            ("nodes-and-replicaset.yaml", 2),
        ];
        for (name, objects) in cases {
            let d = decode_manifests(name, &fixture(name));
            assert!(!d.has_errors(), "{name}:\n{}", render(&d));
            assert_eq!(d.objects.len(), objects, "{name}");
        }
    }

    #[test]
    fn opaque_fields_are_accepted_but_reported_as_not_simulated() {
        let d = decode_manifests("pod-full.yaml", &fixture("pod-full.yaml"));
        insta::assert_snapshot!(render(&d), @r###"
        pod-full.yaml:16:3: spec.securityContext is accepted but not simulated [info]
        pod-full.yaml:19:3: spec.volumes is accepted but not simulated [info]
        pod-full.yaml:44:5: spec.initContainers[0].command is accepted but not simulated [info]
        pod-full.yaml:48:5: spec.containers[0].args is accepted but not simulated [info]
        pod-full.yaml:51:5: spec.containers[0].env is accepted but not simulated [info]
        pod-full.yaml:81:7: spec.containers[0].startupProbe.tcpSocket is accepted but not simulated [info]
        pod-full.yaml:85:5: spec.containers[0].securityContext is accepted but not simulated [info]
        pod-full.yaml:88:5: spec.containers[0].volumeMounts is accepted but not simulated [info]
        "###);
    }

    #[test]
    fn the_multi_document_file_stores_the_config_map_with_a_note() {
        let d = decode_manifests("multi-doc.yaml", &fixture("multi-doc.yaml"));
        insta::assert_snapshot!(render(&d), @"multi-doc.yaml:4:1: ConfigMap is stored and served; no controller acts on it in the playground [info]");
        let kinds: Vec<String> = d
            .objects
            .iter()
            .map(|o| format!("{} doc {}", o.object.key(), o.doc_index))
            .collect();
        assert_eq!(
            kinds,
            [
                "ConfigMap/default/web-config doc 0",
                "Deployment/default/web doc 1",
                "Service/default/web doc 2",
                "PodDisruptionBudget/default/web doc 3"
            ]
        );
        assert_eq!(d.objects[1].span, Span { line: 10, col: 1 });
    }

    #[test]
    fn decoded_objects_are_defaulted() {
        let d = decode_manifests("nginx-deployment.yaml", &fixture("nginx-deployment.yaml"));
        let dep = d.objects[0].object.as_deployment().expect("a Deployment");
        assert_eq!(dep.metadata.namespace, "default");
        assert_eq!(dep.spec.progress_deadline_seconds, Some(600));
        let c = &dep.spec.template.spec.containers[0];
        assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"));
        assert_eq!(c.ports[0].protocol.as_deref(), Some("TCP"));
    }

    #[test]
    fn unknown_field_is_reported_at_its_line_and_column() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicass: 3\n  template:\n    spec:\n      containers:\n      - name: a\n        image: b\n        imagee: c\n";
        let d = decode(text);
        assert!(d.objects.is_empty());
        insta::assert_snapshot!(render(&d), @r###"
        web.yaml:6:3: Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicass" [error]
        web.yaml:12:9: Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagee" [error]
        "###);
        assert_eq!(d.diagnostics[0].field.as_deref(), Some("spec.replicass"));
    }

    #[test]
    fn type_errors_read_like_the_api_server() {
        let cases = [
            (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: three\n",
                "web.yaml:6:3: Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    version: 2\nspec:\n  containers: []\n",
                "web.yaml:6:5: Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: b\n    ports:\n    - containerPort: 1.5\n",
                "web.yaml:10:7: Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32",
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: {name: a}\n",
                "web.yaml:6:3: Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container",
            ),
            (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  strategy:\n    rollingUpdate:\n      maxSurge: true\n",
                "web.yaml:8:7: Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
            ),
            (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        env:\n        - name: PORT\n          value: 8080\n",
                "web.yaml:13:11: Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string",
            ),
            (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: web\n",
                "web.yaml:3:1: Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field Deployment.metadata of type v1.ObjectMeta",
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: b\n",
                "web.yaml:7:5: Pod \"p\" is invalid: spec.containers[0].name: Required value",
            ),
        ];
        for (text, want) in cases {
            let d = decode(text);
            assert_eq!(
                render(&d).trim_end(),
                format!("{want} [error]"),
                "for:\n{text}"
            );
        }
    }

    #[test]
    fn kinds_and_versions_are_checked_like_kubectl() {
        let cases = [
            ("kind: Deployment\nmetadata: {name: x}\n", "web.yaml:1:1: Object 'apiVersion' is missing in '{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"x\"}}' [error]"),
            ("apiVersion: v1\nmetadata: {name: x}\n", "web.yaml:1:1: Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}' [error]"),
            ("- a\n- b\n", "web.yaml:1:1: Object 'Kind' is missing in '[\"a\",\"b\"]' [error]"),
            ("apiVersion: v1\nkind: Deployment\n", "web.yaml:1:1: no matches for kind \"Deployment\" in version \"v1\" [error]"),
            ("apiVersion: extensions/v1beta1\nkind: Deployment\n", "web.yaml:1:1: no matches for kind \"Deployment\" in version \"extensions/v1beta1\" [error]"),
            ("apiVersion: v1\nkind: Foo\n", "web.yaml:2:1: no matches for kind \"Foo\" in version \"v1\" [error]"),
            ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {anything: goes}\n", "web.yaml:4:8: StatefulSet in version \"v1\" cannot be handled as a StatefulSet: strict decoding error: unknown field \"spec.anything\" [error]"),
            ("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: nightly}\n", "web.yaml:2:1: resource mapping not found for name: \"nightly\" namespace: \"\" from \"web.yaml\": no matches for kind \"CronJob\" in version \"batch/v1beta1\"\nensure CRDs are installed first [error]"),
        ];
        for (text, want) in cases {
            assert_eq!(render(&decode(text)).trim_end(), want, "for:\n{text}");
        }
    }

    #[test]
    fn validation_errors_point_at_the_offending_field() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    \"bad key!\": x\nspec:\n  replicas: -1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: other}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        resources:\n          limits: {cpu: 500m}\n          requests: {cpu: \"1\"}\n";
        insta::assert_snapshot!(render(&decode(text)), @r###"
        web.yaml:6:5: Deployment.apps "web" is invalid: metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') [error]
        web.yaml:8:3: Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0 [error]
        web.yaml:13:7: Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels` [error]
        web.yaml:20:11: Deployment.apps "web" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m [error]
        "###);
    }

    #[test]
    fn yaml_syntax_errors_stop_the_file_with_kubectl_wording() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: b: c\n";
        insta::assert_snapshot!(render(&decode(text)), @"web.yaml:8:13: error converting YAML to JSON: yaml: line 8: mapping values are not allowed in this context [error]");
    }

    #[test]
    fn one_scenario_document_per_file_is_returned_raw() {
        let text = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nsteps: [{at: 5s}]\n---\napiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\n";
        let d = decode(text);
        let (value, doc) = d.scenario.as_ref().expect("scenario");
        assert_eq!(value["steps"][0]["at"], "5s");
        assert_eq!(doc.span_of("steps[0].at").line, 4);
        assert_eq!(render(&d).trim_end(), "web.yaml:7:1: only one Scenario document is allowed per file; this one was ignored [error]");
    }

    #[test]
    fn the_same_object_twice_is_a_warning_and_the_later_wins() {
        let doc =
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}]\n";
        let d = decode(&format!("{doc}---\n{doc}"));
        assert_eq!(d.objects.len(), 2);
        assert_eq!(render(&d).trim_end(), "web.yaml:7:1: Service/default/s is also defined at line 1; the later definition wins [warning]");

        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {generateName: job-}\nspec:\n  containers: [{name: a, image: b}]\n";
        let d = decode(&format!("{pod}---\n{pod}"));
        assert_eq!(
            (d.objects.len(), d.diagnostics.len()),
            (2, 0),
            "{}",
            render(&d)
        );
    }

    #[test]
    fn nulls_mean_unset_as_in_go() {
        let d = decode("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: ~\nspec:\n  replicas: null\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}]\n");
        assert!(!d.has_errors(), "{}", render(&d));
        assert_eq!(
            d.objects[0].object.as_deployment().unwrap().spec.replicas,
            Some(1)
        );
    }

    #[test]
    fn invalid_utf8_is_reported_where_it_starts() {
        let d = decode_manifest_bytes(
            "bad.yaml",
            b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: caf\xe9\n",
        );
        assert_eq!(render(&d).trim_end(), "bad.yaml:4:12: error converting YAML to JSON: yaml: line 4: invalid leading UTF-8 octet 0xE9 [error]");
    }

    #[test]
    fn field_paths_with_map_keys_find_their_spans() {
        assert_eq!(
            normalize_path("spec.containers[0].resources.limits[cpu]"),
            "spec.containers[0].resources.limits.cpu"
        );
        assert_eq!(
            normalize_path("metadata.labels[app.kubernetes.io/name]"),
            "metadata.labels[app.kubernetes.io/name]"
        );
        assert_eq!(normalize_path("status.capacity[cpu"), "status.capacity[cpu");
    }

    fn mutated_fixture() -> impl Strategy<Value = String> {
        let names = [
            "nginx-deployment.yaml",
            "service.yaml",
            "pdb.yaml",
            "pod-full.yaml",
            "multi-doc.yaml",
            "nodes-and-replicaset.yaml",
        ];
        let texts: Vec<String> = names.iter().map(|n| fixture(n)).collect();
        (
            prop::sample::select(texts),
            prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, "[ -~\n]{0,3}"), 1..6),
        )
            .prop_map(|(text, edits)| {
                let mut chars: Vec<char> = text.chars().collect();
                for (at, op, s) in edits {
                    if chars.is_empty() {
                        break;
                    }
                    let i = at.index(chars.len());
                    match op {
                        0 => {
                            chars.remove(i);
                        }
                        1 => chars.splice(i..i, s.chars()).for_each(drop),
                        2 => chars[i] = s.chars().next().unwrap_or(' '),
                        _ => {
                            let j = (i + 40).min(chars.len());
                            let copy: Vec<char> = chars[i..j].to_vec();
                            chars.splice(i..i, copy).for_each(drop);
                        }
                    }
                }
                chars.into_iter().collect()
            })
    }

    proptest! {
        #[test]
        fn mutated_manifests_never_panic(text in mutated_fixture()) {
            let d = decode_manifests("m.yaml", &text);
            for diag in &d.diagnostics {
                prop_assert!(diag.line >= 1 && diag.col >= 1, "{diag}");
            }
        }

        #[test]
        fn random_text_never_panics(text in "[ -~\n\t-]{0,300}") {
            let _ = decode_manifests("r.yaml", &text);
        }

        #[test]
        fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode_manifest_bytes("b.yaml", &bytes);
        }
    }
}
