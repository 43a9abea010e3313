//! The checks as the report shows them: one sentence per finding, and for each violation what
//! its view draws. Everything comes from result.json (the verdicts, the checker's explanation,
//! the witnesses the checks stored); nothing here judges the history again.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::load::{show, Clock, Op, OpStatus, RunFolder};
use crate::checks::witness::{OpRef, Witness};
use crate::run_folder::CheckResult;
use checker::Verdict;

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
    fn without_key(anchor: String, check: &str, sentence: String, summary: String) -> Violation {
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

fn phrase_time(clock: Clock, op: &Op) -> String {
    clock.at(op.complete.unwrap_or(op.invoke))
}

fn stale_sentence(clock: Clock, ops: &[Op], key: &str, s: &StaleRead) -> String {
    let r = &ops[s.read];
    let newer = &ops[s.newer];
    let newer_value = match newer.f.as_str() {
        "cas" | "compare-and-set" => newer.value.get(1).map(show).unwrap_or_default(),
        _ => show(&newer.value),
    };
    let who = r
        .node
        .as_ref()
        .map(|n| format!(" served by {n}"))
        .unwrap_or_default();
    let gap = r.invoke.saturating_sub(newer.complete.unwrap_or(0)) as f64 / 1e6;
    let old = if r.output.is_null() {
        "nil (the initial value)".to_string()
    } else {
        show(&r.output)
    };
    format!(
        "a read on key {key}{who} returned {old} at {}, although {newer_value} had been acknowledged {} before the read began (process {}, {} at {})",
        clock.at(r.invoke),
        if gap >= 1000.0 { format!("{:.2} s", gap / 1000.0) } else { format!("{gap:.1} ms") },
        newer.process,
        newer.describe(),
        phrase_time(clock, newer)
    )
}

fn lost_sentence(clock: Clock, ops: &[Op], key: &str, lost: &[LostWrite]) -> Option<String> {
    let l = lost.first()?;
    let a = &ops[l.add];
    Some(format!(
        "{} acknowledged write{} on key {key} {} missing from the read at {} (first: {} acknowledged at {}{})",
        lost.len(),
        if lost.len() == 1 { "" } else { "s" },
        if lost.len() == 1 { "is" } else { "are" },
        clock.at(ops[l.read].invoke),
        show(&a.value),
        phrase_time(clock, a),
        l.fault.as_ref().map(|f| format!(", after {f}")).unwrap_or_default()
    ))
}

/// The fault that lost a write, beside its acknowledgement (`acked`, seconds from the
/// workload's start): " before kill redis1 at 20.000 s", or " after pause om1 at 7.327 s" when
/// the fault began first (no fault came between the acknowledgement and the final read).
fn fault_beside(fault: &str, acked: f64) -> String {
    let began = fault
        .rsplit_once(" at ")
        .and_then(|(_, t)| t.strip_suffix(" s"))
        .and_then(|t| t.parse::<f64>().ok());
    match began {
        Some(t) if t < acked => format!(" after {fault}"),
        _ => format!(" before {fault}"),
    }
}

/// Finds an op of the history by its 1-based line (how the checker and the witnesses name it).
fn by_line(ops: &[Op], line: Option<u64>) -> Option<usize> {
    let line = line? as usize;
    ops.binary_search_by_key(&line, |o| o.line).ok()
}

fn op_index(ops: &[Op], op: &OpRef) -> Option<usize> {
    by_line(ops, Some(op.line as u64))
}

/// What a key's witness shows, resolved to ops: the stale read, the lost adds, or (for the
/// s3-object witnesses) the witness's own sentence.
struct KeyWitness {
    stale: Option<StaleRead>,
    lost: Vec<LostWrite>,
    words: Option<String>,
}

fn resolve(ops: &[Op], w: Option<&Witness>) -> KeyWitness {
    let mut found = KeyWitness {
        stale: None,
        lost: Vec::new(),
        words: None,
    };
    match w {
        Some(Witness::StaleRead {
            read,
            overwritten_by,
            ..
        }) => {
            if let (Some(read), Some(newer)) = (op_index(ops, read), op_index(ops, overwritten_by))
            {
                found.stale = Some(StaleRead { read, newer });
            }
        }
        Some(Witness::MissingAdds { read, adds, .. }) => {
            if let Some(read) = op_index(ops, read) {
                found.lost = adds
                    .iter()
                    .filter_map(|a| {
                        Some(LostWrite {
                            add: op_index(ops, &a.write)?,
                            read,
                            fault: a.fault.clone(),
                        })
                    })
                    .collect();
            }
        }
        Some(w @ (Witness::DoubleCreate { .. } | Witness::TornGet { .. })) => {
            found.words = w.message().map(str::to_string);
        }
        Some(Witness::LostWrite { .. }) | None => {}
    }
    found
}

/// Everything a check's findings add to the page.
struct Findings<'a> {
    run: &'a RunFolder,
    by_key: &'a BTreeMap<String, Vec<usize>>,
    index: usize,
    name: String,
    check: &'a CheckResult,
    sentences: Vec<Sentence>,
    violations: &'a mut Vec<Violation>,
}

