//! One writer of the protocol: its takeover of a term and its uploads, each step recorded.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::client::PutCondition;
use crate::outcome::S3Outcome;
use crate::store::ObjectStore;

use super::events::{FencingEvent, Recorder};
use super::protocol::{
    data_key, fence_key, parse_data_key, parse_fence_key, record_of, FenceRecord, UploadId,
    DATA_PREFIX, FENCE_PREFIX,
};

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
        if let Err(stopped) = self.ready(store, rec).await {
            return stopped;
        }
        let id = self.next_upload(rec);
        if let Err(not_acked) = write_data(store, rec, &id, payload).await {
            return not_acked;
        }
        if let Some(stall) = stall {
            rec.record(|time| FencingEvent::WriterStalled {
                time,
                upload: id.clone(),
                stall_ms: stall.as_millis() as u64,
            });
            tokio::time::sleep(stall).await;
        }
        self.advance_fence(store, rec, &id).await
    }

    /// May this writer upload? Not once fenced; after a fence write of unknown outcome, only if
    /// the fence still carries it (else it is fenced now).
    async fn ready<S: ObjectStore>(
        &mut self,
        store: &S,
        rec: &Recorder,
    ) -> Result<(), UploadOutcome> {
        if self.state == State::Fenced {
            return Err(UploadOutcome::Fenced);
        }
        if self.state == State::Uncertain {
            match self.reread(store, self.seq).await {
                Ok(Some(_)) => self.state = State::Active,
                Ok(None) => {
                    return Err(self.fence(rec, "the fence no longer carries this writer".into()))
                }
                Err(_) => return Err(UploadOutcome::Fenced),
            }
        }
        Ok(())
    }

    /// The next upload's identity, recorded as invoked.
    fn next_upload(&mut self, rec: &Recorder) -> UploadId {
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
        id
    }

    /// Advance the fence with If-Match on the ETag this writer holds: the upload is acknowledged
    /// only if that conditional write succeeded; a refusal fences the writer.
    async fn advance_fence<S: ObjectStore>(
        &mut self,
        store: &S,
        rec: &Recorder,
        id: &UploadId,
    ) -> UploadOutcome {
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
        match answer {
            S3Outcome::Ok(Some(etag)) => {
                self.etag = etag;
                acked(rec, id, fence_invoked)
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
                self.resolve_advance(store, rec, id, fence_invoked, why)
                    .await
            }
        }
    }

    /// The fence advance has an unknown outcome (`why`): re-read the fence to decide.
    async fn resolve_advance<S: ObjectStore>(
        &mut self,
        store: &S,
        rec: &Recorder,
        id: &UploadId,
        fence_invoked: u64,
        why: String,
    ) -> UploadOutcome {
        match self.reread(store, self.seq).await {
            Ok(Some(true)) => acked(rec, id, fence_invoked),
            Ok(Some(false)) => unknown(rec, id, format!("fence advance: {why}")),
            Ok(None) => {
                unknown(rec, id, format!("fence advance: {why}"));
                self.fence(
                    rec,
                    "after an unknown fence advance, the fence carries another writer".into(),
                )
            }
            Err(e) => {
                self.state = State::Uncertain;
                unknown(
                    rec,
                    id,
                    format!("fence advance: {why}; re-read failed: {e}"),
                )
            }
        }
    }
}

/// Writes the upload's immutable data object (create-only). Err: not acknowledged (recorded
/// as failed or unknown).
async fn write_data<S: ObjectStore>(
    store: &S,
    rec: &Recorder,
    id: &UploadId,
    payload: &[u8],
) -> Result<(), UploadOutcome> {
    let mut data = serde_json::to_vec(id).unwrap_or_default();
    data.extend_from_slice(b"\n");
    data.extend_from_slice(payload);
    match store
        .put(&data_key(id), data, PutCondition::IfNoneMatchAny)
        .await
    {
        S3Outcome::Ok(_) => Ok(()),
        S3Outcome::Fail(reason) => {
            rec.record(|time| FencingEvent::UploadFailed {
                time,
                upload: id.clone(),
                reason,
            });
            Err(UploadOutcome::NotAcked(id.clone()))
        }
        S3Outcome::Info(reason) => {
            rec.record(|time| FencingEvent::UploadUnknown {
                time,
                upload: id.clone(),
                reason: format!("data object: {reason}"),
            });
            Err(UploadOutcome::NotAcked(id.clone()))
        }
    }
}

fn acked(rec: &Recorder, id: &UploadId, fence_invoked: u64) -> UploadOutcome {
    rec.record(|time| FencingEvent::UploadAcked {
        time,
        upload: id.clone(),
        fence_invoked,
    });
    UploadOutcome::Acked(id.clone())
}

fn unknown(rec: &Recorder, id: &UploadId, reason: String) -> UploadOutcome {
    rec.record(|time| FencingEvent::UploadUnknown {
        time,
        upload: id.clone(),
        reason,
    });
    UploadOutcome::NotAcked(id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fencing::check_fencing;
    use crate::store::MemStore;

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
}
