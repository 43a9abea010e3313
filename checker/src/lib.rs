//! Histories and checkers for chaos: a linearizability checker (split by key; each key
//! decided from the reads-from relation when written values are unique, else by Wing & Gong /
//! Lowe search with a visited cache), durability and retry checks, per-kind counts, and a
//! generator of hot-key histories. A plain library: no Docker, no async.

mod answer;
pub mod counts;
pub mod durable;
mod fx;
pub mod generate;
pub mod history;
pub mod linearizable;
pub mod model;
pub mod read;
pub mod retry;
mod search;
pub mod stale;
mod unique;

pub use history::{Event, EventType, History, Operation, Status};
pub use linearizable::{render, Budget, LinearizabilityResult, Procedure, Route};
pub use model::{CheckError, Model, ModelKind};
pub use read::{
    json_error_words, parse_bytes, parse_str, read_history, read_history_with, Format, ReadError,
    ReadHistory, ReadOptions,
};

use serde::Serialize;

/// The outcome of a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Illegal,
    Unknown,
}

impl Verdict {
    /// Jepsen's exit codes: 0 ok, 1 a violation, 2 undecided.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Ok => 0,
            Verdict::Illegal => 1,
            Verdict::Unknown => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Illegal => "illegal",
            Verdict::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
