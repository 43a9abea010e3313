//! No verdict without evidence: a check that had (next to) nothing to check must not pass. Each
//! check of a run says what it had to go on (operations by outcome, keys, retried calls,
//! acknowledged writes and final reads) and holds it against a minimum the scenario may set;
//! below the minimum an `ok` becomes `unknown` (exit 2), with the reason and the clients'
//! failures by class, so a broken client shows at a glance. A violation stays a violation: it
//! needs no more evidence than itself.

use std::collections::BTreeMap;

use checker::history::{History, Status};
use serde_json::{json, Value};

use crate::run_folder::{FaultEvent, Phase, RecordedPlan};
use crate::scenario::CheckSpec;

/// Linearizability: at least this many operations completed ok (`min-ops`).
pub const MIN_OK_OPS: u64 = 10;
/// Retry consistency: at least this many calls sent more than once (`min-retried`).
pub const MIN_RETRIED: u64 = 1;
/// Durability: at least this many acknowledged writes on keys with a final read
/// (`min-acknowledged`).
pub const MIN_ACKNOWLEDGED: u64 = 1;

/// Why a failed or unknown operation failed, from what its client said.
pub fn failure_class(error: &str) -> &'static str {
    let e = error.to_ascii_lowercase();
    if e.contains("refused") {
        "refused"
    } else if e.contains("timeout") || e.contains("timed out") || e.contains("no answer") {
        "timeout"
    } else if e.contains("reset") || e.contains("eof") || e.contains("broken pipe") {
        "connection lost"
    } else if [
        "http 5",
        "status 5",
        " 500",
        " 502",
        " 503",
        " 504",
        "server error",
    ]
    .iter()
    .any(|p| e.contains(p))
    {
        "server error"
    } else if e.is_empty() {
        "unexplained"
    } else {
        "answered no (the system's own refusal, or a protocol error)"
    }
}

/// What a history holds for the checks: operations by outcome, keys, and the failed and
/// unknown operations by class with an example message of each.
pub fn of(history: &History) -> Value {
    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut failures: BTreeMap<&str, (u64, String)> = BTreeMap::new();
    let mut keys = std::collections::BTreeSet::new();
    for op in &history.ops {
        let outcome = match op.status {
            Status::Ok => "ok",
            Status::Fail => "fail",
            Status::Info => "info",
        };
        *outcomes.entry(outcome).or_default() += 1;
        if let Some(k) = &op.key {
            keys.insert(k.as_str());
        }
        if op.status != Status::Ok {
            let message = op.error.clone().unwrap_or_default();
            let entry = failures
                .entry(failure_class(&message))
                .or_insert((0, message));
            entry.0 += 1;
        }
    }
    json!({
        "operations": history.ops.len(),
        "by_outcome": outcomes,
        "keys": keys.len(),
        "failures": failures
            .into_iter()
            .map(|(class, (count, example))| json!({"class": class, "count": count, "example": example}))
            .collect::<Vec<_>>(),
    })
}

/// The failures of `evidence` in a phrase: "480 refused (connection refused), 7 timeout".
fn failures_phrase(evidence: &Value) -> String {
    let parts: Vec<String> = evidence["failures"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let example = f["example"].as_str().unwrap_or_default();
            if example.is_empty() {
                format!("{} {}", f["count"], f["class"].as_str().unwrap_or_default())
            } else {
                let short: String = example.chars().take(80).collect();
                format!(
                    "{} {} (\"{short}\")",
                    f["count"],
                    f["class"].as_str().unwrap_or_default()
                )
            }
        })
        .collect();
    if evidence["operations"] == 0 {
        "the history holds no operation: the workload never got a call through to the cluster (see the workload's and the nodes' logs)".into()
    } else if parts.is_empty() {
        "none failed".into()
    } else {
        parts.join(", ")
    }
}

