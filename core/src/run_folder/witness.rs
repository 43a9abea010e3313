//! The data of a witness as result.json stores it under a check's `witnesses`: the operations
//! (named by their history.jsonl line) and the fault that show a person why a check failed.
//! `checks/witness.rs` finds them; the report only renders them.

use checker::{History, Operation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An operation of the history as a witness names it: its line in history.jsonl (how the report
/// finds it), and what it did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpRef {
    /// 1-based line of the invocation in history.jsonl.
    pub line: usize,
    pub process: u64,
    pub f: String,
    pub value: Value,
    pub output: Value,
    pub invoke_time: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_time: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl OpRef {
    pub fn of(op: &Operation) -> OpRef {
        OpRef {
            line: op.line,
            process: op.process,
            f: op.f.clone(),
            value: op.value.clone(),
            output: op.output.clone(),
            invoke_time: op.invoke_time,
            complete_time: op.complete_time,
            node: op.node.clone(),
        }
    }

    pub fn of_summary(history: &History, s: &Operation) -> OpRef {
        OpRef::of(&history.ops[s.id])
    }
}

/// An acknowledged write that is gone, and the fault that lost it (`kill redis1 at 30.000 s`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lost {
    pub write: OpRef,
    #[serde(default)]
    pub fault: Option<String>,
}

/// One witness, tagged by `kind` in result.json.
// A few per check, made once: their size does not matter, boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Witness {
    /// A read that returned a value another acknowledged write had already overwritten.
    StaleRead {
        key: String,
        message: String,
        read: OpRef,
        /// The write of the value the read returned (None: the initial nil).
        #[serde(default)]
        wrote_value: Option<OpRef>,
        /// The write it missed: acknowledged before the read began, begun after `wrote_value`
        /// ended.
        overwritten_by: OpRef,
    },
    /// Acknowledged adds a set's last read does not have.
    MissingAdds {
        key: String,
        message: String,
        read: OpRef,
        adds: Vec<Lost>,
    },
    /// An acknowledged write the final read does not have (the durable check).
    LostWrite {
        key: String,
        value: Value,
        write: OpRef,
        #[serde(default)]
        fault: Option<String>,
    },
    /// Two creates (put with If-None-Match: *) that both succeeded, with no delete between.
    DoubleCreate {
        key: String,
        message: String,
        creates: Vec<Value>,
    },
    /// A get that returned one put's body with another put's ETag.
    TornGet { key: String, message: String },
}

impl Witness {
    pub fn key(&self) -> &str {
        match self {
            Witness::StaleRead { key, .. }
            | Witness::MissingAdds { key, .. }
            | Witness::LostWrite { key, .. }
            | Witness::DoubleCreate { key, .. }
            | Witness::TornGet { key, .. } => key,
        }
    }

    /// When the violation showed: the stale or incomplete read's invocation.
    pub fn seen_at(&self) -> Option<u64> {
        match self {
            Witness::StaleRead { read, .. } | Witness::MissingAdds { read, .. } => {
                Some(read.invoke_time)
            }
            _ => None,
        }
    }

    /// The sentence result.json's summary gives, when the witness has one.
    pub fn message(&self) -> Option<&str> {
        match self {
            Witness::StaleRead { message, .. }
            | Witness::MissingAdds { message, .. }
            | Witness::DoubleCreate { message, .. }
            | Witness::TornGet { message, .. } => Some(message),
            Witness::LostWrite { .. } => None,
        }
    }
}
