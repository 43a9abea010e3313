//! `s3-object`: one object per key with etags and conditional puts.

use super::{bad, f_is, fp_u64, sop, view, Built, CheckError, Class, Interner, SeqModel};
use crate::history::{show, Operation, Status};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cond {
    None,
    IfNoneMatch,
    IfMatch(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum S3Effect {
    Applied,
    PreconditionFailed,
    Unknown,
}

#[derive(Clone, Copy, Debug)]
enum S3Op {
    /// `None`: the object was absent; otherwise body and etag (`ANY` if not reported).
    Get(Option<(u32, u32)>),
    Put {
        body: u32,
        etag: u32,
        cond: Cond,
        outcome: S3Effect,
    },
    Delete,
}

const ANY: u32 = u32::MAX;
const ABSENT: u64 = u64::MAX;

/// One S3 object per key, initially absent. The state is absent or (body, etag).
///
/// * `get` returns `nil` (absent) or `{"body": B, "etag": E}` (a bare string is a
///   body; a missing etag matches any): legal iff it equals the current state.
/// * `put` with value `B` or `{"body": B}` stores `B` under a new etag and returns
///   `{"etag": E}` (or the bare etag string; `nil` if unknown).
/// * `put` with `{"body": B, "if_none_match": "*"}` stores only if the object is
///   absent; `{"body": B, "if_match": E}` only if the current etag is `E`. A
///   precondition failure (completion value `{"status": 412}` or
///   `"precondition-failed"`, or a `fail` whose error mentions a precondition)
///   changes nothing and asserts that the condition did not hold.
/// * `delete` makes the object absent (deleting an absent object is fine).
///
/// An etag the client never learnt (an unknown outcome) matches any etag later.
pub struct S3Object {
    ops: Vec<S3Op>,
    /// The operations as completed, to restore after `set_pending`.
    completed: Vec<S3Op>,
    values: Interner,
}

fn field<'a>(v: &'a Value, names: &[&str]) -> Option<&'a Value> {
    let o = v.as_object()?;
    names.iter().find_map(|n| o.get(*n))
}

fn precondition_failed(op: &Operation, v: &Value) -> bool {
    let by_value = v.as_str().is_some_and(|s| s.contains("precondition"))
        || field(v, &["status"]).and_then(Value::as_u64) == Some(412)
        || field(v, &["error"])
            .and_then(Value::as_str)
            .is_some_and(|s| s.to_lowercase().contains("precondition"));
    let by_error = op
        .error
        .as_deref()
        .is_some_and(|e| e.to_lowercase().contains("precondition") || status_412(e));
    by_value || by_error
}

/// `412` standing alone in an error text (an HTTP status), not inside a longer number such as
/// the port of `http://127.0.0.1:41267/` in a refused connection's message.
fn status_412(e: &str) -> bool {
    let b = e.as_bytes();
    e.match_indices("412").any(|(i, _)| {
        (i == 0 || !b[i - 1].is_ascii_digit()) && b.get(i + 3).is_none_or(|c| !c.is_ascii_digit())
    })
}

impl S3Object {
    pub(crate) fn build(ops: &[&Operation], cut: usize) -> Result<Built<S3Object>, CheckError> {
        let mut values = Interner::default();
        let mut out = Vec::new();
        let mut sops = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            if op.invoke > cut {
                continue;
            }
            let (status, output) = view(op, cut);
            let f = op.f.as_str();
            let unknown = status == Status::Info;
            let mut failed = false;
            let s = if f_is(f, &["get", "read"]) {
                if status != Status::Ok {
                    continue;
                }
                let o = output;
                if o.is_null()
                    || o.as_str() == Some("absent")
                    || field(o, &["absent"]) == Some(&Value::Bool(true))
                {
                    S3Op::Get(None)
                } else if let Some(b) = field(o, &["body"]) {
                    let etag = match field(o, &["etag", "e_tag"]) {
                        Some(e) if !e.is_null() => values.id(e),
                        _ => ANY,
                    };
                    S3Op::Get(Some((values.id(b), etag)))
                } else {
                    S3Op::Get(Some((values.id(o), ANY)))
                }
            } else if f_is(f, &["put", "write"]) {
                let pre_failed = status != Status::Info && precondition_failed(op, output);
                failed = status == Status::Fail && !pre_failed;
                let v = &op.value;
                let body = values.id(field(v, &["body"]).unwrap_or(v));
                let cond = if field(v, &["if_none_match", "if-none-match", "IfNoneMatch"])
                    .is_some_and(|x| !x.is_null())
                {
                    Cond::IfNoneMatch
                } else if let Some(e) =
                    field(v, &["if_match", "if-match", "IfMatch"]).filter(|x| !x.is_null())
                {
                    Cond::IfMatch(values.id(e))
                } else {
                    Cond::None
                };
                let outcome = if pre_failed {
                    S3Effect::PreconditionFailed
                } else if unknown || failed {
                    S3Effect::Unknown
                } else {
                    S3Effect::Applied
                };
                if outcome == S3Effect::PreconditionFailed && cond == Cond::None {
                    return Err(bad(
                        op,
                        "precondition failure on a put without If-Match or If-None-Match",
                    ));
                }
                let etag = match (output, outcome) {
                    (_, S3Effect::Applied) => match field(output, &["etag", "e_tag"])
                        .or(output.as_str().map(|_| output))
                    {
                        Some(e) if !e.is_null() => values.id(e),
                        _ => ANY,
                    },
                    _ => ANY,
                };
                S3Op::Put {
                    body,
                    etag,
                    cond,
                    outcome,
                }
            } else if f_is(f, &["delete", "del"]) {
                failed = status == Status::Fail;
                S3Op::Delete
            } else {
                return Err(bad(
                    op,
                    format!(
                        "model s3-object has no operation {:?} (valid: get, put, delete)",
                        op.f
                    ),
                ));
            };
            // A precondition failure reported as `fail` still happened (as a no-op).
            sops.push(sop(i, op, unknown, failed));
            out.push(s);
        }
        Ok(Built {
            model: S3Object {
                completed: out.clone(),
                ops: out,
                values,
            },
            ops: sops,
            immediate: None,
        })
    }
}

