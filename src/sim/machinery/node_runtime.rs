//! A node's container runtime: the machine-side state a kubelet observes and acts on.
//!
//! It belongs to the world, not to the kubelet: a restarted kubelet finds its containers still
//! running, while a node that goes down loses them. Faults act here; the kubelet notices.
//!
//! The simulated application inside every container is trivial: it runs until something stops
//! it and answers every probe, unless a fault says otherwise. Time-driven behaviour (a crash a
//! few seconds after start, a graceful stop) is stored as a scheduled exit and applied by
//! [`NodeRuntime::settle`], so the runtime never needs a clock of its own.

use std::collections::BTreeSet;

use crate::sim::api::types::{Container, Millis, Str};
use crate::sim::faults::Fault;
use crate::sim::rng::Rng;
use crate::sim::text::{concat, decimal_into, push_hex};
use crate::sort::CollectTree;
use crate::vec_map::VecMap;

/// `ContainerStatusUnknown`: the reason Kubernetes gives a container it can no longer find.
pub const REASON_STATUS_UNKNOWN: &str = "ContainerStatusUnknown";

/// One simulated machine's runtime.
#[derive(Clone, Debug, Default)]
pub struct NodeRuntime {
    /// Images already pulled on this node (normalised references, e.g. `docker.io/library/nginx:1.27`).
    /// They live on disk and survive a reboot.
    pub images: BTreeSet<String>,
    /// Sandboxes by pod uid.
    pub pods: VecMap<Str, PodSandbox>,
    /// Images the registry refuses to serve, as this machine sees the registry (normalised).
    /// Mirrored from the world's `broken_images` by the BreakImage / FixImage faults.
    pub broken_images: BTreeSet<String>,
    /// The host part of the last pod IP handed out (host-local IPAM allocates sequentially).
    pub last_ip: u8,
    /// How many times the machine lost power (changes its boot id).
    pub reboots: u32,
    /// Pods a FailJobPods fault picked, by uid: the first run of their first container exits
    /// with this code.
    pub doomed: VecMap<Str, i32>,
    /// The image names resolved last, oldest first (at most [`RESOLVED_IMAGES`]), and what they
    /// resolve to, which never changes: every sync of every container resolved its image again,
    /// a parse and four allocations (2% of rolling out 1,000 replicas). A name that does not
    /// parse is not kept: its container never starts.
    resolved: Vec<(Str, ResolvedImage)>,
    /// No container's scheduled exit is earlier than this. [`NodeRuntime::settle`] runs on every
    /// sync of every pod on the machine, and scanning every container of every sandbox for an
    /// exit that is nearly never due was a sixth of a kubelet's sync at ten pods a node.
    next_exit: Millis,
}

/// How many resolved image names a machine remembers: more than the images of one pod.
const RESOLVED_IMAGES: usize = 16;

/// An image name as the runtime resolves it.
#[derive(Clone, Debug)]
pub struct ResolvedImage {
    /// The normalised reference (`docker.io/library/nginx:1.27`).
    pub reference: Str,
    /// It names `latest`, explicitly or not (imagePullPolicy then defaults to Always).
    pub latest: bool,
    /// `docker.io/library/nginx@sha256:…`, what a container of it reports.
    pub id: Str,
}

/// The sandbox (network namespace, pod IP) and containers of one pod on this node.
#[derive(Clone, Debug, Default)]
pub struct PodSandbox {
    pub uid: Str,
    pub namespace: Str,
    pub name: Str,
    /// The pod IP the CNI plugin assigned.
    pub ip: String,
    pub created_at: Millis,
    /// The newest instance of each container, by container name. Boxed: a map node has room for
    /// eleven entries, and a pod has one or two containers (unboxed, 4.7 kB a pod).
    pub containers: VecMap<Str, Box<ContainerRuntimeState>>,
    /// How the application in each container misbehaves (faults), by container name.
    pub faults: VecMap<Str, AppFaults>,
}

/// One container instance as the runtime sees it. A restart replaces it with a new instance
/// (new id, attempt + 1) and keeps the old one's termination as `last_termination`.
#[derive(Clone, Debug, Default)]
pub struct ContainerRuntimeState {
    /// The 64-hex container id (`containerd://<id>` in the API).
    pub id: String,
    /// The image as the pod spec names it.
    pub image: Str,
    /// The normalised reference (`docker.io/library/nginx:1.27`), as the runtime reports it.
    pub image_ref: Str,
    /// `docker.io/library/nginx@sha256:…`.
    pub image_id: Str,
    /// The CRI attempt number: what the API calls restartCount.
    pub attempt: i32,
    pub created_at: Millis,
    pub started_at: Option<Millis>,
    pub running: bool,
    /// Set once the container exited.
    pub termination: Option<Termination>,
    /// An exit that will happen on its own (a crash-looping app, a graceful stop in progress).
    pub scheduled_exit: Option<ScheduledExit>,
    /// The kubelet has sent the stop signal.
    pub stopping: bool,
    /// How the previous instance ended (the API's `lastState.terminated`).
    pub last_termination: Option<Termination>,
}

