//! Checks as types: each check a scenario can ask for is one [`Check`] (its scenario key, the
//! files of the run folder it reads, whether it can run on a history file alone, how it runs,
//! and the evidence it needs before a pass counts), and [`REGISTRY`] lists them once.
//! `run_checks` asks the registry; [`of`] is the one place a parsed `CheckSpec` meets its check,
//! by name. A check's name is its `scenario::CheckSpec` variant's (serde's, in kebab-case), and
//! [`Check::name`] says it again: a test holds the two lists equal.
//!
//! A new check is a module of `checks/` with its type (declared in `checks/mod.rs`), its line in
//! [`REGISTRY`], a variant of `scenario::CheckSpec` with its settings, its arm in
//! `load/validate.rs`'s `validate_checks`, and its row in docs/scenarios.md.

use std::path::Path;
use std::time::Duration;

use checker::History;

use super::{converge, durable, fencing, linearizable, retry_consistent, staleness, stays_up};
use crate::error::{HarnessError, Result};
use crate::faults::log::Window;
use crate::run_folder::{CheckResult, Clock, Evidence};
use crate::scenario::CheckSpec;

/// Every check, in the order `checks:` documents them. A new check is one line here.
pub static REGISTRY: &[&dyn Check] = &[
    &linearizable::Linearizable,
    &durable::Durable,
    &retry_consistent::RetryConsistent,
    &staleness::Staleness,
    &converge::Converge,
    &fencing::Fencing,
    &fencing::ConditionalWrites,
    &stays_up::StaysUp,
];

/// The check a scenario's `checks:` entry asks for (its settings stay in the spec): the
/// registry's check of its name.
pub fn of(spec: &CheckSpec) -> &'static dyn Check {
    let name = spec.name();
    REGISTRY
        .iter()
        .find(|c| c.name() == name)
        .copied()
        .unwrap_or_else(|| panic!("the check `{name}` is not in checks::kind::REGISTRY"))
}

/// What a check runs on: the history (read strictly), the run folder when there is one (None:
/// a history file checked alone), the fault windows lost writes are laid on, the clock its
/// sentences count from, and `chaos check --timeout`.
pub struct Inputs<'a> {
    pub history: &'a History,
    pub run_dir: Option<&'a Path>,
    pub faults: &'a [Window],
    pub clock: Clock,
    pub timeout: Option<Duration>,
}

/// A check a scenario can ask for.
pub trait Check: Send + Sync + 'static {
    /// Its scenario key (`checks: [ { durable: {} } ]`), also result.json's `check`.
    fn name(&self) -> &'static str;

    /// The files of the run folder it reads (history.jsonl, faults.jsonl, converge.json, ...).
    fn inputs(&self) -> &'static [&'static str];

    /// Whether it reads files only a run folder has: on a history file alone it does not run
    /// but answers [`Check::without_run_folder`].
    fn needs_run_folder(&self) -> bool {
        true
    }

    /// What it answers on a history file alone, when it needs a run folder: an error, or an
    /// `unknown` result that says what it reads.
    fn without_run_folder(&self) -> Result<Vec<CheckResult>> {
        Err(HarnessError::BadInput(format!(
            "the {} check reads a run folder's {}",
            self.name(),
            self.inputs().join(", ")
        )))
    }

    /// Its results (one, or one per property) on the inputs, with the settings of `spec`.
    fn run(&self, spec: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>>;

    /// Whether a run's result records the history's [`Evidence`] (the checks of the history).
    fn weighs_evidence(&self) -> bool {
        false
    }

    /// Its evidence minimum: why a passing `result` had too little to go on, if it had
    /// (`evidence` is the history's; the minimum may be set by `spec`).
    fn shortfall(
        &self,
        _spec: &CheckSpec,
        _result: &CheckResult,
        _evidence: &Evidence,
    ) -> Option<String> {
        None
    }
}

/// A spec that is not the check's own: [`of`] never hands one over.
pub fn not_its_spec(check: &dyn Check, spec: &CheckSpec) -> HarnessError {
    HarnessError::BadInput(format!(
        "the {} check was given the settings of another check ({spec:?})",
        check.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry lists every check the scenario format knows, once, in its order, and each
    /// `CheckSpec` reaches its own.
    #[test]
    fn the_registry_lists_every_scenario_check_once() {
        let names: Vec<&str> = REGISTRY.iter().map(|c| c.name()).collect();
        assert_eq!(names, CheckSpec::names());
        for name in CheckSpec::names() {
            let text = format!(
                "{name}: {}",
                match *name {
                    "linearizable" => "{model: register}",
                    "staleness" => "{at-most: 1s}",
                    _ => "{}",
                }
            );
            let spec: CheckSpec = serde_saphyr::from_str(&text).unwrap();
            assert_eq!(of(&spec).name(), *name);
        }
    }
}
