//! The `converge` check: after healing and settling, every node's applied index is within a
//! bound of the highest (issue 7: a follower that stays behind after a snapshot install is a
//! violation, with the figures), and, with `lookups: true`, every node gives the same answer to a
//! lookup of every key the workload touched (replicas that diverge: one OM holds a file open at
//! another length). The runner's `observe::record_convergence` writes converge.json from the
//! adapter's probes after the final phase; the check reads only the run folder, so
//! `chaos check RUN_DIR` re-checks it.

use std::collections::BTreeMap;
use std::path::Path;

use checker::Verdict;
use serde_json::{json, Value};

use super::kind::{not_its_spec, Check, Inputs};
use crate::error::Result;
use crate::run_folder::{CheckResult, Converged};
use crate::scenario::{CheckKind, CheckSpec, ConvergeSpec};

pub const FILE: &str = crate::run_folder::CONVERGE;

pub use crate::run_folder::Lookups;

pub struct Converge;

impl Check for Converge {
    fn kind(&self) -> CheckKind {
        CheckKind::Converge
    }

    fn inputs(&self) -> &'static [&'static str] {
        &[FILE]
    }

    fn without_run_folder(&self) -> Result<Vec<CheckResult>> {
        Ok(vec![CheckResult::new(
            CheckKind::Converge.name(),
            CheckKind::Converge.name(),
            Verdict::Unknown,
            format!("converge reads a run folder's {FILE}"),
        )])
    }

    fn run(&self, spec: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        let CheckSpec::Converge(spec) = spec else {
            return Err(not_its_spec(self, spec));
        };
        match inputs.run_dir {
            Some(dir) => Ok(vec![check(dir, spec)]),
            None => self.without_run_folder(),
        }
    }
}

/// The verdict of `converge: { bound, lookups }` on a run folder.
pub fn check(run_dir: &Path, spec: &ConvergeSpec) -> CheckResult {
    let recorded = Converged::read(run_dir).unwrap_or_default();
    let Some(applied) = recorded.applied else {
        return CheckResult::new(
            CheckKind::Converge.name(),
            CheckKind::Converge.name(),
            Verdict::Unknown,
            format!("converge: no applied indexes were recorded ({FILE} is missing or unreadable)"),
        );
    };
    let indexes = judge(&applied, spec.bound);
    if !spec.lookups {
        return indexes;
    }
    combine(
        indexes,
        judge_lookups(&recorded.lookups.unwrap_or_default()),
    )
}

/// One result of the two parts: the worse verdict, both summaries, both details.
fn combine(indexes: CheckResult, lookups: CheckResult) -> CheckResult {
    let rank = |v: Verdict| match v {
        Verdict::Illegal => 2,
        Verdict::Unknown => 1,
        Verdict::Ok => 0,
    };
    let worse = if rank(lookups.verdict) > rank(indexes.verdict) {
        lookups.verdict
    } else {
        indexes.verdict
    };
    let mut detail = indexes.detail.unwrap_or_default();
    detail["lookups"] = lookups.detail.unwrap_or_default();
    CheckResult::new(
        format!("{} with lookups", indexes.name),
        CheckKind::Converge.name(),
        worse,
        format!("{}; {}", lookups.summary, indexes.summary),
    )
    .with_detail(detail)
}

/// An answer that says nothing about the key (the node could not be asked).
fn is_no_answer(v: &Value) -> bool {
    v.is_null() || v.get("error").is_some()
}

/// A lookup answer as a person reads it: `length 2048, closed`, `absent`, ...
fn describe_answer(v: &Value) -> String {
    match (v.get("length").and_then(Value::as_u64), v.get("open")) {
        (Some(len), Some(Value::Bool(true))) => format!("length {len}, open"),
        (Some(len), Some(Value::Bool(false))) => format!("length {len}, closed"),
        (Some(len), _) => format!("length {len}"),
        _ => match v {
            Value::String(s) => s.clone(),
            Value::Null => "no answer".into(),
            other => other.to_string(),
        },
    }
}

/// The verdict on the nodes' lookups: illegal when two nodes answered a lookup of the same key
/// differently (each such key named with every node's answer), unknown when a node could not be
/// asked (and none disagree), ok when every node gave every key the same answer.
pub fn judge_lookups(lookups: &Lookups) -> CheckResult {
    let keys: std::collections::BTreeSet<&String> = lookups
        .values()
        .flat_map(|answers| answers.keys())
        .collect();
    let mut disagreements = Vec::new();
    let mut unasked = std::collections::BTreeSet::new();
    for key in &keys {
        let answers: Vec<(&String, &Value)> = lookups
            .iter()
            .map(|(node, a)| (node, a.get(*key).unwrap_or(&Value::Null)))
            .collect();
        let mut distinct: Vec<&Value> = Vec::new();
        for (node, answer) in &answers {
            if is_no_answer(answer) {
                unasked.insert(node.as_str());
            } else if !distinct.contains(answer) {
                distinct.push(answer);
            }
        }
        if distinct.len() > 1 {
            let who = answers
                .iter()
                .map(|(node, a)| format!("{node} {}", describe_answer(a)))
                .collect::<Vec<_>>()
                .join(", ");
            let by_node: BTreeMap<&String, &Value> = answers.iter().copied().collect();
            disagreements.push(json!({
                "key": key,
                "answers": by_node,
                "summary": format!("{key}: {who}"),
            }));
        }
    }
    let (verdict, summary) = if !disagreements.is_empty() {
        let first: Vec<&str> = disagreements
            .iter()
            .take(3)
            .filter_map(|d| d["summary"].as_str())
            .collect();
        (
            Verdict::Illegal,
            format!(
                "the nodes disagree on {} of {} keys after healing and settling: {}{}",
                disagreements.len(),
                keys.len(),
                first.join("; "),
                if disagreements.len() > 3 { "; ..." } else { "" }
            ),
        )
    } else if keys.is_empty() {
        (
            Verdict::Unknown,
            "converge: no lookups were recorded".to_string(),
        )
    } else if !unasked.is_empty() {
        (
            Verdict::Unknown,
            format!(
                "{} could not be asked (no disagreement among the others on {} keys)",
                unasked.into_iter().collect::<Vec<_>>().join(", "),
                keys.len()
            ),
        )
    } else {
        (
            Verdict::Ok,
            format!(
                "every node answers the same to a lookup of each of {} keys",
                keys.len()
            ),
        )
    };
    CheckResult::new(
        "converge lookups",
        CheckKind::Converge.name(),
        verdict,
        summary,
    )
    .with_detail(json!({ "disagreements": disagreements, "keys": keys.len() }))
}

