//! The `linearizable` check: the history against a model (register, cas-register, kv, set,
//! s3-object) through the checker's search, within a time budget; an illegal key's witness (a
//! stale read, missing adds, two creates, a torn get) leads the summary.

use std::time::Duration;

use checker::{History, ModelKind, Verdict};

use super::kind::{not_its_spec, Check, Inputs};
use super::witness::{self, Witness};
use crate::error::{HarnessError, Result};
use crate::faults::log::Window;
use crate::run_folder::{CheckResult, Clock, Evidence, FAULTS, HISTORY};
use crate::scenario::CheckSpec;

/// At least this many operations completed ok (`min-ops`).
pub const MIN_OK_OPS: u64 = 10;

/// The search's budget when neither `chaos check --timeout` nor the scenario sets one.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Linearizable;

impl Check for Linearizable {
    fn name(&self) -> &'static str {
        "linearizable"
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
            "linearizable",
            result.verdict,
            summary,
        )
        .with_detail(&result)
    })
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