/// How a container ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Termination {
    pub exit_code: i32,
    /// `Completed`, `Error`, `OOMKilled`, or `ContainerStatusUnknown`.
    pub reason: String,
    pub message: Option<String>,
    pub started_at: Option<Millis>,
    pub finished_at: Option<Millis>,
    /// Empty when the runtime lost the container (after a reboot).
    pub container_id: String,
}

/// An exit that is already decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScheduledExit {
    pub at: Millis,
    pub exit_code: i32,
    pub reason: String,
}

/// Misbehaviour injected into one container's application.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppFaults {
    /// Every start before `until` crashes shortly afterwards with this exit code.
    pub crash_loop: Option<CrashLoop>,
    /// Readiness probes fail (HTTP 503) in this window.
    pub readiness: Option<FaultWindow>,
    /// Liveness and startup probes fail (HTTP 500) in this window.
    pub liveness: Option<FaultWindow>,
}

/// See [`AppFaults::crash_loop`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashLoop {
    pub exit_code: i32,
    pub until: Option<Millis>,
}

/// A span of simulated time in which an app misbehaves, optionally only in one container instance
/// (a hung process that a restart cures).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultWindow {
    pub from: Millis,
    pub until: Option<Millis>,
    /// Only this container id misbehaves; `None`: every instance in the window.
    pub instance: Option<String>,
}

impl FaultWindow {
    fn covers(&self, container_id: &str, t: Millis) -> bool {
        t >= self.from
            && self.until.is_none_or(|u| t < u)
            && self.instance.as_deref().is_none_or(|i| i == container_id)
    }

    fn overlaps(&self, container_id: &str, from: Millis, to: Millis) -> bool {
        self.instance.as_deref().is_none_or(|i| i == container_id)
            && self.from <= to
            && self.until.is_none_or(|u| u > from)
    }
}

/// Which probe is asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProbeKind {
    Startup,
    Readiness,
    Liveness,
}

impl ProbeKind {
    /// As the kubelet names it in events (`Readiness probe failed: …`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Startup => "Startup",
            ProbeKind::Readiness => "Readiness",
            ProbeKind::Liveness => "Liveness",
        }
    }

    /// The HTTP status the simulated app answers a failing probe with.
    pub fn failing_status_code(self) -> u16 {
        match self {
            ProbeKind::Readiness => 503,
            ProbeKind::Liveness | ProbeKind::Startup => 500,
        }
    }
}

/// The first whole second strictly after `t`: when the PLEG's 1 s relist notices a change at `t`.
pub fn next_relist(t: Millis) -> Millis {
    (t / 1000 + 1) * 1000
}

/// A parsed image reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    /// `docker.io/library/nginx`.
    pub repository: String,
    /// `1.27`, defaulting to `latest` when neither tag nor digest is given.
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    /// The normalised reference the runtime reports (`docker.io/library/nginx:1.27`).
    pub fn normalized(&self) -> String {
        match (&self.tag, &self.digest) {
            (_, Some(d)) => concat(&[&self.repository, "@", d]),
            (Some(t), None) => concat(&[&self.repository, ":", t]),
            (None, None) => concat(&[&self.repository, ":latest"]),
        }
    }

    /// True when the reference names `latest` explicitly or implicitly (imagePullPolicy defaults to Always).
    pub fn is_latest(&self) -> bool {
        self.digest.is_none() && self.tag.as_deref().is_none_or(|t| t == "latest")
    }
}

fn is_path_component(s: &str) -> bool {
    // [a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_lowercase() && !b[0].is_ascii_digit() {
        return false;
    }
    if !b[b.len() - 1].is_ascii_lowercase() && !b[b.len() - 1].is_ascii_digit() {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && matches!(b[i], b'.' | b'_' | b'-') {
            i += 1;
        }
        let sep = &s[start..i];
        // An empty separator is a byte that is neither a letter, a digit nor a separator (`;` in
        // `nginx;1.27`): refused, where accepting it would look at the same byte forever.
        let ok = sep == "."
            || sep == "_"
            || sep == "__"
            || (!sep.is_empty() && sep.bytes().all(|c| c == b'-'));
        if !ok {
            return false;
        }
    }
    true
}

