//! The desired / ready / available chart: samples of the Deployments' spec and status over time,
//! summed over every Deployment and kept for each one, so a learner can watch one Deployment.
//!
//! Memory is bounded three ways: a series keeps only the last [`History::window`] of simulated
//! time, a steady state costs two points however long it lasts, and at most [`MAX_SERIES`]
//! Deployments get a series of their own (the rest still count in the total).

use std::collections::VecDeque;

use crate::sim::api::types::{Deployment, Millis};
use crate::vec_map::VecMap;

/// Most Deployments charted one by one; past it, new ones count only in the total.
pub const MAX_SERIES: usize = 500;
/// Most samples one series keeps, however busy the window was.
pub const MAX_SAMPLES: usize = 4_000;

/// One sample: of one Deployment, or summed over every Deployment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub t: Millis,
    /// spec.replicas (Σ for the total).
    pub desired: u32,
    /// status.readyReplicas.
    pub ready: u32,
    /// status.availableReplicas.
    pub available: u32,
}

impl Sample {
    fn values(&self) -> (u32, u32, u32) {
        (self.desired, self.ready, self.available)
    }
}

/// A bounded series of samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    samples: VecDeque<Sample>,
}

impl Series {
    /// Records a sample. A sample equal to the last two only moves the line's end forward, so a
    /// long steady state costs one point, not thousands.
    fn record(&mut self, s: Sample, window: Millis) {
        if self.samples.back().is_some_and(|last| s.t < last.t) {
            // Time went backwards: the simulation was reset.
            self.samples.clear();
        }
        let n = self.samples.len();
        if n >= 2 {
            let (a, b) = (self.samples[n - 2], self.samples[n - 1]);
            if a.values() == s.values() && b.values() == s.values() {
                self.samples[n - 1].t = s.t;
                return;
            }
        }
        self.samples.push_back(s);
        // Keep one sample older than the window, so the line starts at the left edge.
        while self.samples.len() > 2 && self.samples[1].t + window < s.t {
            self.samples.pop_front();
        }
        while self.samples.len() > MAX_SAMPLES {
            self.samples.pop_front();
        }
    }

    /// The kept samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }

    /// The latest sample.
    pub fn last(&self) -> Option<Sample> {
        self.samples.back().copied()
    }

    /// The largest value any line reached (at least 1, so the chart has a scale).
    pub fn max_value(&self) -> u32 {
        self.samples
            .iter()
            .map(|s| s.desired.max(s.ready).max(s.available))
            .max()
            .unwrap_or(0)
            .max(1)
    }
}

/// One Deployment's series, and whether it still exists.
#[derive(Clone, Debug, Default, PartialEq)]
struct Tracked {
    series: Series,
    /// The recording round it was last seen in.
    seen: u64,
    /// It is gone from the API (its line was taken to zero when it went).
    gone: bool,
}

/// The chart's history: the total and one series per Deployment.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    total: Series,
    /// By Deployment, named as the chart's selector shows them (`web`, or `shop/web` outside
    /// the default namespace).
    per: VecMap<String, Tracked>,
    round: u64,
    /// Keep this much simulated time.
    pub window: Millis,
    /// Bumped when a sample is recorded.
    pub version: u64,
}

impl Default for History {
    fn default() -> Self {
        History {
            total: Series::default(),
            per: VecMap::new(),
            round: 0,
            window: 120_000,
            version: 0,
        }
    }
}

