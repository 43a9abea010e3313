//! The run folder's report: index.html (plain, self-contained, every text escaped by maud) and
//! junit.xml (one test case per check). Reads the run folder only.

use std::path::Path;

use maud::{html, Markup, PreEscaped, DOCTYPE};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::Value;

use crate::checks::read_faults;
use crate::error::{HarnessError, Result};

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}\
.v{display:inline-block;padding:.15em .6em;border-radius:4px;color:#fff;font-weight:600}\
.ok{background:#2a7d2e}.illegal{background:#b3261e}.unknown{background:#8a6d00}.error,.interrupted{background:#555}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
pre{background:#f6f6f6;padding:.8em;overflow:auto;font-size:12px}code{font-size:12px}";

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", path.display())))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Writes index.html and junit.xml from result.json, scenario.yaml and faults.jsonl.
pub fn render(run_dir: &Path) -> Result<()> {
    let result = read_json(&run_dir.join("result.json"))?;
    let scenario = std::fs::read_to_string(run_dir.join("scenario.yaml")).unwrap_or_default();
    let faults = read_faults(run_dir);
    let page = page(&result, &scenario, &faults);
    let write = |name: &str, body: &[u8]| {
        std::fs::write(run_dir.join(name), body)
            .map_err(|e| HarnessError::infra(format!("cannot write {name}: {e}")))
    };
    write("index.html", page.into_string().as_bytes())?;
    write("junit.xml", junit(&result, run_dir)?.as_bytes())?;
    Ok(())
}

fn page(result: &Value, scenario: &str, faults: &[Value]) -> Markup {
    let verdict = text(&result["verdict"]);
    let stats = &result["stats"];
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "chaos: " (text(&result["scenario"])) " " (verdict) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (text(&result["scenario"])) " " span class={"v " (verdict)} { (verdict) } }
                p { (text(&result["description"])) }
                table {
                    tr { th { "system" } td { (text(&result["system"])) } }
                    tr { th { "seed" } td { (text(&result["seed"])) } }
                    tr { th { "started" } td { (text(&result["started"])) } }
                    tr { th { "duration" } td { (format!("{:.1} s", result["duration_s"].as_f64().unwrap_or(0.0))) } }
                    tr { th { "reproduce" } td { code { (text(&result["command"])) } } }
                }
                @if let Some(error) = result["error"].as_str() {
                    h2 { "Not checked" }
                    pre { (error) }
                }
                h2 { "Checks" }
                table {
                    tr { th { "check" } th { "verdict" } th { "what it found" } }
                    @for check in result["checks"].as_array().into_iter().flatten() {
                        tr {
                            td { (text(&check["name"])) }
                            td { span class={"v " (text(&check["verdict"]))} { (text(&check["verdict"])) } }
                            td { (text(&check["summary"])) }
                        }
                    }
                }
                @for check in result["checks"].as_array().into_iter().flatten() {
                    @if check["verdict"] == "illegal" {
                        (counterexample(check))
                    }
                }
                h2 { "Operations" }
                p { (text(&stats["operations"])) " operations, " (text(&stats["ok"])) " completed ok." }
                table {
                    tr { th { "kind" } th { "ok" } th { "fail" } th { "info" } th { "p50 ms" } th { "p99 ms" } th { "max ms" } }
                    @for (f, c) in stats["by_kind"].as_object().into_iter().flatten() {
                        @let l = &stats["latency"][f];
                        tr {
                            td { (f) } td { (text(&c["ok"])) } td { (text(&c["fail"])) } td { (text(&c["info"])) }
                            td { (fmt_ms(&l["p50_ms"])) } td { (fmt_ms(&l["p99_ms"])) } td { (fmt_ms(&l["max_ms"])) }
                        }
                    }
                }
                h2 { "Faults" }
                table {
                    tr { th { "time" } th { "step" } th { "action" } th { "phase" } th { "targets" } th { "trigger" } th { "outcome" } }
                    @for f in faults {
                        tr {
                            td { (format!("{:.3} s", f["time"].as_f64().unwrap_or(0.0) / 1e9)) }
                            td { (text(&f["step"])) }
                            td { (text(&f["action"])) @if let Some(m) = f["mode"].as_str() { " (" (m) ")" } }
                            td { (text(&f["phase"])) }
                            td { (f["targets"].as_array().map(|t| t.iter().map(text).collect::<Vec<_>>().join(", ")).unwrap_or_default()) }
                            td { (text(&f["trigger"])) }
                            td { (text(&f["outcome"])) }
                        }
                    }
                }
                h2 { "Scenario" }
                pre { (scenario) }
                p { "Files: " a href="history.jsonl" { "history.jsonl" } ", " a href="faults.jsonl" { "faults.jsonl" } ", "
                    a href="result.json" { "result.json" } ", " a href="plan.json" { "plan.json" } ", " a href="logs/" { "logs/" } }
            }
        }
    }
}

