//! `set`: a growing set of JSON values per key.

use super::{bad, earlier, f_is, mix, sop, view, Built, CheckError, Class, Interner, SeqModel};
use crate::fx::FxHashSet as HashSet;
use crate::history::{show, Operation, Status};
use serde_json::Value;

#[derive(Clone, Debug)]
enum SetOp {
    Add(u32),
    Read(Box<[u64]>),
}

/// A set of JSON values, initially empty (one per key).
///
/// * `add x` inserts `x`.
/// * `read` returns the whole set as a JSON array (order and duplicates do not
///   matter): legal iff it equals the current set.
pub struct SetModel {
    ops: Vec<SetOp>,
    words: usize,
    elements: Interner,
}

impl SetModel {
    pub(crate) fn build(ops: &[&Operation], cut: usize) -> Result<Built<SetModel>, CheckError> {
        let mut elements = Interner::default();
        enum Raw {
            Add(u32),
            Read(Vec<u32>),
        }
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
            let unknown = status != Status::Ok;
            let f = op.f.as_str();
            let r = if f_is(f, &["add"]) {
                Raw::Add(elements.id(&op.value))
            } else if f_is(f, &["read", "r"]) {
                if unknown {
                    continue;
                }
                match output {
                    Value::Array(a) => Raw::Read(a.iter().map(|v| elements.id(v)).collect()),
                    Value::Null => Raw::Read(Vec::new()),
                    v => {
                        return Err(bad(
                            op,
                            format!("set read must return an array, got {}", show(v)),
                        ))
                    }
                }
            } else {
                return Err(bad(
                    op,
                    format!("model set has no operation {:?} (valid: add, read)", op.f),
                ));
            };
            compiled.push((i, r, unknown, failed));
        }
        let words = elements.values.len().div_ceil(64).max(1);
        let mut added: HashSet<u32> = HashSet::default();
        let mut seen: HashSet<u32> = HashSet::default();
        for (_, r, _, _) in &compiled {
            match r {
                Raw::Add(e) => {
                    added.insert(*e);
                }
                Raw::Read(es) => seen.extend(es.iter().copied()),
            }
        }
        let mut immediate = None;
        let mut out = Vec::new();
        let mut sops = Vec::new();
        for (i, r, unknown, failed) in compiled {
            let op = match r {
                Raw::Add(e) => {
                    if unknown && !seen.contains(&e) {
                        continue; // never observed: may as well never have happened
                    }
                    SetOp::Add(e)
                }
                Raw::Read(es) => {
                    if let Some(e) = es.iter().find(|e| !added.contains(e)) {
                        if earlier(&immediate, i, ops) {
                            immediate = Some((
                                i,
                                format!(
                                    "read returned element {} which was never added",
                                    show(&elements.values[*e as usize])
                                ),
                            ));
                        }
                    }
                    let mut bits = vec![0u64; words];
                    for e in es {
                        bits[e as usize / 64] |= 1 << (e % 64);
                    }
                    SetOp::Read(bits.into_boxed_slice())
                }
            };
            sops.push(sop(i, ops[i], unknown, failed));
            out.push(op);
        }
        Ok(Built {
            model: SetModel {
                ops: out,
                words,
                elements,
            },
            ops: sops,
            immediate,
        })
    }
}

impl SeqModel for SetModel {
    type State = Box<[u64]>;
    fn init(&mut self) -> Box<[u64]> {
        vec![0u64; self.words].into_boxed_slice()
    }
    fn step(&mut self, s: &Box<[u64]>, op: usize) -> Option<Box<[u64]>> {
        match &self.ops[op] {
            SetOp::Add(e) => {
                let mut n = s.clone();
                n[*e as usize / 64] |= 1 << (e % 64);
                Some(n)
            }
            SetOp::Read(r) => (r == s).then(|| s.clone()),
        }
    }
    fn class(&self, op: usize) -> Class {
        match self.ops[op] {
            SetOp::Add(_) => Class::Grow,
            SetOp::Read(_) => Class::Observe,
        }
    }
    fn compatible(&mut self, s: &Box<[u64]>, op: usize) -> bool {
        match &self.ops[op] {
            SetOp::Read(r) => s.iter().zip(r.iter()).all(|(a, b)| a & !b == 0),
            SetOp::Add(_) => true,
        }
    }
    fn fingerprint(&self, s: &Box<[u64]>) -> (u64, u64) {
        let (mut a, mut b) = (0x1234_5678u64, 0x8765_4321u64);
        for &w in s.iter() {
            a = mix(a ^ w);
            b = mix(b.rotate_left(29) ^ w ^ 0xA5A5_A5A5);
        }
        (a, b)
    }
    fn show_state(&self, s: &Box<[u64]>) -> String {
        let items: Vec<String> = (0..self.elements.values.len())
            .filter(|&e| s[e / 64] & (1 << (e % 64)) != 0)
            .map(|e| show(&self.elements.values[e]))
            .collect();
        format!("#{{{}}}", items.join(" "))
    }
    fn needs(&self, op: usize) -> String {
        match &self.ops[op] {
            SetOp::Read(r) => format!("set {}", self.show_state(r)),
            SetOp::Add(_) => "nothing (always legal)".into(),
        }
    }
}
