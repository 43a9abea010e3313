//! From a run folder's history to its verdicts: runs the scenario's checks (each a
//! [`kind::Check`] of [`REGISTRY`], one module each) and writes result.json
//! ([`crate::run_folder::RunResult`]: verdict per check, witnesses, statistics). Reads files
//! only, so `chaos check RUN_DIR` gives the same answer later, anywhere.

pub mod converge;
pub mod durable;
pub mod evidence;
pub mod fencing;
pub mod followed;
pub mod kind;
pub mod linearizable;
pub mod reached;
pub mod retry_consistent;
pub mod staleness;
pub mod stays_up;
pub mod witness;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use checker::{Format, History, ModelKind, Status, Verdict};
use serde::Serialize;

use crate::error::{HarnessError, Result};
use crate::faults::kinds::Action;
use crate::run_folder::{
    read_faults, CheckResult, Clock, Confirmation, FaultEvent, Latency, Phase, Reached, RunMeta,
    RunResult, RunVerdict, Stats, FAULTS,
};
use crate::scenario::{self, CheckSpec};
use kind::{Check, Inputs};

/// Every check, in the order `checks:` documents them. A new check is its module's line above
/// and one line here.
pub static REGISTRY: &[&dyn Check] = &[
    &linearizable::Linearizable,
    &durable::Durable,
    &retry_consistent::RetryConsistent,
    &staleness::Staleness,
    &converge::Converge,
    &fencing::Fencing,
    &fencing::ConditionalWrites,
    &stays_up::StaysUp,
];

pub struct Checked {
    /// ok, illegal or unknown, over all checks.
    pub verdict: Verdict,
    pub exit_code: i32,
    pub result: RunResult,
}

/// Every check of `checks`, each asked of the registry; their sentences give times from the
/// workload's start (`clock`).
fn run_checks(
    history: &History,
    checks: &[CheckSpec],
    timeout: Option<Duration>,
    run_dir: Option<&Path>,
    clock: Clock,
) -> Result<Vec<CheckResult>> {
    // Where lost writes are laid on the fault that lost them, for the checks that read it.
    let reads_faults = checks
        .iter()
        .any(|c| kind::of(c).inputs().contains(&FAULTS));
    let faults = run_dir
        .filter(|_| reads_faults)
        .map(|dir| crate::faults::log::windows(&read_faults(dir), u64::MAX))
        .unwrap_or_default();
    let inputs = Inputs {
        history,
        run_dir,
        faults: &faults,
        clock,
        timeout,
    };
    let mut out = Vec::new();
    for spec in checks {
        let check = kind::of(spec);
        if run_dir.is_none() && check.needs_run_folder() {
            out.extend(check.without_run_folder()?);
            continue;
        }
        for mut result in check.run(spec, &inputs)? {
            // A run's checks must have had something to check; a history recorded elsewhere
            // is checked as it is.
            if run_dir.is_some() && check.weighs_evidence() {
                evidence::hold(&mut result, check, spec, history);
            }
            out.push(result);
        }
    }
    Ok(out)
}

fn overall(checks: &[CheckResult]) -> Verdict {
    let has = |v: Verdict| checks.iter().any(|c| c.verdict == v);
    if has(Verdict::Illegal) {
        Verdict::Illegal
    } else if has(Verdict::Unknown) {
        Verdict::Unknown
    } else {
        Verdict::Ok
    }
}

/// A run folder's history.jsonl, read as a check reads it ([`crate::run_folder::read_history`]).
fn read_run_history(run_dir: &Path) -> Result<History> {
    crate::run_folder::read_history(run_dir)
}

