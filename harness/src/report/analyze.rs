//! What the report computes from a run folder: fault windows, node lifecycle, verdict sentences
//! people understand, the violation's neighbourhood, latency inside and outside faults, log
//! excerpts around faults and violations.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use regex::Regex;
use serde_json::Value;

use super::load::{show, LogLine, Op, OpStatus, RunFolder};

/// A fault from its application to its undo (or the end of the run).
#[derive(Clone, Debug)]
pub struct Window {
    pub start: u64,
    pub end: u64,
    pub action: String,
    pub label: String,
    pub targets: Vec<String>,
    pub trigger: String,
    /// Index of the apply event in faults.jsonl.
    pub event: usize,
}

/// A point in a node's life: paused, killed, restarted, cut off, healed.
#[derive(Clone, Debug)]
pub struct Mark {
    pub time: u64,
    pub node: String,
    pub what: &'static str,
}

/// How long a node spent down, paused, cut off, or with its clock moved (`clock +70s`).
#[derive(Clone, Debug)]
pub struct Segment {
    pub node: String,
    pub state: String,
    pub start: u64,
    pub end: u64,
}

/// The end of the run in ns: the last thing anything recorded.
pub fn run_end(run: &RunFolder) -> u64 {
    let ops = run
        .ops
        .iter()
        .map(|o| o.complete.unwrap_or(o.invoke))
        .max()
        .unwrap_or(0);
    let faults = run
        .faults
        .iter()
        .filter_map(|f| f["time"].as_u64())
        .max()
        .unwrap_or(0);
    let dur = (run.result["duration_s"].as_f64().unwrap_or(0.0) * 1e9) as u64;
    ops.max(faults).max(if ops == 0 { dur } else { 0 })
}

fn targets(f: &Value) -> Vec<String> {
    f["targets"]
        .as_array()
        .map(|t| t.iter().map(show).collect())
        .unwrap_or_default()
}

fn ok(f: &Value) -> bool {
    f["outcome"].as_str() == Some("ok")
}

/// Fault label: `partition isolate etcd2`, `kill etcd1`.
pub fn fault_label(f: &Value) -> String {
    let mut s = show(&f["action"]);
    for extra in [f["mode"].as_str(), f["offset"].as_str()]
        .into_iter()
        .flatten()
    {
        s.push(' ');
        s.push_str(extra);
    }
    let t = targets(f);
    if !t.is_empty() {
        s.push(' ');
        s.push_str(&t.join(", "));
    }
    s
}

const INSTANT: [&str; 5] = ["heal", "unpause", "start", "restart", "restore-clock"];

pub fn windows(run: &RunFolder, end: u64) -> Vec<Window> {
    let faults = &run.faults;
    let final_heal = faults
        .iter()
        .filter(|f| f["phase"] == "final-heal")
        .filter_map(|f| f["time"].as_u64())
        .min();
    let mut out = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        if f["phase"] != "apply" || !ok(f) {
            continue;
        }
        let action = show(&f["action"]);
        if INSTANT.contains(&action.as_str()) {
            continue;
        }
        let start = f["started"]
            .as_u64()
            .or(f["time"].as_u64())
            .unwrap_or(0)
            .min(f["time"].as_u64().unwrap_or(u64::MAX));
        let t = targets(f);
        let undo = faults[i + 1..]
            .iter()
            .find(|u| u["phase"] == "undo" && u["step"] == f["step"] && targets(u) == t)
            .and_then(|u| u["time"].as_u64());
        let healed_at_end = matches!(action.as_str(), "partition" | "pause" | "clock-skew");
        let stop = undo
            .or(if healed_at_end { final_heal } else { None })
            .unwrap_or(end)
            .max(start);
        out.push(Window {
            start,
            end: stop,
            label: fault_label(f),
            action,
            targets: t,
            trigger: show(&f["trigger"]),
            event: i,
        });
    }
    out
}

/// Node names from the logs, the ops and the fault targets.
pub fn nodes(run: &RunFolder) -> Vec<String> {
    let mut set: BTreeSet<String> = run.logs.iter().map(|l| l.node.clone()).collect();
    set.extend(run.ops.iter().filter_map(|o| o.node.clone()));
    for f in &run.faults {
        set.extend(targets(f).into_iter().filter(|t| t != "all"));
    }
    set.into_iter().collect()
}

