//! The `linearizable` check: the history against a model (register, cas-register, kv, set,
//! s3-object) through the checker's search, within a time budget; an illegal key's witness (a
//! stale read, missing adds, two creates, a torn get) leads the summary.

use std::time::Duration;

use checker::{History, ModelKind, Verdict};
use serde::Deserialize;
use serde_json::Value;

use super::kind::{not_its_spec, Check, Inputs};
use super::witness::{self, OpRef, Witness};
use crate::error::{HarnessError, Result};
use crate::faults::log::Window;
use crate::report::load::{show, Op};
use crate::report::violations::{Findings, LostWrite, StaleRead, Violation};
use crate::run_folder::{CheckResult, Clock, Evidence, FAULTS, HISTORY};
use crate::scenario::{CheckKind, CheckSpec};

/// At least this many operations completed ok (`min-ops`).
pub const MIN_OK_OPS: u64 = 10;

/// The search's budget when neither `chaos check --timeout` nor the scenario sets one.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Linearizable;

impl Check for Linearizable {
    fn kind(&self) -> CheckKind {
        CheckKind::Linearizable
    }

    /// faults.jsonl: the fault that lost a set's missing adds.
    fn inputs(&self) -> &'static [&'static str] {
        &[HISTORY, FAULTS]
    }

    fn needs_run_folder(&self) -> bool {
        false
    }

    fn run(&self, spec: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        let CheckSpec::Linearizable(spec) = spec else {
            return Err(not_its_spec(self, spec));
        };
        let model: ModelKind = spec.model.value.parse().map_err(HarnessError::BadInput)?;
        // --timeout of `chaos check` first, then the scenario's budget.
        let timeout = inputs
            .timeout
            .or(spec.timeout.map(|d| d.0))
            .unwrap_or(DEFAULT_TIMEOUT);
        let result = check(inputs.history, model, timeout, inputs.faults, inputs.clock)?;
        Ok(vec![result])
    }

    fn weighs_evidence(&self) -> bool {
        true
    }

    fn shortfall(&self, spec: &CheckSpec, _: &CheckResult, evidence: &Evidence) -> Option<String> {
        let CheckSpec::Linearizable(s) = spec else {
            return None;
        };
        let (ok, total) = (evidence.ok(), evidence.operations);
        let min = s.min_ops.unwrap_or(MIN_OK_OPS);
        (ok < min).then(|| {
            format!(
                "{ok} of {total} operations completed ok, fewer than min-ops {min}; failed or unknown: {}",
                super::evidence::failures_phrase(evidence)
            )
        })
    }

    fn findings(&self, findings: &mut Findings) {
        let Some(detail) = findings.check.detail_as::<Detail>() else {
            return;
        };
        for p in &detail.partitions {
            if let Some(e) = &p.explanation {
                let v = violation(findings, p.key.clone().unwrap_or_default(), e);
                findings.push(v);
            }
        }
    }

    fn in_words(&self, result: &CheckResult) -> String {
        let detail = result.detail_as::<Detail>().unwrap_or_default();
        match (result.verdict, &detail.operations) {
            (Verdict::Ok, Some(operations)) => {
                let model = result.model.as_deref().unwrap_or("");
                let keys = detail.partitions.len();
                format!(
                    "all {} operations{} can be put in one order that agrees with real time and the {} model",
                    show(operations),
                    if keys > 1 { format!(" on {keys} keys") } else { String::new() },
                    if model.is_empty() { "checked" } else { model }
                )
            }
            _ => super::kind::verdict_in_words(result),
        }
    }
}

