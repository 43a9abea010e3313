//! `chaos trace import` and `chaos trace play`: a model checker's counterexample (chaos-trace
//! reads it) and a mapping of its actions onto a cluster (mapping.rs) make a scenario that
//! `chaos run` plays: each action's fault steps, triggered in the trace's order, and one
//! `reached:` predicate per step, so the verdict can say how far the run followed the trace.
//! Data goes one way: trace + mapping + base scenario -> scenario text, validated as
//! `chaos lint` validates a scenario, before anything is written or started.

pub mod mapping;
mod scenario_text;
pub mod yaml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chaos_trace::{Format, Trace, TraceError, Value};
use serde_saphyr::{Location, Spanned};

use crate::scenario::{LoadedScenario, ScenarioError};
use mapping::{Case, Mapping};
use yaml::Fragment;

/// The keys of a fault step that say when it fires.
const TRIGGERS: &[&str] = &["at", "after", "on", "when", "every"];

/// A scenario imported from a trace: its name and its text.
#[derive(Debug)]
pub struct Imported {
    pub name: String,
    pub text: String,
    /// The base scenario's file: the imported one is validated as if beside it.
    pub base: PathBuf,
}

/// Where the problems of an import are said: the mapping's file.
struct Problems<'a> {
    file: &'a Path,
    list: Vec<ScenarioError>,
}

impl Problems<'_> {
    fn at(&mut self, location: &Location, path: impl Into<String>, message: impl Into<String>) {
        self.list.push(ScenarioError {
            file: self.file.to_path_buf(),
            line: location.line(),
            column: location.column(),
            path: path.into(),
            message: message.into(),
        });
    }
}

/// A trace that does not read, said as a scenario's problem is (`FILE:LINE:COL: PATH: MSG`).
fn trace_problem(e: TraceError) -> ScenarioError {
    let (line, column) = e
        .position
        .map_or((0, 0), |at| (at.line as u64, at.column as u64));
    ScenarioError {
        file: PathBuf::from(e.file),
        line,
        column,
        path: e.path,
        message: e.message,
    }
}

/// The word a scenario's `trace.format` records.
pub fn format_word(format: Format) -> &'static str {
    match format {
        Format::Tlc => "tlc",
        Format::TlcBefore2026 => "tlc-before-2026",
        Format::Itf => "itf",
    }
}

