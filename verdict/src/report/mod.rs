//! The run folder's report, a pure function of the folder: index.html (one self-contained page:
//! summary in sentences, timeline, violation view, latency, logs around faults), junit.xml,
//! summary.md (to paste into a bug tracker) and report.json (the sentences, for the index of
//! runs). `index` builds reports/index.html over many run folders. Nothing here talks to Docker
//! or the network; the one thing read outside the run folder is the result.json of the run
//! folders beside it, for the rate over the scenario's runs. Every time shown counts from the
//! workload's start (`load::Clock`), as a scenario's `at:` does.

pub mod analyze;
pub mod comparison;
pub mod data;
pub mod index;
pub mod junit;
pub mod load;
pub mod page;
pub mod summary;
pub mod violations;

use std::path::Path;

use serde_json::{json, Value};

use crate::error::{HarnessError, Result};
use load::{show, shown};

pub use index::render_index;

/// The rendered files of one run folder.
pub struct Rendered {
    pub html: String,
    pub junit: String,
    /// report.json: verdict sentences and counts, for the index.
    pub summary: Value,
    /// summary.md: the run in a few lines of Markdown, for a bug tracker.
    pub markdown: String,
    /// One line for stdout.
    pub line: String,
    /// What of the folder could not be read (lines of history.jsonl, refused files), for
    /// stderr: the report leaves them out.
    pub notes: Vec<String>,
}

/// Renders a run folder without writing anything.
pub fn render_folder(run_dir: &Path) -> Result<Rendered> {
    let run = load::load(run_dir)?;
    // Every result.json a run writes names its scenario and verdict (an interrupted run's
    // too): without them the page would be about "nil".
    for (field, there) in [
        ("scenario", run.meta.scenario.is_some()),
        ("verdict", run.result["verdict"].is_string()),
    ] {
        if !there {
            return Err(HarnessError::BadInput(format!(
                "{}: no `{field}` (text): not the result.json of a chaos run",
                run_dir.join("result.json").display()
            )));
        }
    }
    let model = page::model(&run);
    let html = page::render(&model).into_string();
    let r = &run.result;
    let meta = &run.meta;
    let folder = run_dir.display().to_string();
    let markdown = summary::run_summary(&model, &folder);
    let checks: Vec<(String, String, Vec<String>, String)> = model
        .checks
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.verdict.clone(),
                c.sentences.iter().map(|s| s.text.clone()).collect(),
                c.summary.clone(),
            )
        })
        .collect();
    let cases = junit::RunCases {
        scenario: shown(&meta.scenario),
        seed: shown(&meta.seed),
        verdict: show(&r["verdict"]),
        folder: folder.clone(),
        command: shown(&meta.command),
        duration_s: meta.duration_s.unwrap_or(0.0),
        checks: checks.clone(),
        error: r["error"].as_str().map(str::to_string),
        expect: meta.expect.clone(),
        confirmation: r["confirmation"].as_str().map(str::to_string),
        preconditions: preconditions(r),
    };
    let junit = junit::junit(std::slice::from_ref(&cases), false)?;
    let headline =
        page::headline(&model.checks).or_else(|| r["error"].as_str().map(str::to_string));
    // "3/4 fault steps applied", when the run planned any.
    let steps = steps_applied(r)
        .map(|(applied, total)| format!(", {applied}/{total} fault steps applied"))
        .unwrap_or_default();
    // "illegal, confirmed", "ok, not reached: every-om-restarted".
    let confirmation = match r["confirmation"].as_str() {
        Some(word) => {
            let unreached: Vec<String> = preconditions(r)
                .into_iter()
                .filter(|p| !p.1)
                .map(|p| p.0)
                .collect();
            let word = word.replace('-', " ");
            if unreached.is_empty() {
                format!(", {word}")
            } else {
                format!(", {word} (not reached: {})", unreached.join(", "))
            }
        }
        None => String::new(),
    };
    let line = format!(
        "{}: {}{confirmation} (seed {}, {} ops{steps}, {:.1} s){} {}",
        shown(&meta.scenario),
        show(&r["verdict"]),
        shown(&meta.seed),
        run.ops.len(),
        meta.duration_s.unwrap_or(0.0),
        headline
            .as_ref()
            .map(|h| format!(": {h}"))
            .unwrap_or_default(),
        folder
    );
    let summary = json!({
        "scenario": meta.scenario,
        "seed": meta.seed,
        "verdict": r["verdict"],
        "started": meta.started,
        "duration_s": meta.duration_s,
        "system": meta.system,
        "command": meta.command,
        "operations": run.ops.len(),
        "faults": model.windows.len(),
        "headline": headline,
        "checks": checks.iter().map(|(n, v, s, d)| json!({"name": n, "verdict": v, "sentences": s, "summary": d})).collect::<Vec<_>>(),
        "error": r["error"],
        "confirmation": r["confirmation"],
        "confirmation_sentence": r["confirmation_sentence"],
        "preconditions": r["preconditions"],
    });
    let mut notes = run.unread.clone();
    if !run.bad_lines.is_empty() {
        notes.push(format!(
            "{folder}: {} (left out of the report)",
            page::bad_lines_sentence(&run.bad_lines)
        ));
    }
    Ok(Rendered {
        html,
        junit,
        summary,
        markdown,
        line,
        notes,
    })
}

/// result.json's preconditions as (name, reached, evidence).
pub fn preconditions(result: &Value) -> Vec<(String, bool, String)> {
    result["preconditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                show(&p["name"]),
                p["reached"].as_bool().unwrap_or(false),
                show(&p["evidence"]),
            )
        })
        .collect()
}

/// Writes index.html, junit.xml and report.json into the run folder; returns the one-line summary.
pub fn render(run_dir: &Path) -> Result<String> {
    let out = render_folder(run_dir)?;
    for note in &out.notes {
        eprintln!("note: {note}");
    }
    let write = |name: &str, body: &[u8]| {
        std::fs::write(run_dir.join(name), body)
            .map_err(|e| HarnessError::infra(format!("cannot write {name}: {e}")))
    };
    write("index.html", out.html.as_bytes())?;
    write("summary.md", out.markdown.as_bytes())?;
    write("junit.xml", out.junit.as_bytes())?;
    write(
        "report.json",
        serde_json::to_string_pretty(&out.summary)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    Ok(out.line)
}

/// The Markdown summary of a run folder (rendered again) or of a comparison folder (one with a
/// compare.json), for `chaos report DIR --summary`; written as DIR/summary.md too.
pub fn summary_of(dir: &Path) -> Result<String> {
    // A comparison folder; one whose compare.json is there but cannot be read is refused,
    // with the reason, not taken for a run folder.
    if std::fs::symlink_metadata(dir.join("compare.json")).is_ok() {
        let record = crate::run_folder::read_object(dir, "compare.json")?;
        let markdown = summary::comparison(dir, &record);
        std::fs::write(dir.join("summary.md"), &markdown)
            .map_err(|e| HarnessError::infra(format!("cannot write summary.md: {e}")))?;
        return Ok(markdown);
    }
    render(dir)?;
    load::read_inside(dir, "summary.md")
        .ok_or_else(|| HarnessError::infra(format!("{}: no summary.md", dir.display())))
}

/// (applied, planned) fault steps, from the "faults applied" check, when the run planned any.
pub(crate) fn steps_applied(result: &Value) -> Option<(Value, Value)> {
    result["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["check"] == "faults")
        .map(|c| (c["detail"]["applied"].clone(), c["detail"]["total"].clone()))
}
