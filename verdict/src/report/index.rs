//! The index of runs: every run folder under a directory (however deep, as CI artifacts of many
//! shards land), newest first, with filters by verdict and scenario. Links are relative, so the
//! directory can be copied to a static web host as it is. Also writes a junit.xml over all runs.

use std::path::{Path, PathBuf};

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::junit::{self, RunCases};
use super::load::{read_redacted, read_result_redacted, shown};
use crate::error::{HarnessError, Result};
use crate::run_folder::{Build, CheckInWords, Reached, ReportSummary, RunResult, REPORT, RESULT};

/// One row of the index.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Relative URL path of the run folder (`etcd-stale-reads/20261129T193513Z-s1`).
    pub href: String,
    pub scenario: String,
    pub started: String,
    pub seed: String,
    pub verdict: String,
    pub duration_s: f64,
    /// The duration as the index shows it (`12.5 s`, or why there is none).
    pub duration: String,
    pub operations: Option<usize>,
    pub headline: String,
    pub checks: Vec<CheckInWords>,
    pub command: String,
    pub error: Option<String>,
    pub has_page: bool,
    /// What the suite expected of the run (`fail` for a known-bad control), if it ran in one.
    pub expect: Option<String>,
    pub confirmation: Option<String>,
    pub preconditions: Vec<Reached>,
    /// What the run ended as, for the rates over a scenario's runs.
    pub class: crate::rates::Class,
    /// The build a comparison played it on (build.json), if any: rates count each build apart.
    pub build: Option<String>,
}

const MAX_DEPTH: usize = 8;

/// Run folders (those with a result.json) under `dir`; symbolic links are not followed, so
/// `latest` links neither duplicate runs nor lead outside.
pub fn find_runs(dir: &Path) -> Vec<PathBuf> {
    find_runs_skipping(dir, &mut Vec::new())
}

/// `path: why` of a folder under `dir` the index left out.
pub(crate) fn skipped(dir: &Path, path: &Path, why: impl std::fmt::Display) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    format!(
        "{}: {why}",
        chaos_core::shown::shown(&rel.to_string_lossy())
    )
}

/// [`find_runs`], adding to `skipped` each folder it could not search: unreadable, or with
/// folders inside at more than [`MAX_DEPTH`] levels below `dir`.
pub fn find_runs_skipping(dir: &Path, skipped_out: &mut Vec<String>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) if d != dir => {
                skipped_out.push(skipped(dir, &d, format!("cannot be read: {e}")));
                continue;
            }
            Err(_) => continue,
        };
        let mut has_result = false;
        let mut subdirs = Vec::new();
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_symlink() {
                continue;
            }
            if ft.is_dir() {
                subdirs.push(e.path());
            } else if e.file_name() == "result.json" {
                has_result = true;
            }
        }
        if has_result && d != dir {
            out.push(d);
            continue;
        }
        if depth < MAX_DEPTH {
            stack.extend(subdirs.into_iter().map(|s| (s, depth + 1)));
        } else if !subdirs.is_empty() {
            skipped_out.push(skipped(
                dir,
                &d,
                format!("the folders inside are more than {MAX_DEPTH} levels deep; not searched"),
            ));
        }
    }
    out
}