fn pack(body: u32, etag: u32) -> u64 {
    ((body as u64) << 32) | etag as u64
}

impl SeqModel for S3Object {
    type State = u64;
    fn init(&mut self) -> u64 {
        ABSENT
    }
    fn step(&mut self, s: &u64, op: usize) -> Option<u64> {
        let s = *s;
        let cur = (s != ABSENT).then_some(((s >> 32) as u32, s as u32));
        match self.ops[op] {
            S3Op::Get(None) => (cur.is_none()).then_some(s),
            S3Op::Get(Some((b, e))) => {
                let (cb, ce) = cur?;
                (cb == b && (e == ANY || ce == ANY || ce == e)).then_some(s)
            }
            S3Op::Delete => Some(ABSENT),
            S3Op::Put {
                body,
                etag,
                cond,
                outcome,
            } => {
                // Whether the condition may hold and whether it may fail (an unknown
                // etag may be either).
                let (may_hold, may_fail) = match cond {
                    Cond::None => (true, false),
                    Cond::IfNoneMatch => (cur.is_none(), cur.is_some()),
                    Cond::IfMatch(m) => match cur {
                        None => (false, true),
                        Some((_, ce)) if ce == ANY => (true, true),
                        Some((_, ce)) => (ce == m, ce != m),
                    },
                };
                match outcome {
                    S3Effect::Applied | S3Effect::Unknown => may_hold.then_some(pack(body, etag)),
                    S3Effect::PreconditionFailed => may_fail.then_some(s),
                }
            }
        }
    }
    fn class(&self, op: usize) -> Class {
        match self.ops[op] {
            S3Op::Get(_)
            | S3Op::Put {
                outcome: S3Effect::PreconditionFailed,
                ..
            } => Class::Observe,
            _ => Class::Reset,
        }
    }
    fn compatible(&mut self, s: &u64, op: usize) -> bool {
        // No operation only grows the state: the observation must hold now.
        self.step(s, op).is_some()
    }
    fn explains(&self, p: usize, g: usize) -> bool {
        match (self.ops[p], self.ops[g]) {
            (S3Op::Delete, S3Op::Get(Some(_))) => false,
            (S3Op::Put { .. }, S3Op::Get(None)) => false,
            (S3Op::Put { body, etag, .. }, S3Op::Get(Some((b, e)))) => {
                body == b && (e == ANY || etag == ANY || e == etag)
            }
            _ => true,
        }
    }
    fn pending_differs(&self, op: usize) -> bool {
        matches!(self.completed[op], S3Op::Put { outcome, .. } if outcome != S3Effect::Unknown)
    }
    fn set_pending(&mut self, op: usize, pending: bool) {
        self.ops[op] = match (self.completed[op], pending) {
            (S3Op::Put { body, cond, .. }, true) => S3Op::Put {
                body,
                etag: ANY,
                cond,
                outcome: S3Effect::Unknown,
            },
            (o, _) => o,
        };
    }
    fn fingerprint(&self, s: &u64) -> (u64, u64) {
        fp_u64(*s)
    }
    fn show_state(&self, s: &u64) -> String {
        if *s == ABSENT {
            return "absent".into();
        }
        let (b, e) = ((*s >> 32) as u32, *s as u32);
        let etag = if e == ANY {
            "?".to_string()
        } else {
            show(&self.values.values[e as usize])
        };
        format!(
            "{{body {}, etag {}}}",
            show(&self.values.values[b as usize]),
            etag
        )
    }
    fn needs(&self, op: usize) -> String {
        match self.ops[op] {
            S3Op::Get(None) => "the object to be absent".into(),
            S3Op::Get(Some((b, e))) => format!(
                "body {} (etag {})",
                show(&self.values.values[b as usize]),
                if e == ANY {
                    "any".into()
                } else {
                    show(&self.values.values[e as usize])
                }
            ),
            S3Op::Delete => "nothing (always legal)".into(),
            S3Op::Put { cond, outcome, .. } => match (cond, outcome) {
                (Cond::None, _) => "nothing (always legal)".into(),
                (Cond::IfNoneMatch, S3Effect::PreconditionFailed) => "the object to exist".into(),
                (Cond::IfNoneMatch, _) => "the object to be absent".into(),
                (Cond::IfMatch(m), S3Effect::PreconditionFailed) => format!(
                    "an etag other than {}",
                    show(&self.values.values[m as usize])
                ),
                (Cond::IfMatch(m), _) => format!("etag {}", show(&self.values.values[m as usize])),
            },
        }
    }
}

#[cfg(test)]
mod precondition_tests {
    use super::status_412;

    #[test]
    fn a_412_inside_a_port_number_is_not_a_status() {
        assert!(status_412("HTTP 412"));
        assert!(status_412("412 Precondition"));
        assert!(!status_412(
            "error sending request for url (http://127.0.0.1:41267/chaos/o0): Connection refused"
        ));
        assert!(!status_412("took 14125 ms"));
    }
}
