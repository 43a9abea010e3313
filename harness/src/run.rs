//! One run of a scenario, in one direction: plan -> cluster + workload + faults -> history ->
//! checks -> result.json -> report. The cluster is removed on every way out.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::cluster::{docker, images};
use crate::cluster::{Cluster, ClusterSpec};
use crate::error::{HarnessError, Result, EXIT_INTERRUPTED};
use crate::faults::FaultEngine;
use crate::recorder::Recorder;
use crate::run_folder::{FaultLog, JsonlWriter};
use crate::scenario::plan::{make_plan, Plan};
use crate::scenario::LoadedScenario;
use crate::systems::{self, AdapterSettings};
use crate::workloads::{self, WorkloadConfig};
use crate::{checks, report};

pub struct RunOptions {
    pub seed: Option<u64>,
    /// Where run folders go (reports/ by default).
    pub out: PathBuf,
    /// None: the system's own (`SystemInfo::ready_within`).
    pub ready_timeout: Option<Duration>,
    /// What the suite expects of this play (`pass`, `fail`, `any`), kept in result.json so the
    /// index's junit holds the run to it.
    pub expect: Option<&'static str>,
    /// This exact run folder instead of OUT/NAME/STAMP (a shrink trial's).
    pub folder: Option<PathBuf>,
    /// The run folder this run replays (`--replay`, a shrink trial), kept in result.json.
    pub replay_of: Option<PathBuf>,
}

pub struct RunOutcome {
    pub run_dir: PathBuf,
    pub exit_code: i32,
    pub seed: u64,
    pub summary: String,
}

/// A run id that sorts by time and is unique on this machine.
fn new_run_id(now: time::OffsetDateTime) -> String {
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]t[hour][minute][second]"
        ))
        .unwrap_or_default();
    format!("{stamp}-{:04x}", rand::random::<u16>())
}

pub fn run_folder(out: &Path, scenario: &str, now: time::OffsetDateTime, seed: u64) -> PathBuf {
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_default();
    out.join(scenario).join(format!("{stamp}-s{seed}"))
}

pub async fn run_scenario(
    loaded: &LoadedScenario,
    options: &RunOptions,
    interrupt: CancellationToken,
) -> Result<RunOutcome> {
    let spec = &loaded.spec;
    let seed = options
        .seed
        .or(spec.seed)
        .unwrap_or_else(|| rand::random::<u32>() as u64);
    let now = time::OffsetDateTime::now_utc();
    let run_id = new_run_id(now);
    let mut run_dir = options
        .folder
        .clone()
        .unwrap_or_else(|| run_folder(&options.out, &spec.name, now, seed));
    if run_dir.exists() {
        // Two runs of one scenario and seed in the same second (--repeat with a fixed seed).
        run_dir = run_dir.with_file_name(format!(
            "{}-{}",
            run_dir.file_name().unwrap_or_default().to_string_lossy(),
            &run_id[run_id.len() - 4..]
        ));
    }
    let logs_dir = run_dir.join("logs");
    std::fs::create_dir_all(&logs_dir)
        .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", logs_dir.display())))?;
    if options.folder.is_none() {
        let latest = options.out.join(&spec.name).join("latest");
        let _ = std::fs::remove_file(&latest);
        if let Some(name) = run_dir.file_name() {
            let _ = std::os::unix::fs::symlink(name, &latest);
        }
    }
    std::fs::write(run_dir.join("scenario.yaml"), loaded.resolved_text(seed))
        .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))?;
    let plan = make_plan(spec, seed);
    let plan_json = serde_json::to_string_pretty(&plan).unwrap_or_default();
    std::fs::write(run_dir.join("plan.json"), plan_json)
        .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))?;
    eprintln!(
        "run {} of {} (seed {seed}) -> {}",
        run_id,
        spec.name,
        run_dir.display()
    );

    let started = Instant::now();
    let workload_started = std::sync::OnceLock::new();
    let outcome = play(
        loaded,
        options,
        &run_dir,
        &run_id,
        &plan,
        &workload_started,
        interrupt.clone(),
    )
    .await;
    let elapsed = started.elapsed();
    let meta = json!({
        "run_id": run_id,
        "scenario": spec.name,
        "description": spec.description,
        "system": spec.system.value,
        "profile": loaded.profile,
        "seed": seed,
        "started": now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
        "duration_s": elapsed.as_secs_f64(),
        "command": reproduce_command(loaded, seed),
        "expect": options.expect,
        // What `chaos run --replay` and `chaos shrink` need besides the folder's own files.
        "scenario_path": loaded.path.canonicalize().unwrap_or_else(|_| loaded.path.clone()),
        "compose_path": loaded.compose_path,
        "workload_started_ns": workload_started.get(),
        "replay_of": options.replay_of,
        // An attached run's cluster is a compose project's; its keys carry the run's prefix.
        "attach": loaded.attach.as_ref().map(|project| json!({
            "project": project,
            "key_prefix": key_prefix(&run_id),
        })),
    });

    let result = match outcome {
        Ok(Played::BuildLacks(lacking)) => {
            for line in &lacking {
                eprintln!("{line}");
            }
            checks::write_not_started(&run_dir, spec, &meta, &lacking)?
        }
        Ok(Played::Complete) if interrupt.is_cancelled() => {
            checks::write_unchecked(&run_dir, &meta, "interrupted", "the run was interrupted; the partial history is kept: check it with `chaos check RUN_DIR`")?;
            report::render(&run_dir)?;
            return Ok(RunOutcome {
                exit_code: EXIT_INTERRUPTED,
                summary: format!(
                    "{}: interrupted, history kept in {}",
                    spec.name,
                    run_dir.display()
                ),
                run_dir,
                seed,
            });
        }
        Ok(Played::Complete) => checks::check_run(&run_dir, spec, &meta)?,
        Err(e) => {
            let verdict = if matches!(e, HarnessError::Interrupted(_)) {
                "interrupted"
            } else {
                "error"
            };
            checks::write_unchecked(&run_dir, &meta, verdict, &e.to_string())?;
            let _ = report::render(&run_dir);
            return Err(e);
        }
    };
    // The report's one line names the verdict and, for a violation, says what went wrong.
    let summary = report::render(&run_dir)?;
    Ok(RunOutcome {
        exit_code: result.exit_code,
        summary,
        run_dir,
        seed,
    })
}

