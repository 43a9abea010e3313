//! The run's index.html: one self-contained file (inline CSS, JS and SVG; nothing from the
//! network). Every text from the run folder goes through maud's escaping; the data the script
//! draws is embedded as JSON with every `<` escaped.

use std::collections::BTreeMap;

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::analyze::{self, AppliedKind, Excerpt, LatencyRow};
use super::data;
use super::load::{show, shown, Clock, LogLine, Op, OpStatus, RunFolder};
use super::violations::{self, short_id, CheckView, Retried, Violation};
use crate::faults::kinds::Action;
use crate::faults::log::{self as fault_log, Window};
use crate::rates::{Class, Tally};
use crate::run_folder::{Confirmation, FaultEvent, Phase};
use crate::run_folder::{ShrinkSummary, ShrunkSchedule};

pub const CSS: &str = include_str!("report.css");

pub const JS: &str = include_str!("report.js");

/// Everything computed for one page.
pub struct Model<'a> {
    pub run: &'a RunFolder,
    pub clock: Clock,
    pub end: u64,
    /// Every fault step that applied, by kind.
    pub applied: Vec<AppliedKind>,
    /// How this scenario's runs beside this one ended, if there are others.
    pub rate: Option<Tally>,
    pub windows: Vec<Window>,
    pub checks: Vec<CheckView>,
    pub violations: Vec<Violation>,
    pub latency: Vec<LatencyRow>,
    pub excerpts: Vec<Excerpt>,
    pub versions: Vec<(String, String)>,
    pub data: String,
}

pub fn model(run: &RunFolder) -> Model<'_> {
    let end = analyze::run_end(run);
    // Steps that act once and are over (a reset, a leader transfer, a snapshot) are lines on
    // the timeline, not windows until the end of the run.
    let windows: Vec<Window> = fault_log::windows(&run.faults, end)
        .into_iter()
        .filter(|w| {
            let once = Action::named(&w.action).is_some_and(|a| a.fault().over_once_applied());
            !(w.end >= end && once)
        })
        .collect();
    let nodes = analyze::nodes(run);
    let (marks, segments) = analyze::lifecycle(run, &nodes, end);
    let (checks, violations) = violations::violations_and_checks(run);
    let latency = analyze::latency_rows(&run.ops, &windows);
    let excerpts = analyze::excerpts(run, &violations);
    let versions = analyze::versions(run);
    let doc = data::document(run, &windows, &marks, &segments, &nodes, &violations, end);
    Model {
        run,
        clock: run.clock,
        end,
        applied: analyze::applied(run),
        rate: super::index::sibling_tally(&run.dir, &run.result),
        windows,
        checks,
        violations,
        latency,
        excerpts,
        versions,
        data: data::embed(&doc),
    }
}

fn verdict_words(v: &str) -> &'static str {
    match v {
        "ok" => "passed",
        "illegal" => "violation",
        "unknown" => "undecided",
        "interrupted" => "interrupted",
        "error" => "not run",
        _ => "unknown",
    }
}

/// confirmed / held / not reached / violated, not reached / undecided.
fn confirmation_badge(c: &str) -> Markup {
    let (class, words) = match c {
        "confirmed" => ("v-illegal", "confirmed"),
        "held" => ("v-ok", "held"),
        "not-reached" => ("v-unknown", "not reached"),
        "violated-unreached" => ("v-illegal", "violated, not all reached"),
        _ => ("v-unknown", "undecided"),
    };
    html! { span class={"badge " (class)} { (words) } }
}

fn badge(v: &str) -> Markup {
    html! { span class={"badge v-" (v)} { (verdict_words(v)) } }
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn render(m: &Model) -> Markup {
    let verdict = m.run.result.verdict.word();
    let meta = &m.run.result.meta;
    let scenario = shown(&meta.scenario);
    html! {
        (DOCTYPE)
        html lang="en" {
            (super::head(html! { (scenario) " seed " (shown(&meta.seed)) ": " (verdict_words(verdict)) " — chaos" }, CSS, true))
            body {
                nav {
                    span.brand { "chaos" }
                    a href="#summary" { "Summary" }
                    a href="#timeline" { "Timeline" }
                    @if !m.violations.is_empty() { a href="#violations" { "Violations" } }
                    a href="#latency" { "Latency" }
                    a href="#faults" { "Faults" }
                    @if m.run.shrink.is_some() { a href="#shrink" { "Shrunk" } }
                    a href="#logs" { "Logs" }
                    a href="#scenario" { "Scenario" }
                    a.up href="../../index.html" { "All runs" }
                }
                main {
                    (summary(m, verdict, &scenario))
                    (timeline(m))
                    @if !m.violations.is_empty() { (violations_section(m)) }
                    (latency(m))
                    (faults(m))
                    @if let Some(s) = &m.run.shrink { (shrunk(s)) }
                    (logs(m))
                    section #scenario {
                        h2 { "Scenario" }
                        pre.scenario { (m.run.scenario) }
                        p.files { "Run folder files: "
                            a href="history.jsonl" { "history.jsonl" } " · "
                            a href="faults.jsonl" { "faults.jsonl" } " · "
                            a href="result.json" { "result.json" } " · "
                            a href="plan.json" { "plan.json" } " · "
                            a href="scenario.yaml" { "scenario.yaml" } " · "
                            a href="junit.xml" { "junit.xml" }
                            @for l in &m.run.logs { " · " a href={"logs/" (l.node) ".log"} { "logs/" (l.node) ".log" } }
                        }
                    }
                }
                div #tip role="tooltip" {}
                script #chaos-data type="application/json" { (PreEscaped(&m.data)) }
                script { (PreEscaped(JS)) }
            }
        }
    }
}

