//! Faults inside a node's JVM, through the Byteman agent its image loads at start
//! (`x-chaos: { jvm: PORT }`): a rule is loaded when the step fires and unloaded at its undo.
//! The rules call chaos's helper (images/ozone/byteman/ChaosHelper.java), which prints one
//! `CHAOS-JVM {json}` line per firing to the node's log, which the run keeps in logs/ (the
//! `reached: { jvm: ... }` predicate reads them back with [`Firing::parse`]). The harness speaks the agent's own text protocol over TCP (Byteman's
//! TransformListener: `LOAD` / `DELETE` / `LIST` / `DELETEALL`), so no JVM is started per fault.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Action, Applied, Cx, Fault, Healed, InForce, Mechanism, Shows};
use crate::cluster::Cluster;
use crate::error::{HarnessError, Result};
use crate::scenario::plan::ActionParams;
use crate::scenario::JvmSpec;

/// Delays a method (`delay:`, plus up to `jitter:` drawn per call).
pub struct JvmDelay;
/// Throws an exception from a method (`jvm.throw`).
pub struct JvmThrow;
/// Holds every thread that reaches a method until the rule is unloaded (its undo or a later
/// `jvm-unload` step): a rendezvous between the harness and the JVM.
pub struct JvmHold;
/// Changes nothing: records each call (its thread and `jvm.values`) in observed.jsonl.
pub struct JvmTrace;
/// A raw Byteman rule text (`jvm.rule`), for what the short forms do not say.
pub struct JvmRule;
/// Unloads rules: a step's own (its undo), or, as a step of its own, every rule on the node,
/// which releases every held thread.
pub struct JvmUnload;

/// The helper class every generated rule names (chaos-byteman.jar in the image).
const HELPER: &str = "chaos.byteman.ChaosHelper";
/// How long the agent may take to answer (a paused node never does).
const AGENT_PATIENCE: Duration = Duration::from_secs(10);
/// How long a load waits for its rule's first firing, which type-checks it.
const TYPE_CHECK_WAIT: Duration = Duration::from_millis(500);
/// Separates the names of a trace rule's values in the string the rule passes to the helper.
pub const VALUE_SEPARATOR: &str = ";;";

/// The name of the rule a step loads: the helper prints it with each firing, and the firings'
/// reader finds the step in it.
pub fn rule_name(step: usize) -> String {
    format!("chaos-step-{step}")
}

/// One line of chaos's Byteman helper: a thread reached a rule's place (or a hold ended).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Firing {
    pub rule: String,
    pub event: crate::scenario::JvmEvent,
    /// Which firing of its rule this is in that JVM (from 1).
    pub n: u64,
    pub thread: String,
    /// A trace's values, by the names the scenario gave them.
    #[serde(default)]
    pub values: std::collections::BTreeMap<String, String>,
    /// How long a hold held (released, let-go).
    #[serde(default)]
    pub held_ms: Option<u64>,
}

impl Firing {
    /// The firing a log line carries, if it is one of the helper's.
    pub fn parse(line: &str) -> Option<Firing> {
        let at = line.find("CHAOS-JVM {")?;
        serde_json::from_str(&line[at + "CHAOS-JVM ".len()..]).ok()
    }

    /// The step whose rule fired (None for a raw rule of another name).
    pub fn step(&self) -> Option<usize> {
        step_of_rule(&self.rule)
    }
}

/// The step a generated rule's name names.
pub fn step_of_rule(name: &str) -> Option<usize> {
    name.strip_prefix("chaos-step-")?.parse().ok()
}

/// Byteman's location clause of `at:` (entry when absent).
fn location(at: Option<&str>) -> std::result::Result<String, String> {
    let at = at.unwrap_or("entry").trim();
    let lower = at.to_ascii_lowercase();
    if lower == "entry" {
        return Ok("AT ENTRY".into());
    }
    if lower == "exit" {
        return Ok("AT EXIT".into());
    }
    if let Some(line) = lower.strip_prefix("line ") {
        return match line.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(format!("AT LINE {n}")),
            _ => Err(format!("`{at}`: a line is `line N` with N a line number")),
        };
    }
    if at.starts_with("AT ") || at.starts_with("AFTER ") {
        return Ok(at.to_string());
    }
    Err(format!(
        "`{at}` is not a place in a method: one of entry, exit, `line N`, or Byteman's own (`AT INVOKE name`, `AFTER INVOKE name`, ...)"
    ))
}

