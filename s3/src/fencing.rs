//! A fencing protocol for a primary whose state lives in an object store, modelled on the
//! published designs that fence writers with conditional object writes.
//!
//! Each writer holds a term. The fence object of term t is `fence__<u64::MAX - t, 20 digits>`,
//! so an ascending listing returns the highest term first; it holds `{term, owner, seq}`.
//!
//! - Upload: write the immutable data object `data/<term>/<owner>/<seq>` (If-None-Match: *),
//!   then advance the fence with If-Match on the ETag this writer holds. The upload is
//!   acknowledged only if that conditional write succeeded. A refused fence write fences the
//!   writer: it never acknowledges again. An unknown result is resolved by re-reading the
//!   fence and adopting it only if it carries this writer's identity and seq.
//! - Takeover by term t: list the fence objects, refuse if a higher term exists, create
//!   `fence(t)` with If-None-Match: *, delete every lower-term fence object, list again to
//!   verify, and only then read the restore point (the data objects of lower terms).
//!
//! Checks over the recorded events: NoAckedWriteLoss (every acknowledged upload of a lower
//! term is in the restore point of each completed takeover), NoAckAfterTakeover (no writer
//! invokes a fence advance that it then acknowledges after a takeover by a higher term
//! completed) and OneWriterPerTerm.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::client::PutCondition;
use crate::outcome::S3Outcome;
use crate::probe::{probe_conditional_writes, ProbeResult};
use crate::store::ObjectStore;

pub const FENCE_PREFIX: &str = "fence__";
pub const DATA_PREFIX: &str = "data/";

/// The fence object's key for a term: inverted so that the highest term sorts first.
pub fn fence_key(term: u64) -> String {
    format!("{FENCE_PREFIX}{:020}", u64::MAX - term)
}

/// The term of a fence key, if it is one.
pub fn parse_fence_key(key: &str) -> Option<u64> {
    let digits = key.strip_prefix(FENCE_PREFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let inv: u64 = digits.parse().ok()?;
    Some(u64::MAX - inv)
}

/// One upload: who wrote it, in which term, with which sequence number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct UploadId {
    pub term: u64,
    pub owner: String,
    pub seq: u64,
}

impl std::fmt::Display for UploadId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@term{}#{}", self.owner, self.term, self.seq)
    }
}

pub fn data_key(id: &UploadId) -> String {
    format!("{DATA_PREFIX}{:020}/{}/{:020}", id.term, id.owner, id.seq)
}

pub fn parse_data_key(key: &str) -> Option<UploadId> {
    let rest = key.strip_prefix(DATA_PREFIX)?;
    let mut parts = rest.splitn(3, '/');
    let term = parts.next()?.parse().ok()?;
    let owner = parts.next()?.to_string();
    let seq = parts.next()?.parse().ok()?;
    Some(UploadId { term, owner, seq })
}

/// What a fence object holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FenceRecord {
    pub term: u64,
    pub owner: String,
    pub seq: u64,
}

/// One recorded event; `time` is nanoseconds since the recorder started (strictly increasing).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FencingEvent {
    TakeoverStarted {
        time: u64,
        owner: String,
        term: u64,
    },
    TakeoverCompleted {
        time: u64,
        owner: String,
        term: u64,
        restore_point: Vec<UploadId>,
    },
    TakeoverRefused {
        time: u64,
        owner: String,
        term: u64,
        reason: String,
    },
    UploadInvoked {
        time: u64,
        upload: UploadId,
    },
    /// `fence_invoked`: when the conditional fence write that acknowledged it was sent.
    UploadAcked {
        time: u64,
        upload: UploadId,
        fence_invoked: u64,
    },
    /// Certainly not acknowledged, data object certainly not written.
    UploadFailed {
        time: u64,
        upload: UploadId,
        reason: String,
    },
    /// Not acknowledged; its data object may exist.
    UploadUnknown {
        time: u64,
        upload: UploadId,
        reason: String,
    },
    Fenced {
        time: u64,
        owner: String,
        term: u64,
        reason: String,
    },
    /// The writer wrote the data object of `upload` and now stalls for `stall_ms` before its
    /// fence advance (a long GC pause): the next takeover may complete meanwhile.
    WriterStalled {
        time: u64,
        upload: UploadId,
        stall_ms: u64,
    },
}

