//! result.json: the run's meta at the top level ([`RunMeta`]), the verdict over its checks, each
//! check's result ([`CheckResult`]), the preconditions the run reached and what its verdict then
//! confirms ([`Reached`], [`Confirmation`]), and the history's figures ([`Stats`]). The checks
//! write it once ([`RunResult::write`]); [`RunResult::read`] reads it back.
//!
//! It is written through a JSON value, so its keys come out in order of their names at every
//! level, as result.json always had them; a field that is None is left out, except the meta's,
//! which are written as null.

use std::collections::BTreeMap;
use std::path::Path;

use checker::Verdict;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{RunMeta, Witness, RESULT};
use crate::error::{Result, EXIT_OK, EXIT_UNKNOWN, EXIT_VIOLATION};
use crate::rates::Class;

/// A run's result.json. Its verdict and each check's name, key, verdict and summary must read;
/// any other field that does not read as its type (one an older chaos wrote otherwise) reads as
/// absent, as the meta's do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    #[serde(flatten)]
    pub meta: RunMeta,
    pub verdict: RunVerdict,
    /// Each check's result, in the scenario's order (then "faults applied"); none for a run that
    /// was not checked.
    #[serde(default)]
    pub checks: Vec<CheckResult>,
    /// Why the run was not checked (interrupted, the harness failed).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub error: Option<String>,
    /// Why the run stopped before anything was played (the build lacks a `config:` key).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub stopped: Option<String>,
    /// The scenario's `reached:` predicates, when it declares any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub preconditions: Option<Vec<Reached>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub confirmation: Option<Confirmation>,
    /// The confirmation in the sentence a summary leads with.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub confirmation_sentence: Option<String>,
    /// For a scenario imported from a model checker's trace (`chaos trace import`): how many
    /// of the trace's steps the run followed, and the sentence that says so.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub trace: Option<TraceFollowed>,
    /// None when no history could be read.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub stats: Option<Stats>,
}

impl RunResult {
    /// A result with no check yet: the meta and the verdict.
    pub fn new(meta: RunMeta, verdict: RunVerdict) -> RunResult {
        RunResult {
            meta,
            verdict,
            checks: Vec::new(),
            error: None,
            stopped: None,
            preconditions: None,
            confirmation: None,
            confirmation_sentence: None,
            trace: None,
            stats: None,
        }
    }

    /// Writes result.json (pretty JSON, keys in order of their names).
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        super::write_sorted(run_dir, RESULT, self)
    }

    /// A run folder's result.json, or why it cannot be read.
    pub fn read(run_dir: &Path) -> Result<RunResult> {
        RunResult::of(run_dir, super::read_object(run_dir, RESULT)?)
    }

    /// result.json already read as JSON (and redacted, for a report), or why it is no run's.
    pub fn of(run_dir: &Path, value: Value) -> Result<RunResult> {
        let mut result: RunResult = super::from_object(run_dir, RESULT, value.clone())?;
        result.meta.note_odd(&value);
        Ok(result)
    }

    /// The preconditions the run did not reach.
    pub fn unreached(&self) -> impl Iterator<Item = &Reached> {
        self.preconditions.iter().flatten().filter(|p| !p.reached)
    }

    /// The "faults applied" check's (applied, planned) fault steps, when the run planned any.
    pub fn steps_applied(&self) -> Option<(Value, Value)> {
        let detail = self
            .checks
            .iter()
            .find(|c| c.check == "faults")?
            .detail
            .as_ref();
        let field = |name: &str| detail.map_or(Value::Null, |d| d[name].clone());
        Some((field("applied"), field("total")))
    }
}

/// A run's verdict: the checks' ([`Verdict`]) or why there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunVerdict {
    Ok,
    Illegal,
    Unknown,
    /// Stopped by the user (or a signal) before its checks ran.
    Interrupted,
    /// The harness failed.
    Error,
}

impl RunVerdict {
    /// The word result.json writes.
    pub fn word(self) -> &'static str {
        match self {
            RunVerdict::Ok => "ok",
            RunVerdict::Illegal => "illegal",
            RunVerdict::Unknown => "unknown",
            RunVerdict::Interrupted => "interrupted",
            RunVerdict::Error => "error",
        }
    }
}

