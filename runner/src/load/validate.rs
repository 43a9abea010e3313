//! Validation of a parsed scenario against its compose profile, system adapter and checker,
//! before any container starts: every problem located at file:line:column with its key path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_saphyr::{Location, Spanned};

use crate::faults::kinds::{self, Mechanism};
use crate::scenario::compose::ComposeFile;
use crate::scenario::*;
use crate::systems;
use chaos_core::shown::shown;

pub(super) struct Problems {
    file: PathBuf,
    pub(super) list: Vec<ScenarioError>,
}

impl Problems {
    pub(super) fn new(file: &Path) -> Self {
        Problems {
            file: file.to_path_buf(),
            list: Vec::new(),
        }
    }

    pub(super) fn at(
        &mut self,
        location: &Location,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.list.push(ScenarioError {
            file: self.file.clone(),
            line: location.line(),
            column: location.column(),
            path: path.into(),
            message: message.into(),
        });
    }
}

pub(super) fn find_compose(
    scenario: &Path,
    compose: &Spanned<String>,
) -> Result<(PathBuf, ComposeFile), String> {
    let name = Path::new(&compose.value);
    let start = scenario
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    let candidate = if name.is_absolute() {
        Some(name.to_path_buf())
    } else {
        start
            .ancestors()
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    };
    let Some(found) = candidate.filter(|p| p.is_file()) else {
        return Err(format!(
            "compose file {} not found beside the scenario or in its parent folders",
            shown(&compose.value)
        ));
    };
    let compose = ComposeFile::load(&found).map_err(|e| e.to_string())?;
    Ok((found, compose))
}

/// What the compose profile says about its nodes, for the checks that name nodes.
pub(super) struct NodeFacts<'a> {
    pub(super) nodes: &'a [String],
    /// Nodes that mount chaosfs (x-chaos.fs).
    pub(super) fs_nodes: &'a [String],
    /// Node -> whether it can take clock skew, or why not (x-chaos.clock-skew).
    pub(super) clocks: &'a BTreeMap<String, Result<(), String>>,
    /// Nodes whose JVM loads Byteman's agent (x-chaos.jvm).
    pub(super) jvm_nodes: &'a [String],
}

pub(super) fn validate(spec: &Scenario, facts: &NodeFacts, problems: &mut Problems) {
    let adapter = systems::lookup(&spec.system.value);
    if adapter.is_none() {
        problems.at(
            &spec.system.referenced,
            "system",
            wording::not_one_of(&spec.system.value, "system", &systems::names()),
        );
    }
    validate_workload(spec, facts, problems);
    if let Some(s3) = spec.s3.as_ref().filter(|s| s.value.bucket.is_empty()) {
        problems.at(
            &s3.referenced,
            "s3.bucket",
            "`bucket: \"\"` names no bucket (an S3 bucket's name is 3 to 63 characters); leave it out for `chaos`",
        );
    }
    if spec.faults.len() > MAX_FAULT_STEPS {
        problems.at(
            &spec.faults[MAX_FAULT_STEPS].referenced,
            "faults",
            format!(
                "{} fault steps: a scenario may have at most {MAX_FAULT_STEPS}",
                spec.faults.len()
            ),
        );
        return;
    }
    for (i, step) in spec.faults.iter().enumerate() {
        validate_fault_step(i, step, spec, facts, problems);
    }
    validate_firings(spec, problems);
    validate_sections(spec, problems);
    validate_checks(spec, problems);
    for (name, precondition) in &spec.reached {
        validate_precondition(name, precondition, spec, facts, problems);
    }
}

