//! What a shell does to a console line before kubectl sees it: a here-document becomes standard
//! input and a backslash at the end of a line joins the next one.
//!
//! Course material and the Kubernetes docs create objects with `kubectl apply -f - <<EOF … EOF`
//! or `cat <<EOF | kubectl apply -f -`, and split long commands with `\`. A learner pastes them
//! into the console as they are, so the console reads them as bash would; anything else a shell
//! does (pipes, `;`, substitutions) stays refused by [`super::execute_with_stdin`].

use crate::sim::api::limits::MAX_COMMAND_BYTES;
use crate::sim::input::yaml::MAX_INPUT_BYTES;

/// A console text as the shell hands it to kubectl.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellLine {
    /// The command, on one line.
    pub command: String,
    /// What a here-document feeds the command.
    pub stdin: Option<String>,
    /// What bash itself prints: the warning for a here-document that ends without its delimiter.
    pub warning: Option<String>,
}

/// Why a console text is not one kubectl command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellError {
    /// More than one command (lines after the command or after its here-document).
    SeveralCommands,
    /// `<<<`, a here-string.
    HereString,
    /// A here-document operator with no word after it: bash's own syntax error.
    MissingDelimiter,
    /// Larger than anything the console can take.
    TooLarge(usize),
}

impl ShellError {
    /// What the console prints.
    pub fn message(&self) -> String {
        match self {
            ShellError::SeveralCommands => "error: several commands in one entry are not supported in the playground (run one kubectl command at a time; a here-document (<<EOF … EOF) may follow it)".into(),
            ShellError::HereString => "error: here-strings (<<<) are not supported in the playground (use a here-document: kubectl apply -f - <<EOF … EOF)".into(),
            ShellError::MissingDelimiter => "bash: syntax error near unexpected token `newline'".into(),
            ShellError::TooLarge(n) => format!(
                "error: the command and its here-document are {n} bytes long; at most {} bytes are accepted {}",
                MAX_INPUT_BYTES + MAX_COMMAND_BYTES,
                crate::sim::api::limits::LIMIT_NOTE
            ),
        }
    }
}

/// A here-document operator found on the command line.
struct HereDoc {
    /// The byte range of `<<WORD` in the line, to cut it out.
    start: usize,
    end: usize,
    delimiter: String,
    /// `<<-`: leading tabs are stripped from the body and the delimiter line.
    strip_tabs: bool,
}

/// Reads `text` as bash would read what a learner typed or pasted at the prompt.
pub fn parse(text: &str) -> Result<ShellLine, ShellError> {
    let limit = MAX_INPUT_BYTES + MAX_COMMAND_BYTES;
    if text.len() > limit {
        return Err(ShellError::TooLarge(text.len()));
    }
    let text = text.replace("\r\n", "\n");
    let mut lines = text.trim_start().lines();
    let mut command = String::new();
    // Backslash-newline continues the command on the next line.
    for line in lines.by_ref() {
        match line.strip_suffix('\\') {
            Some(head) => command.push_str(head),
            None => {
                command.push_str(line);
                break;
            }
        }
    }
    let rest: Vec<&str> = lines.collect();
    let Some(doc) = find_here_doc(&command)? else {
        if rest.iter().any(|l| !l.trim().is_empty()) {
            return Err(ShellError::SeveralCommands);
        }
        return Ok(ShellLine {
            command: command.trim().to_string(),
            ..ShellLine::default()
        });
    };
    let mut body = String::new();
    let mut after = None;
    for (i, line) in rest.iter().enumerate() {
        let line = if doc.strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        if line == doc.delimiter {
            after = Some(i + 1);
            break;
        }
        body.push_str(line);
        body.push('\n');
    }
    let warning = match after {
        Some(i) if rest[i..].iter().any(|l| !l.trim().is_empty()) => {
            return Err(ShellError::SeveralCommands)
        }
        Some(_) => None,
        None => Some(format!(
            "bash: warning: here-document at line 1 delimited by end-of-file (wanted `{}')",
            doc.delimiter
        )),
    };
    let line = format!("{}{}", &command[..doc.start], &command[doc.end..]);
    Ok(ShellLine {
        command: without_cat(&line).trim().to_string(),
        stdin: Some(body),
        warning,
    })
}

/// True while what was typed so far cannot run yet, as bash shows its `>` prompt: a
/// here-document still open, or a line that ends in a backslash. Enter then starts a new line.
pub fn needs_more(text: &str) -> bool {
    let text = text.replace("\r\n", "\n");
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return false;
    }
    if text.ends_with('\\') {
        return true;
    }
    match parse(trimmed) {
        Ok(l) => l.warning.is_some(),
        Err(_) => false,
    }
}

/// The first `<<WORD` outside quotes, if any.
fn find_here_doc(line: &str) -> Result<Option<HereDoc>, ShellError> {
    let bytes = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'<' && bytes.get(i + 1) == Some(&b'<') => {
                if bytes.get(i + 2) == Some(&b'<') {
                    return Err(ShellError::HereString);
                }
                let start = i;
                i += 2;
                let strip_tabs = bytes.get(i) == Some(&b'-');
                if strip_tabs {
                    i += 1;
                }
                while bytes.get(i).is_some_and(|b| *b == b' ' || *b == b'\t') {
                    i += 1;
                }
                let (delimiter, end) = delimiter_word(line, i);
                if delimiter.is_empty() {
                    return Err(ShellError::MissingDelimiter);
                }
                return Ok(Some(HereDoc {
                    start,
                    end,
                    delimiter,
                    strip_tabs,
                }));
            }
            None => {}
        }
        i += 1;
    }
    Ok(None)
}

