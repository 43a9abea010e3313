//! The lease workload in a run: hsync'd files raced by lease recovery (issue 7's
//! recover-lease-divergence). `lease.files` files start at the workload's rate; each lives on
//! its own clock:
//!
//! - at 0 its writer (process 2i) creates it and hsyncs `length` bytes (`hsync`);
//! - at `recover-after` another process (2i+1) calls recoverLease on it (`recover-lease`);
//!   inside the OM's soft limit the answer must be KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD;
//! - at `close-after` the writer closes it at twice the length (`close`).
//!
//! Every step is an operation in history.jsonl. The workload lasts its duration (so that
//! faults scheduled after the closes still happen), and longer while a file is not closed: a
//! file that started is carried to its close, never abandoned half-way by the harness.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::recorder::Recorder;
use crate::scenario::units::format_duration;
use crate::scenario::{LeaseSpec, WorkloadSpec};
use crate::systems::{Operation, Outcome, SystemAdapter, SystemClient};
use crate::workloads::{kind, Workload, WorkloadConfig, WorkloadContext};

/// Files hsync'd, raced by recoverLease and closed.
pub(super) struct Lease;

#[async_trait::async_trait]
impl Workload for Lease {
    fn name(&self) -> &'static str {
        "lease"
    }

    fn operation_kinds(&self) -> &'static [&'static str] {
        &["hsync", "recover-lease", "close", "final-read"]
    }

    fn key(&self, index: u32) -> String {
        file_name(u64::from(index))
    }

    fn takes(&self) -> &'static [&'static str] {
        &["lease"]
    }

    fn plays_through_processes(&self) -> bool {
        false
    }

    /// Its duration, or the close of its last file when that comes later (it waits for it).
    fn longest(&self, spec: &WorkloadSpec) -> Duration {
        let lease = spec
            .lease
            .as_ref()
            .map(|l| l.value.clone())
            .unwrap_or_default();
        let last_start = Duration::from_secs_f64(f64::from(lease.files) / spec.rate.0);
        spec.duration
            .0
            .max(last_start.saturating_add(lease.close_after.0))
    }

    fn describe(&self, c: &WorkloadConfig) -> String {
        format!(
            "hsync'd files raced by recoverLease, {}/s for {}",
            c.rate,
            format_duration(c.duration)
        )
    }

    fn touched_keys(&self, config: &WorkloadConfig) -> Vec<String> {
        kind::created(config)
    }

    fn final_read(&self) -> Option<&'static str> {
        Some("final-read")
    }

    async fn play(&self, ctx: WorkloadContext) -> Result<()> {
        let shape = ctx.config.lease.clone();
        run_files(ctx.adapter, ctx.recorder, ctx.config, shape, ctx.cancel).await;
        Ok(())
    }
}

/// The file names of the lease workload: f0, f1, ...
pub fn file_name(index: u64) -> String {
    format!("f{index}")
}

pub async fn run_files(
    adapter: Arc<dyn SystemAdapter>,
    recorder: Arc<Recorder>,
    config: Arc<WorkloadConfig>,
    shape: LeaseSpec,
    cancel: CancellationToken,
) {
    let deadline = Instant::now() + config.duration;
    let interval = Duration::from_secs_f64(1.0 / config.rate.max(0.001));
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut files = Vec::new();
    for index in 0..u64::from(shape.files) {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = ticker.tick() => {}
        }
        let name = file_name(index);
        if let Ok(mut created) = config.created.lock() {
            created.push(name.clone());
        }
        let node = config.nodes[index as usize % config.nodes.len()].clone();
        files.push(tokio::spawn(file_life(
            adapter.clone(),
            recorder.clone(),
            config.timeout,
            shape.clone(),
            FileSteps {
                name,
                node,
                writer: 2 * index,
                recoverer: 2 * index + 1,
            },
            cancel.clone(),
        )));
    }
    for file in files {
        let _ = file.await;
    }
    tokio::select! {
        _ = cancel.cancelled() => {}
        _ = tokio::time::sleep_until(deadline) => {}
    }
}

struct FileSteps {
    name: String,
    node: String,
    writer: u64,
    recoverer: u64,
}