/// One `reached:` predicate: one kind, steps and nodes that exist, regexes that compile, and a
/// kind the system can observe.
fn validate_precondition(
    name: &str,
    p: &Spanned<Precondition>,
    spec: &Scenario,
    facts: &NodeFacts,
    problems: &mut Problems,
) {
    let key = format!("reached.{name}");
    let (at, pre) = (&p.referenced, &p.value);
    let adapter = systems::lookup(&spec.system.value);
    let system = adapter.map_or("?", |a| a.name);
    let mut problem = |sub: &str, message: String| {
        let path = if sub.is_empty() {
            key.clone()
        } else {
            format!("{key}.{sub}")
        };
        problems.list.push(ScenarioError {
            file: problems.file.clone(),
            line: at.line(),
            column: at.column(),
            path,
            message,
        });
    };
    let kinds = pre.kinds();
    if kinds.len() != 1 {
        problem(
            "",
            format!(
                "a precondition is one of step, log, probe, history, resent, converge, config, jvm (found {})",
                kinds.len()
            ),
        );
    }
    let steps = spec.faults.len();
    for s in pre.steps_named() {
        if s.value >= steps {
            problem("", no_such_step(s.value, steps));
        }
    }
    if (pre.undone || pre.ready) && pre.step.is_none() {
        problem("undone", "`undone:` and `ready:` go with `step:`".into());
    }
    if let Some(step) = pre.step.as_ref().and_then(|s| spec.faults.get(s.value)) {
        let step = &step.value;
        if pre.undone && step.duration.is_none() {
            problem(
                "undone",
                "that step has no `for:`, so nothing undoes it".into(),
            );
        }
        let brings_back = |a: &Action| a.fault().brings_back();
        let restarts = step.actions.0.iter().any(brings_back)
            || step.then.as_ref().is_some_and(|t| brings_back(&t.action))
            || (step.duration.is_some()
                && step
                    .actions
                    .0
                    .iter()
                    .any(|a| a.undo().is_some_and(|u| u.fault().brings_back())));
        if pre.ready && !restarts {
            problem(
                "ready",
                "`ready:` waits for nodes a step starts again (restart, start, crash, or kill/stop with `for:`)".into(),
            );
        }
    }
    for (sub, regex) in pre.regexes() {
        if let Err(e) = regex_problem(&regex.value) {
            problem(sub, e);
        }
    }
    let mut named: Vec<(&str, &String)> = Vec::new();
    if let Some(c) = &pre.config {
        named.push(("config.node", &c.node.value));
    }
    if let Some(step) = pre.jvm.as_ref().and_then(|j| spec.faults.get(j.step.value)) {
        let loads = |a: &Action| a.fault().mechanism() == Mechanism::Jvm && a.undo().is_some();
        if !step.value.actions.0.iter().any(loads) {
            problem(
                "jvm.step",
                "that step loads no JVM rule (jvm-delay, jvm-throw, jvm-hold, jvm-trace or jvm-rule)".into(),
            );
        }
    }
    for (sub, node) in pre.node_refs() {
        match &node.value {
            NodeRef::Named(name) => named.push((sub, name)),
            NodeRef::OfStep(step) if step.value >= steps => {
                problem(&format!("{sub}.of-step"), no_such_step(step.value, steps))
            }
            NodeRef::OfStep(_) => {}
        }
    }
    for (sub, node) in named {
        if !facts.nodes.is_empty() && !facts.nodes.contains(node) {
            problem(sub, no_such_node(node, facts.nodes));
        }
    }
    if let Some(probe) = &pre.probe {
        let asked = [
            probe.role.is_some(),
            probe.behind.is_some(),
            probe.metric.is_some(),
        ];
        if asked.iter().filter(|a| **a).count() != 1 {
            problem(
                "probe",
                "a probe is one of `role:`, `behind:` and `metric:` (with `above:`)".into(),
            );
        }
        if probe.metric.is_some() != probe.above.is_some() {
            problem(
                "probe.above",
                "`metric:` needs `above:`, and only it takes one".into(),
            );
        }
        let lacks = |capability: bool, what: &str| {
            (!capability).then(|| format!("system `{system}` has no {what}"))
        };
        if let Some(adapter) = adapter {
            let missing = [
                probe
                    .role
                    .is_some()
                    .then(|| lacks(adapter.has_roles, "roles"))
                    .flatten(),
                probe
                    .behind
                    .is_some()
                    .then(|| lacks(adapter.applied_index, "applied-index probe"))
                    .flatten(),
                probe
                    .metric
                    .is_some()
                    .then(|| lacks(adapter.metrics, "metrics page (/prom) the harness reads"))
                    .flatten(),
            ];
            for m in missing.into_iter().flatten() {
                problem("probe", m);
            }
        }
    }
    for (sub, filter) in pre.history.iter().map(|h| ("history", h)).chain(
        pre.resent
            .iter()
            .flat_map(|r| [("resent.first", &r.first), ("resent.again", &r.again)]),
    ) {
        if let Some(f) = &filter.f {
            let names = f.names();
            let kinds = spec.workload.kind.value.operation_kinds();
            if names.is_empty() {
                problem(
                    &format!("{sub}.f"),
                    "`f: []` names no operation kind, so no operation can match; name one, or leave `f:` out to count every kind".into(),
                );
            }
            for name in names.into_iter().filter(|n| !kinds.contains(n)) {
                problem(
                    &format!("{sub}.f"),
                    format!(
                        "{} is not an operation kind of the {} workload, so no operation can match (its kinds: {})",
                        shown(name),
                        serde_json::to_value(spec.workload.kind.value)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default(),
                        kinds.join(", ")
                    ),
                );
            }
        }
        match (&filter.at_least, sub) {
            (Some(n), "history") if n.value == 0 => {
                problem("history.at-least", "needs at least 1".into())
            }
            (Some(_), s) if s != "history" => problem(
                &format!("{sub}.at-least"),
                "`at-least:` counts the calls: write it beside `first:` and `again:`".into(),
            ),
            _ => {}
        }
    }
    if pre.resent.as_ref().is_some_and(|r| r.at_least == 0) {
        problem("resent.at-least", "needs at least 1".into());
    }
    if let (Some(_), Some(adapter)) = (&pre.converge, adapter) {
        if !adapter.applied_index {
            problem(
                "converge",
                format!("system `{system}` has no applied-index probe (converge: ozone)"),
            );
        }
    }
    if let (Some(_), Some(adapter)) = (&pre.config, adapter) {
        if adapter.config_query.is_none() {
            problem("config", format!("system `{system}` cannot tell which configuration keys its build defines (config: ozone)"));
        }
    }
}

