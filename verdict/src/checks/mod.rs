//! From a run folder's history to its verdicts: runs the scenario's checks through the checker
//! library and writes result.json (verdict per check, counterexample, statistics). Reads files
//! only, so `chaos check RUN_DIR` gives the same answer later, anywhere.

pub mod converge;
pub mod evidence;
pub mod reached;
pub mod witness;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use checker::{Format, History, ModelKind, Status, Verdict};
use serde_json::{json, Value};

use crate::error::{HarnessError, Result};
use crate::faults::kinds::Action;
use crate::faults::log::Window;
use crate::run_folder::{parse_faults, read_faults, Clock, FaultEvent, Phase, FAULTS};
use crate::scenario::{self, CheckSpec};
use witness::Witness;

pub struct Checked {
    /// ok, illegal or unknown, over all checks.
    pub verdict: Verdict,
    pub exit_code: i32,
    pub result: Value,
}

/// One check's result as result.json and the reports show it.
fn linearizable(
    history: &History,
    model: ModelKind,
    timeout: Duration,
    faults: &[Window],
    clock: Clock,
) -> Result<Value> {
    let budget = checker::Budget::with_timeout(timeout);
    let result = checker::linearizable::check(history, model, &budget)
        .map_err(|e| HarnessError::BadInput(format!("history does not fit model {model}: {e}")))?;
    let witnesses = witness::linearizable(history, model, &result, faults, clock);
    // The first witness in words is the clearest summary (a stale read, two creates).
    let first_words = witnesses.first().and_then(Witness::message);
    let summary = match (result.verdict, result.explanation()) {
        (Verdict::Illegal, _) if first_words.is_some() => first_words.unwrap_or_default().into(),
        (Verdict::Illegal, Some(e)) => e.message.clone(),
        (Verdict::Illegal, None) => "not linearizable".to_string(),
        (Verdict::Unknown, _) => {
            let undecided: Vec<String> = result
                .partitions
                .iter()
                .filter(|p| p.verdict == Verdict::Unknown)
                .map(|p| p.key.clone().unwrap_or_default())
                .collect();
            format!(
                "undecided within the budget ({:?}) for key(s) {}",
                timeout,
                undecided.join(", ")
            )
        }
        (Verdict::Ok, _) => format!(
            "linearizable: {} operations, {} states explored",
            result.operations, result.states_explored
        ),
    };
    Ok(json!({
        "name": format!("linearizable ({model})"),
        "check": "linearizable",
        "model": model.name(),
        "verdict": result.verdict,
        "summary": summary,
        "witnesses": witnesses,
        "detail": result,
    }))
}

/// The `stays-up` check: illegal when faults.jsonl names a node whose program exited by
/// itself, with its exit code, the time (from the workload's start) and the last error lines of
/// its log.
pub fn stays_up(run_dir: &Path, clock: Clock) -> Value {
    let Some(text) = crate::run_folder::read_optional(run_dir, FAULTS) else {
        return json!({
            "name": "stays-up", "check": "stays-up", "verdict": "unknown",
            "summary": "stays-up: faults.jsonl is missing or unreadable",
        });
    };
    let exits: Vec<FaultEvent> = parse_faults(&text)
        .into_iter()
        .filter(|f| f.action == "exited")
        .collect();
    if exits.is_empty() {
        return json!({
            "name": "stays-up", "check": "stays-up", "verdict": "ok",
            "summary": "every node the faults did not take down was still running when they ended",
            "detail": {"exits": []},
        });
    }
    let sentences: Vec<String> = exits
        .iter()
        .map(|f| {
            let detail = f.detail.clone().unwrap_or_default();
            // The line that says it is going down, else the last error.
            let errors: Vec<String> = detail["last_errors"]
                .as_array()
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .map(|l| rebase_log_line(l, clock))
                        .collect()
                })
                .unwrap_or_default();
            let why = match errors.iter().position(|l| l.contains("Terminating")) {
                // The Terminating line and the exception after it.
                Some(i) => errors[i..errors.len().min(i + 2)].join(" "),
                None => errors.last().cloned().unwrap_or_default(),
            };
            format!(
                "{} exited by itself at {} (exit code {}): {}",
                f.targets.first().map_or("?", String::as_str),
                clock.at(f.time),
                detail["exit_code"],
                why.trim()
            )
        })
        .collect();
    json!({
        "name": "stays-up", "check": "stays-up", "verdict": "illegal",
        "summary": sentences.join("; "),
        "detail": {"exits": exits},
    })
}