/// Lifecycle marks and the segments they bound.
pub fn lifecycle(run: &RunFolder, nodes: &[String], end: u64) -> (Vec<Mark>, Vec<Segment>) {
    let mut marks = Vec::new();
    let mut open: HashMap<(String, String), u64> = HashMap::new();
    let mut segments = Vec::new();
    let close = |open: &mut HashMap<(String, String), u64>,
                 node: &str,
                 state: &str,
                 t: u64,
                 segs: &mut Vec<Segment>| {
        if let Some(s) = open.remove(&(node.to_string(), state.to_string())) {
            segs.push(Segment {
                node: node.to_string(),
                state: state.to_string(),
                start: s,
                end: t,
            });
        }
    };
    // The clock offset each node runs at now, as its segment's state (`clock +70s`).
    let mut clock: HashMap<String, String> = HashMap::new();
    let mut opens = Vec::new();
    for f in &run.faults {
        if !ok(f) {
            continue;
        }
        let t = f["time"].as_u64().unwrap_or(0);
        let mut ts = targets(f);
        if ts.iter().any(|x| x == "all") {
            ts = nodes.to_vec();
        }
        if matches!(f["action"].as_str(), Some("clock-skew" | "restore-clock")) {
            let offset = f["offset"].as_str().unwrap_or("+0s");
            let moved = !matches!(offset, "+0s" | "-0s" | "+0ms");
            for node in ts {
                if let Some(state) = clock.remove(&node) {
                    close(&mut open, &node, &state, t, &mut segments);
                }
                if moved {
                    let state = format!("clock {offset}");
                    open.insert((node.clone(), state.clone()), t);
                    clock.insert(node.clone(), state);
                }
                marks.push(Mark {
                    time: t,
                    node,
                    what: if moved {
                        "clock moved"
                    } else {
                        "clock restored"
                    },
                });
            }
            continue;
        }
        let (what, opens_state, closes): (&'static str, Option<&'static str>, &[&'static str]) =
            match f["action"].as_str().unwrap_or("") {
                "pause" => ("paused", Some("paused"), &[]),
                "unpause" => ("resumed", None, &["paused"]),
                "kill" => ("killed", Some("down"), &[]),
                "stop" => ("stopped", Some("down"), &[]),
                "start" => ("started", None, &["down"]),
                "restart" => ("restarted", None, &["down"]),
                "partition" => ("cut off", Some("cut off"), &[]),
                "heal" => ("healed", None, &["cut off"]),
                _ => continue,
            };
        for node in ts {
            for c in closes {
                close(&mut open, &node, c, t, &mut segments);
            }
            if let Some(s) = opens_state {
                opens.push((node.clone(), s.to_string(), t));
            }
            marks.push(Mark {
                time: t,
                node,
                what,
            });
        }
        for (node, s, t) in opens.drain(..) {
            open.entry((node, s)).or_insert(t);
        }
    }
    for ((node, state), s) in open {
        segments.push(Segment {
            node,
            state,
            start: s,
            end,
        });
    }
    segments.sort_by(|a, b| (a.start, &a.node).cmp(&(b.start, &b.node)));
    (marks, segments)
}

/// Seconds with millisecond precision: `12.345 s`.
pub fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// The value an ok write-like operation leaves in a register, if it is one.
fn written(op: &Op) -> Option<&Value> {
    if op.outcome != OpStatus::Ok {
        return None;
    }
    match op.f.as_str() {
        "write" | "w" | "put" => Some(&op.value),
        "cas" | "compare-and-set" => op.value.as_array().and_then(|a| a.get(1)),
        _ => None,
    }
}

fn is_read(op: &Op) -> bool {
    op.outcome == OpStatus::Ok && matches!(op.f.as_str(), "read" | "r" | "get")
}

/// A read that returned a value older than one acknowledged before it began.
#[derive(Clone, Debug)]
pub struct StaleRead {
    pub read: usize,
    /// The write of the value the read returned (None: the initial nil).
    pub old: Option<usize>,
    /// The later write, acknowledged before the read was invoked.
    pub newer: usize,
}

/// Finds the first stale read on a register key: read r returns v, v's write w1 completed before
/// write w2 was invoked, and w2 was acknowledged before r was invoked. With unique written values
/// no linearization can order it, so it is a witness people understand.
pub fn stale_read(ops: &[Op], key_ops: &[usize]) -> Option<StaleRead> {
    let mut writer: HashMap<String, usize> = HashMap::new();
    let mut writes: Vec<usize> = Vec::new();
    for &i in key_ops {
        if let Some(v) = written(&ops[i]) {
            writer.entry(v.to_string()).or_insert(i);
            if ops[i].complete.is_some() {
                writes.push(i);
            }
        }
    }
    writes.sort_by_key(|&i| ops[i].complete);
    // best[j]: among writes[..=j], the one invoked last.
    let mut best: Vec<usize> = Vec::with_capacity(writes.len());
    for (j, &w) in writes.iter().enumerate() {
        let b = if j == 0 || ops[w].invoke >= ops[best[j - 1]].invoke {
            w
        } else {
            best[j - 1]
        };
        best.push(b);
    }
    let mut reads: Vec<usize> = key_ops
        .iter()
        .copied()
        .filter(|&i| is_read(&ops[i]))
        .collect();
    reads.sort_by_key(|&i| ops[i].invoke);
    for r in reads {
        let read = &ops[r];
        let n = writes.partition_point(|&w| ops[w].complete.unwrap_or(u64::MAX) < read.invoke);
        if n == 0 {
            continue;
        }
        let newer = best[n - 1];
        let old = if read.output.is_null() {
            None
        } else {
            match writer.get(&read.output.to_string()) {
                Some(&w) => Some(w),
                None => continue,
            }
        };
        if old == Some(newer) {
            continue;
        }
        let old_done = old.map_or(Some(0), |w| ops[w].complete);
        if let Some(done) = old_done {
            if done < ops[newer].invoke || (old.is_none() && written(&ops[newer]).is_some()) {
                return Some(StaleRead {
                    read: r,
                    old,
                    newer,
                });
            }
        }
    }
    None
}

/// The fault that lost a write acknowledged at `acked` by `node`: the first fault on that node
/// after the acknowledgement (a later one found the write already gone), else the first fault on
/// any node after it, else the last one before it. `before`: only faults that began by then.
pub fn fault_that_lost(
    windows: &[Window],
    acked: u64,
    node: Option<&str>,
    before: Option<u64>,
) -> Option<String> {
    let after = |w: &&Window| w.start >= acked && before.is_none_or(|b| w.start <= b);
    let on_node = |w: &&Window| node.is_some_and(|n| w.targets.iter().any(|t| t == n));
    windows
        .iter()
        .filter(after)
        .find(on_node)
        .or_else(|| windows.iter().find(after))
        .or_else(|| windows.iter().rfind(|w| w.start <= acked))
        .map(|w| format!("{} at {}", w.label, secs(w.start)))
}

/// An acknowledged element a later read of the set no longer has.
#[derive(Clone, Debug)]
pub struct LostWrite {
    pub add: usize,
    pub read: usize,
    /// The last fault applied between the acknowledgement and the read.
    pub fault: Option<String>,
}

/// For set workloads: acknowledged adds missing from the last ok read of the key.
pub fn lost_writes(ops: &[Op], key_ops: &[usize], windows: &[Window]) -> Vec<LostWrite> {
    let Some(&read) = key_ops
        .iter()
        .filter(|&&i| is_read(&ops[i]) && ops[i].output.is_array())
        .max_by_key(|&&i| ops[i].invoke)
    else {
        return Vec::new();
    };
    let seen: BTreeSet<String> = ops[read]
        .output
        .as_array()
        .map(|a| a.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    key_ops
        .iter()
        .copied()
        .filter(|&i| {
            let o = &ops[i];
            o.outcome == OpStatus::Ok
                && o.f == "add"
                && o.complete.is_some_and(|c| c < ops[read].invoke)
                && !seen.contains(&o.value.to_string())
        })
        .map(|i| {
            let acked = ops[i].complete.unwrap_or(0);
            let fault = fault_that_lost(
                windows,
                acked,
                ops[i].node.as_deref(),
                Some(ops[read].invoke),
            );
            LostWrite {
                add: i,
                read,
                fault,
            }
        })
        .collect()
}

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
    /// Durability checks: lost writes as the checker lists them (value, acknowledged at,
    /// process, the fault before).
    pub lost_rows: Vec<(String, u64, String, Option<String>)>,
    /// Retry checks: the answers of one call, side by side (operation, process, time, outcome).
    pub answers: Vec<Vec<(String, String, u64, String)>>,
}

fn phrase_time(op: &Op) -> String {
    secs(op.complete.unwrap_or(op.invoke))
}

fn stale_sentence(ops: &[Op], key: &str, s: &StaleRead) -> String {
    let r = &ops[s.read];
    let newer = &ops[s.newer];
    let newer_value = written(newer).map(show).unwrap_or_default();
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
        secs(r.invoke),
        if gap >= 1000.0 { format!("{:.2} s", gap / 1000.0) } else { format!("{gap:.1} ms") },
        newer.process,
        newer.describe(),
        phrase_time(newer)
    )
}

/// Finds an op of the history by its 1-based line (how the checker names it).
fn by_line(ops: &[Op], line: Option<u64>) -> Option<usize> {
    let line = line? as usize;
    ops.binary_search_by_key(&line, |o| o.line).ok()
}

pub fn violations_and_checks(
    run: &RunFolder,
    windows: &[Window],
) -> (Vec<CheckView>, Vec<Violation>) {
    let ops = &run.ops;
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, o) in ops.iter().enumerate() {
        by_key
            .entry(o.key.clone().unwrap_or_default())
            .or_default()
            .push(i);
    }
    let mut checks = Vec::new();
    let mut violations = Vec::new();
    for (ci, check) in run.result["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = show(&check["name"]);
        let verdict = show(&check["verdict"]);
        let model = check["model"].as_str().unwrap_or("").to_string();
        let detail = &check["detail"];
        let mut sentences = Vec::new();
        for p in detail["partitions"].as_array().into_iter().flatten() {
            let Some(e) = p.get("explanation").filter(|e| e.is_object()) else {
                continue;
            };
            let key = p["key"].as_str().unwrap_or("").to_string();
            let key_ops = by_key.get(&key).cloned().unwrap_or_default();
            let anchor = format!("violation-{ci}-{}", violations.len());
            let stale = if model.contains("register") || model == "kv" {
                stale_read(ops, &key_ops)
            } else {
                None
            };
            let lost = if model == "set" {
                lost_writes(ops, &key_ops, windows)
            } else {
                Vec::new()
            };
            let bad = by_line(ops, e["op"]["line"].as_u64());
            let witness = &check["witness"];
            let sentence = if let Some(s) = &stale {
                stale_sentence(ops, &key, s)
            } else if (witness["kind"] == "double-create" || witness["kind"] == "torn-get")
                && witness["key"] == key.as_str()
            {
                // s3-object: two creates with If-None-Match: * that both succeeded, or a get
                // that returned one version's body with another's ETag.
                show(&witness["message"])
            } else if let Some(l) = lost.first() {
                let a = &ops[l.add];
                format!(
                    "{} acknowledged write{} on key {key} {} missing from the read at {} (first: {} acknowledged at {}{})",
                    lost.len(),
                    if lost.len() == 1 { "" } else { "s" },
                    if lost.len() == 1 { "is" } else { "are" },
                    secs(ops[l.read].invoke),
                    show(&a.value),
                    phrase_time(a),
                    l.fault.as_ref().map(|f| format!(", after {f}")).unwrap_or_default()
                )
            } else {
                let op = &e["op"];
                let states: Vec<String> = e["states"]
                    .as_array()
                    .map(|s| s.iter().map(show).collect())
                    .unwrap_or_default();
                let what = bad
                    .map(|b| ops[b].describe())
                    .unwrap_or_else(|| format!("{} {}", show(&op["f"]), show(&op["value"])));
                format!(
                    "on key {key}, {what} (process {}, at {}) cannot be placed in any order consistent with real time: it needs {}, but by then the state could only be {}",
                    show(&op["process"]),
                    secs(op["invoke_time"].as_u64().unwrap_or(0)),
                    show(&e["needs"]),
                    if states.is_empty() { "nothing".into() } else { states.join(" or ") }
                )
            };
            sentences.push(Sentence {
                text: sentence.clone(),
                anchor: Some(anchor.clone()),
            });
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
            violations.push(Violation {
                anchor,
                check: name.clone(),
                key,
                sentence,
                checker_message: show(&e["message"]),
                bad,
                needs: show(&e["needs"]),
                states: e["states"]
                    .as_array()
                    .map(|s| s.iter().map(show).collect())
                    .unwrap_or_default(),
                linearization,
                stale,
                lost,
                key_ops,
                lost_rows: Vec::new(),
                answers: Vec::new(),
            });
        }
        // Durability: acknowledged writes missing from the final read.
        if let Some(lost) = detail["lost"].as_array().filter(|l| !l.is_empty()) {
            let anchor = format!("violation-{ci}-{}", violations.len());
            let rows: Vec<(String, u64, String, Option<String>)> = lost
                .iter()
                .map(|l| {
                    let acked = l["op"]["complete_time"].as_u64().unwrap_or(0);
                    let fault = fault_that_lost(windows, acked, l["op"]["node"].as_str(), None);
                    (
                        format!("{} on key {}", show(&l["value"]), show(&l["key"])),
                        acked,
                        show(&l["op"]["process"]),
                        fault,
                    )
                })
                .collect();
            let first = &rows[0];
            let text = format!(
                "{} acknowledged write{} lost: {} was acknowledged at {}{}, and the final read does not have it",
                rows.len(),
                if rows.len() == 1 { " was" } else { "s were" },
                first.0,
                secs(first.1),
                first.3.as_ref().map(|f| format!(" before {f}")).unwrap_or_default()
            );
            sentences.push(Sentence {
                text: text.clone(),
                anchor: Some(anchor.clone()),
            });
            violations.push(empty_violation(
                anchor,
                &name,
                text,
                show(&check["summary"]),
                rows,
                Vec::new(),
            ));
        }
        // Retries: the same call answered differently.
        if let Some(dups) = detail["duplicates"].as_array() {
            let bad: Vec<&Value> = dups.iter().filter(|d| d["consistent"] == false).collect();
            if !bad.is_empty() {
                let anchor = format!("violation-{ci}-{}", violations.len());
                let answers: Vec<Vec<(String, String, u64, String)>> = bad
                    .iter()
                    .map(|d| {
                        d["ops"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|o| {
                                (
                                    retried_answer(o),
                                    show(&o["process"]),
                                    o["invoke_time"].as_u64().unwrap_or(0),
                                    show(&o["status"]),
                                )
                            })
                            .collect()
                    })
                    .collect();
                let d = bad[0];
                let two: Vec<String> = answers[0].iter().map(|a| a.0.clone()).collect();
                let text = format!(
                    "the call {} of client {} was retried and answered differently: {}",
                    show(&d["call"]),
                    show(&d["client"]),
                    two.join(" vs ")
                );
                sentences.push(Sentence {
                    text: text.clone(),
                    anchor: Some(anchor.clone()),
                });
                violations.push(empty_violation(
                    anchor,
                    &name,
                    text,
                    show(&check["summary"]),
                    Vec::new(),
                    answers,
                ));
            }
        }
        if sentences.is_empty() {
            let text = match verdict.as_str() {
                // Checks other than linearizability (durable, fencing, conditional-writes,
                // converge) say what held in their own summary.
                "ok" if detail["operations"].is_null() => show(&check["summary"]),
                "ok" => {
                    let keys = detail["partitions"].as_array().map_or(0, Vec::len);
                    format!(
                        "all {} operations{} can be put in one order that agrees with real time and the {} model",
                        show(&detail["operations"]),
                        if keys > 1 { format!(" on {keys} keys") } else { String::new() },
                        if model.is_empty() { "checked".into() } else { model.clone() }
                    )
                }
                "unknown" => format!("could not decide: {}", show(&check["summary"])),
                _ => show(&check["summary"]),
            };
            sentences.push(Sentence { text, anchor: None });
        }
        checks.push(CheckView {
            name,
            verdict,
            sentences,
            summary: show(&check["summary"]),
        });
    }
    (checks, violations)
}

