//! The chaos harness as a library: the `chaos` binary is a thin command line over it, and the
//! end-to-end tests and benchmarks drive the same code.
//!
//! Data flows one way: scenario -> cluster + workload + faults -> history -> checker -> report.

pub mod bench;
pub mod checks;
pub mod cluster;
pub mod compose;
pub mod converge;
pub mod docker;
pub mod error;
pub mod evidence;
pub mod faults;
pub mod fencing;
pub mod images;
pub mod lease;
pub mod progress;
pub mod proxy;
pub mod recorder;
pub mod replay;
pub mod report;
pub mod run;
pub mod scenario;
pub mod shrink;
pub mod suite;
pub mod systems;
pub mod workload;