/// A history file recorded elsewhere: read in the format asked for (or the one `auto`
/// detects, said on stderr); a file with no event in it is an error, not an empty pass.
fn read_history_file(path: &Path, format: &str, lenient: bool) -> Result<(History, Vec<usize>)> {
    let asked: Format = format
        .parse()
        .map_err(|e: String| HarnessError::BadInput(e))?;
    let options = if lenient {
        checker::ReadOptions::lenient(asked)
    } else {
        checker::ReadOptions::strict(asked)
    };
    let read = checker::read_history_with(path, &options)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", path.display())))?;
    if asked == Format::Auto {
        eprintln!(
            "{}: read as {} (--format auto)",
            path.display(),
            read.format.name()
        );
    }
    if read.history.ops.is_empty() {
        return Err(HarnessError::BadInput(format!(
            "{}: no history event could be read as {}{}; nothing to check (formats: {})",
            path.display(),
            read.format.name(),
            if asked == Format::Auto {
                " (detected by --format auto)"
            } else {
                ""
            },
            Format::NAMES.join(", ")
        )));
    }
    Ok((read.history, read.skipped))
}

/// Checks a finished run and writes result.json.
pub fn check_run(run_dir: &Path, spec: &scenario::Scenario, meta: &RunMeta) -> Result<Checked> {
    let history = read_run_history(run_dir)?;
    let clock = run_clock(meta, &history);
    let specs: Vec<CheckSpec> = spec.checks.iter().map(|c| c.value.clone()).collect();
    let mut results = run_checks(&history, &specs, None, Some(run_dir), clock)?;
    results.extend(fault_steps_check(run_dir));
    let verdict = overall(&results);
    let confirmed = confirm(run_dir, spec, &history, meta, verdict);
    let mut result = RunResult::new(meta.clone(), verdict.into());
    result.checks = results;
    confirmed.fill(&mut result);
    result.stats = Some(statistics(&history, &read_faults(run_dir), clock));
    write_result(run_dir, &result)?;
    Ok(Checked {
        verdict,
        exit_code: confirmed.exit_code(verdict),
        result,
    })
}

/// A run stopped before its cluster started (an attached run: before anything was played on
/// it) because the build lacks what the bug needs (a `config:` precondition): nothing was
/// played or checked, so it did not test the bug (exit 2), and result.json says which keys are
/// missing.
pub fn write_not_started(
    run_dir: &Path,
    spec: &scenario::Scenario,
    meta: &RunMeta,
    lacking: &[String],
) -> Result<Checked> {
    let history = History::default();
    let mut confirmed = confirm(run_dir, spec, &history, meta, Verdict::Ok);
    confirmed.confirmation = Some(Confirmation::NotReached);
    let mut result = RunResult::new(meta.clone(), RunVerdict::Unknown);
    let when = if meta.attach.is_some() {
        "stopped before anything was played on the attached cluster"
    } else {
        "stopped before the cluster started"
    };
    result.stopped = Some(format!("{when}: {}", lacking.join("; ")));
    confirmed.fill(&mut result);
    write_result(run_dir, &result)?;
    Ok(Checked {
        verdict: Verdict::Unknown,
        exit_code: confirmed.exit_code(Verdict::Unknown),
        result,
    })
}

/// The preconditions a run reached and what its verdict then confirms.
pub struct Confirmed {
    pub reached: Vec<Reached>,
    /// None when the scenario declares no preconditions.
    pub confirmation: Option<Confirmation>,
    /// For a scenario imported from a trace: how far the run followed it.
    pub trace: Option<crate::run_folder::TraceFollowed>,
}

impl Confirmed {
    pub fn exit_code(&self, verdict: Verdict) -> i32 {
        self.confirmation
            .map_or_else(|| verdict.exit_code(), Confirmation::exit_code)
    }

    /// The confirmation's sentence, when the scenario declares preconditions.
    pub fn sentence(&self) -> Option<String> {
        let unreached: Vec<&Reached> = self.reached.iter().filter(|r| !r.reached).collect();
        self.confirmation.map(|c| c.sentence(&unreached))
    }

    /// result.json's `preconditions`, `confirmation` and its sentence.
    pub fn fill(&self, result: &mut RunResult) {
        if self.confirmation.is_some() {
            result.preconditions = Some(self.reached.clone());
            result.confirmation = self.confirmation;
            result.confirmation_sentence = self.sentence();
        }
        result.trace = self.trace.clone();
    }
}