fn is_domain(s: &str) -> bool {
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit())) {
        return false;
    }
    !host.is_empty()
        && host.split('.').all(|part| {
            !part.is_empty()
                && part.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}

/// Parses an image reference as `docker/distribution/reference.ParseNormalizedNamed` does,
/// returning its error wording on failure.
pub fn parse_image(image: &str) -> Result<ImageRef, String> {
    const INVALID: &str = "invalid reference format";
    // Every container of every pod sync is parsed: the separators are ASCII, so they are found
    // byte by byte (a UTF-8 sequence never holds an ASCII byte), and only a name with non-ASCII
    // letters is decoded to look for Unicode spaces.
    let spaced = image.bytes().any(|b| matches!(b, b'\t'..=b'\r' | b' '))
        || (!image.is_ascii() && image.chars().any(char::is_whitespace));
    if image.is_empty() || image.len() > 4096 || spaced {
        return Err(INVALID.into());
    }
    let (rest, digest) = match split_at_byte(image, b'@', false) {
        Some((r, d)) => {
            let (algo, hex) = split_at_byte(d, b':', false).ok_or_else(|| INVALID.to_string())?;
            let algo_ok = !algo.is_empty()
                && algo
                    .bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"+._-".contains(&c));
            let hex_ok = hex.len() >= 32 && hex.bytes().all(|c| c.is_ascii_hexdigit());
            if !algo_ok || !hex_ok {
                return Err("invalid checksum digest format".into());
            }
            (r, Some(d.to_string()))
        }
        None => (image, None),
    };
    let last_slash = rest.bytes().rposition(|b| b == b'/').map_or(0, |i| i + 1);
    let (name, tag) = match split_at_byte(&rest[last_slash..], b':', true) {
        Some((before, tag)) => (&rest[..last_slash + before.len()], Some(tag)),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let b = t.as_bytes();
        let ok = !b.is_empty()
            && b.len() <= 128
            && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c));
        if !ok {
            return Err(INVALID.into());
        }
    }
    // Slices of the input, one allocation.
    let (domain, path) = match split_at_byte(name, b'/', false) {
        Some((first, rest))
            if first == "localhost"
                || first
                    .bytes()
                    .any(|c| c == b'.' || c == b':' || c.is_ascii_uppercase()) =>
        {
            (first, rest)
        }
        _ => ("docker.io", name),
    };
    if !is_domain(domain) {
        return Err(INVALID.into());
    }
    let library = if domain == "docker.io" && !path.bytes().any(|b| b == b'/') {
        "library/"
    } else {
        ""
    };
    let repository = concat(&[domain, "/", library, path]);
    let joined = &repository[domain.len() + 1..];
    if joined.bytes().any(|c| c.is_ascii_uppercase()) {
        return Err(format!(
            "{INVALID}: repository name ({joined}) must be lowercase"
        ));
    }
    if !path.split('/').all(is_path_component) {
        return Err(INVALID.into());
    }
    Ok(ImageRef {
        repository,
        tag: tag.map(str::to_string),
        digest,
    })
}

/// `s` split around its first (or, with `last`, its last) byte `b`, which must be ASCII.
fn split_at_byte(s: &str, b: u8, last: bool) -> Option<(&str, &str)> {
    let i = if last {
        s.bytes().rposition(|c| c == b)
    } else {
        s.bytes().position(|c| c == b)
    }?;
    Some((&s[..i], &s[i + 1..]))
}

/// The normalised form of an image name, or the name itself when it does not parse.
pub fn normalize_image(image: &str) -> String {
    parse_image(image).map_or_else(|_| image.to_string(), |r| r.normalized())
}

fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// 64 deterministic hex digits derived from `seed` (container ids, image digests).
pub fn hex64(seed: &str) -> String {
    let mut r = Rng::new(fnv(seed));
    let mut out = String::with_capacity(64);
    for _ in 0..4 {
        push_hex(&mut out, r.next_u64(), 16);
    }
    out
}

/// A plausible, stable compressed size for an image (what "Image size: N bytes." reports).
pub fn image_size(image_ref: &str) -> u64 {
    20_000_000 + fnv(image_ref) % 100_000_000
}

/// `docker.io/library/nginx@sha256:…`: the image id a running container reports.
pub fn image_id(image_ref: &str) -> String {
    let repo = parse_image(image_ref).map_or_else(|_| image_ref.to_string(), |r| r.repository);
    concat(&[&repo, "@sha256:", &hex64(&concat(&["image:", image_ref]))])
}

impl NodeRuntime {
    /// A freshly booted machine that sees the registry as the world describes it.
    pub fn booted(broken_images: &BTreeSet<String>) -> NodeRuntime {
        NodeRuntime {
            broken_images: broken_images
                .iter()
                .map(|i| normalize_image(i))
                .collect_set(),
            ..Default::default()
        }
    }

    /// The machine lost power: sandboxes, containers and app faults are gone; the image store on
    /// disk and the registry stay as they were.
    pub fn power_off(&mut self) {
        self.pods.clear();
        self.last_ip = 0;
        self.reboots += 1;
    }

    /// The machine's boot id (`/proc/sys/kernel/random/boot_id`): a new one after every reboot.
    pub fn boot_id(&self, node: &str) -> String {
        let h = hex64(&format!("boot/{node}/{}", self.reboots));
        format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }

