//! `kubeloop bench`: wall-clock measurements of the simulation at course scale and beyond.
//!
//! Speed targets live here, never in tests: the machines are shared and noisy. Each case runs a
//! few times and prints the median and the spread of wall time, the median CPU time over the
//! same stretch (steadier than wall time on a loaded machine), simulated time and the process's
//! peak resident memory during the case (which includes what earlier cases left allocated: the
//! allocator keeps freed memory).

use std::io::Write;
use std::time::Instant;

use crate::sim::api::ApiRequest;
use crate::sim::session::Session;
use crate::sim::time::{format_duration, SECOND};
use crate::sim::types::{Kind, Object, ObjectMeta, Pod, PodSpec};

/// One benchmark result.
struct Row {
    name: String,
    samples: Vec<f64>,
    /// CPU seconds of each sample (empty where the platform does not say).
    cpu: Vec<f64>,
    detail: String,
}

/// CPU time this process has used (user + system), from `/proc/self/stat` (Linux; 10 ms steps).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) / 100.0)
}

/// One run of a case: wall seconds, CPU seconds over the same stretch (when known), simulated ms.
struct Sample {
    wall: f64,
    cpu: Option<f64>,
    sim_ms: u64,
}

/// A stopwatch for wall and CPU time together, started after the case's setup.
struct Stopwatch {
    wall: Instant,
    cpu: Option<f64>,
}

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch {
            wall: Instant::now(),
            cpu: cpu_seconds(),
        }
    }

    fn stop(&self, sim_ms: u64) -> Sample {
        Sample {
            wall: self.wall.elapsed().as_secs_f64(),
            cpu: self.cpu.zip(cpu_seconds()).map(|(a, b)| b - a),
            sim_ms,
        }
    }
}

