//! `kv`: a string per key, changed by puts and appends.

use super::{bad, f_is, fp_u64, sop, view, Built, CheckError, Class, SeqModel};
use crate::fx::FxHashMap as HashMap;
use crate::history::{Operation, Status};
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
enum KvOp {
    Get(u32),
    Put(u32),
    Append(u32),
}

/// A map from keys to strings; every key starts as `""` and keys are independent.
///
/// * `get` returns the key's string: legal iff the completion's value equals it
///   (`nil` reads as `""`).
/// * `put s` replaces the string with `s`.
/// * `append s` concatenates `s` to the end of the string.
pub struct Kv {
    ops: Vec<KvOp>,
    strings: Vec<String>,
    ids: HashMap<String, u32>,
    /// (state, appended string) -> state: appends allocate only the first time.
    appends: HashMap<(u32, u32), u32>,
    /// Every value a get returned (ids, sorted by string), to tell whether a
    /// state can ever be seen.
    gets: Vec<u32>,
    /// Stands for every string that is no prefix of any get: such states behave
    /// alike (gets fail until a put replaces them), so they are one state.
    poison: u32,
}

pub(crate) fn text_of(v: &Value) -> std::borrow::Cow<'_, str> {
    match v {
        Value::Null => "".into(),
        Value::String(s) => s.as_str().into(),
        other => other.to_string().into(),
    }
}

impl Kv {
    /// Whether some get returned a string starting with `t`.
    fn observable(&self, t: &str) -> bool {
        let i = self
            .gets
            .partition_point(|&g| self.strings[g as usize].as_str() < t);
        self.gets
            .get(i)
            .is_some_and(|&g| self.strings[g as usize].starts_with(t))
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.ids.insert(s.to_string(), i);
        self.strings.push(s.to_string());
        i
    }

    pub(crate) fn build(ops: &[&Operation], cut: usize) -> Result<Built<Kv>, CheckError> {
        let mut kv = Kv {
            ops: Vec::new(),
            strings: Vec::new(),
            ids: HashMap::with_capacity_and_hasher(ops.len() + 2, Default::default()),
            appends: HashMap::with_capacity_and_hasher(ops.len(), Default::default()),
            gets: Vec::new(),
            poison: 1,
        };
        kv.intern("");
        // Not a key of `ids`, so no real string maps to it.
        kv.strings.push("(a value no get observes)".into());
        let mut compiled = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            if op.invoke > cut {
                continue;
            }
            let (status, output) = view(op, cut);
            // A failed operation never took effect, but in a prefix that ends before
            // its completion it was still in flight: keep it, marked, as unknown.
            let failed = status == Status::Fail;
            let status = if failed { Status::Info } else { status };
            let f = op.f.as_str();
            let unknown = status != Status::Ok;
            let k = if f_is(f, &["get", "read", "r"]) {
                if unknown {
                    continue;
                }
                KvOp::Get(kv.intern(&text_of(output)))
            } else if f_is(f, &["put", "write", "w"]) {
                KvOp::Put(kv.intern(&text_of(&op.value)))
            } else if f_is(f, &["append"]) {
                KvOp::Append(kv.intern(&text_of(&op.value)))
            } else {
                return Err(bad(
                    op,
                    format!(
                        "model kv has no operation {:?} (valid: get, put, append)",
                        op.f
                    ),
                ));
            };
            compiled.push((i, k, unknown, failed));
        }
        let gets: Vec<&str> = compiled
            .iter()
            .filter_map(|&(_, k, _, _)| match k {
                KvOp::Get(v) => Some(kv.strings[v as usize].as_str()),
                _ => None,
            })
            .collect();
        // An unknown put or append that no get could have seen changes nothing
        // anyone observed before the next put, so it may as well never have happened.
        let mut keep = Vec::with_capacity(compiled.len());
        for &(_, k, unknown, _) in &compiled {
            let relevant = !unknown
                || match k {
                    KvOp::Put(v) => {
                        let v = kv.strings[v as usize].as_str();
                        gets.iter().any(|g| g.starts_with(v))
                    }
                    KvOp::Append(v) => {
                        let v = kv.strings[v as usize].as_str();
                        !v.is_empty() && gets.iter().any(|g| g.contains(v))
                    }
                    KvOp::Get(_) => true,
                };
            keep.push(relevant);
        }
        let mut sorted: Vec<u32> = compiled
            .iter()
            .filter_map(|&(_, k, _, _)| match k {
                KvOp::Get(v) => Some(v),
                _ => None,
            })
            .collect();
        sorted.sort_unstable();
        sorted.dedup();
        sorted.sort_unstable_by(|&a, &b| kv.strings[a as usize].cmp(&kv.strings[b as usize]));
        kv.gets = sorted;
        let mut sops = Vec::new();
        for (&(i, k, unknown, failed), keep) in compiled.iter().zip(keep) {
            if keep {
                let k = match k {
                    KvOp::Put(v) if !kv.observable(&kv.strings[v as usize]) => KvOp::Put(kv.poison),
                    k => k,
                };
                sops.push(sop(i, ops[i], unknown, failed));
                kv.ops.push(k);
            }
        }
        Ok(Built {
            model: kv,
            ops: sops,
            immediate: None,
        })
    }
}

