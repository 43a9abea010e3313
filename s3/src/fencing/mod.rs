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
//!
//! `protocol` holds the object keys and the fence record, `events` what a run records,
//! `writer` the takeover and upload steps, `check` the three checks and `workload` a whole run.

mod check;
mod events;
mod protocol;
mod workload;
mod writer;

pub use check::{check_fencing, FencingCheck, FencingVerdict};
pub use events::{FencingEvent, Recorder};
pub use protocol::{
    data_key, fence_key, parse_data_key, parse_fence_key, FenceRecord, UploadId, DATA_PREFIX,
    FENCE_PREFIX,
};
pub use workload::{run_fencing, FencingConfig, FencingReport};
pub use writer::{TakeoverRefused, UploadOutcome, Writer};