impl From<Verdict> for RunVerdict {
    fn from(v: Verdict) -> RunVerdict {
        match v {
            Verdict::Ok => RunVerdict::Ok,
            Verdict::Illegal => RunVerdict::Illegal,
            Verdict::Unknown => RunVerdict::Unknown,
        }
    }
}

/// What a run ended as, for counting over seeds (the rates live in `crate::rates`; the
/// classing of a result lives here, with the result).
impl Class {
    /// From a run's result.json.
    pub fn of_result(result: &RunResult) -> Class {
        if let Some(confirmation) = result.confirmation {
            return match confirmation {
                Confirmation::Confirmed => Class::Confirmed,
                Confirmation::Held => Class::Held,
                Confirmation::NotReached => Class::NotReached,
                Confirmation::ViolatedUnreached => Class::ViolatedUnreached,
                Confirmation::Undecided => Class::Undecided,
            };
        }
        match result.verdict {
            RunVerdict::Illegal => Class::Violated,
            RunVerdict::Ok => Class::Passed,
            RunVerdict::Unknown => Class::Undecided,
            RunVerdict::Interrupted | RunVerdict::Error => Class::Error,
        }
    }

    /// From a run folder: its result.json's class, or an error when it cannot be read.
    pub fn of_run(run_dir: &std::path::Path) -> Class {
        RunResult::read(run_dir).map_or(Class::Error, |r| Class::of_result(&r))
    }
}

/// One check's result as result.json, `chaos check` and the reports show it. A check may give
/// more than one (fencing: one per property).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// What the reports call it: `linearizable (cas-register)`, `fencing: NoAckedWriteLoss`.
    pub name: String,
    /// The check's scenario key (`faults` for the "faults applied" check).
    pub check: String,
    #[serde(serialize_with = "verdict_word", deserialize_with = "verdict_of_word")]
    pub verdict: Verdict,
    /// The verdict in a sentence; its times count from the workload's start.
    pub summary: String,
    /// The linearizability check's model.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub model: Option<String>,
    /// What shows a violation (None: the check gives none; empty: it found none). One that does
    /// not read (an older chaos's) reads as none.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub witnesses: Option<Vec<Witness>>,
    /// The check's figures in its own shape (the checker's result, the probe, the exits, ...);
    /// a null written stays Some(null).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub detail: Option<Value>,
    /// What the history gave the check to go on (a run's checks of the history).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub evidence: Option<Evidence>,
    /// Why a pass became unknown: less evidence than the check's minimum.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::lenient"
    )]
    pub insufficient: Option<String>,
}

impl CheckResult {
    /// A result with a verdict and its sentence, nothing else.
    pub fn new(name: impl Into<String>, check: &str, verdict: Verdict, summary: String) -> Self {
        CheckResult {
            name: name.into(),
            check: check.to_string(),
            verdict,
            summary,
            model: None,
            witnesses: None,
            detail: None,
            evidence: None,
            insufficient: None,
        }
    }

    /// Its detail read as the type its check writes (None: none, or not of that shape).
    pub fn detail_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        T::deserialize(self.detail.as_ref()?).ok()
    }

    /// Its witnesses (none when it gives none, or they do not read).
    pub fn witnesses(&self) -> &[Witness] {
        self.witnesses.as_deref().unwrap_or_default()
    }

    /// The same with its figures.
    pub fn with_detail(mut self, detail: impl Serialize) -> Self {
        self.detail = Some(serde_json::to_value(detail).unwrap_or_default());
        self
    }
}

fn verdict_word<S: Serializer>(v: &Verdict, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(v.as_str())
}

fn verdict_of_word<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Verdict, D::Error> {
    let word = String::deserialize(d)?;
    [Verdict::Ok, Verdict::Illegal, Verdict::Unknown]
        .into_iter()
        .find(|v| v.as_str() == word)
        .ok_or_else(|| serde::de::Error::custom(format!("`{word}` is no check's verdict")))
}

/// A field given, even as null, is Some (`deserialize_with`, beside `default` for a missing one).
fn present<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// What a history holds for the checks: operations by outcome, keys, and the failed and unknown
/// operations by class with an example message of each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Evidence {
    pub operations: usize,
    /// ok, fail, info: how many operations ended so (none: not there).
    pub by_outcome: BTreeMap<String, u64>,
    pub keys: usize,
    pub failures: Vec<Failures>,
}