/// One answer to a retried call: `cas [nil 9] → ok [nil 9]`, `resend [nil 9] → fail: already
/// exists (call 12 sent again)`: what came back, not just the value sent.
fn retried_answer(op: &Value) -> String {
    let answer = match op["status"].as_str() {
        Some("ok") => format!("ok {}", show(&op["output"])),
        Some(status) => match op["error"].as_str() {
            Some(error) => format!("{status}: {error}"),
            None => status.to_string(),
        },
        None => "no answer".to_string(),
    };
    format!("{} {} → {answer}", show(&op["f"]), show(&op["value"]))
}

fn empty_violation(
    anchor: String,
    check: &str,
    sentence: String,
    checker_message: String,
    lost_rows: Vec<(String, u64, String, Option<String>)>,
    answers: Vec<Vec<(String, String, u64, String)>>,
) -> Violation {
    Violation {
        anchor,
        check: check.to_string(),
        key: String::new(),
        sentence,
        checker_message,
        bad: None,
        needs: String::new(),
        states: Vec::new(),
        linearization: Vec::new(),
        stale: None,
        lost: Vec::new(),
        key_ops: Vec::new(),
        lost_rows,
        answers,
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

/// Latency percentiles per operation kind for operations invoked inside and outside faults.
pub struct LatencyRow {
    pub f: String,
    pub inside: Option<[f64; 4]>,
    pub inside_n: usize,
    pub outside: Option<[f64; 4]>,
    pub outside_n: usize,
}

fn percentiles(mut l: Vec<u64>) -> Option<[f64; 4]> {
    if l.is_empty() {
        return None;
    }
    l.sort_unstable();
    let pct = |p: f64| l[(((l.len() - 1) as f64) * p).round() as usize] as f64 / 1e6;
    Some([pct(0.5), pct(0.9), pct(0.99), pct(1.0)])
}

pub fn latency_rows(ops: &[Op], windows: &[Window]) -> Vec<LatencyRow> {
    let mut spans: Vec<(u64, u64)> = windows.iter().map(|w| (w.start, w.end)).collect();
    spans.sort_unstable();
    let inside = |t: u64| {
        let n = spans.partition_point(|s| s.0 <= t);
        spans[..n].iter().any(|s| s.1 >= t)
    };
    let mut by: BTreeMap<&str, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for o in ops {
        if o.outcome != OpStatus::Ok {
            continue;
        }
        let Some(c) = o.complete else { continue };
        let e = by.entry(o.f.as_str()).or_default();
        let l = c.saturating_sub(o.invoke);
        if inside(o.invoke) {
            e.0.push(l)
        } else {
            e.1.push(l)
        }
    }
    by.into_iter()
        .map(|(f, (i, o))| LatencyRow {
            f: f.to_string(),
            inside_n: i.len(),
            outside_n: o.len(),
            inside: percentiles(i),
            outside: percentiles(o),
        })
        .collect()
}

/// Log lines of some nodes around a moment.
pub struct Excerpt {
    pub title: String,
    pub time: u64,
    pub kind: &'static str,
    pub nodes: Vec<(String, Vec<LogLine>, Option<usize>)>,
}

const EXCERPT_LINES: usize = 14;
const LINE_CHARS: usize = 600;

fn around(
    lines: &[LogLine],
    t: f64,
    before: f64,
    after: f64,
    marked: Option<usize>,
) -> Vec<LogLine> {
    let lo = lines.partition_point(|l| l.time.unwrap_or(0.0) < t - before);
    let hi = lines.partition_point(|l| l.time.unwrap_or(0.0) <= t + after);
    let mut pick: Vec<LogLine> = if hi - lo > EXCERPT_LINES {
        // Centre on t.
        let mid = lines.partition_point(|l| l.time.unwrap_or(0.0) < t);
        let a = mid.saturating_sub(EXCERPT_LINES / 2).max(lo);
        let b = (a + EXCERPT_LINES).min(hi);
        lines[a..b].to_vec()
    } else {
        lines[lo..hi].to_vec()
    };
    if let Some(m) = marked {
        if !pick.iter().any(|l| l.number == m) {
            if let Some(l) = lines.iter().find(|l| l.number == m) {
                pick.push(l.clone());
                pick.sort_by_key(|l| l.number);
            }
        }
    }
    for l in &mut pick {
        if l.text.chars().count() > LINE_CHARS {
            l.text = l.text.chars().take(LINE_CHARS).collect::<String>() + " …";
        }
    }
    pick
}

/// The `(node: line)` a log trigger quotes, as faults.jsonl records it.
fn trigger_line(trigger: &str) -> Option<(String, String)> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^on log .*?\(([\w.-]+): (.*)\)$").expect("regex"));
    let c = re.captures(trigger)?;
    Some((c[1].to_string(), c[2].to_string()))
}

pub fn excerpts(run: &RunFolder, windows: &[Window], violations: &[Violation]) -> Vec<Excerpt> {
    let mut out = Vec::new();
    for v in violations {
        let Some(b) = v.stale.as_ref().map(|s| s.read).or(v.bad) else {
            continue;
        };
        let op = &run.ops[b];
        let t = op.invoke as f64 / 1e9;
        let span = op.complete.map_or(1.0, |c| (c - op.invoke) as f64 / 1e9) + 1.0;
        out.push(Excerpt {
            title: format!("violation on key {}: {}", v.key, op.describe()),
            time: op.invoke,
            kind: "violation",
            nodes: run
                .logs
                .iter()
                .map(|l| (l.node.clone(), around(&l.lines, t, 1.0, span, None), None))
                .filter(|(_, lines, _)| !lines.is_empty())
                .collect(),
        });
    }
    for (i, f) in run.faults.iter().enumerate() {
        if f["phase"] == "final-heal" || !ok(f) {
            continue;
        }
        let time = f["time"].as_u64().unwrap_or(0);
        let t = time as f64 / 1e9;
        let mut ts = targets(f);
        if ts.is_empty() || ts.iter().any(|x| x == "all") {
            ts = run.logs.iter().map(|l| l.node.clone()).collect();
        }
        let trig = trigger_line(f["trigger"].as_str().unwrap_or(""));
        let mut nodes = Vec::new();
        let mut order: Vec<String> = ts.clone();
        if let Some((n, _)) = &trig {
            order.retain(|x| x != n);
            order.insert(0, n.clone());
        }
        for node in order {
            let Some(log) = run.logs.iter().find(|l| l.node == node) else {
                continue;
            };
            let marked = trig
                .as_ref()
                .filter(|(n, _)| *n == node)
                .and_then(|(_, line)| {
                    log.lines
                        .iter()
                        .rfind(|l| l.time.unwrap_or(0.0) <= t + 0.001 && l.text == *line)
                        .or_else(|| log.lines.iter().find(|l| l.text == *line))
                        .map(|l| l.number)
                });
            let lines = around(&log.lines, t, 1.5, 1.5, marked);
            if !lines.is_empty() {
                nodes.push((node, lines, marked));
            }
        }
        let _ = windows;
        out.push(Excerpt {
            title: format!("{} ({})", fault_label(f), show(&f["phase"])),
            time,
            kind: if trig.is_some() { "trigger" } else { "fault" },
            nodes,
        });
        let _ = i;
    }
    out.sort_by_key(|e| (e.kind != "violation", e.time));
    out
}

/// `name version` pairs found near the top of the node logs (etcd-version 3.4.23, ...).
pub fn versions(run: &RunFolder) -> Vec<(String, String)> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r#"(?i)"?\b([a-z][\w-]*?[-_ ]?version)"?\s*[:=]\s*"?v?(\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?)"#)
            .expect("regex")
    });
    let mut found: BTreeSet<(String, String)> = BTreeSet::new();
    for log in &run.logs {
        for line in log.lines.iter().take(200) {
            for c in re.captures_iter(&line.text) {
                found.insert((c[1].to_string(), c[2].to_string()));
            }
        }
    }
    found.into_iter().take(8).collect()
}