/// A Java string literal of `s` (no line breaks: validation refuses them).
fn java_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// What a fault's rule does when it fires, in Byteman's words.
fn action_of(
    fault: &str,
    spec: &JvmSpec,
    params: &ActionParams,
) -> std::result::Result<String, String> {
    Ok(match fault {
        "jvm-delay" => {
            let ms = |d: Option<Duration>| d.map_or(0, |d| d.as_millis().min(i32::MAX as u128));
            let lo = ms(params.delay);
            format!("chaosDelay({lo}, {})", lo + ms(params.jitter))
        }
        "jvm-throw" => {
            let class = spec.throw.as_deref().ok_or("jvm-throw needs `jvm.throw`")?;
            let message = spec
                .message
                .clone()
                .unwrap_or_else(|| "injected by chaos".to_string());
            format!(
                "chaosThrows();\n   throw new {class}({})",
                java_string(&message)
            )
        }
        "jvm-hold" => "chaosHold()".into(),
        "jvm-trace" => {
            if spec.values.is_empty() {
                "chaosTrace()".into()
            } else {
                format!(
                    "chaosTrace({}, {})",
                    java_string(&spec.values.join(VALUE_SEPARATOR)),
                    spec.values.join(", ")
                )
            }
        }
        other => return Err(format!("{other} writes no rule of its own")),
    })
}

/// The rule text a JVM fault loads at step `step`.
pub fn rule_text(
    fault: &str,
    step: usize,
    params: &ActionParams,
) -> std::result::Result<String, String> {
    let spec = params.jvm.as_ref().ok_or("a JVM fault needs `jvm:`")?;
    if fault == "jvm-rule" {
        return spec
            .rule
            .clone()
            .ok_or_else(|| "jvm-rule needs `jvm.rule`, the rule's text".to_string());
    }
    let class = spec.class.as_deref().ok_or("`jvm.class` is missing")?;
    let method = spec.method.as_deref().ok_or("`jvm.method` is missing")?;
    let (keyword, class) = match class.strip_prefix("interface ") {
        Some(interface) => ("INTERFACE", interface.trim()),
        None => ("CLASS", class),
    };
    Ok(format!(
        "RULE {name}\n{keyword} {class}\nMETHOD {method}\nHELPER {HELPER}\n{at}\nIF {condition}\nDO {action}\nENDRULE\n",
        name = rule_name(step),
        at = location(spec.at.as_deref())?,
        condition = spec.condition.as_deref().unwrap_or("true"),
        action = action_of(fault, spec, params)?,
    ))
}