    /// Marks an image as refused (or served again) by the registry.
    pub fn set_image_broken(&mut self, image: &str, broken: bool) {
        let r = normalize_image(image);
        if broken {
            self.broken_images.insert(r);
        } else {
            self.broken_images.remove(&r);
        }
    }

    /// `image` resolved as [`parse_image`] does (its error wording when it does not parse).
    pub fn resolve_image(&mut self, image: &Str) -> Result<ResolvedImage, String> {
        if let Some((_, resolved)) = self.resolved.iter().find(|(named, _)| named == image) {
            return Ok(resolved.clone());
        }
        let r = parse_image(image)?;
        let reference = r.normalized();
        let resolved = ResolvedImage {
            latest: r.is_latest(),
            id: image_id(&reference).into(),
            reference: reference.into(),
        };
        if self.resolved.len() == RESOLVED_IMAGES {
            self.resolved.remove(0);
        }
        self.resolved.push((image.clone(), resolved.clone()));
        Ok(resolved)
    }

    /// Whether the image is in the node's image store.
    pub fn has_image(&self, image_ref: &str) -> bool {
        self.images.contains(image_ref)
    }

    /// The registry's answer to a pull: the containerd error text when it refuses.
    pub fn pull_error(&self, image_ref: &str) -> Option<String> {
        self.broken_images.contains(image_ref).then(|| {
            format!(
                "rpc error: code = NotFound desc = failed to pull and unpack image \"{image_ref}\": failed to resolve reference \"{image_ref}\": {image_ref}: not found"
            )
        })
    }

