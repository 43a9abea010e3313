//! Witnesses a person can read at a glance, found without search: a stale read in a register
//! history with unique written values ("a read on k3 returned 17 after 23 had overwritten it"),
//! and acknowledged adds a set's last read no longer has.
//!
//! A read R that returned v is stale when some write W' of another value was acknowledged before
//! R began, and W' itself began after the write of v was acknowledged: v was certainly
//! overwritten before R started. (A read of nil is stale once any write was acknowledged before
//! it began.) Each such R alone makes the history non-linearizable, so the witness is sound; it
//! is not complete: the search still decides the verdict.
//!
//! Writes are `write v`, `put v` and `cas [old, v]` that completed ok or info; reads are `read`
//! and `get`. Values must be unique per key (a value written twice is not used as evidence).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::history::{show, History, Operation, Status};

/// A read that returned an overwritten value, with the writes that prove it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StaleRead {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// One sentence for people.
    pub message: String,
    /// The stale read.
    pub read: Operation,
    /// The write of the value it returned (absent for a read of the initial nil).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrote_value: Option<Operation>,
    /// A write acknowledged before the read began, and begun after the value's write ended.
    pub overwritten_by: Operation,
}

fn written_value(op: &Operation) -> Option<&Value> {
    match op.f.as_str() {
        "write" | "put" => Some(&op.value),
        "cas" => op.value.get(1),
        _ => None,
    }
}

fn is_read(op: &Operation) -> bool {
    op.f.ends_with("read") || op.f == "get"
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

/// The earliest stale read of one key, if any.
pub fn find_on_key(history: &History, key: &str) -> Option<StaleRead> {
    let ops: Vec<&Operation> = history
        .ops
        .iter()
        .filter(|op| op.key.as_deref() == Some(key))
        .collect();
    find_in_key(Some(key), &ops)
}

/// Writes that may have taken effect, by the value they wrote (a value written twice is no
/// evidence).
fn writers_by_value<'a>(ops: &[&'a Operation]) -> HashMap<String, Vec<&'a Operation>> {
    let mut writers: HashMap<String, Vec<&Operation>> = HashMap::new();
    for w in ops.iter().filter(|op| op.status != Status::Fail) {
        if let Some(v) = written_value(w) {
            writers.entry(v.to_string()).or_default().push(w);
        }
    }
    writers
}

/// Writes acknowledged ok, with a completion time.
fn acknowledged_writes<'a>(ops: &[&'a Operation]) -> Vec<&'a Operation> {
    ops.iter()
        .copied()
        .filter(|w| {
            w.status == Status::Ok && w.complete_time.is_some() && written_value(w).is_some()
        })
        .collect()
}

fn find_in_key(key: Option<&str>, ops: &[&Operation]) -> Option<StaleRead> {
    let writers = writers_by_value(ops);
    // Acknowledged writes by completion time, for "acknowledged before the read began", and
    // among each prefix the one invoked last: the likeliest to have begun after the read
    // value's write ended, and the closest overwrite to name.
    let mut acked = acknowledged_writes(ops);
    acked.sort_by_key(|w| w.complete_time);
    let mut latest: Vec<&Operation> = Vec::with_capacity(acked.len());
    for w in &acked {
        let keep = latest.last().filter(|l| l.invoke_time > w.invoke_time);
        latest.push(keep.copied().unwrap_or(w));
    }

    let mut reads: Vec<&Operation> = ops
        .iter()
        .copied()
        .filter(|op| op.status == Status::Ok && is_read(op))
        .collect();
    reads.sort_by_key(|r| r.invoke_time);
    for read in reads {
        let value = &read.output;
        // The initial nil precedes every write; a written value ends with its write.
        let origin = if value.is_null() {
            None
        } else {
            match writers.get(&value.to_string()).map(Vec::as_slice) {
                // The origin must be certain and acknowledged to bound the overwrite.
                Some([w]) if w.status == Status::Ok => Some(*w),
                _ => continue,
            }
        };
        let before =
            acked.partition_point(|w| w.complete_time.unwrap_or(u64::MAX) < read.invoke_time);
        let Some(w) = before.checked_sub(1).map(|i| latest[i]) else {
            continue;
        };
        // A read of nil has no origin: any earlier acknowledged write will do (even one
        // invoked at time 0). Values are unique, so a later write has another value.
        let overwrites = match origin {
            None => true,
            Some(o) => w.invoke_time > o.complete_time.unwrap_or(u64::MAX),
        };
        if !overwrites {
            continue;
        }
        let sum = Operation::clone(read);
        let key_text = key.map(|k| format!("key {k}: ")).unwrap_or_default();
        let message = format!(
            "{key_text}a read returned {} ({}) after {} had overwritten it ({}, acknowledged {:.3} s before the read began)",
            show(value),
            sum.locate(),
            show(written_value(w).unwrap_or(&Value::Null)),
            Operation::clone(w).locate(),
            (read.invoke_time - w.complete_time.unwrap_or(0)) as f64 / 1e9,
        );
        return Some(StaleRead {
            key: key.map(str::to_string),
            message,
            read: sum,
            wrote_value: origin.cloned(),
            overwritten_by: Operation::clone(w),
        });
    }
    None
}

