//! The checks as the report shows them: one sentence per finding, and for each violation what
//! its view draws. Everything comes from result.json (the verdicts, the checker's explanation,
//! the witnesses the checks stored); nothing here judges the history again. Each check's words
//! live beside it ([`kind::Check::findings`], [`kind::Check::in_words`], reading its typed detail); this
//! module gathers them and holds what the views draw.

use std::collections::{BTreeMap, BTreeSet};

use super::load::{Op, OpStatus, RunFolder};
use crate::checks::kind;
use crate::run_folder::CheckResult;

/// One check as the summary shows it.
pub struct CheckView {
    pub name: String,
    pub verdict: String,
    /// Sentences people understand, one per finding.
    pub sentences: Vec<Sentence>,
    /// The checker's own words.
    pub summary: String,
}

pub struct Sentence {
    pub text: String,
    /// Anchor of the violation view it links to.
    pub anchor: Option<String>,
}

/// A stale read's two answers, as indexes into the ops.
#[derive(Clone, Debug)]
pub struct StaleRead {
    pub read: usize,
    /// The write it missed, acknowledged before the read began.
    pub newer: usize,
}

/// An acknowledged add a later read of the set no longer has (indexes into the ops).
#[derive(Clone, Debug)]
pub struct LostWrite {
    pub add: usize,
    pub read: usize,
    pub fault: Option<String>,
}

/// A durable check's lost write: value on key, acknowledged at, process, the fault that lost it.
pub type LostRow = (String, u64, String, Option<String>);

/// One answer to a retried call.
#[derive(Clone, Debug)]
pub struct Answer {
    /// `cas [nil 9] → ok [nil 9]`, `resend [nil 9] → fail: already exists`.
    pub words: String,
    pub process: String,
    pub invoked: u64,
    pub completed: Option<u64>,
    /// ok, fail.
    pub status: String,
    /// The node that answered.
    pub node: Option<String>,
    /// Its line in history.jsonl.
    pub line: Option<u64>,
}

/// A call sent more than once and answered differently: its first definite answer and the
/// first that disagrees with it.
#[derive(Clone, Debug)]
pub struct Retried {
    pub call: String,
    pub client: String,
    pub key: String,
    pub first: Answer,
    pub later: Answer,
}

/// One illegal key and everything its view draws.
pub struct Violation {
    pub anchor: String,
    pub check: String,
    pub key: String,
    pub sentence: String,
    pub checker_message: String,
    /// The op that cannot be placed (index into ops, if found in the history).
    pub bad: Option<usize>,
    pub needs: String,
    pub states: Vec<String>,
    /// Longest partial linearization: op index (if found) and state after, in order.
    pub linearization: Vec<(Option<usize>, String, String)>,
    pub stale: Option<StaleRead>,
    pub lost: Vec<LostWrite>,
    /// All operations of the key (indexes into ops).
    pub key_ops: Vec<usize>,
    /// Durability checks: lost writes as the check lists them.
    pub lost_rows: Vec<LostRow>,
    /// Retry checks: every call answered differently, the first to disagree first.
    pub retried: Vec<Retried>,
}

impl Violation {
    /// A violation with no key view (durable, retry-consistent).
    pub fn without_key(
        anchor: String,
        check: &str,
        sentence: String,
        summary: String,
    ) -> Violation {
        Violation {
            anchor,
            check: check.to_string(),
            key: String::new(),
            sentence,
            checker_message: summary,
            bad: None,
            needs: String::new(),
            states: Vec::new(),
            linearization: Vec::new(),
            stale: None,
            lost: Vec::new(),
            key_ops: Vec::new(),
            lost_rows: Vec::new(),
            retried: Vec::new(),
        }
    }
}

/// Everything a check's findings add to the page: each check's [`Check::findings`] pushes the
/// violations its views draw, and says what it found in sentences.
pub struct Findings<'a> {
    pub run: &'a RunFolder,
    /// Every op of each key (indexes into the ops).
    pub by_key: &'a BTreeMap<String, Vec<usize>>,
    index: usize,
    pub name: String,
    pub check: &'a CheckResult,
    sentences: Vec<Sentence>,
    violations: &'a mut Vec<Violation>,
}

impl Findings<'_> {
    /// The anchor of the next violation pushed.
    pub fn next_anchor(&self) -> String {
        format!("violation-{}-{}", self.index, self.violations.len())
    }

    /// A violation, and its sentence in the check's summary.
    pub fn push(&mut self, v: Violation) {
        self.sentences.push(Sentence {
            text: v.sentence.clone(),
            anchor: Some(v.anchor.clone()),
        });
        self.violations.push(v);
    }
}

/// Each check in words, and the violations their views draw, in the order of result.json.
pub fn violations_and_checks(run: &RunFolder) -> (Vec<CheckView>, Vec<Violation>) {
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, o) in run.ops.iter().enumerate() {
        by_key
            .entry(o.key.clone().unwrap_or_default())
            .or_default()
            .push(i);
    }
    let mut checks = Vec::new();
    let mut violations = Vec::new();
    for (index, check) in run.result.checks.iter().enumerate() {
        // A check this chaos does not know (`faults`, a name an older one wrote) is shown in
        // the words every check has.
        let known = kind::by_name(&check.check);
        let mut findings = Findings {
            run,
            by_key: &by_key,
            index,
            name: check.name.clone(),
            check,
            sentences: Vec::new(),
            violations: &mut violations,
        };
        if let Some(known) = known {
            known.findings(&mut findings);
        }
        if findings.sentences.is_empty() {
            let text = match known {
                Some(known) => known.in_words(check),
                None => kind::verdict_in_words(check),
            };
            findings.sentences.push(Sentence { text, anchor: None });
        }
        checks.push(CheckView {
            name: findings.name,
            verdict: check.verdict.as_str().to_string(),
            sentences: findings.sentences,
            summary: check.summary.clone(),
        });
    }
    (checks, violations)
}

