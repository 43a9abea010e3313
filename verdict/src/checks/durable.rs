//! The `durable` check: every acknowledged write is in the final reads (workloads with final
//! reads of whole sets); each lost write is laid on the fault that lost it.

use serde::Deserialize;
use serde_json::Value;

use super::kind::{Check, Inputs};
use super::witness::{self, Witness};
use crate::error::Result;
use crate::report::load::show;
use crate::report::violations::{Findings, LostRow, Violation};
use crate::run_folder::{CheckResult, Evidence, FAULTS, HISTORY};
use crate::scenario::{CheckKind, CheckSpec};

/// At least this many acknowledged writes on keys with a final read (`min-acknowledged`).
pub const MIN_ACKNOWLEDGED: u64 = 1;

pub struct Durable;

impl Check for Durable {
    fn kind(&self) -> CheckKind {
        CheckKind::Durable
    }

    /// faults.jsonl: the fault that lost each write.
    fn inputs(&self) -> &'static [&'static str] {
        &[HISTORY, FAULTS]
    }

    fn needs_run_folder(&self) -> bool {
        false
    }

    fn run(&self, _: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        let history = inputs.history;
        let result = checker::durable::check(history);
        Ok(vec![CheckResult {
            witnesses: Some(witness::durable(
                history,
                &result,
                inputs.faults,
                inputs.clock,
            )),
            ..CheckResult::new(
                CheckKind::Durable.name(),
                CheckKind::Durable.name(),
                result.verdict,
                result.text(),
            )
            .with_detail(&result)
        }])
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
        let CheckSpec::Durable(s) = spec else {
            return None;
        };
        let detail = result.detail_as::<Detail>().unwrap_or_default();
        let min = s.min_acknowledged.unwrap_or(MIN_ACKNOWLEDGED);
        let (acknowledged, read) = (detail.acknowledged, detail.keys_checked);
        let unread = detail.unread_keys.len();
        (acknowledged < min).then(|| {
            format!(
                "{acknowledged} acknowledged writes on the {read} keys with a final read, fewer than min-acknowledged {min} ({unread} keys with acknowledged writes had no final read; failed or unknown: {})",
                super::evidence::failures_phrase(evidence)
            )
        })
    }

    /// Acknowledged writes missing from the final read, each under its fault.
    fn findings(&self, findings: &mut Findings) {
        let check = findings.check;
        let witnesses = check.witnesses();
        let rows: Vec<LostRow> = witnesses
            .iter()
            .filter_map(|w| match w {
                Witness::LostWrite {
                    key,
                    value,
                    write,
                    fault,
                } => Some((
                    format!("{} on key {key}", show(value)),
                    write.complete_time.unwrap_or(0),
                    write.process.to_string(),
                    fault.clone(),
                )),
                _ => None,
            })
            .collect();
        let Some(first) = rows.first() else { return };
        let acked = findings.run.clock.s(first.1);
        let text = format!(
            "{} acknowledged write{} lost: {} was acknowledged at {}{}, and the final read does not have it",
            rows.len(),
            if rows.len() == 1 { " was" } else { "s were" },
            first.0,
            findings.run.clock.at(first.1),
            first.3.as_ref().map(|f| fault_beside(f, acked)).unwrap_or_default()
        );
        let mut v = Violation::without_key(
            findings.next_anchor(),
            &findings.name,
            text,
            findings.check.summary.clone(),
        );
        v.lost_rows = rows;
        findings.push(v);
    }
}

/// The durable check's detail as result.json holds it (the checker's
/// [`checker::durable::DurableResult`]): the figures its evidence minimum reads.
#[derive(Debug, Default, Deserialize)]
pub struct Detail {
    /// Acknowledged writes on keys with a final read.
    #[serde(default)]
    pub acknowledged: u64,
    /// Keys with a final read.
    #[serde(default)]
    pub keys_checked: u64,
    /// Keys with acknowledged writes but no final read.
    #[serde(default)]
    pub unread_keys: Vec<Value>,
}

/// The fault that lost a write, beside its acknowledgement (`acked`, seconds from the
/// workload's start): " before kill redis1 at 20.000 s", or " after pause om1 at 7.327 s" when
/// the fault began first (no fault came between the acknowledgement and the final read).
pub(crate) fn fault_beside(fault: &str, acked: f64) -> String {
    let began = fault
        .rsplit_once(" at ")
        .and_then(|(_, t)| t.strip_suffix(" s"))
        .and_then(|t| t.parse::<f64>().ok());
    match began {
        Some(t) if t < acked => format!(" after {fault}"),
        _ => format!(" before {fault}"),
    }
}
