//! Loading a scenario: its file parsed (scenario/), its compose profile found and read, and
//! the whole validated against the compose profile, the system adapter, the fault and workload
//! registries and the checker (validate.rs), before any container starts. It sits above the
//! registries and the systems, which validation asks, so that scenario/ (the file's types and
//! their parsing) does not ask them.

mod validate;

use std::collections::BTreeMap;
use std::path::Path;

use crate::faults::kinds::Mechanism;
use crate::scenario::{parse, read_file, LoadedScenario, Scenario, ScenarioError};
use crate::systems;
use validate::{find_compose, validate, NodeFacts, Problems};
pub use validate::{FSYNC_ERRNOS, MAX_FAULT_STEPS};

/// How `chaos run` / `chaos lint` load a scenario, beyond what its file says.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// `--scm-ha`: play an Ozone scenario on its profile's three-SCM variant
    /// (`ozone` -> `ozone-scm-ha`); any other system is an error.
    pub scm_ha: bool,
}

pub fn load(path: &Path) -> Result<LoadedScenario, Vec<ScenarioError>> {
    load_with(path, LoadOptions::default())
}

pub fn load_with(path: &Path, options: LoadOptions) -> Result<LoadedScenario, Vec<ScenarioError>> {
    let text = read_file(path).map_err(|e| vec![e])?;
    load_text(path, text, options)
}

/// Loads a scenario from text (a schedule `chaos shrink` or `--replay` wrote); `path` names it
/// in messages and is where a relative compose file is looked for.
pub fn load_text(
    path: &Path,
    text: String,
    options: LoadOptions,
) -> Result<LoadedScenario, Vec<ScenarioError>> {
    let spec = parse(path, &text).map_err(|e| vec![e])?;
    let mut problems = Problems::new(path);
    let mut profile = spec.cluster.profile.value.clone();
    if options.scm_ha {
        match systems::scm_ha_profile(&spec.system.value, &profile) {
            Some(variant) => profile = variant,
            None => {
                problems.at(
                    &spec.system.referenced,
                    "system",
                    format!(
                        "--scm-ha plays an Ozone scenario on three SCMs (profile `ozone-scm-ha`); \
                         this scenario is system {}, which has no SCM",
                        chaos_core::shown::shown(&spec.system.value)
                    ),
                );
                return Err(problems.list);
            }
        }
    }
    let (compose_path, compose) = match find_compose(path, &spec.cluster.compose) {
        Ok(found) => found,
        Err(message) => {
            problems.at(&spec.cluster.compose.referenced, "cluster.compose", message);
            return Err(problems.list);
        }
    };
    let nodes = compose.profile_nodes(&profile);
    if nodes.is_empty() {
        let flag = if profile != spec.cluster.profile.value {
            format!(
                " (--scm-ha plays profile {} on `{profile}`)",
                chaos_core::shown::shown(&spec.cluster.profile.value)
            )
        } else {
            String::new()
        };
        problems.at(
            &spec.cluster.profile.referenced,
            "cluster.profile",
            format!(
                "no service of {} is in profile {}{flag} (profiles: {})",
                compose_path.display(),
                chaos_core::shown::shown(&profile),
                compose.profiles().join(", ")
            ),
        );
    }
    // From here on the compose file is the profile's cluster, its services named as nodes.
    let compose = compose.into_profile(&profile);
    let fs_nodes: Vec<String> = nodes
        .iter()
        .filter(|n| compose.service(n).is_some_and(|s| !s.x_chaos.fs.is_empty()))
        .cloned()
        .collect();
    let clocks: BTreeMap<String, Result<(), String>> = nodes
        .iter()
        .filter_map(|n| Some((n.clone(), compose.service(n)?.x_chaos.clock_skew.support())))
        .collect();
    let jvm_nodes: Vec<String> = nodes
        .iter()
        .filter(|n| compose.service(n).is_some_and(|s| s.x_chaos.jvm.is_some()))
        .cloned()
        .collect();
    let facts = NodeFacts {
        nodes: &nodes,
        jvm_nodes: &jvm_nodes,
        fs_nodes: &fs_nodes,
        clocks: &clocks,
    };
    validate(&spec, &facts, &mut problems);
    validate_trace_origin(&spec, &mut problems);
    if problems.list.is_empty() {
        Ok(LoadedScenario {
            path: path.to_path_buf(),
            text,
            spec,
            compose_path,
            compose,
            nodes,
            profile,
            scm_ha: options.scm_ha,
            attach: None,
        })
    } else {
        Err(problems.list)
    }
}

/// What the scenario's faults need of the nodes and the run, which the fault registry says.
impl LoadedScenario {
    /// Whether the nodes that can mount chaosfs (x-chaos.fs) should: only when a fault needs it,
    /// so other scenarios run on the plain filesystem.
    pub fn uses_chaosfs(&self) -> bool {
        self.spec.faults.iter().any(|f| {
            let s = &f.value;
            s.actions.0.iter().any(|a| a.fault().needs_chaosfs(s)) || s.lose_unsynced == Some(true)
        })
    }