impl SeqModel for Kv {
    type State = u32;
    fn init(&mut self) -> u32 {
        0
    }
    #[inline]
    fn step(&mut self, s: &u32, op: usize) -> Option<u32> {
        match self.ops[op] {
            KvOp::Get(v) => (v == *s).then_some(*s),
            KvOp::Put(v) => Some(v),
            KvOp::Append(a) => {
                if *s == self.poison {
                    return Some(*s);
                }
                if let Some(&n) = self.appends.get(&(*s, a)) {
                    return Some(n);
                }
                let mut t = String::with_capacity(
                    self.strings[*s as usize].len() + self.strings[a as usize].len(),
                );
                t.push_str(&self.strings[*s as usize]);
                t.push_str(&self.strings[a as usize]);
                let n = if self.observable(&t) {
                    self.intern(&t)
                } else {
                    self.poison
                };
                self.appends.insert((*s, a), n);
                Some(n)
            }
        }
    }
    fn class(&self, op: usize) -> Class {
        match self.ops[op] {
            KvOp::Get(_) => Class::Observe,
            KvOp::Put(_) => Class::Reset,
            KvOp::Append(_) => Class::Grow,
        }
    }
    #[inline]
    fn compatible(&mut self, s: &u32, op: usize) -> bool {
        match self.ops[op] {
            KvOp::Get(v) => {
                v == *s
                    || (*s != self.poison
                        && self.strings[v as usize].starts_with(self.strings[*s as usize].as_str()))
            }
            _ => true,
        }
    }
    fn explains(&self, p: usize, g: usize) -> bool {
        match (self.ops[p], self.ops[g]) {
            (KvOp::Put(v), _) if v == self.poison => false,
            (KvOp::Put(v), KvOp::Get(r)) => {
                self.strings[r as usize].starts_with(self.strings[v as usize].as_str())
            }
            _ => true,
        }
    }
    fn memory(&self) -> usize {
        // Each interned string is stored twice (vector and map) plus table slots.
        self.strings.iter().map(|t| 2 * t.len() + 64).sum::<usize>() + self.appends.len() * 24
    }
    fn fingerprint(&self, s: &u32) -> (u64, u64) {
        fp_u64(*s as u64)
    }
    fn show_state(&self, s: &u32) -> String {
        format!("{:?}", self.strings[*s as usize])
    }
    fn needs(&self, op: usize) -> String {
        match self.ops[op] {
            KvOp::Get(v) => format!("value {}", self.show_state(&v)),
            _ => "nothing (always legal)".into(),
        }
    }
}
