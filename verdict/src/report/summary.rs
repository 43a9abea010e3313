//! summary.md: a run (or a comparison) in a few lines of Markdown, to paste into a bug tracker:
//! the system and its version, the scenario and seed, what was done (the faults and when),
//! what was seen (the first witness and the log lines of the node that answered), the rate,
//! the command that reproduces it and where the full report is. Times count from the
//! workload's start, as on the page.

use std::fmt::Write as _;
use std::path::Path;

use super::analyze;
use super::load::shown;
use super::page::{verdict_sentence, Model};
use super::violations::Violation;
use crate::faults::log::fault_label;
use crate::rates::{share, Class};
use crate::run_folder::{Comparison, Phase};

/// Log lines quoted under a witness.
const QUOTED: usize = 6;

/// A fence that the text cannot close.
fn fenced(lines: &[String]) -> String {
    let longest = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}\n{}\n{fence}\n", lines.join("\n"))
}

/// Markdown's special characters in running text.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '`' | '*' | '<' | '|') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The log lines around a violation's first witness: the node that gave the answer, the lines
/// that name the key first.
fn quoted_lines(m: &Model, v: &Violation) -> Option<(String, Vec<String>)> {
    let (node, invoked, completed, key) = match v.retried.first() {
        Some(r) => (
            r.later.node.clone()?,
            r.later.invoked,
            r.later.completed,
            r.key.clone(),
        ),
        None => {
            let b = v.stale.as_ref().map(|s| s.read).or(v.bad)?;
            let op = &m.run.ops[b];
            (op.node.clone()?, op.invoke, op.complete, v.key.clone())
        }
    };
    let (lines, marked) = analyze::answering_lines(m.run, &node, invoked, completed, &key);
    let pick: Vec<_> = if marked.is_empty() {
        lines.iter().take(QUOTED).collect()
    } else {
        lines
            .iter()
            .filter(|l| marked.contains(&l.number))
            .take(QUOTED)
            .collect()
    };
    if pick.is_empty() {
        return None;
    }
    let text = pick
        .iter()
        .map(|l| {
            let t = l
                .time
                .map(|t| format!("{:9.3}  ", m.clock.log(t)))
                .unwrap_or_default();
            format!("{t}{}", l.text)
        })
        .collect();
    Some((node, text))
}

/// The fault events as a list: when each step began (and was over), on which nodes, what set
/// it off; when the nodes of a restart answered again.
fn fault_lines(m: &Model) -> Vec<String> {
    let clock = m.clock;
    let mut out = Vec::new();
    for f in &m.run.faults {
        let t = f.time;
        let line = match f.phase {
            Phase::Apply => {
                let started = Some(f.started).filter(|s| *s + 500_000_000 < t);
                let when = match started {
                    Some(s) => format!("{:.1} s → {:.1} s", clock.s(s), clock.s(t)),
                    None => format!("{:.1} s", clock.s(t)),
                };
                format!(
                    "{when}: {}{}{}",
                    fault_label(f),
                    f.trigger
                        .as_ref()
                        .map(|t| format!(" ({t})"))
                        .unwrap_or_default(),
                    if f.ok() {
                        String::new()
                    } else {
                        format!(" — {}", f.outcome)
                    }
                )
            }
            Phase::Ready => format!(
                "{:.1} s: {} {}",
                clock.s(t),
                f.targets.join(", "),
                f.outcome
            ),
            _ => continue,
        };
        out.push(line);
    }
    if out.len() > 20 {
        let more = out.len() - 20;
        out.truncate(20);
        out.push(format!("… and {more} more (faults.jsonl)"));
    }
    out
}