/// Adds the evidence to a check's result and, when a passing check had less than its minimum,
/// makes it `unknown` with the reason.
pub fn hold(result: &mut Value, spec: &CheckSpec, history: &History) {
    let evidence = of(history);
    let ok = evidence["by_outcome"]["ok"].as_u64().unwrap_or(0);
    let total = evidence["operations"].as_u64().unwrap_or(0);
    let shortfall = match spec {
        CheckSpec::Linearizable(s) => {
            let min = s.min_ops.unwrap_or(MIN_OK_OPS);
            (ok < min).then(|| {
                format!(
                    "{ok} of {total} operations completed ok, fewer than min-ops {min}; failed or unknown: {}",
                    failures_phrase(&evidence)
                )
            })
        }
        CheckSpec::RetryConsistent(s) => {
            let min = s.min_retried.unwrap_or(MIN_RETRIED);
            let retried = result["detail"]["duplicates"]
                .as_array()
                .map_or(0, |d| d.len() as u64);
            (retried < min).then(|| {
                format!(
                    "{retried} calls were sent more than once, fewer than min-retried {min} ({ok} of {total} operations ok)"
                )
            })
        }
        CheckSpec::Durable(s) => {
            let min = s.min_acknowledged.unwrap_or(MIN_ACKNOWLEDGED);
            let acknowledged = result["detail"]["acknowledged"].as_u64().unwrap_or(0);
            let read = result["detail"]["keys_checked"].as_u64().unwrap_or(0);
            let unread = result["detail"]["unread_keys"]
                .as_array()
                .map_or(0, |u| u.len());
            (acknowledged < min).then(|| {
                format!(
                    "{acknowledged} acknowledged writes on the {read} keys with a final read, fewer than min-acknowledged {min} ({unread} keys with acknowledged writes had no final read; failed or unknown: {})",
                    failures_phrase(&evidence)
                )
            })
        }
        _ => None,
    };
    result["evidence"] = evidence;
    if let Some(reason) = shortfall {
        if result["verdict"] == "ok" {
            result["verdict"] = json!("unknown");
            result["summary"] = json!(format!("not enough to check: {reason}"));
            result["insufficient"] = json!(reason);
        }
    }
}