/// The page's first sentence: what the run found, in words.
pub fn verdict_sentence(m: &Model) -> (String, Option<String>) {
    let r = &m.run.result;
    let verdict = r.verdict.word();
    let failing: Vec<&CheckView> = m.checks.iter().filter(|c| c.verdict != "ok").collect();
    match verdict {
        "ok" => {
            let names: Vec<&str> = m.checks.iter().map(|c| c.name.as_str()).collect();
            let what = if names.is_empty() {
                "nothing was checked".to_string()
            } else {
                format!("every check held ({})", names.join(", "))
            };
            match r.confirmation {
                Some(Confirmation::NotReached) => (
                    format!("No violation, but the run did not reach the bug's situation: {what}."),
                    None,
                ),
                _ => (format!("Passed: {what}."), None),
            }
        }
        "illegal" | "unknown" => {
            let c = failing.first();
            let first = c.and_then(|c| c.sentences.first());
            let word = if verdict == "illegal" {
                "Violation"
            } else {
                "Undecided"
            };
            match (c, first) {
                (Some(c), Some(s)) => (
                    format!("{word} — {}: {}.", c.name, capitalize(&s.text)),
                    s.anchor.clone(),
                ),
                _ => (format!("{word}."), None),
            }
        }
        _ => (
            format!(
                "Not checked: {}",
                r.error.as_deref().unwrap_or("the run did not finish")
            ),
            None,
        ),
    }
}

/// A paragraph's first sentence and the rest.
fn first_sentence(text: &str) -> (String, String) {
    let text = text.trim();
    let cut = text
        .char_indices()
        .find(|(i, c)| *c == '.' && text[i + 1..].starts_with(|n: char| n.is_whitespace()))
        .map(|(i, _)| i + 1);
    match cut {
        Some(i) => (text[..i].to_string(), text[i..].trim().to_string()),
        None => (text.to_string(), String::new()),
    }
}

