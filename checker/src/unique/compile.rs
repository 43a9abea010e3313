//! Compiles a partition once per model: operations, the node each reads or writes, and the
//! path behind each kv get or set read. `Err`: a precondition of the procedure fails.

use super::{uop, Compiled, Kind, INIT, NONE};
use crate::fx::FxHashMap as HashMap;
use crate::history::{Operation, Status};
use crate::model::{f_is, text_of, ModelKind};
use serde_json::Value;
use std::borrow::Cow;

/// Interns register values: non-negative integers directly, anything else by its JSON text.
#[derive(Default)]
struct Values {
    ints: HashMap<u64, u32>,
    other: HashMap<String, u32>,
    values: Vec<Value>,
}

impl Values {
    fn id(&mut self, v: &Value) -> u32 {
        if v.is_null() {
            return INIT;
        }
        let next = self.values.len() as u32;
        let id = match v.as_u64() {
            Some(n) => *self.ints.entry(n).or_insert(next),
            None => *self.other.entry(v.to_string()).or_insert(next),
        };
        if id == next {
            self.values.push(v.clone());
        }
        id
    }
}

pub(super) fn compile_register<'a>(
    ops: &[&'a Operation],
    cas: bool,
) -> Result<Compiled<'a>, String> {
    let mut values = Values::default();
    values.values.push(Value::Null);
    let mut out = Vec::with_capacity(ops.len());
    let mut writer: Vec<u32> = vec![NONE];
    let set_writer = |writer: &mut Vec<u32>, node: u32, op: u32| -> Result<(), String> {
        if node == INIT {
            return Err("a write of nil, the initial value".into());
        }
        if writer.len() <= node as usize {
            writer.resize(node as usize + 1, NONE);
        }
        if writer[node as usize] != NONE {
            return Err("a value written twice".into());
        }
        writer[node as usize] = op;
        Ok(())
    };
    for (i, op) in ops.iter().enumerate() {
        let f = op.f.as_str();
        if f_is(f, &["read", "r", "get"]) {
            if op.status == Status::Ok {
                let node = values.id(&op.output);
                out.push(uop(i, op, Kind::Read, node, NONE));
            }
        } else if f_is(f, &["write", "w", "put"]) {
            let node = values.id(&op.value);
            set_writer(&mut writer, node, out.len() as u32)?;
            out.push(uop(i, op, Kind::Write, node, NONE));
        } else if cas && f_is(f, &["cas", "compare-and-set"]) {
            let Value::Array(a) = &op.value else {
                return Err("a malformed cas".into());
            };
            if a.len() != 2 {
                return Err("a malformed cas".into());
            }
            let from = values.id(&a[0]);
            let node = values.id(&a[1]);
            set_writer(&mut writer, node, out.len() as u32)?;
            out.push(uop(i, op, Kind::Cas, node, from));
        } else {
            return Err(format!("operation {:?}", op.f));
        }
    }
    writer.resize(values.values.len(), NONE);
    Ok(Compiled {
        model: if cas {
            ModelKind::CasRegister
        } else {
            ModelKind::Register
        },
        ops: out,
        writer,
        values: values.values,
        text: Vec::new(),
        paths: Vec::new(),
        pieces: Vec::new(),
    })
}

pub(super) fn compile_kv<'a>(ops: &[&'a Operation]) -> Result<Compiled<'a>, String> {
    let mut text: Vec<Cow<'a, str>> = vec![Cow::Borrowed("")];
    let mut writer: Vec<u32> = vec![NONE];
    let mut out = Vec::with_capacity(ops.len());
    // Puts and appends first: they define the pieces.
    let mut kinds = Vec::with_capacity(ops.len());
    for op in ops {
        let f = op.f.as_str();
        let k = if f_is(f, &["get", "read", "r"]) {
            0
        } else if f_is(f, &["put", "write", "w"]) {
            1
        } else if f_is(f, &["append"]) {
            2
        } else {
            return Err(format!("operation {:?}", op.f));
        };
        kinds.push(k);
        if k != 0 {
            let t = text_of(&op.value);
            if t.is_empty() {
                return Err("an empty put or append".into());
            }
            text.push(t);
            writer.push(NONE);
        }
    }
    let mut by_text: HashMap<&[u8], u32> = HashMap::default();
    by_text.reserve(text.len());
    for (n, t) in text.iter().enumerate().skip(1) {
        if by_text.insert(t.as_bytes(), n as u32).is_some() {
            return Err("a value written twice".into());
        }
    }
    {
        let mut sorted: Vec<&str> = text.iter().skip(1).map(|t| t.as_ref()).collect();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[1].starts_with(w[0])) {
            return Err("a put or append that is a prefix of another".into());
        }
    }
    let mut is_put = vec![false];
    is_put.extend(kinds.iter().filter(|&&k| k != 0).map(|&k| k == 1));
    let mut lengths: Vec<usize> = text.iter().skip(1).map(|t| t.len()).collect();
    lengths.sort_unstable();
    lengths.dedup();
    let mut paths: Vec<(u32, u32)> = Vec::new();
    let mut pieces: Vec<u32> = Vec::new();
    let mut seen: HashMap<&'a str, u32> = HashMap::default();
    let mut node = 0u32;
    for (i, op) in ops.iter().enumerate() {
        match kinds[i] {
            0 => {
                if op.status != Status::Ok {
                    continue;
                }
                let s = text_of(&op.output);
                let cached = match &s {
                    Cow::Borrowed(b) => seen.get(b).copied(),
                    Cow::Owned(_) => None,
                };
                let p = match cached {
                    Some(p) => p,
                    None => {
                        let p = split(&s, &by_text, &lengths, &mut pieces, &is_put)
                            .map(|(start, len)| {
                                paths.push((start, len));
                                paths.len() as u32 - 1
                            })
                            .unwrap_or(NONE);
                        if let Cow::Borrowed(b) = s {
                            seen.insert(b, p);
                        }
                        p
                    }
                };
                let last = match p {
                    NONE => NONE,
                    p => {
                        let (s, l) = paths[p as usize];
                        if l == 0 {
                            INIT
                        } else {
                            pieces[(s + l - 1) as usize]
                        }
                    }
                };
                out.push(uop(i, op, Kind::Read, last, p));
            }
            k => {
                node += 1;
                writer[node as usize] = out.len() as u32;
                // A put's `from` is NONE; an append's is INIT (its parent comes from gets).
                let from = if k == 1 { NONE } else { INIT };
                out.push(uop(i, op, Kind::Write, node, from));
            }
        }
    }
    drop(by_text);
    Ok(Compiled {
        model: ModelKind::Kv,
        ops: out,
        writer,
        values: Vec::new(),
        text,
        paths,
        pieces,
    })
}