/// The check on `history` with `model`, within `timeout`; its sentences give times from the
/// workload's start (`clock`).
pub fn check(
    history: &History,
    model: ModelKind,
    timeout: Duration,
    faults: &[Window],
    clock: Clock,
) -> Result<CheckResult> {
    let budget = checker::Budget::with_timeout(timeout);
    let result = checker::linearizable::check(history, model, &budget)
        .map_err(|e| HarnessError::BadInput(format!("history does not fit model {model}: {e}")))?;
    let witnesses = witness::linearizable(history, model, &result, faults, clock);
    // The first witness in words is the clearest summary (a stale read, two creates).
    let first_words = witnesses.first().and_then(Witness::message);
    let summary = match (result.verdict, result.explanation()) {
        (Verdict::Illegal, _) if first_words.is_some() => first_words.unwrap_or_default().into(),
        (Verdict::Illegal, Some(e)) => e.message.clone(),
        (Verdict::Illegal, None) => "not linearizable".to_string(),
        (Verdict::Unknown, _) => {
            let undecided: Vec<String> = result
                .partitions
                .iter()
                .filter(|p| p.verdict == Verdict::Unknown)
                .map(|p| p.key.clone().unwrap_or_default())
                .collect();
            format!(
                "undecided within the budget ({:?}) for key(s) {}",
                timeout,
                undecided.join(", ")
            )
        }
        (Verdict::Ok, _) => format!(
            "linearizable: {} operations, {} states explored",
            result.operations, result.states_explored
        ),
    };
    Ok(CheckResult {
        model: Some(model.name().to_string()),
        witnesses: Some(witnesses),
        ..CheckResult::new(
            format!("linearizable ({model})"),
            CheckKind::Linearizable.name(),
            result.verdict,
            summary,
        )
        .with_detail(&result)
    })
}

/// The linearizable check's detail as result.json holds it (the checker's
/// [`checker::LinearizabilityResult`]), read back for the report and `chaos replay`: the
/// fields they use, each as lenient as the reading it replaced.
#[derive(Debug, Default, Deserialize)]
pub struct Detail {
    /// Operations in the history (shown as written).
    #[serde(default)]
    pub operations: Option<Value>,
    #[serde(default)]
    pub partitions: Vec<Partition>,
}

/// One key's result.
#[derive(Debug, Deserialize)]
pub struct Partition {
    #[serde(default)]
    pub key: Option<String>,
    /// Why it is not linearizable, when it is not.
    #[serde(default)]
    pub explanation: Option<Explained>,
}

/// The checker's explanation of an illegal key ([`checker::linearizable::Explanation`]).
#[derive(Debug, Deserialize)]
pub struct Explained {
    #[serde(default)]
    pub message: Value,
    /// The operation that cannot be placed.
    #[serde(default)]
    pub op: ExplainedOp,
    /// The operation whose effect ruled it out, when another one.
    #[serde(default)]
    pub after: Option<ExplainedOp>,
    #[serde(default)]
    pub needs: Value,
    #[serde(default)]
    pub states: Vec<Value>,
    #[serde(default)]
    pub longest_linearization: Vec<Step>,
}

/// An operation as an explanation names it.
#[derive(Debug, Default, Deserialize)]
pub struct ExplainedOp {
    /// Its line in history.jsonl.
    #[serde(default)]
    pub line: Option<u64>,
    #[serde(default)]
    pub f: Value,
    #[serde(default)]
    pub value: Value,
    #[serde(default)]
    pub process: Value,
    #[serde(default)]
    pub invoke_time: Option<u64>,
    #[serde(default)]
    pub complete_time: Option<u64>,
}

impl ExplainedOp {
    /// When it ended (its invocation, when it did not complete), on the history's clock.
    pub fn end(&self) -> Option<u64> {
        self.complete_time.or(self.invoke_time)
    }
}

/// One step of the longest partial linearization.
#[derive(Debug, Deserialize)]
pub struct Step {
    #[serde(default)]
    pub op: ExplainedOp,
    #[serde(default)]
    pub state: Value,
}