/// `names fault step 5; the steps are 0 to 2 (steps count from 0)`.
fn no_such_step(step: usize, steps: usize) -> String {
    match steps {
        0 => format!("names fault step {step}, and the scenario has none"),
        n => format!(
            "names fault step {step}; the steps are 0 to {} (steps count from 0)",
            n - 1
        ),
    }
}

/// A node name that is not one of the profile's.
fn unknown_node(
    nodes: &[String],
    problems: &mut Problems,
    location: &Location,
    key: &str,
    node: &str,
) {
    if !nodes.is_empty() && !nodes.iter().any(|n| n == node) {
        problems.at(location, key, no_such_node(node, nodes));
    }
}

/// `unknown node `etcd9` (nodes of profile: etcd1, etcd2, etcd3)`.
fn no_such_node(node: &str, nodes: &[String]) -> String {
    format!(
        "unknown node {} (nodes of profile: {})",
        shown(node),
        nodes.join(", ")
    )
}

/// The workload's shape, nodes and kind (one the system has).
fn validate_workload(spec: &Scenario, facts: &NodeFacts, problems: &mut Problems) {
    let adapter = systems::lookup(&spec.system.value);
    let check_node = |problems: &mut Problems, location: &Location, key: &str, node: &str| {
        unknown_node(facts.nodes, problems, location, key, node)
    };
    let w = &spec.workload;
    if let Some(chosen) = &w.nodes {
        for node in &chosen.value {
            check_node(problems, &chosen.referenced, "workload.nodes", node);
        }
    }
    if let Some(adapter) = adapter {
        if !adapter.workloads.contains(&w.kind.value) {
            problems.at(
                &w.kind.referenced,
                "workload.kind",
                format!(
                    "system `{}` has no {} workload (it has: {})",
                    adapter.name,
                    w.kind.value.name(),
                    adapter
                        .workloads
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }
}

/// One fault step, as the three parts of it that can go wrong on their own: its trigger, the
/// settings its action takes, and the nodes it targets.
fn validate_fault_step(
    i: usize,
    step: &Spanned<FaultStep>,
    spec: &Scenario,
    facts: &NodeFacts,
    problems: &mut Problems,
) {
    let step = StepUnderCheck {
        index: i,
        key: format!("faults[{i}]"),
        at: &step.referenced,
        s: &step.value,
        adapter: systems::lookup(&spec.system.value),
        facts,
        workload_end: workload_end(&spec.workload),
    };
    step.trigger(problems);
    step.action_settings(problems);
    step.targets(problems);
    unload_names_a_rule(i, step.s, spec, problems);
    jvm_trigger_names_a_rule(i, step.s, spec, problems);
}

/// `jvm-unload` with `jvm.step: K`: K is an earlier step that loads a rule chaos wrote (a raw
/// `jvm-rule` names its rules itself; a step of its own unloads every rule).
/// `on: { jvm: { step: K } }`: K is an earlier step that loads a rule chaos wrote, whose
/// firings carry K in their rule's name.
fn jvm_trigger_names_a_rule(i: usize, s: &FaultStep, spec: &Scenario, problems: &mut Problems) {
    let Some(jvm) = s.on.as_ref().and_then(|on| on.jvm.as_ref()) else {
        return;
    };
    let k = jvm.step.value;
    if !(k < i
        && spec.faults[k]
            .value
            .actions
            .0
            .iter()
            .any(writes_its_own_rule))
    {
        problems.at(
            &jvm.step.referenced,
            format!("faults[{i}].on.jvm.step"),
            format!("step {k} is not an earlier step that loads a jvm-delay, jvm-throw, jvm-hold or jvm-trace rule"),
        );
    }
}

/// A JVM fault whose rule chaos writes and names after its step (a raw `jvm-rule` names its
/// rules itself).
fn writes_its_own_rule(a: &Action) -> bool {
    a.fault().mechanism() == Mechanism::Jvm && a.undo().is_some() && a.name() != "jvm-rule"
}

fn unload_names_a_rule(i: usize, s: &FaultStep, spec: &Scenario, problems: &mut Problems) {
    let Some(jvm) = &s.jvm else { return };
    let Some(k) = jvm.value.step else { return };
    if !s.actions.0.iter().any(|a| a.name() == "jvm-unload") {
        return;
    }
    let fine = k < i
        && spec.faults[k]
            .value
            .actions
            .0
            .iter()
            .any(writes_its_own_rule);
    if !fine {
        problems.at(
            &jvm.referenced,
            format!("faults[{i}].jvm.step"),
            format!("step {k} is not an earlier step that loads a jvm-delay, jvm-throw, jvm-hold or jvm-trace rule"),
        );
    }
}

/// A fault step with what its rules need: its key path and location for messages, the
/// system's capabilities and the profile's nodes.
struct StepUnderCheck<'a> {
    index: usize,
    key: String,
    at: &'a Location,
    s: &'a FaultStep,
    adapter: Option<&'static systems::SystemInfo>,
    facts: &'a NodeFacts<'a>,
    /// When the workload ends at the latest: an `at:` past it never fires.
    workload_end: Duration,
}

/// The most fault steps a scenario may have (a longer list is generated by mistake).
pub const MAX_FAULT_STEPS: usize = 10_000;

/// The most times a scenario's `every:` steps may fire in all: the plan draws every firing up
/// front, and `every: 1ms` over a 30-day workload would be billions of them.
pub const MAX_EVERY_FIRINGS: u128 = 100_000;

/// The `every:` steps together fire at most [`MAX_EVERY_FIRINGS`] times (counted at each
/// step's shortest period over the workload's duration).
fn validate_firings(spec: &Scenario, problems: &mut Problems) {
    let length = spec.workload.duration.0;
    let mut total: u128 = 0;
    for (i, step) in spec.faults.iter().enumerate() {
        let Some(every) = step.value.every else {
            continue;
        };
        if every.low.is_zero() {
            continue;
        }
        let most = length.as_nanos() / every.low.as_nanos();
        total += most;
        if total > MAX_EVERY_FIRINGS {
            let others = if total > most {
                format!(" ({total} with the steps before it)")
            } else {
                String::new()
            };
            problems.at(
                &step.referenced,
                format!("faults[{i}].every"),
                format!(
                    "`every: {every}` fires up to {most} times in the workload's {}{others}; \
                     a scenario's `every:` steps may fire at most {MAX_EVERY_FIRINGS} times in all",
                    units::format_duration(length)
                ),
            );
            return;
        }
    }
}

/// The errnos chaosfs injects by name (chaosfs/src/control/command.rs, `parse_errno`; a test
/// keeps the two lists in step); any number from 1 to 4095 is taken too.
pub const FSYNC_ERRNOS: &[&str] = &[
    "EIO",
    "ENOSPC",
    "EDQUOT",
    "EROFS",
    "EBADF",
    "EINVAL",
    "EPERM",
    "EACCES",
    "EINTR",
    "EAGAIN",
    "ENOMEM",
    "EFBIG",
    "ETIMEDOUT",
];

fn known_errno(text: &str) -> bool {
    match text.parse::<i64>() {
        Ok(n) => (1..4096).contains(&n),
        Err(_) => FSYNC_ERRNOS.contains(&text.to_ascii_uppercase().as_str()),
    }
}

/// An HTTP header name: a token of RFC 9110 (a name with a space or a colon is in no request,
/// so a fault matching it would never fire).
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// A regex that does not compile, in one line: the regex crate's message spans several (the
/// pattern, a caret under the fault, then `error: ...`).
fn regex_problem(pattern: &str) -> Result<(), String> {
    regex::Regex::new(pattern).map(|_| ()).map_err(|e| {
        let text = e.to_string();
        let why = text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("error: "))
            .unwrap_or(text.lines().last().unwrap_or_default());
        format!("invalid regex {}: {why}", shown(pattern))
    })
}

/// When the workload ends at the latest: its duration, or for the lease workload the close
/// of its last file when that comes later (the workload waits for it).
fn workload_end(w: &WorkloadSpec) -> Duration {
    w.kind.value.longest(w)
}

impl StepUnderCheck<'_> {
    /// A rule that names a key of the step (`faults[2].delay`) at the step's location.
    fn problem(&self, problems: &mut Problems, key: &str, message: impl Into<String>) {
        problems.at(self.at, format!("{}.{key}", self.key), message);
    }

    fn check_node(&self, problems: &mut Problems, location: &Location, key: &str, node: &str) {
        let key = format!("{}.{key}", self.key);
        unknown_node(self.facts.nodes, problems, location, &key, node)
    }

    fn check_regex(&self, problems: &mut Problems, regex: &Spanned<String>, key: &str) {
        if let Err(e) = regex_problem(&regex.value) {
            problems.at(&regex.referenced, format!("{}.{key}", self.key), e);
        }
    }

    /// Exactly one trigger, and the `on:` and `when:` triggers' own settings.
    fn trigger(&self, problems: &mut Problems) {
        let s = self.s;
        let triggers = [
            s.at.is_some(),
            s.after.is_some(),
            s.on.is_some(),
            s.when.is_some(),
            s.every.is_some(),
        ]
        .iter()
        .filter(|t| **t)
        .count();
        if triggers != 1 {
            problems.at(
                self.at,
                &self.key,
                format!(
                    "a fault step needs exactly one trigger of at, after, on, when, every (found {triggers})"
                ),
            );
        }
        if let Some(at) = s.at {
            if at.0 > self.workload_end {
                self.problem(
                    problems,
                    "at",
                    format!(
                        "`at: {at}` comes after the workload ends ({}): the step would never fire",
                        units::format_duration(self.workload_end)
                    ),
                );
            }
        }
        if s.every.is_some_and(|e| e.low.is_zero()) {
            self.problem(
                problems,
                "every",
                "`every:` needs a period above 0 (e.g. 5s or 5s..8s)",
            );
        }
        if s.duration.is_some_and(|d| d.low.is_zero()) {
            self.problem(
                problems,
                "for",
                "`for:` needs a length above 0 (leave it out for a fault that is not undone)",
            );
        }
        if let Some(armed) = &s.armed_after {
            let key = format!("{}.armed-after", self.key);
            if s.on.is_none() && s.when.is_none() {
                problems.at(
                    &armed.referenced,
                    &key,
                    "`armed-after:` arms an `on:` or `when:` trigger",
                );
            }
            if armed.value >= self.index {
                problems.at(
                    &armed.referenced,
                    &key,
                    match self.index {
                        0 => "`armed-after:` names an earlier step, and this is the first".into(),
                        i => format!(
                            "`armed-after:` names an earlier step, 0 to {} (steps count from 0)",
                            i - 1
                        ),
                    },
                );
            }
        }
        if let Some(on) = &s.on {
            if on.log.is_some() == on.jvm.is_some() {
                self.problem(problems, "on", "`on:` needs one of `log:` and `jvm:`");
            }
            if let Some(log) = &on.log {
                if let Some(node) = &log.node {
                    self.check_node(problems, &node.referenced, "on.log.node", &node.value);
                }
                self.check_regex(problems, &log.regex, "on.log.regex");
            }
            if let Some(jvm) = &on.jvm {
                if let Some(node) = &jvm.node {
                    self.check_node(problems, &node.referenced, "on.jvm.node", &node.value);
                }
            }
        }
        if let Some(when) = &s.when {
            if let Some(node) = &when.node {
                self.check_node(problems, &node.referenced, "when.node", &node.value);
            }
            if when.role.is_some() == when.behind.is_some() {
                self.problem(
                    problems,
                    "when",
                    "`when:` needs one of `role:` and `behind:`",
                );
            }
            if let (Some(_), Some(adapter)) = (when.behind, self.adapter) {
                if !adapter.applied_index {
                    self.problem(
                        problems,
                        "when.behind",
                        format!("system `{}` has no applied-index probe", adapter.name),
                    );
                }
            }
        }
    }

    /// Each setting belongs to the actions that take it (`Fault::takes`), and those actions
    /// have theirs (`Fault::needs`, `Fault::check`); then the settings' values.
    fn action_settings(&self, problems: &mut Problems) {
        let s = self.s;
        if s.actions.0.len() > 1 && s.every.is_none() {
            self.problem(
                problems,
                "do",
                "a list of actions is only allowed with `every:` (one is picked each time)",
            );
        }
        if let Some(adapter) = self.adapter {
            for action in s.actions.0.iter() {
                if action.fault().mechanism() == Mechanism::Admin
                    && !adapter.admin_actions.contains(&action.name())
                {
                    self.problem(
                        problems,
                        "do",
                        format!("system `{}` has no admin action {action}", adapter.name),
                    );
                }
            }
        }
        for param in kinds::PARAMS {
            self.param_belongs(problems, param);
        }
        self.param_values(problems);
        if let Some(jvm) = &s.jvm {
            for action in s.actions.0.iter().filter(|a| a.takes("jvm")) {
                if let Some(why) = crate::faults::kinds::jvm::problem(action.name(), &jvm.value) {
                    problems.at(&jvm.referenced, format!("{}.jvm", self.key), why);
                    break;
                }
            }
        }
        let mut checked = Vec::new();
        for action in &s.actions.0 {
            if let Some((key, message)) = action.fault().check(s) {
                if !checked.contains(&key) {
                    checked.push(key);
                    self.problem(problems, key, message);
                }
            }
        }
        if s.duration.is_some() && s.actions.0.iter().all(|a| a.undo().is_none()) {
            let undone: Vec<&str> = Action::all()
                .filter(|a| a.undo().is_some())
                .map(Action::name)
                .collect();
            self.problem(
                problems,
                "for",
                format!(
                    "`for:` needs an action that can be undone ({})",
                    undone.join(", ")
                ),
            );
        }
    }

    /// A parameter given to no action that takes it, or missing from one that needs it.
    fn param_belongs(&self, problems: &mut Problems, param: &kinds::Param) {
        let s = self.s;
        let key = param.key;
        let given = (param.given)(s);
        let needing = kinds::taking(key, true);
        if !needing.is_empty() {
            let needed = s.actions.0.iter().any(|a| a.fault().needs().contains(&key));
            // Given to a fault that takes it without needing it (jvm-unload's `jvm.step`) is fine.
            let taken = s.actions.0.iter().any(|a| a.takes(key));
            if (needed && !given) || (given && !needed && !taken) {
                let (verb, pronoun) = match needing.len() {
                    1 => ("needs", "it takes"),
                    _ => ("need", "they take"),
                };
                self.problem(
                    problems,
                    key,
                    format!(
                        "{} {verb} `{key}:`{}, and only {pronoun} one",
                        kinds::listed(&needing),
                        param.hint
                    ),
                );
            }
            return;
        }
        let takers = kinds::taking(key, false);
        let only = if takers.len() == 1 { " only" } else { "" };
        if key == "grudge" {
            // Exact sides for one partition: the step's only action.
            if let Some(grudge) = s.grudge.as_ref() {
                if !(s.actions.0.len() == 1 && s.actions.0[0].takes(key)) {
                    problems.at(
                        &grudge.referenced,
                        format!("{}.grudge", self.key),
                        format!(
                            "`grudge:` applies to `do: {}`{only}",
                            kinds::listed(&takers)
                        ),
                    );
                }
            }
            return;
        }
        if given && !s.actions.0.iter().any(|a| a.takes(key)) {
            self.problem(
                problems,
                key,
                format!("`{key}:` applies to {}{only}", kinds::listed(&takers)),
            );
        }
    }

    /// The values of the parameters: regexes that compile, one header name, a fraction, an
    /// errno chaosfs knows, grudge's nodes.
    fn param_values(&self, problems: &mut Problems) {
        let s = self.s;
        if let Some(path) = s.matching.as_ref().and_then(|m| m.path.as_ref()) {
            self.check_regex(problems, path, "match.path");
        }
        if let Some(headers) = s.matching.as_ref().and_then(|m| m.header.as_ref()) {
            let key = format!("{}.match.header", self.key);
            if headers.value.len() != 1 {
                problems.at(
                    &headers.referenced,
                    &key,
                    format!(
                        "`match.header:` takes one header and a regex for its value (found {})",
                        headers.value.len()
                    ),
                );
            }
            for (name, value) in &headers.value {
                if !is_header_name(name) {
                    problems.at(
                        &headers.referenced,
                        &key,
                        format!("{} is not an HTTP header name (letters, digits and - _ . ! # $ % & ' * + ^ ` | ~)", shown(name)),
                    );
                }
                if let Err(e) = regex_problem(value) {
                    problems.at(&headers.referenced, format!("{key}.{name}"), e);
                }
            }
        }
        if let Some(fraction) = &s.fraction {
            if !(fraction.value > 0.0 && fraction.value <= 1.0) {
                problems.at(
                    &fraction.referenced,
                    format!("{}.fraction", self.key),
                    format!(
                        "`fraction:` is the share of fsyncs that fail: above 0 and at most 1 (found {})",
                        fraction.value
                    ),
                );
            }
        }
        if let Some(errno) = s.errno.as_ref().filter(|e| !known_errno(&e.value)) {
            problems.at(
                &errno.referenced,
                format!("{}.errno", self.key),
                format!(
                    "unknown errno {} (chaosfs injects {}, or a number from 1 to 4095)",
                    shown(&errno.value),
                    FSYNC_ERRNOS.join(", ")
                ),
            );
        }
        if let Some(paths) = &s.paths {
            self.check_regex(problems, paths, "paths");
        }
        if let Some(grudge) = &s.grudge {
            for (node, drops) in &grudge.value {
                for n in std::iter::once(node).chain(drops) {
                    self.check_node(problems, &grudge.referenced, "grudge", n);
                }
            }
        }
    }

    /// Named nodes exist, a role exists in the system, and every node the step may land on
    /// can take its action (a clock to skew, a chaosfs mount).
    fn targets(&self, problems: &mut Problems) {
        let s = self.s;
        if let Some(target) = &s.target {
            match &target.value {
                Target::Nodes(list) => {
                    for node in list {
                        self.check_node(problems, &target.referenced, "target", node);
                    }
                }
                Target::Select {
                    among: Some(list), ..
                } => {
                    for node in list {
                        self.check_node(problems, &target.referenced, "target.among", node);
                    }
                }
                Target::Select { .. } => {}
            }
            if let (Target::Select { role: Some(_), .. }, Some(adapter)) =
                (&target.value, self.adapter)
            {
                if !adapter.has_roles {
                    problems.at(
                        &target.referenced,
                        format!("{}.target.role", self.key),
                        format!("system `{}` has no roles", adapter.name),
                    );
                }
            }
        }
        if s.actions
            .0
            .iter()
            .any(|a| a.fault().mechanism() == Mechanism::Faketime)
        {
            self.clock_targets(problems);
        }
        if s.actions
            .0
            .iter()
            .any(|a| a.fault().mechanism() == Mechanism::Jvm)
        {
            self.jvm_targets(problems);
        }
        let needs_fs = s.actions.0.iter().any(|a| a.fault().needs_chaosfs(s));
        if needs_fs {
            self.fs_targets(problems);
        }
    }

    /// A role or a pick may land on any node of the profile, so each must take clock skew.
    fn clock_targets(&self, problems: &mut Problems) {
        let nodes = self.facts.nodes;
        let (location, candidates): (Location, Vec<&String>) = match &self.s.target {
            Some(t) => match t.value.named_nodes() {
                Some(list) => (t.referenced, list.iter().collect()),
                None => (t.referenced, nodes.iter().collect()),
            },
            None => (*self.at, nodes.iter().collect()),
        };
        for node in candidates {
            if let Some(Err(why)) = self.facts.clocks.get(node) {
                problems.at(
                    &location,
                    format!("{}.target", self.key),
                    format!("node `{node}` cannot take clock-skew: {why}"),
                );
            }
        }
    }

    /// JVM faults need Byteman's agent in the nodes they name (or in some node).
    fn jvm_targets(&self, problems: &mut Problems) {
        self.capable_targets(
            problems,
            self.facts.jvm_nodes,
            |node| format!("node `{node}` runs no JVM with chaos's agent (x-chaos: {{ jvm: PORT }} in the compose file), so it takes no JVM fault"),
            "JVM faults need nodes whose JVM loads chaos's agent (x-chaos: { jvm: PORT } in the compose file); this cluster has none",
        );
    }

    /// Filesystem faults need the chaosfs mount on the nodes they name (or on some node).
    fn fs_targets(&self, problems: &mut Problems) {
        self.capable_targets(
            problems,
            self.facts.fs_nodes,
            |node| format!("node `{node}` has no chaosfs mount (x-chaos: {{ fs: [...] }} in the compose file)"),
            "filesystem faults need nodes with x-chaos: { fs: [...] } in the compose file",
        );
    }

    /// Every node the step names is one of `capable`; a step that names none needs some node
    /// of the cluster to be.
    fn capable_targets(
        &self,
        problems: &mut Problems,
        capable: &[String],
        lacks: impl Fn(&str) -> String,
        none: &str,
    ) {
        let target = self.s.target.as_ref();
        if let Some(list) = target.and_then(|t| t.value.named_nodes()) {
            for node in list.iter().filter(|n| !capable.contains(n)) {
                problems.at(
                    &target.map_or(*self.at, |t| t.referenced),
                    format!("{}.target", self.key),
                    lacks(node),
                );
            }
        } else if capable.is_empty() {
            problems.at(self.at, &self.key, none);
        }
    }
}

