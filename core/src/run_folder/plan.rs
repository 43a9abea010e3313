//! plan.json: every random choice of the scenario's fault steps, drawn from the seed before the
//! run (the scenario's plan, written by its maker), read back as a
//! [`RecordedPlan`] by the "faults applied" check (which steps the verdict rests on) and by
//! replay (each firing's drawn action, mode, `for:`, `then:` and offset). A plan's durations and
//! offsets are read in the words plan.json holds them (`3s`, `+70s`); a field an older plan
//! lacks takes its default.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The file's name in a run folder.
pub const PLAN: &str = "plan.json";

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
