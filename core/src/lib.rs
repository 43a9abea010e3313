//! chaos-core: what every layer of the harness shares and nothing of it depends on. The errors
//! and exit codes, redaction of secrets, rates over runs, and the run folder: a type for each
//! file a run writes, with its write and its read.
//!
//! Layers, each a crate the next one builds on (the compiler refuses an edge back up):
//! core <- runner (scenario, cluster, systems, faults, workloads) <- verdict (checks, report)
//! <- chaos (the commands: run, compare, shrink, suite, replay, bench).

pub mod error;
pub mod rates;
pub mod redact;
pub mod run_folder;
pub mod shown;
