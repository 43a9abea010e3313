//! S3 for the chaos testbed: a small signed client whose every answer is classified as ok /
//! fail / info, a probe that tells whether a store enforces conditional writes, and a fencing
//! workload (with its checker) for a primary whose state lives in an object store.
//!
//! Credentials never appear in `Debug` output, errors or recorded events.

pub mod client;
pub mod fencing;
pub mod outcome;
pub mod probe;
pub mod sign;
pub mod store;

pub use client::{GetCondition, GetResult, ListEntry, Object, PutCondition, S3Client, Timeouts};
pub use fencing::{
    check_fencing, run_fencing, FencingConfig, FencingEvent, FencingReport, FencingVerdict,
    UploadId, Writer,
};
pub use outcome::{S3Outcome, S3Reply};
pub use probe::{probe_conditional_writes, ProbeResult};
pub use store::{BucketStore, MemStore, ObjectStore};