/// What is wrong with a step's `jvm:` for `fault`, as validation says it (None: fine).
pub fn problem(fault: &str, spec: &JvmSpec) -> Option<String> {
    if fault == "jvm-unload" {
        let only_step = JvmSpec {
            step: spec.step,
            ..Default::default()
        };
        return match spec.step {
            None => Some("jvm-unload's `jvm:` is `{ step: K }`, the step whose rule goes (leave `jvm:` out to unload every rule)".into()),
            Some(_) if *spec != only_step => Some("jvm-unload takes only `jvm.step`".into()),
            Some(_) => None,
        };
    }
    if spec.step.is_some() {
        return Some(format!("`jvm.step` is for jvm-unload, not {fault}"));
    }
    let generated = fault != "jvm-rule";
    if !generated {
        if spec.rule.is_none() {
            return Some(
                "jvm-rule needs `jvm.rule`, a Byteman rule text (RULE ... ENDRULE)".into(),
            );
        }
        let text = spec.rule.as_deref().unwrap_or_default();
        if !text.lines().any(|l| l.trim_start().starts_with("RULE ")) {
            return Some("`jvm.rule` holds no `RULE name` line: a Byteman rule is RULE, CLASS, METHOD, AT, IF, DO, ENDRULE".into());
        }
        if spec.class.is_some() || spec.method.is_some() || spec.throw.is_some() {
            return Some("jvm-rule takes its class and method from `jvm.rule`, not `jvm.class` / `jvm.method` / `jvm.throw`".into());
        }
        return None;
    }
    if spec.rule.is_some() {
        return Some(format!("`jvm.rule` is for jvm-rule; {fault} writes its own rule from `jvm.class` and `jvm.method`"));
    }
    let name = |what: &str, v: &Option<String>| -> Option<String> {
        match v.as_deref().map(str::trim) {
            None | Some("") => Some(format!("{fault} needs `jvm.{what}`")),
            Some(v) if v.contains(char::is_whitespace) && !v.starts_with("interface ") => {
                Some(format!("`jvm.{what}`: `{v}` is not a Java name"))
            }
            _ => None,
        }
    };
    if let Some(p) = name("class", &spec.class).or_else(|| name("method", &spec.method)) {
        return Some(p);
    }
    if let Err(why) = location(spec.at.as_deref()) {
        return Some(format!("`jvm.at`: {why}"));
    }
    let texts = [&spec.condition, &spec.message, &spec.throw];
    if texts
        .iter()
        .any(|t| t.as_deref().is_some_and(|t| t.contains(['\n', '\r'])))
        || spec.values.iter().any(|v| v.contains(['\n', '\r']))
    {
        return Some("`jvm:` values are one line each".into());
    }
    match fault {
        "jvm-throw" if spec.throw.is_none() => {
            return Some(
                "jvm-throw needs `jvm.throw`, the exception's class (java.io.IOException)".into(),
            )
        }
        "jvm-trace" if spec.values.len() > 4 => {
            return Some(format!(
                "a trace records at most 4 values, not {}",
                spec.values.len()
            ))
        }
        _ => {}
    }
    if spec
        .values
        .iter()
        .any(|v| v.contains(VALUE_SEPARATOR) || v.trim().is_empty())
    {
        return Some(format!(
            "`jvm.values`: each is one Byteman expression, without `{VALUE_SEPARATOR}`"
        ));
    }
    if fault != "jvm-throw" && (spec.throw.is_some() || spec.message.is_some()) {
        return Some(format!(
            "`jvm.throw` and `jvm.message` are for jvm-throw, not {fault}"
        ));
    }
    if fault != "jvm-trace" && !spec.values.is_empty() {
        return Some(format!("`jvm.values` are for jvm-trace, not {fault}"));
    }
    None
}

/// One command to a node's agent and its whole answer (the agent closes the connection after
/// it). An answer with `ERROR` or `EXCEPTION` in it is an error that keeps the answer.
pub async fn agent(cluster: &Cluster, node: &str, command: &str) -> Result<String> {
    let port = cluster
        .node(node)
        .and_then(|n| n.jvm_agent)
        .ok_or_else(|| {
            HarnessError::infra(format!(
                "node {node} runs no JVM agent (x-chaos: {{ jvm: PORT }})"
            ))
        })?;
    let addr = cluster.direct_endpoint(node, port).ok_or_else(|| {
        HarnessError::infra(format!(
            "node {node}: the JVM agent's port {port} is not published (ports: [\"127.0.0.1::{port}\"])"
        ))
    })?;
    let talk = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        stream.write_all(command.as_bytes()).await?;
        stream.flush().await?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await?;
        std::io::Result::Ok(answer)
    };
    let answer = match tokio::time::timeout(AGENT_PATIENCE, talk).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => {
            return Err(HarnessError::infra(format!(
                "node {node}: the JVM agent at {addr} does not answer: {e}"
            )))
        }
        Err(_) => {
            return Err(HarnessError::infra(format!(
                "node {node}: the JVM agent gave no answer within {} s (is the node paused?)",
                AGENT_PATIENCE.as_secs()
            )))
        }
    };
    // DELETEALL on a JVM with no rule left says so as an error: nothing to undo is not one.
    let nothing_to_remove = answer.contains("No rule scripts to remove");
    if !nothing_to_remove
        && answer
            .lines()
            .any(|l| l.starts_with("ERROR") || l.starts_with("EXCEPTION"))
    {
        let first: Vec<&str> = answer
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("\tat "))
            .take(4)
            .collect();
        return Err(HarnessError::infra(format!(
            "node {node}: the JVM refused the rule: {}",
            first.join(" / ")
        )));
    }
    Ok(answer)
}

/// The agent's framing of rule texts for `LOAD` or `DELETE`.
fn scripts(verb: &str, name: &str, text: &str) -> String {
    let text = text.trim_end_matches('\n');
    format!("{verb}\nSCRIPT {name}\n{text}\nENDSCRIPT\nEND{verb}\n")
}

/// The rules a text names (`RULE name` lines).
fn rule_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("RULE "))
        .map(|n| n.trim().to_string())
        .collect()
}

