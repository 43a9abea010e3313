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

use maud::{html, Markup, PreEscaped};

use crate::error::{HarnessError, Result};
use crate::run_folder::{CheckInWords, Comparison, ReportSummary, COMPARE};
use load::shown;

pub use index::render_index;

/// The `<head>` of every page the report writes (a run's, the index of runs, a comparison's):
/// self-contained, so its policy lets in only inline styles, data: images and, on a page with
/// `scripts`, inline scripts that fetch nothing.
pub fn head(title: Markup, css: &str, scripts: bool) -> Markup {
    let policy = if scripts {
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'none'"
    } else {
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    };
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            link rel="icon" href="data:,";
            meta http-equiv="Content-Security-Policy" content=(policy);
            title { (title) }
            style { (PreEscaped(css)) }
        }
    }
}

/// The rendered files of one run folder.
pub struct Rendered {
    pub html: String,
    pub junit: String,
    /// report.json: verdict sentences and counts, for the index.
    pub summary: ReportSummary,
    /// summary.md: the run in a few lines of Markdown, for a bug tracker.
    pub markdown: String,
    /// One line for stdout.
    pub line: String,
    /// What of the folder could not be read (lines of history.jsonl, refused files), for
    /// stderr: the report leaves them out.
    pub notes: Vec<String>,
    /// What the verdict rests on and could not be read ([`load::RunFolder::incomplete`]).
    pub incomplete: Vec<String>,
}

/// Renders a run folder without writing anything.
pub fn render_folder(run_dir: &Path) -> Result<Rendered> {
    let run = load::load(run_dir)?;
    let model = page::model(&run);
    let html = page::render(&model).into_string();
    let r = &run.result;
    let meta = &r.meta;
    // Relative to the repository's root when the folder is inside it (summary.md, JUnit).
    let folder = crate::run_folder::repo_relative(run_dir)
        .display()
        .to_string();
    let markdown = summary::run_summary(&model, &folder);
    let checks: Vec<CheckInWords> = model
        .checks
        .iter()
        .map(|c| CheckInWords {
            name: c.name.clone(),
            verdict: c.verdict.clone(),
            sentences: c.sentences.iter().map(|s| s.text.clone()).collect(),
            summary: c.summary.clone(),
        })
        .collect();
    let cases = junit::RunCases {
        scenario: shown(&meta.scenario),
        seed: meta.seed_words(),
        verdict: r.verdict.word().to_string(),
        folder: folder.clone(),
        command: shown(&meta.command),
        duration_s: meta.duration_s.unwrap_or(0.0),
        checks: checks.clone(),
        error: r.error.clone(),
        expect: meta.expect.clone(),
        confirmation: r.confirmation.map(|c| c.key().to_string()),
        preconditions: r.preconditions.clone().unwrap_or_default(),
    };
    let junit = junit::junit(std::slice::from_ref(&cases), false)?;
    let headline = page::headline(&model.checks).or_else(|| r.error.clone());
    // "3/4 fault steps applied", when the run planned any.
    let steps = r
        .steps_applied()
        .map(|(applied, total)| format!(", {applied}/{total} fault steps applied"))
        .unwrap_or_default();
    // "illegal, confirmed", "ok, not reached: every-om-restarted".
    let confirmation = match r.confirmation {
        Some(c) => {
            let unreached: Vec<&str> = r.unreached().map(|p| p.name.as_str()).collect();
            let word = c.key().replace('-', " ");
            if unreached.is_empty() {
                format!(", {word}")
            } else {
                format!(", {word} (not reached: {})", unreached.join(", "))
            }
        }
        None => String::new(),
    };
    // "followed 3/10 trace steps", for a scenario imported from a trace.
    let confirmation = match &r.trace {
        Some(t) => format!(
            "{confirmation}, followed {}/{} trace steps",
            t.followed, t.steps
        ),
        None => confirmation,
    };
    let incomplete = if run.incomplete.is_empty() {
        ""
    } else {
        " (incomplete: the folder could not be read in full)"
    };
    let line = format!(
        "{}: {}{incomplete}{confirmation} (seed {}, {} ops{steps}, {}){} {}",
        shown(&meta.scenario),
        r.verdict.word(),
        meta.seed_words(),
        run.ops.len(),
        meta.duration_words(),
        headline
            .as_ref()
            .map(|h| format!(": {h}"))
            .unwrap_or_default(),
        folder
    );
    let summary = ReportSummary {
        scenario: meta.scenario.clone(),
        seed: meta.seed,
        verdict: Some(r.verdict),
        started: meta.started.clone(),
        duration_s: meta.duration_s,
        system: meta.system.clone(),
        command: meta.command.clone(),
        operations: Some(run.ops.len()),
        faults: model.windows.len(),
        headline,
        checks,
        error: r.error.clone(),
        confirmation: r.confirmation,
        confirmation_sentence: r.confirmation_sentence.clone(),
        preconditions: r.preconditions.clone(),
    };
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
        incomplete: run.incomplete.clone(),
    })
}

/// Writes index.html, junit.xml and report.json into the run folder; returns the one-line summary.
pub fn render(run_dir: &Path) -> Result<String> {
    render_written(run_dir).map(|w| w.line)
}

/// What [`render_written`] wrote: the one-line summary, and what the verdict rests on and could
/// not be read (also in the page's head).
pub struct Written {
    pub line: String,
    pub incomplete: Vec<String>,
}

/// [`render`], saying too what of the folder the verdict rests on could not be read.
pub fn render_written(run_dir: &Path) -> Result<Written> {
    let out = render_folder(run_dir)?;
    for note in &out.notes {
        eprintln!("note: {note}");
    }
    let write = |name: &str, body: &[u8]| {
        crate::run_folder::write_file(&run_dir.join(name), body)
            .map_err(|e| HarnessError::infra(e.to_string()))
    };
    write("index.html", out.html.as_bytes())?;
    write("summary.md", out.markdown.as_bytes())?;
    write("junit.xml", out.junit.as_bytes())?;
    out.summary
        .write(run_dir)
        .map_err(|e| HarnessError::infra(e.to_string()))?;
    Ok(Written {
        line: out.line,
        incomplete: out.incomplete,
    })
}

/// The Markdown summary of a run folder (rendered again) or of a comparison folder (one with a
/// compare.json), for `chaos report DIR --summary`; written as DIR/summary.md too.
pub fn summary_of(dir: &Path) -> Result<String> {
    summary_written(dir).map(|(markdown, _)| markdown)
}

/// [`summary_of`], with what the run folder's verdict rests on and could not be read (nothing
/// for a comparison folder).
pub fn summary_written(dir: &Path) -> Result<(String, Vec<String>)> {
    // A comparison folder; one whose compare.json is there but cannot be read is refused,
    // with the reason, not taken for a run folder.
    if std::fs::symlink_metadata(dir.join(COMPARE)).is_ok() {
        let record = Comparison::read(dir)?;
        let markdown = summary::comparison(dir, &record);
        crate::run_folder::write_file(&dir.join("summary.md"), markdown.as_bytes())
            .map_err(|e| HarnessError::infra(e.to_string()))?;
        return Ok((markdown, Vec::new()));
    }
    let written = render_written(dir)?;
    let markdown = load::read_inside(dir, "summary.md")
        .ok_or_else(|| HarnessError::infra(format!("{}: no summary.md", dir.display())))?;
    Ok((markdown, written.incomplete))
}