fn href(rel: &Path) -> String {
    rel.components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn entry(dir: &Path, run: &Path) -> std::result::Result<Entry, String> {
    let result: RunResult = read_result_redacted(run).map_err(|e| {
        let e = e.to_string();
        // The error names the file already; the index names it relative to its folder.
        let full = run.join(RESULT).display().to_string();
        let why = e
            .strip_prefix(&format!("{full}: "))
            .unwrap_or(&e)
            .to_string();
        skipped(dir, &run.join(RESULT), why)
    })?;
    let meta = &result.meta;
    // What `chaos report` wrote of the run, when it was rendered; else result.json's own words.
    let summary: Option<ReportSummary> = read_redacted(run, REPORT).ok();
    let checks: Vec<CheckInWords> = match &summary {
        Some(s) => s.checks.clone(),
        None => result
            .checks
            .iter()
            .map(|c| CheckInWords {
                name: c.name.clone(),
                verdict: c.verdict.as_str().to_string(),
                sentences: vec![c.summary.clone()],
                summary: c.summary.clone(),
            })
            .collect(),
    };
    let headline = summary
        .as_ref()
        .and_then(|s| s.headline.clone())
        .or_else(|| {
            checks
                .iter()
                .find(|c| c.verdict != "ok")
                .map(|c| c.sentences.first().cloned().unwrap_or_default())
        })
        .or_else(|| result.error.clone())
        .unwrap_or_default();
    let rel = run
        .strip_prefix(dir)
        .map_err(|_| skipped(dir, run, "not inside the folder"))?;
    Ok(Entry {
        href: href(rel),
        scenario: shown(&meta.scenario),
        started: shown(&meta.started),
        seed: meta.seed_words(),
        verdict: result.verdict.word().to_string(),
        duration_s: meta.duration_s.unwrap_or(0.0),
        duration: meta.duration_words(),
        operations: summary
            .as_ref()
            .and_then(|s| s.operations)
            .or(result.stats.as_ref().map(|s| s.operations)),
        headline,
        checks,
        command: shown(&meta.command),
        error: result.error.clone(),
        has_page: run.join("index.html").is_file(),
        expect: meta.expect.clone(),
        confirmation: result.confirmation.map(|c| c.key().to_string()),
        preconditions: result.preconditions.clone().unwrap_or_default(),
        class: crate::rates::Class::of_result(&result),
        build: Build::of_run(run),
    })
}

/// Reads every run folder under `dir`, newest first.
pub fn entries(dir: &Path) -> Vec<Entry> {
    entries_skipping(dir, &mut Vec::new())
}

/// [`entries`], adding to `skipped` each folder left out and why.
pub fn entries_skipping(dir: &Path, skipped: &mut Vec<String>) -> Vec<Entry> {
    let mut list: Vec<Entry> = Vec::new();
    for run in find_runs_skipping(dir, skipped) {
        match entry(dir, &run) {
            Ok(e) => list.push(e),
            Err(why) => skipped.push(why),
        }
    }
    list.sort_by(|a, b| {
        (&b.started, &b.scenario, &b.href).cmp(&(&a.started, &a.scenario, &a.href))
    });
    list
}

const INDEX_JS: &str = r#"(function(){'use strict';
var v=document.getElementById('f-verdict'),s=document.getElementById('f-scenario'),q=document.getElementById('f-text'),n=document.getElementById('shown');
function apply(){var rows=document.querySelectorAll('tbody tr'),c=0;rows.forEach(function(r){
var ok=(!v.value||r.getAttribute('data-verdict')===v.value)&&(!s.value||r.getAttribute('data-scenario')===s.value)&&(!q.value||r.textContent.toLowerCase().indexOf(q.value.toLowerCase())>=0);
r.style.display=ok?'':'none';if(ok)c++;});n.textContent=c;}
[v,s,q].forEach(function(e){e.addEventListener('input',apply);e.addEventListener('change',apply);});
var h=new URLSearchParams(location.hash.slice(1));if(h.get('verdict'))v.value=h.get('verdict');if(h.get('scenario'))s.value=h.get('scenario');apply();})();"#;