/// Collects events with strictly increasing times.
#[derive(Debug)]
pub struct Recorder {
    start: Instant,
    inner: Mutex<(u64, Vec<FencingEvent>)>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder {
            start: Instant::now(),
            inner: Mutex::new((0, Vec::new())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, Vec<FencingEvent>)> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Nanoseconds since the start, never equal to an earlier reading.
    pub fn now(&self) -> u64 {
        let mut g = self.lock();
        let t = (self.start.elapsed().as_nanos() as u64).max(g.0 + 1);
        g.0 = t;
        t
    }

    /// Records an event built from a fresh time.
    pub fn record(&self, f: impl FnOnce(u64) -> FencingEvent) {
        let mut g = self.lock();
        let t = (self.start.elapsed().as_nanos() as u64).max(g.0 + 1);
        g.0 = t;
        g.1.push(f(t));
    }

    pub fn events(&self) -> Vec<FencingEvent> {
        self.lock().1.clone()
    }
}

/// Why a takeover did not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("takeover by {owner} at term {term} refused: {reason}")]
pub struct TakeoverRefused {
    pub owner: String,
    pub term: u64,
    pub reason: String,
}

/// What became of one upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UploadOutcome {
    Acked(UploadId),
    NotAcked(UploadId),
    /// This writer is fenced (now or earlier); it will never acknowledge again.
    Fenced,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Active,
    /// The last fence write's result is unknown and could not be resolved yet.
    Uncertain,
    Fenced,
}

/// A writer that completed its takeover.
#[derive(Debug)]
pub struct Writer {
    pub owner: String,
    pub term: u64,
    seq: u64,
    etag: String,
    state: State,
    /// The data objects it serves from.
    pub restore_point: Vec<UploadId>,
}

fn record_of(body: &[u8]) -> Option<FenceRecord> {
    serde_json::from_slice(body).ok()
}

impl Writer {
    pub fn is_fenced(&self) -> bool {
        self.state == State::Fenced
    }

    /// Takes over at `term`: see the module documentation for the steps.
    pub async fn takeover<S: ObjectStore>(
        store: &S,
        rec: &Recorder,
        owner: &str,
        term: u64,
    ) -> Result<Writer, TakeoverRefused> {
        rec.record(|time| FencingEvent::TakeoverStarted {
            time,
            owner: owner.to_string(),
            term,
        });
        let r = Self::takeover_steps(store, owner, term).await;
        match r {
            Ok((etag, restore_point)) => {
                rec.record(|time| FencingEvent::TakeoverCompleted {
                    time,
                    owner: owner.to_string(),
                    term,
                    restore_point: restore_point.clone(),
                });
                Ok(Writer {
                    owner: owner.to_string(),
                    term,
                    seq: 0,
                    etag,
                    state: State::Active,
                    restore_point,
                })
            }
            Err(reason) => {
                rec.record(|time| FencingEvent::TakeoverRefused {
                    time,
                    owner: owner.to_string(),
                    term,
                    reason: reason.clone(),
                });
                Err(TakeoverRefused {
                    owner: owner.to_string(),
                    term,
                    reason,
                })
            }
        }
    }

    async fn list_fences<S: ObjectStore>(store: &S) -> Result<Vec<(u64, String)>, String> {
        match store.list(FENCE_PREFIX).await {
            S3Outcome::Ok(keys) => Ok(keys
                .into_iter()
                .filter_map(|k| parse_fence_key(&k).map(|t| (t, k)))
                .collect()),
            S3Outcome::Fail(r) | S3Outcome::Info(r) => {
                Err(format!("could not list the fence objects: {r}"))
            }
        }
    }

