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

use crate::fx::FxHashMap as HashMap;
use crate::history::{show, Operation, Status};
use crate::linearizable::{
    Explanation, LinearizedStep, OpSummary, PartitionResult, Procedure, Unexplored, MAX_STEPS,
};
use crate::model::{f_is, text_of, ModelKind};
use crate::search::Limits;
use crate::Verdict;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::time::Instant;

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

fn compile_register<'a>(ops: &[&'a Operation], cas: bool) -> Result<Compiled<'a>, String> {
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

fn compile_kv<'a>(ops: &[&'a Operation]) -> Result<Compiled<'a>, String> {
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
fn compile_set<'a>(ops: &[&'a Operation]) -> Result<Compiled<'a>, String> {
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

/// Whether sorted `a` is a subset of sorted `b`.
fn subset(a: &[u32], b: &[u32]) -> bool {
    let mut j = 0;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j == b.len() || b[j] != x {
            return false;
        }
        j += 1;
    }
    true
}

/// set: the distinct sets the prefix's reads returned must grow one into the next; each is a
/// node (the empty one is the initial node), written by the adds of the elements it is the
/// first to hold and read by the reads that returned it; acknowledged adds nobody saw write
/// a last node. One chain.
fn build_set(c: &Compiled, cut: u32) -> Result<Prefix, Stop> {
    let m = c.ops.len();
    let mut inc = vec![false; m];
    let mut ret = vec![INF; m];
    let mut seen = vec![false; c.paths.len()];
    let mut distinct: Vec<u32> = Vec::new();
    for (i, o) in c.ops.iter().enumerate() {
        if o.inv > cut {
            break;
        }
        if o.kind == Kind::Read && o.done <= cut {
            inc[i] = true;
            ret[i] = o.done;
            if !seen[o.from as usize] {
                seen[o.from as usize] = true;
                distinct.push(o.from);
            }
        }
    }
    distinct.sort_unstable_by_key(|&k| (c.paths[k as usize].1, k));
    // Layer of each distinct set (0: the empty set, the initial node).
    let mut layer_of_set = vec![NONE; c.paths.len()];
    let mut layers = 0u32;
    let mut prev: &[u32] = &[];
    let mut first_layer = vec![NONE; c.nodes()];
    for &k in &distinct {
        let s = c.path(k);
        if s.is_empty() {
            layer_of_set[k as usize] = INIT;
            continue;
        }
        if s.len() == prev.len() || !subset(prev, s) {
            return Err(Stop::Illegal(Witness::Other)); // two reads saw sets neither of which holds the other
        }
        layers += 1;
        layer_of_set[k as usize] = layers;
        for &e in s {
            if first_layer[e as usize] == NONE {
                first_layer[e as usize] = layers;
            }
        }
        prev = s;
    }
    let last = layers + 1;
    let mut node = vec![NONE; m];
    let mut unseen_adds = false;
    for (i, o) in c.ops.iter().enumerate() {
        match o.kind {
            Kind::Read => {
                if inc[i] {
                    node[i] = layer_of_set[o.from as usize];
                }
            }
            _ => {
                let l = first_layer[o.node as usize];
                let done = o.done <= cut;
                if l != NONE {
                    if done && o.status == Status::Fail {
                        return Err(Stop::Illegal(Witness::Other)); // a read holds an element whose add failed
                    }
                    inc[i] = true;
                    node[i] = l;
                    if done && o.status == Status::Ok {
                        ret[i] = o.done;
                    }
                } else if o.inv <= cut && done && o.status == Status::Ok {
                    inc[i] = true;
                    ret[i] = o.done;
                    node[i] = last;
                    unseen_adds = true;
                }
            }
        }
    }
    // An element some read holds that nobody added.
    if prev.iter().any(|&e| c.writer[e as usize] == NONE) {
        return Err(Stop::Illegal(Witness::Other));
    }
    let n = last as usize + 1;
    let mut parent: Vec<u32> = (0..n as u32).map(|k| k.wrapping_sub(1)).collect();
    parent[0] = NONE;
    let mut present = vec![true; n];
    present[last as usize] = unseen_adds;
    Ok(Prefix {
        included: inc.iter().filter(|&&x| x).count(),
        inc,
        ret,
        node,
        parent,
        present,
        parent_by: Vec::new(),
    })
}

/// Why a prefix could not be decided, or why it is illegal.
enum Stop {
    /// A precondition fails: the search decides.
    Unsupported(String),
    Illegal(Witness),
}

/// What makes a prefix illegal, when it is about real time (operation indices; `NONE` for
/// the initial value's writer).
enum Witness {
    /// In one chain, `early` sits before `late` but began after `late` completed.
    Order {
        early: u32,
        late: u32,
    },
    /// Two chains that must each precede the other: `x` completed before `y` began, `u`
    /// completed before `v` began, with `x` and `v` in one chain and `y` and `u` in the other;
    /// `chain` holds each node's chain.
    Cycle {
        x: u32,
        y: u32,
        u: u32,
        v: u32,
        chain: Vec<u32>,
    },
    Other,
}