impl Evidence {
    /// Operations that completed ok.
    pub fn ok(&self) -> u64 {
        self.by_outcome.get("ok").copied().unwrap_or(0)
    }
}

/// The failed or unknown operations of one class, with the first one's message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Failures {
    pub class: String,
    pub count: u64,
    pub example: String,
}

/// One `reached:` predicate's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reached {
    pub name: String,
    /// The predicate's kind: step, log, probe, history, resent, converge, config.
    pub kind: String,
    pub reached: bool,
    /// Seconds since the workload began (negative: before it), when reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
    /// What shows it was reached (the step, the log line, the operation, the probe's answer),
    /// or what was seen instead.
    pub evidence: String,
}

/// How far a run followed the trace its scenario was imported from: the trace's steps are its
/// `step-NN-...` preconditions, in order; the first one not reached is where the run left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceFollowed {
    /// The trace file and its format, as the scenario's `trace:` records them.
    pub file: String,
    pub format: String,
    /// The trace's steps.
    pub steps: usize,
    /// Steps 1 to `followed` were all reached.
    pub followed: usize,
    /// "followed steps 1-3 of 10, then left the trace at step 4 (...): expected ..., saw ...".
    pub sentence: String,
}

/// What a run's verdict says of the bug, given its preconditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confirmation {
    /// A violation, every precondition reached.
    Confirmed,
    /// No violation, every precondition reached: the situation happened and the system held.
    Held,
    /// No violation, and a precondition not reached: the run did not test the bug.
    NotReached,
    /// A violation, with a precondition not reached.
    ViolatedUnreached,
    /// A check could not decide.
    Undecided,
}

impl Confirmation {
    pub fn of(verdict: Verdict, all_reached: bool) -> Confirmation {
        match (verdict, all_reached) {
            (Verdict::Illegal, true) => Confirmation::Confirmed,
            (Verdict::Illegal, false) => Confirmation::ViolatedUnreached,
            (Verdict::Unknown, _) => Confirmation::Undecided,
            (Verdict::Ok, true) => Confirmation::Held,
            (Verdict::Ok, false) => Confirmation::NotReached,
        }
    }

    pub fn exit_code(self) -> i32 {
        match self {
            Confirmation::Confirmed | Confirmation::ViolatedUnreached => EXIT_VIOLATION,
            Confirmation::Held => EXIT_OK,
            Confirmation::NotReached | Confirmation::Undecided => EXIT_UNKNOWN,
        }
    }

    /// The word result.json writes (`not-reached`).
    pub fn key(self) -> &'static str {
        match self {
            Confirmation::Confirmed => "confirmed",
            Confirmation::Held => "held",
            Confirmation::NotReached => "not-reached",
            Confirmation::ViolatedUnreached => "violated-unreached",
            Confirmation::Undecided => "undecided",
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Confirmation::Confirmed => "confirmed",
            Confirmation::Held => "held",
            Confirmation::NotReached => "not reached",
            Confirmation::ViolatedUnreached => "violated, not all preconditions reached",
            Confirmation::Undecided => "undecided",
        }
    }

    /// The sentence a summary leads with.
    pub fn sentence(self, unreached: &[&Reached]) -> String {
        let names = || {
            unreached
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Confirmation::Confirmed => {
                "confirmed: every precondition reached, and a check found the violation".into()
            }
            Confirmation::Held => {
                "held: the situation happened (every precondition reached) and the system held"
                    .into()
            }
            Confirmation::NotReached => {
                format!("not reached: {} — the run did not test the bug", names())
            }
            Confirmation::ViolatedUnreached => format!("violated, but not reached: {}", names()),
            Confirmation::Undecided => "undecided: a check could not decide".into(),
        }
    }
}

/// The history's figures: operations per kind and outcome, latencies of completed operations
/// (in and out of the fault windows), the fault windows and the faults applied by kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    pub operations: usize,
    /// Operations that completed ok.
    pub ok: usize,
    /// Per operation kind (`f`): how many ended ok, fail, info.
    pub by_kind: BTreeMap<String, BTreeMap<String, u64>>,
    pub latency: BTreeMap<String, Latency>,
    /// Operations invoked while a fault was in force (apply to undo) against the rest.
    pub latency_during_faults: BTreeMap<String, Latency>,
    pub latency_outside_faults: BTreeMap<String, Latency>,
    /// When faults were in force, in seconds from the workload's start.
    pub fault_windows_s: Vec<[f64; 2]>,
    /// Applied faults by action.
    pub faults: BTreeMap<String, u64>,
}

