//! What a linearizability check answers: per partition and overall, with explanations, and
//! a short text of it. Both procedures that decide a partition answer in these terms, the
//! search (driven from `linearizable/`) and the reads-from procedure (`unique/`), so it sits
//! below both.

use crate::history::Operation;
use crate::model::ModelKind;
use crate::Verdict;
use serde::Serialize;

/// The procedure that decided a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Procedure {
    /// Wing & Gong / Lowe's search (`search.rs`).
    Search,
    /// Unique written values: the read-from relation decides without search (`unique/`).
    ReadsFrom,
}

/// One step of a partial linearization.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinearizedStep {
    pub op: Operation,
    /// Model state after the operation.
    pub state: String,
}

/// Why a partition is not linearizable.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Explanation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// One sentence for people.
    pub message: String,
    /// The operation that cannot be placed.
    pub op: Operation,
    /// The model state it would need.
    pub needs: String,
    /// The states the model could be in when it had to take effect.
    pub states: Vec<String>,
    /// The operation whose (unavoidable) effect ruled it out, when that is
    /// another one: a write that had completed before a stale read began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Operation>,
    /// The shortest illegal prefix by completion ends with this event (inclusive).
    pub prefix_end_event: usize,
    /// Operations invoked within that prefix.
    pub prefix_ops: usize,
    /// Whether the prefix was confirmed illegal by a search of the truncated history.
    pub prefix_confirmed: bool,
    /// The longest partial linearization found: its last steps (at most
    /// [`MAX_STEPS`]; the earlier ones are only counted in `linearized`).
    pub longest_linearization: Vec<LinearizedStep>,
    /// How many operations that linearization places.
    pub linearized: usize,
}

/// Steps of a partial linearization kept in an explanation (the last ones).
pub const MAX_STEPS: usize = 1000;

/// What an undecided partition explored.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Unexplored {
    pub reason: String,
    /// Operations in the longest partial linearization found, out of `operations`.
    pub longest_linearization: usize,
}

/// The verdict for one key.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PartitionResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub verdict: Verdict,
    /// Which procedure decided it.
    pub procedure: Procedure,
    /// Operations searched (after dropping failed ones and unobservable unknown ones).
    pub operations: usize,
    pub states_explored: u64,
    pub elapsed_ms: f64,
    /// Peak bytes of the visited-state cache (an estimate).
    pub memory_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<Unexplored>,
}

/// The result of a linearizability check.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinearizabilityResult {
    pub verdict: Verdict,
    pub model: ModelKind,
    /// Operations in the history.
    pub operations: usize,
    pub states_explored: u64,
    pub elapsed_ms: f64,
    /// Illegal partitions first, then unknown, then ok (each in key order).
    pub partitions: Vec<PartitionResult>,
}

impl LinearizabilityResult {
    /// The first violation, if any.
    pub fn explanation(&self) -> Option<&Explanation> {
        self.partitions.iter().find_map(|p| p.explanation.as_ref())
    }
}

/// A short human-readable account of a result, for the CLI and JUnit messages.
pub fn render(r: &LinearizabilityResult) -> String {
    let keys = r.partitions.len();
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    match r.verdict {
        Verdict::Ok => {
            let fast = r
                .partitions
                .iter()
                .filter(|p| p.procedure == Procedure::ReadsFrom)
                .count();
            format!(
                "linearizable ({}): {}, {}{}, {} states explored in {:.1} ms",
                r.model,
                plural(r.operations, "operation"),
                plural(keys, "key"),
                if fast > 0 {
                    format!(" ({fast} decided from the reads-from relation)")
                } else {
                    String::new()
                },
                r.states_explored,
                r.elapsed_ms
            )
        }
        Verdict::Illegal => {
            let bad: Vec<&PartitionResult> = r
                .partitions
                .iter()
                .filter(|p| p.verdict == Verdict::Illegal)
                .collect();
            let mut out = format!(
                "NOT linearizable ({}): {} of {} illegal",
                r.model,
                plural(bad.len(), "key"),
                keys
            );
            for p in bad.iter().take(3) {
                if let Some(e) = &p.explanation {
                    out.push_str("\n  ");
                    out.push_str(&e.message);
                    out.push_str(&format!(
                        "\n    longest linearization: {} of {} operations{}",
                        e.linearized,
                        p.operations,
                        e.longest_linearization
                            .last()
                            .map(|s| format!(
                                ", ending with {} ({}) -> state {}",
                                s.op.describe(),
                                s.op.locate(),
                                s.state
                            ))
                            .unwrap_or_default()
                    ));
                }
            }
            if bad.len() > 3 {
                out.push_str(&format!("\n  ... and {} more", bad.len() - 3));
            }
            out
        }
        Verdict::Unknown => {
            let mut out = format!("undecided ({}): the budget ran out", r.model);
            for p in r
                .partitions
                .iter()
                .filter(|p| p.verdict == Verdict::Unknown)
            {
                if let Some(u) = &p.unknown {
                    out.push_str(&format!(
                        "\n  {}{} after {} states; longest linearization {} of {} operations",
                        key_prefix(&p.key),
                        u.reason,
                        p.states_explored,
                        u.longest_linearization,
                        p.operations
                    ));
                }
            }
            out
        }
    }
}

pub(crate) fn key_prefix(key: &Option<String>) -> String {
    match key {
        Some(k) => format!("key {k}: "),
        None => String::new(),
    }
}
