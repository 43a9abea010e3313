//! chaos-runner: from a scenario to a run folder. Parses and validates scenarios, starts the
//! cluster, drives the workload through a system's adapter, applies faults at their triggers and
//! records every operation and fault into the run folder (chaos-core's types).
//!
//! Data flows one way: scenario -> cluster + workload + faults -> history. The checks and the
//! report (chaos-verdict) read what this writes and are not visible from here.

pub mod activity;
pub mod cluster;
pub mod faults;
pub mod load;
pub mod observe;
pub mod progress;
pub mod recorder;
pub mod scenario;
pub mod systems;
pub mod workloads;

// The layer below, under the paths the modules here use (`crate::error`, `crate::run_folder`).
pub use chaos_core::{error, rates, redact, run_folder};