impl Findings<'_> {
    fn next_anchor(&self) -> String {
        format!("violation-{}-{}", self.index, self.violations.len())
    }

    fn push(&mut self, v: Violation) {
        self.sentences.push(Sentence {
            text: v.sentence.clone(),
            anchor: Some(v.anchor.clone()),
        });
        self.violations.push(v);
    }

    /// One violation per illegal key the checker explained.
    fn linearizability(&mut self, witnesses: &[Witness]) {
        let ops = &self.run.ops;
        let clock = self.run.clock;
        let check = self.check;
        for p in check.figures()["partitions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(e) = p.get("explanation").filter(|e| e.is_object()) else {
                continue;
            };
            let key = p["key"].as_str().unwrap_or("").to_string();
            let found = resolve(ops, witnesses.iter().find(|w| w.key() == key));
            let bad = by_line(ops, e["op"]["line"].as_u64());
            let states: Vec<String> = e["states"]
                .as_array()
                .map(|s| s.iter().map(show).collect())
                .unwrap_or_default();
            let sentence = match (&found.stale, &found.words) {
                (Some(s), _) => stale_sentence(clock, ops, &key, s),
                (None, Some(words)) => words.clone(),
                (None, None) => lost_sentence(clock, ops, &key, &found.lost)
                    .unwrap_or_else(|| unplaceable_sentence(clock, ops, &key, e, bad, &states)),
            };
            let linearization = e["longest_linearization"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| {
                    let i = by_line(ops, s["op"]["line"].as_u64());
                    let d = i
                        .map(|i| ops[i].describe())
                        .unwrap_or_else(|| show(&s["op"]["f"]));
                    (i, d, show(&s["state"]))
                })
                .collect();
            let v = Violation {
                anchor: self.next_anchor(),
                check: self.name.clone(),
                key_ops: self.by_key.get(&key).cloned().unwrap_or_default(),
                key,
                sentence,
                checker_message: show(&e["message"]),
                bad,
                needs: show(&e["needs"]),
                states,
                linearization,
                stale: found.stale,
                lost: found.lost,
                lost_rows: Vec::new(),
                retried: Vec::new(),
            };
            self.push(v);
        }
    }

    /// Durability: acknowledged writes missing from the final read, each under its fault.
    fn durability(&mut self, witnesses: &[Witness]) {
        let rows: Vec<LostRow> = witnesses
            .iter()
            .filter_map(|w| match w {
                Witness::LostWrite {
                    key,
                    value,
                    write,
                    fault,
                } => Some((
                    format!("{} on key {key}", show(value)),
                    write.complete_time.unwrap_or(0),
                    write.process.to_string(),
                    fault.clone(),
                )),
                _ => None,
            })
            .collect();
        let Some(first) = rows.first() else { return };
        let acked = self.run.clock.s(first.1);
        let text = format!(
            "{} acknowledged write{} lost: {} was acknowledged at {}{}, and the final read does not have it",
            rows.len(),
            if rows.len() == 1 { " was" } else { "s were" },
            first.0,
            self.run.clock.at(first.1),
            first.3.as_ref().map(|f| fault_beside(f, acked)).unwrap_or_default()
        );
        let mut v = Violation::without_key(
            self.next_anchor(),
            &self.name,
            text,
            self.check.summary.clone(),
        );
        v.lost_rows = rows;
        self.push(v);
    }

    /// Retries: the same call answered differently, the first to disagree first.
    fn retries(&mut self) {
        let check = self.check;
        let clock = self.run.clock;
        let mut rows: Vec<Retried> = check.figures()["duplicates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["consistent"] == false)
            .filter_map(retried)
            .collect();
        rows.sort_by_key(|r| (r.later.invoked, r.first.invoked));
        let Some(d) = rows.first() else { return };
        let more = rows.len() - 1;
        let text = format!(
            "{} call {} of client {}{}: {} at {}{}, then {} at {}{}",
            if more > 0 {
                format!(
                    "{} calls sent again were answered differently; the first,",
                    rows.len()
                )
            } else {
                "a call sent again was answered differently:".to_string()
            },
            d.call,
            short_id(&d.client),
            if d.key.is_empty() {
                String::new()
            } else {
                format!(" on key {}", d.key)
            },
            d.first.words,
            clock.at(d.first.invoked),
            d.first
                .node
                .as_ref()
                .map(|n| format!(" by {n}"))
                .unwrap_or_default(),
            d.later.words,
            clock.at(d.later.invoked),
            d.later
                .node
                .as_ref()
                .map(|n| format!(" by {n}"))
                .unwrap_or_default(),
        );
        let mut v =
            Violation::without_key(self.next_anchor(), &self.name, text, check.summary.clone());
        v.key = d.key.clone();
        v.retried = rows;
        self.push(v);
    }

    /// The one sentence of a check that found nothing to show.
    fn verdict_in_words(&self) -> String {
        let check = self.check;
        let detail = check.figures();
        let model = check.model.as_deref().unwrap_or("");
        match check.verdict {
            // Checks other than linearizability (durable, fencing, conditional-writes,
            // converge) say what held in their own summary.
            Verdict::Ok if detail["operations"].is_null() => check.summary.clone(),
            Verdict::Ok => {
                let keys = detail["partitions"].as_array().map_or(0, Vec::len);
                format!(
                    "all {} operations{} can be put in one order that agrees with real time and the {} model",
                    show(&detail["operations"]),
                    if keys > 1 { format!(" on {keys} keys") } else { String::new() },
                    if model.is_empty() { "checked" } else { model }
                )
            }
            Verdict::Unknown => format!("could not decide: {}", check.summary),
            Verdict::Illegal => check.summary.clone(),
        }
    }
}