/// One run in Markdown. `folder`: where the full report is, as the reader should be told.
pub fn run_summary(m: &Model, folder: &str) -> String {
    let r = &m.run.result;
    let meta = &m.run.result.meta;
    let mut s = String::new();
    let verdict = r.verdict.word();
    let versions: Vec<String> = m.versions.iter().map(|(n, v)| format!("{n} {v}")).collect();
    let _ = writeln!(
        s,
        "### chaos: {} — {}{}\n",
        plain(&shown(&meta.scenario)),
        match verdict {
            "ok" => "passed",
            "illegal" => "violation",
            "unknown" => "undecided",
            _ => "not checked",
        },
        r.confirmation
            .map(|c| format!(", {}", c.key().replace('-', " ")))
            .unwrap_or_default()
    );
    let (sentence, _) = verdict_sentence(m);
    if !m.run.incomplete.is_empty() {
        let _ = writeln!(
            s,
            "**Incomplete:** what the verdict rests on could not be read: {}\n",
            plain(&m.run.incomplete.join("; "))
        );
    }
    let _ = writeln!(s, "{}\n", plain(&sentence));
    let _ = writeln!(
        s,
        "- **System:** {}{}",
        plain(&shown(&meta.system)),
        if versions.is_empty() {
            String::new()
        } else {
            format!(" ({})", plain(&versions.join(", ")))
        }
    );
    let _ = writeln!(
        s,
        "- **Scenario:** {} (`{}`), seed {}",
        plain(&shown(&meta.scenario)),
        shown(
            &meta
                .scenario_path
                .as_ref()
                .map(|p| crate::run_folder::repo_relative(p).display().to_string())
        ),
        meta.seed_words()
    );
    if let Some(c) = &r.confirmation_sentence {
        let _ = writeln!(s, "- **Confirmation:** {}", plain(c));
    }
    if let Some(t) = &r.trace {
        let _ = writeln!(
            s,
            "- **Trace:** {} (`{}`, {})",
            plain(&t.sentence),
            plain(&t.file),
            plain(&t.format)
        );
    }
    if let Some(t) = &m.rate {
        let _ = writeln!(
            s,
            "- **Rate:** {} (this scenario's runs in the same folder)",
            super::index::rate_words(t, Class::of_result(r))
        );
    }
    let _ = writeln!(s, "- **Reproduce:** `{}`", shown(&meta.command));
    let _ = writeln!(s, "- **Full report:** {}/index.html", folder);
    let _ = writeln!(
        s,
        "\nTimes are seconds from the workload's start (the scenario's `at:`); the cluster took {:.1} s to start before it.\n",
        m.clock.t0 as f64 / 1e9
    );
    let faults = fault_lines(m);
    let _ = writeln!(s, "**What was done**\n");
    if faults.is_empty() {
        let _ = writeln!(s, "- no fault was injected");
    }
    for f in &faults {
        let _ = writeln!(s, "- {}", plain(f));
    }
    let _ = writeln!(s, "\n**What was seen**\n");
    let mut seen_check = Vec::new();
    for v in &m.violations {
        if seen_check.contains(&v.check) {
            continue;
        }
        seen_check.push(v.check.clone());
        let others = m.violations.iter().filter(|x| x.check == v.check).count() - 1;
        let _ = writeln!(s, "- {}: {}", plain(&v.check), plain(&v.sentence));
        if let Some(first) = v.retried.first() {
            let _ = writeln!(
                s,
                "  - first answer: {} at {} ({}), later answer: {} at {} ({})",
                plain(&first.first.words),
                m.clock.at(first.first.invoked),
                first.first.node.as_deref().unwrap_or("?"),
                plain(&first.later.words),
                m.clock.at(first.later.invoked),
                first.later.node.as_deref().unwrap_or("?"),
            );
        }
        if others > 0 {
            let _ = writeln!(
                s,
                "  - and {others} more like it (the report lists them all)"
            );
        }
        if let Some((node, lines)) = quoted_lines(m, v) {
            let _ = writeln!(
                s,
                "\n  Log of {node} (seconds from the workload's start):\n"
            );
            for l in fenced(&lines).lines() {
                let _ = writeln!(s, "  {l}");
            }
        }
    }
    if m.violations.is_empty() {
        for c in &m.checks {
            if let Some(first) = c.sentences.first() {
                let _ = writeln!(
                    s,
                    "- {} ({}): {}",
                    plain(&c.name),
                    c.verdict,
                    plain(&first.text)
                );
            }
        }
    }
    let pre = r.preconditions.as_deref().unwrap_or_default();
    if !pre.is_empty() {
        let _ = writeln!(s, "\n**Preconditions**\n");
        for p in pre {
            let _ = writeln!(
                s,
                "- {} {}: {}",
                if p.reached { "reached" } else { "NOT reached" },
                plain(&p.name),
                plain(&p.evidence)
            );
        }
    }
    s
}

/// A comparison (compare.json) in Markdown: the conclusion, each build's rate, and the first
/// run of each build that showed the bug, in the words of its own summary.
pub fn comparison(dir: &Path, record: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### chaos compare: {}\n", plain(&record.scenario));
    let _ = writeln!(s, "{}\n", plain(&record.conclusion));
    let seeds: Vec<String> = record.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        s,
        "- **Scenario:** `{}`, seeds {}",
        if record.scenario_path.is_absolute() {
            crate::run_folder::repo_relative(&record.scenario_path)
        } else {
            record.scenario_path.clone()
        }
        .display(),
        seeds.join(", ")
    );
    for b in &record.builds {
        let t = b.tally();
        let counts: Vec<String> = t
            .counts
            .iter()
            .map(|(c, n)| format!("{} {}", c.word(), share(*n, t.runs)))
            .collect();
        let _ = writeln!(
            s,
            "- **{}** ({}): {}",
            plain(&b.build),
            b.image.as_deref().unwrap_or("the scenario's image"),
            counts.join("; ")
        );
    }
    match record.command(&record.seeds) {
        Some(command) => {
            let _ = writeln!(s, "- **Reproduce:** `{command}`");
        }
        // compare.json of an older chaos, which did not keep its builds' words.
        None => {
            let _ = writeln!(
                s,
                "- **Reproduce:** `chaos compare {} --seeds {}` with the same builds",
                record.scenario_path.display(),
                seeds.join(",")
            );
        }
    }
    let _ = writeln!(
        s,
        "- **Full report:** {}/index.html",
        crate::run_folder::repo_relative(dir).display()
    );
    for b in &record.builds {
        let failing = b.runs.iter().find(|r| r.class.counts_as("violation"));
        let Some(run) = failing else { continue };
        let folder = dir.join(&run.folder);
        let Ok(loaded) = super::load::load(&folder) else {
            continue;
        };
        let m = super::page::model(&loaded);
        let _ = writeln!(s, "\n#### On {} (seed {})\n", plain(&b.build), run.seed);
        let body = run_summary(
            &m,
            &crate::run_folder::repo_relative(&folder)
                .display()
                .to_string(),
        );
        // Its own heading left out: the build's heading stands for it.
        let body = body
            .split_once("\n\n")
            .map_or(body.as_str(), |(_, rest)| rest);
        s.push_str(body);
    }
    s
}
