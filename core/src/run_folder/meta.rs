//! A run's meta: what the run was (scenario, system, seed, when, the command that plays it
//! again) and what replaying it needs (where its scenario and compose file were, when its
//! workload began on the history's clock). `run/mod.rs` makes it; it is the top level of
//! result.json (flattened into [`super::RunResult`], the checks adding their part), and
//! [`RunMeta::read`] / [`RunMeta::of`] read it back alone. Every field is optional:
//! a folder written by an older chaos lacks some, and a field of the wrong type reads as absent
//! (as the readers that asked for it by name treated it).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;

/// The file that holds the meta (with the checks' results) in a run folder.
pub const RESULT: &str = "result.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    #[serde(default, deserialize_with = "super::lenient")]
    pub run_id: Option<String>,
    /// The scenario's name.
    #[serde(default, deserialize_with = "super::lenient")]
    pub scenario: Option<String>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub system: Option<String>,
    /// The cluster profile the run played on.
    #[serde(default, deserialize_with = "super::lenient")]
    pub profile: Option<String>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub seed: Option<u64>,
    /// When the run began (RFC 3339).
    #[serde(default, deserialize_with = "super::lenient")]
    pub started: Option<String>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub duration_s: Option<f64>,
    /// The command that plays the run again.
    #[serde(default, deserialize_with = "super::lenient")]
    pub command: Option<String>,
    /// What a suite expects of this play (`pass`, `fail`, `any`).
    #[serde(default, deserialize_with = "super::lenient")]
    pub expect: Option<String>,
    /// The scenario file the run was played from (what `chaos run --replay` and `chaos shrink`
    /// need besides the folder's own files).
    #[serde(default, deserialize_with = "super::lenient")]
    pub scenario_path: Option<PathBuf>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub compose_path: Option<PathBuf>,
    /// The workload's start in the recorder's nanoseconds (history.jsonl's clock): the time
    /// base everything the run says counts from. None: the workload never started.
    #[serde(default, deserialize_with = "super::lenient")]
    pub workload_started_ns: Option<u64>,
    /// The run folder this run replays.
    #[serde(default, deserialize_with = "super::lenient")]
    pub replay_of: Option<PathBuf>,
    /// An attached run's compose project and the prefix of its keys.
    #[serde(default, deserialize_with = "super::lenient")]
    pub attach: Option<Attach>,
    /// The fields result.json holds but that cannot be shown for what they claim to be, each
    /// with why (a seed past 2^64 - 1, a negative duration): read as absent, and said rather
    /// than shown as "nil" or as a 300-digit number. Filled by [`RunMeta::note_odd`].
    #[serde(skip)]
    pub odd: Vec<String>,
}

/// The longest duration a run's `duration_s` may say: a year, in seconds.
pub const MAX_DURATION_S: f64 = 365.0 * 24.0 * 3600.0;

/// An attached run's cluster: a compose project's, its keys carrying the run's prefix.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Attach {
    pub project: String,
    pub key_prefix: String,
}

impl RunMeta {
    /// The meta of a result.json already read (its other keys are the checks').
    pub fn of(result: &Value) -> RunMeta {
        let mut meta = RunMeta::deserialize(result).unwrap_or_default();
        meta.note_odd(result);
        meta
    }

    /// Notes in [`RunMeta::odd`] the seed and duration that `result` (the result.json this meta
    /// was read from) holds and that cannot be shown: a seed that is not a whole number from 0
    /// to 2^64 - 1, a duration that is not a number of seconds from 0 to a year (which is then
    /// read as absent).
    pub fn note_odd(&mut self, result: &Value) {
        self.odd.clear();
        let raw = |key: &str| result.get(key).filter(|v| !v.is_null());
        if let (Some(v), None) = (raw("seed"), self.seed) {
            self.odd.push(format!(
                "result.json's `seed` is {}, not a seed (a whole number from 0 to {})",
                crate::shown::shown(&v.to_string()),
                u64::MAX
            ));
        }
        if let Some(v) = raw("duration_s") {
            let fits = self
                .duration_s
                .is_some_and(|d| d.is_finite() && (0.0..=MAX_DURATION_S).contains(&d));
            if !fits {
                self.duration_s = None;
                self.odd.push(format!(
                    "result.json's `duration_s` is {}, not a run's duration (seconds, from 0 to {MAX_DURATION_S}, a year)",
                    crate::shown::shown(&v.to_string())
                ));
            }
        }
    }

    /// The seed as the report says it: the number, or why there is none.
    pub fn seed_words(&self) -> String {
        match self.seed {
            Some(s) => s.to_string(),
            None if self.odd.iter().any(|o| o.contains("`seed`")) => "unreadable".into(),
            None => "not recorded".into(),
        }
    }

    /// The duration as the report says it: `12.5 s`, or why there is none.
    pub fn duration_words(&self) -> String {
        match self.duration_s {
            Some(d) => format!("{d:.1} s"),
            None if self.odd.iter().any(|o| o.contains("`duration_s`")) => {
                "duration unreadable".into()
            }
            None => "duration not recorded".into(),
        }
    }

    /// A run folder's meta, or why result.json cannot be read.
    pub fn read(run_dir: &Path) -> Result<RunMeta> {
        Ok(RunMeta::of(&super::read_object(run_dir, RESULT)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta() -> RunMeta {
        RunMeta {
            run_id: Some("20260101t000000-abcd".into()),
            scenario: Some("etcd-register".into()),
            description: Some("a register".into()),
            system: Some("etcd".into()),
            profile: Some("etcd".into()),
            seed: Some(7),
            started: Some("2026-01-01T00:00:00Z".into()),
            duration_s: Some(12.5),
            command: Some("chaos run s.yaml --seed 7".into()),
            expect: None,
            scenario_path: Some("/s/s.yaml".into()),
            compose_path: Some("/s/docker-compose.yml".into()),
            workload_started_ns: Some(80_000_000_000),
            replay_of: None,
            attach: Some(Attach {
                project: "p".into(),
                key_prefix: "r1-".into(),
            }),
            odd: Vec::new(),
        }
    }

    /// The meta written into result.json (with the checks' keys beside it) reads back whole;
    /// its absent fields are written as null, as the run always wrote them.
    #[test]
    fn the_meta_written_reads_back() {
        let dir = std::env::temp_dir().join(format!("chaos-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut result = serde_json::to_value(meta()).unwrap();
        assert_eq!(result["expect"], Value::Null);
        assert_eq!(
            result["attach"],
            json!({"project": "p", "key_prefix": "r1-"})
        );
        result["verdict"] = json!("ok");
        result["checks"] = json!([]);
        std::fs::write(dir.join(RESULT), result.to_string()).unwrap();
        assert_eq!(RunMeta::read(&dir).unwrap(), meta());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A result.json of an older chaos lacks fields; one edited by hand may hold a field of
    /// another type: either reads as absent, and the rest still reads.
    #[test]
    fn older_and_odd_results_read() {
        let old = RunMeta::of(&json!({"scenario": "s", "seed": 3, "verdict": "ok"}));
        assert_eq!(
            (old.scenario.as_deref(), old.seed, old.workload_started_ns),
            (Some("s"), Some(3), None)
        );
        let odd = RunMeta::of(&json!({"seed": "three", "workload_started_ns": 5, "attach": 1}));
        assert_eq!((odd.seed, odd.workload_started_ns), (None, Some(5)));
        assert_eq!(odd.attach, None);
        assert_eq!(RunMeta::of(&json!([1])), RunMeta::default());
    }
}
