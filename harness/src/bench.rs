//! `chaos bench`: figures about the harness itself, measured on a real etcd cluster. Prints; never
//! asserts on time.
//!
//! - ready: time from creating 3 etcd containers to all of them healthy (images present);
//! - trigger: time from a line appearing in a node's output (Docker's own timestamp of the line)
//!   to that node being paused by a log trigger (the fault engine's path: log follower, regex,
//!   pause);
//! - cost: the harness's CPU time per recorded operation while a workload runs, and the recorder
//!   alone.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::resource::{getrusage, UsageWho};
use regex::Regex;
use tokio_util::sync::CancellationToken;

use crate::cluster::compose::ComposeFile;
use crate::cluster::{docker, images};
use crate::cluster::{Cluster, ClusterSpec};
use crate::error::{HarnessError, Result};
use crate::recorder::Recorder;
use crate::scenario::WorkloadKind;
use crate::systems::{self, AdapterSettings, Operation, Outcome};
use crate::workloads::{self, WorkloadConfig};

mod ozone;
pub use ozone::run_ozone;

pub struct BenchOptions {
    pub ready_trials: usize,
    pub trigger_trials: usize,
    pub workload_seconds: u64,
}

fn cpu_time() -> Duration {
    getrusage(UsageWho::RUSAGE_SELF)
        .map(|u| {
            let t = |tv: nix::sys::time::TimeVal| {
                Duration::new(tv.tv_sec() as u64, tv.tv_usec() as u32 * 1000)
            };
            t(u.user_time()) + t(u.system_time())
        })
        .unwrap_or_default()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(name: &str, mut values: Vec<f64>, unit: &str) {
    values.sort_by(f64::total_cmp);
    println!(
        "{name:<44} n={:<3} median {:>8.2} {unit}  p99 {:>8.2} {unit}  min {:>8.2}  max {:>8.2}",
        values.len(),
        percentile(&values, 0.5),
        percentile(&values, 0.99),
        values.first().copied().unwrap_or(f64::NAN),
        values.last().copied().unwrap_or(f64::NAN),
    );
}

pub async fn run(compose_path: &Path, options: &BenchOptions) -> Result<()> {
    let launch = || BenchCluster::launch(compose_path, "etcd", Duration::from_secs(120));
    let mut bench = launch().await?;
    println!(
        "chaos bench on {} nodes of profile etcd",
        bench.cluster.names().len()
    );
    let mut ready = vec![bench.healthy.as_secs_f64()];
    for _ in 1..options.ready_trials.max(1) {
        bench.teardown().await?;
        bench = launch().await?;
        ready.push(bench.healthy.as_secs_f64());
    }
    summary("ready: 3 etcd nodes created -> healthy", ready, "s");

    let BenchCluster {
        cluster,
        docker,
        dir,
        run_id,
        ..
    } = bench;
    let cluster = Arc::new(cluster);
    let outcome = async {
        trigger_latency(&cluster, options.trigger_trials).await?;
        workload_cost(&cluster, options.workload_seconds).await
    }
    .await;
    let teardown = match Arc::try_unwrap(cluster) {
        Ok(c) => c.teardown().await,
        Err(_) => Ok(()),
    };
    let _ = docker::sweep(&docker, Some(&run_id)).await;
    let _ = std::fs::remove_dir_all(&dir);
    recorder_cost()?;
    outcome.and(teardown)
}

/// Writes a marker line into a node's output (PID 1's stdout) and times the trigger's pause.
async fn trigger_latency(cluster: &Cluster, trials: usize) -> Result<()> {
    let node = cluster.nodes[0].clone();
    let docker = cluster.docker().clone();
    let mut line_to_paused = Vec::new();
    let mut line_to_seen = Vec::new();
    for i in 0..trials {
        let marker = format!("chaos-bench-marker-{i}-{}", rand::random::<u32>());
        let regex = Regex::new(&regex::escape(&marker)).expect("escaped");
        let mut lines = cluster.subscribe_logs();
        let echo = [
            "sh".to_string(),
            "-c".to_string(),
            format!("echo {marker} > /proc/1/fd/1"),
        ];
        docker::exec_detached(&docker, &node.container, &echo).await?;
        // The fault engine's path: follower -> broadcast -> regex -> pause.
        let seen = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match lines.recv().await {
                    Ok(line) if line.node == node.name && regex.is_match(&line.text) => {
                        let seen_at = time::OffsetDateTime::now_utc();
                        cluster.pause(&node.name).await?;
                        let paused_at = time::OffsetDateTime::now_utc();
                        return Ok::<_, HarnessError>(Some((line, seen_at, paused_at)));
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(_) => return Ok(None),
                }
            }
        })
        .await
        .map_err(|_| HarnessError::infra("the marker line never reached the log follower"))??;
        cluster.unpause(&node.name).await?;
        if let Some((line, seen_at, paused_at)) = seen {
            if let Some(stamp) = line.stamp {
                let ms = |d: time::Duration| d.as_seconds_f64() * 1000.0;
                line_to_paused.push(ms(paused_at - stamp));
                line_to_seen.push(ms(seen_at - stamp));
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    summary(
        "trigger: line in node log -> harness sees it",
        line_to_seen,
        "ms",
    );
    summary(
        "trigger: line in node log -> node paused",
        line_to_paused,
        "ms",
    );
    Ok(())
}

/// The harness's CPU per recorded operation with a real etcd client, no faults.
async fn workload_cost(cluster: &Arc<Cluster>, seconds: u64) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("chaos-bench-wl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::infra(e.to_string()))?;
    let info = systems::lookup("etcd").expect("etcd adapter");
    let adapter: Arc<dyn systems::SystemAdapter> = Arc::from((info.make)(
        cluster,
        &AdapterSettings::plain(WorkloadKind::REGISTER, None),
    ));
    let recorder = Arc::new(
        Recorder::create(&dir.join("history.jsonl"), Instant::now())
            .map_err(|e| HarnessError::infra(e.to_string()))?,
    );
    let config = Arc::new(WorkloadConfig {
        kind: WorkloadKind::REGISTER,
        processes: 16,
        keys: 5,
        rate: 2000.0,
        duration: Duration::from_secs(seconds),
        timeout: Duration::from_secs(2),
        nodes: cluster.names(),
        seed: 1,
        created: Default::default(),
        mix: crate::scenario::S3Mix::DEFAULT,
        burst: false,
        stream_length: 1,
        duplicate_after: None,
        fencing: Default::default(),
        lease: Default::default(),
    });
    let (wall, cpu, ops) = measure(adapter, &recorder, config).await;
    println!(
        "cost: workload (16 processes, etcd, no faults)    {ops} ops in {:.1} s = {:.0} ops/s; harness CPU {:.1} us/op ({:.0}% of one core)",
        wall.as_secs_f64(),
        ops as f64 / wall.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / ops.max(1) as f64,
        cpu.as_secs_f64() * 100.0 / wall.as_secs_f64(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Runs a workload to its end; returns wall time, the harness's CPU time and completed operations.
async fn measure(
    adapter: Arc<dyn systems::SystemAdapter>,
    recorder: &Arc<Recorder>,
    config: Arc<WorkloadConfig>,
) -> (Duration, Duration, u64) {
    let cpu_before = cpu_time();
    let started = Instant::now();
    workloads::run(adapter, recorder.clone(), config, CancellationToken::new()).await;
    let wall = started.elapsed();
    let cpu = cpu_time() - cpu_before;
    let ops = *recorder.completed().borrow();
    (wall, cpu, ops)
}

/// The recorder alone: one invocation and one completion written and flushed.
fn recorder_cost() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("chaos-bench-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::infra(e.to_string()))?;
    let recorder = Recorder::create(&dir.join("history.jsonl"), Instant::now())
        .map_err(|e| HarnessError::infra(e.to_string()))?;
    let op = Operation {
        f: "write",
        key: "k1".into(),
        value: serde_json::json!(12345),
    };
    let n = 100_000;
    let cpu_before = cpu_time();
    let started = Instant::now();
    for i in 0..n {
        recorder.invoke(i, &op, "etcd1");
        recorder.complete(i, &op, &Outcome::Ok(serde_json::json!(12345)), "etcd1");
    }
    let wall = started.elapsed();
    let cpu = cpu_time() - cpu_before;
    println!(
        "cost: recorder alone (invoke + complete, flushed) {:.2} us/op wall, {:.2} us/op CPU",
        wall.as_secs_f64() * 1e6 / n as f64,
        cpu.as_secs_f64() * 1e6 / n as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The object stores `chaos bench --s3 --store NAME` measures: compose profile, system and the
/// profile's fixed test credentials (docker-compose.yml; images/garage/garage.toml).
pub struct BenchStore {
    pub name: &'static str,
    pub system: &'static str,
    pub access_key: &'static str,
    pub secret_key: &'static str,
    pub region: &'static str,
    pub port: u16,
}

pub const BENCH_STORES: &[BenchStore] = &[
    BenchStore {
        name: "s3s-fs",
        system: "s3",
        access_key: "chaos",
        secret_key: "chaos-secret-key",
        region: "us-east-1",
        port: 8014,
    },
    BenchStore {
        name: "garage",
        system: "garage",
        access_key: "GKc4a05c4a05c4a05c4a05c4a0",
        secret_key: "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2",
        region: "garage",
        port: 3900,
    },
];

/// `chaos bench --s3 [--store s3s-fs|garage]`: the s3-object workload (default mix: get 4, put
/// 2, delete 1, put-if-none-match 2, put-if-match 2; 5 objects) against the store's compose
/// profile (1 s3s-fs node, or 3 Garage nodes set up by the garage adapter), no faults:
/// operations per second, latency percentiles per operation kind, and the harness's CPU per
/// operation (client, SigV4 signing, recorder), plus how long the cluster took to be ready.
pub async fn run_s3(
    compose_path: &Path,
    store: &str,
    seconds: u64,
    processes: u32,
    rate: f64,
) -> Result<()> {
    let store = BENCH_STORES
        .iter()
        .find(|s| s.name == store)
        .ok_or_else(|| {
            HarnessError::BadInput(format!(
                "--store {store}: one of {}",
                BENCH_STORES
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    let bench = BenchCluster::launch(compose_path, store.name, Duration::from_secs(120)).await?;
    let healthy = bench.healthy;
    let cluster = Arc::new(bench.cluster);
    let measured = s3_workload(
        &cluster, store, &bench.dir, seconds, processes, rate, healthy,
    )
    .await;
    let teardown = match Arc::try_unwrap(cluster) {
        Ok(c) => c.teardown().await,
        Err(_) => Ok(()),
    };
    let _ = docker::sweep(&bench.docker, Some(&bench.run_id)).await;
    let _ = std::fs::remove_dir_all(&bench.dir);
    measured.and(teardown)
}

/// A compose profile started for a benchmark: its own run id and log folder, and whatever a
/// failed start left behind swept.
struct BenchCluster {
    compose: ComposeFile,
    docker: bollard::Docker,
    cluster: Cluster,
    /// The nodes' logs, one file each, as the log follower writes them.
    dir: std::path::PathBuf,
    run_id: String,
    started: Instant,
    /// From creating the containers to every node healthy.
    healthy: Duration,
}

impl BenchCluster {
    async fn launch(compose_path: &Path, profile: &str, ready_timeout: Duration) -> Result<Self> {
        let compose =
            ComposeFile::load(compose_path).map_err(|e| HarnessError::BadInput(e.to_string()))?;
        let nodes = compose.profile_services(profile);
        if nodes.is_empty() {
            return Err(HarnessError::BadInput(format!(
                "{} has no profile {profile}",
                compose_path.display()
            )));
        }
        let docker = docker::connect().await?;
        images::ensure(
            &docker,
            &compose.dir,
            &images::images_for(&compose, &nodes),
            false,
        )
        .await?;
        let dir =
            std::env::temp_dir().join(format!("chaos-bench-{profile}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| HarnessError::infra(e.to_string()))?;
        let run_id = format!("bench{}-{profile}", std::process::id());
        let started = Instant::now();
        let cluster = Cluster::launch(
            &docker,
            ClusterSpec {
                compose: &compose,
                nodes: &nodes,
                run_id: &run_id,
                logs_dir: &dir,
                run_start: started,
                ready_timeout,
                environment: &[],
                chaosfs: None,
                chaosfs_init: &[],
                secrets: &[],
                faketime: false,
                project: None,
            },
        )
        .await;
        match cluster {
            Ok(cluster) => Ok(BenchCluster {
                compose,
                docker,
                cluster,
                dir,
                run_id,
                started,
                healthy: started.elapsed(),
            }),
            Err(e) => {
                let _ = docker::sweep(&docker, Some(&run_id)).await;
                Err(e)
            }
        }
    }

    async fn teardown(self) -> Result<()> {
        let result = self.cluster.teardown().await;
        let _ = docker::sweep(&self.docker, Some(&self.run_id)).await;
        let _ = std::fs::remove_dir_all(&self.dir);
        result
    }
}

async fn s3_workload(
    cluster: &Arc<Cluster>,
    store: &BenchStore,
    dir: &Path,
    seconds: u64,
    processes: u32,
    rate: f64,
    healthy: Duration,
) -> Result<()> {
    let info = systems::lookup(store.system).expect("the store's adapter");
    let spec = crate::scenario::S3Spec {
        access_key: store.access_key.into(),
        secret_key: store.secret_key.into(),
        bucket: "bench".into(),
        region: store.region.into(),
        port: Some(store.port),
        if_match_etag: Default::default(),
    };
    let adapter: Arc<dyn systems::SystemAdapter> = Arc::from((info.make)(
        cluster,
        &AdapterSettings::plain(WorkloadKind::S3_OBJECT, Some(spec)),
    ));
    let preparing = Instant::now();
    adapter
        .prepare(Duration::from_secs(60))
        .await
        .map_err(HarnessError::infra)?;
    let prepared = preparing.elapsed();
    let path = dir.join("history.jsonl");
    let recorder = Arc::new(
        Recorder::create(&path, Instant::now()).map_err(|e| HarnessError::infra(e.to_string()))?,
    );
    let config = Arc::new(WorkloadConfig {
        kind: WorkloadKind::S3_OBJECT,
        processes,
        keys: 5,
        rate,
        duration: Duration::from_secs(seconds),
        timeout: Duration::from_secs(2),
        nodes: cluster.names(),
        seed: 1,
        created: Default::default(),
        mix: crate::scenario::S3Mix::DEFAULT,
        burst: false,
        stream_length: 1,
        duplicate_after: None,
        fencing: Default::default(),
        lease: Default::default(),
    });
    let (wall, cpu, ops) = measure(adapter, &recorder, config).await;
    let history = checker::read_history(&path, checker::Format::Jsonl)
        .map_err(|e| HarnessError::infra(e.to_string()))?;
    let stats = crate::checks::statistics(&history, &[], crate::run_folder::Clock::default());
    // As result.json holds them: a kind's counts print as its JSON object.
    let stats = serde_json::to_value(stats).unwrap_or_default();
    let n = cluster.names().len();
    println!(
        "s3 bench: s3-object workload on {n} {} node(s), {processes} processes, target {rate}/s, no faults",
        store.name
    );
    println!(
        "s3: cluster healthy {:.1} s after create, ready for the workload (adapter's prepare: bucket{}) {:.1} s later",
        healthy.as_secs_f64(),
        if store.system == "garage" { ", peers, layout, key" } else { "" },
        prepared.as_secs_f64(),
    );
    println!(
        "s3: {ops} ops in {:.1} s = {:.0} ops/s; harness CPU {:.1} us/op ({:.0}% of one core)",
        wall.as_secs_f64(),
        ops as f64 / wall.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / ops.max(1) as f64,
        cpu.as_secs_f64() * 100.0 / wall.as_secs_f64(),
    );
    for (f, counts) in stats["by_kind"].as_object().into_iter().flatten() {
        let l = &stats["latency"][f];
        println!(
            "s3: {f:<7} {counts}  latency of ok: p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
            l["p50_ms"].as_f64().unwrap_or(f64::NAN),
            l["p90_ms"].as_f64().unwrap_or(f64::NAN),
            l["p99_ms"].as_f64().unwrap_or(f64::NAN),
            l["max_ms"].as_f64().unwrap_or(f64::NAN),
        );
    }
    Ok(())
}