/// The `s3:` section and the per-kind workload sections.
fn validate_sections(spec: &Scenario, problems: &mut Problems) {
    let w = &spec.workload;
    // The `s3:` section: credentials, bucket and port of the systems that speak S3; needed by
    // system `s3` always and by the others for the object-store workloads.
    let speaks_s3 = crate::systems::speaks_s3(&spec.system.value);
    let needs_s3 = spec.system.value == "s3" || (speaks_s3 && w.kind.value.needs_object_store());
    if needs_s3 && spec.s3.is_none() {
        problems.at(
            &spec.system.referenced,
            "s3",
            format!(
                "system `{}` needs an `s3:` section for this workload: {{ access-key, secret-key, bucket, region, port }}",
                spec.system.value
            ),
        );
    }
    if let Some(s3) = spec.s3.as_ref().filter(|_| !speaks_s3) {
        problems.at(
            &s3.referenced,
            "s3",
            format!(
                "`s3:` applies to the systems that speak S3 ({})",
                crate::systems::s3_systems().join(", ")
            ),
        );
    }
    // The per-kind sections: each belongs to its workload, located at the section.
    let taken = |key: &str| w.kind.value.takes().contains(&key);
    let owners = |key: &str| crate::workloads::names_where(|k| k.takes().contains(&key)).join(", ");
    let misplaced = |section: &str, at: &Location| {
        (
            *at,
            format!("workload.{section}"),
            format!(
                "`{section}:` applies to the {} workload only",
                owners(section)
            ),
        )
    };
    let mut section_problems = Vec::new();
    if let Some(mix) = &w.mix {
        if !taken("mix") {
            section_problems.push(misplaced("mix", &mix.referenced));
        }
        if mix.value.total() == 0 {
            section_problems.push((
                mix.referenced,
                "workload.mix".into(),
                "needs at least one operation with a weight above 0".into(),
            ));
        }
    }
    if let Some(fencing) = &w.fencing {
        if !taken("fencing") {
            section_problems.push(misplaced("fencing", &fencing.referenced));
        }
        if fencing.value.terms == 0 || fencing.value.contenders == 0 {
            section_problems.push((
                fencing.referenced,
                "workload.fencing".into(),
                "needs at least one term and one contender".into(),
            ));
        }
    }
    if let Some(stream) = &w.stream {
        if !taken("stream") {
            section_problems.push(misplaced("stream", &stream.referenced));
        }
        if stream.value.length == 0 {
            section_problems.push((
                stream.referenced,
                "workload.stream".into(),
                "length must be at least 1 byte".into(),
            ));
        }
    }
    if let Some(lease) = &w.lease {
        if !taken("lease") {
            section_problems.push(misplaced("lease", &lease.referenced));
        }
        if lease.value.close_after.0 <= lease.value.recover_after.0 {
            section_problems.push((
                lease.referenced,
                "workload.lease".into(),
                "close-after must come after recover-after (the recoverLease races an open file)"
                    .into(),
            ));
        }
    }
    if let Some(lasts) = &w.lasts_past {
        if lasts.value.step >= spec.faults.len() {
            section_problems.push((
                lasts.referenced,
                "workload.lasts-past.step".into(),
                format!(
                    "names fault step {}, and the scenario has {} (steps count from 0)",
                    lasts.value.step,
                    spec.faults.len()
                ),
            ));
        }
        if !w.kind.value.plays_through_processes() {
            section_problems.push((
                lasts.referenced,
                "workload.lasts-past".into(),
                format!(
                    "`lasts-past:` applies to the workloads of processes ({})",
                    crate::workloads::names_where(|k| k.plays_through_processes()).join(", ")
                ),
            ));
        }
    }
    if w.duplicate_after.is_some() && !taken("duplicate-after") {
        section_problems.push((
            w.kind.referenced,
            "workload.duplicate-after".into(),
            format!(
                "duplicate-after applies to the {} workload only",
                owners("duplicate-after")
            ),
        ));
    }
    if w.duration.0.is_zero() {
        section_problems.push((
            w.kind.referenced,
            "workload.duration".into(),
            "a workload of 0 s plays no operation: give it a length (like 30s)".into(),
        ));
    }
    if w.timeout.0.is_zero() {
        section_problems.push((
            w.kind.referenced,
            "workload.timeout".into(),
            "a timeout of 0 s gives up on every operation before its answer can come: give one (like 5s), or leave it out for the default".into(),
        ));
    }
    if w.retries == 0 && !w.resend_after.0.is_zero() {
        section_problems.push((
            w.kind.referenced,
            "workload.resend-after".into(),
            "resend-after applies to resends: set `retries` too".into(),
        ));
    }
    for (at, key, message) in section_problems {
        problems.at(&at, key, message);
    }
}

