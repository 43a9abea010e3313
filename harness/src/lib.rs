//! The chaos harness as a library: the `chaos` binary is a thin command line over it, and the
//! end-to-end tests and benchmarks drive the same code.
//!
//! Data flows one way: scenario -> cluster + workload + faults -> history -> checker -> report.

// The stages; docs/architecture.md draws how data flows between them.
pub mod checks;
pub mod cluster;
pub mod faults;
pub mod observe;
pub mod progress;
pub mod rates;
pub mod recorder;
pub mod redact;
pub mod report;
pub mod run;
pub mod scenario;
pub mod systems;
pub mod workloads;

// Around a run: replaying and shrinking one, suites, measuring the harness.
pub mod bench;
pub mod compare;
pub mod error;
pub mod replay;
pub mod run_folder;
pub mod shrink;
pub mod suite;
