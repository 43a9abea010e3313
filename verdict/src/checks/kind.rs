//! Checks as types: each check a scenario can ask for is one [`Check`] (its scenario key, the
//! files of the run folder it reads, whether it can run on a history file alone, how it runs,
//! the evidence it needs before a pass counts, and how the report words its results), and
//! [`REGISTRY`] (in `checks/mod.rs`, beside the modules' lines) lists them once.
//! `run_checks` asks the registry; [`of`] is the one place a parsed `CheckSpec` meets its check,
//! by kind. A check's name is written once, as its `scenario::CheckSpec` variant: serde reads it
//! as the scenario key, and [`Check::kind`] names the variant's [`CheckKind`], whose name
//! [`Check::name`] gives.
//!
//! A new check is a module of `checks/` with its type, its detail and the report's words for it;
//! its `mod` line and its line in [`REGISTRY`] (`checks/mod.rs`); a variant of
//! `scenario::CheckSpec` with its settings (an arm in `load/validate.rs`'s `validate_checks`
//! if it has a rule of its own); and its row in docs/scenarios.md.

use std::path::Path;
use std::time::Duration;

use checker::{History, Verdict};

use super::REGISTRY;
use crate::error::{HarnessError, Result};
use crate::faults::log::Window;
use crate::report::violations::Findings;
use crate::run_folder::{CheckResult, Clock, Evidence};
use crate::scenario::{CheckKind, CheckSpec};

/// The check a scenario's `checks:` entry asks for (its settings stay in the spec): the
/// registry's check of its kind.
pub fn of(spec: &CheckSpec) -> &'static dyn Check {
    let kind = CheckKind::from(spec);
    REGISTRY
        .iter()
        .find(|c| c.kind() == kind)
        .copied()
        .unwrap_or_else(|| panic!("the check `{}` is not in checks::REGISTRY", kind.name()))
}

/// The registry's check of a name (result.json's `check`); None for `faults` and names an older
/// chaos wrote.
pub fn by_name(name: &str) -> Option<&'static dyn Check> {
    REGISTRY.iter().find(|c| c.name() == name).copied()
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
    /// The `scenario::CheckSpec` variant it runs.
    fn kind(&self) -> CheckKind;

    /// Its scenario key (`checks: [ { durable: {} } ]`), also result.json's `check`.
    fn name(&self) -> &'static str {
        self.kind().name()
    }

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

    /// What the report shows of one of its results (`findings.check`): the violations its
    /// views draw, each with its sentence; none by default.
    fn findings(&self, _findings: &mut Findings) {}

    /// The report's one sentence for a result of it that showed no violation.
    fn in_words(&self, result: &CheckResult) -> String {
        verdict_in_words(result)
    }
}

/// A result in one sentence, from its summary: what held, or why it could not decide.
pub fn verdict_in_words(result: &CheckResult) -> String {
    match result.verdict {
        Verdict::Unknown => format!("could not decide: {}", result.summary),
        Verdict::Ok | Verdict::Illegal => result.summary.clone(),
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
