//! What a container's process does once started, read from its image and command: the
//! playground's convention for containers that end (docs/containers.md).
//!
//! A real container runs a program nobody can simulate; the playground reads only what a learner
//! writes anyway. `sleep N` exits 0 after N seconds; `sh -c "sleep 5; exit 1"` after five with code
//! 1; a shell image with no command (busybox, alpine, ubuntu…) exits 0 at once, as its `sh` does
//! without a terminal (the classic CrashLoopBackOff surprise in a Deployment); an inline program
//! (`perl -e …`, `python -c …`) finishes in a few seconds. Anything the convention does not know
//! runs until it is stopped, as a server does.

use serde_json::Value as Json;

use crate::sim::api::types::Millis;

/// How long a command the convention reads as "at once" takes (startedAt before finishedAt).
pub const AT_ONCE: Millis = 50;
/// How long an inline interpreter program (`perl -e`, `python -c`) computes before it exits 0.
pub const INLINE_PROGRAM: Millis = 5_000;

/// The fate of a started process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    /// It runs until it is stopped.
    Serves,
    /// It exits by itself `after` it started, with `code`.
    Exits { after: Millis, code: i32 },
}

/// Images whose default command is a shell or a REPL, which exits 0 at once without a terminal.
const SHELL_IMAGES: [&str; 18] = [
    "busybox",
    "alpine",
    "ubuntu",
    "debian",
    "centos",
    "fedora",
    "rockylinux",
    "almalinux",
    "amazonlinux",
    "archlinux",
    "bash",
    "hello-world",
    "python",
    "node",
    "perl",
    "ruby",
    "golang",
    "bitnami/kubectl",
];

/// Programs that do their one thing and exit 0 at once.
const ONE_SHOT: [&str; 20] = [
    "echo", "printf", "date", "env", "printenv", "ls", "cat", "hostname", "uname", "whoami", "id",
    "pwd", "touch", "mkdir", "rm", "cp", "mv", "nslookup", "true", ":",
];

const SHELLS: [&str; 5] = ["sh", "bash", "ash", "dash", "zsh"];
const INTERPRETERS: [&str; 6] = ["perl", "python", "python3", "node", "ruby", "php"];

/// The repository of an image reference without registry host, tag or digest
/// (`docker.io/library/busybox:1.36` → `busybox`, `bitnami/kubectl:1.34` → `bitnami/kubectl`).
fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    let last_slash = image.rfind('/').map_or(0, |i| i + 1);
    let image = match image[last_slash..].rfind(':') {
        Some(i) => &image[..last_slash + i],
        None => image,
    };
    let image = image.strip_prefix("docker.io/").unwrap_or(image);
    image.strip_prefix("library/").unwrap_or(image)
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// What a container with this image, `command` (the entrypoint override) and `args` does (both
/// as the container spec stores them: JSON arrays of strings).
pub fn process_of(image: &str, command: Option<&Json>, args: Option<&Json>) -> Process {
    let argv: Vec<&str> = [command, args]
        .into_iter()
        .flatten()
        .filter_map(Json::as_array)
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    match argv.split_first() {
        None if SHELL_IMAGES.contains(&repository(image)) => Process::Exits {
            after: AT_ONCE,
            code: 0,
        },
        None => Process::Serves,
        Some((program, rest)) => program_of(basename(program), rest),
    }
}

/// Whether the process ignores SIGTERM: a shell or `sleep` run as a container's PID 1 installs
/// no handler, and PID 1 gets no default action, so it lives until the grace period ends and
/// the runtime kills it (exit 137). Servers handle SIGTERM and exit 0.
pub fn ignores_sigterm(command: Option<&Json>, args: Option<&Json>) -> bool {
    let first = [command, args]
        .into_iter()
        .flatten()
        .filter_map(Json::as_array)
        .flatten()
        .find_map(Json::as_str);
    first.is_some_and(|p| {
        let p = basename(p);
        p == "sleep" || p == "tail" || SHELLS.contains(&p)
    })
}

