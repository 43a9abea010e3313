//! The fencing workload in a run: rounds of chaos-s3's `run_fencing` (takeovers raced by
//! writers that keep uploading), each in a fresh bucket `<bucket>-f<round>` so that rounds do
//! not see each other's fences. Rounds start at the workload's rate until its duration.
//!
//! Every event goes to fencing.jsonl (chaos-s3's `FencingEvent` as JSON, its `time` relative to
//! the round, plus `round` and `run_time` on the run clock), and the takeovers and uploads also
//! go to history.jsonl as operations (`takeover`, `upload`; process = one writer) so that the
//! report's timeline and statistics show them. The `fencing` check reads fencing.jsonl, with
//! each event's time on the run clock counted from the workload's start (so its sentences agree
//! with the rest of the run's).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chaos_s3::{
    check_fencing, run_fencing, BucketStore, FencingConfig, FencingEvent, FencingVerdict,
};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::error::{HarnessError, Result};
use crate::recorder::Recorder;
use crate::run_folder::{read_fencing, Clock, FencingLine, FencingLog, Probe};
use crate::scenario::FencingSpec;
use crate::systems::SystemAdapter;
use crate::workloads::WorkloadConfig;
use checker::{Event, EventType};

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

/// The `fencing` check over fencing.jsonl: one result per property (NoAckedWriteLoss,
/// NoAckAfterTakeover, OneWriterPerTerm), each over every round; times from the workload's
/// start.
pub fn check(run_dir: &Path, clock: Clock) -> Vec<Value> {
    let mut rounds: BTreeMap<u64, Vec<FencingEvent>> = BTreeMap::new();
    let mut not_started = Vec::new();
    for line in read_fencing(run_dir) {
        match line {
            FencingLine::NotStarted { reason, .. } => not_started.push(reason),
            // Timed from the workload's start: its `run_time` (the run clock) less the
            // workload's; a line written without `run_time` keeps its time in the round. Within
            // a round every event moves by the same amount, so the comparisons do not change.
            FencingLine::Event {
                round,
                run_time,
                mut event,
            } => {
                if let Some(run_time) = run_time {
                    event.set_time(run_time.saturating_sub(clock.t0));
                }
                rounds.entry(round).or_default().push(event);
            }
        }
    }
    let verdicts: Vec<(u64, FencingVerdict)> = rounds
        .iter()
        .map(|(r, events)| (*r, check_fencing(events)))
        .collect();
    let count = |pred: &dyn Fn(&FencingEvent) -> bool| {
        rounds.values().flatten().filter(|e| pred(e)).count()
    };
    let acks = count(&|e| matches!(e, FencingEvent::UploadAcked { .. }));
    let takeovers = count(&|e| matches!(e, FencingEvent::TakeoverCompleted { .. }));
    let names = ["NoAckedWriteLoss", "NoAckAfterTakeover", "OneWriterPerTerm"];
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let per_round: Vec<(u64, &chaos_s3::fencing::FencingCheck)> =
                verdicts.iter().map(|(r, v)| (*r, v.checks()[i])).collect();
            let failed: Vec<&(u64, &chaos_s3::fencing::FencingCheck)> =
                per_round.iter().filter(|(_, c)| !c.ok).collect();
            let (verdict, summary) = if let Some((r, c)) = failed.first() {
                (
                    "illegal",
                    format!(
                        "{name} violated in {} of {} rounds; round {r}: {}",
                        failed.len(),
                        per_round.len(),
                        c.sentence
                    ),
                )
            } else if takeovers == 0 {
                let why = not_started
                    .first()
                    .map(|r| format!(" (first round not started: {r})"))
                    .unwrap_or_default();
                (
                    "unknown",
                    format!("{name}: no takeover completed in {} rounds, nothing to check{why}", per_round.len()),
                )
            } else {
                (
                    "ok",
                    format!(
                        "{name} held in all {} rounds ({acks} acknowledged uploads, {takeovers} completed takeovers)",
                        per_round.len()
                    ),
                )
            };
            let offending: Vec<Value> = failed
                .iter()
                .flat_map(|(r, c)| {
                    c.offending
                        .iter()
                        .map(move |(u, s)| json!({"round": r, "upload": u.to_string(), "sentence": s}))
                })
                .take(50)
                .collect();
            json!({
                "name": format!("fencing: {name}"),
                "check": "fencing",
                "verdict": verdict,
                "summary": summary,
                "detail": {
                    "rounds": per_round.len(),
                    "rounds_not_started": not_started.len(),
                    "acknowledged_uploads": acks,
                    "completed_takeovers": takeovers,
                    "offending": offending,
                },
            })
        })
        .collect()
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
        .map_err(|e| HarnessError::infra(format!("cannot write the run folder: {e}")))
}