    async fn takeover_steps<S: ObjectStore>(
        store: &S,
        owner: &str,
        term: u64,
    ) -> Result<(String, Vec<UploadId>), String> {
        // 1. List; refuse if a higher term exists.
        let fences = Self::list_fences(store).await?;
        if let Some((t, _)) = fences.iter().find(|(t, _)| *t > term) {
            return Err(format!("a higher term {t} exists"));
        }
        // 2. Create our fence object, create-only.
        let mine = FenceRecord {
            term,
            owner: owner.to_string(),
            seq: 0,
        };
        let body = serde_json::to_vec(&mine).map_err(|e| e.to_string())?;
        let key = fence_key(term);
        let etag = match store.put(&key, body, PutCondition::IfNoneMatchAny).await {
            S3Outcome::Ok(Some(e)) => e,
            S3Outcome::Ok(None) | S3Outcome::Info(_) => {
                // Resolve by reading: adopt only if it carries our identity.
                match store.get(&key).await {
                    S3Outcome::Ok(Some(o))
                        if record_of(&o.body).as_ref() == Some(&mine) && o.etag.is_some() =>
                    {
                        o.etag.unwrap_or_default()
                    }
                    _ => return Err(format!("the creation of {key} has an unknown outcome")),
                }
            }
            S3Outcome::Fail(r) => return Err(format!("{key} could not be created: {r}")),
        };
        // 3. Delete every lower-term fence object, 4. list again to verify (a few rounds:
        // a deleted fence object may be written again by a writer the store did not stop).
        let mut lower: BTreeSet<String> = fences
            .into_iter()
            .filter(|(t, _)| *t < term)
            .map(|(_, k)| k)
            .collect();
        let mut verified = false;
        for _round in 0..3 {
            for k in &lower {
                let _ = store.delete(k).await;
            }
            let now = Self::list_fences(store).await?;
            if let Some((t, _)) = now.iter().find(|(t, _)| *t > term) {
                return Err(format!("a higher term {t} took over meanwhile"));
            }
            if !now.iter().any(|(t, _)| *t == term) {
                return Err(format!("{key} vanished from the listing"));
            }
            lower = now
                .into_iter()
                .filter(|(t, _)| *t < term)
                .map(|(_, k)| k)
                .collect();
            if lower.is_empty() {
                verified = true;
                break;
            }
        }
        if !verified {
            return Err(format!(
                "lower-term fence objects remain after deleting them: {}",
                lower.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        // 5. Only now read the restore point.
        let restore_point = match store.list(DATA_PREFIX).await {
            S3Outcome::Ok(keys) => keys
                .iter()
                .filter_map(|k| parse_data_key(k))
                .filter(|u| u.term < term)
                .collect(),
            S3Outcome::Fail(r) | S3Outcome::Info(r) => {
                return Err(format!("could not read the restore point: {r}"))
            }
        };
        Ok((etag, restore_point))
    }

    fn fence(&mut self, rec: &Recorder, reason: String) -> UploadOutcome {
        self.state = State::Fenced;
        let (owner, term) = (self.owner.clone(), self.term);
        rec.record(|time| FencingEvent::Fenced {
            time,
            owner,
            term,
            reason,
        });
        UploadOutcome::Fenced
    }

    /// Re-reads the fence after an unknown outcome. `Some(true)`: it carries `seq` (adopted);
    /// `Some(false)`: it carries our identity at an older seq (not applied, go on);
    /// `None`: someone else's, or gone (fenced). Errors: could not read.
    async fn reread<S: ObjectStore>(
        &mut self,
        store: &S,
        seq: u64,
    ) -> Result<Option<bool>, String> {
        match store.get(&fence_key(self.term)).await {
            S3Outcome::Ok(Some(o)) => {
                let Some(r) = record_of(&o.body) else {
                    return Ok(None);
                };
                let Some(etag) = o.etag else {
                    return Err("the fence object has no ETag".into());
                };
                if r.owner != self.owner || r.term != self.term {
                    return Ok(None);
                }
                if r.seq == seq {
                    self.etag = etag;
                    Ok(Some(true))
                } else if r.seq < seq {
                    self.etag = etag;
                    Ok(Some(false))
                } else {
                    Ok(None)
                }
            }
            S3Outcome::Ok(None) => Ok(None),
            S3Outcome::Fail(r) | S3Outcome::Info(r) => Err(r),
        }
    }

    /// One upload: the data object, then the conditional fence advance.
    pub async fn upload<S: ObjectStore>(
        &mut self,
        store: &S,
        rec: &Recorder,
        payload: &[u8],
    ) -> UploadOutcome {
        self.upload_stalling(store, rec, payload, None).await
    }

    /// An upload whose writer stalls for `stall` between the data object and the fence
    /// advance, as a writer in a long GC pause would; the conditional write must then refuse it
    /// if a higher term took over meanwhile.
    pub async fn upload_stalling<S: ObjectStore>(
        &mut self,
        store: &S,
        rec: &Recorder,
        payload: &[u8],
        stall: Option<Duration>,
    ) -> UploadOutcome {
        if self.state == State::Fenced {
            return UploadOutcome::Fenced;
        }
        if self.state == State::Uncertain {
            match self.reread(store, self.seq).await {
                Ok(Some(_)) => self.state = State::Active,
                Ok(None) => {
                    return self.fence(rec, "the fence no longer carries this writer".into())
                }
                Err(_) => return UploadOutcome::Fenced,
            }
        }
        self.seq += 1;
        let id = UploadId {
            term: self.term,
            owner: self.owner.clone(),
            seq: self.seq,
        };
        rec.record(|time| FencingEvent::UploadInvoked {
            time,
            upload: id.clone(),
        });
        let mut data = serde_json::to_vec(&id).unwrap_or_default();
        data.extend_from_slice(b"\n");
        data.extend_from_slice(payload);
        match store
            .put(&data_key(&id), data, PutCondition::IfNoneMatchAny)
            .await
        {
            S3Outcome::Ok(_) => {}
            S3Outcome::Fail(reason) => {
                rec.record(|time| FencingEvent::UploadFailed {
                    time,
                    upload: id.clone(),
                    reason,
                });
                return UploadOutcome::NotAcked(id);
            }
            S3Outcome::Info(reason) => {
                rec.record(|time| FencingEvent::UploadUnknown {
                    time,
                    upload: id.clone(),
                    reason: format!("data object: {reason}"),
                });
                return UploadOutcome::NotAcked(id);
            }
        }
        if let Some(stall) = stall {
            rec.record(|time| FencingEvent::WriterStalled {
                time,
                upload: id.clone(),
                stall_ms: stall.as_millis() as u64,
            });
            tokio::time::sleep(stall).await;
        }
        let rec_body = serde_json::to_vec(&FenceRecord {
            term: self.term,
            owner: self.owner.clone(),
            seq: self.seq,
        })
        .unwrap_or_default();
        let fence_invoked = rec.now();
        let answer = store
            .put(
                &fence_key(self.term),
                rec_body,
                PutCondition::IfMatch(self.etag.clone()),
            )
            .await;
        let ack = |rec: &Recorder, id: &UploadId| {
            rec.record(|time| FencingEvent::UploadAcked {
                time,
                upload: id.clone(),
                fence_invoked,
            });
            UploadOutcome::Acked(id.clone())
        };
        let unknown = |rec: &Recorder, id: &UploadId, reason: String| {
            rec.record(|time| FencingEvent::UploadUnknown {
                time,
                upload: id.clone(),
                reason,
            });
            UploadOutcome::NotAcked(id.clone())
        };
        match answer {
            S3Outcome::Ok(Some(etag)) => {
                self.etag = etag;
                ack(rec, &id)
            }
            S3Outcome::Fail(reason) => {
                rec.record(|time| FencingEvent::UploadFailed {
                    time,
                    upload: id.clone(),
                    reason: format!("fence advance refused: {reason}"),
                });
                self.fence(rec, format!("fence advance refused: {reason}"))
            }
            S3Outcome::Ok(None) | S3Outcome::Info(_) => {
                let why = answer
                    .reason()
                    .unwrap_or("no ETag in the answer")
                    .to_string();
                match self.reread(store, self.seq).await {
                    Ok(Some(true)) => ack(rec, &id),
                    Ok(Some(false)) => unknown(rec, &id, format!("fence advance: {why}")),
                    Ok(None) => {
                        unknown(rec, &id, format!("fence advance: {why}"));
                        self.fence(
                            rec,
                            "after an unknown fence advance, the fence carries another writer"
                                .into(),
                        )
                    }
                    Err(e) => {
                        self.state = State::Uncertain;
                        unknown(
                            rec,
                            &id,
                            format!("fence advance: {why}; re-read failed: {e}"),
                        )
                    }
                }
            }
        }
    }
}

/// One check's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FencingCheck {
    pub name: &'static str,
    pub ok: bool,
    pub sentence: String,
    /// The uploads at fault, with a sentence each.
    pub offending: Vec<(UploadId, String)>,
}

/// The verdicts of the fencing checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FencingVerdict {
    pub no_acked_write_loss: FencingCheck,
    pub no_ack_after_takeover: FencingCheck,
    pub one_writer_per_term: FencingCheck,
}

impl FencingVerdict {
    pub fn ok(&self) -> bool {
        self.no_acked_write_loss.ok && self.no_ack_after_takeover.ok && self.one_writer_per_term.ok
    }
    pub fn checks(&self) -> [&FencingCheck; 3] {
        [
            &self.no_acked_write_loss,
            &self.no_ack_after_takeover,
            &self.one_writer_per_term,
        ]
    }
}

fn secs(ns: u64) -> String {
    format!("{:.6} s", ns as f64 / 1e9)
}

/// Checks recorded fencing events.
pub fn check_fencing(events: &[FencingEvent]) -> FencingVerdict {
    let mut acks: Vec<(&UploadId, u64, u64)> = Vec::new();
    let mut takeovers: Vec<(&str, u64, u64, BTreeSet<&UploadId>)> = Vec::new();
    for e in events {
        match e {
            FencingEvent::UploadAcked {
                time,
                upload,
                fence_invoked,
            } => acks.push((upload, *time, *fence_invoked)),
            FencingEvent::TakeoverCompleted {
                time,
                owner,
                term,
                restore_point,
            } => takeovers.push((owner, *term, *time, restore_point.iter().collect())),
            _ => {}
        }
    }

    let mut loss = Vec::new();
    for (u, acked_at, _) in &acks {
        for (owner, term, done, rp) in &takeovers {
            if u.term < *term && !rp.contains(u) {
                loss.push((
                    (*u).clone(),
                    format!(
                        "{u} was acknowledged at {} but is missing from the restore point of \
                         {owner} at term {term} (takeover completed at {})",
                        secs(*acked_at),
                        secs(*done)
                    ),
                ));
            }
        }
    }

    let mut late = Vec::new();
    for (u, acked_at, invoked) in &acks {
        // The earliest completed higher-term takeover before the fence advance was sent.
        if let Some((owner, term, done, _)) = takeovers
            .iter()
            .filter(|(_, t, done, _)| *t > u.term && *done < *invoked)
            .min_by_key(|(_, _, done, _)| *done)
        {
            late.push((
                (*u).clone(),
                format!(
                    "{u} was acknowledged at {} by a fence advance sent at {}, after {owner} \
                     completed its takeover at term {term} at {}",
                    secs(*acked_at),
                    secs(*invoked),
                    secs(*done)
                ),
            ));
        }
    }

    let mut owners: BTreeMap<u64, BTreeSet<&str>> = BTreeMap::new();
    for (owner, term, _, _) in &takeovers {
        owners.entry(*term).or_default().insert(owner);
    }
    for (u, _, _) in &acks {
        owners.entry(u.term).or_default().insert(&u.owner);
    }
    let mut dup = Vec::new();
    for (term, os) in &owners {
        if os.len() > 1 {
            let names: Vec<&str> = os.iter().copied().collect();
            for (u, at, _) in acks.iter().filter(|(u, _, _)| u.term == *term) {
                dup.push((
                    (*u).clone(),
                    format!(
                        "{u} acknowledged at {} while term {term} had writers {}",
                        secs(*at),
                        names.join(", ")
                    ),
                ));
            }
            if !acks.iter().any(|(u, _, _)| u.term == *term) {
                dup.push((
                    UploadId {
                        term: *term,
                        owner: names.join("+"),
                        seq: 0,
                    },
                    format!(
                        "term {term} was taken over by {} writers: {}",
                        names.len(),
                        names.join(", ")
                    ),
                ));
            }
        }
    }

    let n_acks = acks.len();
    let n_take = takeovers.len();
    let mk = |name: &'static str, offending: Vec<(UploadId, String)>, good: String, bad: &str| {
        let ok = offending.is_empty();
        let sentence = if ok {
            good
        } else {
            format!(
                "{} {bad}; first: {}",
                offending.len(),
                offending.first().map(|o| o.1.as_str()).unwrap_or("")
            )
        };
        FencingCheck {
            name,
            ok,
            sentence,
            offending,
        }
    };
    FencingVerdict {
        no_acked_write_loss: mk(
            "NoAckedWriteLoss",
            loss,
            format!(
                "every one of {n_acks} acknowledged uploads is in the restore point of each of \
                 the {n_take} later takeovers"
            ),
            "acknowledged uploads are missing from a restore point",
        ),
        no_ack_after_takeover: mk(
            "NoAckAfterTakeover",
            late,
            format!(
                "no writer acknowledged after a higher term's takeover had completed \
                 ({n_acks} acknowledged uploads, {n_take} takeovers)"
            ),
            "uploads were acknowledged after a higher term's takeover had completed",
        ),
        one_writer_per_term: mk(
            "OneWriterPerTerm",
            dup,
            format!("each of {} terms had one writer", owners.len()),
            "uploads or takeovers by more than one writer in a term",
        ),
    }
}

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
    use crate::store::MemStore;

    #[test]
    fn fence_keys_sort_highest_term_first() {
        let mut keys = [fence_key(1), fence_key(10), fence_key(2), fence_key(0)];
        keys.sort();
        let terms: Vec<u64> = keys.iter().map(|k| parse_fence_key(k).unwrap()).collect();
        assert_eq!(terms, vec![10, 2, 1, 0]);
        assert_eq!(parse_fence_key("fence__12"), None);
        assert_eq!(parse_fence_key("fence__abcdefghijabcdefghij"), None);
        assert_eq!(parse_fence_key("other"), None);
        let id = UploadId {
            term: 3,
            owner: "w3a".into(),
            seq: 7,
        };
        assert_eq!(parse_data_key(&data_key(&id)), Some(id));
        assert_eq!(parse_data_key("data/x/y/z"), None);
    }

    #[tokio::test]
    async fn sequential_takeover_fences_the_old_writer() {
        let s = MemStore::new(true);
        let rec = Recorder::new();
        let mut a = Writer::takeover(&s, &rec, "a", 1).await.unwrap();
        for _ in 0..3 {
            assert!(matches!(
                a.upload(&s, &rec, b"x").await,
                UploadOutcome::Acked(_)
            ));
        }
        let mut b = Writer::takeover(&s, &rec, "b", 2).await.unwrap();
        assert_eq!(b.restore_point.len(), 3);
        assert_eq!(a.upload(&s, &rec, b"late").await, UploadOutcome::Fenced);
        assert!(a.is_fenced());
        assert_eq!(a.upload(&s, &rec, b"later").await, UploadOutcome::Fenced);
        assert!(matches!(
            b.upload(&s, &rec, b"y").await,
            UploadOutcome::Acked(_)
        ));
        // A lower term cannot take over any more.
        assert!(Writer::takeover(&s, &rec, "c", 1).await.is_err());
        let v = check_fencing(&rec.events());
        assert!(v.ok(), "{v:#?}");
    }

    #[tokio::test]
    async fn ignored_preconditions_let_the_old_writer_acknowledge() {
        let s = MemStore::new(false);
        let rec = Recorder::new();
        let mut a = Writer::takeover(&s, &rec, "a", 1).await.unwrap();
        assert!(matches!(
            a.upload(&s, &rec, b"x").await,
            UploadOutcome::Acked(_)
        ));
        let _b = Writer::takeover(&s, &rec, "b", 2).await.unwrap();
        // The store ignores If-Match on the deleted fence object: the old writer goes on.
        let late = a.upload(&s, &rec, b"late").await;
        let UploadOutcome::Acked(late) = late else {
            panic!("expected the old writer to acknowledge, got {late:?}")
        };
        let v = check_fencing(&rec.events());
        assert!(!v.no_acked_write_loss.ok);
        assert_eq!(v.no_acked_write_loss.offending[0].0, late);
        assert!(!v.no_ack_after_takeover.ok);
        assert_eq!(v.no_ack_after_takeover.offending[0].0, late);
        assert!(
            v.no_ack_after_takeover.sentence.contains("a@term1#2"),
            "{}",
            v.no_ack_after_takeover.sentence
        );
    }

    #[tokio::test]
    async fn lost_reply_on_the_fence_is_resolved_by_rereading() {
        let s = MemStore::new(true);
        let rec = Recorder::new();
        let mut a = Writer::takeover(&s, &rec, "a", 1).await.unwrap();
        s.lose_next_reply(FENCE_PREFIX);
        // Applied, reply lost: the re-read carries our identity and seq: adopted, acknowledged.
        assert!(matches!(
            a.upload(&s, &rec, b"x").await,
            UploadOutcome::Acked(_)
        ));
        // And the writer's ETag is current: the next upload goes through.
        assert!(matches!(
            a.upload(&s, &rec, b"y").await,
            UploadOutcome::Acked(_)
        ));
        // A lost reply on the takeover's create is resolved the same way.
        s.lose_next_reply(&fence_key(2));
        let mut b = Writer::takeover(&s, &rec, "b", 2).await.unwrap();
        assert!(matches!(
            b.upload(&s, &rec, b"z").await,
            UploadOutcome::Acked(_)
        ));
        assert!(check_fencing(&rec.events()).ok());
    }

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

    #[test]
    fn events_serialize_as_tagged_json() {
        let e = FencingEvent::UploadAcked {
            time: 5,
            upload: UploadId {
                term: 1,
                owner: "a".into(),
                seq: 2,
            },
            fence_invoked: 4,
        };
        let j = serde_json::to_string(&e).unwrap();
        assert!(j.contains("\"type\":\"upload_acked\""), "{j}");
        let back: FencingEvent = serde_json::from_str(&j).unwrap();
        assert_eq!(back, e);
    }
}