/// The name a Deployment goes by in the chart's selector.
pub fn deployment_label(namespace: &str, name: &str) -> String {
    if namespace == "default" || namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

impl History {
    /// Records a sample of the total only (for callers that sum themselves).
    pub fn record(&mut self, s: Sample) {
        self.total.record(s, self.window);
        self.version += 1;
    }

    /// Samples every Deployment at time `t`: each one's own series, and their sum as the total.
    /// A Deployment that is no longer listed gets a last sample of zero (it wants and has
    /// nothing) and its series is forgotten once that leaves the window.
    pub fn record_deployments<'a>(
        &mut self,
        t: Millis,
        deployments: impl IntoIterator<Item = &'a Deployment>,
    ) {
        self.round += 1;
        let window = self.window;
        let mut total = Sample {
            t,
            ..Default::default()
        };
        for d in deployments {
            let s = Sample {
                t,
                desired: d.spec.replicas.unwrap_or(1).max(0) as u32,
                ready: d.status.ready_replicas.max(0) as u32,
                available: d.status.available_replicas.max(0) as u32,
            };
            total.desired += s.desired;
            total.ready += s.ready;
            total.available += s.available;
            let label = deployment_label(&d.metadata.namespace, &d.metadata.name);
            if self.per.len() >= MAX_SERIES && !self.per.contains_key(&label) {
                continue;
            }
            let tracked = self.per.entry(label).or_default();
            tracked.seen = self.round;
            tracked.gone = false;
            tracked.series.record(s, window);
        }
        let round = self.round;
        for x in self.per.values_mut() {
            if x.seen != round && !x.gone {
                x.gone = true;
                x.series.record(
                    Sample {
                        t,
                        ..Default::default()
                    },
                    window,
                );
            }
        }
        self.per
            .retain(|_, x| !x.gone || x.series.last().is_some_and(|l| l.t + window >= t));
        self.total.record(total, window);
        self.version += 1;
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.total = Series::default();
        self.per.clear();
        self.version += 1;
    }

    /// The total's samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.total.samples()
    }

    /// The total, or one Deployment's series (None when it has none).
    pub fn series(&self, deployment: Option<&str>) -> Option<&Series> {
        match deployment {
            None => Some(&self.total),
            Some(d) => self.per.get(d).map(|x| &x.series),
        }
    }

    /// The chosen series' samples, oldest first (empty for a Deployment with no series).
    pub fn samples_of(&self, deployment: Option<&str>) -> Vec<Sample> {
        self.series(deployment)
            .map(|s| s.samples().copied().collect())
            .unwrap_or_default()
    }

    /// The Deployments with a series of their own, by name, and whether each is gone.
    pub fn deployments(&self) -> Vec<(String, bool)> {
        self.per.iter().map(|(k, x)| (k.clone(), x.gone)).collect()
    }

    /// The largest value the total reached (at least 1, so the chart has a scale).
    pub fn max_value(&self) -> u32 {
        self.total.max_value()
    }

    /// The total's latest sample.
    pub fn last(&self) -> Option<Sample> {
        self.total.last()
    }
}

/// The chart's mapping from (time, value) to plot coordinates, shared by every path so the lines
/// and the gap band always line up. Callers guarantee `t1 > t0`.
fn plot_scale(
    t0: Millis,
    t1: Millis,
    max: u32,
    w: f64,
    h: f64,
) -> (impl Fn(Millis) -> f64, impl Fn(u32) -> f64) {
    let x = move |t: Millis| ((t.max(t0) - t0) as f64 / (t1 - t0) as f64 * w).clamp(0.0, w);
    let y = move |v: u32| h - (v as f64 / max.max(1) as f64) * h;
    (x, y)
}

/// An SVG path drawing one series as a step line over `[t0, t1]`, scaled into `w × h`
/// (value `max` at the top). Steps, not slopes: replica counts change in jumps.
pub fn step_path(
    points: &[(Millis, u32)],
    t0: Millis,
    t1: Millis,
    max: u32,
    w: f64,
    h: f64,
) -> String {
    if points.is_empty() || t1 <= t0 {
        return String::new();
    }
    let (x, y) = plot_scale(t0, t1, max, w, h);
    let mut d = String::new();
    let mut prev_y: Option<f64> = None;
    for (t, v) in points {
        let (px, py) = (x(*t), y(*v));
        match prev_y {
            None => d.push_str(&format!("M{px:.1},{py:.1}")),
            Some(last) => {
                d.push_str(&format!(" L{px:.1},{last:.1}"));
                if (py - last).abs() > f64::EPSILON {
                    d.push_str(&format!(" L{px:.1},{py:.1}"));
                }
            }
        }
        prev_y = Some(py);
    }
    if let Some(last) = prev_y {
        d.push_str(&format!(" L{w:.1},{last:.1}"));
    }
    d
}