#[cfg(test)]
mod tests {

    fn window(start: u64, label: &str, target: &str) -> Window {
        Window {
            start,
            end: start + 10,
            action: "kill".into(),
            label: label.into(),
            targets: vec![target.into()],
            trigger: String::new(),
            event: 0,
        }
    }

    /// The write's own node's first crash after the acknowledgement lost it, not the last
    /// crash of the run nor a crash of another node in between.
    #[test]
    fn a_lost_write_is_laid_on_the_first_fault_on_its_node_after_it() {
        let windows = [
            window(5_000_000_000, "kill redis1", "redis1"),
            window(20_000_000_000, "kill redis2", "redis2"),
            window(30_000_000_000, "kill redis1", "redis1"),
            window(50_000_000_000, "kill redis1", "redis1"),
        ];
        let at = |f: Option<String>| f.unwrap();
        assert_eq!(
            at(fault_that_lost(
                &windows,
                10_000_000_000,
                Some("redis1"),
                None
            )),
            "kill redis1 at 30.000 s"
        );
        // Unknown node: the first fault after it.
        assert_eq!(
            at(fault_that_lost(&windows, 10_000_000_000, None, None)),
            "kill redis2 at 20.000 s"
        );
        // No fault after it: the last one before.
        assert_eq!(
            at(fault_that_lost(
                &windows,
                60_000_000_000,
                Some("redis1"),
                None
            )),
            "kill redis1 at 50.000 s"
        );
    }