/// A parameter's value as patterns and placeholders see it: a string's text, an integer's
/// digits, anything else in Quint's notation.
fn value_text(value: &Value) -> String {
    match value {
        Value::Str(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `apply(call: 1)`, `restart`.
fn action_words(name: &str, params: &[(String, Value)]) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    let listed: Vec<String> = params
        .iter()
        .map(|(p, v)| format!("{p}: {}", value_text(v)))
        .collect();
    format!("{name}({})", listed.join(", "))
}

/// Reads the trace and the mapping, and imports the trace onto the mapping's base scenario;
/// every problem is returned, each located in its file.
pub fn import(trace_path: &Path, map_path: &Path) -> Result<Imported, Vec<ScenarioError>> {
    let mapping = mapping::read(map_path).map_err(|e| vec![e])?;
    let trace = chaos_trace::read_file(trace_path).map_err(|e| vec![trace_problem(e)])?;
    let mut problems = Problems {
        file: map_path,
        list: Vec::new(),
    };
    let base_path = tidy(
        &map_path
            .parent()
            .unwrap_or(Path::new("."))
            .join(&mapping.base.value),
    );
    if !base_path.is_file() {
        problems.at(
            &mapping.base.referenced,
            "base",
            format!(
                "{}: no such scenario file (a base is found from the mapping's folder)",
                base_path.display()
            ),
        );
        return Err(problems.list);
    }
    let base = crate::load::load(&base_path)?;
    check_nodes(&mapping, &base, &mut problems);
    let built = build(&trace, &mapping, &mut problems);
    if !problems.list.is_empty() {
        return Err(problems.list);
    }
    let name = match &mapping.name {
        Some(name) => name.value.clone(),
        None => format!("{}-trace", base.spec.name),
    };
    let origin = scenario_text::Origin {
        trace: trace_path,
        format: format_word(trace.format),
        map: map_path,
        base: &base_path,
    };
    let text = scenario_text::write(&base.text, &name, &mapping, &origin, &built);
    // Validated as `chaos lint` validates a scenario, as if it were beside its base (so its
    // compose file is found as the base's is); a problem in a step the mapping wrote is said at
    // the mapping's fragment.
    match crate::load::load_text(
        &base_path,
        text.clone(),
        crate::load::LoadOptions::default(),
    ) {
        Ok(_) => Ok(Imported {
            name,
            text,
            base: base_path,
        }),
        Err(errors) => Err(errors
            .into_iter()
            .map(|e| built.located(e, map_path))
            .collect()),
    }
}

/// `traces/x/../../scenarios/a.yaml` as `scenarios/a.yaml`: the `..` that follow a folder
/// name taken out, as the path is written (no link followed).
fn tidy(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut parts: Vec<Component> = Vec::new();
    for part in path.components() {
        match (part, parts.last()) {
            (Component::ParentDir, Some(Component::Normal(_))) => {
                parts.pop();
            }
            (Component::CurDir, Some(_)) => {}
            _ => parts.push(part),
        }
    }
    if parts.is_empty() {
        return PathBuf::from(".");
    }
    parts.iter().collect()
}

/// Every node `nodes:` names is one of the base cluster's.
fn check_nodes(mapping: &Mapping, base: &LoadedScenario, problems: &mut Problems) {
    for (id, node) in &mapping.nodes {
        if !base.nodes.contains(&node.value) {
            problems.at(
                &node.referenced,
                format!("nodes.{id}"),
                format!(
                    "{} is not a node of the base's cluster (profile {} of {}: {})",
                    chaos_core::shown::shown(&node.value),
                    chaos_core::shown::shown(&base.profile),
                    base.compose_path.display(),
                    base.nodes.join(", ")
                ),
            );
        }
    }
}

/// A fault step of the imported scenario, with the fragment of the mapping it came from.
pub struct BuiltStep {
    /// Trigger keys first, then the fragment's.
    pub step: Fragment,
    /// The trace's step (1-based) and its action, for a comment.
    pub trace_step: usize,
    pub action: String,
    pub from: Location,
    pub from_path: String,
}

/// One `reached:` predicate, a trace step's.
pub struct BuiltPredicate {
    pub name: String,
    pub predicate: Fragment,
    pub action: String,
    pub from: Location,
    pub from_path: String,
}

/// The trace's fault steps and predicates, in order.
pub struct Built {
    pub faults: Vec<BuiltStep>,
    pub reached: Vec<BuiltPredicate>,
}

impl Built {
    /// A problem of the imported scenario in a fault step or a predicate the mapping wrote is
    /// said at the mapping's fragment (`faults[3].target` -> the fragment of `actions.restart[0]`
    /// with `.target`); any other keeps its place in the imported text.
    fn located(&self, e: ScenarioError, map_path: &Path) -> ScenarioError {
        let from = |location: &Location, path: &str, rest: &str, step: String| ScenarioError {
            file: map_path.to_path_buf(),
            line: location.line(),
            column: location.column(),
            path: format!("{path}{rest}"),
            message: format!("{step}: {}", e.message),
        };
        if let Some(rest) = e.path.strip_prefix("faults[") {
            if let Some((index, rest)) = rest.split_once(']') {
                if let Some(step) = index.parse::<usize>().ok().and_then(|i| self.faults.get(i)) {
                    let said = format!(
                        "fault step {index} (trace step {}, {})",
                        step.trace_step, step.action
                    );
                    return from(&step.from, &step.from_path, rest, said);
                }
            }
        }
        if let Some(rest) = e.path.strip_prefix("reached.") {
            let (name, rest) = rest.split_at(rest.find('.').unwrap_or(rest.len()));
            if let Some(p) = self.reached.iter().find(|p| p.name == name) {
                let said = format!("predicate {name} ({})", p.action);
                return from(&p.from, &p.from_path, rest, said);
            }
        }
        ScenarioError {
            message: format!("in the imported scenario: {}", e.message),
            ..e
        }
    }
}

/// What the placeholders of a step's fragments stand for.
struct Context<'a> {
    params: &'a [(String, Value)],
    nodes: &'a indexmap::IndexMap<String, Spanned<String>>,
    trace_step: usize,
    /// This step's first fault step, if it has one.
    own_fault: Option<usize>,
    /// The last fault step each earlier action made.
    faults_of: &'a BTreeMap<String, usize>,
}

impl Context<'_> {
    /// The value of placeholder `name` (`call`, `node:o`, `fault`, `fault:restart`, `step`).
    fn value(&self, name: &str) -> Result<Fragment, String> {
        let param = |p: &str| {
            self.params
                .iter()
                .find(|(n, _)| n == p)
                .map(|(_, v)| value_text(v))
        };
        if name == "fault" {
            return self
                .own_fault
                .map(|i| Fragment::Int(i as i128))
                .ok_or_else(|| {
                    "`{fault}` is this step's fault step, and this case has none".to_string()
                });
        }
        if name == "step" {
            return Ok(Fragment::Int(self.trace_step as i128));
        }
        if let Some(action) = name.strip_prefix("fault:") {
            return self
                .faults_of
                .get(action)
                .map(|i| Fragment::Int(*i as i128))
                .ok_or_else(|| {
                    format!("`{{{name}}}`: no earlier step of the trace made a fault step for `{action}`")
                });
        }
        if let Some(p) = name.strip_prefix("node:") {
            let id = param(p).ok_or_else(|| self.no_param(p))?;
            return self
                .nodes
                .get(&id)
                .map(|node| Fragment::Str(node.value.clone()))
                .ok_or_else(|| {
                    format!(
                        "`{{{name}}}`: parameter {p} is {}, which `nodes:` does not map (it maps {})",
                        chaos_core::shown::shown(&id),
                        self.nodes.keys().cloned().collect::<Vec<_>>().join(", ")
                    )
                });
        }
        match self.params.iter().find(|(n, _)| n == name) {
            Some((_, Value::Int(n))) => Ok(Fragment::Int(*n)),
            Some((_, v)) => Ok(Fragment::Str(value_text(v))),
            None => Err(self.no_param(name)),
        }
    }

    fn no_param(&self, name: &str) -> String {
        let params: Vec<&str> = self.params.iter().map(|(n, _)| n.as_str()).collect();
        format!(
            "`{{{name}}}`: the step has no parameter {name} (its parameters: {}; placeholders: \
             {{PARAM}}, {{node:PARAM}}, {{fault}}, {{fault:ACTION}}, {{step}})",
            if params.is_empty() {
                "none".to_string()
            } else {
                params.join(", ")
            }
        )
    }

    /// A string's placeholders filled in; a string that is one placeholder takes its value's
    /// type (`"{fault}"` -> 4).
    fn fill(&self, text: &str) -> Result<Fragment, String> {
        if let Some(name) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            if !name.contains(['{', '}']) {
                return self.value(name);
            }
        }
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                out.push_str(&rest[open..]);
                rest = "";
                break;
            };
            let name = &rest[open + 1..open + close];
            match self.value(name)? {
                Fragment::Str(s) => out.push_str(&s),
                other => out.push_str(&other.to_string()),
            }
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        Ok(Fragment::Str(out))
    }
}

