//! chaos-verdict: from a run folder to verdicts and reports. The checks read history.jsonl and the
//! other files a run wrote and write result.json; the report renders the folder as a
//! self-contained page. Reads files only: nothing here starts a container, so `chaos check` and
//! `chaos report` give the same answer later, anywhere.

pub mod checks;
pub mod report;

// The layers below, under the paths the modules here use (`crate::scenario`, `crate::run_folder`).
pub use chaos_core::{error, rates, redact, run_folder};
pub use chaos_runner::{faults, scenario};
