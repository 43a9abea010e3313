//! Which faults hit one request: each fsync or write asks here, is counted, and gets its delay
//! or errno (logged as an `inject` event) from the faults in force.

use std::sync::atomic::Ordering;
use std::time::Duration;

use regex::Regex;
use serde_json::json;

use super::command::{errno_name, Delay};
use super::{lock, Control};

fn matches(paths: &Option<Regex>, path: &str) -> bool {
    paths.as_ref().is_none_or(|r| r.is_match(path))
}

/// What to do with one fsync.
pub struct FsyncPlan {
    pub delay: Option<Duration>,
    pub error: Option<i32>,
}

impl Control {
    /// A uniform random number in [0, 1).
    pub fn random(&self) -> f64 {
        let mut s = lock(&self.rng);
        *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn jittered(&self, d: &Delay) -> Duration {
        if d.jitter.is_zero() {
            d.delay
        } else {
            d.delay + d.jitter.mul_f64(self.random())
        }
    }

    pub fn plan_fsync(&self, op: &str, path: impl FnOnce() -> String) -> FsyncPlan {
        self.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
        let mut f = lock(&self.faults);
        let mut plan = FsyncPlan {
            delay: None,
            error: None,
        };
        if f.fsync_delay.is_none() && f.fsync_error.is_none() {
            return plan;
        }
        let path = path();
        if let Some(d) = &f.fsync_delay {
            if matches(&d.paths, &path) {
                let delay = self.jittered(d);
                plan.delay = Some(delay);
                self.counters.fsyncs_delayed.fetch_add(1, Ordering::Relaxed);
                self.log_event(
                    "inject",
                    Some("fsync-delay"),
                    Some(&path),
                    json!({"op": op, "delay_ms": delay.as_secs_f64() * 1e3}),
                );
            }
        }
        let mut exhausted = false;
        if let Some(e) = &mut f.fsync_error {
            if matches(&e.paths, &path) {
                let hit = match (e.count.as_mut(), e.fraction) {
                    (Some(c), _) if *c > 0 => {
                        *c -= 1;
                        exhausted = *c == 0;
                        true
                    }
                    (None, Some(fr)) => self.random() < fr,
                    _ => false,
                };
                if hit {
                    plan.error = Some(e.errno);
                    self.counters.fsyncs_failed.fetch_add(1, Ordering::Relaxed);
                    self.log_event(
                        "inject",
                        Some("fsync-error"),
                        Some(&path),
                        json!({"op": op, "errno": e.errno, "error": errno_name(e.errno),
                               "remaining": e.count}),
                    );
                }
            }
        }
        if exhausted {
            f.fsync_error = None;
        }
        plan
    }

    pub fn plan_write(&self, len: usize, path: impl FnOnce() -> String) -> Option<Duration> {
        self.counters.writes.fetch_add(1, Ordering::Relaxed);
        self.counters
            .bytes_written
            .fetch_add(len as u64, Ordering::Relaxed);
        let f = lock(&self.faults);
        let d = f.write_delay.as_ref()?;
        let path = path();
        if !matches(&d.paths, &path) {
            return None;
        }
        let delay = self.jittered(d);
        self.counters.writes_delayed.fetch_add(1, Ordering::Relaxed);
        self.log_event(
            "inject",
            Some("write-delay"),
            Some(&path),
            json!({"bytes": len, "delay_ms": delay.as_secs_f64() * 1e3}),
        );
        Some(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::super::command::parse_command;
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn fsync_error_count_runs_out() {
        let c = Control::new(None).unwrap();
        let cmd = parse_command(&w("fsync-error --count 2")).unwrap();
        c.apply(cmd, &w("fsync-error --count 2"));
        assert_eq!(c.plan_fsync("fsync", || "/a".into()).error, Some(libc::EIO));
        assert_eq!(c.plan_fsync("fsync", || "/a".into()).error, Some(libc::EIO));
        assert_eq!(c.plan_fsync("fsync", || "/a".into()).error, None);
    }

    #[test]
    fn paths_filter() {
        let c = Control::new(None).unwrap();
        let words = w("fsync-delay 10ms --paths wal$");
        c.apply(parse_command(&words).unwrap(), &words);
        assert!(c.plan_fsync("fsync", || "/d/x.wal".into()).delay.is_some());
        assert!(c.plan_fsync("fsync", || "/d/x.db".into()).delay.is_none());
    }
}
