//! `chaos run --reuse-cluster`: one cluster for every seed of a scenario. The harness creates
//! it once, labelled as a compose project of its own, and each seed's run attaches to it as
//! `--attach` does: its keys carry the run's prefix (no seed sees another's data), and it
//! leaves every fault undone and every node healthy, which the next seed checks again before
//! it starts. Faults that need a fresh node (chaosfs, clock skew, the client proxy) are
//! refused when the scenario is loaded, as for `--attach`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::create::launch_own;
use crate::cluster::{docker, images, Cluster};
use crate::error::{HarnessError, Result};
use crate::scenario::LoadedScenario;

/// The compose project names of reused clusters begin with this: a run on one is not
/// reproduced with `--attach` (the project is gone when the command ends) but by its seed.
pub const PROJECT_PREFIX: &str = "chaos-reuse-";

pub struct ReusedCluster {
    cluster: Cluster,
    pub project: String,
    /// Where the cluster's own log followers write, across every seed.
    pub logs_dir: PathBuf,
}

impl ReusedCluster {
    /// Creates the scenario's cluster and waits until it is ready.
    pub async fn launch(
        loaded: &LoadedScenario,
        out: &Path,
        ready_timeout: Option<std::time::Duration>,
        interrupt: &CancellationToken,
    ) -> Result<ReusedCluster> {
        let docker = docker::connect().await?;
        docker::sweep(&docker, None).await?;
        let needed = images::images_for(&loaded.compose, &loaded.nodes);
        tokio::select! {
            r = images::ensure(&docker, &loaded.compose.dir, &needed, false) => r?,
            _ = interrupt.cancelled() => return Err(HarnessError::Interrupted("while building images".into())),
        }
        let run_id = super::new_run_id(time::OffsetDateTime::now_utc());
        let project = format!("{PROJECT_PREFIX}{run_id}");
        let logs_dir = out
            .join(&loaded.spec.name)
            .join(format!("reused-cluster-{run_id}"))
            .join("logs");
        std::fs::create_dir_all(&logs_dir).map_err(|e| {
            HarnessError::infra(format!("cannot create {}: {e}", logs_dir.display()))
        })?;
        let started = Instant::now();
        let cluster = launch_own(
            &docker,
            loaded,
            ready_timeout,
            (&run_id, &logs_dir, started),
            Some(&project),
            interrupt,
        )
        .await?;
        eprintln!(
            "one cluster for every seed of {}: compose project {project}, ready in {:.1} s \
             (its logs across the seeds: {})",
            loaded.spec.name,
            started.elapsed().as_secs_f64(),
            logs_dir.display()
        );
        Ok(ReusedCluster {
            cluster,
            project,
            logs_dir,
        })
    }

    /// Removes the cluster (its containers, network and volumes).
    pub async fn remove(self) -> Result<()> {
        let project = self.project.clone();
        self.cluster.teardown().await?;
        eprintln!("removed the reused cluster {project}");
        Ok(())
    }
}