/// One program with its arguments.
fn program_of(program: &str, args: &[&str]) -> Process {
    match program {
        "sleep" => match args.first().map(|a| duration(a)) {
            Some(Some(None)) => Process::Serves,
            Some(Some(Some(ms))) => Process::Exits { after: ms, code: 0 },
            // busybox's sleep: a missing or bad operand is a usage error.
            _ => Process::Exits {
                after: AT_ONCE,
                code: 1,
            },
        },
        "false" => Process::Exits {
            after: AT_ONCE,
            code: 1,
        },
        "tail" if args.iter().any(|a| matches!(*a, "-f" | "-F")) => Process::Serves,
        p if ONE_SHOT.contains(&p) => Process::Exits {
            after: AT_ONCE,
            code: 0,
        },
        p if SHELLS.contains(&p) => match script_flag(args) {
            Some(script) => script_of(script),
            // A shell without `-c` and without a terminal reads end-of-file and exits.
            None => Process::Exits {
                after: AT_ONCE,
                code: 0,
            },
        },
        p if INTERPRETERS.contains(&p) => {
            // A cluster of one-letter flags with `e` or `c` in it (`-e`, `-wle`, `-c`), not an
            // option with a value (`-I/usr/lib/perl5`, `-Mbignum=bpi`).
            let inline = args.iter().any(|a| {
                a.strip_prefix('-').is_some_and(|flags| {
                    !flags.is_empty()
                        && flags.bytes().all(|b| b.is_ascii_alphabetic())
                        && (flags.contains('e') || flags.contains('c'))
                })
            });
            if inline {
                Process::Exits {
                    after: INLINE_PROGRAM,
                    code: 0,
                }
            } else if args.is_empty() {
                // A REPL without a terminal.
                Process::Exits {
                    after: AT_ONCE,
                    code: 0,
                }
            } else {
                Process::Serves
            }
        }
        _ => Process::Serves,
    }
}

/// The script of `sh -c SCRIPT` (also `-ec`, `-xc`, `-e -c`).
fn script_flag<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a.starts_with('-') && a.contains('c') {
            return it.next().copied();
        }
        if !a.starts_with('-') {
            return None;
        }
    }
    None
}

/// `sleep`'s operand: seconds with an optional `s`, `m`, `h` or `d` suffix; `Some(None)` for
/// `infinity`; None when it does not parse.
fn duration(arg: &str) -> Option<Option<Millis>> {
    if arg == "infinity" || arg == "inf" {
        return Some(None);
    }
    let (number, unit) = match arg.char_indices().last()? {
        (i, 's') => (&arg[..i], 1_000.0),
        (i, 'm') => (&arg[..i], 60_000.0),
        (i, 'h') => (&arg[..i], 3_600_000.0),
        (i, 'd') => (&arg[..i], 86_400_000.0),
        _ => (arg, 1_000.0),
    };
    let n: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
    Some(Some((n * unit).min(1e15) as Millis))
}

