//! A whole fencing run: takeovers raced by contenders while the old writers keep uploading
//! (one of them stalled, if asked), then the checks.

use std::sync::Arc;
use std::time::Duration;

use crate::probe::{probe_conditional_writes, ProbeResult};
use crate::store::ObjectStore;

use super::check::{check_fencing, FencingVerdict};
use super::events::{FencingEvent, Recorder};
use super::writer::{UploadOutcome, Writer};

/// The shape of a fencing run.
#[derive(Clone, Debug)]
pub struct FencingConfig {
    /// Probe conditional writes first and refuse to run if they are not enforced.
    pub require_conditional_writes: bool,
    /// Terms to play (a takeover each).
    pub terms: u64,
    /// Writers racing for each new term.
    pub contenders: usize,
    /// Uploads by the current writers, concurrent with the next takeover.
    pub overlap_uploads: usize,
    /// Uploads the old writers still try after the next takeover completed.
    pub zombie_uploads: usize,
    /// Uploads by each new writer after its takeover.
    pub uploads: usize,
    /// If set, one current writer per takeover writes a data object and then stalls this long
    /// before its fence advance, while the takeover runs.
    pub stall: Option<Duration>,
}

impl Default for FencingConfig {
    fn default() -> Self {
        FencingConfig {
            require_conditional_writes: true,
            terms: 3,
            contenders: 2,
            overlap_uploads: 3,
            zombie_uploads: 2,
            uploads: 5,
            stall: None,
        }
    }
}

/// What a fencing run produced.
#[derive(Debug)]
pub struct FencingReport {
    pub probe: Option<ProbeResult>,
    pub events: Vec<FencingEvent>,
    /// None when the probe refused the store (the run did not happen).
    pub verdict: Option<FencingVerdict>,
}

impl FencingReport {
    /// Every check passed (a refused probe is a failed check).
    pub fn ok(&self) -> bool {
        self.probe.as_ref().is_none_or(|p| p.enforced)
            && self.verdict.as_ref().is_some_and(|v| v.ok())
    }
}

async fn upload_many<S: ObjectStore + 'static>(
    store: Arc<S>,
    rec: Arc<Recorder>,
    mut ws: Vec<Writer>,
    n: usize,
) -> Vec<Writer> {
    let mut set = tokio::task::JoinSet::new();
    for mut w in ws.drain(..) {
        let (store, rec) = (store.clone(), rec.clone());
        set.spawn(async move {
            for i in 0..n {
                let payload = format!("upload {i}");
                if w.upload(&*store, &rec, payload.as_bytes()).await == UploadOutcome::Fenced {
                    break;
                }
            }
            w
        });
    }
    let mut out = Vec::new();
    while let Some(r) = set.join_next().await {
        if let Ok(w) = r {
            out.push(w);
        }
    }
    out
}