/// Evaluates the scenario's `reached:` predicates on the run folder.
pub fn confirm(
    run_dir: &Path,
    spec: &scenario::Scenario,
    history: &History,
    meta: &RunMeta,
    verdict: Verdict,
) -> Confirmed {
    if spec.reached.is_empty() {
        return Confirmed {
            reached: Vec::new(),
            confirmation: None,
            trace: None,
        };
    }
    let preconditions: Vec<(String, scenario::Precondition)> = spec
        .reached
        .iter()
        .map(|(name, p)| (name.clone(), p.value.clone()))
        .collect();
    let evidence = reached::Evidence {
        run_dir,
        history,
        steps: reached::StepTimes::from_faults(&read_faults(run_dir)),
        workload_started: run_clock(meta, history).t0,
    };
    let reached = reached::evaluate(&preconditions, &evidence);
    let all = reached.iter().all(|r| r.reached);
    let trace = spec
        .trace
        .as_ref()
        .map(|origin| followed::followed(origin, &reached, verdict));
    Confirmed {
        confirmation: Some(Confirmation::of(verdict, all)),
        reached,
        trace,
    }
}

/// The "faults applied" check of a run folder (plan.json against faults.jsonl), if it planned
/// any fault.
fn fault_steps_check(run_dir: &Path) -> Option<CheckResult> {
    let plan = crate::run_folder::read_plan(run_dir).ok()?;
    evidence::fault_steps(&plan, &read_faults(run_dir))
}

/// result.json for a run that was not checked (interrupted, or the harness failed).
pub fn write_unchecked(
    run_dir: &Path,
    meta: &RunMeta,
    verdict: RunVerdict,
    message: &str,
) -> Result<()> {
    let mut result = RunResult::new(meta.clone(), verdict);
    result.error = Some(message.to_string());
    if let Ok(history) = read_run_history(run_dir) {
        result.stats = Some(statistics(
            &history,
            &read_faults(run_dir),
            run_clock(meta, &history),
        ));
    }
    write_result(run_dir, &result)
}

fn write_result(run_dir: &Path, result: &RunResult) -> Result<()> {
    result
        .write(run_dir)
        .map_err(|e| HarnessError::infra(e.to_string()))
}

/// A run's time base: its workload's start (`workload_started_ns` of its meta), else its first
/// operation's invocation.
fn run_clock(meta: &RunMeta, history: &History) -> Clock {
    Clock::of_meta(meta, history.ops.iter().map(|o| o.invoke_time).min())
}

/// Counts per operation kind and outcome, latency percentiles of completed operations, and
/// faults by kind; the fault windows in seconds from the workload's start (`clock`).
pub fn statistics(history: &History, faults: &[FaultEvent], clock: Clock) -> Stats {
    let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut latencies: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for op in &history.ops {
        let status = match op.status {
            Status::Ok => "ok",
            Status::Fail => "fail",
            Status::Info => "info",
        };
        *counts
            .entry(op.f.clone())
            .or_default()
            .entry(status.to_string())
            .or_default() += 1;
        if let (Status::Ok, Some(done)) = (op.status, op.complete_time) {
            latencies
                .entry(op.f.clone())
                .or_default()
                .push(done.saturating_sub(op.invoke_time));
        }
    }
    let windows = fault_windows(faults);
    let in_window = |t: u64| windows.iter().any(|(a, b)| *a <= t && t <= *b);
    let mut inside: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut outside: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for op in &history.ops {
        if let (Status::Ok, Some(done)) = (op.status, op.complete_time) {
            let side = if in_window(op.invoke_time) {
                &mut inside
            } else {
                &mut outside
            };
            side.entry(op.f.clone())
                .or_default()
                .push(done.saturating_sub(op.invoke_time));
        }
    }
    let mut fault_counts: BTreeMap<String, u64> = BTreeMap::new();
    for f in faults.iter().filter(|f| f.applied()) {
        *fault_counts.entry(f.action.clone()).or_default() += 1;
    }
    Stats {
        operations: history.ops.len(),
        ok: history
            .ops
            .iter()
            .filter(|o| o.status == Status::Ok)
            .count(),
        by_kind: counts,
        latency: percentiles(latencies),
        latency_during_faults: percentiles(inside),
        latency_outside_faults: percentiles(outside),
        fault_windows_s: windows
            .iter()
            .map(|(a, b)| [clock.s(*a), clock.s(*b)])
            .collect(),
        faults: fault_counts,
    }
}

