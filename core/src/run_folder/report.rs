//! report.json: the run in the report's words (the verdict, each check's sentences, the headline,
//! the counts), which `chaos report` writes beside index.html ([`ReportSummary::write`]) and the
//! index of runs reads back ([`ReportSummary::read`]) rather than rendering every run again.
//!
//! Written through a JSON value, so its keys come out in order of their names, an absent one as
//! null, as they always did; every field reads leniently (a missing one takes its default).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Confirmation, Reached, RunVerdict};
use crate::error::Result;

/// The file `chaos report` writes for the index.
pub const REPORT: &str = "report.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportSummary {
    pub scenario: Option<String>,
    pub seed: Option<u64>,
    #[serde(deserialize_with = "super::lenient")]
    pub verdict: Option<RunVerdict>,
    pub started: Option<String>,
    pub duration_s: Option<f64>,
    pub system: Option<String>,
    pub command: Option<String>,
    /// Operations in the history.
    pub operations: Option<usize>,
    /// Fault windows on the timeline.
    pub faults: usize,
    /// The sentence the run's line leads with: the first failing check's, or why it was not
    /// checked.
    pub headline: Option<String>,
    pub checks: Vec<CheckInWords>,
    pub error: Option<String>,
    #[serde(deserialize_with = "super::lenient")]
    pub confirmation: Option<Confirmation>,
    pub confirmation_sentence: Option<String>,
    #[serde(deserialize_with = "super::lenient")]
    pub preconditions: Option<Vec<Reached>>,
}

/// One check as the report words it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckInWords {
    pub name: String,
    /// ok, illegal, unknown.
    pub verdict: String,
    /// What it found, a sentence per finding (the first leads).
    pub sentences: Vec<String>,
    /// result.json's summary of it.
    pub summary: String,
}

impl ReportSummary {
    /// Writes report.json into the run folder.
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        super::write_sorted(run_dir, REPORT, self)
    }

    /// A run folder's report.json, or why it cannot be read.
    pub fn read(run_dir: &Path) -> Result<ReportSummary> {
        super::read_json(run_dir, REPORT)
    }
}