/// The verdict on recorded indexes: illegal when a node is more than `bound` behind the highest,
/// unknown when a node did not answer (and no other is behind), ok otherwise.
pub fn judge(applied: &BTreeMap<String, Option<u64>>, bound: u64) -> CheckResult {
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
            Verdict::Illegal,
            format!("after healing and settling, {who}: the highest applied index is {top}, the bound {bound} (applied: {figures})"),
        )
    } else if !silent.is_empty() {
        (
            Verdict::Unknown,
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
            Verdict::Ok,
            format!("every node's applied index is within {bound} of {top} (applied: {figures})"),
        )
    };
    CheckResult::new(
        format!("converge (bound {bound})"),
        CheckKind::Converge.name(),
        verdict,
        summary,
    )
    .with_detail(json!({ "applied": applied, "highest": top, "bound": bound }))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The results as result.json holds them.
    fn judge(applied: &BTreeMap<String, Option<u64>>, bound: u64) -> Value {
        serde_json::to_value(super::judge(applied, bound)).unwrap()
    }

    fn judge_lookups(lookups: &Lookups) -> Value {
        serde_json::to_value(super::judge_lookups(lookups)).unwrap()
    }

    fn check(run_dir: &Path, spec: &ConvergeSpec) -> Value {
        serde_json::to_value(super::check(run_dir, spec)).unwrap()
    }

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
        let bound = |bound| ConvergeSpec {
            bound,
            lookups: false,
        };
        assert_eq!(check(&dir, &bound(10))["verdict"], "unknown");
        std::fs::write(dir.join(FILE), r#"{"applied": {"om1": 50, "om2": 20}}"#).unwrap();
        assert_eq!(check(&dir, &bound(10))["verdict"], "illegal");
        assert_eq!(check(&dir, &bound(40))["verdict"], "ok");
        // Asked for lookups that were not recorded: unknown, not ok.
        let with_lookups = ConvergeSpec {
            bound: 40,
            lookups: true,
        };
        assert_eq!(check(&dir, &with_lookups)["verdict"], "unknown");
        std::fs::write(
            dir.join(FILE),
            r#"{"applied": {"om1": 50, "om2": 48},
                "lookups": {"om1": {"f0": {"length": 2048, "open": false}},
                            "om2": {"f0": {"length": 1024, "open": true}}}}"#,
        )
        .unwrap();
        let v = check(&dir, &with_lookups);
        assert_eq!(v["verdict"], "illegal");
        assert!(v["summary"]
            .as_str()
            .unwrap()
            .contains("f0: om1 length 2048, closed, om2 length 1024, open"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn lookups(list: &[(&str, &str, Value)]) -> Lookups {
        let mut out = Lookups::new();
        for (node, key, answer) in list {
            out.entry(node.to_string())
                .or_default()
                .insert(key.to_string(), answer.clone());
        }
        out
    }

    #[test]
    fn replicas_that_answer_a_lookup_differently_are_a_violation() {
        let closed = json!({"length": 2048, "open": false});
        let v = judge_lookups(&lookups(&[
            ("om1", "f0", closed.clone()),
            ("om2", "f0", closed.clone()),
            ("om3", "f0", json!({"length": 1024, "open": true})),
            ("om1", "f1", closed.clone()),
            ("om2", "f1", closed.clone()),
            ("om3", "f1", closed.clone()),
        ]));
        assert_eq!(v["verdict"], "illegal");
        let s = v["summary"].as_str().unwrap();
        assert!(s.contains("disagree on 1 of 2 keys"), "{s}");
        assert!(s.contains("om3 length 1024, open"), "{s}");
        assert_eq!(v["detail"]["disagreements"][0]["key"], "f0");
    }

    #[test]
    fn the_same_answers_pass_and_an_unasked_node_is_unknown() {
        let closed = json!({"length": 2048, "open": false});
        let same = judge_lookups(&lookups(&[
            ("om1", "f0", closed.clone()),
            ("om2", "f0", closed.clone()),
            ("om3", "f0", closed.clone()),
            ("om1", "c1", json!("absent")),
            ("om2", "c1", json!("absent")),
            ("om3", "c1", json!("absent")),
        ]));
        assert_eq!(same["verdict"], "ok", "{same}");
        let unasked = judge_lookups(&lookups(&[
            ("om1", "f0", closed.clone()),
            ("om2", "f0", closed.clone()),
            (
                "om3",
                "f0",
                json!({"error": "could not make om3 the leader"}),
            ),
        ]));
        assert_eq!(unasked["verdict"], "unknown");
        assert!(unasked["summary"]
            .as_str()
            .unwrap()
            .starts_with("om3 could not be asked"));
        assert_eq!(judge_lookups(&Lookups::new())["verdict"], "unknown");
    }
}
