//! The checks over a run's events: NoAckedWriteLoss, NoAckAfterTakeover, OneWriterPerTerm.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::events::FencingEvent;
use super::protocol::UploadId;

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

/// One acknowledged upload: when it was acknowledged and when its fence advance was sent.
struct Ack<'a> {
    upload: &'a UploadId,
    at: u64,
    fence_invoked: u64,
}

/// One completed takeover: by whom, of which term, when, and what it restored.
struct Takeover<'a> {
    owner: &'a str,
    term: u64,
    done: u64,
    restore_point: BTreeSet<&'a UploadId>,
}

/// An offending upload with the sentence that says why.
type Offence = (UploadId, String);

/// Checks recorded fencing events.
pub fn check_fencing(events: &[FencingEvent]) -> FencingVerdict {
    let (acks, takeovers) = acks_and_takeovers(events);
    let owners = writers_per_term(&acks, &takeovers);
    let (n_acks, n_take) = (acks.len(), takeovers.len());
    FencingVerdict {
        no_acked_write_loss: verdict(
            "NoAckedWriteLoss",
            lost_acks(&acks, &takeovers),
            format!(
                "every one of {n_acks} acknowledged uploads is in the restore point of each of \
                 the {n_take} later takeovers"
            ),
            "acknowledged uploads are missing from a restore point",
        ),
        no_ack_after_takeover: verdict(
            "NoAckAfterTakeover",
            acks_after_takeover(&acks, &takeovers),
            format!(
                "no writer acknowledged after a higher term's takeover had completed \
                 ({n_acks} acknowledged uploads, {n_take} takeovers)"
            ),
            "uploads were acknowledged after a higher term's takeover had completed",
        ),
        one_writer_per_term: verdict(
            "OneWriterPerTerm",
            shared_terms(&owners, &acks),
            format!("each of {} terms had one writer", owners.len()),
            "uploads or takeovers by more than one writer in a term",
        ),
    }
}

/// The events the checks read: acknowledgements and completed takeovers, in recorded order.
fn acks_and_takeovers(events: &[FencingEvent]) -> (Vec<Ack<'_>>, Vec<Takeover<'_>>) {
    let mut acks = Vec::new();
    let mut takeovers = Vec::new();
    for e in events {
        match e {
            FencingEvent::UploadAcked {
                time,
                upload,
                fence_invoked,
            } => acks.push(Ack {
                upload,
                at: *time,
                fence_invoked: *fence_invoked,
            }),
            FencingEvent::TakeoverCompleted {
                time,
                owner,
                term,
                restore_point,
            } => takeovers.push(Takeover {
                owner,
                term: *term,
                done: *time,
                restore_point: restore_point.iter().collect(),
            }),
            _ => {}
        }
    }
    (acks, takeovers)
}

/// NoAckedWriteLoss: acknowledged uploads missing from a higher term's restore point.
fn lost_acks(acks: &[Ack], takeovers: &[Takeover]) -> Vec<Offence> {
    let mut loss = Vec::new();
    for a in acks {
        let u = a.upload;
        for t in takeovers {
            if u.term < t.term && !t.restore_point.contains(u) {
                loss.push((
                    u.clone(),
                    format!(
                        "{u} was acknowledged at {} but is missing from the restore point of \
                         {} at term {} (takeover completed at {})",
                        secs(a.at),
                        t.owner,
                        t.term,
                        secs(t.done)
                    ),
                ));
            }
        }
    }
    loss
}

/// NoAckAfterTakeover: acknowledgements whose fence advance was sent after a higher term's
/// takeover had completed (one sent before and answered after is concurrent, not late).
fn acks_after_takeover(acks: &[Ack], takeovers: &[Takeover]) -> Vec<Offence> {
    let mut late = Vec::new();
    for a in acks {
        let u = a.upload;
        // The earliest completed higher-term takeover before the fence advance was sent.
        if let Some(t) = takeovers
            .iter()
            .filter(|t| t.term > u.term && t.done < a.fence_invoked)
            .min_by_key(|t| t.done)
        {
            late.push((
                u.clone(),
                format!(
                    "{u} was acknowledged at {} by a fence advance sent at {}, after {} \
                     completed its takeover at term {} at {}",
                    secs(a.at),
                    secs(a.fence_invoked),
                    t.owner,
                    t.term,
                    secs(t.done)
                ),
            ));
        }
    }
    late
}

/// Who took over or acknowledged in each term.
fn writers_per_term<'a>(
    acks: &[Ack<'a>],
    takeovers: &[Takeover<'a>],
) -> BTreeMap<u64, BTreeSet<&'a str>> {
    let mut owners: BTreeMap<u64, BTreeSet<&str>> = BTreeMap::new();
    for t in takeovers {
        owners.entry(t.term).or_default().insert(t.owner);
    }
    for a in acks {
        owners
            .entry(a.upload.term)
            .or_default()
            .insert(&a.upload.owner);
    }
    owners
}

/// OneWriterPerTerm: every acknowledgement in a term with several writers, or the term itself
/// (as a made-up upload of seq 0 by "a+b") when none of them acknowledged.
fn shared_terms(owners: &BTreeMap<u64, BTreeSet<&str>>, acks: &[Ack]) -> Vec<Offence> {
    let mut dup = Vec::new();
    for (term, os) in owners {
        if os.len() > 1 {
            let names: Vec<&str> = os.iter().copied().collect();
            for a in acks.iter().filter(|a| a.upload.term == *term) {
                dup.push((
                    a.upload.clone(),
                    format!(
                        "{} acknowledged at {} while term {term} had writers {}",
                        a.upload,
                        secs(a.at),
                        names.join(", ")
                    ),
                ));
            }
            if !acks.iter().any(|a| a.upload.term == *term) {
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
    dup
}

/// One check's verdict: `good` if nothing offends, else how many did and the first sentence.
fn verdict(name: &'static str, offending: Vec<Offence>, good: String, bad: &str) -> FencingCheck {
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
}