fn reproduce_command(loaded: &LoadedScenario, seed: u64) -> String {
    let mut command = format!("chaos run {} --seed {seed}", loaded.path.display());
    if loaded.scm_ha {
        command.push_str(" --scm-ha");
    }
    if let Some(project) = &loaded.attach {
        command.push_str(&format!(" --attach {project}"));
    }
    command
}

/// What an attached run puts before every key it sends (and before an object store's bucket
/// name): a cluster that outlives runs never shows one run another's keys.
pub fn key_prefix(run_id: &str) -> String {
    format!("chaos-{run_id}-")
}

/// How far a run went.
enum Played {
    /// The cluster started and the workload, faults and final phase played.
    Complete,
    /// Stopped before the cluster started (an attached run: before anything was played on
    /// it): the build lacks a key a `config:` precondition names (one sentence each).
    BuildLacks(Vec<String>),
}

/// Everything that touches Docker. The cluster is torn down whatever happens inside.
async fn play(
    loaded: &LoadedScenario,
    options: &RunOptions,
    run_dir: &Path,
    run_id: &str,
    plan: &Plan,
    workload_started: &std::sync::OnceLock<u64>,
    interrupt: CancellationToken,
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
        return play_attached(
            loaded,
            project,
            options,
            run_dir,
            run_id,
            plan,
            workload_started,
            interrupt,
        )
        .await;
    }
    let needed = images::images_for(&loaded.compose, &loaded.nodes);
    tokio::select! {
        r = images::ensure(&docker, &repo, &needed, false) => r?,
        _ = interrupt.cancelled() => return Err(HarnessError::Interrupted("while building images".into())),
    }
    let observed = JsonlWriter::create(&run_dir.join(crate::run_folder::OBSERVED))
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
    let run_start = Instant::now();
    let cluster_spec = ClusterSpec {
        compose: &loaded.compose,
        nodes: &loaded.nodes,
        run_id,
        logs_dir: &run_dir.join("logs"),
        run_start,
        ready_timeout: options.ready_timeout.unwrap_or_else(|| {
            crate::systems::lookup(&loaded.spec.system.value)
                .map_or(Duration::from_secs(120), |info| info.ready_within)
        }),
        environment: &environment,
        chaosfs: chaosfs.as_deref(),
        chaosfs_init: &chaosfs_init,
        secrets: &loaded.secrets(),
        faketime: loaded.uses_faketime(),
    };
    let ready_started = Instant::now();
    let cluster = tokio::select! {
        c = Cluster::launch(&docker, cluster_spec) => c,
        _ = interrupt.cancelled() => Err(HarnessError::Interrupted("while starting the cluster".into())),
    };
    let mut cluster = match cluster {
        Ok(c) => c,
        Err(e) => {
            let _ = docker::sweep(&docker, Some(run_id)).await;
            return Err(e);
        }
    };
    let (proxy_events, proxy_rx) = tokio::sync::mpsc::unbounded_channel();
    if loaded.uses_proxy() {
        if let Err(e) = cluster.start_proxies(proxy_events).await {
            let _ = cluster.teardown().await;
            return Err(e);
        }
    }
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
    };
    let result = drive(stage, proxy_rx, workload_started).await;
    // Every way out of the run goes through here (errors included); Ctrl-C cancels the
    // workload, never this.
    let teardown = match Arc::try_unwrap(cluster) {
        Ok(cluster) => cluster.teardown().await,
        Err(_) => docker::sweep(&docker, Some(run_id)).await.map(|_| ()),
    };
    let _ = docker::sweep(&docker, Some(run_id)).await;
    result.and(teardown)?;
    Ok(Played::Complete)
}

