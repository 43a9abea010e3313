//! Retry consistency: an invocation retried with the same client and call id
//! must get the same answer as the first one that got a definite answer.
//!
//! Operations are grouped by (`client`, `call`); within a group, every `ok` or
//! `fail` completion must agree with the first definite one (same type and
//! value). Unknown outcomes (info) say nothing and are skipped.

use crate::history::Operation;
use crate::history::{History, Status};
use crate::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;

/// One call that was invoked more than once.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Duplicate {
    pub client: String,
    pub call: String,
    /// Whether every definite answer agreed.
    pub consistent: bool,
    pub ops: Vec<Operation>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RetryResult {
    pub verdict: Verdict,
    /// Operations that carried a retry identity.
    pub identified: usize,
    /// Calls invoked more than once, all of them.
    pub duplicates: Vec<Duplicate>,
    /// How many of `duplicates` disagree.
    pub inconsistent: usize,
}

/// Checks that retries of the same call got the same answer.
pub fn check(history: &History) -> RetryResult {
    let mut groups: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    let mut identified = 0;
    for (i, op) in history.ops.iter().enumerate() {
        if let (Some(c), Some(k)) = (op.client.as_deref(), op.call.as_deref()) {
            identified += 1;
            groups.entry((c, k)).or_default().push(i);
        }
    }
    let mut duplicates = Vec::new();
    for ((client, call), ids) in groups {
        if ids.len() < 2 {
            continue;
        }
        let ops: Vec<_> = ids.iter().map(|&i| &history.ops[i]).collect();
        let mut first = None;
        let mut consistent = true;
        for op in &ops {
            if op.status == Status::Info {
                continue;
            }
            match first {
                None => first = Some((op.status, &op.output)),
                Some((s, v)) => {
                    if s != op.status || v != &op.output {
                        consistent = false;
                    }
                }
            }
        }
        duplicates.push(Duplicate {
            client: client.to_string(),
            call: call.to_string(),
            consistent,
            ops: ops.iter().copied().cloned().collect(),
        });
    }
    // In the order the calls were first sent, so "the first" in every sentence (CLI, report,
    // summary) is the earliest call, not the smallest client id.
    duplicates.sort_by_key(|d| d.ops.first().map(|o| o.invoke));
    let inconsistent = duplicates.iter().filter(|d| !d.consistent).count();
    RetryResult {
        verdict: if inconsistent > 0 {
            Verdict::Illegal
        } else {
            Verdict::Ok
        },
        identified,
        duplicates,
        inconsistent,
    }
}

impl RetryResult {
    /// A short text for the CLI and JUnit.
    pub fn text(&self) -> String {
        if self.inconsistent == 0 {
            return format!(
                "retry-consistent: {} retried calls, all answered alike",
                self.duplicates.len()
            );
        }
        let d = self
            .duplicates
            .iter()
            .find(|d| !d.consistent)
            .expect("one inconsistent");
        let answers: Vec<String> = d
            .ops
            .iter()
            .map(|o| format!("{} ({})", o.describe(), o.locate()))
            .collect();
        format!(
            "{} of {} retried calls got different answers; client {} call {}: {}",
            self.inconsistent,
            self.duplicates.len(),
            d.client,
            d.call,
            answers.join(" then ")
        )
    }
}
