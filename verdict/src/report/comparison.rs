//! The comparison page (`chaos compare`'s index.html, from compare.json alone) and the
//! comparisons' table on the index of runs. compare.json is written by `chaos compare`; this
//! module only reads it, as the rest of the report reads run folders.

use std::path::Path;

use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde_json::Value;

use crate::rates::{share, Class, Tally};

const CSS: &str = r#"body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f7f8fa}
header{background:#111827;color:#fff;padding:.8em 1.5em}header h1{margin:0;font-size:1.3em}
main{max-width:1200px;margin:0 auto;padding:1em 1.5em}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;background:#fff;border:1px solid #e4e7ec}
td,th{border-bottom:1px solid #e4e7ec;padding:.35em .7em;text-align:left;vertical-align:top}th{color:#475467;background:#f9fafb}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.yes{color:#2f8f46;font-weight:600}.no{color:#d0212b;font-weight:600}.muted{color:#667085}a{color:#1d4ed8}
.c-confirmed,.c-violated{color:#d0212b}.c-held,.c-passed{color:#2f8f46}"#;

/// The comparison page, from compare.json's record alone; links are relative.
pub fn page(record: &Value) -> Markup {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let builds: Vec<&Value> = record["builds"].as_array().into_iter().flatten().collect();
    let tally_of = |b: &Value| {
        let mut t = Tally::default();
        for run in b["runs"].as_array().into_iter().flatten() {
            let class: Class = serde_json::from_value(run["class"].clone()).unwrap_or(Class::Error);
            t.add(class, run["seconds"].as_f64().unwrap_or(0.0));
        }
        t
    };
    let tallies: Vec<Tally> = builds.iter().map(|b| tally_of(b)).collect();
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
    let seeds: Vec<u64> = record["seeds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .collect();
    let run_of = |b: &Value, seed: u64| -> Option<Value> {
        b["runs"]
            .as_array()?
            .iter()
            .find(|r| r["seed"].as_u64() == Some(seed))
            .cloned()
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:";
                link rel="icon" href="data:,";
                title { "chaos compare: " (text(&record["scenario"])) }
                style { (PreEscaped(CSS)) }
            }
            body {
                header { h1 { "chaos compare: " (text(&record["scenario"])) } }
                main {
                    p class=(if record["confirmed"].as_bool() == Some(true) { "yes" } else { "no" }) { (text(&record["conclusion"])) }
                    p.muted {
                        "Started " (text(&record["started"])) "; " (seeds.len()) " seed(s); wall time "
                        (format!("{:.0} s", record["wall_s"].as_f64().unwrap_or(0.0)))
                        "; exit " (record["exit_code"]) ". "
                        @if record["preconditions"].as_bool() == Some(true) {
                            "The scenario declares preconditions: the bug is confirmed on a build when it shows with every precondition reached, and held when every precondition is reached and it does not."
                        } @else {
                            "The scenario declares no preconditions: violated or passed."
                        }
                    }
                    h2 { "Per build" }
                    table {
                        thead { tr { th { "build" } th { "image" } th { "runs" } @for c in &columns { th { (c.word()) } } th { "median run" } } }
                        tbody {
                            @for (b, t) in builds.iter().zip(&tallies) {
                                tr {
                                    td { (text(&b["build"])) }
                                    td { (b["image"].as_str().unwrap_or("(the scenario's)")) }
                                    td.num { (t.runs) }
                                    @for c in &columns { td.num { (share(t.count(*c), t.runs)) } }
                                    td.num { (format!("{:.0} s", t.median_seconds())) }
                                }
                            }
                        }
                    }
                    h2 { "Per seed" }
                    table {
                        thead { tr { th { "seed" } @for b in &builds { th { (text(&b["build"])) } } } }
                        tbody {
                            @for seed in &seeds {
                                tr {
                                    td.num { (seed) }
                                    @for b in &builds {
                                        td {
                                            @if let Some(run) = run_of(b, *seed) {
                                                @let class = text(&run["class"]);
                                                span class={"c-" (class)} { (class.replace('-', " ")) } " "
                                                a href={(text(&run["folder"])) "/index.html"} { "report" } " "
                                                span.muted { (format!("{:.0} s", run["seconds"].as_f64().unwrap_or(0.0))) }
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
    pub record: Value,
}

/// Comparison folders (those with a compare.json) under `dir`, newest first.
pub fn find(dir: &Path) -> Vec<Listed> {
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
            let record = super::load::read_inside(&d, "compare.json")
                .and_then(|t| serde_json::from_str(&t).ok());
            if let (Some(record), Ok(rel)) = (record, d.strip_prefix(dir)) {
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
    out.sort_by(|a, b| {
        b.record["started"]
            .as_str()
            .cmp(&a.record["started"].as_str())
    });
    out
}

/// The index's table of comparisons (nothing when there is none).
pub fn index_section(list: &[Listed]) -> Markup {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    html! {
        @if !list.is_empty() {
            h2 { "Comparisons" }
            table.rates {
                thead { tr { th { "started (UTC)" } th { "scenario" } th { "builds" } th { "seeds" } th { "conclusion" } th { "wall time" } th { "page" } } }
                tbody {
                    @for c in list {
                        @let r = &c.record;
                        tr {
                            td.num { (text(&r["started"]).get(..19).unwrap_or_default().replace('T', " ")) }
                            td { (text(&r["scenario"])) }
                            td { @for (i, b) in r["builds"].as_array().into_iter().flatten().enumerate() { @if i > 0 { br; } (text(&b["build"])) } }
                            td.num { (r["seeds"].as_array().map_or(0, Vec::len)) }
                            td.head { (text(&r["conclusion"])) }
                            td.num { (format!("{:.0} s", r["wall_s"].as_f64().unwrap_or(0.0))) }
                            td { a href={(c.href) "/index.html"} { "comparison" } }
                        }
                    }
                }
            }
        }
    }
}
