//! From a run folder's history to its verdicts: runs the scenario's checks through the checker
//! library and writes result.json (verdict per check, counterexample, statistics). Reads files
//! only, so `chaos check RUN_DIR` gives the same answer later, anywhere.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use checker::{Format, History, ModelKind, Status, Verdict};
use serde_json::{json, Value};

use crate::error::{HarnessError, Result, EXIT_BAD_INPUT};
use crate::scenario::{self, CheckSpec};

pub struct Checked {
    /// ok, illegal or unknown, over all checks.
    pub verdict: Verdict,
    pub exit_code: i32,
    pub result: Value,
}

/// One check's result as result.json and the reports show it.
fn linearizable(history: &History, model: ModelKind, timeout: Duration) -> Result<Value> {
    let budget = checker::Budget::with_timeout(timeout);
    let result = checker::linearizable::check(history, model, &budget)
        .map_err(|e| HarnessError::BadInput(format!("history does not fit model {model}: {e}")))?;
    // For registers, a stale read is the clearest witness: name it when there is one.
    let stale = match (result.verdict, model) {
        (Verdict::Illegal, ModelKind::Register | ModelKind::CasRegister) => {
            checker::stale::find(history).into_iter().next()
        }
        _ => None,
    };
    let summary = match (result.verdict, result.explanation()) {
        (Verdict::Illegal, _) if stale.is_some() => stale
            .as_ref()
            .map(|s| s.message.clone())
            .unwrap_or_default(),
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
        "witness": stale,
        "detail": result,
    }))
}

