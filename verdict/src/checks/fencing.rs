//! The fencing protocol's checks, over the files the fencing workload writes
//! (`workloads/fencing.rs`): `fencing` reads fencing.jsonl and gives one result per property of
//! chaos-s3's checker (NoAckedWriteLoss, NoAckAfterTakeover, OneWriterPerTerm), each over every
//! round, with each event's time on the run clock counted from the workload's start (so its
//! sentences agree with the rest of the run's); `conditional-writes` reads probe.json, the
//! conditional-write probe's answer before the workload.

use std::collections::BTreeMap;
use std::path::Path;

use chaos_s3::{check_fencing, FencingEvent, FencingVerdict};
use checker::Verdict;
use serde::{Deserialize, Serialize};

use super::kind::{Check, Inputs};
use crate::error::Result;
use crate::run_folder::{read_fencing, CheckResult, Clock, FencingLine, Probe, FENCING, PROBE};
use crate::scenario::{CheckKind, CheckSpec};

pub struct Fencing;

impl Check for Fencing {
    fn kind(&self) -> CheckKind {
        CheckKind::Fencing
    }

    fn inputs(&self) -> &'static [&'static str] {
        &[FENCING]
    }

    fn run(&self, _: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        match inputs.run_dir {
            Some(dir) => Ok(check(dir, inputs.clock)),
            None => self.without_run_folder(),
        }
    }
}

pub struct ConditionalWrites;

impl Check for ConditionalWrites {
    fn kind(&self) -> CheckKind {
        CheckKind::ConditionalWrites
    }

    fn inputs(&self) -> &'static [&'static str] {
        &[PROBE]
    }

    fn run(&self, _: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        match inputs.run_dir {
            Some(dir) => Ok(vec![check_probe(dir)]),
            None => self.without_run_folder(),
        }
    }
}

/// The `fencing` check over fencing.jsonl: one result per property (NoAckedWriteLoss,
/// NoAckAfterTakeover, OneWriterPerTerm), each over every round; times from the workload's
/// start.
pub fn check(run_dir: &Path, clock: Clock) -> Vec<CheckResult> {
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
                    Verdict::Illegal,
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
                    Verdict::Unknown,
                    format!("{name}: no takeover completed in {} rounds, nothing to check{why}", per_round.len()),
                )
            } else {
                (
                    Verdict::Ok,
                    format!(
                        "{name} held in all {} rounds ({acks} acknowledged uploads, {takeovers} completed takeovers)",
                        per_round.len()
                    ),
                )
            };
            let offending: Vec<Offending> = failed
                .iter()
                .flat_map(|(r, c)| {
                    c.offending.iter().map(move |(u, s)| Offending {
                        round: *r,
                        upload: u.to_string(),
                        sentence: s.clone(),
                    })
                })
                .take(50)
                .collect();
            CheckResult::new(format!("fencing: {name}"), CheckKind::Fencing.name(), verdict, summary).with_detail(
                Detail {
                    rounds: per_round.len(),
                    rounds_not_started: not_started.len(),
                    acknowledged_uploads: acks,
                    completed_takeovers: takeovers,
                    offending,
                },
            )
        })
        .collect()
}

/// A fencing property's detail in result.json: the rounds and what they did, and the first
/// uploads that broke it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Detail {
    pub rounds: usize,
    pub rounds_not_started: usize,
    pub acknowledged_uploads: usize,
    pub completed_takeovers: usize,
    /// At most 50.
    pub offending: Vec<Offending>,
}

/// An upload that broke a property, in its round.
#[derive(Debug, Serialize, Deserialize)]
pub struct Offending {
    pub round: u64,
    pub upload: String,
    pub sentence: String,
}

/// The `conditional-writes` check over probe.json.
pub fn check_probe(run_dir: &Path) -> CheckResult {
    let probe = Probe::read(run_dir).ok();
    let (verdict, summary) = match &probe {
        None => (
            Verdict::Unknown,
            "the conditional-write probe did not run (the run ended before the workload)"
                .to_string(),
        ),
        Some(p) => {
            let sentence = p.sentence.clone();
            if p.enforced {
                (Verdict::Ok, sentence)
            } else if sentence.starts_with("could not tell") {
                (Verdict::Unknown, sentence)
            } else {
                (Verdict::Illegal, sentence)
            }
        }
    };
    // A probe that did not run is written as a null `detail`.
    CheckResult::new(
        CheckKind::ConditionalWrites.name(),
        CheckKind::ConditionalWrites.name(),
        verdict,
        summary,
    )
    .with_detail(probe)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chaos_s3::{run_fencing, FencingConfig};

    use super::*;
    use crate::run_folder::FencingLog;
    use serde_json::json;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("chaos-fencing-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_probe_check_fails_with_the_probe_sentence() {
        let d = dir("probe");
        assert_eq!(check_probe(&d).verdict, Verdict::Unknown);
        let ignored = "the store does not enforce conditional writes: If-None-Match: * on an existing key was accepted";
        std::fs::write(
            d.join("probe.json"),
            json!({"enforced": false, "sentence": ignored, "steps": []}).to_string(),
        )
        .unwrap();
        let c = check_probe(&d);
        assert_eq!((c.verdict, c.summary.as_str()), (Verdict::Illegal, ignored));
        std::fs::write(
            d.join("probe.json"),
            json!({"enforced": false, "sentence": "could not tell whether ...", "steps": []})
                .to_string(),
        )
        .unwrap();
        assert_eq!(check_probe(&d).verdict, Verdict::Unknown);
        std::fs::write(
            d.join("probe.json"),
            json!({"enforced": true, "sentence": "the store enforces", "steps": []}).to_string(),
        )
        .unwrap();
        assert_eq!(check_probe(&d).verdict, Verdict::Ok);
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
            let verdicts: Vec<&str> = results.iter().map(|r| r.verdict.as_str()).collect();
            if enforce {
                assert_eq!(verdicts, ["ok", "ok", "ok"], "{results:#?}");
                assert!(results[0].summary.contains("held in all 3 rounds"));
            } else {
                assert!(verdicts.contains(&expect), "{results:#?}");
                let bad = results
                    .iter()
                    .find(|r| r.verdict == Verdict::Illegal)
                    .unwrap();
                let summary = bad.summary.as_str();
                assert!(summary.contains("violated in"), "{bad:?}");
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