/// The operations of a prefix (events up to `cut`, inclusive) and the nodes they form.
struct Prefix {
    /// Per operation: included, and its completion as the prefix sees it (`INF` when it
    /// completed later, or with an unknown outcome).
    inc: Vec<bool>,
    ret: Vec<u32>,
    /// Per operation: the node it reads or writes (set: the layer, which depends on the
    /// prefix).
    node: Vec<u32>,
    /// Per node.
    parent: Vec<u32>,
    present: Vec<bool>,
    /// kv: the get whose path set `parent`.
    parent_by: Vec<u32>,
    included: usize,
}

/// Selects the operations of the prefix that ends with event position `cut` (shifted by
/// one; `INF` for the whole history) and links the nodes.
fn build(c: &Compiled, cut: u32) -> Result<Prefix, Stop> {
    if c.model == ModelKind::Set {
        return build_set(c, cut);
    }
    let n = c.nodes();
    let m = c.ops.len();
    let mut inc = vec![false; m];
    let mut ret = vec![INF; m];
    let mut observed = vec![false; n];
    let mut path_seen = vec![false; c.paths.len()];
    let mut work: Vec<u32> = Vec::new();
    let observe = |observed: &mut Vec<bool>, work: &mut Vec<u32>, v: u32| {
        if !observed[v as usize] {
            observed[v as usize] = true;
            work.push(v);
        }
    };
    // Reads that completed, and writes acknowledged, within the prefix.
    for (i, o) in c.ops.iter().enumerate() {
        if o.inv > cut {
            break; // operations are in invocation order
        }
        let done = o.done <= cut;
        match o.kind {
            Kind::Read => {
                if !done || o.status != Status::Ok {
                    continue;
                }
                if o.node == NONE {
                    return Err(Stop::Illegal(Witness::Other)); // nothing produces it
                }
                inc[i] = true;
                ret[i] = o.done;
                if c.model == ModelKind::Kv {
                    // Gets that returned the same string say the same: look at it once.
                    if !path_seen[o.from as usize] {
                        path_seen[o.from as usize] = true;
                        for &p in c.path(o.from) {
                            observe(&mut observed, &mut work, p);
                        }
                    }
                } else {
                    observe(&mut observed, &mut work, o.node);
                }
            }
            Kind::Write | Kind::Cas => {
                if done && o.status == Status::Ok {
                    inc[i] = true;
                    ret[i] = o.done;
                    if o.kind == Kind::Cas {
                        observe(&mut observed, &mut work, o.from);
                    }
                }
            }
        }
    }
    // The writers of observed values took effect, whatever their outcome says; a cas
    // among them observed the value it replaced.
    while let Some(v) = work.pop() {
        if v == INIT {
            continue;
        }
        let w = c.writer[v as usize];
        if w == NONE {
            return Err(Stop::Illegal(Witness::Other)); // a value nobody wrote
        }
        let o = &c.ops[w as usize];
        if o.done <= cut && o.status == Status::Fail {
            return Err(Stop::Illegal(Witness::Other)); // its only write failed
        }
        if !inc[w as usize] {
            inc[w as usize] = true;
            if o.kind == Kind::Cas {
                observe(&mut observed, &mut work, o.from);
            }
        }
    }
    let mut parent = vec![NONE; n];
    let mut present = vec![false; n];
    let mut parent_by = Vec::new();
    present[INIT as usize] = true;
    let mut included = 0;
    for (i, o) in c.ops.iter().enumerate() {
        if !inc[i] {
            continue;
        }
        included += 1;
        if o.kind != Kind::Read {
            present[o.node as usize] = true;
            if o.kind == Kind::Cas {
                parent[o.node as usize] = o.from;
            }
        }
    }
    if c.model == ModelKind::Kv {
        // Each get's path says what came right before each append it saw.
        parent_by = vec![NONE; n];
        path_seen.fill(false);
        for (i, o) in c.ops.iter().enumerate() {
            if !inc[i] || o.kind != Kind::Read || path_seen[o.from as usize] {
                continue;
            }
            path_seen[o.from as usize] = true;
            let path = c.path(o.from);
            let (mut prev, rest) = match path.first() {
                Some(&p) if c.is_put(p) => (p, &path[1..]),
                _ => (INIT, path),
            };
            for &p in rest {
                match parent[p as usize] {
                    NONE => {
                        parent[p as usize] = prev;
                        parent_by[p as usize] = i as u32;
                    }
                    q if q == prev => {}
                    _ => return Err(Stop::Illegal(Witness::Other)), // two gets disagree
                }
                prev = p;
            }
        }
    }
    Ok(Prefix {
        inc,
        ret,
        node: c.ops.iter().map(|o| o.node).collect(),
        parent,
        present,
        parent_by,
        included,
    })
}

/// A legal prefix laid out: chains, depths and a linearization.
struct Layout {
    child: Vec<u32>,
    chain: Vec<u32>,
    /// Per chain: earliest completion and latest invocation.
    a: Vec<u32>,
    b: Vec<u32>,
    /// The first node of each chain.
    root: Vec<u32>,
    /// Operations (indices into `Compiled::ops`) in linearization order.
    order: Vec<u32>,
}

