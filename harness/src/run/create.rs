//! A run's own cluster: the images built, the `config:` preconditions asked of them, the nodes
//! created and started, the run driven on them, and everything torn down on every way out.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::drive::{drive, Stage};
use super::{attached, Played, RunOptions};
use crate::cluster::{docker, images};
use crate::cluster::{Cluster, ClusterSpec};
use crate::error::{HarnessError, Result};
use crate::run_folder::ObservedLog;
use crate::scenario::plan::Plan;
use crate::scenario::LoadedScenario;

/// Everything that touches Docker. The cluster is torn down whatever happens inside.
pub(super) async fn play(
    loaded: &LoadedScenario,
    options: &RunOptions,
    run_dir: &Path,
    run_id: &str,
    plan: &Plan,
    interrupt: CancellationToken,
    phases: &super::phases::Phases,
) -> Result<Played> {
    let docker = docker::connect().await?;
    let swept = docker::sweep(&docker, None).await?;
    if !swept.is_empty() {
        eprintln!(
            "swept leftovers of dead runs: {} container(s), {} network(s), {} volume(s)",
            swept.containers.len(),
            swept.networks.len(),
            swept.volumes.len()
        );
    }
    if let Some(caveat) = crate::systems::caveat(&loaded.spec.system.value) {
        eprintln!("note: {caveat}");
    }
    let repo = loaded.compose.dir.clone();
    if let Some(project) = &loaded.attach {
        return attached::play_attached(
            loaded, project, options, run_dir, run_id, plan, interrupt, phases,
        )
        .await;
    }
    let needed = images::images_for(&loaded.compose, &loaded.nodes);
    tokio::select! {
        r = images::ensure(&docker, &repo, &needed, false) => r?,
        _ = interrupt.cancelled() => return Err(HarnessError::Interrupted("while building images".into())),
    }
    let observed = ObservedLog::create(run_dir)
        .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))?;
    let lacking = tokio::select! {
        r = crate::observe::check_build(&docker, loaded, run_id, &observed) => r,
        _ = interrupt.cancelled() => Err(HarnessError::Interrupted("while asking the build for its keys".into())),
    };
    let _ = docker::sweep(&docker, Some(run_id)).await;
    let lacking = lacking?;
    if !lacking.is_empty() {
        return Ok(Played::BuildLacks(lacking));
    }

    phases.end("image");
    let run_start = Instant::now();
    let ready_started = Instant::now();
    let mut cluster = launch_own(
        &docker,
        loaded,
        options.ready_timeout,
        (run_id, &run_dir.join("logs"), run_start),
        None,
        &interrupt,
    )
    .await?;
    let (proxy_events, proxy_rx) = tokio::sync::mpsc::unbounded_channel();
    if loaded.uses_proxy() {
        if let Err(e) = cluster.start_proxies(proxy_events).await {
            let _ = cluster.teardown().await;
            return Err(e);
        }
    }
    if let Some(created) = cluster.created {
        phases.end_at("create", created);
    }
    phases.end("ready");
    let cluster = Arc::new(cluster);
    eprintln!(
        "cluster ready in {:.1} s: {}",
        ready_started.elapsed().as_secs_f64(),
        cluster.names().join(", ")
    );
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
    let result = drive(stage, proxy_rx).await;
    // Every way out of the run goes through here (errors included); Ctrl-C cancels the
    // workload, never this.
    let teardown = match Arc::try_unwrap(cluster) {
        Ok(cluster) => cluster.teardown().await,
        Err(_) => docker::sweep(&docker, Some(run_id)).await.map(|_| ()),
    };
    let _ = docker::sweep(&docker, Some(run_id)).await;
    phases.end("teardown");
    result.and(teardown)?;
    Ok(Played::Complete)
}

/// A cluster of the harness's own, created and ready: the scenario's nodes with its
/// environment, chaosfs where its faults need it, libfaketime where it skews clocks. `project`
/// labels the nodes as that compose project's, for runs that attach to them later
/// (`--reuse-cluster`). On failure nothing of it is left.
pub(super) async fn launch_own(
    docker: &bollard::Docker,
    loaded: &LoadedScenario,
    ready_timeout: Option<Duration>,
    (run_id, logs_dir, run_start): (&str, &Path, Instant),
    project: Option<&str>,
    interrupt: &CancellationToken,
) -> Result<Cluster> {
    let repo = loaded.compose.dir.clone();
    let environment: Vec<(String, String)> = loaded
        .spec
        .cluster
        .environment
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let chaosfs = if loaded.uses_chaosfs()
        && loaded.nodes.iter().any(|n| {
            loaded
                .compose
                .service(n)
                .is_some_and(|s| !s.x_chaos.fs.is_empty())
        }) {
        Some(images::ensure_chaosfs(&repo).await?)
    } else {
        None
    };
    let chaosfs_init: Vec<String> = if loaded.tracks_unsynced() {
        vec!["lose-unsynced on".to_string()]
    } else {
        Vec::new()
    };
    let cluster_spec = ClusterSpec {
        compose: &loaded.compose,
        nodes: &loaded.nodes,
        run_id,
        logs_dir,
        run_start,
        ready_timeout: ready_timeout.unwrap_or_else(|| {
            crate::systems::lookup(&loaded.spec.system.value)
                .map_or(Duration::from_secs(120), |info| info.ready_within)
        }),
        environment: &environment,
        chaosfs: chaosfs.as_deref(),
        chaosfs_init: &chaosfs_init,
        secrets: &loaded.secrets(),
        faketime: loaded.uses_faketime(),
        project,
    };
    let cluster = tokio::select! {
        c = Cluster::launch(docker, cluster_spec) => c,
        _ = interrupt.cancelled() => Err(HarnessError::Interrupted("while starting the cluster".into())),
    };
    if cluster.is_err() {
        let _ = docker::sweep(docker, Some(run_id)).await;
    }
    cluster
}
