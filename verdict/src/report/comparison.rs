//! The comparison page (`chaos compare`'s index.html, from compare.json alone) and the
//! comparisons' table on the index of runs. compare.json is written by `chaos compare`; this
//! module only reads it, as the rest of the report reads run folders.

use std::path::Path;

use crate::rates::{share, Class, Tally};
use crate::run_folder::{ComparedBuild, Comparison, COMPARE};
use maud::{html, Markup, DOCTYPE};

const CSS: &str = r#"body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f7f8fa}
header{background:#111827;color:#fff;padding:.8em 1.5em}header h1{margin:0;font-size:1.3em}
main{max-width:1200px;margin:0 auto;padding:1em 1.5em}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;background:#fff;border:1px solid #e4e7ec}
td,th{border-bottom:1px solid #e4e7ec;padding:.35em .7em;text-align:left;vertical-align:top}th{color:#475467;background:#f9fafb}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.yes{color:#2f8f46;font-weight:600}.no{color:#d0212b;font-weight:600}.muted{color:#667085}a{color:#1d4ed8}
.c-confirmed,.c-violated{color:#d0212b}.c-held,.c-passed{color:#2f8f46}"#;

/// The comparison page, from compare.json's record alone; links are relative.
pub fn page(record: &Comparison) -> Markup {
    let tallies: Vec<Tally> = record.builds.iter().map(ComparedBuild::tally).collect();
    let columns: Vec<Class> = Class::ALL
        .into_iter()
        .filter(|c| {
            [
                Class::Confirmed,
                Class::Held,
                Class::NotReached,
                Class::Error,
            ]
            .contains(c)
                || tallies.iter().any(|t| t.count(*c) > 0)
        })
        .collect();
    html! {
        (DOCTYPE)
        html lang="en" {
            (super::head(html! { "chaos compare: " (record.scenario) }, CSS, false))
            body {
                header { h1 { "chaos compare: " (record.scenario) } }
                main {
                    p class=(if record.confirmed { "yes" } else { "no" }) { (record.conclusion) }
                    p.muted {
                        "Started " (record.started) "; " (record.seeds.len()) " seed(s); wall time "
                        (format!("{:.0} s", record.wall_s))
                        "; exit " (record.exit_code) ". "
                        @if record.preconditions {
                            "The scenario declares preconditions: the bug is confirmed on a build when it shows with every precondition reached, and held when every precondition is reached and it does not."
                        } @else {
                            "The scenario declares no preconditions: violated or passed."
                        }
                    }
                    @if let Some(command) = record.command(&record.seeds) {
                        p { "Reproduce, from the repository's root: " code #repro { (command) } }
                    }
                    h2 { "Per build" }
                    table {
                        thead { tr { th { "build" } th { "image" } th { "runs" } @for c in &columns { th { (c.word()) } } th { "median run" } } }
                        tbody {
                            @for (b, t) in record.builds.iter().zip(&tallies) {
                                tr {
                                    td { (b.build) }
                                    td { (b.image.as_deref().unwrap_or("(the scenario's)")) }
                                    td.num { (t.runs) }
                                    @for c in &columns { td.num { (share(t.count(*c), t.runs)) } }
                                    td.num { (format!("{:.0} s", t.median_seconds())) }
                                }
                            }
                        }
                    }
                    h2 { "Per seed" }
                    table {
                        thead { tr { th { "seed" } @for b in &record.builds { th { (b.build) } } } }
                        tbody {
                            @for seed in &record.seeds {
                                tr {
                                    td.num { (seed) }
                                    @for b in &record.builds {
                                        td {
                                            @if let Some(run) = b.run_of(*seed) {
                                                @let class = run.class.key();
                                                span class={"c-" (class)} { (class.replace('-', " ")) } " "
                                                a href={(run.folder.display()) "/index.html"} { "report" } " "
                                                span.muted { (format!("{:.0} s", run.seconds)) }
                                            } @else { span.muted { "not played" } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    p.muted { a href="compare.json" { "compare.json" } }
                }
            }
        }
    }
}

/// One comparison under a folder of reports, for the index of runs.
pub struct Listed {
    /// Relative path of the comparison folder.
    pub href: String,
    pub record: Comparison,
}

/// Comparison folders (those with a compare.json) under `dir`, newest first.
pub fn find(dir: &Path) -> Vec<Listed> {
    find_skipping(dir, &mut Vec::new())
}

/// [`find`], adding to `skipped` each comparison folder whose compare.json cannot be read, and
/// why (the folders it could not search, the index's walk of run folders names).
pub fn find_skipping(dir: &Path, skipped: &mut Vec<String>) -> Vec<Listed> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut subdirs = Vec::new();
        let mut found = false;
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() && !ft.is_symlink() {
                subdirs.push(e.path());
            } else if ft.is_file() && e.file_name() == "compare.json" {
                found = true;
            }
        }
        if found {
            let record = match Comparison::read(&d) {
                Ok(record) => Ok(record),
                Err(e) => {
                    let e = e.to_string();
                    let full = format!("{}: ", d.join(COMPARE).display());
                    let why = e.strip_prefix(&full).unwrap_or(&e).to_string();
                    skipped.push(super::index::skipped(dir, &d.join(COMPARE), why));
                    Err(())
                }
            };
            if let (Ok(record), Ok(rel)) = (record, d.strip_prefix(dir)) {
                out.push(Listed {
                    href: rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/"),
                    record,
                });
            }
            continue;
        }
        if depth < 8 {
            stack.extend(subdirs.into_iter().map(|s| (s, depth + 1)));
        }
    }
    out.sort_by(|a, b| b.record.started.cmp(&a.record.started));
    out
}

/// The index's table of comparisons (nothing when there is none).
pub fn index_section(list: &[Listed]) -> Markup {
    html! {
        @if !list.is_empty() {
            h2 { "Comparisons" }
            table.rates {
                thead { tr { th { "started (UTC)" } th { "scenario" } th { "builds" } th { "seeds" } th { "conclusion" } th { "wall time" } th { "page" } } }
                tbody {
                    @for c in list {
                        @let r = &c.record;
                        tr {
                            td.num { (r.started.get(..19).unwrap_or_default().replace('T', " ")) }
                            td { (r.scenario) }
                            td { @for (i, b) in r.builds.iter().enumerate() { @if i > 0 { br; } (b.build) } }
                            td.num { (r.seeds.len()) }
                            td.head { (r.conclusion) }
                            td.num { (format!("{:.0} s", r.wall_s)) }
                            td { a href={(c.href) "/index.html"} { "comparison" } }
                        }
                    }
                }
            }
        }
    }
}
