//! Whether a run reached its bug's preconditions (`reached:`), from the run folder alone:
//! faults.jsonl for steps, logs/ for log lines, history.jsonl for operations and resends,
//! observed.jsonl for what the probes saw, converge.json for the converge answer. Each
//! predicate is reached (when, and what shows it) or not; the run's confirmation follows from
//! them and the checks' verdict.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use checker::{History, Operation, Status};
use regex::Regex;

use crate::run_folder::{FaultEvent, Phase};
// A predicate's outcome and the confirmation live with result.json's other types.
use crate::faults::kinds::jvm::Firing;
pub use crate::run_folder::{Confirmation, Reached};
use crate::scenario::{NodeRef, OpFilter, OutcomeFilter, Precondition, PredicateKind};

/// When fault steps happened, from faults.jsonl (nanoseconds since the run began).
#[derive(Debug, Default)]
pub struct StepTimes {
    applied: BTreeMap<usize, u64>,
    over: BTreeMap<usize, u64>,
    /// Each firing's window, from its apply to its undo (or the step's end).
    windows: BTreeMap<usize, Vec<(u64, u64)>>,
    undone: BTreeMap<usize, u64>,
    ready: BTreeMap<usize, (u64, bool, String)>,
    labels: BTreeMap<usize, String>,
    /// The nodes each step acted on: the targets of its apply events that succeeded.
    targets: BTreeMap<usize, BTreeSet<String>>,
}

impl StepTimes {
    pub fn from_faults(faults: &[FaultEvent]) -> StepTimes {
        let mut t = StepTimes::default();
        for f in faults {
            let Some(step) = f.step else {
                continue;
            };
            let time = f.time;
            let over = t.over.entry(step).or_insert(0);
            *over = (*over).max(time);
            match f.phase {
                Phase::Apply if f.ok() => {
                    t.applied.entry(step).or_insert(time);
                    t.windows.entry(step).or_default().push((time, u64::MAX));
                    t.targets
                        .entry(step)
                        .or_default()
                        .extend(f.targets.iter().cloned());
                    t.labels
                        .entry(step)
                        .or_insert_with(|| format!("{} {}", f.action, f.targets.join(", ")));
                }
                Phase::Undo if f.ok() => {
                    t.undone.entry(step).or_insert(time);
                    if let Some(w) = t.windows.get_mut(&step).and_then(|w| w.last_mut()) {
                        w.1 = w.1.min(time);
                    }
                }
                Phase::Ready => {
                    let answering = f.outcome.starts_with("answering again");
                    t.ready.insert(step, (time, answering, f.outcome.clone()));
                }
                _ => {}
            }
        }
        // A window never undone lasts until the step was over.
        for (step, windows) in t.windows.iter_mut() {
            let end = t.over.get(step).copied().unwrap_or(u64::MAX);
            for w in windows.iter_mut().filter(|w| w.1 == u64::MAX) {
                w.1 = end;
            }
        }
        t
    }

    fn applied(&self, step: usize) -> Option<u64> {
        self.applied.get(&step).copied()
    }

    /// When step N was over; None when it never applied.
    fn over(&self, step: usize) -> Option<u64> {
        self.applied(step)?;
        self.over.get(&step).copied()
    }

    fn during(&self, step: usize, t: u64) -> bool {
        self.windows
            .get(&step)
            .is_some_and(|w| w.iter().any(|(a, b)| *a <= t && t <= *b))
    }
}

/// Everything the predicates are evaluated against.
pub struct Evidence<'a> {
    pub run_dir: &'a Path,
    pub history: &'a History,
    pub steps: StepTimes,
    /// The run clock's time of the workload's start (what `at:` counts from).
    pub workload_started: u64,
}

impl Evidence<'_> {
    fn seconds(&self, t: u64) -> f64 {
        (t as f64 - self.workload_started as f64) / 1e9
    }
}

