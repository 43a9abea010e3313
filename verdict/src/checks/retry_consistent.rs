//! The `retry-consistent` check: a call resent with the same client and call id gets the same
//! answer.

use serde::Deserialize;
use serde_json::Value;

use super::kind::{Check, Inputs};
use crate::error::Result;
use crate::report::load::show;
use crate::report::violations::{short_id, Answer, Findings, Retried, Violation};
use crate::run_folder::{CheckResult, Evidence, HISTORY};
use crate::scenario::{CheckKind, CheckSpec};

/// At least this many calls sent more than once (`min-retried`).
pub const MIN_RETRIED: u64 = 1;

pub struct RetryConsistent;

impl Check for RetryConsistent {
    fn kind(&self) -> CheckKind {
        CheckKind::RetryConsistent
    }

    fn inputs(&self) -> &'static [&'static str] {
        &[HISTORY]
    }

    fn needs_run_folder(&self) -> bool {
        false
    }

    fn run(&self, _: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        let result = checker::retry::check(inputs.history);
        Ok(vec![CheckResult::new(
            CheckKind::RetryConsistent.name(),
            CheckKind::RetryConsistent.name(),
            result.verdict,
            result.text(),
        )
        .with_detail(&result)])
    }

    fn weighs_evidence(&self) -> bool {
        true
    }

    fn shortfall(
        &self,
        spec: &CheckSpec,
        result: &CheckResult,
        evidence: &Evidence,
    ) -> Option<String> {
        let CheckSpec::RetryConsistent(s) = spec else {
            return None;
        };
        let (ok, total) = (evidence.ok(), evidence.operations);
        let min = s.min_retried.unwrap_or(MIN_RETRIED);
        let retried = result
            .detail_as::<Detail>()
            .map_or(0, |d| d.duplicates.len() as u64);
        (retried < min).then(|| {
            format!(
                "{retried} calls were sent more than once, fewer than min-retried {min} ({ok} of {total} operations ok)"
            )
        })
    }

    /// The same call answered differently, the first to disagree first.
    fn findings(&self, findings: &mut Findings) {
        let check = findings.check;
        let clock = findings.run.clock;
        let detail = check.detail_as::<Detail>().unwrap_or_default();
        let mut rows: Vec<Retried> = detail
            .duplicates
            .iter()
            .filter(|d| d.consistent == Some(false))
            .filter_map(retried)
            .collect();
        rows.sort_by_key(|r| (r.later.invoked, r.first.invoked));
        let Some(d) = rows.first() else { return };
        let more = rows.len() - 1;
        let text = format!(
            "{} call {} of client {}{}: {} at {}{}, then {} at {}{}",
            if more > 0 {
                format!(
                    "{} calls sent again were answered differently; the first,",
                    rows.len()
                )
            } else {
                "a call sent again was answered differently:".to_string()
            },
            d.call,
            short_id(&d.client),
            if d.key.is_empty() {
                String::new()
            } else {
                format!(" on key {}", d.key)
            },
            d.first.words,
            clock.at(d.first.invoked),
            d.first
                .node
                .as_ref()
                .map(|n| format!(" by {n}"))
                .unwrap_or_default(),
            d.later.words,
            clock.at(d.later.invoked),
            d.later
                .node
                .as_ref()
                .map(|n| format!(" by {n}"))
                .unwrap_or_default(),
        );
        let mut v = Violation::without_key(
            findings.next_anchor(),
            &findings.name,
            text,
            check.summary.clone(),
        );
        v.key = d.key.clone();
        v.retried = rows;
        findings.push(v);
    }
}

/// The retry-consistent check's detail as result.json holds it (the checker's
/// [`checker::retry::RetryResult`]), read back for the report.
#[derive(Debug, Default, Deserialize)]
pub struct Detail {
    /// Every call sent more than once.
    #[serde(default)]
    pub duplicates: Vec<Duplicate>,
}

/// A call sent more than once, with every answer to it.
#[derive(Debug, Deserialize)]
pub struct Duplicate {
    #[serde(default)]
    pub client: Value,
    #[serde(default)]
    pub call: Value,
    /// Whether every definite answer agreed.
    #[serde(default)]
    pub consistent: Option<bool>,
    #[serde(default)]
    pub ops: Option<Vec<SentOp>>,
}

/// One sending of the call, as the checker shows an operation.
#[derive(Debug, Deserialize)]
pub struct SentOp {
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub f: Value,
    #[serde(default)]
    pub value: Value,
    #[serde(default)]
    pub process: Value,
    /// ok, fail or info.
    #[serde(default)]
    pub status: Value,
    #[serde(default)]
    pub output: Value,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub invoke_time: Option<u64>,
    #[serde(default)]
    pub complete_time: Option<u64>,
    #[serde(default)]
    pub node: Option<String>,
    /// Its line in history.jsonl.
    #[serde(default)]
    pub line: Option<u64>,
}

/// One answer to a retried call: `cas [nil 9] → ok [nil 9]`, `resend [nil 9] → fail: already
/// exists (call 12 sent again)`: what came back, not just the value sent.
fn retried_answer(op: &SentOp) -> Answer {
    let answer = match op.status.as_str() {
        Some("ok") => format!("ok {}", show(&op.output)),
        Some(status) => match &op.error {
            Some(error) => format!("{status}: {error}"),
            None => status.to_string(),
        },
        None => "no answer".to_string(),
    };
    Answer {
        words: format!("{} {} → {answer}", show(&op.f), show(&op.value)),
        process: show(&op.process),
        invoked: op.invoke_time.unwrap_or(0),
        completed: op.complete_time,
        status: show(&op.status),
        node: op.node.clone(),
        line: op.line,
    }
}

/// A call answered differently: its first definite answer and the first that disagrees.
fn retried(d: &Duplicate) -> Option<Retried> {
    let definite: Vec<&SentOp> = d
        .ops
        .as_ref()?
        .iter()
        .filter(|o| matches!(o.status.as_str(), Some("ok" | "fail")))
        .collect();
    let first = definite.first()?;
    let later = definite
        .iter()
        .skip(1)
        .find(|o| o.status != first.status || o.output != first.output)
        .or(definite.get(1))?;
    Some(Retried {
        call: show(&d.call),
        client: show(&d.client),
        key: first.key.clone().unwrap_or_default(),
        first: retried_answer(first),
        later: retried_answer(later),
    })
}
