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