/// A shell script, statement by statement: `sleep` adds time, `exit K` ends it, `true`, `false`
/// and one-shot programs set the status, `&&` and `||` skip as a shell does; a loop, `tail -f`,
/// `exec` of a server or a command the convention does not know keeps it running.
fn script_of(script: &str) -> Process {
    let mut elapsed: Millis = 0;
    let mut status = 0;
    let mut skip_next = false;
    for (statement, op) in statements(script) {
        let words = words(statement);
        if !skip_next && !words.is_empty() {
            let (first, rest) = (words[0].as_str(), &words[1..]);
            let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
            match first {
                "exit" => {
                    let code = rest.first().map_or(Some(status), |c| c.parse::<i32>().ok());
                    return Process::Exits {
                        after: elapsed.max(AT_ONCE),
                        code: code.map_or(2, |c| c & 0xff),
                    };
                }
                "while" | "until" | "for" => return Process::Serves,
                "exec" => {
                    return match rest.split_first() {
                        Some((p, args)) => match program_of(basename(p), args) {
                            Process::Exits { after, code } => Process::Exits {
                                after: (elapsed + after).max(AT_ONCE),
                                code,
                            },
                            Process::Serves => Process::Serves,
                        },
                        None => Process::Serves,
                    }
                }
                "set" | "trap" | "export" | "cd" | "umask" => status = 0,
                p => match program_of(basename(p), &rest) {
                    Process::Serves => return Process::Serves,
                    Process::Exits { after, code } => {
                        elapsed += if after == AT_ONCE { 0 } else { after };
                        status = code;
                    }
                },
            }
        }
        // A skipped statement leaves the status as it was, so `false && a || b` runs `b`.
        skip_next = match op {
            Some(Op::And) => status != 0,
            Some(Op::Or) => status == 0,
            _ => false,
        };
    }
    Process::Exits {
        after: elapsed.max(AT_ONCE),
        code: status,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Seq,
    And,
    Or,
}

/// Splits a script at `;`, newlines, `&&` and `||` outside quotes, with the operator after each.
fn statements(script: &str) -> Vec<(&str, Option<Op>)> {
    let bytes = script.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i, mut quote) = (0, 0, None::<u8>);
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => {
                let op = match (b, bytes.get(i + 1)) {
                    (b'\'' | b'"', _) => {
                        quote = Some(b);
                        None
                    }
                    (b'&', Some(b'&')) => Some((Op::And, 2)),
                    (b'|', Some(b'|')) => Some((Op::Or, 2)),
                    (b';' | b'\n', _) => Some((Op::Seq, 1)),
                    _ => None,
                };
                if let Some((op, len)) = op {
                    out.push((script[start..i].trim(), Some(op)));
                    i += len;
                    start = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push((script[start..].trim(), None));
    out
}

/// A statement's words, with quotes removed.
fn words(statement: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for c in statement.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() || any {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() || any {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(image: &str, argv: &[&str]) -> Process {
        process_of(image, Some(&serde_json::json!(argv)), None)
    }

    fn exits(after: Millis, code: i32) -> Process {
        Process::Exits { after, code }
    }

    #[test]
    fn a_shell_image_without_a_command_exits_zero_at_once() {
        for image in [
            "busybox",
            "busybox:1.36",
            "docker.io/library/alpine:3.20",
            "ubuntu",
        ] {
            assert_eq!(run(image, &[]), exits(AT_ONCE, 0), "{image}");
        }
    }

    #[test]
    fn a_server_image_without_a_command_runs_until_stopped() {
        for image in [
            "nginx:1.27",
            "redis",
            "registry.k8s.io/pause:3.10",
            "myorg/api:v2",
        ] {
            assert_eq!(run(image, &[]), Process::Serves, "{image}");
        }
    }

    #[test]
    fn sleep_exits_zero_after_its_operand_and_infinity_never() {
        assert_eq!(run("busybox", &["sleep", "30"]), exits(30_000, 0));
        assert_eq!(run("busybox", &["/bin/sleep", "2m"]), exits(120_000, 0));
        assert_eq!(run("busybox", &["sleep", "0.5"]), exits(500, 0));
        assert_eq!(run("busybox", &["sleep", "infinity"]), Process::Serves);
        assert_eq!(run("busybox", &["sleep", "soon"]), exits(AT_ONCE, 1));
    }

    #[test]
    fn a_shell_script_adds_its_sleeps_and_ends_with_its_exit_code() {
        assert_eq!(
            run("busybox", &["sh", "-c", "echo start; sleep 20; exit 1"]),
            exits(20_000, 1)
        );
        assert_eq!(
            run("busybox", &["/bin/sh", "-ec", "sleep 5\necho done"]),
            exits(5_000, 0)
        );
        assert_eq!(run("busybox", &["sh", "-c", "false"]), exits(AT_ONCE, 1));
        assert_eq!(
            run("busybox", &["sh", "-c", "exit 300"]),
            exits(AT_ONCE, 44)
        );
    }

    #[test]
    fn and_and_or_skip_as_a_shell_does() {
        assert_eq!(
            run("busybox", &["sh", "-c", "false && sleep 10; exit 3"]),
            exits(AT_ONCE, 3)
        );
        assert_eq!(
            run("busybox", &["sh", "-c", "false || sleep 10"]),
            exits(10_000, 0)
        );
        assert_eq!(
            run("busybox", &["sh", "-c", "true || exit 9; sleep 1"]),
            exits(1_000, 0)
        );
    }

    #[test]
    fn loops_tail_f_and_unknown_commands_keep_running() {
        assert_eq!(
            run("busybox", &["sh", "-c", "while true; do sleep 1; done"]),
            Process::Serves
        );
        assert_eq!(
            run("busybox", &["tail", "-f", "/dev/null"]),
            Process::Serves
        );
        assert_eq!(
            run(
                "busybox",
                &["sh", "-c", "echo hi; exec nginx -g 'daemon off;'"]
            ),
            Process::Serves
        );
        assert_eq!(
            run("myapp", &["/app/server", "--port=8080"]),
            Process::Serves
        );
    }

    #[test]
    fn an_inline_interpreter_program_finishes_in_a_few_seconds() {
        assert_eq!(
            run(
                "perl:5.34.0",
                &["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]
            ),
            exits(INLINE_PROGRAM, 0)
        );
        assert_eq!(
            run("python:3.12", &["python", "-c", "print(1)"]),
            exits(INLINE_PROGRAM, 0)
        );
        assert_eq!(
            run("python:3.12", &["python", "-m", "http.server"]),
            Process::Serves
        );
        assert_eq!(
            run("perl", &["perl", "-I/usr/lib/perl5", "server.pl"]),
            Process::Serves
        );
    }

    #[test]
    fn a_shell_or_sleep_as_pid_one_ignores_sigterm_and_a_server_does_not() {
        let argv = |v: &[&str]| serde_json::json!(v);
        assert!(ignores_sigterm(Some(&argv(&["sh", "-c", "sleep 3"])), None));
        assert!(ignores_sigterm(Some(&argv(&["/bin/sleep", "3600"])), None));
        assert!(!ignores_sigterm(
            Some(&argv(&["nginx", "-g", "daemon off;"])),
            None
        ));
        assert!(!ignores_sigterm(None, None));
    }

    #[test]
    fn args_alone_replace_the_images_default_command() {
        let args = serde_json::json!(["sleep", "3"]);
        assert_eq!(process_of("busybox", None, Some(&args)), exits(3_000, 0));
    }
}