/// Plays `cfg.terms` takeovers against the store, each raced by `cfg.contenders` writers while
/// the previous writers keep uploading, then checks the events.
pub async fn run_fencing<S: ObjectStore + 'static>(
    store: Arc<S>,
    cfg: &FencingConfig,
) -> FencingReport {
    let probe = if cfg.require_conditional_writes {
        let p = probe_conditional_writes(&*store, "chaos-probe/").await;
        if !p.enforced {
            return FencingReport {
                probe: Some(p),
                events: Vec::new(),
                verdict: None,
            };
        }
        Some(p)
    } else {
        None
    };
    let rec = Arc::new(Recorder::new());
    let mut current: Vec<Writer> = Vec::new();
    for term in 1..=cfg.terms {
        let mut set = tokio::task::JoinSet::new();
        for c in 0..cfg.contenders.max(1) {
            let (store, rec) = (store.clone(), rec.clone());
            let owner = format!("w{term}{}", (b'a' + (c % 26) as u8) as char);
            set.spawn(async move { Writer::takeover(&*store, &rec, &owner, term).await });
        }
        // One old writer stalls inside an upload (a GC pause) while the takeover runs.
        let stalled = match cfg.stall {
            Some(stall) if !current.is_empty() => {
                let mut w = current.remove(0);
                let (store, rec) = (store.clone(), rec.clone());
                Some(tokio::spawn(async move {
                    w.upload_stalling(&*store, &rec, b"stalled upload", Some(stall))
                        .await;
                    w
                }))
            }
            _ => None,
        };
        // The old writers go on uploading while the takeover runs.
        let mut old = upload_many(store.clone(), rec.clone(), current, cfg.overlap_uploads).await;
        let mut winners = Vec::new();
        while let Some(r) = set.join_next().await {
            if let Ok(Ok(w)) = r {
                winners.push(w);
            }
        }
        if let Some(task) = stalled {
            old.extend(task.await.ok());
        }
        // Old writers that were not stopped try again after the takeover completed.
        let _ = upload_many(store.clone(), rec.clone(), old, cfg.zombie_uploads).await;
        current = upload_many(store.clone(), rec.clone(), winners, cfg.uploads).await;
    }
    let events = rec.events();
    let verdict = check_fencing(&events);
    FencingReport {
        probe,
        events,
        verdict: Some(verdict),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fencing::UploadId;
    use crate::store::MemStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn workload_passes_with_enforced_preconditions() {
        for _ in 0..20 {
            let s = Arc::new(MemStore::new(true));
            let r = run_fencing(s, &FencingConfig::default()).await;
            assert!(r.probe.as_ref().unwrap().enforced);
            let v = r.verdict.as_ref().unwrap();
            assert!(v.ok(), "{v:#?}");
            // Every term was taken over exactly once.
            let done = r
                .events
                .iter()
                .filter(|e| matches!(e, FencingEvent::TakeoverCompleted { .. }))
                .count();
            assert_eq!(done, 3);
            // The old writers were fenced.
            assert!(r
                .events
                .iter()
                .any(|e| matches!(e, FencingEvent::Fenced { .. })));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn workload_finds_violations_with_ignored_preconditions() {
        let s = Arc::new(MemStore::new(false));
        let cfg = FencingConfig {
            require_conditional_writes: false,
            ..FencingConfig::default()
        };
        let r = run_fencing(s, &cfg).await;
        let v = r.verdict.unwrap();
        assert!(!v.ok());
        // Two contenders per term both complete their takeovers.
        assert!(!v.one_writer_per_term.ok, "{v:#?}");
        // The zombie uploads after each takeover are acknowledged and lost.
        assert!(!v.no_ack_after_takeover.ok, "{v:#?}");
        assert!(!v.no_acked_write_loss.ok, "{v:#?}");
        assert!(v
            .no_acked_write_loss
            .offending
            .iter()
            .all(|(_, s)| s.contains("missing from the restore point")));
    }

    /// A writer stalled between its data object and its fence advance while the next term
    /// takes over: refused (fenced) when the store enforces If-Match, acknowledged after the
    /// takeover (a violation) when it ignores it.
    #[tokio::test(start_paused = true)]
    async fn a_stalled_writer_is_fenced_only_by_an_enforcing_store() {
        for enforced in [true, false] {
            let s = Arc::new(MemStore::new(enforced));
            let cfg = FencingConfig {
                require_conditional_writes: false,
                terms: 2,
                contenders: 1,
                overlap_uploads: 0,
                zombie_uploads: 0,
                uploads: 1,
                stall: Some(Duration::from_secs(2)),
            };
            let r = run_fencing(s, &cfg).await;
            let stalled: Vec<&UploadId> = r
                .events
                .iter()
                .filter_map(|e| match e {
                    FencingEvent::WriterStalled {
                        upload, stall_ms, ..
                    } => {
                        assert_eq!(*stall_ms, 2000);
                        Some(upload)
                    }
                    _ => None,
                })
                .collect();
            // Term 1 has no old writer to stall; term 2's takeover stalls term 1's writer.
            assert_eq!(stalled.len(), 1, "{:#?}", r.events);
            assert_eq!(stalled[0].term, 1);
            let v = r.verdict.unwrap();
            let acked_late = v
                .no_ack_after_takeover
                .offending
                .iter()
                .any(|(u, _)| u == stalled[0]);
            if enforced {
                assert!(v.ok(), "{v:#?}");
                assert!(r
                    .events
                    .iter()
                    .any(|e| matches!(e, FencingEvent::Fenced { term: 1, .. })));
            } else {
                assert!(acked_late, "{v:#?}");
            }
        }
    }

    #[tokio::test]
    async fn the_probe_refuses_an_ignoring_store() {
        let s = Arc::new(MemStore::new(false));
        let r = run_fencing(s, &FencingConfig::default()).await;
        assert!(!r.ok());
        assert!(r.verdict.is_none());
        let p = r.probe.unwrap();
        assert!(!p.enforced);
        assert!(p.sentence.contains("does not enforce conditional writes"));
    }
}