/// What `LIST` says of one rule: from its RULE line to the next rule's.
fn block_of<'a>(listing: &'a str, name: &str) -> Option<&'a str> {
    let start = listing.find(&format!("RULE {name}\n"))?;
    let rest = &listing[start..];
    let end = rest[1..].find("\nRULE ").map_or(rest.len(), |i| i + 1);
    Some(&rest[..end])
}

/// Whether every rule in `names` has been type-checked (fired once), well or not.
fn all_checked(listing: &str, names: &[String]) -> bool {
    names.iter().all(|name| {
        block_of(listing, name).is_some_and(|b| {
            b.contains("compiled successfully")
                || b.contains("failed to compile")
                || b.contains("threw ")
        })
    })
}

/// What `LIST` says of each rule in `names`: injected somewhere, or why not (its
/// transformation threw or failed to compile, or it matched no loaded method).
fn injection(listing: &str, names: &[String]) -> std::result::Result<(), String> {
    for name in names {
        let Some(block) = block_of(listing, name) else {
            return Err(format!("rule `{name}` is not loaded"));
        };
        if let Some(i) = block
            .find("threw ")
            .or_else(|| block.find("failed to compile"))
        {
            // Byteman type-checks a rule at its first firing: "failed to compile" with no
            // reason here; the node's log has Byteman's own.
            let why: String = block[i..].lines().take(2).collect::<Vec<_>>().join(" ");
            return Err(format!("rule `{name}`: {why}"));
        }
        if !block.contains("Transformed in:") {
            return Err(format!(
                "rule `{name}` was injected nowhere: no class the JVM has loaded has that class and method (a class not loaded yet takes no rule either)"
            ));
        }
    }
    Ok(())
}

/// Loads `text` into `node`'s JVM and makes sure every rule in it took: one that went nowhere
/// is unloaded again and the step fails, saying why.
async fn load(cluster: &Cluster, node: &str, step: usize, text: &str) -> Result<()> {
    let script = format!("chaos-step-{step}.btm");
    agent(cluster, node, &scripts("LOAD", &script, text)).await?;
    cluster.note_in_force("jvm", node, true);
    let names = rule_names(text);
    let mut listing = agent(cluster, node, "LIST\n").await?;
    // A rule is type-checked when it first fires: a method called often has fired by half a
    // second, so a rule that does not type-check is refused here rather than doing nothing.
    if !all_checked(&listing, &names) {
        tokio::time::sleep(TYPE_CHECK_WAIT).await;
        listing = agent(cluster, node, "LIST\n").await?;
    }
    if let Err(why) = injection(&listing, &names) {
        let _ = agent(cluster, node, &scripts("DELETE", &script, text)).await;
        return Err(HarnessError::infra(format!("node {node}: {why}")));
    }
    Ok(())
}

/// Applies a loading JVM fault on every target; faults.jsonl's detail keeps the rule.
fn load_on_targets<'a>(fault: &'static str, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
    Box::pin(async move {
        let text = match rule_text(fault, cx.step, cx.params) {
            Ok(text) => text,
            Err(why) => return (Err(HarnessError::infra(why)), None),
        };
        let detail = Some(json!({ "rule": text }));
        let (outcome, _) =
            super::on_each(cx.targets, |node| load(cx.cluster(), node, cx.step, &text)).await;
        (outcome, detail)
    })
}

macro_rules! loading_fault {
    ($type:ident, $name:literal, $takes:expr, $needs:expr) => {
        impl Fault for $type {
            fn name(&self) -> &'static str {
                $name
            }
            fn undo(&self) -> Option<Action> {
                Some(Action::of(&JvmUnload))
            }
            fn mechanism(&self) -> Mechanism {
                Mechanism::Jvm
            }
            fn takes(&self) -> &'static [&'static str] {
                $takes
            }
            fn needs(&self) -> &'static [&'static str] {
                $needs
            }
            fn fatal_when_refused(&self) -> bool {
                true
            }
            fn in_force(&self) -> InForce {
                InForce::UntilUndoOrFinalHeal
            }
            fn shows(&self) -> Shows {
                Shows::Mark {
                    what: $name,
                    opens: Some($name),
                    closes: &[],
                }
            }
            fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
                load_on_targets($name, cx)
            }
        }
    };
}

loading_fault!(
    JvmDelay,
    "jvm-delay",
    &["jvm", "delay", "jitter"],
    &["jvm", "delay"]
);
loading_fault!(JvmThrow, "jvm-throw", &["jvm"], &["jvm"]);
loading_fault!(JvmHold, "jvm-hold", &["jvm"], &["jvm"]);
loading_fault!(JvmTrace, "jvm-trace", &["jvm"], &["jvm"]);
loading_fault!(JvmRule, "jvm-rule", &["jvm"], &["jvm"]);