fn summary(m: &Model, verdict: &str, scenario: &str) -> Markup {
    let r = &m.run.result;
    // Per operation kind, how many ended ok, failed, unknown.
    let by_kind = r.stats.as_ref().map(|s| &s.by_kind);
    let mut outcomes: BTreeMap<OpStatus, usize> = BTreeMap::new();
    for o in &m.run.ops {
        *outcomes.entry(o.outcome).or_default() += 1;
    }
    let skipped = m
        .run
        .faults
        .iter()
        .filter(|f| f.phase != Phase::Ready && !f.ok())
        .count();
    let steps = r
        .steps_applied()
        .map(|(applied, total)| format!("{applied} of {total} steps applied: "));
    // With `reached:`, what the verdict says of the bug: a pass that did not reach the bug's
    // situation is no pass (the run exited 2).
    // Nor is a verdict whose history or plan could not be read.
    let border = if r.confirmation == Some(Confirmation::NotReached) || !m.run.incomplete.is_empty()
    {
        "unknown"
    } else {
        verdict
    };
    let confirmation = r.confirmation.map(Confirmation::key);
    let (sentence, anchor) = verdict_sentence(m);
    let meta = &m.run.result.meta;
    let description = meta.description.as_deref().map(first_sentence);
    let workload_at = m.clock.t0 as f64 / 1e9;
    html! {
        section #summary class={"summary s-" (border)} {
            div.head {
                h1 { (scenario) }
                (badge(verdict))
                @if let Some(c) = confirmation {
                    " " (confirmation_badge(c))
                }
            }
            @if !m.run.incomplete.is_empty() {
                div.incomplete #incomplete {
                    p { strong { "Incomplete: " } "what the verdict rests on could not be read, so this page cannot vouch for it." }
                    ul { @for i in &m.run.incomplete { li { (i) } } }
                }
            }
            p.verdict #verdict {
                (sentence)
                @if let Some(a) = &anchor { " " a href={"#" (a)} { "see the violation →" } }
            }
            ul.checks {
                @for c in &m.checks {
                    li {
                        (badge(&c.verdict)) " "
                        strong { (c.name) } ": "
                        @if let Some(s) = c.sentences.first() {
                            span.sentence { (s.text) }
                            @if let Some(a) = &s.anchor { " " a href={"#" (a)} { "see →" } }
                        }
                        @if c.sentences.len() > 1 {
                            " " span.muted { "and " (c.sentences.len() - 1) " more like it" }
                            @if let Some(a) = c.sentences.get(1).and_then(|s| s.anchor.as_ref()) {
                                " " a href={"#" (a)} { "(table)" }
                            }
                        }
                    }
                }
                @if let Some(e) = &r.error {
                    li { (badge(verdict)) " " strong { "not checked" } ": " span.sentence { (e) } }
                }
                @if !m.run.bad_lines.is_empty() {
                    li { span.badge.v-unknown { "note" } " " (bad_lines_sentence(&m.run.bad_lines)) }
                }
                @for note in &m.run.unread {
                    li { span.badge.v-unknown { "note" } " not read: " (note) }
                }
            }
            @if confirmation.is_some() || m.rate.is_some() {
                div.confirm {
                    h3 { "Confirmation" }
                    @if let Some(sentence) = &r.confirmation_sentence { p { strong { (capitalize(sentence)) } "." } }
                    @if let Some(t) = &r.trace { p #trace { "Trace " code { (t.file) } " (" (t.format) "): " (t.sentence) "." } }
                    @if let Some(t) = &m.rate {
                        p #rate { "Over this scenario's " (t.runs) " runs in this folder: "
                            (super::index::rate_words(t, Class::of_result(r))) "." }
                    }
                    ul.checks {
                        @for p in r.preconditions.iter().flatten() {
                            li {
                                @if p.reached { span.badge.v-ok { "reached" } } @else { span.badge.v-unknown { "not reached" } }
                                " " strong { (p.name) } ": " span.sentence { (p.evidence) }
                            }
                        }
                    }
                }
            }
            div.facts {
                dl {
                    dt { "system" } dd { (shown(&meta.system))
                        @for (name, v) in &m.versions { " · " (name) " " (v) } }
                    dt { "seed" } dd { (meta.seed_words()) }
                    dt { "reproduce" } dd.repro {
                        code #repro { (shown(&meta.command)) }
                        button type="button" data-copy="repro" { "copy" }
                    }
                    dt { "started" } dd { (shown(&meta.started)) " · run id " (shown(&meta.run_id)) }
                    dt { "time base" } dd {
                        "seconds from the workload's start, as the scenario's " code { "at:" } " counts them; the cluster started "
                        (format!("{workload_at:.1} s")) " before it"
                    }
                }
                dl {
                    dt { "faults" } dd #faults-applied {
                        @if let Some(s) = &steps { (s) }
                        (analyze::applied_phrase(&m.applied, m.clock))
                        @if skipped > 0 { span.muted { " (" (skipped) " skipped)" } }
                    }
                    dt { "operations" } dd {
                        (m.run.ops.len()) ": "
                        span.o-ok { (outcomes.get(&OpStatus::Ok).copied().unwrap_or(0)) " ok" } ", "
                        span.o-fail { (outcomes.get(&OpStatus::Fail).copied().unwrap_or(0)) " failed" } ", "
                        span.o-info { (outcomes.get(&OpStatus::Info).copied().unwrap_or(0)) " unknown (info)" }
                    }
                    dt { "by kind" } dd {
                        @for (i, (f, c)) in by_kind.into_iter().flatten().enumerate() {
                            @if i > 0 { " · " }
                            @let count = |outcome: &str| c.get(outcome).copied().unwrap_or(0);
                            (f) " " (count("ok")) "/" (count("fail")) "/" (count("info"))
                        }
                        @if by_kind.is_some() { span.muted { " (ok/fail/info)" } }
                    }
                    dt { "duration" } dd { (format!("{:.1} s", meta.duration_s.unwrap_or(m.end as f64 / 1e9))) ", of which the workload and final reads " (format!("{:.1} s", m.clock.s(m.end).max(0.0))) }
                }
            }
            @if let Some((first, rest)) = &description {
                details.desc {
                    summary { (first) @if !rest.is_empty() { " " span.muted { "more…" } } }
                    @if !rest.is_empty() { p { (rest) } }
                }
            }
        }
    }
}

fn timeline(m: &Model) -> Markup {
    let keys: Vec<String> = {
        let mut k: Vec<String> = m.run.ops.iter().filter_map(|o| o.key.clone()).collect();
        k.sort();
        k.dedup();
        k
    };
    html! {
        section #timeline {
            h2 { "Timeline" }
            div.toolbar {
                label { "key " select #key-filter {
                    option value="" { "all keys" }
                    @for k in &keys { option value=(k) { (k) } }
                } }
                button type="button" data-zoom="in" { "zoom in" }
                button type="button" data-zoom="out" { "zoom out" }
                button type="button" data-zoom="reset" { "whole run" }
                span.legend {
                    i.sw.ok {} "ok " i.sw.fail {} "fail " i.sw.info {} "info (unknown) " i.sw.viol {} "violation "
                    i.sw.band {} "fault window"
                }
                span.muted.hint { "wheel: zoom · drag: pan · hover: details" }
            }
            div.chart #tl-wrap { canvas #tl {} }
            noscript { p { "The timeline needs JavaScript; the tables below do not." } }
        }
    }
}

