//! Watching, while a run plays, for the `reached:` predicates only a probe can see (a role, a
//! node behind, a metric past a bound, the build's configuration keys): each one seen is a line
//! of observed.jsonl, which the checks read afterwards with everything else the run recorded.
//! After the final phase, every node's applied index and lookups (converge.json), which the
//! `converge` check reads: the verdict asks no live node.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::faults::FaultEngine;
use crate::run_folder::{Converged, Observed, ObservedLog};
use crate::scenario::{NodeRef, Precondition, ProbePredicate};
use crate::systems::{self, SystemAdapter};

/// One task per live predicate; they end when `stop` is cancelled (after the final phase).
pub fn spawn(
    preconditions: &[(String, Precondition)],
    engine: Arc<FaultEngine>,
    out: Arc<ObservedLog>,
    stop: CancellationToken,
) -> Vec<tokio::task::JoinHandle<()>> {
    preconditions
        .iter()
        .filter(|(_, p)| p.is_observed_live())
        .map(|(name, p)| {
            let (name, p) = (name.clone(), p.clone());
            let (engine, out, stop) = (engine.clone(), out.clone(), stop.clone());
            tokio::spawn(async move {
                tokio::select! {
                    _ = stop.cancelled() => {}
                    _ = watch(&name, &p, &engine, &out) => {}
                }
            })
        })
        .collect()
}

async fn watch(name: &str, p: &Precondition, engine: &FaultEngine, out: &ObservedLog) {
    let record = |reached: bool, evidence: String| {
        out.write(&Observed {
            name: name.to_string(),
            time: engine.recorder.now(),
            reached,
            evidence,
        })
    };
    let Some(probe) = &p.probe else {
        return;
    };
    if let Some(step) = &probe.after_step {
        while !engine.steps_over().contains(&step.value) {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // The nodes it watches: the one named, or those step N acted on, once it has.
    let nodes: Option<Vec<String>> = match probe.node.as_ref().map(|n| &n.value) {
        None => None,
        Some(NodeRef::Named(name)) => Some(vec![name.clone()]),
        Some(NodeRef::OfStep(step)) => loop {
            if let Some(nodes) = engine.targets_of(step.value) {
                break Some(nodes);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        },
    };
    loop {
        if let Some(evidence) = probe_once(engine.adapter.as_ref(), probe, nodes.as_deref()).await {
            record(true, evidence);
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The image a `config:` predicate asks: the one a throwaway container is created from, and
/// the name the sentences give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildImage {
    pub run: String,
    pub shown: String,
}

/// The `config:` predicates, asked of each node's image (from the compose file) before the
/// cluster starts (a build that lacks a key the bug needs is known in seconds, not after a run
/// that tested nothing). Each answer is a line of observed.jsonl; returns the sentences of the
/// keys the build lacks.
pub async fn check_build(
    docker: &bollard::Docker,
    loaded: &crate::scenario::LoadedScenario,
    run_id: &str,
    out: &ObservedLog,
) -> crate::error::Result<Vec<String>> {
    let of_compose = |node: &str| {
        let image = loaded.compose.service(node)?.image.clone()?;
        Some(BuildImage {
            run: image.clone(),
            shown: image,
        })
    };
    check_build_of(docker, loaded, run_id, out, &of_compose).await
}

/// The `config:` predicates asked of the images `image_of` names per node: the compose file's
/// for a run that creates its nodes, the containers' own for an attached run (what runs there,
/// whatever the compose file or its variables say now).
pub async fn check_build_of(
    docker: &bollard::Docker,
    loaded: &crate::scenario::LoadedScenario,
    run_id: &str,
    out: &ObservedLog,
    image_of: &(dyn Fn(&str) -> Option<BuildImage> + Sync),
) -> crate::error::Result<Vec<String>> {
    let Some(query) = systems::lookup(&loaded.spec.system.value).and_then(|s| s.config_query)
    else {
        return Ok(Vec::new());
    };
    let mut lacking = Vec::new();
    for (name, p) in &loaded.spec.reached {
        let Some(config) = &p.value.config else {
            continue;
        };
        let node = &config.node.value;
        let Some(BuildImage { run, shown: image }) = image_of(node) else {
            continue;
        };
        let body = bollard::models::ContainerCreateBody {
            image: Some(run),
            cmd: Some(query(&config.key)),
            labels: Some(crate::cluster::docker::run_labels(run_id)),
            ..Default::default()
        };
        let helper = format!("chaos-{run_id}-config-{node}");
        let (code, output) = crate::cluster::docker::run_once(docker, &helper, body).await?;
        let key = &config.key;
        let (reached, evidence) = if code == 0 {
            (true, format!("{node}'s build ({image}) defines {key}"))
        } else if output.contains("missing") {
            let why = config
                .if_missing
                .as_deref()
                .map_or(String::new(), |w| format!(": {w}"));
            let sentence = format!("{node}'s build ({image}) does not define {key}{why}");
            lacking.push(format!("{name}: {sentence}"));
            (false, sentence)
        } else {
            let last = output.lines().last().unwrap_or("").trim().to_string();
            (
                false,
                format!(
                    "{node}'s build ({image}) could not be asked for {key} (exit {code}: {last})"
                ),
            )
        };
        out.write(&Observed {
            name: name.clone(),
            time: 0,
            reached,
            evidence,
        });
    }
    Ok(lacking)
}

/// One look at `nodes` (every node when None): what shows the probe holds now, or None.
pub async fn probe_once(
    adapter: &dyn SystemAdapter,
    probe: &ProbePredicate,
    nodes: Option<&[String]>,
) -> Option<String> {
    let each: Vec<Option<&str>> = match nodes {
        None => vec![None],
        Some(nodes) => nodes.iter().map(|n| Some(n.as_str())).collect(),
    };
    if let Some(role) = probe.role {
        for node in each {
            if let Some(n) = systems::role_holder(adapter, role, node).await {
                return Some(format!("{n} is the {}", format!("{role:?}").to_lowercase()));
            }
        }
        return None;
    }
    if let Some(by) = probe.behind {
        for node in each {
            if let Some((n, at, top)) = systems::behind_by(adapter, node, by).await {
                return Some(format!("{n} at applied index {at}, the highest {top}"));
            }
        }
        return None;
    }
    let (metric, above) = (probe.metric.as_ref()?, probe.above?);
    let nodes: Vec<String> = match nodes {
        Some(nodes) => nodes.to_vec(),
        None => adapter.roles().await.into_keys().collect(),
    };
    for node in nodes {
        if let Some(v) = adapter.metric(&node, &metric.value).await {
            if v > above {
                return Some(format!("{node}: {} = {v} (above {above})", metric.value));
            }
        }
    }
    None
}

/// Asks the adapter for every node's applied index and, when `lookup_keys` is given, every
/// node's answer to a lookup of each key; writes converge.json (nothing for a system without
/// the probe). A node that does not answer is written as null.
pub async fn record_convergence(
    adapter: &dyn SystemAdapter,
    run_dir: &Path,
    lookup_keys: Option<&[String]>,
) {
    let indexes = adapter.applied_indexes().await;
    if indexes.is_empty() {
        return;
    }
    let lookups = match lookup_keys {
        Some(keys) => Some(adapter.replica_lookups(keys).await),
        None => None,
    };
    let recorded = Converged {
        applied: Some(indexes),
        lookups,
    };
    if let Err(e) = recorded.write(run_dir) {
        tracing::warn!("{e}");
    }
}
