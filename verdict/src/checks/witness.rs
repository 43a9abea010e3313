//! Witnesses: the operations (and the fault) that show a person why a check failed, found once
//! here and stored in result.json (their data: `run_folder/witness.rs`). The report only renders them; nothing downstream recomputes
//! a verdict or searches the history for evidence again.
//!
//! - a stale read: the read, the write of the value it returned, the write it missed;
//! - acknowledged adds a set's last read no longer has, and the fault that lost them;
//! - a lost write (durable): the write, and the fault that lost it;
//! - two creates that both succeeded, or a get torn between two versions (s3-object).
//!
//! The partial linearization and the operation that cannot be placed are the checker's own
//! explanation (`detail.partitions[].explanation`).

use std::collections::BTreeMap;

use checker::{History, LinearizabilityResult, ModelKind, Operation, Status, Verdict};
use serde_json::{json, Value};

use crate::faults::log::{fault_that_lost, Window};
use crate::run_folder::Clock;
// The witness's data lives with result.json's other types.
pub use crate::run_folder::{Lost, OpRef, Witness};

/// The keys whose partition the linearizability check found illegal.
fn illegal_keys(result: &LinearizabilityResult) -> impl Iterator<Item = &str> {
    result
        .partitions
        .iter()
        .filter(|p| p.verdict == Verdict::Illegal)
        .filter_map(|p| p.key.as_deref())
}

/// Witnesses of an illegal linearizability result, one per illegal key at most, earliest first.
/// Their sentences give times from the workload's start (`clock`).
pub fn linearizable(
    history: &History,
    model: ModelKind,
    result: &LinearizabilityResult,
    faults: &[Window],
    clock: Clock,
) -> Vec<Witness> {
    if result.verdict != Verdict::Illegal {
        return Vec::new();
    }
    let mut found: Vec<Witness> = illegal_keys(result)
        .filter_map(|key| match model {
            ModelKind::Register | ModelKind::CasRegister | ModelKind::Kv => {
                stale_read(history, key)
            }
            ModelKind::Set => missing_adds(history, key, faults, clock),
            ModelKind::S3Object => {
                double_create(history, key, clock).or_else(|| torn_get(history, key, clock))
            }
        })
        .collect();
    // The first violation first: it leads the summary.
    found.sort_by_key(|w| w.seen_at().unwrap_or(u64::MAX));
    found
}

fn stale_read(history: &History, key: &str) -> Option<Witness> {
    let s = checker::stale::find_on_key(history, key)?;
    Some(Witness::StaleRead {
        key: key.to_string(),
        message: s.message,
        read: OpRef::of_summary(history, &s.read),
        wrote_value: s.wrote_value.map(|w| OpRef::of_summary(history, &w)),
        overwritten_by: OpRef::of_summary(history, &s.overwritten_by),
    })
}

fn missing_adds(history: &History, key: &str, faults: &[Window], clock: Clock) -> Option<Witness> {
    let m = checker::stale::missing_adds(history, key)?;
    let adds: Vec<Lost> = m
        .adds
        .iter()
        .map(|a| {
            let op = &history.ops[a.id];
            Lost {
                write: OpRef::of(op),
                fault: fault_that_lost(
                    faults,
                    op.complete_time.unwrap_or(0),
                    op.node.as_deref(),
                    Some(m.read.invoke_time),
                    clock,
                ),
            }
        })
        .collect();
    let message = match adds.first().and_then(|a| a.fault.as_deref()) {
        Some(f) => format!("{}, after {f}", m.message),
        None => m.message,
    };
    Some(Witness::MissingAdds {
        key: key.to_string(),
        message,
        read: OpRef::of_summary(history, &m.read),
        adds,
    })
}

/// Witnesses of the durable check: each lost write, laid on the fault that lost it.
pub fn durable(
    history: &History,
    result: &checker::durable::DurableResult,
    faults: &[Window],
    clock: Clock,
) -> Vec<Witness> {
    result
        .lost
        .iter()
        .map(|l| {
            let op = &history.ops[l.op.id];
            Witness::LostWrite {
                key: l.key.clone().unwrap_or_default(),
                value: l.value.clone(),
                write: OpRef::of(op),
                fault: fault_that_lost(
                    faults,
                    op.complete_time.unwrap_or(0),
                    op.node.as_deref(),
                    None,
                    clock,
                ),
            }
        })
        .collect()
}

