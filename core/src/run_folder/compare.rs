//! compare.json: what `chaos compare` found, in the comparison folder beside each build's run
//! folders: the scenario, the seeds, the conclusion, and per build its runs and how each ended.
//! `chaos compare` writes it ([`Comparison::write`]); the comparison page, the index of runs and
//! `chaos report --summary` read it ([`Comparison::read`]), and nothing else.
//!
//! Written through a JSON value, so its keys come out in order of their names, as they always
//! did. Every field reads leniently (a missing one takes its default), as a page of an older
//! comparison should still render.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::Result;
use crate::rates::{Class, Tally};

/// The file `chaos compare` writes into its folder.
pub const COMPARE: &str = "compare.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Comparison {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file, as given to `chaos compare`.
    pub scenario_path: PathBuf,
    /// When the comparison began (RFC 3339).
    pub started: String,
    pub seeds: Vec<u64>,
    /// Whether the scenario declares `reached:` predicates (then the conclusion counts confirmed
    /// and held runs, else violated and passed).
    pub preconditions: bool,
    pub wall_s: f64,
    /// Whether the conclusion holds: the bug shows on the first build and not on the second (or,
    /// in a survey, some build shows it).
    pub confirmed: bool,
    pub survey: bool,
    /// `i/n` when this folder holds the i-th of n shares of a comparison (`chaos compare
    /// --shard`), which concludes nothing until `chaos compare --merge` joins the shares.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The conclusion in a sentence.
    pub conclusion: String,
    pub exit_code: i32,
    pub builds: Vec<ComparedBuild>,
    /// The words of the `chaos compare` command that plays it again, from the repository's
    /// root, without its `--seeds` ([`Comparison::command`] adds them): the scenario, every
    /// `--build` (or `--versions`), paths relative to the root. Empty in a folder of an older
    /// chaos.
    pub reproduce: Vec<String>,
}

/// One build of a comparison and its runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ComparedBuild {
    /// Its label (`fixed`, `2.2.0`).
    pub build: String,
    /// Its folder inside the comparison folder.
    pub folder: String,
    /// The image it ran (None: the scenario's own).
    pub image: Option<String>,
    /// How many runs ended in each class, by the class's word.
    pub counts: BTreeMap<String, u32>,
    pub runs: Vec<ComparedRun>,
}

/// One run of a build.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ComparedRun {
    pub seed: u64,
    /// How it ended; a class this chaos does not know reads as an error.
    #[serde(deserialize_with = "class_or_error")]
    pub class: Class,
    /// Its run folder, relative to the comparison folder.
    pub folder: PathBuf,
    pub seconds: f64,
    /// The run's one-line summary.
    pub summary: String,
}

impl Comparison {
    /// Writes compare.json into the comparison folder.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        super::write_sorted(dir, COMPARE, self)
    }

    /// A comparison folder's compare.json, or why it cannot be read.
    pub fn read(dir: &Path) -> Result<Comparison> {
        super::read_json(dir, COMPARE)
    }

    /// The command that plays these seeds of the comparison again, or None for a record of
    /// an older chaos that did not keep it.
    pub fn command(&self, seeds: &[u64]) -> Option<String> {
        if self.reproduce.is_empty() {
            return None;
        }
        let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
        let mut words = self.reproduce.clone();
        words.extend(["--seeds".to_string(), seeds.join(",")]);
        Some(super::command_line(&words))
    }
}

impl ComparedBuild {
    /// Its runs' classes and durations, counted.
    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for run in &self.runs {
            t.add(run.class, run.seconds);
        }
        t
    }

    /// Its run of `seed`, when it played one.
    pub fn run_of(&self, seed: u64) -> Option<&ComparedRun> {
        self.runs.iter().find(|r| r.seed == seed)
    }
}

fn class_or_error<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Class, D::Error> {
    Ok(super::lenient(d)?.unwrap_or(Class::Error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Written with its keys in order of their names, a build without its own image as null, and
    /// read back whole; an older record's unknown class reads as an error.
    #[test]
    fn a_comparison_written_reads_back() {
        let dir = std::env::temp_dir().join(format!("chaos-compare-json-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let record = Comparison {
            scenario: "s".into(),
            scenario_path: "scenarios/s.yaml".into(),
            started: "2026-12-04T00:00:00Z".into(),
            seeds: vec![1, 2],
            preconditions: true,
            wall_s: 12.5,
            confirmed: true,
            survey: false,
            shard: Some("1/2".into()),
            conclusion: "confirmed".into(),
            exit_code: 0,
            builds: vec![ComparedBuild {
                build: "fixed".into(),
                folder: "fixed".into(),
                image: None,
                counts: BTreeMap::from([("held".into(), 1)]),
                runs: vec![ComparedRun {
                    seed: 1,
                    class: Class::NotReached,
                    folder: "fixed/s1".into(),
                    seconds: 3.0,
                    summary: "s: ok".into(),
                }],
            }],
            reproduce: vec!["chaos".into(), "compare".into(), "scenarios/s.yaml".into()],
        };
        record.write(&dir).unwrap();
        let text = std::fs::read_to_string(dir.join(COMPARE)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(value["builds"][0]["image"], serde_json::Value::Null);
        assert_eq!(value["builds"][0]["runs"][0]["class"], "not-reached");
        assert_eq!(Comparison::read(&dir).unwrap(), record);
        let older: ComparedRun =
            serde_json::from_value(json!({"seed": 3, "class": "flaky"})).unwrap();
        assert_eq!((older.seed, older.class), (3, Class::Error));
        // The command of some of its seeds; none from a record of an older chaos.
        assert_eq!(
            record.command(&[2]).as_deref(),
            Some("chaos compare scenarios/s.yaml --seeds 2")
        );
        let older: Comparison =
            serde_json::from_value(json!({"scenario": "s", "seeds": [1]})).unwrap();
        assert!(older.reproduce.is_empty());
        assert_eq!(older.command(&[1]), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