/// The `conditional-writes` check over probe.json.
pub fn check_probe(run_dir: &Path) -> Value {
    let probe = Probe::read(run_dir).ok();
    let (verdict, summary) = match &probe {
        None => (
            "unknown",
            "the conditional-write probe did not run (the run ended before the workload)"
                .to_string(),
        ),
        Some(p) => {
            let sentence = p.sentence.clone();
            if p.enforced {
                ("ok", sentence)
            } else if sentence.starts_with("could not tell") {
                ("unknown", sentence)
            } else {
                ("illegal", sentence)
            }
        }
    };
    json!({
        "name": "conditional-writes",
        "check": "conditional-writes",
        "verdict": verdict,
        "summary": summary,
        "detail": probe,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("chaos-fencing-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_probe_check_fails_with_the_probe_sentence() {
        let d = dir("probe");
        assert_eq!(check_probe(&d)["verdict"], "unknown");
        let ignored = "the store does not enforce conditional writes: If-None-Match: * on an existing key was accepted";
        std::fs::write(
            d.join("probe.json"),
            json!({"enforced": false, "sentence": ignored, "steps": []}).to_string(),
        )
        .unwrap();
        let c = check_probe(&d);
        assert_eq!(
            (c["verdict"].as_str(), c["summary"].as_str()),
            (Some("illegal"), Some(ignored))
        );
        std::fs::write(
            d.join("probe.json"),
            json!({"enforced": false, "sentence": "could not tell whether ...", "steps": []})
                .to_string(),
        )
        .unwrap();
        assert_eq!(check_probe(&d)["verdict"], "unknown");
        std::fs::write(
            d.join("probe.json"),
            json!({"enforced": true, "sentence": "the store enforces", "steps": []}).to_string(),
        )
        .unwrap();
        assert_eq!(check_probe(&d)["verdict"], "ok");
    }

    /// Rounds of the real protocol on chaos-s3's in-process store, written as run_rounds writes
    /// them: enforced preconditions pass all three checks, ignored ones fail them. Round r runs
    /// at r × 10 s of a workload that began 1000 s into the run, and the sentences say so.
    #[tokio::test]
    async fn rounds_on_a_store_that_ignores_conditions_fail() {
        for (enforce, expect) in [(true, "ok"), (false, "illegal")] {
            let d = dir(if enforce { "good" } else { "bad" });
            let log = FencingLog::create(&d).unwrap();
            for round in 1..=3u64 {
                let store = Arc::new(chaos_s3::MemStore::new(enforce));
                let cfg = FencingConfig {
                    require_conditional_writes: false,
                    ..FencingConfig::default()
                };
                let report = run_fencing(store, &cfg).await;
                let offset = 1_000_000_000_000 + round * 10_000_000_000;
                for event in report.events {
                    log.write(&FencingLine::Event {
                        round,
                        run_time: Some(offset + event.time()),
                        event,
                    });
                }
            }
            let clock = Clock {
                t0: 1_000_000_000_000,
            };
            let results = check(&d, clock);
            assert_eq!(results.len(), 3);
            let verdicts: Vec<&str> = results
                .iter()
                .map(|r| r["verdict"].as_str().unwrap())
                .collect();
            if enforce {
                assert_eq!(verdicts, ["ok", "ok", "ok"], "{results:#?}");
                assert!(results[0]["summary"]
                    .as_str()
                    .unwrap()
                    .contains("held in all 3 rounds"));
            } else {
                assert!(verdicts.contains(&expect), "{results:#?}");
                let bad = results.iter().find(|r| r["verdict"] == "illegal").unwrap();
                let summary = bad["summary"].as_str().unwrap();
                assert!(summary.contains("violated in"), "{bad}");
                let round: u64 = summary
                    .split("; round ")
                    .nth(1)
                    .and_then(|r| r.split(':').next())
                    .and_then(|r| r.parse().ok())
                    .unwrap();
                assert!(
                    summary.contains(&format!(" at {}.", round * 10)),
                    "{summary}"
                );
            }
        }
    }
}