/// A node's log line as a sentence quotes it: its `[  147.328473] ` prefix (seconds since the
/// run began) as seconds from the workload's start, `[24.528] `; a line without it as it is.
fn rebase_log_line(line: &str, clock: Clock) -> String {
    match crate::run_folder::parse_log(line).first() {
        Some(crate::run_folder::LogLine {
            time: Some(t),
            text,
            ..
        }) => format!("[{:.3}] {text}", clock.log(*t)),
        _ => line.to_string(),
    }
}

/// Every check of `checks`; their sentences give times from the workload's start (`clock`).
fn run_checks(
    history: &History,
    checks: &[CheckSpec],
    timeout: Option<Duration>,
    run_dir: Option<&Path>,
    clock: Clock,
) -> Result<Vec<Value>> {
    // Where lost writes are laid on the fault that lost them.
    let faults = run_dir
        .map(|dir| crate::faults::log::windows(&read_faults(dir), u64::MAX))
        .unwrap_or_default();
    let mut out = Vec::new();
    for check in checks {
        match check {
            CheckSpec::Fencing(_) => match run_dir {
                Some(dir) => out.extend(crate::workloads::fencing::check(dir, clock)),
                None => {
                    return Err(HarnessError::BadInput(
                        "the fencing check reads a run folder's fencing.jsonl".into(),
                    ))
                }
            },
            CheckSpec::ConditionalWrites(_) => match run_dir {
                Some(dir) => out.push(crate::workloads::fencing::check_probe(dir)),
                None => {
                    return Err(HarnessError::BadInput(
                        "the conditional-writes check reads a run folder's probe.json".into(),
                    ))
                }
            },
            CheckSpec::StaysUp(_) => out.push(match run_dir {
                Some(dir) => stays_up(dir, clock),
                None => json!({
                    "name": "stays-up", "check": "stays-up", "verdict": "unknown",
                    "summary": "stays-up reads a run folder's faults.jsonl",
                }),
            }),
            CheckSpec::Converge(c) => out.push(match run_dir {
                Some(dir) => crate::checks::converge::check(dir, c),
                None => crate::checks::converge::needs_run_folder(),
            }),
            other => {
                let mut result = run_check(history, other, timeout, &faults, clock)?;
                // A run's checks must have had something to check; a history recorded
                // elsewhere is checked as it is.
                if run_dir.is_some() {
                    crate::checks::evidence::hold(&mut result, other, history);
                }
                out.push(result);
            }
        }
    }
    Ok(out)
}

fn run_check(
    history: &History,
    check: &CheckSpec,
    timeout: Option<Duration>,
    faults: &[Window],
    clock: Clock,
) -> Result<Value> {
    match check {
        CheckSpec::Linearizable(spec) => {
            let model: ModelKind = spec.model.value.parse().map_err(HarnessError::BadInput)?;
            // --timeout of `chaos check` first, then the scenario's budget.
            let t = timeout
                .or(spec.timeout.map(|d| d.0))
                .unwrap_or(Duration::from_secs(60));
            linearizable(history, model, t, faults, clock)
        }
        CheckSpec::Durable(_) => {
            let result = checker::durable::check(history);
            Ok(json!({
                "name": "durable",
                "check": "durable",
                "verdict": result.verdict,
                "summary": result.text(),
                "witnesses": witness::durable(history, &result, faults, clock),
                "detail": result,
            }))
        }
        CheckSpec::Staleness(spec) => {
            let bound = u64::try_from(spec.at_most.0.as_nanos()).unwrap_or(u64::MAX);
            let result = checker::stale::staleness(history, bound);
            Ok(json!({
                "name": "staleness",
                "check": "staleness",
                "verdict": result.verdict,
                "summary": result.text(),
                "detail": result,
            }))
        }
        CheckSpec::RetryConsistent(_) => {
            let result = checker::retry::check(history);
            Ok(json!({
                "name": "retry-consistent",
                "check": "retry-consistent",
                "verdict": result.verdict,
                "summary": result.text(),
                "detail": result,
            }))
        }
        CheckSpec::Fencing(_)
        | CheckSpec::ConditionalWrites(_)
        | CheckSpec::Converge(_)
        | CheckSpec::StaysUp(_) => Err(HarnessError::BadInput(
            "this check reads files of a run folder".into(),
        )),
    }
}

