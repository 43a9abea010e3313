//! The imported scenario's text: the base scenario's, its name, description, faults and
//! preconditions replaced by the trace's, and `trace:` saying where they came from.

use std::fmt::Write as _;
use std::path::Path;

use super::yaml::{key_scalar, scalar, Fragment};
use super::{Built, Mapping};

/// Where an import came from, as its header and `trace:` record it.
pub struct Origin<'a> {
    pub trace: &'a Path,
    pub format: &'a str,
    pub map: &'a Path,
    pub base: &'a Path,
}

/// The top-level keys the import writes itself.
const REPLACED: &[&str] = &["name", "description", "faults", "reached", "trace"];

/// The base's text without its top-level keys of [`REPLACED`] (each with its block, and the
/// comments within it).
fn base_without_replaced(text: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        let top_level_key =
            !line.is_empty() && !line.starts_with([' ', '\t', '#', '-']) && line.contains(':');
        if top_level_key {
            let key = line.split(':').next().unwrap_or_default().trim();
            skipping = REPLACED.contains(&key);
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `{ history: { f: cas } }` as `history: { f: cas }`: what a predicate expects, in words.
pub fn expected(predicate: &Fragment) -> String {
    let text = predicate.to_string();
    text.strip_prefix("{ ")
        .and_then(|t| t.strip_suffix(" }"))
        .map(str::to_string)
        .unwrap_or(text)
}

pub fn write(base: &str, name: &str, mapping: &Mapping, origin: &Origin, built: &Built) -> String {
    let steps = built.reached.len();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Imported by `chaos trace import` from {} ({}, {steps} steps) with the mapping {}:",
        origin.trace.display(),
        origin.format,
        origin.map.display()
    );
    let _ = writeln!(
        s,
        "# the base scenario {} with the trace's fault steps and one precondition per step.",
        origin.base.display()
    );
    let _ = writeln!(s, "name: {}", scalar(name));
    let description = mapping.description.clone().unwrap_or_else(|| {
        format!(
            "The counterexample {} played on the cluster of {}, as {} maps its actions.",
            origin.trace.display(),
            origin.base.display(),
            origin.map.display()
        )
    });
    let _ = writeln!(s, "description: {}", scalar(description.trim()));
    s.push_str(&base_without_replaced(base));
    if built.faults.is_empty() {
        s.push_str("faults: []\n");
    } else {
        s.push_str("faults:\n");
    }
    for (i, step) in built.faults.iter().enumerate() {
        let _ = writeln!(
            s,
            "  # {i}: trace step {}, {}",
            step.trace_step,
            one_line(&step.action)
        );
        if let Fragment::Map(pairs) = &step.step {
            for (j, (key, value)) in pairs.iter().enumerate() {
                let lead = if j == 0 { "  - " } else { "    " };
                let _ = writeln!(s, "{lead}{}: {value}", key_scalar(key));
            }
        }
    }
    s.push_str("reached:\n");
    for p in &built.reached {
        let _ = writeln!(s, "  {}: {}", scalar(&p.name), p.predicate);
    }
    s.push_str("trace:\n");
    let _ = writeln!(s, "  file: {}", scalar(&origin.trace.display().to_string()));
    let _ = writeln!(s, "  format: {}", origin.format);
    s.push_str("  steps:\n");
    for p in &built.reached {
        let _ = writeln!(
            s,
            "    - {{ action: {}, reached: {}, expect: {} }}",
            scalar(&p.action),
            scalar(&p.name),
            scalar(&expected(&p.predicate))
        );
    }
    s
}

/// A comment stays one line.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replaced_keys_go_with_their_blocks() {
        let base = "name: x\ndescription: >\n  long\n  text\nsystem: etcd\nfaults:\n  - at: 1s\n    do: kill\n# about checks\nchecks:\n  - durable: {}\nreached:\n  a: { step: 0 }\n";
        assert_eq!(
            base_without_replaced(base),
            "system: etcd\nchecks:\n  - durable: {}\n"
        );
    }
}