/// An illegal key's violation: its witness's sentence (a stale read, lost adds, the witness's
/// own words) or the checker's explanation in words, and the linearization its view draws.
fn violation(findings: &Findings, key: String, e: &Explained) -> Violation {
    let ops = &findings.run.ops;
    let clock = findings.run.clock;
    let found = resolve(
        ops,
        findings.check.witnesses().iter().find(|w| w.key() == key),
    );
    let bad = by_line(ops, e.op.line);
    let states: Vec<String> = e.states.iter().map(show).collect();
    let sentence = match (&found.stale, &found.words) {
        (Some(s), _) => stale_sentence(clock, ops, &key, s),
        (None, Some(words)) => words.clone(),
        (None, None) => lost_sentence(clock, ops, &key, &found.lost)
            .unwrap_or_else(|| unplaceable_sentence(clock, ops, &key, e, bad, &states)),
    };
    let linearization = e
        .longest_linearization
        .iter()
        .map(|s| {
            let i = by_line(ops, s.op.line);
            let d = i
                .map(|i| ops[i].describe())
                .unwrap_or_else(|| show(&s.op.f));
            (i, d, show(&s.state))
        })
        .collect();
    Violation {
        anchor: findings.next_anchor(),
        check: findings.name.clone(),
        key_ops: findings.by_key.get(&key).cloned().unwrap_or_default(),
        key,
        sentence,
        checker_message: show(&e.message),
        bad,
        needs: show(&e.needs),
        states,
        linearization,
        stale: found.stale,
        lost: found.lost,
        lost_rows: Vec::new(),
        retried: Vec::new(),
    }
}

fn phrase_time(clock: Clock, op: &Op) -> String {
    clock.at(op.complete.unwrap_or(op.invoke))
}

pub(crate) fn stale_sentence(clock: Clock, ops: &[Op], key: &str, s: &StaleRead) -> String {
    let r = &ops[s.read];
    let newer = &ops[s.newer];
    let newer_value = match newer.f.as_str() {
        "cas" | "compare-and-set" => newer.value.get(1).map(show).unwrap_or_default(),
        _ => show(&newer.value),
    };
    let who = r
        .node
        .as_ref()
        .map(|n| format!(" served by {n}"))
        .unwrap_or_default();
    let gap = r.invoke.saturating_sub(newer.complete.unwrap_or(0)) as f64 / 1e6;
    let old = if r.output.is_null() {
        "nil (the initial value)".to_string()
    } else {
        show(&r.output)
    };
    format!(
        "a read on key {key}{who} returned {old} at {}, although {newer_value} had been acknowledged {} before the read began (process {}, {} at {})",
        clock.at(r.invoke),
        if gap >= 1000.0 { format!("{:.2} s", gap / 1000.0) } else { format!("{gap:.1} ms") },
        newer.process,
        newer.describe(),
        phrase_time(clock, newer)
    )
}

fn lost_sentence(clock: Clock, ops: &[Op], key: &str, lost: &[LostWrite]) -> Option<String> {
    let l = lost.first()?;
    let a = &ops[l.add];
    Some(format!(
        "{} acknowledged write{} on key {key} {} missing from the read at {} (first: {} acknowledged at {}{})",
        lost.len(),
        if lost.len() == 1 { "" } else { "s" },
        if lost.len() == 1 { "is" } else { "are" },
        clock.at(ops[l.read].invoke),
        show(&a.value),
        phrase_time(clock, a),
        l.fault.as_ref().map(|f| format!(", after {f}")).unwrap_or_default()
    ))
}

/// "on key k, read 3 (process 2, at 4.1 s) cannot be placed ...": the checker's explanation in
/// words, when no witness says it better.
fn unplaceable_sentence(
    clock: Clock,
    ops: &[Op],
    key: &str,
    e: &Explained,
    bad: Option<usize>,
    states: &[String],
) -> String {
    let op = &e.op;
    let what = bad
        .map(|b| ops[b].describe())
        .unwrap_or_else(|| format!("{} {}", show(&op.f), show(&op.value)));
    format!(
        "on key {key}, {what} (process {}, at {}) cannot be placed in any order consistent with real time: it needs {}, but by then the state could only be {}",
        show(&op.process),
        clock.at(op.invoke_time.unwrap_or(0)),
        show(&e.needs),
        if states.is_empty() { "nothing".into() } else { states.join(" or ") }
    )
}

/// Finds an op of the history by its 1-based line (how the checker and the witnesses name it).
fn by_line(ops: &[Op], line: Option<u64>) -> Option<usize> {
    let line = line? as usize;
    ops.binary_search_by_key(&line, |o| o.line).ok()
}