/// Acknowledged adds to a set that its last read no longer has.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MissingAdds {
    pub key: Option<String>,
    /// One sentence for people.
    pub message: String,
    /// The last ok read of the set.
    pub read: Operation,
    /// Adds acknowledged before that read began whose element it does not have.
    pub adds: Vec<Operation>,
}

/// For a set key (`add x`, `read` -> array): the acknowledged adds missing from the last read
/// that returned the set. Sets only grow, so each is lost; none is left out by concurrency,
/// since every one was acknowledged before the read began.
pub fn missing_adds(history: &History, key: &str) -> Option<MissingAdds> {
    let ops: Vec<&Operation> = history
        .ops
        .iter()
        .filter(|op| op.key.as_deref() == Some(key))
        .collect();
    let read = ops
        .iter()
        .filter(|op| op.status == Status::Ok && is_read(op) && op.output.is_array())
        .max_by_key(|op| op.invoke_time)?;
    let seen: std::collections::HashSet<String> = read
        .output
        .as_array()
        .into_iter()
        .flatten()
        .map(Value::to_string)
        .collect();
    let adds: Vec<Operation> = ops
        .iter()
        .filter(|op| {
            op.status == Status::Ok
                && op.f == "add"
                && op.complete_time.is_some_and(|c| c < read.invoke_time)
                && !seen.contains(&op.value.to_string())
        })
        .map(|op| Operation::clone(op))
        .collect();
    let first = adds.first()?;
    let message = format!(
        "key {key}: {} acknowledged add{} missing from the last read ({}); the first, of {}, was acknowledged {:.3} s before it began",
        adds.len(),
        if adds.len() == 1 { " is" } else { "s are" },
        Operation::clone(read).locate(),
        show(&first.value),
        (read.invoke_time - first.complete_time.unwrap_or(0)) as f64 / 1e9,
    );
    Some(MissingAdds {
        key: Some(key.to_string()),
        message,
        read: Operation::clone(read),
        adds,
    })
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

    #[test]
    fn the_closest_overwrite_is_named() {
        // 2 and 3 both overwrote 1 before the read; 3 was invoked last.
        let h = history(&[
            (0, Invoke, "write", json!(1)),
            (0, Done, "write", json!(1)),
            (1, Invoke, "write", json!(2)),
            (1, Done, "write", json!(2)),
            (1, Invoke, "write", json!(3)),
            (1, Done, "write", json!(3)),
            (2, Invoke, "read", Value::Null),
            (2, Done, "read", json!(1)),
        ]);
        assert_eq!(find(&h)[0].overwritten_by.value, json!(3));
    }

    #[test]
    fn acknowledged_adds_missing_from_the_last_read_are_named() {
        let h = history(&[
            (0, Invoke, "add", json!(1)),
            (0, Done, "add", json!(1)),
            (1, Invoke, "add", json!(2)),
            (2, Invoke, "read", Value::Null),
            (1, Done, "add", json!(2)),
            (2, Done, "read", json!([1])),
            (0, Invoke, "add", json!(3)),
            (0, Done, "add", json!(3)),
            (2, Invoke, "read", Value::Null),
            (2, Done, "read", json!([2])),
        ]);
        let m = missing_adds(&h, "k").unwrap();
        let lost: Vec<&Value> = m.adds.iter().map(|a| &a.value).collect();
        assert_eq!(lost, [&json!(1), &json!(3)]);
        assert_eq!(m.read.output, json!([2]));
        assert!(
            m.message.contains("2 acknowledged adds are missing"),
            "{}",
            m.message
        );
    }

    #[test]
    fn an_add_concurrent_with_the_read_is_not_missing() {
        let h = history(&[
            (0, Invoke, "add", json!(1)),
            (2, Invoke, "read", Value::Null),
            (0, Done, "add", json!(1)),
            (2, Done, "read", json!([])),
        ]);
        assert!(missing_adds(&h, "k").is_none());
    }
}

/// How stale a mode's reads were, against the bound it documents: for every read that returned
/// a value already overwritten (as [`find`] defines it), how long before the read began the
/// earliest certain overwrite had been acknowledged. A lower bound on the node's real lag, so a
/// read counted over the bound was over it. Follower reads with a lease (Ozone's LOCAL_LEASE)
/// are allowed to be stale, not staler than their lease.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Staleness {
    pub verdict: crate::Verdict,
    /// The bound, in nanoseconds.
    pub bound_ns: u64,
    /// Reads that completed ok with a value the measure can place (unique values, an
    /// acknowledged origin).
    pub reads_checked: usize,
    pub stale: usize,
    pub over_bound: usize,
    /// Per node that answered reads: reads checked, stale, over the bound, the stalest.
    pub nodes: std::collections::BTreeMap<String, NodeStaleness>,
    /// The stalest read of all, with the write that had overwritten its value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalest: Option<StaleRead>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeStaleness {
    pub reads_checked: usize,
    pub stale: usize,
    pub over_bound: usize,
    pub max_ns: u64,
}

