//! The chaos harness as a library: the `chaos` binary is a thin command line over it, and the
//! end-to-end tests and benchmarks drive the same code.
//!
//! Data flows one way: scenario -> cluster + workload + faults -> history -> checks -> report.
//! The stages are crates in layers (docs/architecture.md): chaos-core (errors, the run folder's
//! types), chaos-runner (scenario to run folder), chaos-verdict (run folder to verdicts and
//! report) and this one, the commands over them. Their modules are re-exported here under one
//! path, `chaos::...`.

pub use chaos_core::{error, rates, redact, run_folder};
pub use chaos_runner::{
    activity, cluster, faults, load, observe, progress, recorder, scenario, systems, workloads,
};
pub use chaos_verdict::{checks, report};

// The commands over the stages: a run, comparing builds, stopping plays held to a rate,
// replaying and shrinking a run, suites, measuring the harness, importing a model checker's
// trace.
pub mod bench;
pub mod compare;
pub mod rate_stop;
pub mod replay;
pub mod run;
pub mod shard;
pub mod shrink;
pub mod suite;
pub mod trace_import;