fn latency(m: &Model) -> Markup {
    html! {
        section #latency {
            h2 { "Latency and throughput" }
            p.muted { "Each dot is an operation at its invocation, its latency on a log scale; the bands are fault windows. The charts follow the timeline's zoom." }
            div.chart #lat-wrap { canvas #lat {} }
            div.chart #thr-wrap { canvas #thr {} }
            table.num {
                thead {
                    tr { th rowspan="2" { "operation" } th colspan="5" { "inside fault windows" } th colspan="5" { "outside fault windows" } }
                    tr { @for _ in 0..2 { th { "n" } th { "p50 ms" } th { "p90 ms" } th { "p99 ms" } th { "max ms" } } }
                }
                tbody {
                    @for row in &m.latency {
                        tr {
                            td { (row.f) }
                            @for (n, p) in [(row.inside_n, row.inside), (row.outside_n, row.outside)] {
                                td { (n) }
                                @match p {
                                    Some(p) => { @for x in p { td { (ms(x)) } } }
                                    None => { td colspan="4" .muted { "—" } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What set a fault event off: its trigger, or for the events that follow a step (its undo,
/// its nodes answering again, the final heal) the step they follow.
fn trigger_words(f: &FaultEvent) -> String {
    if let Some(t) = &f.trigger {
        return t.clone();
    }
    let step = f
        .step
        .map(|s| format!("step {s}"))
        .unwrap_or_else(|| "the step".into());
    match f.phase {
        Phase::Undo => format!("end of {step}'s window"),
        Phase::Ready => format!("{step}'s nodes answering again"),
        Phase::FinalHeal => "the final phase (heal)".into(),
        Phase::Apply | Phase::Then | Phase::Effect => "—".into(),
    }
}

fn faults(m: &Model) -> Markup {
    let clock = m.clock;
    html! {
        section #faults {
            h2 { "Faults" }
            @if m.run.faults.is_empty() { p.muted { "No fault was injected." } }
            @else {
                p.muted { "Times from the workload's start; a step that takes a while (a restart) shows when it began → when it was over." }
                table #fault-table {
                    thead { tr { th { "time" } th { "step" } th { "fault" } th { "phase" } th { "trigger" } th { "outcome" } } }
                    tbody {
                        @for f in &m.run.faults {
                            @let t = f.time;
                            @let started = Some(f.started).filter(|s| *s + 500_000_000 < t);
                            tr class={ @if f.phase != Phase::Ready && !f.ok() { "skipped" } } {
                                td.num {
                                    @if let Some(s) = started { (clock.at(s)) " → " }
                                    (clock.at(t))
                                }
                                td { (f.step.map(|s| s.to_string()).unwrap_or_default()) }
                                td { (fault_log::fault_label(f)) }
                                td { (f.phase) }
                                td.trig { (trigger_words(f)) }
                                td { (f.outcome) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What `chaos shrink` found: the recorded schedule beside the smallest one that still fails,
/// and every trial it played.
fn shrunk(s: &ShrinkSummary) -> Markup {
    let steps = |v: &Option<ShrunkSchedule>| -> Vec<String> {
        v.iter()
            .flat_map(|v| &v.steps)
            .map(|x| shown(&x.describe))
            .collect()
    };
    let workload =
        |v: &Option<ShrunkSchedule>| shown(&v.as_ref().and_then(|v| v.workload_text.as_ref()));
    let (original, minimal) = (&s.original, &s.minimal);
    let trials = s.trials.as_deref().unwrap_or_default();
    html! {
        section #shrink {
            h2 { "Shrunk schedule" }
            p { (shown(&s.conclusion)) }
            table.shrink {
                thead { tr { th {} th { "recorded run" } th { "smallest that still fails" } } }
                tbody {
                    tr { th { "fault steps" } td { (steps(original).len()) } td { (steps(minimal).len()) } }
                    tr { th { "workload" } td { (workload(original)) } td { (workload(minimal)) } }
                    tr {
                        th { "schedule" }
                        td { @for line in steps(original) { div.step { (line) } } }
                        td { @for line in steps(minimal) { div.step { (line) } } }
                    }
                }
            }
            @if let Some(yaml) = &s.minimal_yaml {
                p.files { "Play it: " code { "chaos run " (crate::run_folder::shell_word(&yaml.display().to_string())) } " (" a href="shrink/minimal.yaml" { "shrink/minimal.yaml" } ")" }
            }
            details {
                summary { (trials.len()) " trials, " (shown(&s.runs_used)) " runs of a budget of " (shown(&s.budget)) }
                table {
                    thead { tr { th { "trial" } th { "candidate" } th { "steps" } th { "workload" } th { "failed" } th { "runs" } } }
                    tbody {
                        @for t in trials {
                            tr class={ @if t.failed == Some(true) { "kept" } } {
                                td.num { (shown(&t.trial)) }
                                td { (shown(&t.label)) }
                                td.num { (shown(&t.steps)) }
                                td { (shown(&t.workload)) }
                                td { (shown(&t.failures)) " of " (shown(&t.plays)) }
                                td { @for f in &t.folders { a href={"shrink/" (f) "/index.html"} { (f) } " " } }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn logs(m: &Model) -> Markup {
    html! {
        section #logs {
            h2 { "Logs around faults and violations" }
            @if m.excerpts.is_empty() { p.muted { "No node logs in this run folder." } }
            @for (i, e) in m.excerpts.iter().enumerate() {
                details.excerpt class=(e.kind) open[i < 3 || e.kind != "fault"] {
                    summary { span.t { (m.clock.at(e.time)) } " " span class={"kind k-" (e.kind)} { (e.kind) } " " (e.title) }
                    @for (node, lines, marked) in &e.nodes {
                        div.node { (node) }
                        div.log {
                            @for l in lines {
                                div class={ "ll" @if Some(l.number) == *marked { " trig" } } {
                                    span.lt { (l.time.map(|t| format!("{:.3}", m.clock.log(t))).unwrap_or_default()) }
                                    @if Some(l.number) == *marked { span.tmark { "trigger ▶" } }
                                    span.lx { (l.text) }
                                }
                            }
                        }
                    }
                    @if e.nodes.is_empty() { p.muted { "no log lines in that window" } }
                }
            }
        }
    }
}

/// The violations, by check: the first witness of each in full, then every witness in one
/// compact, sortable table ("and 83 more like it", not 84 views).
fn violations_section(m: &Model) -> Markup {
    let mut groups: Vec<(&str, Vec<&Violation>)> = Vec::new();
    for v in &m.violations {
        match groups.iter_mut().find(|(c, _)| *c == v.check) {
            Some((_, g)) => g.push(v),
            None => groups.push((&v.check, vec![v])),
        }
    }
    html! {
        section #violations {
            h2 { "Violations" }
            @for (check, group) in &groups {
                div.vgroup {
                    (violation(m, group[0]))
                    @if group.len() > 1 {
                        h4 { "And " (group.len() - 1) " more like it: every illegal key of " (check) }
                        (key_table(m, group))
                    }
                }
            }
        }
    }
}

/// Every illegal key of a check, one row each.
fn key_table(m: &Model, group: &[&Violation]) -> Markup {
    let ops = &m.run.ops;
    let clock = m.clock;
    html! {
        div.wtable {
            table.sortable.witnesses {
                thead { tr {
                    th { "key" } th { "operation" } th { "process" } th { "node" }
                    th { "invoked" } th { "needs" } th { "state could only be" } th {}
                } }
                tbody {
                    @for v in group {
                        @let bad = v.stale.as_ref().map(|s| s.read).or(v.bad);
                        tr id=(v.anchor) {
                            td { (v.key) }
                            td { @if let Some(b) = bad { (ops[b].describe()) } @else { (v.sentence) } }
                            td.num { @if let Some(b) = bad { (ops[b].process) } }
                            td { @if let Some(b) = bad { (ops[b].node.clone().unwrap_or_default()) } }
                            td.num data-v=(bad.map(|b| clock.s(ops[b].invoke)).unwrap_or(0.0)) { @if let Some(b) = bad { (clock.at(ops[b].invoke)) } }
                            td { (v.needs) }
                            td { (v.states.join(" | ")) }
                            td { @if bad.is_some() { button type="button" data-focus=(v.anchor) { "show" } } }
                        }
                    }
                }
            }
        }
    }
}

/// One answer of a retried call, as a card.
fn answer_card(m: &Model, title: &str, a: &violations::Answer) -> Markup {
    html! {
        div {
            p.muted { (title) }
            table.kv.op {
                tr { th { "answer" } td { strong { (a.words) } } }
                tr { th { "process" } td { (a.process) @if let Some(n) = &a.node { " → " (n) } } }
                tr { th { "invoked" } td { (m.clock.at(a.invoked)) } }
                tr { th { "answered" } td { (a.completed.map(|c| m.clock.at(c)).unwrap_or_else(|| "never".into())) " (" (a.status) ")" } }
                @if let Some(l) = a.line { tr { th { "history line" } td { (l) } } }
            }
        }
    }
}

/// A node's log lines around an answer, the lines that name the key marked.
fn node_log(m: &Model, node: &str, lines: &[LogLine], marked: &[usize], key: &str) -> Markup {
    html! {
        div.node { "log of " (node) @if !marked.is_empty() { span.muted { " (the lines that name key " (key) " are marked)" } } }
        div.log {
            @for l in lines {
                @let hit = marked.contains(&l.number);
                div class={ "ll" @if hit { " trig" } } {
                    span.lt { (l.time.map(|t| format!("{:.3}", m.clock.log(t))).unwrap_or_default()) }
                    @if hit { span.tmark { "key ▶" } }
                    span.lx { (l.text) }
                }
            }
        }
    }
}

/// A retry check's violation: the first call answered differently in full (both answers, and
/// the log of the node that gave the later one around it), then every such call in a table.
fn retried_view(m: &Model, v: &Violation) -> Markup {
    let first = &v.retried[0];
    let lines = first.later.node.as_deref().map(|node| {
        let (lines, marked) = analyze::answering_lines(
            m.run,
            node,
            first.later.invoked,
            first.later.completed,
            &first.key,
        );
        (node.to_string(), lines, marked)
    });
    let earlier = first.first.node.as_deref().map(|node| {
        let (lines, marked) = analyze::answering_lines(
            m.run,
            node,
            first.first.invoked,
            first.first.completed,
            &first.key,
        );
        (node.to_string(), lines, marked)
    });
    html! {
        article.violation id=(v.anchor) {
            h3 { (v.check) }
            p.sentence.big { (capitalize(&v.sentence)) }
            p.muted { "The checker: " (v.checker_message) }
            h4 { "The first witness: call " (first.call) " of client " (first.client) @if !first.key.is_empty() { ", key " (first.key) } }
            div.side {
                (answer_card(m, "answered first", &first.first))
                (answer_card(m, "answered later, to the very same call", &first.later))
            }
            @if let Some((node, lines, marked)) = &earlier {
                @if !marked.is_empty() { (node_log(m, node, lines, marked, &first.key)) }
            }
            @if let Some((node, lines, marked)) = &lines {
                @if lines.is_empty() { p.muted { "No log lines of " (node) " around the later answer." } }
                @else { (node_log(m, node, lines, marked, &first.key)) }
            }
            @if v.retried.len() > 1 {
                h4 { "And " (v.retried.len() - 1) " more like it" span.muted { " — every call answered differently (click a column to sort)" } }
            } @else {
                h4 { "The call" }
            }
            (retried_table(m, &v.retried))
        }
    }
}

fn retried_table(m: &Model, rows: &[Retried]) -> Markup {
    let clock = m.clock;
    html! {
        div.wtable {
            table.sortable.witnesses {
                thead { tr {
                    th { "call" } th { "client" } th { "key" } th { "first answer" } th { "at" }
                    th { "later answer" } th { "at" } th { "node" }
                } }
                tbody {
                    @for r in rows {
                        tr {
                            td.num { (r.call) }
                            td title=(r.client) { (short_id(&r.client)) }
                            td { (r.key) }
                            td { (r.first.words) }
                            td.num data-v=(clock.s(r.first.invoked)) { (clock.at(r.first.invoked)) }
                            td { (r.later.words) }
                            td.num data-v=(clock.s(r.later.invoked)) { (clock.at(r.later.invoked)) }
                            td { (r.later.node.clone().unwrap_or_default()) }
                        }
                    }
                }
            }
        }
    }
}

/// The violation view: the key's sub-history around the point where linearization stops, drawn
/// as an SVG (lanes per process, the linearization's order numbered, the op that cannot be placed
/// in red), then the order as a table and the needed against the possible states.
fn violation(m: &Model, v: &Violation) -> Markup {
    let ops = &m.run.ops;
    let clock = m.clock;
    if !v.retried.is_empty() {
        return retried_view(m, v);
    }
    if !v.lost_rows.is_empty() {
        return html! {
            article.violation id=(v.anchor) {
                h3 { (v.check) }
                p.sentence.big { (capitalize(&v.sentence)) }
                p.muted { "The checker: " (v.checker_message) }
                // Each lost write under the fault that lost it: the first on its node after
                // the write was acknowledged.
                div.wtable {
                    @for (fault, rows) in by_fault(&v.lost_rows) {
                        h4 { "Lost writes — " (fault) }
                        table.sortable {
                            thead { tr { th { "write" } th { "acknowledged at" } th { "process" } } }
                            tbody {
                                @for (w, t, p, _) in rows {
                                    tr { td { (w) } td.num data-v=(clock.s(*t)) { (clock.at(*t)) } td { (p) } }
                                }
                            }
                        }
                    }
                }
            }
        };
    }
    html! {
        article.violation id=(v.anchor) {
            h3 { "Key " (v.key) " — " (v.check) }
            p.sentence.big { (capitalize(&v.sentence)) }
            p.muted { "The checker: " (v.checker_message) }
            (violation_svg(clock, ops, v))
            div.cols {
                div {
                    h4 { "Cannot be placed" }
                    @if let Some(b) = v.bad {
                        (op_table(clock, &ops[b]))
                    }
                    table.kv {
                        tr { th { "needs" } td.needs { (v.needs) } }
                        tr { th { "state could only be" } td.saw { (v.states.join(" | ")) } }
                    }
                    @if let Some(s) = &v.stale {
                        h4 { "The two answers" }
                        div.side {
                            div { p.muted { "acknowledged first" } (op_table(clock, &ops[s.newer])) }
                            div { p.muted { "read later" } (op_table(clock, &ops[s.read])) }
                        }
                    }
                    @if !v.lost.is_empty() {
                        h4 { "Lost writes" }
                        table {
                            tr { th { "value" } th { "acknowledged at" } th { "process" } th { "missing from read at" } th { "fault before" } }
                            @for l in &v.lost {
                                tr {
                                    td { (show(&ops[l.add].value)) }
                                    td { (clock.at(ops[l.add].complete.unwrap_or(0))) }
                                    td { (ops[l.add].process) }
                                    td { (clock.at(ops[l.read].invoke)) }
                                    td { (l.fault.clone().unwrap_or_else(|| "none".into())) }
                                }
                            }
                        }
                    }
                }
                div {
                    h4 { "Longest partial linearization (" (v.linearization.len()) " operations, last 15)" }
                    table.lin {
                        tr { th { "#" } th { "operation" } th { "process" } th { "state after" } }
                        @let n = v.linearization.len();
                        @for (i, (idx, d, state)) in v.linearization.iter().enumerate().skip(n.saturating_sub(15)) {
                            tr {
                                td.num { (i + 1) }
                                td { (d) }
                                td { (idx.map(|i| ops[i].process.to_string()).unwrap_or_default()) }
                                td { (state) }
                            }
                        }
                        @if let Some(b) = v.bad {
                            tr.bad { td.num { "✗" } td { (ops[b].describe()) } td { (ops[b].process) } td { "needs " (v.needs) } }
                        }
                    }
                    p { button type="button" data-focus=(v.anchor) { "show on the timeline" } }
                }
            }
        }
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A label for a narrow bar: `r 136`, `w 200`, `c 185`.
fn short(op: &Op) -> String {
    let v = if op.f.starts_with('r') || op.f.starts_with('g') {
        &op.output
    } else {
        &op.value
    };
    let v = match v.as_array() {
        Some(a) => a.last().map(show).unwrap_or_default(),
        None => show(v),
    };
    format!("{} {v}", op.f.chars().next().unwrap_or('?'))
}

fn op_table(clock: Clock, op: &Op) -> Markup {
    html! {
        table.kv.op {
            tr { th { "operation" } td { strong { (op.describe()) } } }
            tr { th { "process" } td { (op.process) @if let Some(n) = &op.node { " → " (n) } } }
            tr { th { "invoked" } td { (clock.at(op.invoke)) } }
            tr { th { "completed" } td { (op.complete.map(|c| clock.at(c)).unwrap_or_else(|| "never".into())) " (" (op.outcome.as_str()) ")" } }
            tr { th { "history line" } td { (op.line) } }
        }
    }
}

fn violation_svg(clock: Clock, ops: &[Op], v: &Violation) -> Markup {
    let (chosen, start, end) = violations::neighbourhood(ops, v, 10);
    if chosen.is_empty() {
        return html! { p.muted { "The operations of this violation are not in history.jsonl." } };
    }
    let mut procs: Vec<u64> = chosen.iter().map(|&i| ops[i].process).collect();
    procs.sort_unstable();
    procs.dedup();
    let order: BTreeMap<usize, usize> = v
        .linearization
        .iter()
        .enumerate()
        .filter_map(|(n, (i, _, _))| i.map(|i| (i, n + 1)))
        .collect();
    let shown_from = v.linearization.len().saturating_sub(10) + 1;
    // Porcupine's trick: x follows the order of invocations and completions, not wall time, so
    // real-time precedence stays exact and every operation gets room for its label.
    let mut events: Vec<u64> = chosen
        .iter()
        .flat_map(|&i| [ops[i].invoke, ops[i].complete.unwrap_or(end)])
        .collect();
    events.sort_unstable();
    events.dedup();
    let (left, width, lane_h, top) = (90.0, 1000.0, 46.0, 22.0);
    let slot = width / events.len().max(1) as f64;
    let rank = |t: u64| events.partition_point(|&e| e < t) as f64;
    let x = |t: u64| left + (rank(t) + 0.5) * slot;
    let height = top + procs.len() as f64 * lane_h + 30.0;
    let lane = |p: u64| procs.binary_search(&p).unwrap_or(0) as f64;
    let witness = v.stale.as_ref().map(|s| s.newer);
    let bad = v.stale.as_ref().map(|s| s.read).or(v.bad);
    // Centres of the numbered ops, in linearization order.
    let mut path: Vec<(usize, f64, f64)> = chosen
        .iter()
        .filter_map(|&i| order.get(&i).filter(|&&n| n >= shown_from).map(|&n| (i, n)))
        .map(|(i, n)| {
            let o = &ops[i];
            let cx = (x(o.invoke) + x(o.complete.unwrap_or(end))) / 2.0;
            (n, cx, top + lane(o.process) * lane_h + 10.0)
        })
        .collect();
    path.sort_by_key(|p| p.0);
    let points: String = path
        .iter()
        .map(|(_, x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ");
    let ticks = 6.min(events.len().saturating_sub(1)).max(1);
    html! {
        div.vsvg {
            svg xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (left + width + 20.0) " " (height)} role="img" {
                title { "Sub-history of key " (v.key) " around the violation" }
                @for (i, p) in procs.iter().enumerate() {
                    @let y = top + i as f64 * lane_h;
                    rect x="0" y=(y) width=(left + width + 20.0) height=(lane_h) class={ "lane" @if i % 2 == 1 { " odd" } } {}
                    text x="8" y=(y + 33.0) class="pl" { "process " (p) }
                }
                @for t in 0..=ticks {
                    @let k = (events.len().saturating_sub(1)) * t / ticks;
                    @let xx = left + (k as f64 + 0.5) * slot;
                    line x1=(format!("{xx:.1}")) x2=(format!("{xx:.1}")) y1=(top - 6.0) y2=(height - 24.0) class="grid" {}
                    text x=(format!("{xx:.1}")) y=(height - 8.0) class="tick" text-anchor="middle" { (clock.at(events.get(k).copied().unwrap_or(start))) }
                }
                @for &i in &chosen {
                    @let o = &ops[i];
                    @let x0 = x(o.invoke);
                    @let x1 = x(o.complete.unwrap_or(end)).max(x0 + 3.0);
                    @let y = top + lane(o.process) * lane_h + 18.0;
                    @let n = order.get(&i).copied();
                    @let cls = if Some(i) == bad { "op bad" } else if Some(i) == witness { "op wit" } else if n.is_some() { "op lin" } else { "op other" };
                    g class=(cls) {
                        title { (o.describe()) " · process " (o.process) " · " (clock.at(o.invoke)) " → " (o.complete.map(|c| clock.at(c)).unwrap_or_else(|| "never".into()))
                            @if let Some(n) = n { " · linearized #" (n) } @if Some(i) == bad { " · cannot be placed" } }
                        rect x=(format!("{x0:.1}")) y=(y) width=(format!("{:.1}", x1 - x0)) height="22" rx="3" {}
                        @let label = o.describe();
                        @let fits = (x1 - x0 - 6.0) / 6.2;
                        @if fits >= label.chars().count() as f64 {
                            text x=(format!("{:.1}", x0 + 4.0)) y=(y + 15.0) class="ol" { (label) }
                        } @else if fits >= 3.0 {
                            text x=(format!("{:.1}", x0 + 3.0)) y=(y + 15.0) class="ol" { (short(o)) }
                        }
                    }
                }
                @if path.len() > 1 { polyline points=(points) class="order" {} }
                @for (n, cx, cy) in &path {
                    circle cx=(format!("{cx:.1}")) cy=(format!("{cy:.1}")) r="10" class="num" {}
                    text x=(format!("{cx:.1}")) y=(format!("{:.1}", cy + 3.0)) class="numt" text-anchor="middle" { (n) }
                }
            }
            p.legend {
                i.sw.lin {} "linearized (numbered in the checker's order, last 10) "
                i.sw.viol {} @if witness.is_some() { "the stale read " } @else { "cannot be placed " }
                @if witness.is_some() { i.sw.wit {} "the newer write, acknowledged before the read began " }
                i.sw.other {} "not linearized yet · x follows the order of events, not wall time"
            }
        }
    }
}

/// The first sentence of the first violation, for stdout and junit.
pub fn headline(checks: &[CheckView]) -> Option<String> {
    checks
        .iter()
        .find(|c| c.verdict != "ok")
        .and_then(|c| c.sentences.first())
        .map(|s| s.text.clone())
}

/// Lost-write rows grouped by the fault named for them, in the order the faults first appear.
type LostRow = (String, u64, String, Option<String>);
fn by_fault(rows: &[LostRow]) -> Vec<(String, Vec<&LostRow>)> {
    let mut groups: Vec<(String, Vec<&LostRow>)> = Vec::new();
    for row in rows {
        let fault = row
            .3
            .clone()
            .unwrap_or_else(|| "no fault before the final read".into());
        match groups.iter_mut().find(|(f, _)| *f == fault) {
            Some((_, g)) => g.push(row),
            None => groups.push((fault, vec![row])),
        }
    }
    groups
}

/// "line 5 of history.jsonl could not be read", "lines 5, 9 and 3 more ...".
pub(crate) fn bad_lines_sentence(lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().take(5).map(usize::to_string).collect();
    let more = lines.len().saturating_sub(shown.len());
    let list = if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    };
    let word = if lines.len() == 1 { "line" } else { "lines" };
    format!("{word} {list} of history.jsonl could not be read")
}