/// `play` on a compose project's nodes (`--attach`): nothing is built or created but the
/// helpers partitions need; the nodes are found, their images asked the `config:`
/// preconditions (a build that lacks a key stops the run there, the cluster untouched), played
/// on, and left up and healed.
#[allow(clippy::too_many_arguments)]
async fn play_attached(
    loaded: &LoadedScenario,
    project: &str,
    options: &RunOptions,
    run_dir: &Path,
    run_id: &str,
    plan: &Plan,
    workload_started: &std::sync::OnceLock<u64>,
    interrupt: CancellationToken,
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
    };
    let (_, no_proxy_events) = tokio::sync::mpsc::unbounded_channel();
    let result = drive(stage, no_proxy_events, workload_started).await;
    // Whatever the scenario's `final:` said and however the run ended: the project's cluster
    // stays up, every fault undone, every node healthy.
    let healed = cluster.leave_healed(ready_timeout).await;
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
    let observed = JsonlWriter::create(&run_dir.join(crate::run_folder::OBSERVED))
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

/// The parts of one run that `play` set up and `drive` plays.
struct Stage<'a> {
    loaded: &'a LoadedScenario,
    /// `--ready-timeout`, which also bounds how long a node a fault restarted may take.
    ready_timeout: Option<Duration>,
    cluster: &'a Arc<Cluster>,
    run_dir: &'a Path,
    run_start: Instant,
    plan: &'a Plan,
    interrupt: CancellationToken,
}

/// From a ready cluster to a complete history: the adapter, the recorder and fault engine, the
/// workload with its faults, then the final phase (heal, settle, final reads, lookups).
async fn drive(
    stage: Stage<'_>,
    proxy_events: tokio::sync::mpsc::UnboundedReceiver<crate::faults::proxy::ProxyEvent>,
    workload_started: &std::sync::OnceLock<u64>,
) -> Result<()> {
    let Some(adapter) = connect_adapter(&stage).await? else {
        return Ok(());
    };
    let io = |e: std::io::Error| HarnessError::infra(format!("cannot write the run folder: {e}"));
    let run_dir = stage.run_dir;
    let recorder =
        Arc::new(Recorder::create(&run_dir.join("history.jsonl"), stage.run_start).map_err(io)?);
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
    let config = Arc::new(workload_config(&stage, adapter.as_ref()));
    let spec = &stage.loaded.spec;
    if spec
        .checks
        .iter()
        .any(|c| matches!(c.value, crate::scenario::CheckSpec::ConditionalWrites(_)))
    {
        probe(adapter.as_ref(), &config.nodes[0], config.timeout, run_dir).await?;
    }
    // The preconditions only a probe sees are watched from the workload's start to the end
    // of the final phase.
    let preconditions: Vec<(String, crate::scenario::Precondition)> = spec
        .reached
        .iter()
        .map(|(name, p)| (name.clone(), p.value.clone()))
        .collect();
    let observed =
        Arc::new(JsonlWriter::append(&run_dir.join(crate::run_folder::OBSERVED)).map_err(io)?);
    let stop_watching = CancellationToken::new();
    let _stop_watching_on_error = stop_watching.clone().drop_guard();
    let watchers = crate::observe::spawn(
        &preconditions,
        engine.clone(),
        observed,
        stop_watching.clone(),
    );
    play_workload(&stage, &engine, &config, workload_started).await?;
    final_phase(&stage, &engine, &config).await;
    stop_watching.cancel();
    for watcher in watchers {
        let _ = watcher.await;
    }
    Ok(())
}