/// The faults a run's verdict rests on: every step of plan.json must have applied at least once
/// (an `apply` with outcome ok in faults.jsonl), unless the scenario marked it `optional`. A
/// check of its own, `unknown` when a step never fired or never applied; None without steps.
pub fn fault_steps(plan: &RecordedPlan, faults: &[FaultEvent]) -> Option<Value> {
    let steps = plan.steps.as_ref().filter(|s| !s.is_empty())?;
    let mut applied_steps = 0;
    let mut missing = Vec::new();
    let mut per_step = Vec::new();
    for step in steps {
        let n = step.step;
        let applies: Vec<&FaultEvent> = faults
            .iter()
            .filter(|f| f.step.map(|s| s as u64) == n && f.phase == Phase::Apply)
            .collect();
        let applied = applies.iter().filter(|f| f.ok()).count();
        let optional = step.optional;
        let what = format!(
            "step {} ({} {})",
            n.unwrap_or_default(),
            step.firings
                .first()
                .and_then(|f| f.action.as_deref())
                .unwrap_or("fault"),
            step.trigger
        );
        if applied > 0 {
            applied_steps += 1;
        } else if !optional {
            missing.push(match applies.last() {
                None => format!("{what} never fired"),
                Some(f) => format!(
                    "{what} fired {} time(s) but never applied ({})",
                    applies.len(),
                    f.outcome
                ),
            });
        }
        per_step.push(json!({
            "step": n, "fired": applies.len(), "applied": applied, "optional": optional,
        }));
    }
    let (verdict, summary) = if missing.is_empty() {
        (
            "ok",
            format!("{applied_steps} of {} fault steps applied", steps.len()),
        )
    } else {
        (
            "unknown",
            format!(
                "not enough to check: {} of {} fault steps applied; {}",
                applied_steps,
                steps.len(),
                missing.join("; ")
            ),
        )
    };
    Some(json!({
        "name": "faults applied",
        "check": "faults",
        "verdict": verdict,
        "summary": summary,
        "detail": { "steps": per_step, "applied": applied_steps, "total": steps.len() },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{LinearizableSpec, RetrySpec};

    /// `n` writes by one process: `ok` of them acknowledged, the rest refused before sending.
    fn writes(n: usize, ok: usize) -> History {
        let mut text = String::new();
        for i in 0..n {
            let (kind, extra) = if i < ok {
                ("ok", String::new())
            } else {
                (
                    "fail",
                    r#","error":"connect: Connection refused (os error 111)""#.to_string(),
                )
            };
            text.push_str(&format!(
                "{{\"index\":{},\"time\":{},\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"key\":\"k0\",\"value\":{i}}}\n\
                 {{\"index\":{},\"time\":{},\"process\":0,\"type\":\"{kind}\",\"f\":\"write\",\"key\":\"k0\",\"value\":{i}{extra}}}\n",
                2 * i,
                10 * i + 1,
                2 * i + 1,
                10 * i + 2
            ));
        }
        checker::parse_str(&text, checker::Format::Jsonl).unwrap()
    }

    fn linearizable(min_ops: Option<u64>) -> CheckSpec {
        CheckSpec::Linearizable(LinearizableSpec {
            model: serde_saphyr::Spanned::new(
                "register".into(),
                serde_saphyr::Location::UNKNOWN,
                serde_saphyr::Location::UNKNOWN,
            ),
            timeout: None,
            min_ops,
        })
    }

    #[test]
    fn a_pass_over_refused_calls_is_unknown_and_says_why() {
        let history = writes(40, 0);
        let mut result = json!({"verdict": "ok", "summary": "linearizable: 0 operations"});
        hold(&mut result, &linearizable(None), &history);
        assert_eq!(result["verdict"], "unknown");
        let summary = result["summary"].as_str().unwrap();
        assert!(
            summary.starts_with("not enough to check: 0 of 40 operations completed ok, fewer than min-ops 10; failed or unknown: 40 refused (\"connect: Connection refused (os error 111)\")"),
            "{summary}"
        );
        assert_eq!(result["evidence"]["by_outcome"]["fail"], 40);
        assert_eq!(result["evidence"]["failures"][0]["class"], "refused");
    }

    #[test]
    fn enough_evidence_keeps_the_verdict_and_a_violation_needs_none() {
        let history = writes(40, 12);
        let mut ok = json!({"verdict": "ok", "summary": "s"});
        hold(&mut ok, &linearizable(None), &history);
        assert_eq!(ok["verdict"], "ok");
        assert_eq!(ok["evidence"]["by_outcome"]["ok"], 12);
        // The scenario raises the bar.
        let mut strict = json!({"verdict": "ok", "summary": "s"});
        hold(&mut strict, &linearizable(Some(20)), &history);
        assert_eq!(strict["verdict"], "unknown");
        let mut illegal = json!({"verdict": "illegal", "summary": "s"});
        hold(&mut illegal, &linearizable(None), &writes(3, 1));
        assert_eq!(illegal["verdict"], "illegal");
    }

    #[test]
    fn retry_consistency_with_no_retried_call_is_unknown() {
        let history = writes(40, 40);
        let mut result = json!({"verdict": "ok", "summary": "s", "detail": {"duplicates": []}});
        hold(
            &mut result,
            &CheckSpec::RetryConsistent(RetrySpec::default()),
            &history,
        );
        assert_eq!(result["verdict"], "unknown");
        assert!(result["summary"]
            .as_str()
            .unwrap()
            .contains("0 calls were sent more than once, fewer than min-retried 1"));
    }

    #[test]
    fn a_fault_step_that_never_applied_makes_the_run_unknown() {
        let plan: RecordedPlan = serde_json::from_value(json!({"steps": [
            {"step": 0, "trigger": "at 10s", "firings": [{"action": "kill"}]},
            {"step": 1, "trigger": "on log om3 /x/", "firings": [{"action": "pause"}]},
            {"step": 2, "trigger": "at 5s", "firings": [{"action": "pause"}], "optional": true},
            {"step": 3, "trigger": "at 20s", "firings": [{"action": "kill"}]},
        ]}))
        .unwrap();
        let events = |lines: Value| -> Vec<FaultEvent> { serde_json::from_value(lines).unwrap() };
        let faults = events(json!([
            {"step": 0, "phase": "apply", "outcome": "ok"},
            {"step": 0, "phase": "undo", "outcome": "ok"},
            {"step": 3, "phase": "apply", "outcome": "skipped: no node has role leader"},
        ]));
        let check = fault_steps(&plan, &faults).unwrap();
        assert_eq!(check["verdict"], "unknown");
        assert_eq!(
            check["summary"],
            "not enough to check: 1 of 4 fault steps applied; step 1 (pause on log om3 /x/) never fired; \
             step 3 (kill at 20s) fired 1 time(s) but never applied (skipped: no node has role leader)"
        );
        let all = events(json!([
            {"step": 1, "phase": "apply", "outcome": "ok"},
            {"step": 0, "phase": "apply", "outcome": "ok"},
            {"step": 3, "phase": "apply", "outcome": "ok"},
        ]));
        let check = fault_steps(&plan, &all).unwrap();
        assert_eq!(check["verdict"], "ok");
        assert_eq!(check["summary"], "3 of 4 fault steps applied");
        let empty = RecordedPlan {
            steps: Some(vec![]),
            ..RecordedPlan::default()
        };
        assert!(fault_steps(&empty, &all).is_none());
        assert!(fault_steps(&RecordedPlan::default(), &all).is_none());
    }

    #[test]
    fn failures_fall_into_classes() {
        assert_eq!(
            failure_class("Connection refused (os error 111)"),
            "refused"
        );
        assert_eq!(failure_class("timeout"), "timeout");
        assert_eq!(
            failure_class("no answer from 127.0.0.1:42743 within 10s of sending the call"),
            "timeout"
        );
        assert_eq!(
            failure_class(
                "the connection to 127.0.0.1:1 failed after the call was sent: early eof"
            ),
            "connection lost"
        );
        assert_eq!(failure_class("HTTP 503 from s3g"), "server error");
        assert_eq!(
            failure_class("already exists"),
            "answered no (the system's own refusal, or a protocol error)"
        );
    }
}