/// The delimiter word starting at byte `from` with its quotes removed (`'EOF'`, `"EOF"`, `E"O"F`
/// all mean `EOF`), and the byte after it.
fn delimiter_word(line: &str, from: usize) -> (String, usize) {
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for (at, ch) in line[from..].char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => word.push(ch),
            None if ch == '\'' || ch == '"' => quote = Some(ch),
            None if ch.is_whitespace() || matches!(ch, '|' | ';' | '&' | '<' | '>') => {
                return (word, from + at)
            }
            None => word.push(ch),
        }
    }
    (word, line.len())
}

/// `cat | kubectl apply -f -` (what is left of `cat <<EOF | kubectl …`): the command after the
/// pipe, since cat only passes the here-document on.
fn without_cat(line: &str) -> &str {
    let trimmed = line.trim_start();
    match trimmed.strip_prefix("cat") {
        Some(rest) if rest.trim_start().starts_with('|') => {
            rest.trim_start().trim_start_matches('|')
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n";

    #[test]
    fn a_here_document_after_the_command_becomes_its_standard_input() {
        let text = format!("kubectl apply -f - <<EOF\n{DEPLOYMENT}EOF\n");
        let l = parse(&text).expect("one command");
        assert_eq!(l.command, "kubectl apply -f -");
        assert_eq!(l.stdin.as_deref(), Some(DEPLOYMENT));
        assert_eq!(l.warning, None);
    }

    #[test]
    fn cat_piped_into_kubectl_quoted_delimiters_and_tab_stripping_read_as_bash_reads_them() {
        let piped = parse(&format!(
            "cat <<'EOF' | kubectl apply -f -\n{DEPLOYMENT}EOF"
        ))
        .unwrap();
        assert_eq!(piped.command, "kubectl apply -f -");
        assert_eq!(piped.stdin.as_deref(), Some(DEPLOYMENT));
        let quoted = parse("kubectl apply -f- << \"END\"\nkind: Pod\nEND\n").unwrap();
        assert_eq!(quoted.command, "kubectl apply -f-");
        assert_eq!(quoted.stdin.as_deref(), Some("kind: Pod\n"));
        let tabs = parse("kubectl apply -f - <<-EOF\n\tkind: Pod\n\tEOF").unwrap();
        assert_eq!(tabs.stdin.as_deref(), Some("kind: Pod\n"));
        // `<<` inside quotes is an argument, not a redirection.
        let arg = parse("kubectl annotate pod x note='a << b'").unwrap();
        assert_eq!(arg.command, "kubectl annotate pod x note='a << b'");
        assert_eq!(arg.stdin, None);
    }

    #[test]
    fn a_backslash_at_the_end_of_a_line_continues_the_command() {
        let l =
            parse("kubectl create deployment web \\\n  --image=nginx:1.27 \\\n  --replicas=2\n")
                .unwrap();
        assert_eq!(
            l.command,
            "kubectl create deployment web   --image=nginx:1.27   --replicas=2"
        );
        assert!(needs_more("kubectl scale deployment web \\"));
    }

    #[test]
    fn an_unterminated_here_document_runs_with_bashs_warning_and_keeps_enter_adding_lines() {
        let text = "kubectl apply -f - <<EOF\nkind: Pod\n";
        assert!(needs_more(text));
        assert!(needs_more("kubectl apply -f - <<EOF"));
        let l = parse(text).unwrap();
        assert_eq!(l.stdin.as_deref(), Some("kind: Pod\n"));
        assert_eq!(
            l.warning.as_deref(),
            Some("bash: warning: here-document at line 1 delimited by end-of-file (wanted `EOF')")
        );
        assert!(!needs_more(&format!("{text}EOF")));
        assert!(!needs_more("kubectl get pods"));
        assert!(!needs_more(""));
    }

    #[test]
    fn several_commands_and_here_strings_are_refused_with_a_message() {
        assert_eq!(
            parse("kubectl get pods\nkubectl get nodes"),
            Err(ShellError::SeveralCommands)
        );
        assert_eq!(
            parse("kubectl apply -f - <<EOF\nkind: Pod\nEOF\nkubectl get pods"),
            Err(ShellError::SeveralCommands)
        );
        assert_eq!(
            parse("kubectl apply -f - <<< 'kind: Pod'"),
            Err(ShellError::HereString)
        );
        assert_eq!(
            parse("kubectl apply -f - <<"),
            Err(ShellError::MissingDelimiter)
        );
        // Blank lines around one command are what a paste brings along.
        assert_eq!(
            parse("\n  kubectl get pods \n\n").unwrap().command,
            "kubectl get pods"
        );
        let huge = "x".repeat(MAX_INPUT_BYTES + MAX_COMMAND_BYTES + 1);
        assert!(matches!(parse(&huge), Err(ShellError::TooLarge(_))));
    }
}
