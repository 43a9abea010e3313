//! The `durable` check: every acknowledged write is in the final reads (workloads with final
//! reads of whole sets); each lost write is laid on the fault that lost it.

use super::kind::{Check, Inputs};
use super::witness;
use crate::error::Result;
use crate::run_folder::{CheckResult, Evidence, FAULTS, HISTORY};
use crate::scenario::CheckSpec;

/// At least this many acknowledged writes on keys with a final read (`min-acknowledged`).
pub const MIN_ACKNOWLEDGED: u64 = 1;

pub struct Durable;

impl Check for Durable {
    fn name(&self) -> &'static str {
        "durable"
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
            ..CheckResult::new("durable", "durable", result.verdict, result.text())
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
        let detail = result.detail.as_ref().unwrap_or(&serde_json::Value::Null);
        let min = s.min_acknowledged.unwrap_or(MIN_ACKNOWLEDGED);
        let acknowledged = detail["acknowledged"].as_u64().unwrap_or(0);
        let read = detail["keys_checked"].as_u64().unwrap_or(0);
        let unread = detail["unread_keys"].as_array().map_or(0, |u| u.len());
        (acknowledged < min).then(|| {
            format!(
                "{acknowledged} acknowledged writes on the {read} keys with a final read, fewer than min-acknowledged {min} ({unread} keys with acknowledged writes had no final read; failed or unknown: {})",
                super::evidence::failures_phrase(evidence)
            )
        })
    }
}