fn percentiles(latencies: BTreeMap<String, Vec<u64>>) -> BTreeMap<String, Latency> {
    latencies
        .into_iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(f, mut l)| {
            l.sort_unstable();
            let pct = |p: f64| {
                let i = ((l.len() as f64 - 1.0) * p).round() as usize;
                l[i.min(l.len() - 1)] as f64 / 1e6
            };
            let latency = Latency {
                count: l.len(),
                p50_ms: pct(0.5),
                p90_ms: pct(0.9),
                p99_ms: pct(0.99),
                max_ms: pct(1.0),
            };
            (f, latency)
        })
        .collect()
}

/// When faults were in force: each applied step's action until its undo (or the final heal).
fn fault_windows(faults: &[FaultEvent]) -> Vec<(u64, u64)> {
    let end = crate::faults::log::final_heal_time(faults).unwrap_or(u64::MAX);
    let mut windows = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        if !f.applied() {
            continue;
        }
        let undo = faults[i + 1..]
            .iter()
            .find(|u| u.phase == Phase::Undo && u.step == f.step)
            .map(|u| u.time);
        // One-shot actions (kill, crash, restart) count until the node is back: their next
        // step event or a short grace period.
        let stop = undo.unwrap_or_else(|| {
            let ends_when_back =
                Action::named(&f.action).is_some_and(|a| a.fault().ends_when_back());
            if ends_when_back {
                f.time + 5_000_000_000
            } else {
                end
            }
        });
        windows.push((f.started, stop.min(end)));
    }
    windows
}

/// The linearizability check `--model M` asks for, with the defaults of a scenario's.
fn linearizable_check(model: &str) -> CheckSpec {
    CheckSpec::Linearizable(scenario::LinearizableSpec {
        model: serde_saphyr::Spanned::new(
            model.to_string(),
            serde_saphyr::Location::UNKNOWN,
            serde_saphyr::Location::UNKNOWN,
        ),
        timeout: None,
        min_ops: None,
    })
}

/// What `chaos check PATH` found: each check's result, the verdict over them and how many
/// operations the history held.
pub struct CheckedPath {
    pub results: Vec<CheckResult>,
    pub verdict: Verdict,
    pub operations: usize,
    /// A run folder's preconditions and confirmation.
    pub confirmed: Option<Confirmed>,
    /// The (1-based) lines that could not be read and were left out (`--lenient` only).
    pub skipped: Vec<usize>,
}

impl CheckedPath {
    pub fn exit_code(&self) -> i32 {
        self.confirmed
            .as_ref()
            .map_or_else(|| self.verdict.exit_code(), |c| c.exit_code(self.verdict))
    }
}

/// What `chaos check --json` prints: the verdict, each check's result and, for a run folder
/// with preconditions, what they confirm (as result.json words them).
#[derive(Serialize)]
struct CheckOutput<'a> {
    verdict: Verdict,
    checks: &'a [CheckResult],
    #[serde(skip_serializing_if = "Option::is_none")]
    preconditions: Option<&'a [Reached]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmation: Option<Confirmation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmation_sentence: Option<String>,
    /// The lines `--lenient` left out.
    #[serde(skip_serializing_if = "<[usize]>::is_empty")]
    skipped_lines: &'a [usize],
}