/// Resets the peak-memory mark so the next reading is this case's own (Linux; best effort).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn scenario(nodes: usize, replicas: usize) -> String {
    format!(
        r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {{name: bench}}
spec:
  nodes: {{count: {nodes}, cpu: "64", memory: 256Gi, pods: "250"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources: {{requests: {{cpu: 10m, memory: 16Mi}}}}
"#
    )
}

fn ready_pods(s: &Session) -> usize {
    s.sim
        .api
        .list(Kind::Pod)
        .filter(|o| o.as_pod().is_some_and(|p| p.is_ready()))
        .count()
}

/// Applies a Deployment and advances until every pod is Ready. Returns (wall s, simulated ms).
fn converge(nodes: usize, replicas: usize) -> Result<Sample, String> {
    let text = scenario(nodes, replicas);
    let mut s = Session::load("bench.yaml", &text, Some(1)).map_err(|d| format!("{d:?}"))?;
    let watch = Stopwatch::start();
    let limit = 30 * 60 * SECOND;
    while ready_pods(&s) < replicas {
        let t = s.sim.now() + SECOND;
        if t > limit {
            return Err(format!(
                "not converged after {}: {} of {replicas} ready",
                format_duration(limit),
                ready_pods(&s)
            ));
        }
        s.advance_to(t, usize::MAX);
    }
    Ok(watch.stop(s.sim.now()))
}

/// Creates bare pods on `nodes` nodes and measures until all are bound.
fn schedule(nodes: usize, pods: usize) -> Result<Sample, String> {
    let text = format!("apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  nodes: {{count: {nodes}, cpu: \"64\", memory: 256Gi, pods: \"250\"}}\n");
    let mut s = Session::load("bench.yaml", &text, Some(1)).map_err(|d| format!("{d:?}"))?;
    s.advance_to(SECOND, usize::MAX);
    for i in 0..pods {
        let pod = Pod {
            metadata: ObjectMeta {
                name: format!("p-{i}"),
                namespace: "default".into(),
                ..Default::default()
            },
            spec: PodSpec {
                containers: vec![crate::sim::types::Container {
                    name: "app".into(),
                    image: "nginx:1.27".into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
            ..Default::default()
        };
        s.sim
            .submit(ApiRequest::Create(Object::Pod(pod)))
            .map_err(|e| e.message)?;
    }
    let watch = Stopwatch::start();
    let bound = |s: &Session| {
        s.sim
            .api
            .list(Kind::Pod)
            .filter(|o| o.as_pod().is_some_and(|p| !p.spec.node_name.is_empty()))
            .count()
    };
    while bound(&s) < pods {
        let t = s.sim.now() + 100;
        if t > 30 * 60 * SECOND {
            return Err(format!("only {} of {pods} pods bound", bound(&s)));
        }
        s.advance_to(t, usize::MAX);
    }
    Ok(watch.stop(s.sim.now()))
}

/// A named case: what it measures, how to run it once, how many pods it places.
type Case = (String, Box<dyn Fn() -> Result<Sample, String>>, usize);

/// Runs the benchmark table. `--quick` runs each case once at reduced scale (a smoke check).
pub fn main(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let quick = args.iter().any(|a| a == "--quick");
    let full = args.iter().any(|a| a == "--full");
    let runs = if quick { 1 } else { 3 };
    let mut rows: Vec<Row> = Vec::new();
    let mut cases: Vec<Case> = vec![
        (
            "converge 100 replicas / 10 nodes".into(),
            Box::new(|| converge(10, 100)),
            100,
        ),
        if quick {
            (
                "converge 1,000 replicas / 100 nodes".into(),
                Box::new(|| converge(100, 1_000)),
                1_000,
            )
        } else {
            (
                "converge 10,000 replicas / 1,000 nodes".into(),
                Box::new(|| converge(1_000, 10_000)),
                10_000,
            )
        },
        if quick {
            (
                "schedule 1,000 pods / 100 nodes".into(),
                Box::new(|| schedule(100, 1_000)),
                1_000,
            )
        } else {
            (
                "schedule 10,000 pods / 1,000 nodes".into(),
                Box::new(|| schedule(1_000, 10_000)),
                10_000,
            )
        },
    ];
    if full {
        cases.push((
            // The playground's ceiling (sim::limits): MAX_REPLICAS on MAX_NODES nodes.
            "converge 20,000 replicas / 5,000 nodes".into(),
            Box::new(|| converge(5_000, 20_000)),
            20_000,
        ));
    }
    for (name, f, pods) in cases {
        let _ = writeln!(err, "running: {name}");
        let mut samples = Vec::new();
        let mut cpu = Vec::new();
        let mut sim_ms = 0;
        reset_peak_rss();
        for _ in 0..runs {
            match f() {
                Ok(sample) => {
                    samples.push(sample.wall);
                    cpu.extend(sample.cpu);
                    sim_ms = sample.sim_ms;
                }
                Err(e) => {
                    let _ = writeln!(err, "  failed: {e}");
                    break;
                }
            }
        }
        if samples.is_empty() {
            rows.push(Row {
                name,
                samples: vec![f64::NAN],
                cpu: Vec::new(),
                detail: "FAILED".into(),
            });
            continue;
        }
        let mut s = samples.clone();
        let m = median(&mut s);
        let mut detail = format!(
            "{} simulated, {:.0} pods/wall-s",
            format_duration(sim_ms),
            pods as f64 / m
        );
        if let Some(rss) = peak_rss_mib() {
            detail.push_str(&format!(", peak RSS {rss:.0} MiB"));
        }
        rows.push(Row {
            name,
            samples,
            cpu,
            detail,
        });
    }
    let _ = writeln!(
        out,
        "
{:<42} {:>10} {:>10} {:>10} {:>10}  detail",
        "case (native, release)", "median s", "min s", "max s", "cpu s"
    );
    for r in &rows {
        let min = r.samples.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = r.samples.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut s = r.samples.clone();
        let cpu = if r.cpu.is_empty() {
            "-".to_string()
        } else {
            format!("{:.3}", median(&mut r.cpu.clone()))
        };
        let _ = writeln!(
            out,
            "{:<42} {:>10.3} {:>10.3} {:>10.3} {:>10}  {}",
            r.name,
            median(&mut s),
            min,
            max,
            cpu,
            r.detail
        );
    }
    if rows.iter().any(|r| r.detail == "FAILED") {
        1
    } else {
        0
    }
}