/// Measures every read's staleness; `illegal` when one was staler than `bound_ns`, `unknown`
/// when no read could be measured.
pub fn staleness(history: &History, bound_ns: u64) -> Staleness {
    let mut out = Staleness {
        verdict: crate::Verdict::Ok,
        bound_ns,
        reads_checked: 0,
        stale: 0,
        over_bound: 0,
        nodes: Default::default(),
        stalest: None,
    };
    let mut stalest: Option<(u64, &Operation, &Operation, Option<&Operation>)> = None;
    for (_, ops) in history.by_key() {
        for found in stale_reads_in_key(&ops, &mut out, bound_ns) {
            if stalest.is_none_or(|(age, ..)| found.0 > age) {
                stalest = Some(found);
            }
        }
    }
    out.stalest = stalest.map(|(age, read, overwrite, origin)| {
        let sum = Operation::clone(read);
        StaleRead {
            key: read.key.clone(),
            message: format!(
                "{}a read{} returned {} ({}) {:.3} s after {} had overwritten it ({})",
                read.key
                    .as_deref()
                    .map(|k| format!("key {k}: "))
                    .unwrap_or_default(),
                read.node
                    .as_deref()
                    .map(|n| format!(" served by {n}"))
                    .unwrap_or_default(),
                show(&read.output),
                sum.locate(),
                age as f64 / 1e9,
                show(written_value(overwrite).unwrap_or(&Value::Null)),
                Operation::clone(overwrite).locate(),
            ),
            read: sum,
            wrote_value: origin.cloned(),
            overwritten_by: Operation::clone(overwrite),
        }
    });
    out.verdict = if out.over_bound > 0 {
        crate::Verdict::Illegal
    } else if out.reads_checked == 0 {
        crate::Verdict::Unknown
    } else {
        crate::Verdict::Ok
    };
    out
}

/// The stale reads of one key with their age and the earliest overwrite that proves them,
/// counting every measurable read into `tally`.
fn stale_reads_in_key<'a>(
    ops: &[&'a Operation],
    tally: &mut Staleness,
    bound_ns: u64,
) -> Vec<(u64, &'a Operation, &'a Operation, Option<&'a Operation>)> {
    let writers = writers_by_value(ops);
    // Acknowledged writes by invocation, with the earliest-acknowledged one of each suffix:
    // the first certain overwrite of a value is the earliest acknowledged write invoked after
    // that value's write was acknowledged.
    let mut acked = acknowledged_writes(ops);
    acked.sort_by_key(|w| w.invoke_time);
    let mut first_acked: Vec<Option<&Operation>> = vec![None; acked.len() + 1];
    for i in (0..acked.len()).rev() {
        let here = acked[i];
        first_acked[i] = match first_acked[i + 1] {
            Some(later) if later.complete_time <= here.complete_time => Some(later),
            _ => Some(here),
        };
    }
    let mut found = Vec::new();
    for read in ops
        .iter()
        .copied()
        .filter(|op| op.status == Status::Ok && is_read(op))
    {
        let origin = if read.output.is_null() {
            None
        } else {
            match writers.get(&read.output.to_string()).map(Vec::as_slice) {
                Some([w]) if w.status == Status::Ok => Some(*w),
                _ => continue,
            }
        };
        let from = match origin {
            None => 0,
            Some(o) => {
                let done = o.complete_time.unwrap_or(u64::MAX);
                acked.partition_point(|w| w.invoke_time <= done)
            }
        };
        let node = tally
            .nodes
            .entry(read.node.clone().unwrap_or_default())
            .or_default();
        tally.reads_checked += 1;
        node.reads_checked += 1;
        let Some(overwrite) = first_acked[from] else {
            continue;
        };
        let acknowledged = overwrite.complete_time.unwrap_or(u64::MAX);
        if acknowledged >= read.invoke_time {
            continue;
        }
        let age = read.invoke_time - acknowledged;
        tally.stale += 1;
        node.stale += 1;
        node.max_ns = node.max_ns.max(age);
        if age > bound_ns {
            tally.over_bound += 1;
            node.over_bound += 1;
        }
        found.push((age, read, overwrite, origin));
    }
    found
}

impl Staleness {
    /// One line for the CLI and JUnit.
    pub fn text(&self) -> String {
        let bound = self.bound_ns as f64 / 1e9;
        if self.reads_checked == 0 {
            return "staleness: no read could be measured (reads of unique values with an acknowledged write)".into();
        }
        let per_node: Vec<String> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.stale > 0)
            .map(|(node, n)| {
                let name = if node.is_empty() { "?" } else { node };
                format!(
                    "{name} {} (at most {:.3} s)",
                    n.stale,
                    n.max_ns as f64 / 1e9
                )
            })
            .collect();
        let mut text = format!(
            "{} of {} reads stale{}; {} over the bound of {bound} s",
            self.stale,
            self.reads_checked,
            if per_node.is_empty() {
                String::new()
            } else {
                format!(": {}", per_node.join(", "))
            },
            self.over_bound,
        );
        if let Some(s) = self.stalest.as_ref().filter(|_| self.over_bound > 0) {
            text.push_str(&format!("; the stalest: {}", s.message));
        }
        text
    }
}
