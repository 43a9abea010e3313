//! `chaos run --attach PROJECT`: a run on a compose project's nodes, which it neither creates
//! nor removes (cluster/attach.rs finds them); left up, healed and healthy.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::drive::{drive, Stage};
use super::{key_prefix, Played, RunOptions};
use crate::cluster::{docker, images, Cluster};
use crate::error::{HarnessError, Result};
use crate::run_folder::ObservedLog;
use crate::scenario::plan::Plan;
use crate::scenario::LoadedScenario;

/// `play` on a compose project's nodes (`--attach`): nothing is built or created but the
/// helpers partitions need; the nodes are found, their images asked the `config:`
/// preconditions (a build that lacks a key stops the run there, the cluster untouched), played
/// on, and left up and healed.
#[allow(clippy::too_many_arguments)]
pub(super) async fn play_attached(
    loaded: &LoadedScenario,
    project: &str,
    options: &RunOptions,
    run_dir: &Path,
    run_id: &str,
    plan: &Plan,
    interrupt: CancellationToken,
    phases: &super::phases::Phases,
) -> Result<Played> {
    let docker = docker::connect().await?;
    let tools = images::images_for(&loaded.compose, &[]);
    tokio::select! {
        r = images::ensure(&docker, &loaded.compose.dir, &tools, false) => r?,
        _ = interrupt.cancelled() => return Err(HarnessError::Interrupted("while building images".into())),
    }
    let ready_timeout = options.ready_timeout.unwrap_or_else(|| {
        crate::systems::lookup(&loaded.spec.system.value)
            .map_or(Duration::from_secs(120), |info| info.ready_within)
    });
    let run_start = Instant::now();
    let spec = crate::cluster::AttachSpec {
        project,
        profile: &loaded.profile,
        compose: &loaded.compose,
        nodes: &loaded.nodes,
        run_id,
        logs_dir: &run_dir.join("logs"),
        run_start,
        ready_timeout,
        secrets: &loaded.secrets(),
    };
    let cluster = tokio::select! {
        c = Cluster::attach(&docker, spec) => c?,
        _ = interrupt.cancelled() => return Err(HarnessError::Interrupted("while attaching".into())),
    };
    let cluster = Arc::new(cluster);
    eprintln!(
        "attached to compose project {project}: {} (keys prefixed {})",
        cluster
            .nodes
            .iter()
            .map(|n| format!("{} ({})", n.name, n.container))
            .collect::<Vec<_>>()
            .join(", "),
        key_prefix(run_id)
    );
    let lacking = tokio::select! {
        r = ask_attached_build(&docker, loaded, run_id, run_dir, &cluster) => r,
        _ = interrupt.cancelled() => Err(HarnessError::Interrupted("while asking the build for its keys".into())),
    };
    match lacking {
        Ok(lacking) if lacking.is_empty() => {}
        lacking => {
            // Nothing was played: the project's cluster is as it was; only the helpers go.
            let teardown = match Arc::try_unwrap(cluster) {
                Ok(cluster) => cluster.teardown().await,
                Err(_) => docker::sweep(&docker, Some(run_id)).await.map(|_| ()),
            };
            let lacking = lacking?;
            teardown?;
            eprintln!("left project {project} as it was: nothing was played");
            return Ok(Played::BuildLacks(lacking));
        }
    }
    let stage = Stage {
        loaded,
        ready_timeout: options.ready_timeout,
        cluster: &cluster,
        run_dir,
        run_start,
        plan,
        interrupt,
        phases,
    };
    let (_, no_proxy_events) = tokio::sync::mpsc::unbounded_channel();
    let result = drive(stage, no_proxy_events).await;
    // Whatever the scenario's `final:` said and however the run ended: the project's cluster
    // stays up, every fault undone, every node healthy.
    let healed = leave_healed(&cluster, ready_timeout).await;
    match &healed {
        Ok(done) if done.is_empty() => eprintln!("left project {project} up and healthy"),
        Ok(done) => eprintln!(
            "left project {project} up and healthy ({})",
            done.join(", ")
        ),
        Err(e) => eprintln!("project {project} was not left healthy: {e}"),
    }
    let teardown = match Arc::try_unwrap(cluster) {
        Ok(cluster) => cluster.teardown().await,
        Err(_) => docker::sweep(&docker, Some(run_id)).await.map(|_| ()),
    };
    result
        .and(healed.map(|_| ()))
        .and(teardown)
        .map(|()| Played::Complete)
}

/// The `config:` preconditions of an attached run, asked of the image each attached container
/// runs (by its id, so a tag moved since `docker compose up` does not answer for it), as a
/// normal run asks the compose file's images before it creates the nodes.
async fn ask_attached_build(
    docker: &bollard::Docker,
    loaded: &LoadedScenario,
    run_id: &str,
    run_dir: &Path,
    cluster: &Cluster,
) -> Result<Vec<String>> {
    if !loaded
        .spec
        .reached
        .values()
        .any(|p| p.value.config.is_some())
    {
        return Ok(Vec::new());
    }
    let images = cluster.node_images().await?;
    let observed = ObservedLog::create(run_dir)
        .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))?;
    let image_of = |node: &str| {
        images
            .get(node)
            .map(|(id, shown)| crate::observe::BuildImage {
                run: id.clone(),
                shown: shown.clone(),
            })
    };
    let lacking =
        crate::observe::check_build_of(docker, loaded, run_id, &observed, &image_of).await;
    let _ = docker::sweep(docker, Some(run_id)).await;
    lacking
}

/// The end of an attached run: every fault undone (the fault registry's final heal, whatever
/// the scenario's `final:` says) and every node healthy again, within `timeout`. What it did
/// is returned, one line each.
async fn leave_healed(cluster: &Cluster, timeout: Duration) -> Result<Vec<String>> {
    let mut done = Vec::new();
    for (node, action, outcome) in crate::faults::kinds::final_heal(cluster).await {
        match outcome {
            Ok(()) => done.push(format!("{action} {node}")),
            Err(e) => {
                return Err(HarnessError::infra(format!(
                    "could not heal the attached cluster ({action} {node}: {e})"
                )))
            }
        }
    }
    cluster.wait_ready(timeout).await?;
    Ok(done)
}
