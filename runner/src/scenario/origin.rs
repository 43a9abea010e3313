//! `trace:`: where a scenario imported from a model checker's counterexample came from
//! (`chaos trace import` writes it), so the verdict can say how far a run followed the trace.

use super::*;

/// The trace file, its format and its steps in order, each with the `reached:` predicate that
/// observes it on the cluster.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceOrigin {
    pub file: String,
    pub format: String,
    pub steps: Vec<TraceStepOrigin>,
}

/// One step of the trace: the action as the trace names it (`apply(call: 1)`), the predicate
/// that observes it and what that predicate expects, in words for the verdict.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceStepOrigin {
    pub action: String,
    pub reached: Spanned<String>,
    pub expect: String,
}

/// Each step's predicate must be one of `reached:`: the verdict reads the step from it.
pub(super) fn validate(spec: &Scenario, problems: &mut validate::Problems) {
    let Some(origin) = &spec.trace else { return };
    for (i, step) in origin.steps.iter().enumerate() {
        if !spec.reached.contains_key(&step.reached.value) {
            problems.at(
                &step.reached.referenced,
                format!("trace.steps[{i}].reached"),
                format!(
                    "{} is no predicate of `reached:`; each step of the trace names the one \
                     that observes it",
                    chaos_core::shown::shown(&step.reached.value)
                ),
            );
        }
    }
}
