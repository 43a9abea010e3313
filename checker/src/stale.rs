//! Stale reads in a register history with unique written values: a witness a person can read at
//! a glance ("a read on k3 returned 17 after 23 had overwritten it"), found without search.
//!
//! A read R that returned v is stale when some write W' of another value was acknowledged before
//! R began, and W' itself began after the write of v was acknowledged: v was certainly
//! overwritten before R started. (A read of nil is stale once any write was acknowledged before
//! it began.) Each such R alone makes the history non-linearizable, so the witness is sound; it
//! is not complete: the search still decides the verdict.
//!
//! Writes are `write v` and `cas [old, v]` that completed ok or info; values must be unique per
//! key (a value written twice is not used as evidence).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::history::{show, History, Operation, Status};
use crate::linearizable::OpSummary;

/// A read that returned an overwritten value, with the writes that prove it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StaleRead {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// One sentence for people.
    pub message: String,
    /// The stale read.
    pub read: OpSummary,
    /// The write of the value it returned (absent for a read of the initial nil).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrote_value: Option<OpSummary>,
    /// A write acknowledged before the read began, and begun after the value's write ended.
    pub overwritten_by: OpSummary,
}

fn written_value(op: &Operation) -> Option<&Value> {
    match op.f.as_str() {
        "write" => Some(&op.value),
        "cas" => op.value.get(1),
        _ => None,
    }
}

/// The earliest stale read of each key, earliest first.
pub fn find(history: &History) -> Vec<StaleRead> {
    let mut found = Vec::new();
    for (key, ops) in history.by_key() {
        if let Some(stale) = find_in_key(key.as_deref(), &ops) {
            found.push(stale);
        }
    }
    found.sort_by_key(|s| s.read.invoke_time);
    found
}

fn find_in_key(key: Option<&str>, ops: &[&Operation]) -> Option<StaleRead> {
    // Writes that may have taken effect, and how often each value was written.
    let writes: Vec<&Operation> = ops
        .iter()
        .copied()
        .filter(|op| op.status != Status::Fail && written_value(op).is_some())
        .collect();
    let mut writers: HashMap<String, Vec<&Operation>> = HashMap::new();
    for w in &writes {
        if let Some(v) = written_value(w) {
            writers.entry(v.to_string()).or_default().push(w);
        }
    }
    // Acknowledged writes by completion time, for "acknowledged before the read began".
    let mut acked: Vec<&Operation> = writes
        .iter()
        .copied()
        .filter(|w| w.status == Status::Ok && w.complete_time.is_some())
        .collect();
    acked.sort_by_key(|w| w.complete_time);

    let mut reads: Vec<&Operation> = ops
        .iter()
        .copied()
        .filter(|op| op.status == Status::Ok && op.f.ends_with("read"))
        .collect();
    reads.sort_by_key(|r| r.invoke_time);
    for read in reads {
        let value = &read.output;
        // The initial nil precedes every write; a written value ends with its write.
        let (origin, origin_end) = if value.is_null() {
            (None, 0)
        } else {
            match writers.get(&value.to_string()).map(Vec::as_slice) {
                // The origin must be certain and acknowledged to bound the overwrite.
                Some([w]) if w.status == Status::Ok => {
                    (Some(*w), w.complete_time.unwrap_or(u64::MAX))
                }
                _ => continue,
            }
        };
        let overwriter = acked.iter().find(|w| {
            let done = w.complete_time.unwrap_or(u64::MAX);
            done < read.invoke_time
                // A read of nil has no origin: any earlier acknowledged write will do
                // (even one invoked at time 0).
                && (origin.is_none() || w.invoke_time > origin_end)
                && written_value(w).is_some_and(|v| v != value)
        });
        if let Some(w) = overwriter {
            let sum = OpSummary::of(read);
            let key_text = key.map(|k| format!("key {k}: ")).unwrap_or_default();
            let message = format!(
                "{key_text}a read returned {} ({}) after {} had overwritten it ({}, acknowledged {:.3} s before the read began)",
                show(value),
                sum.locate(),
                show(written_value(w).unwrap_or(&Value::Null)),
                OpSummary::of(w).locate(),
                (read.invoke_time - w.complete_time.unwrap_or(0)) as f64 / 1e9,
            );
            return Some(StaleRead {
                key: key.map(str::to_string),
                message,
                read: sum,
                wrote_value: origin.map(OpSummary::of),
                overwritten_by: OpSummary::of(w),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Event, EventType};
    use serde_json::json;

    fn history(lines: &[(u64, EventType, &str, Value)]) -> History {
        let events = lines
            .iter()
            .enumerate()
            .map(|(i, (p, t, f, v))| {
                let mut e = Event::new(*p, *t, f, Some("k"), v.clone());
                e.time = i as u64 * 10;
                e
            })
            .collect();
        History::from_events(events).unwrap()
    }

    use EventType::{Invoke, Ok as Done};

    #[test]
    fn a_read_of_an_overwritten_value_is_named() {
        let h = history(&[
            (0, Invoke, "write", json!(1)),
            (0, Done, "write", json!(1)),
            (1, Invoke, "write", json!(2)),
            (1, Done, "write", json!(2)),
            (2, Invoke, "read", Value::Null),
            (2, Done, "read", json!(1)),
        ]);
        let found = find(&h);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].read.f, "read");
        assert_eq!(found[0].read.output, json!(1));
        assert_eq!(found[0].overwritten_by.value, json!(2));
        assert!(
            found[0].message.contains("returned 1"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn concurrent_writes_are_not_evidence() {
        // write 2 overlaps the read: reading 1 is fine.
        let h = history(&[
            (0, Invoke, "write", json!(1)),
            (0, Done, "write", json!(1)),
            (1, Invoke, "write", json!(2)),
            (2, Invoke, "read", Value::Null),
            (1, Done, "write", json!(2)),
            (2, Done, "read", json!(1)),
        ]);
        assert!(find(&h).is_empty());
    }

    #[test]
    fn a_read_of_nil_after_an_acknowledged_write_is_stale() {
        let h = history(&[
            (0, Invoke, "cas", json!([null, 5])),
            (0, Done, "cas", json!([null, 5])),
            (1, Invoke, "read", Value::Null),
            (1, Done, "read", Value::Null),
        ]);
        let found = find(&h);
        assert_eq!(found.len(), 1);
        assert!(found[0].wrote_value.is_none());
    }
}