/// The lines `--lenient` left out, counted and named (the first 20).
pub fn skipped_words(skipped: &[usize]) -> String {
    const SHOWN: usize = 20;
    let named: Vec<String> = skipped.iter().take(SHOWN).map(|l| l.to_string()).collect();
    let more = if skipped.len() > SHOWN {
        format!(" and {} more", skipped.len() - SHOWN)
    } else {
        String::new()
    };
    format!(
        "{} unreadable line{} left out (--lenient): {}{more}; the verdict cannot be ok without them",
        skipped.len(),
        if skipped.len() == 1 { "" } else { "s" },
        named.join(", ")
    )
}

/// `chaos check PATH`: a run folder (its scenario's checks) or a history file with --model.
pub fn check_command(
    path: &Path,
    model: Option<&str>,
    format: &str,
    timeout: Option<Duration>,
    as_json: bool,
    lenient: bool,
) -> Result<i32> {
    let checked = check_path(path, model, format, timeout, lenient)?;
    let exit_code = checked.exit_code();
    let CheckedPath {
        results,
        verdict,
        operations,
        confirmed,
        skipped,
    } = checked;
    if !skipped.is_empty() {
        eprintln!("{}: {}", path.display(), skipped_words(&skipped));
    }
    let confirmed = confirmed.filter(|c| c.confirmation.is_some());
    if as_json {
        let out = CheckOutput {
            verdict,
            checks: &results,
            preconditions: confirmed.as_ref().map(|c| c.reached.as_slice()),
            confirmation: confirmed.as_ref().and_then(|c| c.confirmation),
            confirmation_sentence: confirmed.as_ref().and_then(Confirmed::sentence),
            skipped_lines: &skipped,
        };
        // Through a JSON value: keys in order of their names, as it always printed them.
        let out = serde_json::to_value(&out).unwrap_or_default();
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        for r in &results {
            println!("{}: {} - {}", r.name, r.verdict, r.summary);
        }
        if skipped.is_empty() {
            println!("verdict: {verdict} ({operations} operations)");
        } else {
            println!(
                "verdict: {verdict} ({operations} operations; {})",
                skipped_words(&skipped)
            );
        }
        if let Some(c) = &confirmed {
            for r in &c.reached {
                let when = r.at_s.map(|t| format!(" at {t:.1} s")).unwrap_or_default();
                let word = if r.reached { "reached" } else { "NOT reached" };
                println!("precondition {}: {word}{when} - {}", r.name, r.evidence);
            }
            println!("{}", c.sentence().unwrap_or_default());
        }
    }
    Ok(exit_code)
}

