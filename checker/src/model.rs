//! Sequential models. Each one is compiled per partition (per key) into a plain
//! value whose states are small and cheap to hash: values and strings are interned
//! to `u32` ids once, so a search step is an integer comparison or a table lookup.

use crate::fx::{FxHashMap as HashMap, FxHashSet as HashSet};
use crate::history::{show, Operation, Status};
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

/// The models `chaos check --model` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    Register,
    CasRegister,
    Kv,
    Set,
    S3Object,
}

/// Short name used by the API; the same type as [`ModelKind`].
pub type Model = ModelKind;

impl ModelKind {
    /// Every model name, for validating scenarios.
    pub const NAMES: &'static [&'static str] =
        &["register", "cas-register", "kv", "set", "s3-object"];
    pub const ALL: &'static [ModelKind] = &[
        ModelKind::Register,
        ModelKind::CasRegister,
        ModelKind::Kv,
        ModelKind::Set,
        ModelKind::S3Object,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Register => "register",
            ModelKind::CasRegister => "cas-register",
            ModelKind::Kv => "kv",
            ModelKind::Set => "set",
            ModelKind::S3Object => "s3-object",
        }
    }
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ModelKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ModelKind::ALL
            .iter()
            .copied()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown model {s:?} (valid models: {})",
                    ModelKind::NAMES.join(", ")
                )
            })
    }
}

/// An operation the model cannot interpret (bad input, not a violation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckError {
    /// The operation's id in the history.
    pub op: usize,
    /// 1-based line of its invocation (0 if unknown).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            write!(f, "operation {}: {}", self.op, self.message)
        }
    }
}

impl std::error::Error for CheckError {}

pub(crate) fn bad(op: &Operation, message: impl Into<String>) -> CheckError {
    CheckError {
        op: op.id,
        line: op.line,
        message: message.into(),
    }
}

/// How an operation can change the state, used to prune the search: an
/// `Observe` operation that must happen before any remaining `Reset` can only
/// be reached through `Grow` operations, so the current state must be
/// [`SeqModel::compatible`] with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Observe,
    Grow,
    Reset,
}

/// A compiled sequential model over the operations `0..n` of one partition.
pub(crate) trait SeqModel {
    type State: Clone + Eq + Hash;
    fn init(&mut self) -> Self::State;
    /// The state after applying operation `op` in state `s`, or `None` if `op`
    /// cannot happen there (with the result it returned).
    fn step(&mut self, s: &Self::State, op: usize) -> Option<Self::State>;
    fn class(&self, op: usize) -> Class;
    /// Whether some sequence of `Grow` operations could lead from `s` to a state
    /// where the `Observe` operation `op` is legal.
    fn compatible(&mut self, s: &Self::State, op: usize) -> bool;
    /// Whether the `Observe` operation `g` could follow the `Reset` operation `p`
    /// with only `Grow` operations in between (conservative: `true` if unsure).
    fn explains(&self, _p: usize, _g: usize) -> bool {
        true
    }
    /// Two independent 64-bit hashes of a state (the visited cache keeps only fingerprints).
    fn fingerprint(&self, s: &Self::State) -> (u64, u64);
    fn show_state(&self, s: &Self::State) -> String;
    /// What state the operation needs to be legal, in words.
    fn needs(&self, op: usize) -> String;
    /// Bytes the model allocated while searching (interned states), an estimate.
    fn memory(&self) -> usize {
        0
    }
    /// Treats `op` as still in flight (its completion lies beyond a cut), or
    /// restores it. Only models whose compiled operations depend on the result
    /// need to do anything.
    fn set_pending(&mut self, _op: usize, _pending: bool) {}
    /// Whether `set_pending` would change `op`.
    fn pending_differs(&self, _op: usize) -> bool {
        false
    }
}

/// One operation of a partition, as the search sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SOp {
    /// Index into the partition's original operation slice.
    pub src: usize,
    /// Event positions: the invocation and the completion (`u32::MAX` when the
    /// outcome is unknown: it may be linearized any time after its call, or never).
    pub call: u32,
    pub ret: u32,
    /// Completed with `fail`: absent, except in a prefix that ends before `ret`,
    /// where it is still in flight.
    pub failed: bool,
}

impl SOp {
    pub fn info(&self) -> bool {
        self.ret == u32::MAX
    }
}

/// A compiled partition: the model, its operations, and possibly a violation
/// found without search.
pub(crate) struct Built<M> {
    pub model: M,
    pub ops: Vec<SOp>,
    /// (index into the partition's slice, why) for an operation that is illegal anywhere.
    pub immediate: Option<(usize, String)>,
}

/// An operation as seen in the prefix of the history that ends with event `cut`:
/// one that completed later is still pending there (its outcome unknown).
#[inline]
fn view(op: &Operation, cut: usize) -> (Status, &Value) {
    match op.complete {
        Some(c) if c > cut => (Status::Info, &Value::Null),
        _ => (op.status, &op.output),
    }
}

/// Whether operation `i` completed before the current immediate violation (the
/// earliest one is the shortest illegal prefix).
fn earlier(cur: &Option<(usize, String)>, i: usize, ops: &[&Operation]) -> bool {
    let end = |j: usize| ops[j].complete.unwrap_or(usize::MAX);
    cur.as_ref().is_none_or(|(j, _)| end(i) < end(*j))
}

fn sop(i: usize, op: &Operation, pending: bool, failed: bool) -> SOp {
    SOp {
        src: i,
        call: op.invoke as u32,
        ret: if pending && !failed {
            u32::MAX
        } else {
            op.complete.map(|c| c as u32).unwrap_or(u32::MAX)
        },
        failed,
    }
}

#[inline]
pub(crate) fn mix(x: u64) -> u64 {
    // splitmix64 finaliser: a bijection, so distinct small states never collide.
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline]
fn fp_u64(x: u64) -> (u64, u64) {
    (mix(x), mix(x ^ 0xD6E8_FEB8_6659_FD93).rotate_left(17))
}

/// Interns JSON values by their canonical text.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, u32>,
    values: Vec<Value>,
}

impl Interner {
    fn id(&mut self, v: &Value) -> u32 {
        // Histories usually have few distinct values: a scan beats serialising.
        if self.values.len() <= 16 {
            if let Some(i) = self.values.iter().position(|x| x == v) {
                return i as u32;
            }
            if self.values.len() < 16 {
                self.values.push(v.clone());
                return self.values.len() as u32 - 1;
            }
            for (i, x) in self.values.iter().enumerate() {
                self.ids.insert(x.to_string(), i as u32);
            }
        }
        let k = v.to_string();
        if let Some(&i) = self.ids.get(&k) {
            return i;
        }
        let i = self.values.len() as u32;
        self.ids.insert(k, i);
        self.values.push(v.clone());
        i
    }
}

/// Whether `f` is one of `names`. The harness's reads after the workload (`final-read`, which
/// the durable check looks for) are reads to every model.
pub(crate) fn f_is(f: &str, names: &[&str]) -> bool {
    names.contains(&f) || (matches!(f, "final-read" | "final_read") && names.contains(&"read"))
}

// ---------------------------------------------------------------------------
// register and cas-register

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
        let mut compiled = Vec::new();
        let mut sops = Vec::new();
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
                    Value::Array(a) if a.len() == 2 => {
                        RegOp::Cas(values.id(&a[0]), values.id(&a[1]))
                    }
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

// ---------------------------------------------------------------------------
// kv

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

// ---------------------------------------------------------------------------
// set

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

// ---------------------------------------------------------------------------
// s3-object

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