/// For an illegal s3-object key: a get that returned one put's body with another put's ETag
/// (a read torn between two versions).
fn torn_get(history: &History, key: &str, clock: Clock) -> Option<Witness> {
    let ops: Vec<&Operation> = history
        .ops
        .iter()
        .filter(|op| op.key.as_deref() == Some(key) && op.status == Status::Ok)
        .collect();
    // body -> the ETag its acknowledged put returned.
    let etag_of: BTreeMap<String, &Value> = ops
        .iter()
        .filter(|op| op.f == "put" && op.output["etag"].is_string())
        .map(|op| (op.value["body"].to_string(), &op.output["etag"]))
        .collect();
    for get in ops.iter().filter(|op| op.f == "get" || op.f == "read") {
        let (body, etag) = (&get.output["body"], &get.output["etag"]);
        let Some(expected) = etag_of.get(&body.to_string()) else {
            continue;
        };
        if !etag.is_string() || etag == *expected {
            continue;
        }
        let other = etag_of
            .iter()
            .find(|(_, e)| **e == etag)
            .map(|(b, _)| format!(", the ETag of body {b}"))
            .unwrap_or_default();
        let message = format!(
            "a get on key {key} (process {}, at {}) returned body {body} with ETag {etag}{other}; \
             the put of {body} was acknowledged with ETag {expected}: the read is torn between two versions",
            get.process,
            clock.at(get.invoke_time),
        );
        return Some(Witness::TornGet {
            key: key.to_string(),
            message,
        });
    }
    None
}

/// For an illegal s3-object key: two creates (put with If-None-Match: *) that both succeeded
/// with no delete that could have come between them. The clearest witness of a store whose
/// conditional PUT is not atomic.
fn double_create(history: &History, key: &str, clock: Clock) -> Option<Witness> {
    let on_key = |op: &&Operation| op.key.as_deref() == Some(key);
    let mut creates: Vec<&Operation> = history
        .ops
        .iter()
        .filter(on_key)
        .filter(|op| {
            op.status == Status::Ok
                && (op.f == "put" || op.f == "write")
                && op.value.get("if_none_match").is_some_and(|v| !v.is_null())
        })
        .collect();
    creates.sort_by_key(|op| op.invoke_time);
    let deletes: Vec<&Operation> = history
        .ops
        .iter()
        .filter(on_key)
        .filter(|op| (op.f == "delete" || op.f == "del") && op.status != Status::Fail)
        .collect();
    // A delete could separate a and b if it may take effect after a began and before b ended;
    // an unknown delete (info, or never completed) may take effect any time later.
    let separable = |a: &Operation, b_done: u64| {
        deletes.iter().any(|d| {
            d.invoke_time < b_done
                && (d.status == Status::Info || d.complete_time.is_none_or(|c| c > a.invoke_time))
        })
    };
    for (i, a) in creates.iter().enumerate() {
        for b in &creates[i + 1..] {
            let (Some(a_done), Some(b_done)) = (a.complete_time, b.complete_time) else {
                continue;
            };
            // Either may have taken effect first when they overlap: a delete between them in
            // either order explains both.
            if separable(a, b_done) || separable(b, a_done) {
                continue;
            }
            let secs = |t: u64| clock.at(t);
            let body = |op: &Operation| op.value["body"].to_string();
            let message = format!(
                "more than one create succeeded on key {key}: process {} created body {} \
                 with If-None-Match: * ({} to {}) and process {} created body {} ({} to {}), \
                 with no delete that could come between them",
                a.process,
                body(a),
                secs(a.invoke_time),
                secs(a_done),
                b.process,
                body(b),
                secs(b.invoke_time),
                secs(b_done),
            );
            let create = |op: &Operation, done: u64| {
                json!({"process": op.process, "body": op.value["body"], "etag": op.output["etag"],
                       "invoked_s": clock.s(op.invoke_time), "completed_s": clock.s(done)})
            };
            return Some(Witness::DoubleCreate {
                key: key.to_string(),
                message,
                creates: vec![create(a, a_done), create(b, b_done)],
            });
        }
    }
    None
}