/// An SVG path shading the area between two step series (`upper` over `lower` at each sample
/// time) over `[t0, t1]`: the chart's gap between desired and ready.
pub fn band_path(
    points: &[(Millis, u32, u32)],
    t0: Millis,
    t1: Millis,
    max: u32,
    w: f64,
    h: f64,
) -> String {
    if points.is_empty() || t1 <= t0 {
        return String::new();
    }
    let (x, y) = plot_scale(t0, t1, max, w, h);
    // Forward along the upper series, as steps.
    let mut d = String::new();
    for (i, (t, up, _)) in points.iter().enumerate() {
        let px = x(*t);
        if i == 0 {
            d.push_str(&format!("M{px:.1},{:.1}", y(*up)));
        } else {
            d.push_str(&format!(
                " L{px:.1},{:.1} L{px:.1},{:.1}",
                y(points[i - 1].1),
                y(*up)
            ));
        }
    }
    let last = points[points.len() - 1];
    d.push_str(&format!(
        " L{w:.1},{:.1} L{w:.1},{:.1}",
        y(last.1),
        y(last.2)
    ));
    // Back along the lower series.
    for i in (0..points.len()).rev() {
        let px = x(points[i].0);
        d.push_str(&format!(" L{px:.1},{:.1}", y(points[i].2)));
        if i > 0 {
            d.push_str(&format!(" L{px:.1},{:.1}", y(points[i - 1].2)));
        }
    }
    d.push_str(" Z");
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: Millis, desired: u32, ready: u32) -> Sample {
        Sample {
            t,
            desired,
            ready,
            available: ready,
        }
    }

    #[test]
    fn a_steady_state_costs_two_points() {
        let mut h = History::default();
        for t in 0..100 {
            h.record(s(t * 100, 3, 3));
        }
        assert_eq!(h.samples().count(), 2);
        assert_eq!(h.last().map(|x| x.t), Some(9_900));
    }

    #[test]
    fn samples_older_than_the_window_are_dropped() {
        let mut h = History {
            window: 1_000,
            ..Default::default()
        };
        for t in 0..50u64 {
            h.record(s(t * 100, 3, (t % 2) as u32));
        }
        assert!(h.samples().count() <= 12);
    }

    fn dep(ns: &str, name: &str, want: i32, ready: i32) -> Deployment {
        let mut d = Deployment::default();
        d.metadata.namespace = ns.into();
        d.metadata.name = name.into();
        d.spec.replicas = Some(want);
        d.status.ready_replicas = ready;
        d.status.available_replicas = ready;
        d
    }

    fn values(s: Option<&Series>) -> Vec<(u32, u32)> {
        s.expect("a series")
            .samples()
            .map(|x| (x.desired, x.ready))
            .collect()
    }

    #[test]
    fn each_deployment_has_its_own_series_and_the_total_sums_them() {
        let mut h = History::default();
        h.record_deployments(0, &[dep("default", "web", 3, 0), dep("shop", "api", 2, 0)]);
        h.record_deployments(
            100,
            &[dep("default", "web", 3, 3), dep("shop", "api", 2, 1)],
        );
        assert_eq!(values(h.series(Some("web"))), [(3, 0), (3, 3)]);
        assert_eq!(values(h.series(Some("shop/api"))), [(2, 0), (2, 1)]);
        assert_eq!(values(h.series(None)), [(5, 0), (5, 4)]);
        assert_eq!(
            h.deployments(),
            [("shop/api".to_string(), false), ("web".to_string(), false)]
        );
        assert!(h.series(Some("nope")).is_none());
    }

    #[test]
    fn a_deleted_deployment_drops_to_zero_and_is_forgotten_after_the_window() {
        let mut h = History {
            window: 1_000,
            ..Default::default()
        };
        h.record_deployments(
            0,
            &[dep("default", "web", 3, 3), dep("default", "api", 1, 1)],
        );
        h.record_deployments(100, &[dep("default", "web", 3, 3)]);
        assert_eq!(values(h.series(Some("api"))), [(1, 1), (0, 0)]);
        assert!(h.deployments().contains(&("api".to_string(), true)));
        assert_eq!(h.last().map(|s| s.desired), Some(3));
        h.record_deployments(1_200, &[dep("default", "web", 3, 3)]);
        assert!(h.series(Some("api")).is_none());
        assert_eq!(h.deployments(), [("web".to_string(), false)]);
    }

    #[test]
    fn per_deployment_memory_is_bounded_in_series_and_samples() {
        let mut h = History::default();
        let many: Vec<Deployment> = (0..MAX_SERIES + 20)
            .map(|i| dep("default", &format!("d{i}"), 1, 0))
            .collect();
        h.record_deployments(0, &many);
        assert_eq!(h.deployments().len(), MAX_SERIES);
        assert_eq!(h.last().map(|s| s.desired), Some((MAX_SERIES + 20) as u32));
        // A flapping Deployment within one window keeps at most MAX_SAMPLES points.
        let mut h = History {
            window: u64::MAX / 4,
            ..Default::default()
        };
        for t in 0..(MAX_SAMPLES as u64 * 2) {
            h.record_deployments(t, &[dep("default", "web", 2, (t % 2) as i32)]);
        }
        assert_eq!(
            h.series(Some("web")).unwrap().samples().count(),
            MAX_SAMPLES
        );
    }

    #[test]
    fn a_reset_clock_starts_a_new_series() {
        let mut h = History::default();
        h.record(s(5_000, 3, 1));
        h.record(s(0, 3, 0));
        assert_eq!(h.samples().count(), 1);
    }

    #[test]
    fn the_gap_band_runs_along_desired_and_back_along_ready() {
        let d = band_path(&[(0, 2, 0), (50, 2, 2)], 0, 100, 2, 100.0, 10.0);
        assert_eq!(
            d,
            "M0.0,0.0 L50.0,0.0 L50.0,0.0 L100.0,0.0 L100.0,0.0 L50.0,0.0 L50.0,10.0 L0.0,10.0 Z"
        );
        assert_eq!(band_path(&[], 0, 100, 2, 100.0, 10.0), "");
    }

    #[test]
    fn series_draw_as_steps() {
        let d = step_path(&[(0, 0), (50, 2)], 0, 100, 2, 100.0, 10.0);
        assert_eq!(d, "M0.0,10.0 L50.0,10.0 L50.0,0.0 L100.0,0.0");
        assert_eq!(step_path(&[], 0, 100, 2, 100.0, 10.0), "");
    }
}