async fn file_life(
    adapter: Arc<dyn SystemAdapter>,
    recorder: Arc<Recorder>,
    timeout: Duration,
    shape: LeaseSpec,
    file: FileSteps,
    cancel: CancellationToken,
) {
    let born = Instant::now();
    let Ok(mut writer) = adapter.connect(&file.node).await else {
        tracing::warn!(file = %file.name, "lease: the writer could not connect; file skipped");
        return;
    };
    let step = |f: &'static str, value: Value| Operation {
        f,
        key: file.name.clone(),
        value,
    };
    let hsync = step("hsync", Value::from(shape.length));
    let outcome = perform(
        &recorder,
        writer.as_mut(),
        file.writer,
        &hsync,
        &file.node,
        timeout,
    )
    .await;
    if !matches!(outcome, Outcome::Ok(_)) {
        // Nothing is open to recover or close (an info hsync may have opened it; the final
        // read says).
        return;
    }

    tokio::select! {
        _ = cancel.cancelled() => return,
        _ = tokio::time::sleep_until(born + shape.recover_after.0) => {}
    }
    match adapter.connect(&file.node).await {
        Ok(mut recoverer) => {
            let recover = step("recover-lease", Value::Null);
            perform(
                &recorder,
                recoverer.as_mut(),
                file.recoverer,
                &recover,
                &file.node,
                timeout,
            )
            .await;
        }
        Err(e) => tracing::warn!(file = %file.name, "lease: the recoverer could not connect: {e}"),
    }

    tokio::select! {
        _ = cancel.cancelled() => return,
        _ = tokio::time::sleep_until(born + shape.close_after.0) => {}
    }
    let close = step("close", Value::from(2 * shape.length));
    perform(
        &recorder,
        writer.as_mut(),
        file.writer,
        &close,
        &file.node,
        timeout,
    )
    .await;
}

/// One recorded operation (a timeout is info: each step changes the file).
async fn perform(
    recorder: &Recorder,
    client: &mut dyn SystemClient,
    process: u64,
    op: &Operation,
    node: &str,
    timeout: Duration,
) -> Outcome {
    recorder.invoke(process, op, node);
    let outcome = super::invoke_within(client, op, timeout).await;
    recorder.complete(process, op, &outcome, node);
    outcome
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use async_trait::async_trait;

    use super::*;
    use crate::scenario::units::Dur;
    use crate::scenario::{Role, WorkloadKind};

    /// Each step: (seconds since the start, f, file).
    type Steps = Arc<Mutex<Vec<(u64, &'static str, String)>>>;

    struct Clock {
        start: Instant,
        steps: Steps,
    }

    #[async_trait]
    impl SystemClient for Clock {
        async fn invoke(&mut self, op: &Operation) -> Outcome {
            let at = self.start.elapsed().as_secs();
            self.steps.lock().unwrap().push((at, op.f, op.key.clone()));
            Outcome::Ok(op.value.clone())
        }
    }

    struct Adapter {
        start: Instant,
        steps: Steps,
    }

    #[async_trait]
    impl SystemAdapter for Adapter {
        async fn roles(&self) -> BTreeMap<String, Role> {
            BTreeMap::new()
        }
        async fn connect(&self, _node: &str) -> Result<Box<dyn SystemClient>, String> {
            Ok(Box::new(Clock {
                start: self.start,
                steps: self.steps.clone(),
            }))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn files_start_at_the_rate_and_live_their_schedule() {
        let dir = std::env::temp_dir().join(format!("chaos-lease-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let recorder = Arc::new(
            Recorder::create(&dir.join("history.jsonl"), std::time::Instant::now()).unwrap(),
        );
        let steps: Steps = Default::default();
        let adapter = Arc::new(Adapter {
            start: Instant::now(),
            steps: steps.clone(),
        });
        let config = Arc::new(WorkloadConfig {
            rate: 0.5,
            duration: Duration::from_secs(40),
            timeout: Duration::from_secs(5),
            nodes: vec!["om1".into()],
            ..WorkloadConfig::example(WorkloadKind::LEASE)
        });
        let shape = LeaseSpec {
            files: 2,
            length: 100,
            recover_after: Dur(Duration::from_secs(10)),
            close_after: Dur(Duration::from_secs(30)),
        };
        let start = Instant::now();
        run_files(
            adapter,
            recorder,
            config.clone(),
            shape,
            CancellationToken::new(),
        )
        .await;
        // The workload lasts its duration, past the last close at 32 s.
        assert_eq!(start.elapsed().as_secs(), 40);
        let mut got = steps.lock().unwrap().clone();
        got.sort();
        let want: Vec<(u64, &str, String)> = vec![
            (0, "hsync", "f0".into()),
            (2, "hsync", "f1".into()),
            (10, "recover-lease", "f0".into()),
            (12, "recover-lease", "f1".into()),
            (30, "close", "f0".into()),
            (32, "close", "f1".into()),
        ];
        assert_eq!(got, want);
        assert_eq!(*config.created.lock().unwrap(), vec!["f0", "f1"]);
        // The history: writer 2i and recoverer 2i+1, the close at twice the length.
        let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
        let events: Vec<serde_json::Value> = history
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let of = |f: &str, key: &str, kind: &str| {
            events
                .iter()
                .find(|e| e["f"] == f && e["key"] == key && e["type"] == kind)
                .cloned()
                .unwrap()
        };
        assert_eq!(of("hsync", "f1", "invoke")["process"], 2);
        assert_eq!(of("recover-lease", "f1", "invoke")["process"], 3);
        assert_eq!(of("close", "f0", "ok")["value"], 200);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
