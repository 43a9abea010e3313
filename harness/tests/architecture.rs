//! docs/architecture.md's "where to add things", counted: a fault, a check and a workload kind
//! are each a type that only its own module and its registry name, so adding one touches the
//! files the page says. A type named in one more file is one more file to touch, and fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every Rust file of the four crates of the harness, by its path from the repository's root.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for krate in ["core", "runner", "verdict", "harness"] {
        walk(&repo().join(krate).join("src"), &mut files);
    }
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            // A module's tests may name any type: only the code itself counts.
            let text = match text.find("#[cfg(test)]") {
                Some(at) => text[..at].to_string(),
                None => text,
            };
            let name = p
                .strip_prefix(repo())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, text)
        })
        .collect()
}

/// The `module::Type` entries of a registry: the lines of `file` from `start` to the next `];`
/// that match `entry`.
fn entries(file: &str, start: &str, entry: &str) -> Vec<(String, String)> {
    let text = read(file);
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{file}: no {start}"));
    // A list ends at `];`, an impl block of constants at its closing brace.
    let end = ["];", "\n}"]
        .iter()
        .filter_map(|e| text[from..].find(e))
        .min()
        .unwrap_or_else(|| panic!("{file}: {start} does not end"));
    let block = &text[from..from + end];
    Regex::new(entry)
        .unwrap()
        .captures_iter(block)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// Each entry's type is declared in `folder/<module>.rs` and named, as `module::Type`, in the
/// registry's file alone.
fn named_only_by_its_module_and(registry: &str, folder: &str, listed: &[(String, String)]) {
    let sources = sources();
    for (module, ty) in listed {
        let home = format!("{folder}/{module}.rs");
        let declared = Regex::new(&format!(r"\bstruct {ty}\b")).unwrap();
        assert!(
            sources
                .iter()
                .any(|(name, text)| *name == home && declared.is_match(text)),
            "{ty} is not declared in {home}"
        );
        let path = Regex::new(&format!(r"\b{module}::{ty}\b")).unwrap();
        // Within the registry's crate: a check and a workload kind may share a name (fencing).
        let krate = registry.split('/').next().unwrap_or_default();
        let naming: BTreeSet<&str> = sources
            .iter()
            .filter(|(name, _)| name.split('/').next() == Some(krate))
            .filter(|(_, text)| path.is_match(text))
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(
            naming,
            BTreeSet::from([registry]),
            "{module}::{ty} is named outside its module and {registry}"
        );
    }
}

#[test]
fn a_workload_kind_is_its_module_its_registry_line_and_its_row() {
    let page = read("docs/architecture.md");
    assert!(
        page.contains("- **A workload kind**: three files."),
        "the page's count changed"
    );
    let registry = "runner/src/workloads/mod.rs";
    let listed = entries(
        registry,
        "impl WorkloadKind {",
        r"WorkloadKind\(&(\w+)::(\w+)\)",
    );
    assert_eq!(listed.len(), chaos::workloads::REGISTRY.len());
    named_only_by_its_module_and(registry, "runner/src/workloads", &listed);
    let scenarios = read("docs/scenarios.md");
    for kind in chaos::workloads::REGISTRY {
        assert!(
            scenarios.contains(&format!("`{kind}`")),
            "{kind} has no row"
        );
    }
}

#[test]
fn a_fault_is_its_type_its_registry_line_and_its_row() {
    let page = read("docs/architecture.md");
    assert!(
        page.contains("- **A fault**: three files."),
        "the page's count changed"
    );
    let registry = "runner/src/faults/kinds/mod.rs";
    let listed = entries(registry, "pub static REGISTRY", r"&(\w+)::(\w+),");
    assert_eq!(listed.len(), chaos::faults::kinds::REGISTRY.len());
    named_only_by_its_module_and(registry, "runner/src/faults/kinds", &listed);
    // The mechanisms the page names are the modules there are.
    let named = page
        .split("the module of\n  its mechanism under `faults/kinds/` (")
        .nth(1)
        .and_then(|rest| rest.split("; or a new module").next())
        .expect("the page names the fault mechanisms");
    let named: BTreeSet<String> = named.split(',').map(|m| m.trim().to_string()).collect();
    let modules: BTreeSet<String> = std::fs::read_dir(repo().join("runner/src/faults/kinds"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().replace(".rs", ""))
        .filter(|m| m != "mod")
        .collect();
    assert_eq!(named, modules);
}

#[test]
fn a_check_is_its_type_its_registry_line_its_variant_and_its_row() {
    let page = read("docs/architecture.md");
    assert!(
        page.contains("- **A check**: four files."),
        "the page's count changed"
    );
    let registry = "verdict/src/checks/mod.rs";
    let listed = entries(registry, "pub static REGISTRY", r"&(\w+)::(\w+),");
    assert_eq!(listed.len(), chaos::checks::REGISTRY.len());
    named_only_by_its_module_and(registry, "verdict/src/checks", &listed);
}

#[test]
fn a_system_is_its_module_its_registry_line_its_profile_and_its_row() {
    let page = read("docs/architecture.md");
    assert!(
        page.contains("- **A system**: four files and a folder."),
        "the page's count changed"
    );
    let registry = "runner/src/systems/mod.rs";
    let info = Regex::new(r"(\w+)::INFO").unwrap();
    let block = read(registry);
    let line = block
        .lines()
        .find(|l| l.starts_with("pub const SYSTEMS"))
        .expect("the systems' registry");
    let sources = sources();
    let scenarios = read("docs/scenarios.md");
    for c in info.captures_iter(line) {
        let module = &c[1];
        let path = Regex::new(&format!(r"\b{module}::INFO\b")).unwrap();
        let naming: BTreeSet<&str> = sources
            .iter()
            .filter(|(_, text)| path.is_match(text))
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(naming, BTreeSet::from([registry]), "{module}::INFO");
    }
    for name in chaos::systems::names() {
        assert!(
            scenarios.contains(&format!("`{name}`")),
            "{name} has no row"
        );
    }
}
