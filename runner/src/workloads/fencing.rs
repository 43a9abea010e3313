//! The fencing workload in a run: rounds of chaos-s3's `run_fencing` (takeovers raced by
//! writers that keep uploading), each in a fresh bucket `<bucket>-f<round>` so that rounds do
//! not see each other's fences. Rounds start at the workload's rate until its duration.
//!
//! Every event goes to fencing.jsonl (chaos-s3's `FencingEvent` as JSON, its `time` relative to
//! the round, plus `round` and `run_time` on the run clock), and the takeovers and uploads also
//! go to history.jsonl as operations (`takeover`, `upload`; process = one writer) so that the
//! report's timeline and statistics show them. The `fencing` check (checks/fencing.rs) reads
//! fencing.jsonl, and the `conditional-writes` check the probe's probe.json.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chaos_s3::{run_fencing, BucketStore, FencingConfig, FencingEvent};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::error::{HarnessError, Result};
use crate::recorder::Recorder;
use crate::run_folder::{FencingLine, FencingLog, Probe};
use crate::scenario::units::format_duration;
use crate::scenario::FencingSpec;
use crate::systems::SystemAdapter;
use crate::workloads::{Workload, WorkloadConfig, WorkloadContext};
use checker::{Event, EventType};

/// Fencing rounds of conditional writes through one object-store node.
pub(super) struct Fencing;

#[async_trait::async_trait]
impl Workload for Fencing {
    fn name(&self) -> &'static str {
        "fencing"
    }

    fn operation_kinds(&self) -> &'static [&'static str] {
        &["takeover", "upload", "read"]
    }

    fn key(&self, index: u32) -> String {
        format!("o{index}")
    }

    fn takes(&self) -> &'static [&'static str] {
        &["fencing"]
    }

    fn needs_object_store(&self) -> bool {
        true
    }

    fn plays_through_processes(&self) -> bool {
        false
    }

    fn describe(&self, c: &WorkloadConfig) -> String {
        format!(
            "fencing rounds through {}, {}/s for {}",
            c.nodes[0],
            c.rate,
            format_duration(c.duration)
        )
    }

    /// Its rounds read what they wrote themselves.
    fn final_read(&self) -> Option<&'static str> {
        None
    }

    async fn play(&self, ctx: WorkloadContext) -> Result<()> {
        let c = &ctx.config;
        let store = ctx
            .adapter
            .object_store(&c.nodes[0], c.timeout)
            .ok_or_else(|| {
                HarnessError::BadInput("the fencing workload needs an object store".into())
            })?;
        let log = FencingLog::create(&ctx.run_dir)
            .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))?;
        run_rounds(store, &ctx.recorder, &log, c, &c.fencing, ctx.cancel).await;
        Ok(())
    }
}

pub async fn run_rounds(
    store: BucketStore,
    recorder: &Recorder,
    log: &FencingLog,
    config: &WorkloadConfig,
    shape: &FencingSpec,
    cancel: CancellationToken,
) {
    let deadline = Instant::now() + config.duration;
    let interval = Duration::from_secs_f64(1.0 / config.rate.max(0.001));
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let fencing = FencingConfig {
        // The `conditional-writes` check probes once, before the workload.
        require_conditional_writes: false,
        terms: shape.terms,
        contenders: shape.contenders,
        overlap_uploads: shape.overlap_uploads,
        zombie_uploads: shape.zombie_uploads,
        uploads: shape.uploads,
        stall: shape.stall.map(|d| d.0),
    };
    let mut processes = Processes::default();
    for round in 1u64.. {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        if Instant::now() >= deadline {
            return;
        }
        let bucket = format!("{}-f{round}", store.bucket);
        let made = store.client.create_bucket(&bucket).await;
        if let Some(reason) = made.outcome.reason() {
            log.write(&FencingLine::NotStarted {
                round,
                run_time: Some(recorder.now()),
                reason: format!("CreateBucket {bucket}: {reason}"),
            });
            continue;
        }
        let round_store = Arc::new(BucketStore {
            client: store.client.clone(),
            bucket,
        });
        // chaos-s3's recorder starts inside run_fencing, microseconds after this.
        let offset = recorder.now();
        let report = tokio::select! {
            _ = cancel.cancelled() => return,
            r = run_fencing(round_store, &fencing) => r,
        };
        for event in report.events {
            let time = event.time();
            if let Some(op) = processes.history_event(round, &event) {
                recorder.write_at(op, offset + time);
            }
            log.write(&FencingLine::Event {
                round,
                run_time: Some(offset + time),
                event,
            });
        }
    }
}

