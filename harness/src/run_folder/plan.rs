//! plan.json: every random choice of the scenario's fault steps, drawn from the seed before the
//! run ([`crate::scenario::plan::Plan`], written by [`write_plan`]), read back as a
//! [`RecordedPlan`] by the "faults applied" check (which steps the verdict rests on) and by
//! replay (each firing's drawn action, mode, `for:`, `then:` and offset). A plan's durations and
//! offsets are read in the words plan.json holds them (`3s`, `+70s`); a field an older plan
//! lacks takes its default.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::scenario::plan::Plan;

/// The file's name in a run folder.
pub const PLAN: &str = "plan.json";

/// Writes plan.json (pretty JSON; the plan's hash is over this serialization).
pub fn write_plan(run_dir: &Path, plan: &Plan) -> std::io::Result<()> {
    super::write_json(run_dir, PLAN, plan)
}

/// plan.json as its readers read it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedPlan {
    #[serde(default)]
    pub seed: Option<u64>,
    /// None: a plan of an older format, which replay cannot play.
    #[serde(default)]
    pub steps: Option<Vec<PlannedStep>>,
}

/// One fault step of the scenario as planned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlannedStep {
    /// Its number in the scenario's `faults:` (faults.jsonl's `step`).
    #[serde(default)]
    pub step: Option<u64>,
    /// The trigger in words: "at 10s", "after 2000 ops", "on log of etcd2 /regex/".
    #[serde(default)]
    pub trigger: String,
    #[serde(default)]
    pub firings: Vec<PlannedFiring>,
    /// The run may pass without this step ever applying.
    #[serde(default)]
    pub optional: bool,
}

/// One planned application of a step's action, its drawn values as plan.json words them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlannedFiring {
    /// Since the workload began, for a time-triggered step (`12.5s`).
    #[serde(default)]
    pub at: Option<String>,
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    /// How long until the undo (`for:`).
    #[serde(default)]
    pub hold: Option<String>,
    #[serde(default)]
    pub then: Option<PlannedFollowUp>,
    /// clock-skew's drawn offset (`+70s`).
    #[serde(default)]
    pub offset: Option<String>,
}

/// A firing's follow-up (`then:`) and how long after the apply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlannedFollowUp {
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub after: Option<String>,
}

/// A run folder's plan.json, or why it cannot be read (missing, not JSON, not a plan).
pub fn read_plan(run_dir: &Path) -> Result<RecordedPlan> {
    super::read_json(run_dir, PLAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan a scenario draws, written, reads back with every value its readers use.
    #[test]
    fn a_written_plan_reads_back() {
        let text = "name: t\nsystem: etcd\ncluster: { profile: etcd }\n\
                    workload: { kind: register, rate: 10/s, duration: 20s }\nfaults:\n\
                    \x20 - every: 2s..6s\n    do: [pause, kill, partition]\n    for: 1s..3s\n\
                    \x20 - at: 5s\n    do: clock-skew\n    offset: +60s..+90s\n    then: { do: restore-clock, after: 2s }\n    optional: true\n";
        let spec = crate::scenario::parse_text(Path::new("t.yaml"), text).unwrap();
        let plan = crate::scenario::plan::make_plan(&spec, 9);
        let dir = std::env::temp_dir().join(format!("chaos-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_plan(&dir, &plan).unwrap();
        let read = read_plan(&dir).unwrap();
        assert_eq!(read.seed, Some(9));
        let steps = read.steps.unwrap();
        assert_eq!(steps.len(), plan.steps.len());
        for (read, planned) in steps.iter().zip(&plan.steps) {
            assert_eq!(read.step, Some(planned.step as u64));
            assert_eq!(read.trigger, planned.trigger);
            assert_eq!(read.optional, planned.optional);
            assert_eq!(read.firings.len(), planned.firings.len());
            for (r, p) in read.firings.iter().zip(&planned.firings) {
                let words = |v: &serde_json::Value| v.as_str().map(str::to_string);
                let p = serde_json::to_value(p).unwrap();
                assert_eq!(r.at, words(&p["at"]));
                assert_eq!(r.action, words(&p["action"]));
                assert_eq!(r.mode, words(&p["mode"]));
                assert_eq!(r.hold, words(&p["hold"]));
                assert_eq!(r.offset, words(&p["offset"]));
                assert_eq!(
                    r.then.as_ref().and_then(|t| t.after.clone()),
                    words(&p["then"]["after"])
                );
            }
        }
        assert!(steps[0].firings.len() > 1);
        assert!(steps[0].firings.iter().all(|f| f.hold.is_some()));
        assert!(steps[1].optional && steps[1].firings[0].offset.is_some());
        let then = steps[1].firings[0].then.clone().unwrap();
        assert_eq!(
            (then.action.as_deref(), then.after.as_deref()),
            (Some("restore-clock"), Some("2s"))
        );
        // A plan of an older format reads, without steps; one that is no plan does not.
        std::fs::write(dir.join(PLAN), r#"{"seed": 3}"#).unwrap();
        assert_eq!(read_plan(&dir).unwrap().steps, None);
        std::fs::write(dir.join(PLAN), r#"{"steps": 3}"#).unwrap();
        let e = read_plan(&dir).unwrap_err().to_string();
        assert!(
            e.contains("plan.json: not what a run writes there: "),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