impl Fault for JvmUnload {
    fn name(&self) -> &'static str {
        "jvm-unload"
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Jvm
    }
    fn in_force(&self) -> InForce {
        InForce::Instant
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "jvm-unload",
            opens: None,
            closes: &[
                "jvm-delay",
                "jvm-throw",
                "jvm-hold",
                "jvm-trace",
                "jvm-rule",
            ],
        }
    }
    fn takes(&self) -> &'static [&'static str] {
        &["jvm"]
    }
    /// As an undo it carries its step's `jvm:`: that step's rules go. As a step of its own,
    /// the rule of step `jvm.step`, or with no `jvm:` every rule on the node.
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move {
            let delete_generated = |step: usize| {
                scripts(
                    "DELETE",
                    &format!("chaos-step-{step}.btm"),
                    &format!("RULE {}\nENDRULE", rule_name(step)),
                )
            };
            let command = match cx.params.jvm.as_ref() {
                Some(JvmSpec { step: Some(k), .. }) => delete_generated(*k),
                Some(JvmSpec {
                    rule: Some(raw), ..
                }) => scripts("DELETE", &format!("chaos-step-{}.btm", cx.step), raw),
                Some(_) => delete_generated(cx.step),
                None => "DELETEALL\n".to_string(),
            };
            if cx.params.jvm.is_none() {
                for node in cx.targets {
                    cx.cluster().note_in_force("jvm", node, false);
                }
            }
            let (command, cluster) = (&command, cx.cluster());
            super::on_each(cx.targets, |node| async move {
                agent(cluster, node, command).await.map(|_| ())
            })
            .await
        })
    }
    /// Every rule on every node with an agent goes, so no thread stays held into the final
    /// reads; a node that is down has no rule left to unload.
    fn final_heal<'a>(&'a self, cluster: &'a Cluster) -> BoxFuture<'a, Vec<Healed>> {
        Box::pin(async move {
            let mut healed = Vec::new();
            for node in cluster.in_force("jvm") {
                let outcome = agent(cluster, &node, "DELETEALL\n").await.map(|_| ());
                healed.push((node, "jvm-unload", outcome));
            }
            healed
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(spec: JvmSpec) -> ActionParams {
        ActionParams {
            jvm: Some(spec),
            delay: Some(Duration::from_millis(200)),
            jitter: Some(Duration::from_millis(300)),
            ..Default::default()
        }
    }

    fn spec(class: &str, method: &str) -> JvmSpec {
        JvmSpec {
            class: Some(class.into()),
            method: Some(method.into()),
            ..Default::default()
        }
    }

    #[test]
    fn each_short_form_writes_its_rule() {
        let p = params(spec("org.x.StateMachine", "applyTransaction"));
        assert_eq!(
            rule_text("jvm-delay", 3, &p).unwrap(),
            "RULE chaos-step-3\nCLASS org.x.StateMachine\nMETHOD applyTransaction\nHELPER chaos.byteman.ChaosHelper\nAT ENTRY\nIF true\nDO chaosDelay(200, 500)\nENDRULE\n"
        );
        assert!(rule_text("jvm-hold", 0, &p)
            .unwrap()
            .contains("\nDO chaosHold()\n"));
        let mut s = spec("org.x.Y", "run");
        s.at = Some("exit".into());
        s.condition = Some("$1 > 100".into());
        s.values = vec!["$1".into(), "$0.applied".into()];
        let text = rule_text("jvm-trace", 1, &params(s)).unwrap();
        assert!(text.contains("\nAT EXIT\nIF $1 > 100\n"), "{text}");
        assert!(
            text.contains("DO chaosTrace(\"$1;;$0.applied\", $1, $0.applied)"),
            "{text}"
        );
        let mut s = spec("interface org.x.Z", "close");
        s.at = Some("line 42".into());
        s.throw = Some("java.io.IOException".into());
        s.message = Some("disk \"gone\"".into());
        let text = rule_text("jvm-throw", 7, &params(s)).unwrap();
        assert!(text.contains("INTERFACE org.x.Z\n"), "{text}");
        assert!(text.contains("AT LINE 42\n"), "{text}");
        assert!(
            text.contains(
                "DO chaosThrows();\n   throw new java.io.IOException(\"disk \\\"gone\\\"\")"
            ),
            "{text}"
        );
        let raw = JvmSpec {
            rule: Some(
                "RULE mine\nCLASS A\nMETHOD b\nAT ENTRY\nIF true\nDO traceln(\"x\")\nENDRULE"
                    .into(),
            ),
            ..Default::default()
        };
        assert_eq!(
            rule_text("jvm-rule", 2, &params(raw.clone())).unwrap(),
            raw.rule.clone().unwrap()
        );
        assert_eq!(rule_names(raw.rule.as_deref().unwrap()), ["mine"]);
        assert_eq!(step_of_rule(&rule_name(12)), Some(12));
    }

    #[test]
    fn a_helper_line_is_a_firing() {
        let line = r#"2026-12-05 12:00:01 CHAOS-JVM {"rule":"chaos-step-4","event":"fired","n":2,"thread":"om-apply","ms":1,"values":{"$1":"17"}}"#;
        let f = Firing::parse(line).unwrap();
        assert_eq!(
            (f.step(), f.event, f.n),
            (Some(4), crate::scenario::JvmEvent::Fired, 2)
        );
        assert_eq!(f.values["$1"], "17");
        let held = r#"CHAOS-JVM {"rule":"chaos-step-1","event":"released","n":3,"thread":"t","ms":1,"held_ms":5012}"#;
        assert_eq!(Firing::parse(held).unwrap().held_ms, Some(5012));
        assert!(Firing::parse("INFO om: CHAOS-JVM {broken").is_none());
        assert!(Firing::parse("INFO om: started").is_none());
    }

    #[test]
    fn places_and_problems() {
        assert_eq!(
            location(Some("AFTER INVOKE flush")).unwrap(),
            "AFTER INVOKE flush"
        );
        assert!(location(Some("line 0")).is_err());
        assert!(location(Some("middle"))
            .unwrap_err()
            .contains("entry, exit"));
        assert!(problem("jvm-throw", &spec("A", "b"))
            .unwrap()
            .contains("jvm.throw"));
        assert!(problem("jvm-hold", &JvmSpec::default())
            .unwrap()
            .contains("jvm.class"));
        assert!(problem("jvm-rule", &spec("A", "b"))
            .unwrap()
            .contains("jvm.rule"));
        let mut s = spec("A", "b");
        s.values = vec!["$1".into()];
        assert!(problem("jvm-hold", &s).unwrap().contains("jvm-trace"));
        assert_eq!(problem("jvm-trace", &s), None);
        s.values = vec!["a".into(); 5];
        assert!(problem("jvm-trace", &s).unwrap().contains("at most 4"));
        let unload = JvmSpec {
            step: Some(2),
            ..Default::default()
        };
        assert_eq!(problem("jvm-unload", &unload), None);
        assert!(problem("jvm-unload", &JvmSpec::default())
            .unwrap()
            .contains("step: K"));
        assert!(problem("jvm-unload", &spec("A", "b"))
            .unwrap()
            .contains("step: K"));
        assert!(problem(
            "jvm-hold",
            &JvmSpec {
                step: Some(1),
                ..spec("A", "b")
            }
        )
        .unwrap()
        .contains("jvm-unload"));
    }

    #[test]
    fn a_listing_says_whether_each_rule_took() {
        let names = vec!["chaos-step-1".to_string()];
        let took = "# File chaos-step-1.btm line 1\nRULE chaos-step-1\nCLASS A\nENDRULE\nTransformed in:\nloader: app\ntrigger method: A.b()\ncompiled successfully\n";
        assert_eq!(injection(took, &names), Ok(()));
        let nowhere = "# File x line 1\nRULE chaos-step-1\nCLASS A\nENDRULE\n";
        assert!(injection(nowhere, &names)
            .unwrap_err()
            .contains("injected nowhere"));
        let threw = "RULE chaos-step-1\nENDRULE\nTransformed in:\nloader: app\ntrigger method: A.b()\nthrew org.jboss.byteman.rule.exception.TypeException: unknown method foo\n";
        assert!(injection(threw, &names)
            .unwrap_err()
            .contains("TypeException"));
        assert!(injection("no rules installed\n", &names)
            .unwrap_err()
            .contains("not loaded"));
        assert!(
            all_checked(took, &names)
                && all_checked(threw, &names)
                && !all_checked(nowhere, &names)
        );
    }
}
