//! Durability: every acknowledged write is present in the final reads.
//!
//! Writes are operations whose `f` is `write`, `put`, `add`, `append` or `close` (a file
//! closed at a length: the length must survive); their invocation value is what must survive. Final reads are `ok` operations whose
//! `f` is `final-read` (or `final_read`), one or more per key; their value is a
//! JSON array of the values present (a single value counts as a one-element
//! array; for `append` writes a string read counts a write present when it
//! contains the appended string). A key with acknowledged writes but no final
//! read cannot be judged and is listed.

use crate::history::{show, History, Operation, Status};
use crate::Verdict;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// An acknowledged write missing from the final read of its key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LostWrite {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub value: Value,
    pub op: Operation,
}

/// A value in a final read that no write (even an unacknowledged one) wrote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unexpected {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DurableResult {
    pub verdict: Verdict,
    /// Keys that had a final read.
    pub keys_checked: usize,
    /// Acknowledged writes on those keys.
    pub acknowledged: usize,
    /// Writes with an unknown outcome that turned out present.
    pub recovered: usize,
    pub lost: Vec<LostWrite>,
    pub unexpected: Vec<Unexpected>,
    /// Keys with acknowledged writes but no final read.
    pub unread_keys: Vec<Option<String>>,
}

const WRITES: &[&str] = &["write", "put", "add", "append", "close"];
const FINAL_READS: &[&str] = &["final-read", "final_read"];

fn elements(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Null => Vec::new(),
        other => vec![other.clone()],
    }
}

fn present(read: &[Value], write: &Operation) -> bool {
    read.iter().any(|r| {
        r == &write.value
            || (write.f == "append"
                && matches!((r, &write.value), (Value::String(r), Value::String(w)) if !w.is_empty() && r.contains(w.as_str())))
    })
}

/// Checks that acknowledged writes survived into the final reads.
pub fn check(history: &History) -> DurableResult {
    let mut writes: BTreeMap<Option<String>, Vec<&Operation>> = BTreeMap::new();
    let mut finals: BTreeMap<Option<String>, Vec<Value>> = BTreeMap::new();
    for op in &history.ops {
        if WRITES.contains(&op.f.as_str()) && op.status != Status::Fail {
            writes.entry(op.key.clone()).or_default().push(op);
        } else if FINAL_READS.contains(&op.f.as_str()) && op.status == Status::Ok {
            finals
                .entry(op.key.clone())
                .or_default()
                .extend(elements(&op.output));
        }
    }
    let mut r = DurableResult {
        verdict: Verdict::Ok,
        keys_checked: finals.len(),
        acknowledged: 0,
        recovered: 0,
        lost: Vec::new(),
        unexpected: Vec::new(),
        unread_keys: Vec::new(),
    };
    for (key, ws) in &writes {
        let Some(read) = finals.get(key) else {
            if ws.iter().any(|w| w.status == Status::Ok) {
                r.unread_keys.push(key.clone());
            }
            continue;
        };
        for w in ws {
            let here = present(read, w);
            match w.status {
                Status::Ok => {
                    r.acknowledged += 1;
                    if !here {
                        r.lost.push(LostWrite {
                            key: key.clone(),
                            value: w.value.clone(),
                            op: Operation::clone(w),
                        });
                    }
                }
                _ => r.recovered += here as usize,
            }
        }
    }
    for (key, read) in &finals {
        let ws = writes.get(key).map(Vec::as_slice).unwrap_or(&[]);
        for v in read {
            let written = ws.iter().any(|w| {
                &w.value == v
                    || (w.f == "append"
                        && matches!((v, &w.value), (Value::String(r), Value::String(x)) if r.contains(x.as_str())))
            });
            if !written && !r.unexpected.iter().any(|u| &u.key == key && &u.value == v) {
                r.unexpected.push(Unexpected {
                    key: key.clone(),
                    value: v.clone(),
                });
            }
        }
    }
    r.verdict = if !r.lost.is_empty() || !r.unexpected.is_empty() {
        Verdict::Illegal
    } else if finals.is_empty() && writes.values().flatten().any(|w| w.status == Status::Ok) {
        Verdict::Unknown
    } else {
        Verdict::Ok
    };
    r
}

impl DurableResult {
    /// A short text for the CLI and JUnit.
    pub fn text(&self) -> String {
        match self.verdict {
            Verdict::Ok => format!(
                "durable: all {} acknowledged writes on {} keys are present",
                self.acknowledged, self.keys_checked
            ),
            Verdict::Unknown => "durable: undecided, the history has no final reads".to_string(),
            Verdict::Illegal => {
                let mut parts = Vec::new();
                if !self.lost.is_empty() {
                    let shown: Vec<String> = self
                        .lost
                        .iter()
                        .take(5)
                        .map(|l| {
                            let k = l
                                .key
                                .as_deref()
                                .map(|k| format!("key {k}: "))
                                .unwrap_or_default();
                            format!("{k}{} ({})", show(&l.value), l.op.locate())
                        })
                        .collect();
                    parts.push(format!(
                        "{} of {} acknowledged writes lost: {}{}",
                        self.lost.len(),
                        self.acknowledged,
                        shown.join(", "),
                        if self.lost.len() > 5 { ", ..." } else { "" }
                    ));
                }
                if !self.unexpected.is_empty() {
                    let shown: Vec<String> = self
                        .unexpected
                        .iter()
                        .take(5)
                        .map(|u| show(&u.value))
                        .collect();
                    parts.push(format!(
                        "{} values read that nobody wrote: {}",
                        self.unexpected.len(),
                        shown.join(", ")
                    ));
                }
                format!("not durable: {}", parts.join("; "))
            }
        }
    }
}
