//! How kubectl prints the errors a command ends with: `cmdutil.CheckErr` over what the command
//! returned (staging/src/k8s.io/kubectl/pkg/cmd/util/helpers.go).
//!
//! A command that acts on several objects gathers its errors (the resource builder's
//! `ContinueOnError` visitor) and returns one error or an aggregate; `CheckErr` then prints:
//! - one 422 `Invalid` status error from its details, not its message:
//!   `The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or
//!   equal to 0`, and with several causes `MultilineError`'s list (`… is invalid: ` then one
//!   `* cause` line each);
//! - any other single status error as `StandardErrorMessage`: `Error from server (NotFound): …`;
//! - several errors one line each (`MultipleErrors`), a status error — an Invalid one too — as
//!   `Error from server (Invalid): Deployment.apps "web" is invalid: [cause, cause]`.
//!
//! Our [`ApiError`] carries the status message but not `StatusDetails`, so the kind, name and
//! causes are read back from the message `apierrors.NewInvalid` writes
//! (`Deployment.apps "web" is invalid: …`, several causes as `[a, b]`).

use crate::sim::api::types::Kind;
use crate::sim::api::validation::qualified_kind;
use crate::sim::api::{ApiError, StatusReason};
use crate::sim::kubectl::CommandOutput;

use super::util::aggregate;

/// One error a command gathered, kept as data until the command ends so that [`check_err`] can
/// print it as kubectl's `CheckErr` prints the error the command returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CmdError {
    /// A `metav1.Status` error from the API server.
    Status {
        /// The server's answer.
        error: ApiError,
        /// What kubectl's `AddSourceToErr` put before the status message (`error when creating
        /// "STDIN"`). A lone Invalid error does not show it: it prints from its details.
        context: Option<String>,
    },
    /// A client-side error, already worded as the playground prints it (`error: …`).
    Line(String),
}

impl From<ApiError> for CmdError {
    fn from(error: ApiError) -> CmdError {
        CmdError::Status {
            error,
            context: None,
        }
    }
}

impl CmdError {
    /// `StandardErrorMessage` for a status error (the aggregate form); the line as is otherwise.
    fn standard(&self) -> String {
        match self {
            CmdError::Status { error, context } => match context {
                Some(c) => format!(
                    "Error from server ({:?}): {c}: {}",
                    error.reason, error.message
                ),
                None => error.kubectl_message(),
            },
            CmdError::Line(l) => l.clone(),
        }
    }
}

/// `cmdutil.CheckErr`'s text for the errors a command returns (empty when there are none): see
/// the module documentation for the three shapes.
pub fn check_err(errs: &[CmdError]) -> String {
    if let [CmdError::Status { error, .. }] = errs {
        if let Some(text) = invalid_text(error) {
            return text;
        }
    }
    errs.iter().map(|e| format!("{}\n", e.standard())).collect()
}

/// Ends a command that acted on several objects: the lines it printed and, on stderr, the
/// errors it gathered as [`check_err`] prints them.
pub fn finish(stdout: String, errs: &[CmdError]) -> CommandOutput {
    CommandOutput {
        ok: errs.is_empty(),
        stdout,
        stderr: check_err(errs),
    }
}

/// The `apierrors.IsInvalid` branch of `checkErr`: `The Deployment "web" is invalid: cause`, or
/// `MultilineError`'s form for several causes (the prefix keeps its trailing space, as
/// `fmt.Fprintln(buf, prefix)` writes it). `None` for any other error.
pub fn invalid_text(e: &ApiError) -> Option<String> {
    if e.reason != StatusReason::Invalid {
        return None;
    }
    let d = InvalidDetails::parse(&e.message)?;
    let prefix = format!("The {} {} is invalid", d.kind(), d.quoted_name);
    Some(match d.causes.as_slice() {
        [] => format!("{prefix}\n"),
        [one] => format!("{prefix}: {one}\n"),
        many => {
            let mut s = format!("{prefix}: \n");
            for c in many {
                s.push_str(&format!("* {c}\n"));
            }
            s
        }
    })
}

/// What kubectl reads from a 422's `StatusDetails`, recovered from the status message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidDetails {
    /// The kind with its group, as the message names it: `Deployment.apps`, `Pod`.
    pub qualified_kind: String,
    /// The name as Go's `%q` writes it, quotes included.
    pub quoted_name: String,
    /// `field: ErrorBody` for each cause, duplicates dropped (`statusCausesToAggrError`).
    pub causes: Vec<String>,
}

