//! Linearizability without search when every written value is unique: the reads-from
//! procedure (Gibbons & Korach's clusters, extended to cas chains and to `kv` appends).
//!
//! When no value is written twice, each read names the write it read from, each cas the
//! write whose value it replaced, and each `kv` get the whole sequence of puts and appends
//! behind the string it returned. That fixes, for every value, what must come right after
//! what: a *node* is a value with the operation that wrote it (its writer) and the reads that
//! returned it; a cas, or an append a get saw, is the writer of a node whose parent is the
//! node it replaced or extended. Nodes linked that way form a *chain* that any linearization
//! must run without interruption, in that order: nothing else can write in between (a value
//! never comes back once replaced). A write nobody read, or an append no get saw, is a chain
//! of its own, which may sit between any two chains. The initial value is a chain with a
//! writer at time 0.
//!
//! A `set` is one chain: the distinct sets its reads returned must each hold the one before
//! (a set only grows); each is a node written by the adds of the elements it is first to
//! hold (in any order) and read by the reads that returned it, and acknowledged adds no read
//! saw write a last node.
//!
//! A linearization exists iff
//!
//! 1. no node has two children (two cas took the same value, two appends extended the same
//!    string, or two gets disagree on what came before an append);
//! 2. inside each chain, positions respect real time: a writer at depth d is at position 2d,
//!    its reads at 2d + 1, and no operation at a later position returned before one at an
//!    earlier position was invoked (a stale read inside a chain, a read before its write);
//! 3. the chains can be ordered: with `a` the earliest completion in a chain and `b` its
//!    latest invocation, chain X must precede Y when `a(X) < b(Y)`, and this relation has no
//!    cycle. Any cycle implies one between two chains, so sorting the chains by `min(a, b)`
//!    and checking that each chain's `a` exceeds every earlier chain's `b` decides it in
//!    O(n log n).
//!
//! Conversely, when all three hold, chains in that order, nodes by depth and operations by
//! position then invocation form a linearization. Unknown outcomes (`info`, or no
//! completion) that someone observed complete at infinity; unobserved ones are dropped (they
//! may as well never have happened); failed ones are absent.
//!
//! Preconditions, checked per key; when one fails the search decides instead: every written
//! value differs from every other and from the initial value (`kv`: puts and appends are
//! non-empty and no one is a prefix of another, so each get's string splits into pieces in
//! exactly one way; `set`: no element is added twice), and every operation is one the model
//! knows (the search reports the others as bad input). A read of a value nobody wrote, or
//! only a failed write wrote, or a get no sequence of puts and appends can produce, is simply
//! illegal.
//!
//! A violation is explained from the shortest illegal prefix (by completion, found by
//! bisection with the same procedure): the operation whose completion makes it illegal, what
//! it needs, the write that overwrote it, and the states the rest of that prefix allows while
//! it was in flight; the linearization of the legal prefix before it is the partial
//! linearization shown.
//!
//! Files: `compile` (per model, once), `prefix` (what a prefix holds and how its nodes link),
//! `chains` (conditions 2 and 3), `explain` and `explain_set` (the message).

use crate::answer::{PartitionResult, Procedure, Unexplored};
use crate::history::{Operation, Status};
use crate::model::ModelKind;
use crate::search::Limits;
use crate::Verdict;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::time::Instant;

mod chains;
mod compile;
mod explain;
mod explain_set;
mod prefix;

use chains::decide;
use compile::{compile_kv, compile_register, compile_set};
use explain::explain;
use prefix::{build, Stop};

const NONE: u32 = u32::MAX;
/// A completion that never happened (or is beyond the prefix).
const INF: u32 = u32::MAX;
/// The node of the initial value.
const INIT: u32 = 0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    Cas,
}

/// An operation as the procedure sees it.
#[derive(Clone, Copy, Debug)]
struct UOp {
    /// Index into the partition's operations.
    src: u32,
    kind: Kind,
    /// Event positions plus one (so that 0 is before everything); `INF`: no completion.
    inv: u32,
    done: u32,
    status: Status,
    /// The node a read returned (`NONE`: a value nothing can produce) or a write writes (set:
    /// the element an add adds).
    node: u32,
    /// A cas's expected value; a kv get's path or a set read's set (index into
    /// `Compiled::paths`).
    from: u32,
}