/// Splits a get's string into pieces: an optional put first, then appends. The pieces are
/// prefix-free, so at most one matches at each position. `None`: nothing produces it.
fn split(
    s: &str,
    by_text: &HashMap<&[u8], u32>,
    lengths: &[usize],
    pieces: &mut Vec<u32>,
    is_put: &[bool],
) -> Option<(u32, u32)> {
    let b = s.as_bytes();
    let start = pieces.len();
    let mut at = 0;
    while at < b.len() {
        let mut found = None;
        for &l in lengths {
            if at + l > b.len() {
                break;
            }
            if let Some(&n) = by_text.get(&b[at..at + l]) {
                found = Some((n, l));
                break;
            }
        }
        let Some((n, l)) = found else {
            pieces.truncate(start);
            return None;
        };
        if is_put[n as usize] && at > 0 {
            pieces.truncate(start);
            return None;
        }
        pieces.push(n);
        at += l;
    }
    Some((start as u32, (pieces.len() - start) as u32))
}

/// set: each add is the writer of its element (node = element id); each read's set is a
/// sorted list of element ids in `pieces` (`from` = its index in `paths`; equal sets share
/// one).
pub(super) fn compile_set<'a>(ops: &[&'a Operation]) -> Result<Compiled<'a>, String> {
    let mut values = Values::default();
    values.values.push(Value::Null); // id 0 is no element
    let mut out = Vec::with_capacity(ops.len());
    let mut adds: Vec<(u32, u32)> = Vec::new();
    let mut paths: Vec<(u32, u32)> = Vec::new();
    let mut pieces: Vec<u32> = Vec::new();
    let mut sets: HashMap<Vec<u32>, u32> = HashMap::default();
    for (i, op) in ops.iter().enumerate() {
        let f = op.f.as_str();
        if f_is(f, &["add"]) {
            if op.value.is_null() {
                return Err("an add of nil".into());
            }
            let e = values.id(&op.value);
            adds.push((e, out.len() as u32));
            out.push(uop(i, op, Kind::Write, e, NONE));
        } else if f_is(f, &["read", "r"]) {
            if op.status != Status::Ok {
                continue;
            }
            let mut es: Vec<u32> = match &op.output {
                Value::Array(a) => {
                    if a.iter().any(Value::is_null) {
                        return Err("a read of a set holding nil".into());
                    }
                    a.iter().map(|v| values.id(v)).collect()
                }
                Value::Null => Vec::new(),
                _ => return Err("a set read that is not an array".into()),
            };
            es.sort_unstable();
            es.dedup();
            let next = paths.len() as u32;
            let set = match sets.get(&es) {
                Some(&k) => k,
                None => {
                    paths.push((pieces.len() as u32, es.len() as u32));
                    pieces.extend_from_slice(&es);
                    sets.insert(es, next);
                    next
                }
            };
            out.push(uop(i, op, Kind::Read, NONE, set));
        } else {
            return Err(format!("operation {:?}", op.f));
        }
    }
    let mut writer = vec![NONE; values.values.len()];
    for (e, o) in adds {
        if writer[e as usize] != NONE {
            return Err("an element added twice".into());
        }
        writer[e as usize] = o;
    }
    Ok(Compiled {
        model: ModelKind::Set,
        ops: out,
        writer,
        values: values.values,
        text: Vec::new(),
        paths,
        pieces,
    })
}