impl InvalidDetails {
    /// Reads `Deployment.apps "web" is invalid: body` (the API server's message) or
    /// `The Deployment "web" is invalid: body` (kubectl's, as the playground's apply reports a
    /// dry-run refusal); `None` when the text has neither shape.
    pub fn parse(message: &str) -> Option<InvalidDetails> {
        let (qualified_kind, rest) = match message.strip_prefix("The ") {
            Some(rest) => {
                let (kind, rest) = rest.split_once(' ')?;
                let kind = Kind::ALL.into_iter().find(|k| k.as_str() == kind)?;
                (qualified_kind(kind), rest)
            }
            None => {
                let (kind, rest) = message.split_once(' ')?;
                (kind.to_string(), rest)
            }
        };
        let name_len = go_quoted_len(rest)?;
        let (quoted_name, rest) = rest.split_at(name_len);
        let causes = match rest.strip_prefix(" is invalid") {
            Some("") => Vec::new(),
            Some(body) => split_causes(body.strip_prefix(": ")?),
            None => return None,
        };
        Some(InvalidDetails {
            qualified_kind,
            quoted_name: quoted_name.to_string(),
            causes,
        })
    }

    /// `StatusDetails.Kind`: the kind without its group.
    pub fn kind(&self) -> &str {
        self.qualified_kind
            .split_once('.')
            .map_or(self.qualified_kind.as_str(), |(k, _)| k)
    }

    /// The 422 the API server would answer with these causes (`apierrors.NewInvalid`).
    pub fn to_api_error(&self) -> ApiError {
        ApiError {
            reason: StatusReason::Invalid,
            message: format!(
                "{} {} is invalid: {}",
                self.qualified_kind,
                self.quoted_name,
                aggregate(&self.causes)
            ),
        }
    }

    /// True when both describe the same object, so their causes belong to one 422.
    pub fn same_object(&self, other: &InvalidDetails) -> bool {
        self.qualified_kind == other.qualified_kind && self.quoted_name == other.quoted_name
    }
}

/// Follows Go-quoted strings (`"a\"b"`) through a scan, so that what is inside a quoted
/// value is never read as structure.
#[derive(Default)]
struct Quotes {
    open: bool,
    escaped: bool,
}

impl Quotes {
    /// Takes the next character; true when it belongs to a quoted string (quotes included).
    fn take(&mut self, c: char) -> bool {
        if self.open {
            match c {
                _ if self.escaped => self.escaped = false,
                '\\' => self.escaped = true,
                '"' => self.open = false,
                _ => {}
            }
            true
        } else {
            self.open = c == '"';
            self.open
        }
    }
}

/// The length of the Go-quoted string `s` starts with (`"web"`, `"a\"b"`), quotes included.
fn go_quoted_len(s: &str) -> Option<usize> {
    if !s.starts_with('"') {
        return None;
    }
    let mut quotes = Quotes::default();
    for (i, c) in s.char_indices() {
        quotes.take(c);
        if !quotes.open {
            return Some(i + c.len_utf8());
        }
    }
    None
}

/// `field.ErrorType` strings: what follows `path: ` at the start of every cause.
const ERROR_TYPES: [&str; 10] = [
    "Not found",
    "Required value",
    "Duplicate value",
    "Forbidden",
    "Invalid value",
    "Unsupported value",
    "Too long",
    "Too many",
    "Internal error",
    "Type mismatch",
];

/// Splits an aggregate's `[a, b]` into its causes (a lone cause has no brackets). A cause
/// starts `path: ErrorType`; a `, ` inside a quoted value or a Go struct value (`{MinAvailable:2,
/// MaxUnavailable:"25%"}`) is not followed by that shape and so never splits. Repeats are
/// dropped, as `statusCausesToAggrError` drops them.
fn split_causes(body: &str) -> Vec<String> {
    let Some(inner) = body.strip_prefix('[').and_then(|b| b.strip_suffix(']')) else {
        return vec![body.to_string()];
    };
    let mut causes: Vec<String> = Vec::new();
    let mut push = |c: &str| {
        if !causes.iter().any(|seen| seen == c) {
            causes.push(c.to_string());
        }
    };
    let mut start = 0;
    let mut quotes = Quotes::default();
    for (i, c) in inner.char_indices() {
        if quotes.take(c) {
            continue;
        }
        if c == ',' && inner[i..].starts_with(", ") && starts_cause(&inner[i + 2..]) {
            push(&inner[start..i]);
            start = i + 2;
        }
    }
    push(&inner[start..]);
    causes
}

