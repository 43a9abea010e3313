//! Validation of a parsed scenario against its compose profile, system adapter and checker,
//! before any container starts: every problem located at file:line:column with its key path.

use super::*;

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
            "compose file `{}` not found beside the scenario or in its parent folders",
            compose.value
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
}

pub(super) fn validate(spec: &Scenario, facts: &NodeFacts, problems: &mut Problems) {
    let adapter = systems::lookup(&spec.system.value);
    if adapter.is_none() {
        problems.at(
            &spec.system.referenced,
            "system",
            format!(
                "unknown system `{}` (systems: {})",
                spec.system.value,
                systems::names().join(", ")
            ),
        );
    }
    validate_workload(spec, facts, problems);
    for (i, step) in spec.faults.iter().enumerate() {
        validate_fault_step(i, step, spec, facts, problems);
    }
    validate_sections(spec, problems);
    validate_checks(spec, problems);
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
        problems.at(
            location,
            key,
            format!(
                "unknown node `{node}` (nodes of profile: {})",
                nodes.join(", ")
            ),
        );
    }
}

/// The workload's shape, nodes and kind (one the system has).
fn validate_workload(spec: &Scenario, facts: &NodeFacts, problems: &mut Problems) {
    let adapter = systems::lookup(&spec.system.value);
    let check_node = |problems: &mut Problems, location: &Location, key: &str, node: &str| {
        unknown_node(facts.nodes, problems, location, key, node)
    };
    let w = &spec.workload;
    if w.processes == 0 {
        problems.at(
            &Location::UNKNOWN,
            "workload.processes",
            "needs at least one process",
        );
    }
    if w.keys == 0 {
        problems.at(
            &Location::UNKNOWN,
            "workload.keys",
            "needs at least one key",
        );
    }
    if let Some(chosen) = &w.nodes {
        for node in &chosen.value {
            check_node(problems, &chosen.referenced, "workload.nodes", node);
        }
    }
    if let Some(adapter) = adapter {
        if !adapter.workloads.contains(&w.kind.value) {
            let name = |k: &WorkloadKind| {
                serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            };
            problems.at(
                &w.kind.referenced,
                "workload.kind",
                format!(
                    "system `{}` has no {} workload (it has: {})",
                    adapter.name,
                    name(&w.kind.value),
                    adapter
                        .workloads
                        .iter()
                        .map(name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }
}

/// One fault step: one trigger, an action the system and its nodes support, settings that
/// belong to the action. One long list of rules, each a few lines, read top to bottom: split
/// further it would only scatter them.
fn validate_fault_step(
    i: usize,
    step: &Spanned<FaultStep>,
    spec: &Scenario,
    facts: &NodeFacts,
    problems: &mut Problems,
) {
    let (nodes, fs_nodes) = (facts.nodes, facts.fs_nodes);
    let adapter = systems::lookup(&spec.system.value);
    let check_node = |problems: &mut Problems, location: &Location, key: &str, node: &str| {
        unknown_node(nodes, problems, location, key, node)
    };
    let key = format!("faults[{i}]");
    let at = &step.referenced;
    let s = &step.value;
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
            at,
            &key,
            format!(
                "a fault step needs exactly one trigger of at, after, on, when, every (found {triggers})"
            ),
        );
    }
    if s.actions.0.len() > 1 && s.every.is_none() {
        problems.at(
            at,
            format!("{key}.do"),
            "a list of actions is only allowed with `every:` (one is picked each time)",
        );
    }
    let has = |a: Action| s.actions.0.contains(&a);
    if s.matching.is_some() && !has(Action::LoseReply) {
        problems.at(
            at,
            format!("{key}.match"),
            "`match:` applies to lose-reply only",
        );
    }
    if s.count.is_some() && !has(Action::LoseReply) && !has(Action::FailFsync) {
        problems.at(
            at,
            format!("{key}.count"),
            "`count:` applies to lose-reply and fail-fsync",
        );
    }
    let delayed = has(Action::DelayReplies) || has(Action::SlowFsync) || has(Action::SlowWrites);
    if s.delay.is_some() != delayed {
        problems.at(
            at,
            format!("{key}.delay"),
            "delay-replies, slow-fsync and slow-writes need `delay:`, and only they take one",
        );
    }
    if s.jitter.is_some() && !(has(Action::SlowFsync) || has(Action::SlowWrites)) {
        problems.at(
            at,
            format!("{key}.jitter"),
            "`jitter:` applies to slow-fsync and slow-writes",
        );
    }
    if (s.errno.is_some() || s.fraction.is_some()) && !has(Action::FailFsync) {
        problems.at(
            at,
            format!("{key}.errno"),
            "`errno:` and `fraction:` apply to fail-fsync only",
        );
    }
    if has(Action::FailFsync) && s.count.is_some() == s.fraction.is_some() {
        problems.at(
            at,
            format!("{key}.count"),
            "fail-fsync needs `count:` or `fraction:` (one of them)",
        );
    }
    if s.lose_unsynced.is_some() && !has(Action::Crash) {
        problems.at(
            at,
            format!("{key}.lose-unsynced"),
            "`lose-unsynced:` applies to crash only",
        );
    }
    if s.container.is_some() != has(Action::CloseContainer) {
        problems.at(
            at,
            format!("{key}.container"),
            "close-container needs `container:` (the container id), and only it takes one",
        );
    }
    if let Some(adapter) = adapter {
        for action in s.actions.0.iter().filter(|a| a.is_admin()) {
            if !systems::admin_actions(adapter.name).contains(action) {
                problems.at(
                    at,
                    format!("{key}.do"),
                    format!("system `{}` has no admin action {action}", adapter.name),
                );
            }
        }
    }
    if let Some(paths) = &s.paths {
        if let Err(e) = regex::Regex::new(&paths.value) {
            problems.at(
                &paths.referenced,
                format!("{key}.paths"),
                format!("invalid regex: {e}"),
            );
        }
    }
    if s.offset.is_some() != has(Action::ClockSkew) {
        problems.at(
            at,
            format!("{key}.offset"),
            "clock-skew needs `offset:` (e.g. +70s, -30s, +60s..+90s), and only it takes one",
        );
    }
    if s.actions.0.iter().any(|a| a.uses_faketime()) {
        // A role or a pick may land on any node of the profile, so each must take it.
        let (location, candidates): (Location, Vec<&String>) = match &s.target {
            Some(t) => match &t.value {
                Target::Nodes(list) => (t.referenced, list.iter().collect()),
                Target::Select { .. } => (t.referenced, nodes.iter().collect()),
            },
            None => (*at, nodes.iter().collect()),
        };
        for node in candidates {
            if let Some(Err(why)) = facts.clocks.get(node) {
                problems.at(
                    &location,
                    format!("{key}.target"),
                    format!("node `{node}` cannot take clock-skew: {why}"),
                );
            }
        }
    }
    let needs_fs = s.actions.0.iter().any(|a| a.uses_chaosfs())
        || (has(Action::Crash) && s.lose_unsynced == Some(true));
    if needs_fs {
        if let Some(Target::Nodes(list)) = s.target.as_ref().map(|t| &t.value) {
            for node in list {
                if !fs_nodes.contains(node) {
                    problems.at(
                        &s.target.as_ref().map_or(*at, |t| t.referenced),
                        format!("{key}.target"),
                        format!("node `{node}` has no chaosfs mount (x-chaos: {{ fs: [...] }} in the compose file)"),
                    );
                }
            }
        } else if fs_nodes.is_empty() {
            problems.at(
                at,
                &key,
                "filesystem faults need nodes with x-chaos: { fs: [...] } in the compose file",
            );
        }
    }
    if let Some(path) = s.matching.as_ref().and_then(|m| m.path.as_ref()) {
        if let Err(e) = regex::Regex::new(&path.value) {
            problems.at(
                &path.referenced,
                format!("{key}.match.path"),
                format!("invalid regex: {e}"),
            );
        }
    }
    let partitions = s.actions.0.contains(&Action::Partition);
    if s.mode.is_some() && !partitions {
        problems.at(
            at,
            format!("{key}.mode"),
            "`mode:` applies to partition only",
        );
    }
    if let Some(grudge) = &s.grudge {
        if s.actions.0 != [Action::Partition] {
            problems.at(
                &grudge.referenced,
                format!("{key}.grudge"),
                "`grudge:` applies to `do: partition` only",
            );
        }
        for (node, drops) in &grudge.value {
            for n in std::iter::once(node).chain(drops) {
                check_node(problems, &grudge.referenced, &format!("{key}.grudge"), n);
            }
        }
    }
    if s.duration.is_some() && s.actions.0.iter().all(|a| a.undo().is_none()) {
        problems.at(
            at,
            format!("{key}.for"),
            "`for:` needs an action that can be undone (pause, kill, stop, partition)",
        );
    }
    if let Some(target) = &s.target {
        if let Target::Nodes(list) = &target.value {
            for node in list {
                check_node(problems, &target.referenced, &format!("{key}.target"), node);
            }
        }
        if let (Target::Select { role: Some(_), .. }, Some(adapter)) = (&target.value, adapter) {
            if !adapter.has_roles {
                problems.at(
                    &target.referenced,
                    format!("{key}.target.role"),
                    format!("system `{}` has no roles", adapter.name),
                );
            }
        }
    }
    if let Some(on) = &s.on {
        if let Some(node) = &on.log.node {
            check_node(
                problems,
                &node.referenced,
                &format!("{key}.on.log.node"),
                &node.value,
            );
        }
        if let Err(e) = regex::Regex::new(&on.log.regex.value) {
            problems.at(
                &on.log.regex.referenced,
                format!("{key}.on.log.regex"),
                format!("invalid regex: {e}"),
            );
        }
    }
    if let Some(when) = &s.when {
        if let Some(node) = &when.node {
            check_node(
                problems,
                &node.referenced,
                &format!("{key}.when.node"),
                &node.value,
            );
        }
        if when.role.is_some() == when.behind.is_some() {
            problems.at(
                at,
                format!("{key}.when"),
                "`when:` needs one of `role:` and `behind:`",
            );
        }
        if let (Some(_), Some(adapter)) = (when.behind, adapter) {
            if !systems::has_applied_index(adapter.name) {
                problems.at(
                    at,
                    format!("{key}.when.behind"),
                    format!("system `{}` has no applied-index probe", adapter.name),
                );
            }
        }
    }
}

/// The `s3:` section and the per-kind workload sections.
fn validate_sections(spec: &Scenario, problems: &mut Problems) {
    let w = &spec.workload;
    // The `s3:` section: credentials, bucket and port of the systems that speak S3; needed by
    // system `s3` always and by the others for the object-store workloads.
    let speaks_s3 = crate::systems::speaks_s3(&spec.system.value);
    let needs_s3 = spec.system.value == "s3"
        || (speaks_s3 && matches!(w.kind.value, WorkloadKind::S3Object | WorkloadKind::Fencing));
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
    if !speaks_s3 && spec.s3.is_some() {
        problems.at(
            &Location::UNKNOWN,
            "s3",
            format!(
                "`s3:` applies to the systems that speak S3 ({})",
                crate::systems::s3_systems().join(", ")
            ),
        );
    }
    // The per-kind sections: each belongs to its workload, located at the section.
    let misplaced = |section: &str, kind: &str, at: &Location| {
        (
            *at,
            format!("workload.{section}"),
            format!("`{section}:` applies to the {kind} workload only"),
        )
    };
    let mut section_problems = Vec::new();
    if let Some(mix) = &w.mix {
        if w.kind.value != WorkloadKind::S3Object {
            section_problems.push(misplaced("mix", "s3-object", &mix.referenced));
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
        if w.kind.value != WorkloadKind::Fencing {
            section_problems.push(misplaced("fencing", "fencing", &fencing.referenced));
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
        if w.kind.value != WorkloadKind::Stream {
            section_problems.push(misplaced("stream", "stream", &stream.referenced));
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
        if w.kind.value != WorkloadKind::Lease {
            section_problems.push(misplaced("lease", "lease", &lease.referenced));
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
    if w.duplicate_after.is_some() && w.kind.value != WorkloadKind::Create {
        section_problems.push((
            w.kind.referenced,
            "workload.duplicate-after".into(),
            "duplicate-after applies to the create workload only".into(),
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
            CheckSpec::Durable(_) | CheckSpec::RetryConsistent(_) | CheckSpec::StaysUp(_) => {}
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
            CheckSpec::Fencing(_) => {
                if w.kind.value != WorkloadKind::Fencing {
                    problems.at(
                        &check.referenced,
                        format!("checks[{i}].fencing"),
                        "the fencing check reads the fencing workload's events: needs `workload: { kind: fencing }`",
                    );
                }
            }
            CheckSpec::ConditionalWrites(_) => {
                if !speaks_s3 {
                    problems.at(
                        &check.referenced,
                        format!("checks[{i}].conditional-writes"),
                        "the conditional-writes probe needs an object store (a system that speaks S3)",
                    );
                }
            }
            CheckSpec::Linearizable(lin) => {
                if lin.model.value.parse::<checker::Model>().is_err() {
                    problems.at(
                        &lin.model.referenced,
                        format!("checks[{i}].linearizable.model"),
                        format!(
                            "unknown model `{}` (models: {})",
                            lin.model.value,
                            checker::Model::NAMES.join(", ")
                        ),
                    );
                }
            }
        }
    }
}
