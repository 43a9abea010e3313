//! `register` and `cas-register`: one JSON value per key, initially `nil`.

use super::{bad, earlier, f_is, fp_u64, sop, view, Built, CheckError, Class, Interner, SeqModel};
use crate::fx::FxHashSet as HashSet;
use crate::history::{show, Operation, Status};
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
enum RegOp {
    Read(u32),
    Write(u32),
    Cas(u32, u32),
}

/// A single register holding a JSON value, initially `nil`.
///
/// * `read` (invoke value ignored) returns the current value: legal iff the
///   completion's value equals it.
/// * `write v` sets the value to `v` and returns.
/// * `cas [a b]` (cas-register only): if the value equals `a` it becomes `b`
///   and the cas returns `ok`; otherwise nothing changes. A cas that completed
///   with `fail` never took effect (a definite no-op) and imposes nothing; a cas
///   with an unknown outcome either happened while the value was `a` or never.
///
/// Operations on different keys are independent registers.
pub struct Register {
    ops: Vec<RegOp>,
    values: Interner,
}

const NIL: u32 = 0;

impl Register {
    pub(crate) fn build(
        ops: &[&Operation],
        cut: usize,
        cas: bool,
    ) -> Result<Built<Register>, CheckError> {
        let mut values = Interner::default();
        values.id(&Value::Null); // NIL == 0
        let compiled = compile(ops, cut, cas, &mut values)?;
        // Values someone could observe: read results and cas expectations.
        let mut observed: HashSet<u32> = HashSet::default();
        let mut written: HashSet<u32> = HashSet::default();
        written.insert(NIL);
        for &(_, r, _, _) in &compiled {
            match r {
                RegOp::Read(v) => {
                    observed.insert(v);
                }
                RegOp::Cas(a, b) => {
                    observed.insert(a);
                    written.insert(b);
                }
                RegOp::Write(v) => {
                    written.insert(v);
                }
            }
        }
        // Values nobody observes behave alike (reads fail, cas fails, writes
        // replace them): one state stands for all of them.
        let unobserved = values.values.len() as u32;
        values
            .values
            .push(Value::String("(a value no read observes)".into()));
        let hide = |v: u32| {
            if observed.contains(&v) || v == NIL {
                v
            } else {
                unobserved
            }
        };
        let mut immediate = None;
        let mut out = Vec::new();
        let mut sops = Vec::new();
        for (i, r, unknown, failed) in compiled {
            match r {
                RegOp::Read(v) if !written.contains(&v) && earlier(&immediate, i, ops) => {
                    immediate = Some((
                        i,
                        format!(
                            "read returned {} which no operation ever wrote",
                            show(&values.values[v as usize])
                        ),
                    ));
                }
                RegOp::Cas(a, _)
                    if !unknown && !written.contains(&a) && earlier(&immediate, i, ops) =>
                {
                    immediate = Some((
                        i,
                        format!(
                            "cas succeeded expecting {} which no operation ever wrote",
                            show(&values.values[a as usize])
                        ),
                    ));
                }
                // An unknown write nobody could observe may as well never have happened.
                RegOp::Write(v) | RegOp::Cas(_, v) if unknown && !observed.contains(&v) => continue,
                _ => {}
            }
            let r = match r {
                RegOp::Write(v) => RegOp::Write(hide(v)),
                RegOp::Cas(a, b) => RegOp::Cas(a, hide(b)),
                r => r,
            };
            sops.push(sop(i, ops[i], unknown, failed));
            out.push(r);
        }
        Ok(Built {
            model: Register { ops: out, values },
            ops: sops,
            immediate,
        })
    }
}

/// The operations of the prefix that ends with event `cut`, with their values interned:
/// (index, operation, outcome unknown, failed).
type Compiled = Vec<(usize, RegOp, bool, bool)>;

fn compile(
    ops: &[&Operation],
    cut: usize,
    cas: bool,
    values: &mut Interner,
) -> Result<Compiled, CheckError> {
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
        let r = if f_is(f, &["read", "r", "get"]) {
            if status != Status::Ok {
                continue; // an unfinished read shows nothing
            }
            RegOp::Read(values.id(output))
        } else if f_is(f, &["write", "w", "put"]) {
            RegOp::Write(values.id(&op.value))
        } else if cas && f_is(f, &["cas", "compare-and-set"]) {
            match &op.value {
                Value::Array(a) if a.len() == 2 => RegOp::Cas(values.id(&a[0]), values.id(&a[1])),
                v => {
                    return Err(bad(
                        op,
                        format!("cas needs [expected new], got {}", show(v)),
                    ))
                }
            }
        } else {
            let valid = if cas {
                "read, write, cas"
            } else {
                "read, write"
            };
            return Err(bad(
                op,
                format!(
                    "model {} has no operation {:?} (valid: {valid})",
                    if cas { "cas-register" } else { "register" },
                    op.f
                ),
            ));
        };
        compiled.push((i, r, status != Status::Ok, failed));
    }
    Ok(compiled)
}

impl SeqModel for Register {
    type State = u32;
    fn init(&mut self) -> u32 {
        NIL
    }
    #[inline]
    fn step(&mut self, s: &u32, op: usize) -> Option<u32> {
        match self.ops[op] {
            RegOp::Read(v) => (v == *s).then_some(*s),
            RegOp::Write(v) => Some(v),
            RegOp::Cas(a, b) => (a == *s).then_some(b),
        }
    }
    fn class(&self, op: usize) -> Class {
        match self.ops[op] {
            RegOp::Read(_) => Class::Observe,
            _ => Class::Reset,
        }
    }
    #[inline]
    fn compatible(&mut self, s: &u32, op: usize) -> bool {
        matches!(self.ops[op], RegOp::Read(v) if v == *s)
    }
    fn explains(&self, p: usize, g: usize) -> bool {
        match (self.ops[p], self.ops[g]) {
            (RegOp::Write(v) | RegOp::Cas(_, v), RegOp::Read(r)) => v == r,
            _ => true,
        }
    }
    fn fingerprint(&self, s: &u32) -> (u64, u64) {
        fp_u64(*s as u64)
    }
    fn show_state(&self, s: &u32) -> String {
        show(&self.values.values[*s as usize])
    }
    fn needs(&self, op: usize) -> String {
        match self.ops[op] {
            RegOp::Read(v) => format!("value {}", self.show_state(&v)),
            RegOp::Write(_) => "nothing (a write is always legal)".into(),
            RegOp::Cas(a, _) => format!("value {}", self.show_state(&a)),
        }
    }
}