/// True when `s` opens with `field.path: ErrorType`.
fn starts_cause(s: &str) -> bool {
    let Some((path, rest)) = s.split_once(": ") else {
        return false;
    };
    path.starts_with(|c: char| c.is_ascii_alphabetic())
        && !path.contains(char::is_whitespace)
        && ERROR_TYPES.iter().any(|t| rest.starts_with(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::validation::{invalid_status_message, BadValue, FieldError};

    fn invalid(message: &str) -> ApiError {
        ApiError {
            reason: StatusReason::Invalid,
            message: message.into(),
        }
    }

    #[test]
    fn a_lone_status_error_prints_as_check_err_prints_it() {
        let conflict = ApiError::conflict(Kind::Deployment, "web");
        for (e, want) in [
            (
                invalid("Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
                "The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n".to_string(),
            ),
            (
                // An escaped quote does not end the name.
                invalid(r#"Pod "a\"b" is invalid: metadata.name: Invalid value: "a\"b": bad"#),
                "The Pod \"a\\\"b\" is invalid: metadata.name: Invalid value: \"a\\\"b\": bad\n".into(),
            ),
            (
                // Not NewInvalid's message: printed as StandardErrorMessage prints any status.
                invalid("the server rejected our request due to an error in our request"),
                "Error from server (Invalid): the server rejected our request due to an error in our request\n".into(),
            ),
            (conflict.clone(), format!("{}\n", conflict.kubectl_message())),
        ] {
            assert_eq!(check_err(&[e.clone().into()]), want, "{e:?}");
        }
    }

    #[test]
    fn several_causes_print_as_multiline_error_lists_them() {
        let errs = vec![
            FieldError::invalid(
                "spec.replicas",
                BadValue::Int(-1),
                "must be greater than or equal to 0",
            ),
            FieldError::invalid(
                "spec.ports[0].port",
                BadValue::Int(70000),
                "must be between 1 and 65535, inclusive",
            ),
            FieldError::invalid(
                "spec.replicas",
                BadValue::Int(-1),
                "must be greater than or equal to 0",
            ),
        ];
        let e = invalid(&invalid_status_message(Kind::Deployment, "web", &errs));
        assert_eq!(
            check_err(&[e.into()]),
            "The Deployment \"web\" is invalid: \n\
             * spec.replicas: Invalid value: -1: must be greater than or equal to 0\n\
             * spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive\n"
        );
    }

    #[test]
    fn an_invalid_error_among_several_prints_in_the_standard_aggregate_form() {
        let e = invalid("Deployment.apps \"web\" is invalid: [spec.replicas: Invalid value: -1: x, spec.paused: Forbidden]");
        let missing = CmdError::Line(
            "Error from server (NotFound): deployments.apps \"api\" not found".into(),
        );
        assert_eq!(
            check_err(&[e.into(), missing]),
            "Error from server (Invalid): Deployment.apps \"web\" is invalid: [spec.replicas: Invalid value: -1: x, spec.paused: Forbidden]\n\
             Error from server (NotFound): deployments.apps \"api\" not found\n"
        );
    }

    #[test]
    fn commas_inside_values_do_not_split_causes() {
        let body = "[spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:2, MaxUnavailable:\"25%\"}: minAvailable and maxUnavailable cannot be both set, metadata.name: Invalid value: \"a, spec.x: Invalid value: 1\": bad]";
        let d = InvalidDetails::parse(&format!(
            "PodDisruptionBudget.policy \"a, spec.x: Invalid value: 1\" is invalid: {body}"
        ))
        .expect("parses");
        assert_eq!(d.kind(), "PodDisruptionBudget");
        assert_eq!(d.quoted_name, "\"a, spec.x: Invalid value: 1\"");
        assert_eq!(d.causes.len(), 2, "{:?}", d.causes);
        assert!(d.causes[0].ends_with("cannot be both set"));
    }

    #[test]
    fn kubectls_own_form_reads_back_to_the_api_servers() {
        let d = InvalidDetails::parse(
            "The Deployment \"web\" is invalid: spec.replicas: Required value",
        )
        .expect("parses");
        assert_eq!(
            d.to_api_error().message,
            "Deployment.apps \"web\" is invalid: spec.replicas: Required value"
        );
        assert_eq!(
            InvalidDetails::parse("The Gizmo \"x\" is invalid: a: Forbidden"),
            None
        );
        assert_eq!(InvalidDetails::parse("pods \"x\" not found"), None);
    }
}