/// The case of `cases` that covers a step, or why none does.
fn covering<'a>(
    cases: &'a [Spanned<Case>],
    params: &[(String, Value)],
    taken: &[&str],
) -> Result<(usize, &'a Case), String> {
    let covers = |case: &Case| {
        params.len() == case.params.len()
            && params.iter().all(|(name, value)| {
                case.params
                    .get(name)
                    .is_some_and(|p| p.value.matches(&value_text(value)))
            })
            && case
                .after
                .as_ref()
                .is_none_or(|a| taken.contains(&a.value.as_str()))
    };
    if let Some(i) = cases.iter().position(|c| covers(&c.value)) {
        return Ok((i, &cases[i].value));
    }
    let named = |p: &str| cases.iter().any(|c| c.value.params.contains_key(p));
    if let Some((p, _)) = params.iter().find(|(p, _)| !named(p)) {
        return Err(format!(
            "the mapping does not cover its parameter {p}: no case names it in `params:`"
        ));
    }
    let listed: Vec<String> = cases
        .iter()
        .map(|c| {
            let mut words: Vec<String> = c
                .value
                .params
                .iter()
                .map(|(n, p)| format!("{n}: {}", p.value))
                .collect();
            if let Some(after) = &c.value.after {
                words.push(format!("after {}", after.value));
            }
            format!("{{ {} }}", words.join(", "))
        })
        .collect();
    Err(format!(
        "no case covers its parameters (the cases: {})",
        listed.join(", ")
    ))
}