/// Reads and checks PATH, printing nothing: what `chaos check` and its fuzz test run.
pub fn check_path(
    path: &Path,
    model: Option<&str>,
    format: &str,
    timeout: Option<Duration>,
    lenient: bool,
) -> Result<CheckedPath> {
    // Arguments first: a bad --model or --format is refused before any file is read.
    if let Some(m) = model {
        m.parse::<ModelKind>().map_err(HarnessError::BadInput)?;
    }
    let mut spec = None;
    let mut skipped = Vec::new();
    let (history, checks) = if path.is_dir() {
        let history = if lenient {
            let (history, bad) = crate::run_folder::read_history_lenient(path)?;
            skipped = bad;
            history
        } else {
            read_run_history(path)?
        };
        let scenario_text = crate::run_folder::read(path, "scenario.yaml")?;
        let parsed = scenario::parse_text(&path.join("scenario.yaml"), &scenario_text)
            .map_err(|e| HarnessError::BadInput(e.to_string()))?;
        let mut checks: Vec<CheckSpec> = parsed.checks.iter().map(|c| c.value.clone()).collect();
        // --model adds a linearizability check to the scenario's own, never replaces them.
        if let Some(m) = model {
            checks.push(linearizable_check(m));
        }
        spec = Some(parsed);
        (history, checks)
    } else {
        let Some(model) = model else {
            return Err(HarnessError::BadInput(
                "a history file needs --model (register, cas-register, kv, set, s3-object)".into(),
            ));
        };
        let (history, bad) = read_history_file(path, format, lenient)?;
        skipped = bad;
        (history, vec![linearizable_check(model)])
    };
    let run_dir = path.is_dir().then_some(path);
    // A plan.json that is there must read: a broken one would drop the "faults applied" check
    // without a word.
    if let Some(dir) = run_dir {
        if std::fs::symlink_metadata(dir.join(crate::run_folder::PLAN)).is_ok() {
            crate::run_folder::read_plan(dir)?;
        }
    }
    // The workload's start (what every time said counts from) is in a run folder's
    // result.json; a history file's times count from its own zero.
    let meta = run_dir
        .and_then(|dir| RunMeta::read(dir).ok())
        .unwrap_or_default();
    let clock = match run_dir {
        Some(_) => run_clock(&meta, &history),
        None => Clock::default(),
    };
    let mut results = run_checks(&history, &checks, timeout, run_dir, clock)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", path.display())))?;
    results.extend(run_dir.and_then(fault_steps_check));
    let mut verdict = overall(&results);
    // Lines left out may hold what would make the history illegal: never a plain ok.
    if !skipped.is_empty() && verdict == Verdict::Ok {
        verdict = Verdict::Unknown;
    }
    let confirmed = match (run_dir, &spec) {
        (Some(dir), Some(spec)) => Some(confirm(dir, spec, &history, &meta, verdict)),
        _ => None,
    };
    Ok(CheckedPath {
        verdict,
        results,
        operations: history.ops.len(),
        confirmed,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> CheckSpec {
        serde_saphyr::from_str(text).unwrap()
    }

    /// A result.json that cannot be written: the error names the file and its folder, once.
    #[test]
    fn a_result_that_cannot_be_written_is_named_once() {
        let dir = std::env::temp_dir()
            .join(format!("chaos-no-result-{}", std::process::id()))
            .join("missing");
        let e = write_unchecked(&dir, &RunMeta::default(), RunVerdict::Error, "boom")
            .unwrap_err()
            .to_string();
        assert_eq!(e.matches("cannot write").count(), 1, "{e}");
        assert!(
            e.contains(&format!("cannot write result.json in {}: ", dir.display())),
            "{e}"
        );
    }

    /// A history file (no run folder) runs the checks of the history as they are, without
    /// holding their evidence; a check of the run folder's files says what it reads instead.
    #[test]
    fn a_history_file_runs_only_the_checks_of_the_history() {
        let text = r#"{"index":0,"time":1,"process":0,"type":"invoke","f":"write","key":"k","value":1}
{"index":1,"time":2,"process":0,"type":"ok","f":"write","key":"k","value":1}
"#;
        let history = checker::parse_str(text, Format::Jsonl).unwrap();
        let run = |text: &str| run_checks(&history, &[spec(text)], None, None, Clock::default());
        // One operation, fewer than min-ops: a run would say unknown, a history file passes.
        let linearizable = run("linearizable: { model: register }").unwrap();
        assert_eq!(linearizable[0].verdict, Verdict::Ok);
        assert!(linearizable[0].evidence.is_none());
        let error = run("fencing: {}").unwrap_err().to_string();
        assert!(
            error.contains("the fencing check reads a run folder's fencing.jsonl"),
            "{error}"
        );
        let error = run("conditional-writes: {}").unwrap_err().to_string();
        assert!(
            error.contains("the conditional-writes check reads a run folder's probe.json"),
            "{error}"
        );
        let stays_up = run("stays-up: {}").unwrap();
        assert_eq!(
            (stays_up[0].verdict, stays_up[0].summary.as_str()),
            (
                Verdict::Unknown,
                "stays-up reads a run folder's faults.jsonl"
            )
        );
        let converge = run("converge: {}").unwrap();
        assert_eq!(
            (converge[0].verdict, converge[0].summary.as_str()),
            (
                Verdict::Unknown,
                "converge reads a run folder's converge.json"
            )
        );
    }
}