    /// Whether the nodes that can take clock skew (x-chaos.clock-skew) load libfaketime: only
    /// when a fault needs it, so other scenarios run on the plain clock.
    pub fn uses_faketime(&self) -> bool {
        self.spec.faults.iter().any(|f| {
            f.value
                .actions
                .0
                .iter()
                .any(|a| a.fault().mechanism() == Mechanism::Faketime)
        })
    }

    /// Plays the scenario on compose project `project` (`chaos run --attach`), or says, one
    /// line per problem, what needs the harness to create the nodes and what to do instead:
    /// filesystem faults (chaosfs is mounted when a node is created), clock skew (libfaketime
    /// is preloaded then), the client proxy (set up only in front of a cluster the harness
    /// starts) and `cluster.environment` (variables are set when a node is created).
    pub fn attach_to(&mut self, project: &str) -> Result<(), Vec<ScenarioError>> {
        let mut problems = Problems::new(&self.path);
        let instead = "play it without --attach (chaos then starts the cluster itself)";
        if project.is_empty()
            || !project
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_".contains(c))
        {
            problems.at(
                &self.spec.cluster.profile.referenced,
                "",
                format!(
                    "--attach {}: a compose project name is lower-case letters, digits, \
                     `-` and `_` (as `docker compose -p` takes it)",
                    chaos_core::shown::shown(project)
                ),
            );
        }
        self.fresh_node_problems("--attach", instead, &mut problems);
        if !self.spec.cluster.environment.is_empty() {
            let keys: Vec<&str> = self
                .spec
                .cluster
                .environment
                .keys()
                .map(String::as_str)
                .collect();
            problems.at(
                &self.spec.cluster.profile.referenced,
                "cluster.environment",
                format!(
                    "--attach cannot set {} on running nodes (variables are set when a node is \
                     created): put them in the compose file (or an override file) before \
                     `docker compose up`, or {instead}",
                    keys.join(", ")
                ),
            );
        }
        if problems.list.is_empty() {
            self.attach = Some(project.to_string());
            Ok(())
        } else {
            Err(problems.list)
        }
    }

    /// `chaos run --reuse-cluster`: one cluster of the harness's own for every seed, each run
    /// attached to it. Refused, one line per problem, where a run needs nodes made for it.
    pub fn check_reusable(&self) -> Result<(), Vec<ScenarioError>> {
        let mut problems = Problems::new(&self.path);
        let instead = "play it without --reuse-cluster (each seed then gets a cluster of its own)";
        self.fresh_node_problems("--reuse-cluster", instead, &mut problems);
        if problems.list.is_empty() {
            Ok(())
        } else {
            Err(problems.list)
        }
    }

    /// What a run on nodes it did not create cannot do: filesystem faults, clock skew and the
    /// client proxy, each set up when a node is created for the run.
    fn fresh_node_problems(&self, flag: &str, instead: &str, problems: &mut Problems) {
        for (i, step) in self.spec.faults.iter().enumerate() {
            let actions = step
                .value
                .actions
                .0
                .iter()
                .copied()
                .chain(step.value.then.as_ref().map(|t| t.action));
            for action in actions {
                let mechanism = action.fault().mechanism();
                let why = if action.fault().needs_chaosfs(&step.value) {
                    "needs chaosfs mounted over the node's data directories, which only a node \
                     created for the run has"
                } else if mechanism == Mechanism::Faketime {
                    "needs libfaketime preloaded into the node's processes, which only a node \
                     created for the run has"
                } else if mechanism == Mechanism::Proxy {
                    "needs the harness's client proxy, which is set up only in front of a \
                     cluster started for the run"
                } else {
                    continue;
                };
                problems.at(
                    &step.referenced,
                    format!("faults[{i}]"),
                    format!(
                        "{flag} cannot play `{}`: it {why}; {instead}",
                        action.name()
                    ),
                );
                break;
            }
        }
        if self.spec.cluster.proxy {
            problems.at(
                &self.spec.cluster.profile.referenced,
                "cluster.proxy",
                format!(
                    "{flag} cannot put the harness's client proxy in front of a cluster it did \
                     not start; {instead}"
                ),
            );
        }
    }

    /// Whether clients go through the proxy: asked for, or needed by a proxy fault.
    pub fn uses_proxy(&self) -> bool {
        self.spec.cluster.proxy
            || self.spec.faults.iter().any(|f| {
                f.value
                    .actions
                    .0
                    .iter()
                    .any(|a| a.fault().mechanism() == Mechanism::Proxy)
            })
    }
}

/// Each step's predicate must be one of `reached:`: the verdict reads the step from it.
fn validate_trace_origin(spec: &Scenario, problems: &mut Problems) {
    let Some(origin) = &spec.trace else { return };
    for (i, step) in origin.steps.iter().enumerate() {
        if !spec.reached.contains_key(&step.reached.value) {
            problems.at(
                &step.reached.referenced,
                format!("trace.steps[{i}].reached"),
                format!(
                    "{} is no predicate of `reached:`; each step of the trace names the one \
                     that observes it",
                    chaos_core::shown::shown(&step.reached.value)
                ),
            );
        }
    }
}