/// A trigger that fires on what `observed` watches, where the engine can: a log line
/// (`on: { log }`), a JVM rule's firing (`on: { jvm }`), a role (`when:`). `None` for a
/// predicate no trigger can watch (the history, a step, a probe of a metric).
fn trigger_on(observed: &Fragment) -> Option<(String, Fragment)> {
    let node = |f: &Fragment| match f.get("node") {
        Some(Fragment::Str(n)) => vec![("node".to_string(), Fragment::Str(n.clone()))],
        _ => Vec::new(),
    };
    let keep = |f: &Fragment, keys: &[&str]| -> Vec<(String, Fragment)> {
        keys.iter()
            .filter_map(|k| f.get(k).map(|v| (k.to_string(), v.clone())))
            .collect()
    };
    if let Some(log) = observed.get("log") {
        let mut fields = node(log);
        fields.extend(keep(log, &["regex"]));
        let on = Fragment::Map(vec![("log".into(), Fragment::Map(fields))]);
        return Some(("on".into(), on));
    }
    if let Some(jvm) = observed.get("jvm") {
        let mut fields = keep(jvm, &["step", "event"]);
        fields.extend(node(jvm));
        let on = Fragment::Map(vec![("jvm".into(), Fragment::Map(fields))]);
        return Some(("on".into(), on));
    }
    if let Some(probe) = observed.get("probe") {
        if let Some(role) = probe.get("role") {
            let mut fields = node(probe);
            fields.push(("role".into(), role.clone()));
            return Some(("when".into(), Fragment::Map(fields)));
        }
    }
    None
}