    /// Hands out the next free pod IP on this node's /24 (`prefix` is e.g. `10.244.1`).
    pub fn allocate_ip(&mut self, prefix: &str) -> String {
        // The hosts of `prefix` that sandboxes hold, read in place (a set of their addresses,
        // copied, was most of a sandbox's creation).
        let mut used = [false; 256];
        for p in self.pods.values() {
            if let Some(host) = p.ip.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) {
                if let Ok(n) = host.parse::<u8>() {
                    used[usize::from(n)] |= decimal_into(&mut [0; 20], u64::from(n)) == host;
                }
            }
        }
        let ip = |host: u8| concat(&[prefix, ".", decimal_into(&mut [0; 20], u64::from(host))]);
        let base = self.last_ip.max(1) as u16;
        for step in 1..=253u16 {
            let mut host = base + step;
            if host > 254 {
                host -= 253;
            }
            let host = host as u8;
            if !used[usize::from(host)] {
                self.last_ip = host;
                return ip(host);
            }
        }
        ip(254)
    }

    /// Creates the pod's sandbox if it has none.
    pub fn ensure_sandbox(
        &mut self,
        uid: &Str,
        namespace: &Str,
        name: &Str,
        ip_prefix: &str,
        now: Millis,
    ) -> &mut PodSandbox {
        if !self.pods.contains_key(uid) {
            let ip = self.allocate_ip(ip_prefix);
            self.pods.insert(
                uid.clone(),
                PodSandbox {
                    uid: uid.clone(),
                    namespace: namespace.clone(),
                    name: name.clone(),
                    ip,
                    created_at: now,
                    ..Default::default()
                },
            );
        }
        self.pods.get_mut(uid).expect("inserted above")
    }

    /// Removes a pod's sandbox and everything in it (the pod is gone from the node).
    pub fn remove_sandbox(&mut self, uid: &str) -> Option<PodSandbox> {
        self.pods.remove(uid)
    }

    /// Applies every exit that is due by `now` (crashes and graceful stops that already happened).
    pub fn settle(&mut self, now: Millis) {
        if now < self.next_exit {
            return;
        }
        let mut next = Millis::MAX;
        for sandbox in self.pods.values_mut() {
            for c in sandbox.containers.values_mut() {
                let Some(exit) = &c.scheduled_exit else {
                    continue;
                };
                if !c.running {
                    continue;
                }
                if exit.at <= now {
                    let (at, exit_code) = (exit.at, exit.exit_code);
                    let reason = exit.reason.clone();
                    c.exit(at, exit_code, &reason);
                } else {
                    next = next.min(exit.at);
                }
            }
        }
        self.next_exit = next;
    }

    /// Keeps [`NodeRuntime::settle`]'s bound below an exit just scheduled.
    fn exit_scheduled(&mut self, at: Millis) {
        self.next_exit = self.next_exit.min(at);
    }

    /// The newest instance of a container.
    pub fn container(&self, uid: &str, name: &str) -> Option<&ContainerRuntimeState> {
        self.pods.get(uid)?.containers.get(name).map(|c| &**c)
    }

    /// Creates and starts a new instance of a container. `crash_after` is how long a
    /// crash-looping app survives; `exits` makes a process that ends by itself (an init
    /// container, a Job's work: [`super::process`]) exit after that long with that code. Returns
    /// the new container id (None without the pod's sandbox, or for an image name that does not
    /// parse).
    #[allow(clippy::too_many_arguments)]
    pub fn start_container(
        &mut self,
        uid: &str,
        name: &str,
        image: &Str,
        attempt: i32,
        seed_last: Option<Termination>,
        crash_after: Millis,
        exits: Option<(Millis, i32)>,
        now: Millis,
    ) -> Option<String> {
        // The kubelet pulls (`ensure_image`) before it starts, so the image resolves.
        let ResolvedImage {
            reference: image_ref,
            id: image_id,
            ..
        } = self.resolve_image(image).ok()?;
        let sandbox = self.pods.get_mut(uid)?;
        let last_termination = match sandbox.containers.get(name) {
            Some(old) => old
                .termination
                .clone()
                .or_else(|| old.last_termination.clone()),
            None => seed_last,
        };
        let (mut n, mut t) = ([0; 20], [0; 20]);
        let id = hex64(&concat(&[
            uid,
            "/",
            name,
            "/",
            if attempt < 0 { "-" } else { "" },
            decimal_into(&mut n, u64::from(attempt.unsigned_abs())),
            "/",
            decimal_into(&mut t, now),
        ]));
        let scheduled_exit = sandbox
            .faults
            .get(name)
            .and_then(|f| f.crash_loop.as_ref())
            .filter(|cl| cl.until.is_none_or(|u| now < u))
            .map(|cl| ScheduledExit {
                at: now + crash_after,
                exit_code: cl.exit_code,
                reason: exit_reason(cl.exit_code).into(),
            })
            .or_else(|| {
                exits.map(|(d, code)| ScheduledExit {
                    at: now + d,
                    exit_code: code,
                    reason: exit_reason(code).into(),
                })
            });
        let exit_at = scheduled_exit.as_ref().map(|e| e.at);
        sandbox.containers.insert(
            name.into(),
            Box::new(ContainerRuntimeState {
                id: id.clone(),
                image: image.clone(),
                image_id,
                image_ref,
                attempt,
                created_at: now,
                started_at: Some(now),
                running: true,
                termination: None,
                scheduled_exit,
                stopping: false,
                last_termination,
            }),
        );
        if let Some(at) = exit_at {
            self.exit_scheduled(at);
        }
        Some(id)
    }

    /// Sends the stop signal: the app exits `after` ms later with `exit_code`.
    pub fn stop_container(&mut self, uid: &str, name: &str, at: Millis, exit_code: i32) {
        if let Some(c) = self
            .pods
            .get_mut(uid)
            .and_then(|s| s.containers.get_mut(name))
        {
            if c.running && !c.stopping {
                c.stopping = true;
                let earlier = c.scheduled_exit.as_ref().is_some_and(|e| e.at <= at);
                if !earlier {
                    c.scheduled_exit = Some(ScheduledExit {
                        at,
                        exit_code,
                        reason: exit_reason(exit_code).into(),
                    });
                    self.exit_scheduled(at);
                }
            }
        }
    }

    /// Kills a container at once (SIGKILL after a failed liveness probe, OOM, a crash).
    pub fn kill_container(
        &mut self,
        uid: &str,
        name: &str,
        now: Millis,
        exit_code: i32,
        reason: &str,
    ) {
        if let Some(c) = self
            .pods
            .get_mut(uid)
            .and_then(|s| s.containers.get_mut(name))
        {
            if c.running {
                c.exit(now, exit_code, reason);
            }
        }
    }

    /// Whether the app in a container answers a probe of `kind` at time `t` (faults aside, always).
    pub fn app_answers(
        &self,
        uid: &str,
        name: &str,
        kind: ProbeKind,
        container_id: &str,
        t: Millis,
    ) -> bool {
        let Some(f) = self.pods.get(uid).and_then(|s| s.faults.get(name)) else {
            return true;
        };
        let window = match kind {
            ProbeKind::Readiness => &f.readiness,
            ProbeKind::Liveness | ProbeKind::Startup => &f.liveness,
        };
        !window.as_ref().is_some_and(|w| w.covers(container_id, t))
    }

    /// Whether no fault of `kind` touches `[from, to]` for this container instance.
    pub fn fault_free(
        &self,
        uid: &str,
        name: &str,
        kind: ProbeKind,
        container_id: &str,
        from: Millis,
        to: Millis,
    ) -> bool {
        let Some(f) = self.pods.get(uid).and_then(|s| s.faults.get(name)) else {
            return true;
        };
        let window = match kind {
            ProbeKind::Readiness => &f.readiness,
            ProbeKind::Liveness | ProbeKind::Startup => &f.liveness,
        };
        !window
            .as_ref()
            .is_some_and(|w| w.overlaps(container_id, from, to))
    }

    /// Applies a container fault to one pod's container and says what happened, for the learner.
    /// The caller wakes the kubelet (its PLEG would notice at the next relist).
    pub fn inject(
        &mut self,
        fault: &Fault,
        uid: &str,
        pod: &str,
        container: &Container,
        now: Millis,
    ) -> Result<String, String> {
        let name = container.name.as_str();
        let Some(sandbox) = self.pods.get_mut(uid) else {
            return Err(format!("pod \"{pod}\" has no sandbox on this node yet"));
        };
        let running_id = sandbox
            .containers
            .get(name)
            .filter(|c| c.running)
            .map(|c| c.id.clone());
        let not_running = || format!("container {name} in pod \"{pod}\" is not running");
        let for_how_long = |d: &Option<Millis>| match d {
            Some(d) => format!("for {}", crate::sim::time::format_duration(*d)),
            None => "until the container restarts".to_string(),
        };
        let msg = match fault {
            Fault::CrashContainer { exit_code, .. } => {
                running_id.ok_or_else(not_running)?;
                let c = sandbox.containers.get_mut(name).expect("running above");
                c.exit(now, *exit_code, exit_reason(*exit_code));
                format!("container {name} in pod \"{pod}\" exited with code {exit_code}; the kubelet restarts it per restartPolicy")
            }
            Fault::CrashLoop {
                exit_code,
                duration,
                ..
            } => {
                sandbox.faults.entry(name.into()).or_default().crash_loop = Some(CrashLoop {
                    exit_code: *exit_code,
                    until: duration.map(|d| now + d),
                });
                if let Some(c) = sandbox.containers.get_mut(name).filter(|c| c.running) {
                    c.exit(now, *exit_code, exit_reason(*exit_code));
                }
                let span = match duration {
                    Some(d) => format!(" for {}", crate::sim::time::format_duration(*d)),
                    None => String::new(),
                };
                format!("container {name} in pod \"{pod}\" now exits with code {exit_code} shortly after every start{span}")
            }
            Fault::OomKill { .. } => {
                running_id.ok_or_else(not_running)?;
                let c = sandbox.containers.get_mut(name).expect("running above");
                c.exit(now, 137, "OOMKilled");
                format!("container {name} in pod \"{pod}\" was killed for exceeding its memory limit (OOMKilled, exit code 137)")
            }
            Fault::FailReadiness { duration, .. } => {
                let window = FaultWindow {
                    from: now,
                    until: duration.map(|d| now + d),
                    instance: if duration.is_none() { running_id } else { None },
                };
                sandbox.faults.entry(name.into()).or_default().readiness = Some(window);
                let note = if container.readiness_probe.is_none() {
                    " (it has no readinessProbe, so the kubelet will not notice)"
                } else {
                    ""
                };
                format!(
                    "the app in {name} of pod \"{pod}\" answers readiness probes with 503 {}{note}",
                    for_how_long(duration)
                )
            }
            Fault::FailLiveness { duration, .. } => {
                let window = FaultWindow {
                    from: now,
                    until: duration.map(|d| now + d),
                    instance: if duration.is_none() { running_id } else { None },
                };
                sandbox.faults.entry(name.into()).or_default().liveness = Some(window);
                let note =
                    if container.liveness_probe.is_none() && container.startup_probe.is_none() {
                        " (it has no livenessProbe, so the kubelet will not notice)"
                    } else {
                        ""
                    };
                format!(
                    "the app in {name} of pod \"{pod}\" answers liveness probes with 500 {}{note}",
                    for_how_long(duration)
                )
            }
            other => return Err(format!("{} is not a container fault", other.name())),
        };
        Ok(msg)
    }
}

