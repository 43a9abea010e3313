//! No verdict without evidence: a check that had (next to) nothing to check must not pass. Each
//! check of the history in a run says what it had to go on (operations by outcome, keys, retried
//! calls, acknowledged writes and final reads) and holds it against its minimum
//! ([`Check::shortfall`], which the scenario may set);
//! below the minimum an `ok` becomes `unknown` (exit 2), with the reason and the clients'
//! failures by class, so a broken client shows at a glance. A violation stays a violation: it
//! needs no more evidence than itself.

use std::collections::BTreeMap;

use checker::history::{History, Status};
use checker::Verdict;
use serde_json::json;

use super::kind::Check;
use crate::run_folder::{CheckResult, Evidence, Failures, FaultEvent, Phase, RecordedPlan};
use crate::scenario::CheckSpec;

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
pub fn of(history: &History) -> Evidence {
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut failures: BTreeMap<&str, (u64, String)> = BTreeMap::new();
    let mut keys = std::collections::BTreeSet::new();
    for op in &history.ops {
        let outcome = match op.status {
            Status::Ok => "ok",
            Status::Fail => "fail",
            Status::Info => "info",
        };
        *outcomes.entry(outcome.to_string()).or_default() += 1;
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
    Evidence {
        operations: history.ops.len(),
        by_outcome: outcomes,
        keys: keys.len(),
        failures: failures
            .into_iter()
            .map(|(class, (count, example))| Failures {
                class: class.to_string(),
                count,
                example,
            })
            .collect(),
    }
}

/// The failures of `evidence` in a phrase: "480 refused (connection refused), 7 timeout".
pub fn failures_phrase(evidence: &Evidence) -> String {
    let parts: Vec<String> = evidence
        .failures
        .iter()
        .map(|f| {
            if f.example.is_empty() {
                format!("{} {}", f.count, f.class)
            } else {
                let short: String = f.example.chars().take(80).collect();
                format!("{} {} (\"{short}\")", f.count, f.class)
            }
        })
        .collect();
    if evidence.operations == 0 {
        "the history holds no operation: the workload never got a call through to the cluster (see the workload's and the nodes' logs)".into()
    } else if parts.is_empty() {
        "none failed".into()
    } else {
        parts.join(", ")
    }
}

/// Adds the history's evidence to a check's result and, when a passing check had less than its
/// minimum ([`Check::shortfall`]), makes it `unknown` with the reason.
pub fn hold(result: &mut CheckResult, check: &dyn Check, spec: &CheckSpec, history: &History) {
    let evidence = of(history);
    let shortfall = check.shortfall(spec, result, &evidence);
    result.evidence = Some(evidence);
    if let Some(reason) = shortfall {
        if result.verdict == Verdict::Ok {
            result.verdict = Verdict::Unknown;
            result.summary = format!("not enough to check: {reason}");
            result.insufficient = Some(reason);
        }
    }
}

/// The faults a run's verdict rests on: every step of plan.json must have applied at least once
/// (an `apply` with outcome ok in faults.jsonl), unless the scenario marked it `optional`. A
/// check of its own, `unknown` when a step never fired or never applied; None without steps.
pub fn fault_steps(plan: &RecordedPlan, faults: &[FaultEvent]) -> Option<CheckResult> {
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
            Verdict::Ok,
            format!("{applied_steps} of {} fault steps applied", steps.len()),
        )
    } else {
        (
            Verdict::Unknown,
            format!(
                "not enough to check: {} of {} fault steps applied; {}",
                applied_steps,
                steps.len(),
                missing.join("; ")
            ),
        )
    };
    Some(
        CheckResult::new("faults applied", "faults", verdict, summary).with_detail(
            json!({ "steps": per_step, "applied": applied_steps, "total": steps.len() }),
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::checks::linearizable::Linearizable;
    use crate::checks::retry_consistent::RetryConsistent;
    use crate::scenario::{LinearizableSpec, RetrySpec};

    /// A result of `check` with `verdict` (and the figures `detail`) held to its minimum, as
    /// result.json writes it.
    fn held(
        check: &dyn Check,
        spec: &CheckSpec,
        (verdict, detail): (Verdict, Value),
        history: &History,
    ) -> Value {
        let mut result =
            CheckResult::new("n", check.name(), verdict, "s".into()).with_detail(detail);
        hold(&mut result, check, spec, history);
        serde_json::to_value(result).unwrap()
    }

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
        let result = held(
            &Linearizable,
            &linearizable(None),
            (Verdict::Ok, json!({})),
            &history,
        );
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
        let ok = held(
            &Linearizable,
            &linearizable(None),
            (Verdict::Ok, json!({})),
            &history,
        );
        assert_eq!(ok["verdict"], "ok");
        assert_eq!(ok["evidence"]["by_outcome"]["ok"], 12);
        // The scenario raises the bar.
        let strict = held(
            &Linearizable,
            &linearizable(Some(20)),
            (Verdict::Ok, json!({})),
            &history,
        );
        assert_eq!(strict["verdict"], "unknown");
        let illegal = held(
            &Linearizable,
            &linearizable(None),
            (Verdict::Illegal, json!({})),
            &writes(3, 1),
        );
        assert_eq!(illegal["verdict"], "illegal");
    }

    #[test]
    fn retry_consistency_with_no_retried_call_is_unknown() {
        let history = writes(40, 40);
        let result = held(
            &RetryConsistent,
            &CheckSpec::RetryConsistent(RetrySpec::default()),
            (Verdict::Ok, json!({"duplicates": []})),
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
        let check = serde_json::to_value(fault_steps(&plan, &faults).unwrap()).unwrap();
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
        let check = serde_json::to_value(fault_steps(&plan, &all).unwrap()).unwrap();
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
