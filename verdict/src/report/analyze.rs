//! What the report computes from a run folder: fault windows, node lifecycle, verdict sentences
//! people understand, the violation's neighbourhood, latency inside and outside faults, log
//! excerpts around faults and violations.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::load::{shown, Clock, LogLine, Op, OpStatus, RunFolder};
use super::violations::Violation;
use crate::faults::kinds::{Action, Shows};
use crate::faults::log::{fault_label, Window};
use crate::run_folder::Phase;
use regex::Regex;

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
    let faults = run.faults.iter().map(|f| f.time).max().unwrap_or(0);
    let dur = (run.result.meta.duration_s.unwrap_or(0.0) * 1e9) as u64;
    ops.max(faults).max(if ops == 0 { dur } else { 0 })
}

/// Node names from the logs, the ops and the fault targets.
pub fn nodes(run: &RunFolder) -> Vec<String> {
    let mut set: BTreeSet<String> = run.logs.iter().map(|l| l.node.clone()).collect();
    set.extend(run.ops.iter().filter_map(|o| o.node.clone()));
    for f in &run.faults {
        set.extend(f.targets.iter().filter(|t| *t != "all").cloned());
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
    // Steps whose nodes were awaited until they answered (a `ready` event): until then, their
    // nodes are "not answering".
    let awaited: BTreeSet<Option<usize>> = run
        .faults
        .iter()
        .filter(|f| f.phase == Phase::Ready)
        .map(|f| f.step)
        .collect();
    for f in &run.faults {
        let ready = f.phase == Phase::Ready;
        if !f.ok() && !ready {
            continue;
        }
        let t = f.time;
        let mut ts = f.targets.clone();
        if ts.iter().any(|x| x == "all") {
            ts = nodes.to_vec();
        }
        // The nodes a restart or a start brought back answer again.
        if ready {
            for node in ts {
                close(&mut open, &node, "not answering", t, &mut segments);
                marks.push(Mark {
                    time: t,
                    node,
                    what: "answering again",
                });
            }
            continue;
        }
        let shows = Action::named(&f.action).map_or(Shows::Nothing, |a| a.fault().shows());
        if let Shows::Clock = shows {
            let offset = f.offset.as_deref().unwrap_or("+0s");
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
        // A restart takes its nodes down from its start to its end, and they answer again only
        // at its `ready` event: both are part of the node's row.
        if let Shows::Restart = shows {
            let started = f.started.min(t);
            for node in ts {
                close(&mut open, &node, "down", started, &mut segments);
                if t > started {
                    segments.push(Segment {
                        node: node.clone(),
                        state: "restarting".into(),
                        start: started,
                        end: t,
                    });
                }
                if awaited.contains(&f.step) {
                    open.insert((node.clone(), "not answering".into()), t);
                }
                marks.push(Mark {
                    time: started,
                    node,
                    what: "restarted",
                });
            }
            continue;
        }
        let Shows::Mark {
            what,
            opens: opens_state,
            closes,
        } = shows
        else {
            continue;
        };
        for node in ts {
            for c in closes {
                close(&mut open, &node, c, t, &mut segments);
            }
            if let Some(s) = opens_state {
                opens.push((node.clone(), s.to_string(), t));
            }
            if what == "started" && awaited.contains(&f.step) {
                opens.push((node.clone(), "not answering".to_string(), t));
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
    jvm_firings(run, &mut marks, &mut open, &mut segments);
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

/// What a JVM fault's rule did, from its firings (the `CHAOS-JVM` lines of the nodes' logs):
/// a held thread is a "thread held" segment of its node's row until the release; a delay, a
/// throw and a trace mark their rule's first firing on each node (a rule may fire thousands of
/// times: the count is in the preconditions and the log).
fn jvm_firings(
    run: &RunFolder,
    marks: &mut Vec<Mark>,
    open: &mut HashMap<(String, String), u64>,
    segments: &mut Vec<Segment>,
) {
    use crate::faults::kinds::jvm::Firing;
    use crate::scenario::JvmEvent;
    const HELD: &str = "thread held";
    let mut first: BTreeSet<(String, String, &'static str)> = BTreeSet::new();
    for log in &run.logs {
        for line in &log.lines {
            let (Some(seconds), Some(firing)) = (line.time, Firing::parse(&line.text)) else {
                continue;
            };
            let t = (seconds * 1e9) as u64;
            let node = &log.node;
            let what = match firing.event {
                JvmEvent::Held => {
                    open.entry((node.clone(), HELD.into())).or_insert(t);
                    continue;
                }
                JvmEvent::Released | JvmEvent::LetGo => {
                    if let Some(start) = open.remove(&(node.clone(), HELD.into())) {
                        segments.push(Segment {
                            node: node.clone(),
                            state: HELD.into(),
                            start,
                            end: t,
                        });
                    }
                    continue;
                }
                JvmEvent::Delayed => "JVM: first delay",
                JvmEvent::Threw => "JVM: first throw",
                JvmEvent::Fired => "JVM: first trace",
            };
            if first.insert((node.clone(), firing.rule.clone(), what)) {
                marks.push(Mark {
                    time: t,
                    node: node.clone(),
                    what,
                });
            }
        }
    }
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
/// Lines of the answering node's log under a witness.
const ANSWER_LINES: usize = 9;
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

pub fn excerpts(run: &RunFolder, violations: &[Violation]) -> Vec<Excerpt> {
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
    for f in &run.faults {
        if f.phase == Phase::FinalHeal || !f.ok() {
            continue;
        }
        let time = f.time;
        let t = time as f64 / 1e9;
        let mut ts = f.targets.clone();
        if ts.is_empty() || ts.iter().any(|x| x == "all") {
            ts = run.logs.iter().map(|l| l.node.clone()).collect();
        }
        let trig = trigger_line(f.trigger.as_deref().unwrap_or(""));
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
        out.push(Excerpt {
            title: format!("{} ({})", fault_label(f), f.phase),
            time,
            kind: if trig.is_some() { "trigger" } else { "fault" },
            nodes,
        });
    }
    out.sort_by_key(|e| (e.kind != "violation", e.time));
    out
}

/// The log lines of the node that answered, around its answer: up to `ANSWER_LINES` lines
/// from a second before the call to half a second after its answer, centred on the first line
/// that names the key (those are marked), else on the answer.
pub fn answering_lines(
    run: &RunFolder,
    node: &str,
    invoked: u64,
    completed: Option<u64>,
    key: &str,
) -> (Vec<LogLine>, Vec<usize>) {
    let Some(log) = run.logs.iter().find(|l| l.node == node) else {
        return (Vec::new(), Vec::new());
    };
    let (from, to) = (
        invoked as f64 / 1e9 - 1.0,
        completed.unwrap_or(invoked) as f64 / 1e9 + 0.5,
    );
    let lo = log.lines.partition_point(|l| l.time.unwrap_or(0.0) < from);
    let hi = log.lines.partition_point(|l| l.time.unwrap_or(0.0) <= to);
    // A stack trace's frames say nothing of what the node did, and crowd out the lines that do.
    let window: Vec<&LogLine> = log.lines[lo..hi.max(lo)]
        .iter()
        .filter(|l| !is_stack_trace_line(&l.text))
        .collect();
    let names_key = key_regex(key);
    let marked: Vec<usize> = window
        .iter()
        .filter(|l| names_key.as_ref().is_some_and(|re| re.is_match(&l.text)))
        .map(|l| l.number)
        .collect();
    let centre = match marked.first() {
        Some(m) => window.iter().position(|l| l.number == *m).unwrap_or(0),
        None => window
            .partition_point(|l| l.time.unwrap_or(0.0) < completed.unwrap_or(invoked) as f64 / 1e9),
    };
    let a = centre.saturating_sub(ANSWER_LINES / 2);
    let b = (a + ANSWER_LINES).min(window.len());
    let a = b.saturating_sub(ANSWER_LINES);
    let mut lines: Vec<LogLine> = window[a..b].iter().map(|l| (*l).clone()).collect();
    for l in &mut lines {
        if l.text.chars().count() > LINE_CHARS {
            l.text = l.text.chars().take(LINE_CHARS).collect::<String>() + " …";
        }
    }
    (lines, marked)
}

/// A line of a Java stack trace: a frame (`\tat ...`), `Caused by: ...`, `... 12 more`, or the
/// bare exception line that opens one (`java.nio.channels.ClosedChannelException`).
fn is_stack_trace_line(text: &str) -> bool {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let exception = RE.get_or_init(|| {
        Regex::new(r"^([a-z_][\w$]*\.)+[\w$]*(Exception|Error|Throwable)(: .*)?$").expect("regex")
    });
    text.starts_with(char::is_whitespace)
        || text.starts_with("Caused by: ")
        || text.starts_with("... ")
        || exception.is_match(text)
}

/// A key as a whole word of a log line (`c12` is not `c123`).
fn key_regex(key: &str) -> Option<Regex> {
    if key.is_empty() {
        return None;
    }
    Regex::new(&format!(r"(^|[^\w-]){}($|[^\w-])", regex::escape(key))).ok()
}

/// The fault steps of one kind that applied: how many, on which nodes, when each began.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedKind {
    pub action: String,
    pub count: usize,
    pub targets: Vec<String>,
    /// When each began (the recorder's ns), as the scenario's `at:` counts.
    pub times: Vec<u64>,
}

/// Every fault step that applied (faults.jsonl's `apply` events that succeeded), by kind, in
/// the order the kinds first applied.
pub fn applied(run: &RunFolder) -> Vec<AppliedKind> {
    let mut out: Vec<AppliedKind> = Vec::new();
    for f in &run.faults {
        if !f.applied() {
            continue;
        }
        let action = f.action.clone();
        let t = f.started.min(f.time);
        let i = match out.iter().position(|k| k.action == action) {
            Some(i) => i,
            None => {
                out.push(AppliedKind {
                    action,
                    count: 0,
                    targets: Vec::new(),
                    times: Vec::new(),
                });
                out.len() - 1
            }
        };
        let k = &mut out[i];
        k.count += 1;
        k.times.push(t);
        for n in &f.targets {
            if !k.targets.contains(n) {
                k.targets.push(n.clone());
            }
        }
    }
    out
}

/// `reset-connections ×3 on om1, om2, om3 at 8.0, 9.0, 10.0 s; restart ×1 on om1, om2, om3 at
/// 15.0 s`.
pub fn applied_phrase(kinds: &[AppliedKind], clock: Clock) -> String {
    if kinds.is_empty() {
        return "none".into();
    }
    kinds
        .iter()
        .map(|k| {
            let mut times: Vec<String> = k
                .times
                .iter()
                .take(6)
                .map(|t| format!("{:.1}", clock.s(*t)))
                .collect();
            if k.times.len() > 6 {
                times.push(format!("… ({} more)", k.times.len() - 6));
            }
            format!(
                "{} ×{}{} at {} s",
                k.action,
                k.count,
                if k.targets.is_empty() {
                    String::new()
                } else {
                    format!(" on {}", k.targets.join(", "))
                },
                times.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `name version` pairs found near the top of the node logs (etcd-version 3.4.23, ...).
pub fn versions(run: &RunFolder) -> Vec<(String, String)> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r#"(?i)"?\b([a-z][\w-]*?[-_ ]?version)"?\s*[:=]\s*"?v?(\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?)"#)
            .expect("regex")
    });
    // Hadoop's start banner (Ozone): `STARTUP_MSG:     version = 2.2.0`.
    static BANNER: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let banner = BANNER.get_or_init(|| {
        Regex::new(r"STARTUP_MSG:\s+version\s*=\s*v?(\d+\.\d+[\w.+-]*)").expect("regex")
    });
    let system = shown(&run.result.meta.system);
    let mut found: BTreeSet<(String, String)> = BTreeSet::new();
    for log in &run.logs {
        for line in log.lines.iter().take(200) {
            if let Some(c) = banner.captures(&line.text) {
                found.insert((system.clone(), c[1].to_string()));
            }
            for c in re.captures_iter(&line.text) {
                found.insert((c[1].to_string(), c[2].to_string()));
            }
        }
    }
    found.into_iter().take(8).collect()
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::run_folder::FaultEvent;

    use std::path::PathBuf;

    /// A run folder holding only these fault events and node logs.
    fn run_of(faults: Vec<FaultEvent>, logs: Vec<super::super::load::NodeLog>) -> RunFolder {
        RunFolder {
            dir: PathBuf::new(),
            clock: Default::default(),
            result: crate::run_folder::RunResult::new(
                Default::default(),
                crate::run_folder::RunVerdict::Ok,
            ),
            scenario: String::new(),
            ops: Vec::new(),
            faults,
            logs,
            bad_lines: Vec::new(),
            unread: Vec::new(),
            shrink: None,
            incomplete: Vec::new(),
        }
    }

    /// A node's row shows each clock offset as a segment, from the skew to the restore (or to
    /// the next offset), labelled with the offset.
    #[test]
    fn clock_offsets_become_segments_of_the_node_row() {
        let event = |t: u64, action: &str, offset: &str| FaultEvent {
            offset: Some(offset.into()),
            ..FaultEvent::at(t, action.into(), Phase::Apply, "om3".into(), "ok".into())
        };
        let run = run_of(
            vec![
                event(10, "clock-skew", "+70s"),
                event(20, "clock-skew", "-30s"),
                event(30, "restore-clock", "+0s"),
            ],
            Vec::new(),
        );
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

    #[test]
    fn stack_trace_lines_are_told_from_the_nodes_own_lines() {
        for frame in [
            "\tat org.apache.hadoop.ipc_.Server$Handler.run(Server.java:2664)",
            "Caused by: org.apache.ratis.protocol.exceptions.ReadIndexException: om3: x",
            "... 12 more",
            "java.nio.channels.ClosedChannelException",
            "com.google.protobuf.ServiceException: org.apache.hadoop.ozone.om.exceptions.OMNotLeaderException: om3 is stepping down",
        ] {
            assert!(is_stack_trace_line(frame), "{frame}");
        }
        for own in [
            "2026-12-06 04:06:03,472 INFO ratis.OzoneManagerStateMachine: notifyConfigurationChanged from Ratis: term=4, index=615",
            "CHAOS-JVM {\"rule\":\"chaos-step-2\",\"event\":\"fired\"}",
            "error: monitor data filesystem reached concerning levels",
        ] {
            assert!(!is_stack_trace_line(own), "{own}");
        }
    }

    #[test]
    fn a_held_thread_is_a_segment_and_other_firings_mark_their_first() {
        let log = "[    1.000000] CHAOS-JVM {\"rule\":\"chaos-step-1\",\"event\":\"held\",\"n\":1,\"thread\":\"apply\",\"ms\":1}\n\
                   [    2.000000] CHAOS-JVM {\"rule\":\"chaos-step-2\",\"event\":\"fired\",\"n\":1,\"thread\":\"rpc\",\"ms\":2}\n\
                   [    2.500000] CHAOS-JVM {\"rule\":\"chaos-step-2\",\"event\":\"fired\",\"n\":2,\"thread\":\"rpc\",\"ms\":3}\n\
                   [    3.000000] CHAOS-JVM {\"rule\":\"chaos-step-1\",\"event\":\"released\",\"n\":2,\"thread\":\"apply\",\"ms\":4,\"held_ms\":2000}\n";
        let run = run_of(
            Vec::new(),
            vec![super::super::load::NodeLog {
                node: "om2".into(),
                lines: crate::run_folder::parse_log(log),
            }],
        );
        let (marks, segments) = lifecycle(&run, &["om2".to_string()], 10_000_000_000);
        let seen: Vec<(&str, u64, u64)> = segments
            .iter()
            .map(|s| (s.state.as_str(), s.start, s.end))
            .collect();
        assert_eq!(seen, [("thread held", 1_000_000_000, 3_000_000_000)]);
        let whats: Vec<&str> = marks.iter().map(|m| m.what).collect();
        assert_eq!(whats, ["JVM: first trace"]);
    }
}
