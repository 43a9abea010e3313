//! Where a run's wall time went (issue 44): image, create, ready, workload, settle, converge,
//! teardown, check, report. Each phase ends where the next begins, so together they are the
//! run's wall time; printed at the end of every run.

use std::sync::Mutex;
use std::time::Instant;

pub struct Phases {
    /// On the history's clock, when the workload began: where a replay's `at:` times count
    /// from (result.json's `workload_started_ns`).
    pub workload_started: std::sync::OnceLock<u64>,
    start: Instant,
    /// Each phase and when it ended, in order.
    ends: Mutex<Vec<(&'static str, Instant)>>,
}

impl Phases {
    pub fn new() -> Phases {
        Phases {
            workload_started: std::sync::OnceLock::new(),
            start: Instant::now(),
            ends: Mutex::new(Vec::new()),
        }
    }

    /// The phase `name` ended now; it began where the one before it ended.
    pub fn end(&self, name: &'static str) {
        self.end_at(name, Instant::now());
    }

    pub fn end_at(&self, name: &'static str, at: Instant) {
        if let Ok(mut ends) = self.ends.lock() {
            ends.push((name, at));
        }
    }

    /// Each phase's seconds, in order (a phase that ended twice, as `ready` may when both the
    /// cluster and the adapter wait, counts both spans).
    pub fn seconds(&self) -> Vec<(&'static str, f64)> {
        let ends = self.ends.lock().map(|e| e.clone()).unwrap_or_default();
        let mut out: Vec<(&'static str, f64)> = Vec::new();
        let mut from = self.start;
        for (name, at) in ends {
            let spent = at.saturating_duration_since(from).as_secs_f64();
            from = from.max(at);
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, s)) => *s += spent,
                None => out.push((name, spent)),
            }
        }
        out
    }

    /// `where the wall time went (151.5 s): image 0.8 s (1%), ...` as a small table.
    pub fn table(&self) -> String {
        let seconds = self.seconds();
        let total: f64 = seconds.iter().map(|(_, s)| s).sum();
        let mut out = format!("where the run's wall time went ({total:.1} s):\n");
        for (name, s) in &seconds {
            let share = if total > 0.0 { s / total * 100.0 } else { 0.0 };
            out.push_str(&format!("  {name:<9} {s:>7.1} s  {share:>3.0}%\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn phases_add_up_to_the_wall_time() {
        let phases = Phases::new();
        let t0 = phases.start;
        phases.end_at("image", t0 + Duration::from_secs(2));
        phases.end_at("create", t0 + Duration::from_secs(5));
        phases.end_at("ready", t0 + Duration::from_secs(9));
        phases.end_at("ready", t0 + Duration::from_secs(10));
        phases.end_at("workload", t0 + Duration::from_secs(50));
        assert_eq!(
            phases.seconds(),
            [
                ("image", 2.0),
                ("create", 3.0),
                ("ready", 5.0),
                ("workload", 40.0)
            ]
        );
        let table = phases.table();
        assert!(
            table.starts_with("where the run's wall time went (50.0 s):"),
            "{table}"
        );
        assert!(table.contains("  workload     40.0 s   80%"), "{table}");
    }
}