fn op_index(ops: &[Op], op: &OpRef) -> Option<usize> {
    by_line(ops, Some(op.line as u64))
}

/// What a key's witness shows, resolved to ops: the stale read, the lost adds, or (for the
/// s3-object witnesses) the witness's own sentence.
pub(crate) struct KeyWitness {
    pub(crate) stale: Option<StaleRead>,
    lost: Vec<LostWrite>,
    words: Option<String>,
}

pub(crate) fn resolve(ops: &[Op], w: Option<&Witness>) -> KeyWitness {
    let mut found = KeyWitness {
        stale: None,
        lost: Vec::new(),
        words: None,
    };
    match w {
        Some(Witness::StaleRead {
            read,
            overwritten_by,
            ..
        }) => {
            if let (Some(read), Some(newer)) = (op_index(ops, read), op_index(ops, overwritten_by))
            {
                found.stale = Some(StaleRead { read, newer });
            }
        }
        Some(Witness::MissingAdds { read, adds, .. }) => {
            if let Some(read) = op_index(ops, read) {
                found.lost = adds
                    .iter()
                    .filter_map(|a| {
                        Some(LostWrite {
                            add: op_index(ops, &a.write)?,
                            read,
                            fault: a.fault.clone(),
                        })
                    })
                    .collect();
            }
        }
        Some(w @ (Witness::DoubleCreate { .. } | Witness::TornGet { .. })) => {
            found.words = w.message().map(str::to_string);
        }
        Some(Witness::LostWrite { .. }) | None => {}
    }
    found
}

#[cfg(test)]
mod tests {
    use checker::Format;
    use serde_json::{json, Value};

    use super::*;

    /// The check's result as result.json holds it.
    fn linearizable(
        history: &History,
        model: ModelKind,
        timeout: Duration,
        faults: &[Window],
        clock: Clock,
    ) -> Result<Value> {
        check(history, model, timeout, faults, clock).map(|r| serde_json::to_value(r).unwrap())
    }

    fn history(deletes: &str) -> History {
        let text = format!(
            r#"{{"index":0,"time":100,"process":0,"type":"invoke","f":"put","key":"o0","value":{{"body":"b1","if_none_match":"*"}}}}
{{"index":1,"time":110,"process":1,"type":"invoke","f":"put","key":"o0","value":{{"body":"b2","if_none_match":"*"}}}}
{deletes}{{"index":4,"time":200,"process":0,"type":"ok","f":"put","key":"o0","value":{{"etag":"e1"}}}}
{{"index":5,"time":210,"process":1,"type":"ok","f":"put","key":"o0","value":{{"etag":"e2"}}}}
{{"index":6,"time":300,"process":0,"type":"invoke","f":"get","key":"o0","value":null}}
{{"index":7,"time":310,"process":0,"type":"ok","f":"get","key":"o0","value":{{"body":"b2","etag":"e2"}}}}
"#
        );
        checker::parse_str(&text, Format::Jsonl).unwrap()
    }

    #[test]
    fn two_successful_creates_are_named() {
        let h = history("");
        let r = linearizable(
            &h,
            ModelKind::S3Object,
            Duration::from_secs(5),
            &[],
            Clock::default(),
        )
        .unwrap();
        assert_eq!(r["verdict"], "illegal");
        let summary = r["summary"].as_str().unwrap();
        assert!(
            summary.starts_with(
                "more than one create succeeded on key o0: process 0 created body \"b1\""
            ),
            "{summary}"
        );
        assert!(
            summary.contains("process 1 created body \"b2\""),
            "{summary}"
        );
        assert_eq!(r["witnesses"][0]["creates"].as_array().unwrap().len(), 2);
    }

