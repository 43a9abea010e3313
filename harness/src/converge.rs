//! The `converge` check: after healing and settling, every node's applied index is within a
//! bound of the highest (issue 7: a follower that stays behind after a snapshot install is a
//! violation, with the figures). The run writes converge.json from the adapter's probe
//! ([`crate::systems::SystemAdapter::applied_indexes`]); the check reads only the run folder, so
//! `chaos check RUN_DIR` re-checks it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::scenario::CheckSpec;
use crate::systems::SystemAdapter;

pub const FILE: &str = "converge.json";

/// Asks the adapter for every node's applied index and writes converge.json (nothing for a
/// system without the probe). A node that does not answer is written as null.
pub async fn record(adapter: &dyn SystemAdapter, run_dir: &Path) {
    let indexes = adapter.applied_indexes().await;
    if indexes.is_empty() {
        return;
    }
    let text = serde_json::to_string_pretty(&json!({ "applied": indexes })).unwrap_or_default();
    if let Err(e) = std::fs::write(run_dir.join(FILE), text) {
        tracing::warn!("cannot write {FILE}: {e}");
    }
}

/// The verdict of `converge: { bound }` on a run folder.
pub fn check(run_dir: &Path, bound: u64) -> Value {
    let path = run_dir.join(FILE);
    let applied: Option<BTreeMap<String, Option<u64>>> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| serde_json::from_value(v["applied"].clone()).ok());
    let Some(applied) = applied else {
        return json!({
            "name": "converge",
            "check": "converge",
            "verdict": "unknown",
            "summary": format!("converge: no applied indexes were recorded ({FILE} is missing or unreadable)"),
        });
    };
    judge(&applied, bound)
}

/// The verdict on recorded indexes: illegal when a node is more than `bound` behind the highest,
/// unknown when a node did not answer (and no other is behind), ok otherwise.
pub fn judge(applied: &BTreeMap<String, Option<u64>>, bound: u64) -> Value {
    let top = applied.values().flatten().max().copied().unwrap_or(0);
    let behind: Vec<(&String, u64)> = applied
        .iter()
        .filter_map(|(n, a)| a.filter(|a| top.saturating_sub(*a) > bound).map(|a| (n, a)))
        .collect();
    let silent: Vec<&String> = applied
        .iter()
        .filter(|(_, a)| a.is_none())
        .map(|(n, _)| n)
        .collect();
    let figures = applied
        .iter()
        .map(|(n, a)| match a {
            Some(a) => format!("{n} {a}"),
            None => format!("{n} no answer"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let (verdict, summary) = if !behind.is_empty() {
        let who = behind
            .iter()
            .map(|(n, a)| format!("{n} at {a} ({} behind)", top - a))
            .collect::<Vec<_>>()
            .join(", ");
        (
            "illegal",
            format!("after healing and settling, {who}: the highest applied index is {top}, the bound {bound} (applied: {figures})"),
        )
    } else if !silent.is_empty() {
        (
            "unknown",
            format!(
                "converge: no applied index from {} (applied: {figures})",
                silent
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    } else {
        (
            "ok",
            format!("every node's applied index is within {bound} of {top} (applied: {figures})"),
        )
    };
    json!({
        "name": format!("converge (bound {bound})"),
        "check": "converge",
        "verdict": verdict,
        "summary": summary,
        "detail": { "applied": applied, "highest": top, "bound": bound },
    })
}

/// What run_checks answers for `converge` when it has no run folder.
pub fn needs_run_folder() -> Value {
    json!({
        "name": "converge",
        "check": "converge",
        "verdict": "unknown",
        "summary": format!("converge reads a run folder's {FILE}"),
    })
}

/// Replaces the placeholders of converge checks (one result per check, in order).
pub fn fill(run_dir: &Path, specs: &[CheckSpec], results: &mut [Value]) {
    for (spec, result) in specs.iter().zip(results.iter_mut()) {
        if let CheckSpec::Converge(c) = spec {
            *result = check(run_dir, c.bound);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(list: &[(&str, Option<u64>)]) -> BTreeMap<String, Option<u64>> {
        list.iter().map(|(n, a)| (n.to_string(), *a)).collect()
    }

    #[test]
    fn a_node_far_behind_is_a_violation_with_the_figures() {
        let v = judge(
            &applied(&[
                ("om1", Some(1523)),
                ("om2", Some(1520)),
                ("om3", Some(1087)),
            ]),
            100,
        );
        assert_eq!(v["verdict"], "illegal");
        let s = v["summary"].as_str().unwrap();
        assert!(s.contains("om3 at 1087 (436 behind)"), "{s}");
        assert!(s.contains("highest applied index is 1523"), "{s}");
    }

    #[test]
    fn nodes_within_the_bound_pass_and_a_silent_node_is_unknown() {
        let ok = judge(&applied(&[("om1", Some(1523)), ("om3", Some(1500))]), 100);
        assert_eq!(ok["verdict"], "ok");
        let silent = judge(&applied(&[("om1", Some(1523)), ("om3", None)]), 100);
        assert_eq!(silent["verdict"], "unknown");
        assert!(silent["summary"].as_str().unwrap().contains("om3"));
    }

    #[test]
    fn the_check_reads_the_run_folder() {
        let dir = std::env::temp_dir().join(format!("chaos-converge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(check(&dir, 10)["verdict"], "unknown");
        std::fs::write(dir.join(FILE), r#"{"applied": {"om1": 50, "om2": 20}}"#).unwrap();
        assert_eq!(check(&dir, 10)["verdict"], "illegal");
        assert_eq!(check(&dir, 40)["verdict"], "ok");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
