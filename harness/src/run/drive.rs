//! From a ready cluster to a complete history: the adapter, the recorder and the fault engine,
//! the workload with its fault steps and the progress line, then the final phase.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::key_prefix;
use crate::cluster::Cluster;
use crate::error::{HarnessError, Result};
use crate::faults::FaultEngine;
use crate::recorder::Recorder;
use crate::run_folder::{FaultLog, ObservedLog};
use crate::scenario::plan::Plan;
use crate::scenario::LoadedScenario;
use crate::systems::{self, AdapterSettings};
use crate::workloads::{self, WorkloadConfig};

/// The parts of one run that `play` set up and `drive` plays.
pub(super) struct Stage<'a> {
    pub(super) loaded: &'a LoadedScenario,
    /// `--ready-timeout`, which also bounds how long a node a fault restarted may take.
    pub(super) ready_timeout: Option<Duration>,
    pub(super) cluster: &'a Arc<Cluster>,
    pub(super) run_dir: &'a Path,
    pub(super) run_start: Instant,
    pub(super) plan: &'a Plan,
    pub(super) interrupt: CancellationToken,
    pub(super) phases: &'a super::phases::Phases,
}

/// From a ready cluster to a complete history: the adapter, the recorder and fault engine, the
/// workload with its faults, then the final phase (heal, settle, final reads, lookups).
pub(super) async fn drive(
    stage: Stage<'_>,
    proxy_events: tokio::sync::mpsc::UnboundedReceiver<crate::cluster::proxy::ProxyEvent>,
) -> Result<()> {
    let Some(adapter) = connect_adapter(&stage).await? else {
        return Ok(());
    };
    stage.phases.end("ready");
    let io = |e: std::io::Error| HarnessError::infra(format!("cannot write the run folder: {e}"));
    let run_dir = stage.run_dir;
    let recorder = Arc::new(
        Recorder::create(&run_dir.join(crate::run_folder::HISTORY), stage.run_start).map_err(io)?,
    );
    let fault_log = FaultLog::create(run_dir).map_err(io)?;
    let ready_within = systems::lookup(&stage.loaded.spec.system.value)
        .map_or(Duration::from_secs(120), |info| info.ready_within);
    let engine = Arc::new(
        FaultEngine::new(
            stage.cluster.clone(),
            adapter.clone(),
            recorder.clone(),
            fault_log,
        )
        .with_ready_within(stage.ready_timeout.unwrap_or(ready_within)),
    );
    let _proxy_task = AbortOnDrop(engine.clone().log_proxy_effects(proxy_events));
    let workload = &stage.loaded.spec.workload;
    let nodes = workload
        .nodes
        .as_ref()
        .map(|n| n.value.clone())
        .or_else(|| adapter.client_nodes())
        .unwrap_or_else(|| stage.cluster.names());
    let config = Arc::new(WorkloadConfig::for_scenario(
        workload,
        nodes,
        stage.plan.seed,
    ));
    let spec = &stage.loaded.spec;
    if spec
        .checks
        .iter()
        .any(|c| matches!(c.value, crate::scenario::CheckSpec::ConditionalWrites(_)))
    {
        workloads::fencing::probe(adapter.as_ref(), &config.nodes[0], config.timeout, run_dir)
            .await?;
    }
    // The preconditions only a probe sees are watched from the workload's start to the end
    // of the final phase.
    let preconditions: Vec<(String, crate::scenario::Precondition)> = spec
        .reached
        .iter()
        .map(|(name, p)| (name.clone(), p.value.clone()))
        .collect();
    let observed = Arc::new(ObservedLog::append(run_dir).map_err(io)?);
    let stop_watching = CancellationToken::new();
    let _stop_watching_on_error = stop_watching.clone().drop_guard();
    let watchers = crate::observe::spawn(
        &preconditions,
        engine.clone(),
        observed,
        stop_watching.clone(),
    );
    play_workload(&stage, &engine, &config).await?;
    stage.phases.end("workload");
    final_phase(&stage, &engine, &config).await;
    stop_watching.cancel();
    for watcher in watchers {
        let _ = watcher.await;
    }
    match engine.refused() {
        Some(why) => Err(HarnessError::infra(format!(
            "the scenario cannot be played on this build: {why}"
        ))),
        None => Ok(()),
    }
}

/// The system's adapter, once the cluster is ready for the workload; None when interrupted.
async fn connect_adapter(stage: &Stage<'_>) -> Result<Option<Arc<dyn systems::SystemAdapter>>> {
    let spec = &stage.loaded.spec;
    let info = systems::lookup(&spec.system.value)
        .ok_or_else(|| HarnessError::BadInput(format!("unknown system {}", spec.system.value)))?;
    let attached = stage.cluster.attached_project().is_some();
    let prefix = key_prefix(&stage.cluster.run_id);
    let settings = AdapterSettings::for_scenario(spec, attached.then_some(prefix.as_str()));
    let mut adapter: Arc<dyn systems::SystemAdapter> =
        Arc::from((info.make)(stage.cluster, &settings));
    if attached {
        adapter = Arc::new(systems::prefixed::Prefixed::new(adapter, prefix));
    }
    // The system's readiness budget: an Ozone cluster is serviceable only once an OM leads
    // and the SCM has left safe mode, well after its ports answer on a busy machine.
    tokio::select! {
        r = adapter.prepare(info.ready_within.max(Duration::from_secs(60))) => r.map_err(|e| HarnessError::infra(format!(
            "the cluster is up but not ready for the workload: {e}"
        )))?,
        _ = stage.interrupt.cancelled() => return Ok(None),
    }
    Ok(Some(adapter))
}

