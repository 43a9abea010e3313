//! Sequential models. Each one is compiled per partition (per key) into a plain
//! value whose states are small and cheap to hash: values and strings are interned
//! to `u32` ids once, so a search step is an integer comparison or a table lookup.

use crate::fx::FxHashMap as HashMap;
use crate::history::{Operation, Status};
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

mod kv;
mod register;
mod s3_object;
mod set;

pub(crate) use kv::text_of;
pub use kv::Kv;
pub use register::Register;
pub use s3_object::S3Object;
pub use set::SetModel;

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