    use super::*;
    use serde_json::json;

    use std::path::PathBuf;

    /// A node's row shows each clock offset as a segment, from the skew to the restore (or to
    /// the next offset), labelled with the offset.
    #[test]
    fn clock_offsets_become_segments_of_the_node_row() {
        let event = |t: u64, action: &str, offset: &str| {
            json!({"time": t, "started": t, "action": action, "phase": "apply",
                   "targets": ["om3"], "outcome": "ok", "offset": offset})
        };
        let run = RunFolder {
            dir: PathBuf::new(),
            result: json!({}),
            scenario: String::new(),
            ops: Vec::new(),
            faults: vec![
                event(10, "clock-skew", "+70s"),
                event(20, "clock-skew", "-30s"),
                event(30, "restore-clock", "+0s"),
            ],
            logs: Vec::new(),
            bad_lines: 0,
            shrink: None,
        };
        let (marks, segments) = lifecycle(&run, &["om3".to_string()], 100);
        let seen: Vec<(String, u64, u64)> = segments
            .iter()
            .map(|s| (s.state.clone(), s.start, s.end))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("clock +70s".to_string(), 10, 20),
                ("clock -30s".to_string(), 20, 30)
            ]
        );
        assert_eq!(marks.last().unwrap().what, "clock restored");
        assert_eq!(fault_label(&run.faults[0]), "clock-skew +70s om3");
    }

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
    fn finds_the_stale_read() {
        let ops = vec![
            op(0, "write", json!(1), json!(1), 0, 10),
            op(1, "write", json!(2), json!(2), 20, 30),
            op(2, "read", Value::Null, json!(2), 35, 40),
            op(3, "read", Value::Null, json!(1), 50, 60),
        ];
        let s = stale_read(&ops, &[0, 1, 2, 3]).unwrap();
        assert_eq!((s.read, s.old, s.newer), (3, Some(0), 1));
        let text = stale_sentence(&ops, "k", &s);
        assert!(text.starts_with("a read on key k served by n1 returned 1 at 0.000 s, although 2 had been acknowledged 0.0 ms before"), "{text}");
    }

    #[test]
    fn concurrent_writes_are_not_stale() {
        let ops = vec![
            op(0, "write", json!(1), json!(1), 0, 30),
            op(1, "write", json!(2), json!(2), 20, 25),
            op(2, "read", Value::Null, json!(1), 35, 40),
        ];
        assert!(stale_read(&ops, &[0, 1, 2]).is_none());
    }
}
