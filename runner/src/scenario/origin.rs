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