/// The terminated reason the runtime reports for an exit code.
pub fn exit_reason(exit_code: i32) -> &'static str {
    if exit_code == 0 {
        "Completed"
    } else {
        "Error"
    }
}

impl ContainerRuntimeState {
    fn exit(&mut self, at: Millis, exit_code: i32, reason: &str) {
        self.running = false;
        self.stopping = false;
        self.scheduled_exit = None;
        self.termination = Some(Termination {
            exit_code,
            reason: reason.to_string(),
            message: None,
            started_at: self.started_at,
            finished_at: Some(at),
            container_id: self.id.clone(),
        });
    }

    /// When the container exited, if it did.
    pub fn finished_at(&self) -> Option<Millis> {
        self.termination.as_ref().and_then(|t| t.finished_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_ips_go_to_the_next_free_host_in_turn_wrapping_past_254() {
        let mut rt = NodeRuntime::default();
        let sandbox = |rt: &mut NodeRuntime, uid: &str| {
            let uid = Str::from(uid);
            rt.ensure_sandbox(&uid, &"default".into(), &uid, "10.244.1", 0)
                .ip
                .clone()
        };
        assert_eq!(sandbox(&mut rt, "a"), "10.244.1.2");
        assert_eq!(sandbox(&mut rt, "b"), "10.244.1.3");
        // Another prefix's host and a host written otherwise are not this prefix's.
        rt.pods.get_mut("b").expect("b").ip = "10.244.10.4".into();
        rt.ensure_sandbox(&"c".into(), &"default".into(), &"c".into(), "10.244.1", 0)
            .ip = "10.244.1.05".into();
        rt.last_ip = 3;
        assert_eq!(sandbox(&mut rt, "d"), "10.244.1.4");
        rt.last_ip = 253;
        assert_eq!(sandbox(&mut rt, "e"), "10.244.1.254");
        assert_eq!(
            sandbox(&mut rt, "f"),
            "10.244.1.3",
            "after .254, .2 is taken by a"
        );
        rt.last_ip = 4;
        rt.pods.get_mut("c").expect("c").ip = "10.244.1.5".into();
        assert_eq!(sandbox(&mut rt, "g"), "10.244.1.6", ".5 is taken");
    }

    #[test]
    fn a_machine_resolves_an_image_name_as_the_parser_does_however_many_names_it_has_seen() {
        let mut rt = NodeRuntime::default();
        let names: Vec<Str> = (0..2 * RESOLVED_IMAGES)
            .map(|i| Str::from(format!("registry.example:5000/team/app-{i}:v{i}")))
            .chain(["nginx", "nginx:1.27", "NGINX", "nginx:1.27", "nginx"].map(Str::from))
            .collect();
        for round in 0..2 {
            for name in &names {
                let parsed = parse_image(name);
                let resolved = rt.resolve_image(name);
                match (&parsed, &resolved) {
                    (Ok(p), Ok(r)) => {
                        assert_eq!(r.reference, p.normalized(), "{name}, round {round}");
                        assert_eq!(r.latest, p.is_latest(), "{name}");
                        assert_eq!(r.id, image_id(&p.normalized()), "{name}");
                    }
                    (Err(p), Err(r)) => assert_eq!(p, r, "{name}"),
                    _ => panic!("{name}: {parsed:?} resolved as {resolved:?}"),
                }
                assert!(rt.resolved.len() <= RESOLVED_IMAGES);
            }
        }
    }

    #[test]
    fn short_image_names_normalise_to_docker_hub_library() {
        assert_eq!(
            normalize_image("nginx:1.27"),
            "docker.io/library/nginx:1.27"
        );
        assert_eq!(
            normalize_image("bitnami/redis"),
            "docker.io/bitnami/redis:latest"
        );
        assert_eq!(
            normalize_image("registry.k8s.io/pause:3.9"),
            "registry.k8s.io/pause:3.9"
        );
        assert_eq!(
            normalize_image("localhost:5000/app"),
            "localhost:5000/app:latest"
        );
        assert!(parse_image("nginx").unwrap().is_latest());
        assert!(!parse_image("nginx:1.27").unwrap().is_latest());
    }

    #[test]
    fn malformed_image_names_are_refused_with_the_reference_parser_wording() {
        assert_eq!(
            parse_image("NGINX"),
            Err(
                "invalid reference format: repository name (library/NGINX) must be lowercase"
                    .into()
            )
        );
        assert_eq!(
            parse_image("nginx:"),
            Err("invalid reference format".into())
        );
        // A path byte that is no letter, digit or separator (a `;` typed for a `:`, a `+`, a
        // non-ASCII letter) ends the parse with the same words; it once looped forever on it.
        for odd in ["ngnix;1.27", "my+app", "team/ca\u{e9}fe", "a~b:1", "ngi!nx"] {
            assert_eq!(
                parse_image(odd),
                Err("invalid reference format".into()),
                "{odd:?}"
            );
        }
        for spaced in ["ngi nx", "nginx\x0b", "nginx\u{a0}:1", "nginx:1\u{2003}"] {
            assert_eq!(
                parse_image(spaced),
                Err("invalid reference format".into()),
                "{spaced:?}"
            );
        }
        assert_eq!(
            parse_image(
                "registry.example.com:5000/team/app:v1@sha256:0123456789abcdef0123456789abcdef"
            )
            .map(|r| r.normalized()),
            Ok("registry.example.com:5000/team/app@sha256:0123456789abcdef0123456789abcdef".into())
        );
        assert_eq!(
            parse_image("localhost/app").map(|r| r.normalized()),
            Ok("localhost/app:latest".into())
        );
        assert_eq!(
            parse_image("nginx::1"),
            Err("invalid reference format".into())
        );
        assert!(parse_image("-nginx").is_err());
        assert_eq!(parse_image("a//b"), Err("invalid reference format".into()));
        assert_eq!(
            parse_image("example.com/App"),
            Err("invalid reference format: repository name (App) must be lowercase".into())
        );
    }

    #[test]
    fn a_registry_is_the_first_part_only_when_it_looks_like_a_host() {
        let repo = |image: &str| parse_image(image).map(|r| r.repository);
        assert_eq!(
            repo("docker.io/nginx"),
            Ok("docker.io/library/nginx".into())
        );
        assert_eq!(repo("team/app/web"), Ok("docker.io/team/app/web".into()));
        assert_eq!(repo("localhost/app"), Ok("localhost/app".into()));
        assert_eq!(
            repo("ghcr.io/org/app@sha256:0123456789abcdef0123456789abcdef"),
            Ok("ghcr.io/org/app".into())
        );
    }

    #[test]
    fn pod_ips_are_handed_out_sequentially_and_never_twice() {
        let mut rt = NodeRuntime::default();
        rt.ensure_sandbox(&"a".into(), &"default".into(), &"a".into(), "10.244.1", 0);
        rt.ensure_sandbox(&"b".into(), &"default".into(), &"b".into(), "10.244.1", 0);
        assert_eq!(rt.pods["a"].ip, "10.244.1.2");
        assert_eq!(rt.pods["b"].ip, "10.244.1.3");
        rt.remove_sandbox("a");
        rt.ensure_sandbox(&"c".into(), &"default".into(), &"c".into(), "10.244.1", 0);
        assert_eq!(rt.pods["c"].ip, "10.244.1.4");
    }

    #[test]
    fn an_exit_scheduled_after_a_settle_that_found_none_due_happens_at_its_time() {
        let mut rt = NodeRuntime::default();
        rt.ensure_sandbox(&"u".into(), &"default".into(), &"p".into(), "10.244.1", 0);
        rt.start_container("u", "app", &"nginx:1.27".into(), 0, None, 0, None, 0);
        rt.settle(1_000);
        rt.stop_container("u", "app", 2_000, 0);
        rt.settle(1_999);
        assert!(rt.container("u", "app").unwrap().running);
        rt.settle(2_000);
        let app = rt.container("u", "app").unwrap();
        assert!(!app.running);
        assert_eq!(app.termination.as_ref().unwrap().reason, "Completed");
        let work = &"busybox:1.36".into();
        rt.start_container("u", "work", work, 0, None, 0, Some((500, 1)), 3_000);
        rt.settle(3_499);
        assert!(rt.container("u", "work").unwrap().running);
        rt.settle(3_500);
        let work = rt.container("u", "work").unwrap();
        assert!(!work.running);
        assert_eq!(work.termination.as_ref().unwrap().exit_code, 1);
        assert_eq!(work.termination.as_ref().unwrap().finished_at, Some(3_500));
    }

    #[test]
    fn a_crash_loop_makes_every_new_instance_exit_after_its_run_time() {
        let mut rt = NodeRuntime::default();
        rt.ensure_sandbox(&"u".into(), &"default".into(), &"p".into(), "10.244.1", 0);
        rt.start_container("u", "app", &"nginx:1.27".into(), 0, None, 0, None, 0);
        let c = Container {
            name: "app".into(),
            image: "nginx:1.27".into(),
            ..Default::default()
        };
        let f = Fault::CrashLoop {
            target: Default::default(),
            exit_code: 2,
            duration: None,
        };
        rt.inject(&f, "u", "p", &c, 1_000).unwrap();
        assert!(!rt.container("u", "app").unwrap().running);
        rt.start_container(
            "u",
            "app",
            &"nginx:1.27".into(),
            1,
            None,
            1_500,
            None,
            2_000,
        );
        rt.settle(3_000);
        assert!(rt.container("u", "app").unwrap().running);
        rt.settle(3_500);
        let c = rt.container("u", "app").unwrap();
        assert!(!c.running);
        assert_eq!(c.termination.as_ref().unwrap().exit_code, 2);
        assert_eq!(
            c.last_termination.as_ref().unwrap().finished_at,
            Some(1_000)
        );
    }

    #[test]
    fn a_liveness_fault_without_duration_only_hangs_the_current_instance() {
        let mut rt = NodeRuntime::default();
        rt.ensure_sandbox(&"u".into(), &"default".into(), &"p".into(), "10.244.1", 0);
        let first = rt
            .start_container("u", "app", &"nginx".into(), 0, None, 0, None, 0)
            .unwrap();
        let c = Container {
            name: "app".into(),
            ..Default::default()
        };
        rt.inject(
            &Fault::FailLiveness {
                target: Default::default(),
                duration: None,
            },
            "u",
            "p",
            &c,
            10,
        )
        .unwrap();
        assert!(!rt.app_answers("u", "app", ProbeKind::Liveness, &first, 20));
        assert!(rt.app_answers("u", "app", ProbeKind::Readiness, &first, 20));
        let second = rt
            .start_container("u", "app", &"nginx".into(), 1, None, 0, None, 30)
            .unwrap();
        assert!(rt.app_answers("u", "app", ProbeKind::Liveness, &second, 40));
    }
}