fn overall(checks: &[Value]) -> Verdict {
    let verdicts: Vec<&str> = checks
        .iter()
        .filter_map(|c| c["verdict"].as_str())
        .collect();
    if verdicts.contains(&"illegal") {
        Verdict::Illegal
    } else if verdicts.contains(&"unknown") {
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
fn read_history_file(path: &Path, format: &str) -> Result<History> {
    let asked: Format = format
        .parse()
        .map_err(|e: String| HarnessError::BadInput(e))?;
    let read = checker::read_history_with(path, &checker::ReadOptions::strict(asked))
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
    Ok(read.history)
}

/// Checks a finished run and writes result.json.
pub fn check_run(run_dir: &Path, spec: &scenario::Scenario, meta: &Value) -> Result<Checked> {
    let history = read_run_history(run_dir)?;
    let clock = run_clock(meta, &history);
    let specs: Vec<CheckSpec> = spec.checks.iter().map(|c| c.value.clone()).collect();
    let mut results = run_checks(&history, &specs, None, Some(run_dir), clock)?;
    results.extend(fault_steps_check(run_dir));
    let verdict = overall(&results);
    let confirmed = confirm(run_dir, spec, &history, meta, verdict);
    let mut result = meta.clone();
    result["verdict"] = json!(verdict);
    result["checks"] = json!(results);
    confirmed.write_into(&mut result);
    result["stats"] = statistics(&history, &read_faults(run_dir), clock);
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
    meta: &Value,
    lacking: &[String],
) -> Result<Checked> {
    let history = History::default();
    let mut confirmed = confirm(run_dir, spec, &history, meta, Verdict::Ok);
    confirmed.confirmation = Some(reached::Confirmation::NotReached);
    let mut result = meta.clone();
    result["verdict"] = json!(Verdict::Unknown);
    result["checks"] = json!([]);
    let when = if meta["attach"].is_object() {
        "stopped before anything was played on the attached cluster"
    } else {
        "stopped before the cluster started"
    };
    result["stopped"] = json!(format!("{when}: {}", lacking.join("; ")));
    confirmed.write_into(&mut result);
    write_result(run_dir, &result)?;
    Ok(Checked {
        verdict: Verdict::Unknown,
        exit_code: confirmed.exit_code(Verdict::Unknown),
        result,
    })
}

/// The preconditions a run reached and what its verdict then confirms.
pub struct Confirmed {
    pub reached: Vec<reached::Reached>,
    /// None when the scenario declares no preconditions.
    pub confirmation: Option<reached::Confirmation>,
}

impl Confirmed {
    pub fn exit_code(&self, verdict: Verdict) -> i32 {
        self.confirmation
            .map_or_else(|| verdict.exit_code(), reached::Confirmation::exit_code)
    }

    /// result.json's `preconditions`, `confirmation` and its sentence.
    pub fn write_into(&self, result: &mut Value) {
        let Some(confirmation) = self.confirmation else {
            return;
        };
        let unreached: Vec<&reached::Reached> =
            self.reached.iter().filter(|r| !r.reached).collect();
        result["preconditions"] = json!(self.reached);
        result["confirmation"] = json!(confirmation);
        result["confirmation_sentence"] = json!(confirmation.sentence(&unreached));
    }
}

/// Evaluates the scenario's `reached:` predicates on the run folder.
pub fn confirm(
    run_dir: &Path,
    spec: &scenario::Scenario,
    history: &History,
    meta: &Value,
    verdict: Verdict,
) -> Confirmed {
    if spec.reached.is_empty() {
        return Confirmed {
            reached: Vec::new(),
            confirmation: None,
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
    Confirmed {
        confirmation: Some(reached::Confirmation::of(verdict, all)),
        reached,
    }
}

/// The "faults applied" check of a run folder (plan.json against faults.jsonl), if it planned
/// any fault.
fn fault_steps_check(run_dir: &Path) -> Option<Value> {
    let plan = crate::run_folder::read_plan(run_dir).ok()?;
    crate::checks::evidence::fault_steps(&plan, &read_faults(run_dir))
}

/// result.json for a run that was not checked (interrupted, or the harness failed).
pub fn write_unchecked(run_dir: &Path, meta: &Value, verdict: &str, message: &str) -> Result<()> {
    let mut result = meta.clone();
    result["verdict"] = json!(verdict);
    result["error"] = json!(message);
    result["checks"] = json!([]);
    if let Ok(history) = read_run_history(run_dir) {
        result["stats"] = statistics(&history, &read_faults(run_dir), run_clock(meta, &history));
    }
    write_result(run_dir, &result)
}

fn write_result(run_dir: &Path, result: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(result).unwrap_or_default();
    std::fs::write(run_dir.join("result.json"), text)
        .map_err(|e| HarnessError::infra(format!("cannot write result.json: {e}")))
}

/// A run's time base: its workload's start (`workload_started_ns` of its meta or result.json),
/// else its first operation's invocation.
fn run_clock(meta: &Value, history: &History) -> Clock {
    Clock::of_run(meta, history.ops.iter().map(|o| o.invoke_time).min())
}

/// Counts per operation kind and outcome, latency percentiles of completed operations, and
/// faults by kind; the fault windows in seconds from the workload's start (`clock`).
pub fn statistics(history: &History, faults: &[FaultEvent], clock: Clock) -> Value {
    let mut counts: BTreeMap<String, BTreeMap<&str, u64>> = BTreeMap::new();
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
            .entry(status)
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
    let latency = percentiles(latencies);
    let mut fault_counts: BTreeMap<String, u64> = BTreeMap::new();
    for f in faults.iter().filter(|f| f.applied()) {
        *fault_counts.entry(f.action.clone()).or_default() += 1;
    }
    let completed = history
        .ops
        .iter()
        .filter(|o| o.status == Status::Ok)
        .count();
    json!({
        "operations": history.ops.len(),
        "ok": completed,
        "by_kind": counts,
        "latency": latency,
        // Operations invoked while a fault was in force (apply to undo) against the rest.
        "latency_during_faults": percentiles(inside),
        "latency_outside_faults": percentiles(outside),
        "fault_windows_s": windows.iter().map(|(a, b)| [clock.s(*a), clock.s(*b)]).collect::<Vec<_>>(),
        "faults": fault_counts,
    })
}

fn percentiles(latencies: BTreeMap<String, Vec<u64>>) -> BTreeMap<String, Value> {
    latencies
        .into_iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(f, mut l)| {
            l.sort_unstable();
            let pct = |p: f64| {
                let i = ((l.len() as f64 - 1.0) * p).round() as usize;
                l[i.min(l.len() - 1)] as f64 / 1e6
            };
            (
                f,
                json!({"count": l.len(), "p50_ms": pct(0.5), "p90_ms": pct(0.9), "p99_ms": pct(0.99), "max_ms": pct(1.0)}),
            )
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
    pub results: Vec<Value>,
    pub verdict: Verdict,
    pub operations: usize,
    /// A run folder's preconditions and confirmation.
    pub confirmed: Option<Confirmed>,
}

impl CheckedPath {
    pub fn exit_code(&self) -> i32 {
        self.confirmed
            .as_ref()
            .map_or_else(|| self.verdict.exit_code(), |c| c.exit_code(self.verdict))
    }
}

/// `chaos check PATH`: a run folder (its scenario's checks) or a history file with --model.
pub fn check_command(
    path: &Path,
    model: Option<&str>,
    format: &str,
    timeout: Option<Duration>,
    as_json: bool,
) -> Result<i32> {
    let checked = check_path(path, model, format, timeout)?;
    let exit_code = checked.exit_code();
    let CheckedPath {
        results,
        verdict,
        operations,
        confirmed,
    } = checked;
    if as_json {
        let mut out = json!({"verdict": verdict, "checks": results});
        if let Some(c) = &confirmed {
            c.write_into(&mut out);
        }
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        for r in &results {
            println!(
                "{}: {} - {}",
                r["name"].as_str().unwrap_or_default(),
                r["verdict"].as_str().unwrap_or_default(),
                r["summary"].as_str().unwrap_or_default()
            );
        }
        println!("verdict: {verdict} ({operations} operations)");
        if let Some(c) = confirmed.as_ref().filter(|c| c.confirmation.is_some()) {
            for r in &c.reached {
                let when = r.at_s.map(|t| format!(" at {t:.1} s")).unwrap_or_default();
                let word = if r.reached { "reached" } else { "NOT reached" };
                println!("precondition {}: {word}{when} - {}", r.name, r.evidence);
            }
            let mut shown = json!({});
            c.write_into(&mut shown);
            println!(
                "{}",
                shown["confirmation_sentence"].as_str().unwrap_or_default()
            );
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
) -> Result<CheckedPath> {
    // Arguments first: a bad --model or --format is refused before any file is read.
    if let Some(m) = model {
        m.parse::<ModelKind>().map_err(HarnessError::BadInput)?;
    }
    let mut spec = None;
    let (history, checks) = if path.is_dir() {
        let history = read_run_history(path)?;
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
        (
            read_history_file(path, format)?,
            vec![linearizable_check(model)],
        )
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
        .and_then(|dir| crate::run_folder::read_object(dir, "result.json").ok())
        .unwrap_or_default();
    let clock = match run_dir {
        Some(_) => run_clock(&meta, &history),
        None => Clock::default(),
    };
    let mut results = run_checks(&history, &checks, timeout, run_dir, clock)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", path.display())))?;
    results.extend(run_dir.and_then(fault_steps_check));
    let verdict = overall(&results);
    let confirmed = match (run_dir, &spec) {
        (Some(dir), Some(spec)) => Some(confirm(dir, spec, &history, &meta, verdict)),
        _ => None,
    };
    Ok(CheckedPath {
        verdict,
        results,
        operations: history.ops.len(),
        confirmed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `exited` event in faults.jsonl fails stays-up with the node, the time (from the
    /// workload's start), the exit code and the log's last error line; without one the check
    /// passes.
    #[test]
    fn stays_up_names_the_node_that_exited_by_itself() {
        let dir = std::env::temp_dir().join(format!("chaos-stays-up-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pause = r#"{"time":1000000000,"action":"pause","phase":"apply","targets":["om2"],"outcome":"ok"}"#;
        std::fs::write(dir.join("faults.jsonl"), format!("{pause}\n")).unwrap();
        // The workload began 122.8 s into the run (the cluster's start before it).
        let clock = Clock {
            t0: 122_800_000_000,
        };
        assert_eq!(stays_up(&dir, clock)["verdict"], "ok");
        let exited = r#"{"time":129930000000,"action":"exited","phase":"effect","targets":["om3"],"outcome":"exited by itself (exit code 2)","detail":{"exit_code":2,"last_errors":["[  129.328473] ERROR ratis.OzoneManagerDoubleBuffer: Terminating with exit status 2"]}}"#;
        std::fs::write(dir.join("faults.jsonl"), format!("{pause}\n{exited}\n")).unwrap();
        let result = stays_up(&dir, clock);
        assert_eq!(result["verdict"], "illegal");
        assert_eq!(
            result["summary"],
            "om3 exited by itself at 7.130 s (exit code 2): [6.528] ERROR ratis.OzoneManagerDoubleBuffer: Terminating with exit status 2"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn history(deletes: &str) -> History {
        let text = format!(
            r#"{{"index":0,"time":100,"process":0,"type":"invoke","f":"put","key":"o0","value":{{"body":"b1","if_none_match":"*"}}}}
{{"index":1,"time":110,"process":1,"type":"invoke","f":"put","key":"o0","value":{{"body":"b2","if_none_match":"*"}}}}
{deletes}{{"index":4,"time":200,"process":0,"type":"ok","f":"put","key":"o0","value":{{"etag":"e1"}}}}
{{"index":5,"time":210,"process":1,"type":"ok","f":"put","key":"o0","value":{{"etag":"e2"}}}}
{{"index":6,"time":300,"process":0,"type":"invoke","f":"get","key":"o0","value":null}}
{{"index":7,"time":310,"process":0,"type":"ok","f":"get","key":"o0","value":{{"body":"b2","etag":"e2"}}}}
"#
        );
        checker::parse_str(&text, Format::Jsonl).unwrap()
    }

    #[test]
    fn two_successful_creates_are_named() {
        let h = history("");
        let r = linearizable(
            &h,
            ModelKind::S3Object,
            Duration::from_secs(5),
            &[],
            Clock::default(),
        )
        .unwrap();
        assert_eq!(r["verdict"], "illegal");
        let summary = r["summary"].as_str().unwrap();
        assert!(
            summary.starts_with(
                "more than one create succeeded on key o0: process 0 created body \"b1\""
            ),
            "{summary}"
        );
        assert!(
            summary.contains("process 1 created body \"b2\""),
            "{summary}"
        );
        assert_eq!(r["witnesses"][0]["creates"].as_array().unwrap().len(), 2);
    }

    /// The witnesses' sentences count from the workload's start, as the scenario's `at:` does
    /// (here 100 s into the run, after the cluster's start): two creates, and a get torn between
    /// two versions.
    #[test]
    fn witness_sentences_count_from_the_workloads_start() {
        let clock = Clock {
            t0: 100_000_000_000,
        };
        let text = r#"{"index":0,"time":100500000000,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b1","if_none_match":"*"}}
{"index":1,"time":100600000000,"process":1,"type":"invoke","f":"put","key":"o0","value":{"body":"b2","if_none_match":"*"}}
{"index":2,"time":101000000000,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e1"}}
{"index":3,"time":101250000000,"process":1,"type":"ok","f":"put","key":"o0","value":{"etag":"e2"}}
"#;
        let h = checker::parse_str(text, Format::Jsonl).unwrap();
        let r = linearizable(&h, ModelKind::S3Object, Duration::from_secs(5), &[], clock).unwrap();
        let summary = r["summary"].as_str().unwrap();
        assert!(
            summary.contains(
                "(0.500 s to 1.000 s) and process 1 created body \"b2\" (0.600 s to 1.250 s)"
            ),
            "{summary}"
        );
        assert_eq!(r["witnesses"][0]["creates"][1]["completed_s"], json!(1.25));
        let torn = r#"{"index":0,"time":100500000000,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b1"}}
{"index":1,"time":101000000000,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e1"}}
{"index":2,"time":102000000000,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b2"}}
{"index":3,"time":102500000000,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e2"}}
{"index":4,"time":103000000000,"process":1,"type":"invoke","f":"get","key":"o0","value":null}
{"index":5,"time":103100000000,"process":1,"type":"ok","f":"get","key":"o0","value":{"body":"b1","etag":"e2"}}
"#;
        let h = checker::parse_str(torn, Format::Jsonl).unwrap();
        let r = linearizable(&h, ModelKind::S3Object, Duration::from_secs(5), &[], clock).unwrap();
        let summary = r["summary"].as_str().unwrap();
        assert!(
            summary.starts_with("a get on key o0 (process 1, at 3.000 s) returned body"),
            "{summary}"
        );
    }

    #[test]
    fn a_delete_between_overlapping_creates_in_either_order() {
        // Seen on Ceph (ceph/if-match-delete, seed 1): the create invoked first is answered
        // last; a delete sent after the other create's answer may come between them (the
        // other create, then the delete, then the first create). The key is illegal for
        // another reason (a get of a body never written), which must be what the summary says.
        let text = r#"{"index":0,"time":100,"process":0,"type":"invoke","f":"put","key":"o0","value":{"body":"b1","if_none_match":"*"}}
{"index":1,"time":105,"process":1,"type":"invoke","f":"put","key":"o0","value":{"body":"b2","if_none_match":"*"}}
{"index":2,"time":200,"process":1,"type":"ok","f":"put","key":"o0","value":{"etag":"e2"}}
{"index":3,"time":250,"process":2,"type":"invoke","f":"delete","key":"o0","value":null}
{"index":4,"time":400,"process":0,"type":"ok","f":"put","key":"o0","value":{"etag":"e1"}}
{"index":5,"time":500,"process":2,"type":"ok","f":"delete","key":"o0","value":null}
{"index":6,"time":600,"process":0,"type":"invoke","f":"get","key":"o0","value":null}
{"index":7,"time":610,"process":0,"type":"ok","f":"get","key":"o0","value":{"body":"b9","etag":"e9"}}
"#;
        let h = checker::parse_str(text, Format::Jsonl).unwrap();
        let r = linearizable(
            &h,
            ModelKind::S3Object,
            Duration::from_secs(5),
            &[],
            Clock::default(),
        )
        .unwrap();
        assert_eq!(r["verdict"], "illegal");
        let summary = r["summary"].as_str().unwrap();
        assert!(!summary.contains("more than one create"), "{summary}");
    }

    #[test]
    fn an_unknown_delete_could_come_between() {
        // A delete sent before both creates whose answer never came may apply between them:
        // then both creates are legal.
        let h = history(
            "{\"index\":2,\"time\":50,\"process\":2,\"type\":\"invoke\",\"f\":\"delete\",\"key\":\"o0\",\"value\":null}\n{\"index\":3,\"time\":60,\"process\":2,\"type\":\"info\",\"f\":\"delete\",\"key\":\"o0\",\"value\":null}\n",
        );
        let r = linearizable(
            &h,
            ModelKind::S3Object,
            Duration::from_secs(5),
            &[],
            Clock::default(),
        )
        .unwrap();
        assert_eq!(r["verdict"], "ok", "{}", r["summary"]);
    }
}