/// A partition compiled once: operations, nodes, and the path of every kv get or the set of
/// every set read.
struct Compiled<'a> {
    model: ModelKind,
    ops: Vec<UOp>,
    /// Per node, the operation (index into `ops`) that writes it; `NONE` for the initial
    /// value and for values nobody wrote.
    writer: Vec<u32>,
    /// register and cas-register: each node's value; set: each element.
    values: Vec<Value>,
    /// kv: each node's piece (the put's or append's string).
    text: Vec<Cow<'a, str>>,
    /// kv: the pieces of each distinct get result; set: the elements of each distinct read
    /// result (sorted); as `(start, len)` into `pieces`.
    paths: Vec<(u32, u32)>,
    pieces: Vec<u32>,
}

impl Compiled<'_> {
    fn nodes(&self) -> usize {
        self.writer.len()
    }
    fn path(&self, p: u32) -> &[u32] {
        let (s, l) = self.paths[p as usize];
        &self.pieces[s as usize..(s + l) as usize]
    }
    fn is_put(&self, node: u32) -> bool {
        self.model == ModelKind::Kv
            && node != INIT
            && self.writer[node as usize] != NONE
            && self.ops[self.writer[node as usize] as usize].from == NONE
    }
}

fn time(event: usize) -> u32 {
    (event as u64 + 1).min(INF as u64 - 1) as u32
}

fn uop(i: usize, op: &Operation, kind: Kind, node: u32, from: u32) -> UOp {
    UOp {
        src: i as u32,
        kind,
        inv: time(op.invoke),
        done: op.complete.map(time).unwrap_or(INF),
        status: op.status,
        node,
        from,
    }
}

/// What the procedure says about a partition; `Err` when its preconditions do not hold.
pub(crate) fn check(
    key: &Option<String>,
    ops: &[&Operation],
    model: ModelKind,
    limits: &Limits,
) -> Result<PartitionResult, String> {
    let start = Instant::now();
    let out_of_time = || {
        if limits.stop.load(Ordering::Relaxed) {
            Some("cancelled")
        } else if Instant::now() > limits.deadline {
            Some("time budget exhausted")
        } else {
            None
        }
    };
    let unknown = |why: &str, operations: usize| PartitionResult {
        key: key.clone(),
        verdict: Verdict::Unknown,
        procedure: Procedure::ReadsFrom,
        operations,
        states_explored: 0,
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        memory_bytes: 0,
        explanation: None,
        unknown: Some(Unexplored {
            reason: why.to_string(),
            longest_linearization: 0,
        }),
    };
    if let Some(why) = out_of_time() {
        return Ok(unknown(why, ops.len()));
    }
    let c = match model {
        ModelKind::Register => compile_register(ops, false)?,
        ModelKind::CasRegister => compile_register(ops, true)?,
        ModelKind::Kv => compile_kv(ops)?,
        ModelKind::Set => compile_set(ops)?,
        _ => return Err(format!("model {model} has no reads-from procedure")),
    };
    let full = build(&c, INF).and_then(|p| decide(&c, &p).map(|l| (p, l)));
    let mut result = PartitionResult {
        key: key.clone(),
        verdict: Verdict::Ok,
        procedure: Procedure::ReadsFrom,
        operations: 0,
        states_explored: 0,
        elapsed_ms: 0.0,
        memory_bytes: c.ops.len() * 64 + c.nodes() * 24,
        explanation: None,
        unknown: None,
    };
    match full {
        Ok((p, _)) => result.operations = p.included,
        Err(Stop::Unsupported(why)) => return Err(why),
        Err(Stop::Illegal(_)) => {
            result.verdict = Verdict::Illegal;
            result.operations = build(&c, INF).map(|p| p.included).unwrap_or(c.ops.len());
            match explain(key, ops, &c, &out_of_time)? {
                Some(e) => result.explanation = Some(e),
                None => {
                    return Ok(unknown(
                        "time budget exhausted while looking for the shortest illegal prefix",
                        result.operations,
                    ))
                }
            }
        }
    }
    result.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(result)
}

fn illegal(c: &Compiled, cut: u32) -> Result<bool, String> {
    match build(c, cut).and_then(|p| decide(c, &p)) {
        Ok(_) => Ok(false),
        Err(Stop::Illegal(_)) => Ok(true),
        Err(Stop::Unsupported(why)) => Err(why),
    }
}