fn fmt_ms(v: &Value) -> String {
    v.as_f64().map(|x| format!("{x:.1}")).unwrap_or_default()
}

/// The violation: the operation that cannot be placed and the longest partial linearization.
fn counterexample(check: &Value) -> Markup {
    let detail = &check["detail"];
    html! {
        @for partition in detail["partitions"].as_array().into_iter().flatten() {
            @let e = &partition["explanation"];
            @if !e.is_null() {
                h2 { "Violation on key " (text(&partition["key"])) }
                p { (text(&e["message"])) }
                table {
                    tr { th { "cannot be placed" } td { (op_line(&e["op"])) } }
                    tr { th { "needs state" } td { (text(&e["needs"])) } }
                    tr { th { "possible states" } td { (e["states"].as_array().map(|s| s.iter().map(text).collect::<Vec<_>>().join(" | ")).unwrap_or_default()) } }
                }
                p { "Longest partial linearization (" (e["longest_linearization"].as_array().map_or(0, Vec::len)) " operations):" }
                table {
                    tr { th { "#" } th { "operation" } th { "state after" } }
                    @for (i, step) in e["longest_linearization"].as_array().into_iter().flatten().enumerate() {
                        tr { td { (i + 1) } td { (op_line(&step["op"])) } td { (text(&step["state"])) } }
                    }
                }
            }
        }
    }
}

fn op_line(op: &Value) -> String {
    format!(
        "process {} {} {} {} -> {} {} (t {:.3}..{} s)",
        text(&op["process"]),
        text(&op["f"]),
        text(&op["key"]),
        text(&op["value"]),
        text(&op["status"]),
        text(&op["output"]),
        op["invoke_time"].as_f64().unwrap_or(0.0) / 1e9,
        op["complete_time"]
            .as_f64()
            .map(|t| format!("{:.3}", t / 1e9))
            .unwrap_or_else(|| "?".into()),
    )
}

fn junit(result: &Value, run_dir: &Path) -> Result<String> {
    let scenario = text(&result["scenario"]);
    let mut report = Report::new("chaos");
    let mut suite = TestSuite::new(scenario.clone());
    let checks = result["checks"].as_array().cloned().unwrap_or_default();
    if checks.is_empty() {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message(format!(
            "{}: {} ({})",
            text(&result["verdict"]),
            text(&result["error"]),
            run_dir.display()
        ));
        suite.add_test_case(TestCase::new(format!("{scenario}: run"), status));
    }
    for check in checks {
        let name = format!("{scenario}: {}", text(&check["name"]));
        let summary = format!("{} ({})", text(&check["summary"]), run_dir.display());
        let status = match check["verdict"].as_str() {
            Some("ok") => TestCaseStatus::success(),
            Some("illegal") => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(summary);
                s
            }
            _ => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(summary);
                s
            }
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(format!("seed {}", text(&result["seed"])));
        suite.add_test_case(case);
    }
    report.add_test_suite(suite);
    report
        .to_string()
        .map_err(|e| HarnessError::infra(format!("junit.xml: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_text_is_escaped() {
        let evil = "<script>alert(1)</script>\"onmouseover=";
        let result = json!({"scenario": evil, "verdict": "ok", "description": evil, "checks": [
            {"name": evil, "verdict": "illegal", "summary": evil, "detail": {"partitions": [
                {"key": evil, "explanation": {"message": evil, "op": {"f": evil}, "needs": evil,
                 "states": [evil], "longest_linearization": [{"op": {"f": evil}, "state": evil}]}}]}}
        ], "stats": {}});
        let faults =
            vec![json!({"action": evil, "targets": [evil], "trigger": evil, "outcome": evil})];
        let html = page(&result, evil, &faults).into_string();
        assert!(!html.contains("<script>alert"));
        assert!(!html.contains("\"onmouseover="));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    }

    #[test]
    fn junit_has_a_case_per_check_and_the_violation_as_failure() {
        let result = json!({"scenario": "s", "seed": 3, "verdict": "illegal", "checks": [
            {"name": "linearizable (cas-register)", "verdict": "illegal", "summary": "key k1: stale read"}]});
        let xml = junit(&result, Path::new("reports/s/x")).unwrap();
        assert!(xml.contains("<failure"), "{xml}");
        assert!(xml.contains("key k1: stale read (reports/s/x)"), "{xml}");
    }
}