/// A client id short enough for a sentence: its first 8 characters.
pub fn short_id(id: &str) -> String {
    if id.chars().count() > 12 {
        format!("{}…", id.chars().take(8).collect::<String>())
    } else {
        id.to_string()
    }
}

/// The operations of a violation's neighbourhood: the last steps of the longest linearization,
/// the op that cannot be placed, the stale read's witnesses and whatever on the key overlaps them.
pub fn neighbourhood(ops: &[Op], v: &Violation, steps: usize) -> (Vec<usize>, u64, u64) {
    let mut focus: Vec<usize> = v
        .linearization
        .iter()
        .rev()
        .take(steps)
        .filter_map(|(i, _, _)| *i)
        .collect();
    focus.extend(v.bad);
    if let Some(s) = &v.stale {
        focus.push(s.read);
        focus.push(s.newer);
    }
    if focus.is_empty() {
        return (Vec::new(), 0, 0);
    }
    // Witnesses far apart in time would squash the drawing: keep the window around the end.
    let end = focus
        .iter()
        .map(|&i| ops[i].complete.unwrap_or(ops[i].invoke))
        .max()
        .unwrap_or(0);
    let mut start = focus.iter().map(|&i| ops[i].invoke).min().unwrap_or(0);
    let mut chosen: Vec<usize> = v
        .key_ops
        .iter()
        .copied()
        .filter(|&i| {
            let o = &ops[i];
            o.invoke <= end && o.complete.unwrap_or(end) >= start && o.outcome != OpStatus::Fail
        })
        .collect();
    if chosen.len() > 32 {
        // Keep the most recent 32, but always the focus.
        let cut = chosen.len() - 32;
        let keep: BTreeSet<usize> = focus.iter().copied().collect();
        let mut trimmed: Vec<usize> = chosen[..cut]
            .iter()
            .copied()
            .filter(|i| keep.contains(i))
            .collect();
        trimmed.extend_from_slice(&chosen[cut..]);
        chosen = trimmed;
    }
    chosen.sort_unstable();
    chosen.dedup();
    start = chosen.iter().map(|&i| ops[i].invoke).min().unwrap_or(start);
    (chosen, start, end)
}

#[cfg(test)]
mod tests {
    use super::super::load::Clock;
    use super::*;
    use crate::checks::durable::fault_beside;
    use crate::checks::linearizable::{resolve, stale_sentence};
    use crate::checks::witness::{OpRef, Witness};
    use serde_json::{json, Value};

    fn op(id: usize, f: &str, value: Value, output: Value, inv: u64, done: u64) -> Op {
        Op {
            id,
            process: id as u64,
            f: f.into(),
            key: Some("k".into()),
            value,
            output,
            outcome: OpStatus::Ok,
            invoke: inv,
            complete: Some(done),
            node: Some("n1".into()),
            line: id + 1,
        }
    }

    #[test]
    fn a_stale_read_in_words() {
        let ops = vec![
            op(0, "write", json!(1), json!(1), 0, 10),
            op(1, "cas", json!([1, 2]), json!([1, 2]), 20, 30),
            op(2, "read", Value::Null, json!(1), 50, 60),
        ];
        let text = stale_sentence(
            Clock::default(),
            &ops,
            "k",
            &StaleRead { read: 2, newer: 1 },
        );
        assert!(text.starts_with("a read on key k served by n1 returned 1 at 0.000 s, although 2 had been acknowledged 0.0 ms before"), "{text}");
    }

    /// A lost write's fault is named before or after the acknowledgement as it came (both on the
    /// workload's clock): a crash after it, or the pause of a follower that diverged before it.
    #[test]
    fn a_lost_write_and_its_fault_in_order() {
        assert_eq!(
            fault_beside("kill redis1 at 20.000 s", 3.25),
            " before kill redis1 at 20.000 s"
        );
        assert_eq!(
            fault_beside("pause om1 at 7.327 s", 60.058),
            " after pause om1 at 7.327 s"
        );
        assert_eq!(fault_beside("kill redis1", 3.0), " before kill redis1");
    }

    /// The report takes the witness result.json names, by its history line, and judges nothing.
    #[test]
    fn a_witness_resolves_to_the_ops_it_names() {
        let ops = vec![
            op(0, "write", json!(1), json!(1), 0, 10),
            op(1, "write", json!(2), json!(2), 20, 30),
            op(2, "read", Value::Null, json!(1), 50, 60),
        ];
        let at = |i: usize| OpRef {
            line: i + 1,
            process: i as u64,
            f: ops[i].f.clone(),
            value: ops[i].value.clone(),
            output: ops[i].output.clone(),
            invoke_time: ops[i].invoke,
            complete_time: ops[i].complete,
            node: None,
        };
        let w = Witness::StaleRead {
            key: "k".into(),
            message: String::new(),
            read: at(2),
            wrote_value: Some(at(0)),
            overwritten_by: at(1),
        };
        let stale = resolve(&ops, Some(&w)).stale.unwrap();
        assert_eq!((stale.read, stale.newer), (2, 1));
        // Through result.json and back.
        let check: CheckResult = serde_json::from_value(json!({
            "name": "n", "check": "linearizable", "verdict": "illegal", "summary": "s",
            "witnesses": [w]
        }))
        .unwrap();
        assert_eq!(check.witnesses(), [w]);
    }
}