/// Decides a prefix: a layout if it is linearizable.
fn decide(c: &Compiled, p: &Prefix) -> Result<Layout, Stop> {
    let n = p.parent.len();
    let mut child = vec![NONE; n];
    for v in 0..n {
        let u = p.parent[v];
        if p.present[v] && u != NONE {
            if child[u as usize] != NONE {
                return Err(Stop::Illegal(Witness::Other)); // two values follow one
            }
            child[u as usize] = v as u32;
        }
    }
    let mut chain = vec![NONE; n];
    let mut depth = vec![0u32; n];
    let mut root = Vec::new();
    for v in 0..n {
        if p.present[v] && p.parent[v] == NONE {
            let id = root.len() as u32;
            root.push(v as u32);
            let (mut x, mut d) = (v as u32, 0);
            while x != NONE {
                chain[x as usize] = id;
                depth[x as usize] = d;
                d += 1;
                x = child[x as usize];
            }
        }
    }
    if (0..n).any(|v| p.present[v] && chain[v] == NONE) {
        return Err(Stop::Unsupported(
            "cas operations that wait on each other in a cycle".into(),
        ));
    }
    // (chain << 32 | position, invocation, completion, operation)
    let mut entries: Vec<(u64, u32, u32, u32)> = Vec::with_capacity(p.included + 1);
    entries.push(((chain[INIT as usize] as u64) << 32, 0, 0, NONE));
    for (i, o) in c.ops.iter().enumerate() {
        if !p.inc[i] {
            continue;
        }
        let reader = o.kind == Kind::Read;
        let v = p.node[i] as usize;
        let pos = 2 * depth[v] as u64 + reader as u64;
        entries.push(((chain[v] as u64) << 32 | pos, o.inv, p.ret[i], i as u32));
    }
    entries.sort_unstable();
    let chains = root.len();
    let mut a = vec![INF; chains];
    let mut b = vec![0u32; chains];
    // The operations that set them.
    let mut a_op = vec![NONE; chains];
    let mut b_op = vec![NONE; chains];
    let mut range = vec![(0usize, 0usize); chains];
    let mut i = 0;
    while i < entries.len() {
        let ch = (entries[i].0 >> 32) as usize;
        let start = i;
        // Latest invocation at earlier positions of this chain.
        let (mut before, mut before_op) = (0u32, NONE);
        while i < entries.len() && (entries[i].0 >> 32) as usize == ch {
            let pos = entries[i].0;
            let (mut lo, mut lo_op, mut hi, mut hi_op) = (INF, NONE, 0u32, NONE);
            while i < entries.len() && entries[i].0 == pos {
                let (_, inv, ret, op) = entries[i];
                if ret < lo || lo_op == NONE && ret == lo {
                    (lo, lo_op) = (ret, op);
                }
                if inv >= hi {
                    (hi, hi_op) = (inv, op);
                }
                i += 1;
            }
            if lo < before {
                // Returned before an earlier one began.
                return Err(Stop::Illegal(Witness::Order {
                    early: before_op,
                    late: lo_op,
                }));
            }
            if hi >= before {
                (before, before_op) = (hi, hi_op);
            }
            if lo < a[ch] {
                (a[ch], a_op[ch]) = (lo, lo_op);
            }
        }
        (b[ch], b_op[ch]) = (before, before_op);
        range[ch] = (start, i);
    }
    let mut by_key: Vec<u32> = (0..chains as u32).collect();
    by_key.sort_unstable_by_key(|&x| a[x as usize].min(b[x as usize]));
    let (mut latest, mut latest_chain) = (0u32, NONE);
    for &j in &by_key {
        let j = j as usize;
        if a[j] < latest {
            // Two chains must each precede the other.
            let i = latest_chain as usize;
            return Err(Stop::Illegal(Witness::Cycle {
                x: a_op[i],
                y: b_op[j],
                u: a_op[j],
                v: b_op[i],
                chain,
            }));
        }
        if b[j] >= latest {
            (latest, latest_chain) = (b[j], j as u32);
        }
    }
    let mut order = Vec::with_capacity(p.included);
    for &x in &by_key {
        let (s, e) = range[x as usize];
        order.extend(entries[s..e].iter().map(|e| e.3).filter(|&o| o != NONE));
    }
    Ok(Layout {
        child,
        chain,
        a,
        b,
        root,
        order,
    })
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

/// What real-time order the shortest illegal prefix (ending with event `end`, completed by
/// `z`) breaks, for when the operation's own value says nothing simpler: the two operations
/// that cannot be ordered, and the operation (if any) that certainly took effect too early.
fn real_time_story(
    c: &Compiled,
    ops: &[&Operation],
    end: u32,
    z: u32,
) -> (String, Option<OpSummary>) {
    let summary = |o: u32| OpSummary::of(ops[c.ops[o as usize].src as usize]);
    let name = |o: u32| {
        if o == NONE {
            "the start of the history".to_string()
        } else if o == z {
            format!("this {}", summary(o).f)
        } else {
            let s = summary(o);
            format!("{} ({})", s.describe(), s.locate())
        }
    };
    let Ok(p) = build(c, end) else {
        return (String::new(), None);
    };
    let witness = match decide(c, &p) {
        Err(Stop::Illegal(w)) => w,
        _ => Witness::Other,
    };
    // The chain of z's value is the one whose run `x ... v` cannot be interrupted.
    let witness = match witness {
        Witness::Cycle { x, y, u, v, chain } => {
            let of = |o: u32| {
                let node = if o == NONE { INIT } else { p.node[o as usize] };
                chain.get(node as usize).copied().unwrap_or(NONE)
            };
            let zs = of(z);
            if zs == of(u) && zs != of(v) {
                Witness::Cycle {
                    x: u,
                    y: v,
                    u: x,
                    v: y,
                    chain,
                }
            } else {
                Witness::Cycle { x, y, u, v, chain }
            }
        }
        w => w,
    };
    match witness {
        Witness::Order { early, late } if early != NONE && late != NONE => (
            format!(
                ", but {} must come before {} in the run of writes that value belongs to, \
                 and began only after it had completed",
                name(early),
                name(late)
            ),
            None,
        ),
        Witness::Cycle {
            x,
            y,
            u,
            v,
            chain: _,
        } if u != NONE && y != NONE && v != NONE => {
            // `x ... v` is one run of writes that nothing may interrupt; `y ... u` had to come
            // after `x` and before `v`.
            let text = if y == u {
                format!(
                    ", but {} would have to take effect inside the run of writes that value \
                     belongs to, which nothing can interrupt: it began after {} had completed and \
                     completed before {} began",
                    name(u),
                    name(x),
                    name(v)
                )
            } else {
                format!(
                    ", but {} began after {} had completed and {} completed before {} began: \
                     both would have to take effect inside the run of writes that value belongs \
                     to, which nothing can interrupt",
                    name(y),
                    name(x),
                    name(u),
                    name(v)
                )
            };
            (text, Some(summary(u)))
        }
        _ => (String::new(), None),
    }
}

/// Ways of saying "one of these states".
fn one_of(states: &[String], total: usize) -> String {
    if total <= 6 {
        states.join(" or ")
    } else {
        format!(
            "one of {total} values: {}, ...",
            states[..6.min(states.len())].join(", ")
        )
    }
}

/// Explains an illegal partition from its shortest illegal prefix.
/// `Ok(None)` when time ran out.
fn explain(
    key: &Option<String>,
    ops: &[&Operation],
    c: &Compiled,
    out_of_time: &dyn Fn() -> Option<&'static str>,
) -> Result<Option<Explanation>, String> {
    let mut cuts: Vec<u32> = c.ops.iter().map(|o| o.done).filter(|&d| d != INF).collect();
    cuts.sort_unstable();
    let internal = || "the reads-from procedure lost track of the violation".to_string();
    match cuts.last() {
        Some(&last) if illegal(c, last)? => {}
        _ => return Err(internal()),
    }
    let (mut lo, mut hi) = (0, cuts.len() - 1);
    while lo < hi {
        if out_of_time().is_some() {
            return Ok(None);
        }
        let mid = lo + (hi - lo) / 2;
        if illegal(c, cuts[mid])? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let end = cuts[lo];
    let z = c
        .ops
        .iter()
        .position(|o| o.done == end)
        .ok_or_else(internal)?;
    let t = match build(c, end - 1) {
        Ok(t) => t,
        Err(Stop::Unsupported(why)) => return Err(why),
        Err(Stop::Illegal(_)) => return Err(internal()),
    };
    let lay = match decide(c, &t) {
        Ok(l) => l,
        Err(Stop::Unsupported(why)) => return Err(why),
        Err(Stop::Illegal(_)) => return Err(internal()),
    };
    if c.model == ModelKind::Set {
        return Ok(Some(explain_set(key, ops, c, &t, &lay, z as u32, end)));
    }
    let zo = c.ops[z];
    let (zi, zr) = (zo.inv, end);
    let n = c.nodes();
    let summary = |o: u32| OpSummary::of(ops[c.ops[o as usize].src as usize]);

    // Per node of the legal prefix: the earliest completion among operations on deeper nodes
    // of its chain, and the latest invocation among the writers leading to it.
    let mut here = vec![INF; n];
    for (i, o) in c.ops.iter().enumerate() {
        if t.inc[i] {
            let v = o.node as usize;
            here[v] = here[v].min(t.ret[i]);
        }
    }
    let mut deeper = vec![INF; n];
    let mut start = vec![0u32; n];
    let mut nodes_of_chain: Vec<u32> = Vec::new();
    for &r in &lay.root {
        nodes_of_chain.clear();
        let mut x = r;
        let mut st = 0u32;
        while x != NONE {
            let w = c.writer[x as usize];
            if w != NONE && x != INIT {
                st = st.max(c.ops[w as usize].inv);
            }
            start[x as usize] = st;
            nodes_of_chain.push(x);
            x = lay.child[x as usize];
        }
        let mut m = INF;
        for &x in nodes_of_chain.iter().rev() {
            deeper[x as usize] = m;
            m = m.min(here[x as usize]);
        }
    }
    // Chains with an operation that completed before z began: the two latest invocations.
    let mut top: [(u32, u32); 2] = [(0, NONE); 2];
    for (y, (&a, &b)) in lay.a.iter().zip(&lay.b).enumerate() {
        if a < zi {
            let e = (b, y as u32);
            if e.0 > top[0].0 || top[0].1 == NONE {
                top[1] = top[0];
                top[0] = e;
            } else if e.0 > top[1].0 || top[1].1 == NONE {
                top[1] = e;
            }
        }
    }
    // A chain that must follow v's chain and had already begun when z began.
    let after_chain = |v: u32| -> Option<u32> {
        let x = lay.chain[v as usize];
        let best = if top[0].1 == x { top[1] } else { top[0] };
        (best.1 != NONE && lay.a[x as usize] < best.0).then_some(best.1)
    };
    let possible = |v: u32| -> bool {
        t.present[v as usize]
            && start[v as usize] < zr
            && deeper[v as usize] >= zi
            && after_chain(v).is_none()
    };
    let show_node = |v: u32| -> String {
        if c.model != ModelKind::Kv {
            return show(&c.values[v as usize]);
        }
        let mut parts: Vec<u32> = Vec::new();
        let mut x = v;
        while x != NONE && x != INIT {
            parts.push(x);
            if c.is_put(x) {
                break;
            }
            x = t.parent[x as usize];
        }
        let first = parts.last().copied();
        let mut s = String::new();
        for &p in parts.iter().rev() {
            s.push_str(&c.text[p as usize]);
        }
        match first {
            Some(f) if x == NONE && !c.is_put(f) => {
                format!("(a value ending with {:?})", s)
            }
            _ => format!("{s:?}"),
        }
    };
    let mut possible_nodes: Vec<u32> = (0..n as u32).filter(|&v| possible(v)).collect();
    possible_nodes.sort_by_key(|&v| (start[v as usize], v));
    let total = possible_nodes.len();
    let states: Vec<String> = possible_nodes.iter().map(|&v| show_node(v)).collect();

    if zo.kind != Kind::Read && zo.status == Status::Fail {
        // Its failure leaves a value someone observed without a write.
        return failed_write(key, ops, c, &t, z as u32, end, &lay).map(Some);
    }
    let op = summary(z as u32);
    let zsrc = ops[zo.src as usize];
    // What z needs, and the node that holds it.
    let (needs, need) = match (c.model, zo.kind) {
        (ModelKind::Kv, _) => (format!("value {:?}", text_of(&zsrc.output)), zo.node),
        (_, Kind::Cas) => (
            format!("value {}", show(&c.values[zo.from as usize])),
            zo.from,
        ),
        _ => (
            format!("value {}", show(&c.values[zo.node as usize])),
            zo.node,
        ),
    };
    let by_then = if states.is_empty() {
        String::new()
    } else {
        format!(
            "; by then the state could only be {}",
            one_of(&states, total)
        )
    };
    let mut after: Option<OpSummary> = None;
    let mut fork: Option<String> = None;
    // kv: the get's path against what the legal prefix already fixed.
    if c.model == ModelKind::Kv && zo.from != NONE {
        let path = c.path(zo.from);
        let (mut prev, rest) = match path.first() {
            Some(&p) if c.is_put(p) => (p, &path[1..]),
            _ => (INIT, path),
        };
        for &p in rest {
            let q = t.parent[p as usize];
            let other = if t.present[prev as usize] {
                lay.child[prev as usize]
            } else {
                NONE
            };
            if t.present[p as usize] && q != NONE && q != prev {
                let by = t.parent_by[p as usize];
                after = Some(summary(c.writer[p as usize]));
                fork = Some(format!(
                    ", but {} ({}) saw {:?} follow {}",
                    summary(by).describe(),
                    summary(by).locate(),
                    c.text[p as usize],
                    show_node(q)
                ));
                break;
            }
            if other != NONE && other != p {
                let w = c.writer[other as usize];
                after = Some(summary(w));
                fork = Some(format!(
                    ", but {} ({}) is what follows {}: an append extends the whole value",
                    summary(w).describe(),
                    summary(w).locate(),
                    show_node(prev)
                ));
                break;
            }
            prev = p;
        }
    }
    // cas: the value it needs was already taken by another cas.
    if c.model == ModelKind::CasRegister
        && zo.kind == Kind::Cas
        && t.present[need as usize]
        && lay.child[need as usize] != NONE
    {
        let w = c.writer[lay.child[need as usize] as usize];
        after = Some(summary(w));
        fork = Some(format!(
            ", but {} ({}) replaced that value too, and nothing writes it again",
            summary(w).describe(),
            summary(w).locate()
        ));
    }
    let could = if let Some(f) = fork {
        format!("{f}{by_then}")
    } else if need == NONE || (need != INIT && c.writer[need as usize] == NONE) {
        let what = if c.model == ModelKind::Kv {
            "which no sequence of puts and appends produces"
        } else {
            "which no operation writes"
        };
        format!(", {what}{by_then}")
    } else if t.present[need as usize] && !possible(need) && start[need as usize] < zr {
        // Overwritten before z began: by the next write of its chain, or by a chain that
        // must follow its chain.
        let w = if deeper[need as usize] < zi {
            c.writer[lay.child[need as usize] as usize]
        } else {
            // Of the chains that must follow its chain and had begun before z did, the
            // first in the linearization, preferring an acknowledged write.
            let x = lay.chain[need as usize] as usize;
            (0..lay.root.len())
                .filter(|&y| y != x && lay.a[y] < zi && lay.a[x] < lay.b[y])
                .map(|y| c.writer[lay.root[y] as usize])
                .filter(|&w| w != NONE)
                .min_by_key(|&w| {
                    let o = &c.ops[w as usize];
                    let y = lay.chain[o.node as usize] as usize;
                    (o.status != Status::Ok, lay.a[y].min(lay.b[y]))
                })
                .unwrap_or(NONE)
        };
        if w == NONE {
            by_then
        } else {
            let a = summary(w);
            let s = if states.is_empty() {
                String::new()
            } else {
                format!(" the state could only be {}", one_of(&states, total))
            };
            let text = format!(
                ", but once {} ({}) had taken effect{}",
                a.describe(),
                a.locate(),
                if s.is_empty() {
                    " it was gone".to_string()
                } else {
                    s
                }
            );
            after = Some(a);
            text
        }
    } else {
        // Its value, or one before it in its chain, was written only after it returned.
        let mut w = NONE;
        if t.present[need as usize] {
            let mut x = need;
            while x != NONE && x != INIT {
                let o = c.writer[x as usize];
                if o != NONE && c.ops[o as usize].inv >= zr {
                    w = o;
                }
                x = t.parent[x as usize];
            }
        } else if need != INIT && c.writer[need as usize] != NONE {
            let o = c.writer[need as usize];
            if c.ops[o as usize].inv >= zr {
                w = o;
            }
        }
        if w == NONE {
            let (text, a) = real_time_story(c, ops, end, z as u32);
            after = a;
            format!("{text}{by_then}")
        } else {
            let a = summary(w);
            let own = c.ops[w as usize].node == need;
            format!(
                ", {} {} ({}), which began only after it returned{by_then}",
                if own {
                    "but it is written by"
                } else {
                    "which comes only after"
                },
                a.describe(),
                a.locate()
            )
        }
    };
    let message = format!(
        "{}{} ({}) cannot be linearized: it needs {}{}",
        crate::linearizable::key_prefix(key),
        op.describe(),
        op.locate(),
        needs,
        could
    );

    let (steps, linearized) = linearization(ops, c, &lay);
    let end_event = (end - 1) as usize;
    Ok(Some(Explanation {
        key: key.clone(),
        message,
        op,
        needs,
        states,
        after,
        prefix_end_event: end_event,
        prefix_ops: ops.iter().filter(|o| o.invoke <= end_event).count(),
        prefix_confirmed: true,
        longest_linearization: steps,
        linearized,
    }))
}

/// The shortest illegal prefix ends with the failure of a write whose value an operation
/// observed: that operation is the one that cannot be linearized.
fn failed_write(
    key: &Option<String>,
    ops: &[&Operation],
    c: &Compiled,
    t: &Prefix,
    z: u32,
    end: u32,
    lay: &Layout,
) -> Result<Explanation, String> {
    let node = c.ops[z as usize].node;
    let observer = c.ops.iter().enumerate().position(|(i, o)| {
        t.inc[i]
            && match (c.model, o.kind) {
                (ModelKind::Kv, Kind::Read) => c.path(o.from).contains(&node),
                (_, Kind::Read) => o.node == node,
                (_, Kind::Cas) => o.from == node,
                _ => false,
            }
    });
    let Some(v) = observer else {
        return Err("the reads-from procedure lost track of the violation".into());
    };
    let summary = |o: usize| OpSummary::of(ops[c.ops[o].src as usize]);
    let op = summary(v);
    let w = summary(z as usize);
    let needs = match (c.model, c.ops[v].kind) {
        (ModelKind::Kv, _) => format!("value {:?}", text_of(&ops[c.ops[v].src as usize].output)),
        (_, Kind::Cas) => format!("value {}", show(&c.values[node as usize])),
        _ => format!("value {}", show(&c.values[node as usize])),
    };
    let message = format!(
        "{}{} ({}) cannot be linearized: it needs {}, which only {} ({}) writes, and that failed",
        crate::linearizable::key_prefix(key),
        op.describe(),
        op.locate(),
        needs,
        w.describe(),
        w.locate()
    );
    let (steps, linearized) = linearization(ops, c, lay);
    let end_event = (end - 1) as usize;
    Ok(Explanation {
        key: key.clone(),
        message,
        op,
        needs,
        states: Vec::new(),
        after: None,
        prefix_end_event: end_event,
        prefix_ops: ops.iter().filter(|o| o.invoke <= end_event).count(),
        prefix_confirmed: true,
        longest_linearization: steps,
        linearized,
    })
}

/// Elements shown of a set, at most.
const SHOW_ELEMENTS: usize = 16;

/// `#{1 2 3}`, or `#{1 2 ... (40 elements)}` for a big set.
fn show_set(c: &Compiled, es: &[u32]) -> String {
    // Numbers in numeric order, then anything else in the order first seen.
    let mut sorted: Vec<(Option<f64>, u32)> = es
        .iter()
        .map(|&e| (c.values[e as usize].as_f64(), e))
        .collect();
    let order = |a: &(Option<f64>, u32), b: &(Option<f64>, u32)| match (a.0, b.0) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.1.cmp(&b.1),
    };
    if sorted.len() > SHOW_ELEMENTS {
        sorted.select_nth_unstable_by(SHOW_ELEMENTS, order);
        sorted.truncate(SHOW_ELEMENTS);
    }
    sorted.sort_by(order);
    let mut out: Vec<String> = sorted
        .iter()
        .take(SHOW_ELEMENTS)
        .map(|&(_, e)| show(&c.values[e as usize]))
        .collect();
    if es.len() > SHOW_ELEMENTS {
        out.push(format!("... ({} elements)", es.len()));
    }
    format!("#{{{}}}", out.join(" "))
}

/// A big set shown beside the set a read needed: `#{1 2 ... (40 elements)}` then what it has
/// that the read lacks, and the reverse.
fn show_set_vs(c: &Compiled, es: &[u32], needed: &[u32]) -> String {
    let shown = show_set(c, es);
    if es.len() <= SHOW_ELEMENTS {
        return shown;
    }
    let list = |a: &[u32], b: &[u32]| -> Vec<String> {
        a.iter()
            .filter(|e| b.binary_search(e).is_err())
            .take(4)
            .map(|&e| show(&c.values[e as usize]))
            .collect()
    };
    let (with, without) = (list(es, needed), list(needed, es));
    let mut parts = Vec::new();
    if !with.is_empty() {
        parts.push(format!("with {}", with.join(" ")));
    }
    if !without.is_empty() {
        parts.push(format!("without {}", without.join(" ")));
    }
    if parts.is_empty() {
        shown
    } else {
        format!("{shown} ({})", parts.join(", "))
    }
}

/// set: explains why read `z` (or the read that saw the element of add `z`, when `z` is an
/// add that failed) cannot take its place among the layers of the legal prefix `t`.
fn explain_set(
    key: &Option<String>,
    ops: &[&Operation],
    c: &Compiled,
    t: &Prefix,
    lay: &Layout,
    z: u32,
    end: u32,
) -> Explanation {
    let summary = |o: u32| OpSummary::of(ops[c.ops[o as usize].src as usize]);
    let (steps, linearized) = linearization(ops, c, lay);
    let end_event = (end - 1) as usize;
    let zo = c.ops[z as usize];
    // The read that cannot be placed, and the set it needs.
    let (victim, failed) = if zo.kind == Kind::Read {
        (z, None)
    } else {
        let e = zo.node;
        let r = (0..c.ops.len())
            .find(|&i| {
                t.inc[i]
                    && c.ops[i].kind == Kind::Read
                    && c.path(c.ops[i].from).binary_search(&e).is_ok()
            })
            .unwrap_or(z as usize) as u32;
        (r, Some(e))
    };
    let vo = c.ops[victim as usize];
    let sz: &[u32] = if vo.kind == Kind::Read {
        c.path(vo.from)
    } else {
        &[]
    };
    let (zi, zr) = (vo.inv, vo.done.min(end));
    let needs = format!("set {}", show_set(c, sz));
    let holds = |set: &[u32], e: u32| set.binary_search(&e).is_ok();
    // The layers of the legal prefix: each one's set (the initial node holds nothing; the
    // last node, of adds nobody saw, holds everything).
    let n = t.parent.len();
    let mut layer_set: Vec<Option<u32>> = vec![None; n];
    let mut layer_reader: Vec<u32> = vec![NONE; n];
    let (mut rd, mut wr) = (vec![INF; n], vec![INF; n]);
    for (i, o) in c.ops.iter().enumerate() {
        if !t.inc[i] {
            continue;
        }
        let k = t.node[i] as usize;
        if o.kind == Kind::Read {
            layer_set[k] = Some(o.from);
            layer_reader[k] = i as u32;
            rd[k] = rd[k].min(t.ret[i]);
        } else {
            wr[k] = wr[k].min(t.ret[i]);
        }
    }
    // Earliest completion at layers after k.
    let mut later = vec![INF; n + 1];
    for k in (0..n).rev() {
        later[k] = later[k + 1].min(rd[k]).min(wr[k]);
    }
    // Adds come in any order within a layer, so the states while z was in flight are every
    // set between the elements certainly added before it began (an add done, or something
    // that must follow it done) and those that may have been added before it returned (the
    // add begun, and every read that lacks it begun).
    // Latest invocation of a read at layers before k.
    let mut reads_before = vec![0u32; n + 1];
    for (i, o) in c.ops.iter().enumerate() {
        if t.inc[i] && o.kind == Kind::Read {
            let k = t.node[i] as usize + 1;
            reads_before[k] = reads_before[k].max(o.inv);
        }
    }
    for k in 1..=n {
        reads_before[k] = reads_before[k].max(reads_before[k - 1]);
    }
    let (mut lo, mut hi): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for (i, o) in c.ops.iter().enumerate() {
        if !t.inc[i] || o.kind == Kind::Read {
            continue;
        }
        let k = t.node[i] as usize;
        if t.ret[i].min(rd[k]).min(later[k + 1]) < zi {
            lo.push(o.node);
        }
        if o.inv < zr && reads_before[k] < zr {
            hi.push(o.node);
        }
    }
    lo.sort_unstable();
    hi.sort_unstable();
    let states: Vec<String> = if lo == hi {
        vec![show_set_vs(c, &lo, sz)]
    } else {
        vec![show_set_vs(c, &lo, sz), show_set_vs(c, &hi, sz)]
    };
    let range = if lo == hi {
        format!("the state could only be {}", states[0])
    } else {
        format!(
            "the state held at least {} and at most {}",
            states[0], states[1]
        )
    };
    let by_then = format!("; by then {range}");
    let mut after = None;
    let could = if let Some(e) = failed {
        let a = summary(z);
        let s = format!(
            ", which holds {}, but only {} ({}) adds it, and that failed",
            show(&c.values[e as usize]),
            a.describe(),
            a.locate()
        );
        s
    } else if let Some(&f) = sz.iter().find(|&&f| c.writer[f as usize] == NONE) {
        format!(
            ", but nothing adds {}{by_then}",
            show(&c.values[f as usize])
        )
    } else if let Some(k) = (1..n).find(|&k| {
        layer_set[k].is_some_and(|p| {
            let l = c.path(p);
            !subset(l, sz) && !subset(sz, l)
        })
    }) {
        let l = c.path(layer_set[k].unwrap_or(0));
        let e = l.iter().copied().find(|&e| !holds(sz, e)).unwrap_or(0);
        let f = sz.iter().copied().find(|&f| !holds(l, f)).unwrap_or(0);
        let r = summary(layer_reader[k]);
        after = (c.writer[e as usize] != NONE).then(|| summary(c.writer[e as usize]));
        format!(
            ", but {} ({}) saw {}, which it lacks, and lacked {}, which it holds: a set only grows",
            r.describe(),
            r.locate(),
            show(&c.values[e as usize]),
            show(&c.values[f as usize])
        )
    } else {
        // An element it lacks that was certainly added before it began.
        let missing = c
            .ops
            .iter()
            .enumerate()
            .filter(|&(i, o)| t.inc[i] && o.kind != Kind::Read && !holds(sz, o.node))
            .map(|(i, _)| {
                let k = t.node[i] as usize;
                let proof = t.ret[i].min(rd[k]).min(later[k + 1]);
                (proof, i as u32)
            })
            .filter(|&(proof, _)| proof < zi)
            .min();
        // Something that must precede it, begun only after it returned.
        let early = c
            .ops
            .iter()
            .enumerate()
            .filter(|&(i, o)| {
                t.inc[i]
                    && o.inv >= zr
                    && match o.kind {
                        Kind::Read => {
                            let l = c.path(o.from);
                            l.len() < sz.len() && subset(l, sz)
                        }
                        _ => holds(sz, o.node),
                    }
            })
            .map(|(i, o)| (o.inv, i as u32))
            .min();
        if let Some((_, w)) = missing {
            let a = summary(w);
            let s = format!(
                ", but once {} ({}) had taken effect every state held {}: {range}",
                a.describe(),
                a.locate(),
                show(&c.values[c.ops[w as usize].node as usize]),
            );
            after = Some(a);
            s
        } else if let Some((_, w)) = early {
            let a = summary(w);
            let what = if c.ops[w as usize].kind == Kind::Read {
                "which saw less, so came before it,"
            } else {
                "whose element it holds,"
            };
            format!(
                ", but {} ({}), {what} began only after it returned{by_then}",
                a.describe(),
                a.locate()
            )
        } else {
            by_then
        }
    };
    let op = summary(victim);
    let message = format!(
        "{}{} ({}) cannot be linearized: it needs {}{}",
        crate::linearizable::key_prefix(key),
        op.describe(),
        op.locate(),
        needs,
        could
    );
    Explanation {
        key: key.clone(),
        message,
        op,
        needs,
        states,
        after,
        prefix_end_event: end_event,
        prefix_ops: ops.iter().filter(|o| o.invoke <= end_event).count(),
        prefix_confirmed: true,
        longest_linearization: steps,
        linearized,
    }
}

/// A legal prefix's linearization (its last `MAX_STEPS` steps, with the state after each)
/// and its length.
fn linearization(ops: &[&Operation], c: &Compiled, lay: &Layout) -> (Vec<LinearizedStep>, usize) {
    let summary = |o: u32| OpSummary::of(ops[c.ops[o as usize].src as usize]);
    let order = &lay.order;
    let skip = order.len().saturating_sub(MAX_STEPS);
    let mut steps = Vec::with_capacity(order.len() - skip);
    let mut cur: Vec<u32> = Vec::new();
    let mut elements: Vec<u32> = Vec::new();
    let mut reg = INIT;
    for (k, &o) in order.iter().enumerate() {
        let u = &c.ops[o as usize];
        if u.kind != Kind::Read {
            if c.model == ModelKind::Set {
                elements.push(u.node);
            } else if c.model == ModelKind::Kv {
                if c.is_put(u.node) {
                    cur.clear();
                }
                cur.push(u.node);
            } else {
                reg = u.node;
            }
        }
        if k < skip {
            continue;
        }
        let state = if c.model == ModelKind::Set {
            show_set(c, &elements)
        } else if c.model == ModelKind::Kv {
            let mut s = String::new();
            for &p in &cur {
                s.push_str(&c.text[p as usize]);
            }
            format!("{s:?}")
        } else {
            show(&c.values[reg as usize])
        };
        steps.push(LinearizedStep {
            op: summary(o),
            state,
        });
    }
    (steps, order.len())
}
