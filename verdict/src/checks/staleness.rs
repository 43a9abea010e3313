//! The `staleness` check: no read returned a value overwritten longer than `at-most` before it
//! began (register workloads: unique values).

use super::kind::{not_its_spec, Check, Inputs};
use crate::error::Result;
use crate::run_folder::{CheckResult, HISTORY};
use crate::scenario::{CheckKind, CheckSpec};

pub struct Staleness;

impl Check for Staleness {
    fn kind(&self) -> CheckKind {
        CheckKind::Staleness
    }

    fn inputs(&self) -> &'static [&'static str] {
        &[HISTORY]
    }

    fn needs_run_folder(&self) -> bool {
        false
    }

    fn run(&self, spec: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        let CheckSpec::Staleness(spec) = spec else {
            return Err(not_its_spec(self, spec));
        };
        let bound = u64::try_from(spec.at_most.0.as_nanos()).unwrap_or(u64::MAX);
        let result = checker::stale::staleness(inputs.history, bound);
        Ok(vec![CheckResult::new(
            CheckKind::Staleness.name(),
            CheckKind::Staleness.name(),
            result.verdict,
            result.text(),
        )
        .with_detail(&result)])
    }

    /// Its evidence is recorded, with no minimum of its own.
    fn weighs_evidence(&self) -> bool {
        true
    }
}