/// Latency percentiles of one operation kind's completed operations, in ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Latency {
    pub count: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn folder(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("chaos-result-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Written as result.json always was (the meta's absent fields as null, the checks' absent
    /// fields left out, keys in order of their names) and read back whole, a null `detail`
    /// included.
    #[test]
    fn a_result_written_reads_back() {
        let dir = folder("round-trip");
        let mut result = RunResult::new(
            RunMeta {
                scenario: Some("s".into()),
                seed: Some(3),
                ..RunMeta::default()
            },
            RunVerdict::Unknown,
        );
        let probe = CheckResult::new(
            "conditional-writes",
            "conditional-writes",
            Verdict::Unknown,
            "the probe did not run".into(),
        )
        .with_detail(Value::Null);
        result.checks = vec![probe];
        result.confirmation = Some(Confirmation::Undecided);
        result.write(&dir).unwrap();
        let text = std::fs::read_to_string(dir.join(RESULT)).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(value["expect"], Value::Null);
        assert_eq!(
            value["checks"][0],
            json!({"name": "conditional-writes", "check": "conditional-writes",
                   "verdict": "unknown", "summary": "the probe did not run", "detail": null})
        );
        assert!(value.get("stats").is_none() && value.get("error").is_none());
        let read = RunResult::read(&dir).unwrap();
        assert_eq!(read.checks, result.checks);
        assert_eq!(read.meta, result.meta);
        assert_eq!(read.confirmation, Some(Confirmation::Undecided));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A field of an older chaos's (or a hand's) shape reads as absent and the rest still
    /// reads; a verdict that is none of the run's words is refused, naming the file.
    #[test]
    fn odd_fields_read_as_absent_and_a_bad_verdict_is_refused() {
        let dir = folder("lenient");
        let odd = json!({
            "scenario": "s", "verdict": "ok", "stats": "many", "confirmation": 7,
            "preconditions": [{"name": "p"}], "error": ["x"],
            "checks": [{"name": "n", "check": "durable", "verdict": "ok", "summary": "s",
                        "witnesses": "none", "evidence": 3}]
        });
        let read = RunResult::of(&dir, odd).unwrap();
        assert_eq!(read.verdict, RunVerdict::Ok);
        assert!(read.stats.is_none() && read.confirmation.is_none() && read.error.is_none());
        assert!(read.preconditions.is_none());
        assert_eq!(read.checks[0].witnesses(), []);
        let e = RunResult::of(&dir, json!({"scenario": "s", "verdict": "maybe"}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("result.json: not what a run writes there"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A check's verdict is one of the checker's three words; anything else is no result.json
    /// of a run.
    #[test]
    fn a_check_verdict_is_one_of_three_words() {
        let check = |verdict: &str| {
            serde_json::from_value::<CheckResult>(
                json!({"name": "n", "check": "c", "verdict": verdict, "summary": "s"}),
            )
        };
        assert_eq!(check("illegal").unwrap().verdict, Verdict::Illegal);
        assert!(check("interrupted").is_err());
    }

    #[test]
    fn each_verdict_and_its_exit_code() {
        use Confirmation::*;
        let cases = [
            (Verdict::Illegal, true, Confirmed, EXIT_VIOLATION),
            (Verdict::Ok, true, Held, EXIT_OK),
            (Verdict::Ok, false, NotReached, EXIT_UNKNOWN),
            (Verdict::Illegal, false, ViolatedUnreached, EXIT_VIOLATION),
            (Verdict::Unknown, true, Undecided, EXIT_UNKNOWN),
        ];
        for (verdict, all, want, code) in cases {
            let got = Confirmation::of(verdict, all);
            assert_eq!(got, want);
            assert_eq!(got.exit_code(), code);
        }
        let missing = Reached {
            name: "every-om-back".into(),
            kind: "step".into(),
            reached: false,
            at_s: None,
            evidence: String::new(),
        };
        assert_eq!(
            NotReached.sentence(&[&missing]),
            "not reached: every-om-back — the run did not test the bug"
        );
    }
}