    /// The witnesses' sentences count from the workload's start, as the scenario's `at:` does
    /// (here 100 s into the run, after the cluster's start): two creates, and a get torn between
    /// two versions.
    #[test]
    fn witness_sentences_count_from_the_workloads_start() {
        let clock = Clock {
            t0: 100_000_000_000,
        };
        let text = r#"{"index":0,"time":100500000000,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b1","if_none_match":"*"}}
{"index":1,"time":100600000000,"process":1,"type":"invoke","f":"put","key":"o0","value":{"body":"b2","if_none_match":"*"}}
{"index":2,"time":101000000000,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e1"}}
{"index":3,"time":101250000000,"process":1,"type":"ok","f":"put","key":"o0","value":{"etag":"e2"}}
"#;
        let h = checker::parse_str(text, Format::Jsonl).unwrap();
        let r = linearizable(&h, ModelKind::S3Object, Duration::from_secs(5), &[], clock).unwrap();
        let summary = r["summary"].as_str().unwrap();
        assert!(
            summary.contains(
                "(0.500 s to 1.000 s) and process 1 created body \"b2\" (0.600 s to 1.250 s)"
            ),
            "{summary}"
        );
        assert_eq!(r["witnesses"][0]["creates"][1]["completed_s"], json!(1.25));
        let torn = r#"{"index":0,"time":100500000000,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b1"}}
{"index":1,"time":101000000000,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e1"}}
{"index":2,"time":102000000000,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b2"}}
{"index":3,"time":102500000000,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e2"}}
{"index":4,"time":103000000000,"process":1,"type":"invoke","f":"get","key":"o0","value":null}
{"index":5,"time":103100000000,"process":1,"type":"ok","f":"get","key":"o0","value":{"body":"b1","etag":"e2"}}
"#;
        let h = checker::parse_str(torn, Format::Jsonl).unwrap();
        let r = linearizable(&h, ModelKind::S3Object, Duration::from_secs(5), &[], clock).unwrap();
        let summary = r["summary"].as_str().unwrap();
        assert!(
            summary.starts_with("a get on key o0 (process 1, at 3.000 s) returned body"),
            "{summary}"
        );
    }

    #[test]
    fn a_delete_between_overlapping_creates_in_either_order() {
        // Seen on Ceph (ceph/if-match-delete, seed 1): the create invoked first is answered
        // last; a delete sent after the other create's answer may come between them (the
        // other create, then the delete, then the first create). The key is illegal for
        // another reason (a get of a body never written), which must be what the summary says.
        let text = r#"{"index":0,"time":100,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b1","if_none_match":"*"}}
{"index":1,"time":105,"process":1,"type":"invoke","f":"put","key":"o0","value":{"body":"b2","if_none_match":"*"}}
{"index":2,"time":200,"process":1,"type":"ok","f":"put","key":"o0","value":{"etag":"e2"}}
{"index":3,"time":250,"process":2,"type":"invoke","f":"delete","key":"o0","value":null}
{"index":4,"time":400,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e1"}}
{"index":5,"time":500,"process":2,"type":"ok","f":"delete","key":"o0","value":null}
{"index":6,"time":600,"process":0,"type":"invoke","f":"get","key":"o0","value":null}
{"index":7,"time":610,"process":0,"type":"ok","f":"get","key":"o0","value":{"body":"b9","etag":"e9"}}
"#;
        let h = checker::parse_str(text, Format::Jsonl).unwrap();
        let r = linearizable(
            &h,
            ModelKind::S3Object,
            Duration::from_secs(5),
            &[],
            Clock::default(),
        )
        .unwrap();
        assert_eq!(r["verdict"], "illegal");
        let summary = r["summary"].as_str().unwrap();
        assert!(!summary.contains("more than one create"), "{summary}");
    }

    #[test]
    fn an_unknown_delete_could_come_between() {
        // A delete sent before both creates whose answer never came may apply between them:
        // then both creates are legal.
        let h = history(
            "{\"index\":2,\"time\":50,\"process\":2,\"type\":\"invoke\",\"f\":\"delete\",\"key\":\"o0\",\"value\":null}\n{\"index\":3,\"time\":60,\"process\":2,\"type\":\"info\",\"f\":\"delete\",\"key\":\"o0\",\"value\":null}\n",
        );
        let r = linearizable(
            &h,
            ModelKind::S3Object,
            Duration::from_secs(5),
            &[],
            Clock::default(),
        )
        .unwrap();
        assert_eq!(r["verdict"], "ok", "{}", r["summary"]);
    }
}