fn run_checks(
    history: &History,
    checks: &[CheckSpec],
    timeout: Option<Duration>,
) -> Result<Vec<Value>> {
    checks
        .iter()
        .map(|check| match check {
            CheckSpec::Linearizable(spec) => {
                let model: ModelKind = spec.model.value.parse().map_err(HarnessError::BadInput)?;
                let t = timeout
                    .or(spec.timeout.map(|d| d.0))
                    .unwrap_or(Duration::from_secs(60));
                linearizable(history, model, t)
            }
            CheckSpec::Durable(_) => {
                let result = checker::durable::check(history);
                Ok(json!({
                    "name": "durable",
                    "check": "durable",
                    "verdict": result.verdict,
                    "summary": result.text(),
                    "detail": result,
                }))
            }
            // Filled in by check_run from the run folder (converge.json).
            CheckSpec::Converge(_) => Ok(crate::converge::needs_run_folder()),
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
        })
        .collect()
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

fn read_run_history(run_dir: &Path) -> Result<History> {
    let path = run_dir.join("history.jsonl");
    checker::read_history(&path, Format::Jsonl)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", path.display())))
}

/// Checks a finished run and writes result.json.
pub fn check_run(
    run_dir: &Path,
    checks: &[serde_saphyr::Spanned<CheckSpec>],
    meta: &Value,
) -> Result<Checked> {
    let history = read_run_history(run_dir)?;
    let specs: Vec<CheckSpec> = checks.iter().map(|c| c.value.clone()).collect();
    let mut results = run_checks(&history, &specs, None)?;
    crate::converge::fill(run_dir, &specs, &mut results);
    let verdict = overall(&results);
    let mut result = meta.clone();
    result["verdict"] = json!(verdict);
    result["checks"] = json!(results);
    result["stats"] = statistics(&history, &read_faults(run_dir));
    write_result(run_dir, &result)?;
    Ok(Checked {
        verdict,
        exit_code: verdict.exit_code(),
        result,
    })
}

/// result.json for a run that was not checked (interrupted, or the harness failed).
pub fn write_unchecked(run_dir: &Path, meta: &Value, verdict: &str, message: &str) -> Result<()> {
    let mut result = meta.clone();
    result["verdict"] = json!(verdict);
    result["error"] = json!(message);
    result["checks"] = json!([]);
    if let Ok(history) = read_run_history(run_dir) {
        result["stats"] = statistics(&history, &read_faults(run_dir));
    }
    write_result(run_dir, &result)
}

fn write_result(run_dir: &Path, result: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(result).unwrap_or_default();
    std::fs::write(run_dir.join("result.json"), text)
        .map_err(|e| HarnessError::infra(format!("cannot write result.json: {e}")))
}

pub fn read_faults(run_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("faults.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Counts per operation kind and outcome, latency percentiles of completed operations, and
/// faults by kind.
pub fn statistics(history: &History, faults: &[Value]) -> Value {
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
    for f in faults {
        if f["phase"] == "apply" && f["outcome"] == "ok" {
            *fault_counts
                .entry(f["action"].as_str().unwrap_or("?").to_string())
                .or_default() += 1;
        }
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
        "fault_windows_s": windows.iter().map(|(a, b)| [*a as f64 / 1e9, *b as f64 / 1e9]).collect::<Vec<_>>(),
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
fn fault_windows(faults: &[Value]) -> Vec<(u64, u64)> {
    let end = faults
        .iter()
        .filter(|f| f["phase"] == "final-heal")
        .filter_map(|f| f["time"].as_u64())
        .min()
        .unwrap_or(u64::MAX);
    let mut windows = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        if f["phase"] != "apply" || f["outcome"] != "ok" {
            continue;
        }
        let Some(start) = f["started"].as_u64() else {
            continue;
        };
        let undo = faults[i + 1..]
            .iter()
            .find(|u| u["phase"] == "undo" && u["step"] == f["step"])
            .and_then(|u| u["time"].as_u64());
        // One-shot actions (kill, crash, restart) count until the node is back: their next
        // step event or a short grace period.
        let stop = undo.unwrap_or_else(|| {
            if matches!(
                f["action"].as_str(),
                Some("kill" | "crash" | "restart" | "stop" | "reset-connections")
            ) {
                f["time"].as_u64().unwrap_or(start) + 5_000_000_000
            } else {
                end
            }
        });
        windows.push((start, stop.min(end)));
    }
    windows
}

/// `chaos check PATH`: a run folder (its scenario's checks) or a history file with --model.
pub fn check_command(
    path: &Path,
    model: Option<&str>,
    format: &str,
    timeout: Duration,
    as_json: bool,
) -> Result<i32> {
    let (history, checks) = if path.is_dir() {
        let history = read_run_history(path)?;
        let checks = match model {
            Some(m) => vec![CheckSpec::Linearizable(scenario::LinearizableSpec {
                model: serde_saphyr::Spanned::new(
                    m.to_string(),
                    serde_saphyr::Location::UNKNOWN,
                    serde_saphyr::Location::UNKNOWN,
                ),
                timeout: None,
            })],
            None => {
                let scenario_path = path.join("scenario.yaml");
                let spec = scenario::parse_file(&scenario_path)
                    .map_err(|e| HarnessError::BadInput(e.to_string()))?;
                spec.checks.into_iter().map(|c| c.value).collect()
            }
        };
        (history, checks)
    } else {
        let Some(model) = model else {
            return Err(HarnessError::BadInput(
                "a history file needs --model (register, cas-register, kv, set, s3-object)".into(),
            ));
        };
        let format: Format = format
            .parse()
            .map_err(|e: String| HarnessError::BadInput(e))?;
        let history = checker::read_history(path, format)
            .map_err(|e| HarnessError::BadInput(format!("{}: {e}", path.display())))?;
        let check = CheckSpec::Linearizable(scenario::LinearizableSpec {
            model: serde_saphyr::Spanned::new(
                model.to_string(),
                serde_saphyr::Location::UNKNOWN,
                serde_saphyr::Location::UNKNOWN,
            ),
            timeout: None,
        });
        (history, vec![check])
    };
    let mut results = match run_checks(&history, &checks, Some(timeout)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_BAD_INPUT);
        }
    };
    if path.is_dir() {
        crate::converge::fill(path, &checks, &mut results);
    }
    let verdict = overall(&results);
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"verdict": verdict, "checks": results}))
                .unwrap_or_default()
        );
    } else {
        for r in &results {
            println!(
                "{}: {} - {}",
                r["name"].as_str().unwrap_or_default(),
                r["verdict"].as_str().unwrap_or_default(),
                r["summary"].as_str().unwrap_or_default()
            );
        }
        println!("verdict: {verdict} ({} operations)", history.ops.len());
    }
    Ok(verdict.exit_code())
}