/// Writers as Jepsen processes: each writer does one thing at a time; after an unknown
/// outcome it continues as a new process.
#[derive(Default)]
struct Processes {
    ids: HashMap<(u64, String), u64>,
    next: u64,
}

impl Processes {
    fn id(&mut self, round: u64, owner: &str) -> u64 {
        let next = &mut self.next;
        *self
            .ids
            .entry((round, owner.to_string()))
            .or_insert_with(|| {
                *next += 1;
                *next - 1
            })
    }

    fn retire(&mut self, round: u64, owner: &str) {
        self.ids.remove(&(round, owner.to_string()));
    }

    fn history_event(&mut self, round: u64, event: &FencingEvent) -> Option<Event> {
        let op = |process: u64, kind: EventType, f: &str, key: String, value: Value| Event {
            node: Some(format!("round {round}")),
            ..Event::new(process, kind, f, Some(&key), value)
        };
        let upload_key =
            |u: &chaos_s3::UploadId| format!("r{round}/{}", chaos_s3::fencing::data_key(u));
        let fence = |term: u64| format!("r{round}/{}", chaos_s3::fencing::fence_key(term));
        Some(match event {
            FencingEvent::TakeoverStarted { owner, term, .. } => {
                let p = self.id(round, owner);
                op(
                    p,
                    EventType::Invoke,
                    "takeover",
                    fence(*term),
                    json!({"owner": owner, "term": term}),
                )
            }
            FencingEvent::TakeoverCompleted {
                owner,
                term,
                restore_point,
                ..
            } => {
                let p = self.id(round, owner);
                op(
                    p,
                    EventType::Ok,
                    "takeover",
                    fence(*term),
                    json!({"owner": owner, "term": term, "restore_point": restore_point.len()}),
                )
            }
            FencingEvent::TakeoverRefused {
                owner,
                term,
                reason,
                ..
            } => {
                let p = self.id(round, owner);
                let mut v = op(
                    p,
                    EventType::Fail,
                    "takeover",
                    fence(*term),
                    json!({"owner": owner, "term": term}),
                );
                v.error = Some(reason.clone());
                v
            }
            FencingEvent::UploadInvoked { upload, .. } => {
                let p = self.id(round, &upload.owner);
                op(
                    p,
                    EventType::Invoke,
                    "upload",
                    upload_key(upload),
                    json!(upload.seq),
                )
            }
            FencingEvent::UploadAcked { upload, .. } => {
                let p = self.id(round, &upload.owner);
                op(
                    p,
                    EventType::Ok,
                    "upload",
                    upload_key(upload),
                    json!(upload.seq),
                )
            }
            FencingEvent::UploadFailed { upload, reason, .. } => {
                let p = self.id(round, &upload.owner);
                let mut v = op(
                    p,
                    EventType::Fail,
                    "upload",
                    upload_key(upload),
                    json!(upload.seq),
                );
                v.error = Some(reason.clone());
                v
            }
            FencingEvent::UploadUnknown { upload, reason, .. } => {
                let p = self.id(round, &upload.owner);
                self.retire(round, &upload.owner);
                let mut v = op(
                    p,
                    EventType::Info,
                    "upload",
                    upload_key(upload),
                    json!(upload.seq),
                );
                v.error = Some(reason.clone());
                v
            }
            FencingEvent::Fenced { .. } | FencingEvent::WriterStalled { .. } => return None,
        })
    }
}

/// The conditional-write probe (chaos-s3's) against the store, before the workload:
/// probe.json, which the `conditional-writes` check reads.
pub async fn probe(
    adapter: &dyn SystemAdapter,
    node: &str,
    timeout: Duration,
    run_dir: &Path,
) -> Result<()> {
    let store = adapter.object_store(node, timeout).ok_or_else(|| {
        HarnessError::BadInput("the conditional-writes check needs an object store".into())
    })?;
    let result = chaos_s3::probe_conditional_writes(&store, "chaos-probe/").await;
    eprintln!("conditional-write probe on {node}: {}", result.sentence);
    let probe = Probe {
        node: Some(node.to_string()),
        enforced: result.enforced,
        sentence: result.sentence,
        steps: result.steps,
    };
    probe
        .write(run_dir)
        .map_err(|e| HarnessError::infra(e.to_string()))
}