/// The workload, with the fault steps and the progress line beside it; returns once the
/// workload and every fault task have ended.
async fn play_workload(
    stage: &Stage<'_>,
    engine: &Arc<FaultEngine>,
    config: &Arc<WorkloadConfig>,
) -> Result<()> {
    let spec = &stage.loaded.spec;
    let recorder = &engine.recorder;
    let stop_faults = stage.interrupt.child_token();
    let workload_start = Instant::now();
    // On the history's clock: where a replay's `at:` times count from.
    let _ = stage.phases.workload_started.set(recorder.now());
    let steps: Vec<_> = spec.faults.iter().map(|s| &s.value).collect();
    let fault_tasks = engine.spawn_steps(&steps, stage.plan, workload_start, stop_faults.clone());
    let workload = config.kind.workload();
    eprintln!("workload: {}", workload.describe(config));
    // After the lines above, so the redrawn line does not tear them; stopped on every way out.
    let stop_progress = CancellationToken::new();
    let _stop_progress_on_error = stop_progress.clone().drop_guard();
    let progress = tokio::spawn(crate::progress::show(
        engine.clone(),
        recorder.clone(),
        stage.plan.clone(),
        config.duration,
        workload_start,
        stop_progress.clone(),
    ));
    let end = Arc::new(match &spec.workload.lasts_past {
        Some(_) => workloads::WorkloadEnd::waiting_for_a_step(config.duration),
        None => workloads::WorkloadEnd::after(config.duration),
    });
    let _extend = spec
        .workload
        .lasts_past
        .as_ref()
        .map(|l| extend_past_step(engine.clone(), end.clone(), l.value, config.duration));
    let context = workloads::WorkloadContext {
        adapter: engine.adapter.clone(),
        recorder: recorder.clone(),
        config: config.clone(),
        run_dir: stage.run_dir.to_path_buf(),
        cancel: stage.interrupt.clone(),
        end,
    };
    workload.play(context).await?;
    stop_progress.cancel();
    let _ = progress.await;
    stop_faults.cancel();
    for task in fault_tasks {
        let _ = task.await;
    }
    Ok(())
}

/// `lasts-past:`: once the step is over, the workload may end `by` later. A step that is not
/// over by the end of the duration plus the engine's readiness budget lets it end (the
/// `reached:` predicates then say what did not happen).
fn extend_past_step(
    engine: Arc<FaultEngine>,
    end: Arc<workloads::WorkloadEnd>,
    lasts: crate::scenario::LastsPast,
    duration: Duration,
) -> AbortOnDrop {
    AbortOnDrop(tokio::spawn(async move {
        let give_up = Instant::now() + duration + engine.ready_within;
        while !engine.steps_over().contains(&lasts.step) && Instant::now() < give_up {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let over = Instant::now();
        if engine.steps_over().contains(&lasts.step) {
            eprintln!(
                "workload: step {} is over; the workload lasts {} more",
                lasts.step, lasts.by
            );
            end.step_over_at(over + lasts.by.0);
        } else {
            end.step_over_at(over);
        }
    }))
}

/// After the workload: which nodes went down on their own, the final heal, the settle, the
/// final reads and the per-node lookups a converge check asks for.
async fn final_phase(stage: &Stage<'_>, engine: &Arc<FaultEngine>, config: &WorkloadConfig) {
    let (interrupt, spec) = (&stage.interrupt, &stage.loaded.spec);
    let logs = stage.run_dir.join("logs");
    // Before the final heal starts them again. Asked again after settling: a JVM that decided
    // to terminate may take a minute to exit.
    engine.record_self_exits(&logs).await;
    if interrupt.is_cancelled() {
        engine.final_heal().await;
        return;
    }
    let final_phase = &spec.final_phase;
    if final_phase.heal {
        engine.final_heal().await;
    }
    tokio::select! {
        _ = tokio::time::sleep(final_phase.settle.0) => {}
        _ = interrupt.cancelled() => return,
    }
    engine.record_self_exits(&logs).await;
    let adapter = engine.adapter.as_ref();
    if final_phase.reads {
        let first = u64::from(config.processes) * 1_000_000;
        tokio::select! {
            _ = workloads::final_reads(adapter, &engine.recorder, config, first) => {}
            _ = interrupt.cancelled() => return,
        }
    }
    // Per-node lookups move leadership around: only when a converge check asks for them.
    let wants_lookups = spec
        .checks
        .iter()
        .any(|c| matches!(&c.value, crate::scenario::CheckSpec::Converge(c) if c.lookups));
    let keys = workloads::touched_keys(config);
    let lookup_keys = wants_lookups.then_some(keys.as_slice());
    stage.phases.end("settle");
    crate::observe::record_convergence(adapter, stage.run_dir, lookup_keys).await;
    if stage.loaded.uses_chaosfs() {
        engine.merge_chaosfs_logs(stage.loaded).await;
    }
    stage.phases.end("converge");
}

/// Ends a background task when the run's driver is done with it (on every way out).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