/// The fault steps and predicates of the trace's steps, in order.
fn build(trace: &Trace, mapping: &Mapping, problems: &mut Problems) -> Built {
    let mut built = Built {
        faults: Vec::new(),
        reached: Vec::new(),
    };
    let mut faults_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut taken: Vec<&str> = Vec::new();
    // The previous step's predicate, which the next fault step is triggered by.
    let mut previous: Option<(usize, String, Fragment)> = None;
    let n = trace.steps.len();
    let width = n.to_string().len().max(2);
    for (i, step) in trace.steps.iter().enumerate() {
        let number = i + 1;
        let Some(name) = step.action.name.as_deref() else {
            problems.at(
                &mapping.actions.referenced,
                "actions",
                format!(
                    "step {number} of the trace names no action (an ITF trace names them with \
                     Quint's --mbt, `mbt::actionTaken`); a mapping maps actions by their names"
                ),
            );
            return built;
        };
        let words = action_words(name, &step.action.params);
        let Some(cases) = mapping.actions.value.get(name) else {
            let mapped: Vec<&str> = mapping.actions.value.keys().map(String::as_str).collect();
            problems.at(
                &mapping.actions.referenced,
                "actions",
                format!(
                    "step {number} of the trace takes action {}, which the mapping does not map \
                     (it maps {})",
                    chaos_core::shown::shown(name),
                    mapped.join(", ")
                ),
            );
            previous = None;
            continue;
        };
        let (index, case) = match covering(&cases.value, &step.action.params, &taken) {
            Ok(found) => found,
            Err(why) => {
                problems.at(
                    &cases.referenced,
                    format!("actions.{name}"),
                    format!("step {number} of the trace, {words}: {why}"),
                );
                previous = None;
                continue;
            }
        };
        let case_path = format!("actions.{name}[{index}]");
        let fault_steps = case.fault_steps();
        let first_fault = built.faults.len();
        let context = Context {
            params: &step.action.params,
            nodes: &mapping.nodes,
            trace_step: number,
            own_fault: (!fault_steps.is_empty()).then_some(first_fault),
            faults_of: &faults_of,
        };
        for (j, fragment) in fault_steps.iter().enumerate() {
            let path = if case.fault.is_some() && j == 0 {
                format!("{case_path}.fault")
            } else {
                let k = j - usize::from(case.fault.is_some());
                format!("{case_path}.faults[{k}]")
            };
            let filled = match fragment.value.substitute(&mut |t| context.fill(t)) {
                Ok(f) => f,
                Err(why) => {
                    problems.at(
                        &fragment.referenced,
                        &path,
                        format!("step {number}, {words}: {why}"),
                    );
                    continue;
                }
            };
            let Fragment::Map(pairs) = &filled else {
                problems.at(
                    &fragment.referenced,
                    &path,
                    "a fault step is a map (`{ do: restart, target: om1 }`)",
                );
                continue;
            };
            let own_trigger = pairs.iter().any(|(k, _)| TRIGGERS.contains(&k.as_str()));
            let mut head: Vec<(String, Fragment)> = Vec::new();
            if !own_trigger {
                let derived = previous
                    .as_ref()
                    .filter(|_| j == 0)
                    .and_then(|(_, _, p)| trigger_on(p));
                match derived {
                    Some(trigger) => head.push(trigger),
                    None => {
                        let why = match (&previous, j) {
                            (_, j) if j > 0 => "a case's second and later fault steps fire \
                                                when the mapping says: give it `at:` or another trigger"
                                .to_string(),
                            (None, _) => "nothing before it can trigger it (it is the trace's \
                                          first step, or follows one that failed): give it `at:`"
                                .to_string(),
                            (Some((k, action, _)), _) => format!(
                                "step {k} before it ({action}) is observed by a predicate no \
                                 trigger can watch (only a log line, a JVM rule or a role can): \
                                 give it `at:` or another trigger"
                            ),
                        };
                        // Said once: the step is kept, so the steps after it keep their
                        // numbers and the placeholders that name it fill in.
                        problems.at(
                            &fragment.referenced,
                            &path,
                            format!(
                                "step {number}, {words}: the fault step has no trigger, and {why}"
                            ),
                        );
                    }
                }
            }
            let watches = head
                .iter()
                .chain(pairs.iter())
                .any(|(k, _)| k == "on" || k == "when");
            let armed = pairs.iter().any(|(k, _)| k == "armed-after");
            let index = built.faults.len();
            if watches && !armed && index > 0 {
                head.push(("armed-after".into(), Fragment::Int(index as i128 - 1)));
            }
            head.extend(pairs.iter().cloned());
            built.faults.push(BuiltStep {
                step: Fragment::Map(head),
                trace_step: number,
                action: words.clone(),
                from: fragment.referenced,
                from_path: path,
            });
        }
        let observed = match (&case.observed, fault_steps.is_empty()) {
            (Some(observed), _) => Some((
                observed
                    .value
                    .substitute(&mut |t| context.fill(t))
                    .map_err(|why| (observed.referenced, why)),
                observed.referenced,
            )),
            (None, false) => Some((
                Ok(Fragment::Map(vec![(
                    "step".into(),
                    Fragment::Int(first_fault as i128),
                )])),
                cases.value[index].referenced,
            )),
            (None, true) => {
                problems.at(
                    &cases.value[index].referenced,
                    &case_path,
                    format!(
                        "step {number}, {words}: the case has no `observed:`; a step without a \
                         fault step is known taken only by what the cluster shows"
                    ),
                );
                None
            }
        };
        let predicate = match observed {
            Some((Ok(p @ Fragment::Map(_)), from)) => Some((p, from)),
            Some((Ok(_), from)) => {
                problems.at(
                    &from,
                    format!("{case_path}.observed"),
                    "a predicate is a map (`{ log: { regex: ... } }`)",
                );
                None
            }
            Some((Err((at, why)), _)) => {
                problems.at(
                    &at,
                    format!("{case_path}.observed"),
                    format!("step {number}, {words}: {why}"),
                );
                None
            }
            None => None,
        };
        if !fault_steps.is_empty() {
            // `{fault:ACTION}` is the first fault step of the action's latest occurrence.
            faults_of.insert(name.to_string(), first_fault);
        }
        taken.push(name);
        match predicate {
            Some((predicate, from)) => {
                let label = predicate_name(number, width, name, &step.action.params);
                built.reached.push(BuiltPredicate {
                    name: label,
                    predicate: predicate.clone(),
                    action: words.clone(),
                    from,
                    from_path: format!("{case_path}.observed"),
                });
                previous = Some((number, words, predicate));
            }
            None => previous = None,
        }
    }
    built
}

/// `step-03-apply-1`: the step's number (so the names sort in the trace's order), its action
/// and its parameters' values, in letters, digits and `-`.
fn predicate_name(number: usize, width: usize, action: &str, params: &[(String, Value)]) -> String {
    let mut name = format!("step-{number:0width$}-{action}");
    for (_, value) in params {
        name.push('-');
        name.push_str(&value_text(value));
    }
    let mut cleaned = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '-' };
        if !(c == '-' && cleaned.ends_with('-')) {
            cleaned.push(c);
        }
    }
    cleaned.trim_end_matches('-').to_string()
}

