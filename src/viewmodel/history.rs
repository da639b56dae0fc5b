//! The desired / ready / available chart: samples of the Deployments' spec and status over time.

use std::collections::VecDeque;

use crate::sim::types::Millis;

/// One sample, summed over every Deployment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub t: Millis,
    /// Σ spec.replicas.
    pub desired: u32,
    /// Σ status.readyReplicas.
    pub ready: u32,
    /// Σ status.availableReplicas.
    pub available: u32,
}

/// A bounded series of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    samples: VecDeque<Sample>,
    /// Keep this much simulated time.
    pub window: Millis,
    /// Bumped when a sample is recorded.
    pub version: u64,
}

impl Default for History {
    fn default() -> Self {
        History {
            samples: VecDeque::new(),
            window: 120_000,
            version: 0,
        }
    }
}

impl History {
    /// Records a sample. A sample equal to the last one only moves the line's end forward, so a
    /// long steady state costs one point, not thousands.
    pub fn record(&mut self, s: Sample) {
        if let Some(last) = self.samples.back() {
            if s.t < last.t {
                // Time went backwards: the simulation was reset.
                self.samples.clear();
            }
        }
        let n = self.samples.len();
        if n >= 2 {
            let (a, b) = (self.samples[n - 2], self.samples[n - 1]);
            let same =
                |x: &Sample| (x.desired, x.ready, x.available) == (s.desired, s.ready, s.available);
            if same(&a) && same(&b) {
                self.samples[n - 1].t = s.t;
                self.version += 1;
                return;
            }
        }
        self.samples.push_back(s);
        // Keep one sample older than the window, so the line starts at the left edge.
        while self.samples.len() > 2 && self.samples[1].t + self.window < s.t {
            self.samples.pop_front();
        }
        self.version += 1;
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.samples.clear();
        self.version += 1;
    }

    /// The kept samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }

    /// The largest value any series reached (at least 1, so the chart has a scale).
    pub fn max_value(&self) -> u32 {
        self.samples
            .iter()
            .map(|s| s.desired.max(s.ready).max(s.available))
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// The latest sample.
    pub fn last(&self) -> Option<Sample> {
        self.samples.back().copied()
    }
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
    let x = |t: Millis| ((t.max(t0) - t0) as f64 / (t1 - t0) as f64 * w).clamp(0.0, w);
    let y = |v: u32| h - (v as f64 / max.max(1) as f64) * h;
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
    let x = |t: Millis| ((t.max(t0) - t0) as f64 / (t1 - t0) as f64 * w).clamp(0.0, w);
    let y = |v: u32| h - (v as f64 / max.max(1) as f64) * h;
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