/// Each check against the system and the workload.
fn validate_checks(spec: &Scenario, problems: &mut Problems) {
    let w = &spec.workload;
    let adapter = systems::lookup(&spec.system.value);
    let speaks_s3 = crate::systems::speaks_s3(&spec.system.value);
    for (i, check) in spec.checks.iter().enumerate() {
        match &check.value {
            CheckSpec::Staleness(_) if w.kind.value != WorkloadKind::REGISTER => {
                problems.at(
                    &check.referenced,
                    format!("checks[{i}].staleness"),
                    "staleness measures the register workload's reads (unique written values)",
                );
            }
            CheckSpec::Converge(_) => {
                if let Some(adapter) = adapter {
                    if !systems::has_applied_index(adapter.name) {
                        problems.at(
                            &check.referenced,
                            format!("checks[{i}].converge"),
                            format!(
                                "system `{}` has no applied-index probe (converge: ozone)",
                                adapter.name
                            ),
                        );
                    }
                }
            }
            CheckSpec::Fencing(_) if w.kind.value != WorkloadKind::FENCING => {
                problems.at(
                        &check.referenced,
                        format!("checks[{i}].fencing"),
                        "the fencing check reads the fencing workload's events: needs `workload: { kind: fencing }`",
                    );
            }
            CheckSpec::ConditionalWrites(_) if !speaks_s3 => {
                problems.at(
                    &check.referenced,
                    format!("checks[{i}].conditional-writes"),
                    "the conditional-writes probe needs an object store (a system that speaks S3)",
                );
            }
            CheckSpec::Linearizable(lin) if lin.model.value.parse::<checker::Model>().is_err() => {
                problems.at(
                    &lin.model.referenced,
                    format!("checks[{i}].linearizable.model"),
                    wording::not_one_of(
                        &lin.model.value,
                        "linearizability model",
                        checker::Model::NAMES,
                    ),
                );
            }
            // A check without a rule of its own (durable, retry-consistent, stays-up) needs
            // no arm here.
            _ => {}
        }
    }
}