/// Writes the imported scenario to `path` (its folder made), once it is known to load there
/// as it did beside its base: the compose file it names is found from the folder it is in.
pub fn write(imported: &Imported, path: &Path) -> Result<(), crate::error::HarnessError> {
    use crate::error::HarnessError;
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder).map_err(|e| {
        HarnessError::BadInput(format!("{}: cannot make the folder: {e}", folder.display()))
    })?;
    std::fs::write(path, &imported.text)
        .map_err(|e| HarnessError::BadInput(format!("{}: cannot write: {e}", path.display())))?;
    if let Err(errors) = crate::load::load(path) {
        let _ = std::fs::remove_file(path);
        return Err(HarnessError::Scenario(
            errors
                .into_iter()
                .map(|e| ScenarioError {
                    message: format!(
                        "{} (the imported scenario loads beside its base, {}; write it in a \
                         folder from which its compose file is found as well)",
                        e.message,
                        imported.base.display()
                    ),
                    ..e
                })
                .collect(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ITF trace (Quint's --mbt shape) of actions `names`, each without parameters.
    fn trace_of(names: &[&str]) -> Trace {
        let mut states =
            vec![r#"{"x": 0, "mbt::actionTaken": "init", "mbt::nondetPicks": {}}"#.to_string()];
        for (i, name) in names.iter().enumerate() {
            states.push(format!(
                r#"{{"x": {}, "mbt::actionTaken": "{name}", "mbt::nondetPicks": {{}}}}"#,
                i + 1
            ));
        }
        let text = format!(
            r#"{{"vars": ["x", "mbt::actionTaken", "mbt::nondetPicks"], "states": [{}]}}"#,
            states.join(", ")
        );
        chaos_trace::parse(&text, "t.json").unwrap()
    }

    fn built(names: &[&str], mapping: &str) -> (Built, Vec<String>) {
        let mapping: Mapping = crate::scenario::wording::parse_yaml(mapping).unwrap();
        let mut problems = Problems {
            file: Path::new("m.yaml"),
            list: Vec::new(),
        };
        let built = build(&trace_of(names), &mapping, &mut problems);
        (built, problems.list.iter().map(|e| e.to_string()).collect())
    }

    /// Each fault step fires on what the step before it shows, where a trigger can watch it,
    /// armed only once the fault step before it is over.
    #[test]
    fn fault_steps_are_triggered_by_the_previous_steps_observation() {
        let mapping = r#"
base: b.yaml
actions:
  elect:
    - observed: { log: { node: "{node:x}", regex: "became leader" } }
  hold:
    - fault: { do: jvm-hold, target: om1, jvm: { class: A, method: b }, for: 5s }
      observed: { jvm: { step: "{fault}", event: held } }
  kill:
    - fault: { do: kill, target: { role: leader } }
  lead:
    - observed: { probe: { node: om2, role: leader } }
  pause:
    - fault: { do: pause, target: om2 }
"#;
        let mapping = mapping.replace("\"{node:x}\"", "om1");
        let (built, problems) = built(&["elect", "hold", "kill", "lead", "pause"], &mapping);
        assert!(problems.is_empty(), "{problems:?}");
        let steps: Vec<String> = built.faults.iter().map(|f| f.step.to_string()).collect();
        assert_eq!(
            steps,
            [
                "{ on: { log: { node: om1, regex: \"became leader\" } }, do: jvm-hold, target: om1, jvm: { class: A, method: b }, for: 5s }",
                "{ on: { jvm: { step: 0, event: held } }, armed-after: 0, do: kill, target: { role: leader } }",
                "{ when: { node: om2, role: leader }, armed-after: 1, do: pause, target: om2 }",
            ]
        );
        let names: Vec<&str> = built.reached.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "step-01-elect",
                "step-02-hold",
                "step-03-kill",
                "step-04-lead",
                "step-05-pause"
            ]
        );
        assert_eq!(built.reached[2].predicate.to_string(), "{ step: 1 }");
    }

    #[test]
    fn paths_are_tidied_as_written() {
        assert_eq!(
            tidy(Path::new("traces/x/../../scenarios/a.yaml")),
            Path::new("scenarios/a.yaml")
        );
        assert_eq!(tidy(Path::new("../a/./b.yaml")), Path::new("../a/b.yaml"));
        assert_eq!(tidy(Path::new("/r/x/../b.yaml")), Path::new("/r/b.yaml"));
    }

    #[test]
    fn a_placeholder_the_step_cannot_fill_is_located() {
        let mapping = "base: b.yaml\nactions:\n  a:\n    - observed: { step: \"{fault:b}\" }\n";
        let (_, problems) = built(&["a"], mapping);
        assert_eq!(
            problems,
            ["m.yaml:4:17: actions.a[0].observed: step 1, a: `{fault:b}`: no earlier step of the \
              trace made a fault step for `b`"]
        );
    }
}