/// Every predicate of `reached:`, in the scenario's order.
pub fn evaluate(preconditions: &[(String, Precondition)], evidence: &Evidence) -> Vec<Reached> {
    let observed = crate::run_folder::read_observed(evidence.run_dir);
    preconditions
        .iter()
        .map(|(name, p)| {
            let kind = p.kinds().first().copied().unwrap_or(PredicateKind::Step);
            let (at, text) = match kind {
                PredicateKind::Step => step(p, evidence),
                PredicateKind::Log => log(p, evidence),
                PredicateKind::Probe | PredicateKind::Config => live(name, &observed),
                PredicateKind::History => history(p, evidence),
                PredicateKind::Resent => resent(p, evidence),
                PredicateKind::Converge => converge(evidence),
                PredicateKind::Jvm => jvm(p, evidence),
            };
            Reached {
                name: name.clone(),
                kind: kind_word(kind),
                reached: at.is_some(),
                at_s: at.map(|t| evidence.seconds(t)),
                evidence: text,
            }
        })
        .collect()
}

/// The kind as result.json words it (`step`, `log`, ...).
fn kind_word(kind: PredicateKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// When the predicate was reached (run clock), and what shows it or what was seen instead.
type Outcome = (Option<u64>, String);

fn step(p: &Precondition, e: &Evidence) -> Outcome {
    let Some(n) = p.step.as_ref().map(|s| s.value) else {
        return (None, String::new());
    };
    let label = e.steps.labels.get(&n).cloned().unwrap_or_default();
    let Some(applied) = e.steps.applied(n) else {
        return (None, format!("step {n} never applied"));
    };
    let mut text = format!("step {n} ({label}) applied at {:.1} s", e.seconds(applied));
    let mut at = applied;
    if p.undone {
        match e.steps.undone.get(&n) {
            Some(&t) => {
                text.push_str(&format!(", undone at {:.1} s", e.seconds(t)));
                at = t;
            }
            None => return (None, format!("{text}, never undone")),
        }
    }
    if p.ready {
        match e.steps.ready.get(&n) {
            Some((t, true, outcome)) => {
                text.push_str(&format!("; {outcome} (at {:.1} s)", e.seconds(*t)));
                at = at.max(*t);
            }
            Some((_, false, outcome)) => return (None, format!("{text}; {outcome}")),
            None => {
                return (
                    None,
                    format!("{text}; its nodes were never seen answering again"),
                )
            }
        }
    }
    (Some(at), text)
}

fn log(p: &Precondition, e: &Evidence) -> Outcome {
    let Some(log) = &p.log else {
        return (None, String::new());
    };
    let Ok(regex) = Regex::new(&log.regex.value) else {
        return (None, "the regex does not compile".into());
    };
    let after = match &log.after_step {
        Some(s) => match e.steps.over(s.value) {
            Some(t) => Some(t),
            None => return (None, format!("step {} never applied", s.value)),
        },
        None => None,
    };
    let nodes = match logs_of(&log.node, e) {
        Ok(nodes) => nodes,
        Err(why) => return (None, why),
    };
    let mut first: Option<(u64, String, String)> = None;
    for node in &nodes {
        let text = crate::run_folder::read_optional(e.run_dir, &format!("logs/{node}.log"))
            .unwrap_or_default();
        for line in crate::run_folder::parse_log(&text) {
            let Some(t) = line.time.map(|s| (s * 1e9) as u64) else {
                continue;
            };
            if after.is_some_and(|a| t < a) || !regex.is_match(&line.text) {
                continue;
            }
            if first.as_ref().is_none_or(|(f, _, _)| t < *f) {
                first = Some((t, node.clone(), line.text.clone()));
            }
            break;
        }
    }
    match first {
        Some((t, node, text)) => (
            Some(t),
            format!("{node} at {:.1} s: {}", e.seconds(t), clip(&text)),
        ),
        None => (
            None,
            format!(
                "no line of {} matched /{}/{}",
                whose_logs(&log.node, &nodes),
                log.regex.value,
                log.after_step
                    .as_ref()
                    .map(|s| format!(" after step {} was over", s.value))
                    .unwrap_or_default()
            ),
        ),
    }
}

/// A JVM fault's rule fired (chaos's Byteman helper's `CHAOS-JVM` lines in the nodes' logs):
/// reached at the `at-least`-th matching event.
fn jvm(p: &Precondition, e: &Evidence) -> Outcome {
    let Some(want) = &p.jvm else {
        return (None, String::new());
    };
    let step = want.step.value;
    let nodes = match logs_of(&want.node, e) {
        Ok(nodes) => nodes,
        Err(why) => return (None, why),
    };
    let mut seen: Vec<(u64, String, Firing)> = Vec::new();
    for node in &nodes {
        let text = crate::run_folder::read_optional(e.run_dir, &format!("logs/{node}.log"))
            .unwrap_or_default();
        for line in crate::run_folder::parse_log(&text) {
            let (Some(t), Some(firing)) = (line.time, Firing::parse(&line.text)) else {
                continue;
            };
            if firing.step() == Some(step) && firing.event.counts_as(want.event) {
                seen.push(((t * 1e9) as u64, node.clone(), firing));
            }
        }
    }
    seen.sort_by_key(|(t, _, _)| *t);
    let what = want
        .event
        .map_or("fired".to_string(), |e| format!("{e:?}").to_lowercase());
    let wanted = want.at_least.max(1) as usize;
    match seen.get(wanted - 1) {
        Some((t, node, f)) => {
            let values: Vec<String> = f.values.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let mut text = format!(
                "step {step}'s rule {what} {} time(s); number {wanted} at {:.1} s on {node}, thread {}",
                seen.len(),
                e.seconds(*t),
                f.thread
            );
            if !values.is_empty() {
                text.push_str(&format!(" ({})", values.join(", ")));
            }
            if let Some(ms) = f.held_ms {
                text.push_str(&format!(", held {ms} ms"));
            }
            (Some(*t), text)
        }
        None => (
            None,
            format!(
                "step {step}'s rule {what} {} time(s) in {}, fewer than {wanted}",
                seen.len(),
                whose_logs(&want.node, &nodes),
            ),
        ),
    }
}

/// The nodes whose logs a `log:` or `jvm:` predicate reads: the one named, those a step acted
/// on (`{ of-step: N }`), or every node with a log; why none, when the step never acted.
fn logs_of(
    node: &Option<serde_saphyr::Spanned<NodeRef>>,
    e: &Evidence,
) -> Result<Vec<String>, String> {
    match node.as_ref().map(|n| &n.value) {
        None => Ok(log_nodes(e.run_dir)),
        Some(NodeRef::Named(name)) => Ok(vec![name.clone()]),
        Some(NodeRef::OfStep(step)) => match e.steps.targets.get(&step.value) {
            Some(nodes) if !nodes.is_empty() => Ok(nodes.iter().cloned().collect()),
            _ => Err(format!(
                "step {n} never applied to a node, so no log is of a node it acted on \
                 (node: {{ of-step: {n} }})",
                n = step.value
            )),
        },
    }
}

/// `om2's log`, `the logs of om1, om3 (step 2 acted on them)`, or `any node's log`.
fn whose_logs(node: &Option<serde_saphyr::Spanned<NodeRef>>, nodes: &[String]) -> String {
    match node.as_ref().map(|n| &n.value) {
        None => "any node's log".into(),
        Some(NodeRef::Named(name)) => format!("{name}'s log"),
        Some(NodeRef::OfStep(step)) => format!(
            "the logs of {} (step {} acted on them)",
            nodes.join(", "),
            step.value
        ),
    }
}

fn log_nodes(dir: &Path) -> Vec<String> {
    let mut nodes: Vec<String> = std::fs::read_dir(dir.join("logs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".log")
                .map(str::to_string)
        })
        .collect();
    nodes.sort();
    nodes
}

fn live(name: &str, observed: &[crate::run_folder::Observed]) -> Outcome {
    let mine: Vec<&crate::run_folder::Observed> =
        observed.iter().filter(|o| o.name == name).collect();
    match mine.iter().find(|o| o.reached) {
        Some(o) => (Some(o.time), o.evidence.clone()),
        None => (
            None,
            mine.last().map_or_else(
                || "never seen while the run played".to_string(),
                |o| o.evidence.clone(),
            ),
        ),
    }
}

/// Whether an operation passes a filter (kinds, outcome, error, times against steps).
fn matches(op: &Operation, f: &OpFilter, e: &Evidence) -> bool {
    if let Some(kinds) = &f.f {
        if !kinds.names().contains(&op.f.as_str()) {
            return false;
        }
    }
    if let Some(outcome) = f.outcome {
        let ok = match outcome {
            OutcomeFilter::Ok => op.status == Status::Ok,
            OutcomeFilter::Fail => op.status == Status::Fail,
            OutcomeFilter::Info => op.status == Status::Info,
            OutcomeFilter::Definite => op.status != Status::Info,
        };
        if !ok {
            return false;
        }
    }
    let node = op.node.as_deref().unwrap_or_default();
    let node_matches = match f.node.as_ref().map(|n| &n.value) {
        None => true,
        Some(NodeRef::Named(name)) => op.node.is_some() && node == name,
        Some(NodeRef::OfStep(step)) => e
            .steps
            .targets
            .get(&step.value)
            .is_some_and(|nodes| nodes.contains(node)),
    };
    if !node_matches {
        return false;
    }
    if let Some(regex) = &f.error {
        let text = op.error.clone().unwrap_or_else(|| op.output.to_string());
        if !Regex::new(&regex.value).is_ok_and(|r| r.is_match(&text)) {
            return false;
        }
    }
    let after = |s: &Option<serde_saphyr::Spanned<usize>>, t: Option<u64>| {
        s.as_ref().is_none_or(
            |s| matches!((e.steps.over(s.value), t), (Some(over), Some(t)) if t >= over),
        )
    };
    let before = |s: &Option<serde_saphyr::Spanned<usize>>, t: Option<u64>| {
        s.as_ref()
            .is_none_or(|s| match (e.steps.applied(s.value), t) {
                (Some(applied), Some(t)) => t < applied,
                (None, Some(_)) => true,
                (_, None) => false,
            })
    };
    let after_applied = |s: &Option<serde_saphyr::Spanned<usize>>, t: Option<u64>| {
        s.as_ref().is_none_or(
            |s| matches!((e.steps.applied(s.value), t), (Some(applied), Some(t)) if t >= applied),
        )
    };
    let (invoked, answered) = (Some(op.invoke_time), op.complete_time);
    after(&f.invoked_after, invoked)
        && before(&f.invoked_before, invoked)
        && after(&f.answered_after, answered)
        && after_applied(&f.answered_after_applied, answered)
        && before(&f.answered_before, answered)
        && f.during
            .as_ref()
            .is_none_or(|s| e.steps.during(s.value, op.invoke_time))
}

/// Why filters that name a step's nodes (`node: { of-step: N }`) can match no operation: step N
/// never applied, or applied to no node. None when every such step names its nodes.
fn unresolved(filters: &[&OpFilter], e: &Evidence) -> Option<String> {
    filters
        .iter()
        .find_map(|f| match f.node.as_ref().map(|n| &n.value) {
            Some(NodeRef::OfStep(step)) => {
                let n = step.value;
                match e.steps.targets.get(&n) {
                    None => Some(format!(
                        "step {n} never applied, so no node is the one it acted on \
                     (node: {{ of-step: {n} }})"
                    )),
                    Some(nodes) if nodes.is_empty() => Some(format!(
                        "step {n} applied to no node, so no operation's node is one it acted on \
                     (node: {{ of-step: {n} }})"
                    )),
                    Some(_) => None,
                }
            }
            _ => None,
        })
}

/// `; step 1 acted on om2` for each step whose nodes the filters name.
fn resolved(filters: &[&OpFilter], e: &Evidence) -> String {
    let mut steps: Vec<usize> = filters
        .iter()
        .filter_map(|f| match f.node.as_ref().map(|n| &n.value) {
            Some(NodeRef::OfStep(step)) => Some(step.value),
            _ => None,
        })
        .collect();
    steps.dedup();
    steps
        .into_iter()
        .filter_map(|n| {
            let nodes = e.steps.targets.get(&n)?;
            Some(format!(
                "; step {n} acted on {}",
                nodes.iter().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
        .collect()
}

fn describe(op: &Operation, e: &Evidence) -> String {
    let answered = match (op.status, op.complete_time) {
        (Status::Info, _) | (_, None) => "no definite answer".to_string(),
        (status, Some(t)) => format!(
            "answered {} at {:.3} s{}",
            match status {
                Status::Ok => "ok",
                _ => "fail",
            },
            e.seconds(t),
            op.error
                .as_ref()
                .map(|m| format!(" ({})", clip(m)))
                .unwrap_or_default()
        ),
    };
    format!(
        "{} {} (history.jsonl line {}, process {}) invoked at {:.3} s, {answered}",
        op.f,
        op.key.as_deref().unwrap_or(""),
        op.line,
        op.process,
        e.seconds(op.invoke_time)
    )
}

fn history(p: &Precondition, e: &Evidence) -> Outcome {
    let Some(filter) = &p.history else {
        return (None, String::new());
    };
    if let Some(why) = unresolved(&[filter], e) {
        return (None, why);
    }
    let need = filter.at_least.as_ref().map_or(1, |n| n.value) as usize;
    let hits: Vec<&Operation> = e
        .history
        .ops
        .iter()
        .filter(|op| matches(op, filter, e))
        .collect();
    let at = hits
        .get(need.saturating_sub(1))
        .map(|op| op.complete_time.unwrap_or(op.invoke_time));
    let first = hits
        .first()
        .map(|op| format!("; the first: {}", describe(op, e)))
        .unwrap_or_default();
    (
        at,
        format!(
            "{} of at least {need} operations matched{}{first}",
            hits.len(),
            resolved(&[filter], e)
        ),
    )
}

fn resent(p: &Precondition, e: &Evidence) -> Outcome {
    let Some(r) = &p.resent else {
        return (None, String::new());
    };
    if let Some(why) = unresolved(&[&r.first, &r.again], e) {
        return (None, why);
    }
    let mut calls: BTreeMap<(&str, &str), Vec<&Operation>> = BTreeMap::new();
    for op in &e.history.ops {
        if let (Some(c), Some(k)) = (op.client.as_deref(), op.call.as_deref()) {
            calls.entry((c, k)).or_default().push(op);
        }
    }
    let mut hits: Vec<(u64, &Operation, &Operation)> = Vec::new();
    for ops in calls.values().filter(|ops| ops.len() > 1) {
        let Some(i) = ops.iter().position(|op| op.status != Status::Info) else {
            continue;
        };
        if !matches(ops[i], &r.first, e) {
            continue;
        }
        if let Some(again) = ops[i + 1..].iter().find(|op| matches(op, &r.again, e)) {
            hits.push((
                again.complete_time.unwrap_or(again.invoke_time),
                ops[i],
                again,
            ));
        }
    }
    hits.sort_by_key(|(t, _, _)| *t);
    let need = r.at_least as usize;
    let at = hits.get(need.saturating_sub(1)).map(|(t, _, _)| *t);
    let first = hits
        .first()
        .map(|(_, a, b)| {
            format!(
                "; the first: {} — sent again: {}",
                describe(a, e),
                describe(b, e)
            )
        })
        .unwrap_or_default();
    (
        at,
        format!(
            "{} of at least {need} calls sent again matched{}{first}",
            hits.len(),
            resolved(&[&r.first, &r.again], e)
        ),
    )
}

fn converge(e: &Evidence) -> Outcome {
    let recorded = crate::run_folder::Converged::read(e.run_dir).unwrap_or_default();
    let applied = recorded.applied.unwrap_or_default();
    let silent: Vec<&String> = applied
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| n)
        .collect();
    if applied.is_empty() {
        (None, "no converge answer recorded".into())
    } else if silent.is_empty() {
        (
            Some(e.history.events.last().map_or(0, |ev| ev.time)),
            format!("every node answered the converge probe ({})", applied.len()),
        )
    } else {
        (
            None,
            format!(
                "no applied index from {}",
                silent
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }
}

fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(300).collect();
    if clipped.len() < text.len() {
        format!("{clipped}…")
    } else {
        clipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;
    use serde_json::Value;
    use serde_saphyr::Spanned;

    /// A run folder as a run writes it: the workload began at 10 s of the run clock; step 0
    /// (a restart of n1 and n2) applied at 12 s, its nodes answering again at 20 s; step 1 (a
    /// pause of n3 for 5 s) applied at 25 s and undone at 30 s; step 2 never applied.
    fn run_folder(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("chaos-reached-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        let s = |secs: f64| (secs * 1e9) as u64;
        let faults = [
            json_line(s(12.0), 0, "restart", "apply", "ok", &["n1", "n2"]),
            json_line(
                s(20.0),
                0,
                "restart",
                "ready",
                "answering again after 8.0 s",
                &["n1", "n2"],
            ),
            json_line(s(25.0), 1, "pause", "apply", "ok", &["n3"]),
            json_line(s(30.0), 1, "pause", "undo", "ok", &["n3"]),
        ];
        std::fs::write(dir.join("faults.jsonl"), faults.join("\n") + "\n").unwrap();
        // Call c/1 answered ok before the restart and sent again after it (answered fail);
        // call c/2 answered ok after it and sent again (ok); a read during the pause.
        let events = [
            (s(11.0), 0, "invoke", "cas", "k1", "", "c", "1"),
            (s(11.5), 0, "ok", "cas", "k1", "", "c", "1"),
            (s(11.8), 2, "invoke", "cas", "k3", "", "d", "3"),
            (s(13.0), 2, "ok", "cas", "k3", "", "d", "3"),
            (s(21.0), 0, "invoke", "cas", "k2", "", "c", "2"),
            (s(21.5), 0, "ok", "cas", "k2", "", "c", "2"),
            (s(22.0), 0, "invoke", "resend", "k1", "", "c", "1"),
            (
                s(22.5),
                0,
                "fail",
                "resend",
                "k1",
                "KEY_ALREADY_EXISTS",
                "c",
                "1",
            ),
            (s(26.0), 1, "invoke", "read", "k1", "", "", ""),
            (s(26.5), 1, "ok", "read", "k1", "", "", ""),
            (s(31.0), 0, "invoke", "resend", "k2", "", "c", "2"),
            (s(31.5), 0, "ok", "resend", "k2", "", "c", "2"),
        ];
        let history: Vec<String> = events
            .iter()
            .enumerate()
            .map(|(i, (t, p, ty, f, k, err, client, call))| {
                let mut e = serde_json::json!({"index": i, "time": t, "process": p, "type": ty,
                    "f": f, "key": k, "value": if *f == "cas" || *f == "resend" { serde_json::json!([null, 1]) } else { Value::Null }});
                if !err.is_empty() {
                    e["error"] = serde_json::json!(err);
                }
                // Process p talks to node n(p+1).
                e["node"] = serde_json::json!(format!("n{}", p + 1));
                if !client.is_empty() {
                    e["client"] = serde_json::json!(client);
                    e["call"] = serde_json::json!(call);
                }
                e.to_string()
            })
            .collect();
        std::fs::write(dir.join("history.jsonl"), history.join("\n") + "\n").unwrap();
        std::fs::write(
            dir.join("logs/n3.log"),
            concat!(
                "[   24.000000] Installing snapshot early\n",
                "[   25.500000] CHAOS-JVM {\"rule\":\"chaos-step-1\",\"event\":\"held\",\"n\":1,\"thread\":\"apply\",\"ms\":1}\n",
                "[   29.000000] CHAOS-JVM {\"rule\":\"chaos-step-1\",\"event\":\"released\",\"n\":2,\"thread\":\"apply\",\"ms\":2,\"held_ms\":3500}\n",
                "[   33.250000] Received install snapshot notification from OM leader: om2\n",
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join(crate::run_folder::OBSERVED),
            format!(
                "{}\n{}\n",
                serde_json::json!({"name": "n3-behind", "time": s(27.0), "reached": true, "evidence": "n3 at 100, highest 500"}),
                serde_json::json!({"name": "feature", "time": s(10.5), "reached": false, "evidence": "n1's build does not define x.y"}),
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join(crate::checks::converge::FILE),
            r#"{"applied": {"n1": 500, "n2": 499, "n3": 500}}"#,
        )
        .unwrap();
        dir
    }

    fn json_line(
        time: u64,
        step: usize,
        action: &str,
        phase: &str,
        outcome: &str,
        targets: &[&str],
    ) -> String {
        serde_json::json!({"time": time, "step": step, "action": action, "phase": phase,
            "outcome": outcome, "targets": targets})
        .to_string()
    }

    fn evaluate_yaml(dir: &Path, yaml: &str) -> Vec<Reached> {
        let parsed: IndexMap<String, Spanned<Precondition>> = serde_saphyr::from_str(yaml).unwrap();
        let preconditions: Vec<(String, Precondition)> =
            parsed.into_iter().map(|(n, p)| (n, p.value)).collect();
        let history =
            checker::read_history(&dir.join("history.jsonl"), checker::Format::Jsonl).unwrap();
        let evidence = Evidence {
            run_dir: dir,
            history: &history,
            steps: StepTimes::from_faults(&crate::run_folder::read_faults(dir)),
            workload_started: 10_000_000_000,
        };
        evaluate(&preconditions, &evidence)
    }

    fn reached(results: &[Reached]) -> Vec<(&str, bool)> {
        results
            .iter()
            .map(|r| (r.name.as_str(), r.reached))
            .collect()
    }

    #[test]
    fn each_predicate_kind_on_a_recorded_run_folder() {
        let dir = run_folder("kinds");
        let results = evaluate_yaml(
            &dir,
            r#"
restarted: { step: 0 }
restarted-and-back: { step: 0, ready: true }
paused-and-undone: { step: 1, undone: true }
never-applied: { step: 2 }
install-after-the-pause: { log: { node: n3, regex: "install snapshot notification", after-step: 1 } }
install-before-anything: { log: { node: n3, regex: "^Installing", after-step: 1 } }
n3-behind: { probe: { node: n3, behind: 300 } }
feature: { config: { node: n1, key: x.y } }
read-during-the-pause: { history: { f: read, outcome: ok, during: 1 } }
read-answered-by-n2: { history: { f: read, outcome: ok, node: n2, during: 1 } }
read-answered-by-n3: { history: { f: read, outcome: ok, node: n3 } }
two-reads: { history: { f: read, at-least: 2 } }
answered-once-the-restart-applied: { history: { f: cas, answered-after-applied: 0, invoked-before: 0 } }
answered-once-the-nodes-were-back: { history: { f: cas, answered-after: 0, invoked-before: 0 } }
refused-resend: { history: { f: resend, outcome: fail, error: "ALREADY_EXISTS" } }
cache-lost: { resent: { first: { outcome: ok, answered-before: 0 }, again: { invoked-after: 0 } } }
control: { resent: { first: { outcome: ok, answered-after: 0 }, again: { outcome: ok } } }
control-twice: { resent: { first: { outcome: ok, answered-after: 0 }, again: { outcome: ok }, at-least: 2 } }
compared: { converge: {} }
held: { jvm: { step: 1, node: n3 } }
released: { jvm: { step: 1, event: released } }
held-twice: { jvm: { step: 1, event: held, at-least: 2 } }
held-elsewhere: { jvm: { step: 1, node: n1 } }
"#,
        );
        assert_eq!(
            reached(&results),
            [
                ("restarted", true),
                ("restarted-and-back", true),
                ("paused-and-undone", true),
                ("never-applied", false),
                ("install-after-the-pause", true),
                ("install-before-anything", false),
                ("n3-behind", true),
                ("feature", false),
                ("read-during-the-pause", true),
                ("read-answered-by-n2", true),
                ("read-answered-by-n3", false),
                ("two-reads", false),
                ("answered-once-the-restart-applied", true),
                ("answered-once-the-nodes-were-back", false),
                ("refused-resend", true),
                ("cache-lost", true),
                ("control", true),
                ("control-twice", false),
                ("compared", true),
                ("held", true),
                ("released", true),
                ("held-twice", false),
                ("held-elsewhere", false),
            ]
        );
        // Times count from the workload's start; the evidence says what showed it.
        let by = |name: &str| results.iter().find(|r| r.name == name).unwrap();
        assert_eq!(by("restarted-and-back").at_s, Some(10.0));
        assert_eq!(by("install-after-the-pause").at_s, Some(23.25));
        assert!(
            by("install-after-the-pause")
                .evidence
                .contains("n3 at 23.2 s"),
            "{:?}",
            by("install-after-the-pause")
        );
        assert!(by("never-applied").evidence.contains("never applied"));
        assert!(by("feature").evidence.contains("does not define x.y"));
        assert!(
            by("cache-lost").evidence.contains("sent again: resend k1"),
            "{}",
            by("cache-lost").evidence
        );
        assert!(by("two-reads").evidence.starts_with("1 of at least 2"));
        assert_eq!(by("held").at_s, Some(15.5));
        assert!(
            by("released").evidence.contains("held 3500 ms"),
            "{:?}",
            by("released")
        );
        assert!(
            by("held-twice").evidence.contains("held 1 time(s)"),
            "{:?}",
            by("held-twice")
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    /// `node: { of-step: N }` is the nodes step N's apply events name in faults.jsonl: step 0
    /// restarted n1 and n2, step 1 paused n3; step 2 never applied, step 3 applied to none.
    #[test]
    fn a_predicate_names_the_nodes_a_step_acted_on() {
        let dir = run_folder("of-step");
        let mut faults = std::fs::read_to_string(dir.join("faults.jsonl")).unwrap();
        faults.push_str(&json_line(40_000_000_000, 3, "heal", "apply", "ok", &[]));
        faults.push('\n');
        std::fs::write(dir.join("faults.jsonl"), faults).unwrap();
        let results = evaluate_yaml(
            &dir,
            r#"
read-by-a-restarted-node: { history: { f: read, node: { of-step: 0 } } }
read-by-the-paused-node: { history: { f: read, node: { of-step: 1 } } }
resent-to-a-restarted-node: { resent: { first: { outcome: ok }, again: { node: { of-step: 0 } } } }
never-applied: { history: { node: { of-step: 2 } } }
resent-never-applied: { resent: { again: { node: { of-step: 2 } } } }
applied-to-none: { history: { node: { of-step: 3 } } }
"#,
        );
        assert_eq!(
            reached(&results),
            [
                ("read-by-a-restarted-node", true),
                ("read-by-the-paused-node", false),
                ("resent-to-a-restarted-node", true),
                ("never-applied", false),
                ("resent-never-applied", false),
                ("applied-to-none", false),
            ]
        );
        let by = |name: &str| &results.iter().find(|r| r.name == name).unwrap().evidence;
        assert!(
            by("read-by-a-restarted-node").starts_with(
                "1 of at least 1 operations matched; step 0 acted on n1, n2; the first: read k1"
            ),
            "{}",
            by("read-by-a-restarted-node")
        );
        assert!(
            by("read-by-the-paused-node")
                .starts_with("0 of at least 1 operations matched; step 1 acted on n3"),
            "{}",
            by("read-by-the-paused-node")
        );
        for name in ["never-applied", "resent-never-applied"] {
            assert_eq!(
                by(name),
                "step 2 never applied, so no node is the one it acted on (node: { of-step: 2 })"
            );
        }
        assert!(by("applied-to-none").starts_with("step 3 applied to no node"));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// `log:` and `jvm:` read the logs of the nodes a step acted on: step 1 paused n3, whose
    /// log has the lines; step 0 restarted n1 and n2, which have none; step 2 never applied.
    #[test]
    fn log_and_jvm_predicates_read_the_logs_of_a_steps_nodes() {
        let dir = run_folder("of-step-logs");
        let results = evaluate_yaml(
            &dir,
            r#"
line-of-the-paused-node: { log: { regex: "install snapshot notification", node: { of-step: 1 } } }
held-on-the-paused-node: { jvm: { step: 1, event: held, node: { of-step: 1 } } }
line-of-a-restarted-node: { log: { regex: "install snapshot", node: { of-step: 0 } } }
line-of-a-step-never-applied: { log: { regex: "snapshot", node: { of-step: 2 } } }
"#,
        );
        assert_eq!(
            reached(&results),
            [
                ("line-of-the-paused-node", true),
                ("held-on-the-paused-node", true),
                ("line-of-a-restarted-node", false),
                ("line-of-a-step-never-applied", false),
            ]
        );
        let by = |name: &str| &results.iter().find(|r| r.name == name).unwrap().evidence;
        assert!(by("line-of-the-paused-node").starts_with("n3 at 23.2 s: Received install"));
        assert!(by("held-on-the-paused-node").contains("on n3"));
        assert!(
            by("line-of-a-restarted-node").starts_with(
                "no line of the logs of n1, n2 (step 0 acted on them) matched /install snapshot/"
            ),
            "{}",
            by("line-of-a-restarted-node")
        );
        assert_eq!(
            by("line-of-a-step-never-applied"),
            "step 2 never applied to a node, so no log is of a node it acted on (node: { of-step: 2 })"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_converge_answer_missing_a_node_is_not_reached() {
        let dir = run_folder("converge");
        std::fs::write(
            dir.join(crate::checks::converge::FILE),
            r#"{"applied": {"n1": 500, "n2": null}}"#,
        )
        .unwrap();
        let results = evaluate_yaml(&dir, "compared: { converge: {} }\n");
        assert!(!results[0].reached);
        assert!(results[0].evidence.contains("no applied index from n2"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