/// The system's adapter, once the cluster is ready for the workload; None when interrupted.
async fn connect_adapter(stage: &Stage<'_>) -> Result<Option<Arc<dyn systems::SystemAdapter>>> {
    let spec = &stage.loaded.spec;
    let info = systems::lookup(&spec.system.value)
        .ok_or_else(|| HarnessError::BadInput(format!("unknown system {}", spec.system.value)))?;
    let attached = stage.cluster.attached_project().is_some();
    let prefix = key_prefix(&stage.cluster.run_id);
    let settings = AdapterSettings {
        workload: spec.workload.kind.value,
        retries: spec.workload.retries,
        resend_after: spec.workload.resend_after.0,
        sends_duplicates: spec.workload.duplicate_after.is_some(),
        read: spec.workload.read,
        connect_timeout: Duration::from_secs(1),
        s3: spec.s3.as_ref().map(|s| {
            let mut s3 = s.value.clone();
            if attached {
                // The fencing workload's buckets (`<bucket>-f<round>`) are the run's own too.
                s3.bucket = format!("{}{}", prefix, s3.bucket);
            }
            s3
        }),
        environment: spec
            .cluster
            .environment
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
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

/// The workload's shape from the scenario, on the nodes the scenario or the adapter names.
fn workload_config(stage: &Stage<'_>, adapter: &dyn systems::SystemAdapter) -> WorkloadConfig {
    let workload = &stage.loaded.spec.workload;
    let nodes = workload
        .nodes
        .as_ref()
        .map(|n| n.value.clone())
        .or_else(|| adapter.client_nodes())
        .unwrap_or_else(|| stage.cluster.names());
    WorkloadConfig {
        kind: workload.kind.value,
        processes: workload.processes,
        keys: workload.keys,
        rate: workload.rate.0,
        duration: workload.duration.0,
        timeout: workload.timeout.0,
        nodes,
        seed: stage.plan.seed,
        created: Default::default(),
        mix: workload
            .mix
            .as_ref()
            .map_or(crate::scenario::S3Mix::DEFAULT, |m| m.value),
        burst: workload.burst,
        duplicate_after: workload.duplicate_after.map(|d| d.0),
        stream_length: workload.stream.as_ref().map_or_else(
            || crate::scenario::StreamSpec::default().length,
            |s| s.value.length,
        ),
    }
}

/// The workload, with the fault steps and the progress line beside it; returns once the
/// workload and every fault task have ended.
async fn play_workload(
    stage: &Stage<'_>,
    engine: &Arc<FaultEngine>,
    config: &Arc<WorkloadConfig>,
    workload_started: &std::sync::OnceLock<u64>,
) -> Result<()> {
    let spec = &stage.loaded.spec;
    let recorder = &engine.recorder;
    let stop_faults = stage.interrupt.child_token();
    let workload_start = Instant::now();
    // On the history's clock: where a replay's `at:` times count from.
    let _ = workload_started.set(recorder.now());
    let steps: Vec<_> = spec.faults.iter().map(|s| &s.value).collect();
    let fault_tasks = engine.spawn_steps(&steps, stage.plan, workload_start, stop_faults.clone());
    let workload = workloads::for_scenario(&spec.workload);
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
    if final_phase.reads && config.kind != crate::scenario::WorkloadKind::Fencing {
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
    crate::checks::converge::record(adapter, stage.run_dir, lookup_keys).await;
    if stage.loaded.uses_chaosfs() {
        engine.merge_chaosfs_logs(stage.loaded).await;
    }
}

/// The conditional-write probe (chaos-s3's) against the store, before the workload:
/// probe.json, which the `conditional-writes` check reads.
async fn probe(
    adapter: &dyn systems::SystemAdapter,
    node: &str,
    timeout: Duration,
    run_dir: &Path,
) -> Result<()> {
    let store = adapter.object_store(node, timeout).ok_or_else(|| {
        HarnessError::BadInput("the conditional-writes check needs an object store".into())
    })?;
    let result = chaos_s3::probe_conditional_writes(&store, "chaos-probe/").await;
    eprintln!("conditional-write probe on {node}: {}", result.sentence);
    let text = serde_json::to_string_pretty(&json!({
        "node": node,
        "enforced": result.enforced,
        "sentence": result.sentence,
        "steps": result.steps,
    }))
    .unwrap_or_default();
    std::fs::write(run_dir.join("probe.json"), text)
        .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))
}

/// Ends a background task when the run's driver is done with it (on every way out).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