const INDEX_CSS: &str = r#"body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f7f8fa}
header{background:#111827;color:#fff;padding:.8em 1.5em}header h1{margin:0;font-size:1.3em}
main{max-width:1400px;margin:0 auto;padding:1em 1.5em}
.filters{display:flex;gap:1em;align-items:center;flex-wrap:wrap;margin:.6em 0}
.counts span{margin-right:1em}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #e4e7ec;border-radius:8px}
td,th{border-bottom:1px solid #e4e7ec;padding:.35em .7em;text-align:left;vertical-align:top}th{color:#475467;background:#f9fafb}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
table.rates{margin-bottom:1.2em}h2{font-size:1.1em;margin:1em 0 .4em}
.badge{display:inline-block;padding:.05em .55em;border-radius:999px;color:#fff;font-weight:600;font-size:.85em;background:#6b7280}
.v-ok{background:#2f8f46}.v-illegal{background:#d0212b}.v-unknown{background:#b7950b}
.head{max-width:48em}.muted{color:#667085}a{color:#1d4ed8}"#;

/// Each scenario's runs by what they ended as.
pub fn tallies(entries: &[Entry]) -> Vec<(String, crate::rates::Tally)> {
    let mut out: Vec<(String, crate::rates::Tally)> = Vec::new();
    for e in entries {
        // Runs of one scenario on different builds (chaos compare) are different rates.
        let name = match &e.build {
            Some(build) => format!("{} on {build}", e.scenario),
            None => e.scenario.clone(),
        };
        match out.iter_mut().find(|(s, _)| *s == name) {
            Some((_, t)) => t.add(e.class, e.duration_s),
            None => {
                let mut t = crate::rates::Tally::default();
                t.add(e.class, e.duration_s);
                out.push((name, t));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The rates table: a row per scenario, a column per way its runs ended (those that occur).
fn rates(entries: &[Entry]) -> Markup {
    use crate::rates::{share, Class};
    let tallies = tallies(entries);
    let columns: Vec<Class> = Class::ALL
        .into_iter()
        .filter(|c| tallies.iter().any(|(_, t)| t.count(*c) > 0))
        .collect();
    html! {
        h2 { "Rates over each scenario's runs" }
        p.muted { "k of N runs, with the 95% interval (Wilson). Confirmed: a violation with every precondition reached; held: every precondition reached and no violation; not reached: the run did not test the bug." }
        table.rates {
            thead { tr { th { "scenario" } th { "runs" } @for c in &columns { th { (c.word()) } } th { "median duration" } } }
            tbody {
                @for (scenario, t) in &tallies {
                    tr {
                        td { a href={"#scenario=" (scenario)} { (scenario) } }
                        td.num { (t.runs) }
                        @for c in &columns { td.num { (share(t.count(*c), t.runs)) } }
                        td.num { (format!("{:.0} s", t.median_seconds())) }
                    }
                }
            }
        }
    }
}

fn page(
    entries: &[Entry],
    comparisons: &[super::comparison::Listed],
    skipped: &[String],
) -> Markup {
    let mut scenarios: Vec<&str> = entries.iter().map(|e| e.scenario.as_str()).collect();
    scenarios.sort_unstable();
    scenarios.dedup();
    let count = |v: &str| entries.iter().filter(|e| e.verdict == v).count();
    html! {
        (DOCTYPE)
        html lang="en" {
            (super::head(html! { "chaos runs" }, INDEX_CSS, true))
            body {
                header { h1 { "chaos runs" } }
                main {
                    p.counts {
                        span { strong { (entries.len()) } " runs" }
                        span { span.badge.v-illegal { "violation" } " " (count("illegal")) }
                        span { span.badge.v-unknown { "undecided" } " " (count("unknown")) }
                        span { span.badge.v-ok { "passed" } " " (count("ok")) }
                        span { span.badge { "not run" } " " (entries.len() - count("illegal") - count("unknown") - count("ok")) }
                        a href="junit.xml" { "junit.xml" }
                    }
                    div.filters {
                        label { "verdict " select #f-verdict {
                            option value="" { "any" }
                            option value="illegal" { "violation" }
                            option value="unknown" { "undecided" }
                            option value="ok" { "passed" }
                            option value="error" { "not run (error)" }
                            option value="interrupted" { "interrupted" }
                        } }
                        label { "scenario " select #f-scenario {
                            option value="" { "any" }
                            @for s in &scenarios { option value=(s) { (s) } }
                        } }
                        label { "search " input #f-text type="search" placeholder="seed, words of the verdict"; }
                        span.muted { span #shown { (entries.len()) } " shown" }
                    }
                    @if !skipped.is_empty() {
                        section #skipped {
                            h2 { "Skipped: " (skipped.len()) " folders not listed" }
                            ul { @for s in skipped { li { (s) } } }
                        }
                    }
                    (super::comparison::index_section(comparisons))
                    @if !entries.is_empty() { (rates(entries)) h2 { "Runs" } }
                    table {
                        thead { tr { th { "started (UTC)" } th { "scenario" } th { "seed" } th { "verdict" } th { "confirmation" } th { "duration" } th { "ops" } th { "what happened" } th { "report" } } }
                        tbody {
                            @for e in entries {
                                tr data-verdict=(e.verdict) data-scenario=(e.scenario) {
                                    td.num { (e.started.get(..19).unwrap_or(&e.started).replace('T', " ")) }
                                    td { (e.scenario) }
                                    td.num { (e.seed) }
                                    td { span class={"badge v-" (e.verdict)} { (e.verdict) } }
                                    td { (e.confirmation.as_deref().unwrap_or("").replace('-', " "))
                                        @for p in e.preconditions.iter().filter(|p| !p.reached) { br; span.muted title=(p.evidence) { "not reached: " (p.name) } } }
                                    td.num { (e.duration) }
                                    td.num { (e.operations.map(|o| o.to_string()).unwrap_or_default()) }
                                    td.head { (e.headline) }
                                    td { @if e.has_page { a href={(e.href) "/index.html"} { "report" } } @else { a href={(e.href) "/result.json"} { "result.json" } } }
                                }
                            }
                        }
                    }
                    @if entries.is_empty() { p.muted { "No run folders here yet." } }
                }
                script { (PreEscaped(INDEX_JS)) }
            }
        }
    }
}

/// Builds `dir/index.html` and `dir/junit.xml` over every run folder under `dir`.
pub fn render_index(dir: &Path) -> Result<Vec<Entry>> {
    render_index_skipping(dir).map(|(list, _)| list)
}

/// [`render_index`], with each folder it left out and why (`path: why`, the path relative to
/// `dir`), also listed on the page.
pub fn render_index_skipping(dir: &Path) -> Result<(Vec<Entry>, Vec<String>)> {
    if !dir.is_dir() {
        return Err(HarnessError::BadInput(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let mut skipped = Vec::new();
    let list = entries_skipping(dir, &mut skipped);
    let comparisons = super::comparison::find_skipping(dir, &mut skipped);
    skipped.sort();
    skipped.dedup();
    crate::run_folder::write_file(
        &dir.join("index.html"),
        page(&list, &comparisons, &skipped).into_string().as_bytes(),
    )
    .map_err(|e| HarnessError::infra(e.to_string()))?;
    let runs: Vec<RunCases> = list
        .iter()
        .map(|e| RunCases {
            scenario: e.scenario.clone(),
            seed: e.seed.clone(),
            verdict: e.verdict.clone(),
            folder: e.href.clone(),
            command: e.command.clone(),
            duration_s: e.duration_s,
            checks: e.checks.clone(),
            error: e.error.clone(),
            expect: e.expect.clone(),
            confirmation: e.confirmation.clone(),
            preconditions: e.preconditions.clone(),
        })
        .collect();
    crate::run_folder::write_file(
        &dir.join("junit.xml"),
        junit::junit(&runs, true)?.as_bytes(),
    )
    .map_err(|e| HarnessError::infra(e.to_string()))?;
    Ok((list, skipped))
}

/// How the runs of one run folder's scenario (on its build) ended, over the run folders beside
/// it (a scenario's runs land in one folder, as the index lists them): None with no other run.
pub fn sibling_tally(run_dir: &Path, result: &RunResult) -> Option<crate::rates::Tally> {
    let parent = run_dir.parent()?;
    let build = Build::of_run;
    let own_build = build(run_dir);
    let scenario = &result.meta.scenario;
    let mut tally = crate::rates::Tally::default();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let Ok(r) = RunResult::read(&dir) else {
            continue;
        };
        if &r.meta.scenario != scenario || build(&dir) != own_build {
            continue;
        }
        tally.add(
            crate::rates::Class::of_result(&r),
            r.meta.duration_s.unwrap_or(0.0),
        );
    }
    (tally.runs > 1).then_some(tally)
}

/// `confirmed in 9 of 10 runs (60-98%); violated, unreached in 1 of 10 (0-40%)`: this run's
/// class first.
pub fn rate_words(tally: &crate::rates::Tally, own: crate::rates::Class) -> String {
    let mut classes: Vec<(crate::rates::Class, u32)> =
        tally.counts.iter().map(|(c, n)| (*c, *n)).collect();
    classes.sort_by_key(|(c, n)| (*c != own, std::cmp::Reverse(*n)));
    classes
        .iter()
        .map(|(c, n)| {
            let share = crate::rates::share(*n, tally.runs);
            format!("{} in {}", c.word(), share.replacen(" (", " runs (", 1))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
