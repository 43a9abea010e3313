//! shrink/shrink.json: what `chaos shrink` found (the recorded schedule beside the smallest one
//! that still fails, and every trial it played), written by shrink.rs into the run folder's
//! shrink/ and read by the run's report. A part of a file that does not read is absent (the
//! report shows what remains).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The file's path in a run folder.
pub const SHRINK: &str = "shrink/shrink.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShrinkSummary {
    /// The run folder shrunk.
    #[serde(default, deserialize_with = "super::lenient")]
    pub run: Option<PathBuf>,
    /// The checks whose violation a smaller schedule must still find.
    #[serde(default, deserialize_with = "super::lenient")]
    pub checks: Option<Vec<String>>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub conclusion: Option<String>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub original: Option<ShrunkSchedule>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub minimal: Option<ShrunkSchedule>,
    /// How often the minimal schedule failed, of how many plays.
    #[serde(default, deserialize_with = "super::lenient")]
    pub reproduced: Option<Reproduced>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub reduced: Option<bool>,
    /// The runs shrinking could use, and used.
    #[serde(default, deserialize_with = "super::lenient")]
    pub budget: Option<u32>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub runs_used: Option<u32>,
    /// minimal.yaml, when one was written: relative to the repository's root when it is inside
    /// it (an older chaos kept the path as the run folder was given).
    #[serde(default, deserialize_with = "super::lenient")]
    pub minimal_yaml: Option<PathBuf>,
    #[serde(default, deserialize_with = "super::lenient")]
    pub trials: Option<Vec<ShrinkTrial>>,
}

/// A schedule and workload as shrink.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShrunkSchedule {
    #[serde(default)]
    pub steps: Vec<ShrunkStep>,
    #[serde(default)]
    pub workload: ShrunkWorkload,
    /// `30s x 4 processes at 20/s`.
    #[serde(default)]
    pub workload_text: Option<String>,
}

/// The workload's length, processes and rate (`replay::WorkloadShape` in words).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShrunkWorkload {
    /// `30s`.
    #[serde(default)]
    pub duration: Option<String>,
    #[serde(default)]
    pub processes: Option<u32>,
    /// Operations per second.
    #[serde(default)]
    pub rate: Option<f64>,
}

/// One concrete step: `replay::ConcreteStep`'s fields and the step in words.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShrunkStep {
    /// `12.3s kill etcd2 for 4s`.
    #[serde(default)]
    pub describe: Option<String>,
    /// The step's own fields (when, what, where), as replay words them.
    #[serde(flatten)]
    pub step: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reproduced {
    pub failures: u32,
    pub plays: u32,
}

/// One candidate schedule shrinking played.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShrinkTrial {
    #[serde(default)]
    pub trial: Option<usize>,
    /// What the candidate changed (`end the workload at 3s`, `drop step 2`).
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub steps: Option<usize>,
    #[serde(default)]
    pub workload: Option<String>,
    #[serde(default)]
    pub failures: Option<u32>,
    #[serde(default)]
    pub plays: Option<u32>,
    /// Whether it still failed as the recorded run did (and was kept).
    #[serde(default)]
    pub failed: Option<bool>,
    /// Its run folders, inside shrink/.
    #[serde(default)]
    pub folders: Vec<String>,
}

impl ShrinkSummary {
    /// Writes shrink.json into `shrink_dir` (the run folder's shrink/): pretty JSON, its keys
    /// in order of their names.
    pub fn write(&self, shrink_dir: &Path) -> std::io::Result<()> {
        let value = serde_json::to_value(self).map_err(std::io::Error::other)?;
        super::write_json(shrink_dir, "shrink.json", &value)
    }

    /// A run folder's shrink/shrink.json; None when it was not shrunk (or the file is no
    /// JSON object).
    pub fn read(run_dir: &Path) -> Option<ShrinkSummary> {
        super::read_json(run_dir, SHRINK).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_summary_written_reads_back() {
        let dir = std::env::temp_dir().join(format!("chaos-shrink-file-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("shrink")).unwrap();
        assert_eq!(ShrinkSummary::read(&dir), None);
        let step = |d: &str| ShrunkStep {
            describe: Some(d.into()),
            step: json!({"at": "2s", "action": "kill", "targets": ["n1"], "step": 0, "firing": 0})
                .as_object()
                .cloned()
                .unwrap(),
        };
        let schedule = |steps: Vec<ShrunkStep>, text: &str| ShrunkSchedule {
            steps,
            workload: ShrunkWorkload {
                duration: Some("30s".into()),
                processes: Some(4),
                rate: Some(20.0),
            },
            workload_text: Some(text.into()),
        };
        let summary = ShrinkSummary {
            run: Some("/r/s1".into()),
            checks: Some(vec!["linearizable (cas-register)".into()]),
            conclusion: Some("1 of 2 fault steps still fail".into()),
            original: Some(schedule(
                vec![step("2s kill n1"), step("4s kill n2")],
                "30s x 8",
            )),
            minimal: Some(schedule(vec![step("2s kill n1")], "30s x 4")),
            reproduced: Some(Reproduced {
                failures: 2,
                plays: 3,
            }),
            reduced: Some(true),
            budget: Some(8),
            runs_used: Some(5),
            minimal_yaml: None,
            trials: Some(vec![ShrinkTrial {
                trial: Some(1),
                label: Some("the recorded schedule, replayed".into()),
                steps: Some(2),
                workload: Some("30s x 8".into()),
                failures: Some(1),
                plays: Some(1),
                failed: Some(true),
                folders: vec!["trial-01-1".into()],
            }]),
        };
        summary.write(&dir.join("shrink")).unwrap();
        let text = std::fs::read_to_string(dir.join(SHRINK)).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["minimal_yaml"], Value::Null);
        assert_eq!(value["minimal"]["steps"][0]["describe"], "2s kill n1");
        assert_eq!(value["minimal"]["steps"][0]["targets"], json!(["n1"]));
        assert!(text.find("\"budget\"") < text.find("\"checks\""));
        assert_eq!(
            value["original"]["workload"],
            json!({"duration": "30s", "processes": 4, "rate": 20.0})
        );
        assert_eq!(ShrinkSummary::read(&dir), Some(summary));
        std::fs::write(dir.join(SHRINK), r#"{"conclusion": 3, "budget": 8}"#).unwrap();
        let odd = ShrinkSummary::read(&dir).unwrap();
        assert_eq!((odd.conclusion, odd.budget), (None, Some(8)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