/// "on key k, read 3 (process 2, at 4.1 s) cannot be placed ...": the checker's explanation in
/// words, when no witness says it better.
fn unplaceable_sentence(
    clock: Clock,
    ops: &[Op],
    key: &str,
    e: &Value,
    bad: Option<usize>,
    states: &[String],
) -> String {
    let op = &e["op"];
    let what = bad
        .map(|b| ops[b].describe())
        .unwrap_or_else(|| format!("{} {}", show(&op["f"]), show(&op["value"])));
    format!(
        "on key {key}, {what} (process {}, at {}) cannot be placed in any order consistent with real time: it needs {}, but by then the state could only be {}",
        show(&op["process"]),
        clock.at(op["invoke_time"].as_u64().unwrap_or(0)),
        show(&e["needs"]),
        if states.is_empty() { "nothing".into() } else { states.join(" or ") }
    )
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
        let witnesses = check.witnesses();
        let mut findings = Findings {
            run,
            by_key: &by_key,
            index,
            name: check.name.clone(),
            check,
            sentences: Vec::new(),
            violations: &mut violations,
        };
        findings.linearizability(witnesses);
        findings.durability(witnesses);
        findings.retries();
        if findings.sentences.is_empty() {
            let text = findings.verdict_in_words();
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

/// One answer to a retried call: `cas [nil 9] → ok [nil 9]`, `resend [nil 9] → fail: already
/// exists (call 12 sent again)`: what came back, not just the value sent.
fn retried_answer(op: &Value) -> Answer {
    let answer = match op["status"].as_str() {
        Some("ok") => format!("ok {}", show(&op["output"])),
        Some(status) => match op["error"].as_str() {
            Some(error) => format!("{status}: {error}"),
            None => status.to_string(),
        },
        None => "no answer".to_string(),
    };
    Answer {
        words: format!("{} {} → {answer}", show(&op["f"]), show(&op["value"])),
        process: show(&op["process"]),
        invoked: op["invoke_time"].as_u64().unwrap_or(0),
        completed: op["complete_time"].as_u64(),
        status: show(&op["status"]),
        node: op["node"].as_str().map(str::to_string),
        line: op["line"].as_u64(),
    }
}

/// A call answered differently: its first definite answer and the first that disagrees.
fn retried(d: &Value) -> Option<Retried> {
    let definite: Vec<&Value> = d["ops"]
        .as_array()?
        .iter()
        .filter(|o| matches!(o["status"].as_str(), Some("ok" | "fail")))
        .collect();
    let first = definite.first()?;
    let later = definite
        .iter()
        .skip(1)
        .find(|o| o["status"] != first["status"] || o["output"] != first["output"])
        .or(definite.get(1))?;
    Some(Retried {
        call: show(&d["call"]),
        client: show(&d["client"]),
        key: first["key"].as_str().unwrap_or("").to_string(),
        first: retried_answer(first),
        later: retried_answer(later),
    })
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
    use super::*;
    use serde_json::json;

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
