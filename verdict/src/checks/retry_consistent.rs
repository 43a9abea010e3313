//! The `retry-consistent` check: a call resent with the same client and call id gets the same
//! answer.

use super::kind::{Check, Inputs};
use crate::error::Result;
use crate::run_folder::{CheckResult, Evidence, HISTORY};
use crate::scenario::CheckSpec;

/// At least this many calls sent more than once (`min-retried`).
pub const MIN_RETRIED: u64 = 1;

pub struct RetryConsistent;

impl Check for RetryConsistent {
    fn name(&self) -> &'static str {
        "retry-consistent"
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
            "retry-consistent",
            "retry-consistent",
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
            .detail
            .as_ref()
            .and_then(|d| d["duplicates"].as_array())
            .map_or(0, |d| d.len() as u64);
        (retried < min).then(|| {
            format!(
                "{retried} calls were sent more than once, fewer than min-retried {min} ({ok} of {total} operations ok)"
            )
        })
    }
}
