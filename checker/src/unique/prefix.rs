//! The operations of a prefix and how their nodes link (parents), or why it is illegal
//! outright.

use super::{Compiled, Kind, INF, INIT, NONE};
use crate::history::Status;
use crate::model::ModelKind;

/// Whether sorted `a` is a subset of sorted `b`.
pub(super) fn subset(a: &[u32], b: &[u32]) -> bool {
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
pub(super) enum Stop {
    /// A precondition fails: the search decides.
    Unsupported(String),
    Illegal(Witness),
}

/// What makes a prefix illegal, when it is about real time (operation indices; `NONE` for
/// the initial value's writer).
pub(super) enum Witness {
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
pub(super) struct Prefix {
    /// Per operation: included, and its completion as the prefix sees it (`INF` when it
    /// completed later, or with an unknown outcome).
    pub(super) inc: Vec<bool>,
    pub(super) ret: Vec<u32>,
    /// Per operation: the node it reads or writes (set: the layer, which depends on the
    /// prefix).
    pub(super) node: Vec<u32>,
    /// Per node.
    pub(super) parent: Vec<u32>,
    pub(super) present: Vec<bool>,
    /// kv: the get whose path set `parent`.
    pub(super) parent_by: Vec<u32>,
    pub(super) included: usize,
}

/// Selects the operations of the prefix that ends with event position `cut` (shifted by
/// one; `INF` for the whole history) and links the nodes.
pub(super) fn build(c: &Compiled, cut: u32) -> Result<Prefix, Stop> {
    if c.model == ModelKind::Set {
        return build_set(c, cut);
    }
    let mut sel = Selection::new(c);
    sel.completed(c, cut)?;
    sel.writers(c, cut)?;
    let Selection {
        inc,
        ret,
        mut path_seen,
        ..
    } = sel;
    let n = c.nodes();
    let mut parent = vec![NONE; n];
    let mut present = vec![false; n];
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
    let parent_by = if c.model == ModelKind::Kv {
        path_seen.fill(false);
        kv_parents(c, &inc, &mut parent, &mut path_seen)?
    } else {
        Vec::new()
    };
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

/// The operations a prefix includes, grown from what its operations observed.
struct Selection {
    inc: Vec<bool>,
    ret: Vec<u32>,
    observed: Vec<bool>,
    /// kv: the get results already looked at (gets that returned one string say the same).
    path_seen: Vec<bool>,
    /// Observed values whose writer is not handled yet.
    work: Vec<u32>,
}

impl Selection {
    fn new(c: &Compiled) -> Selection {
        let m = c.ops.len();
        Selection {
            inc: vec![false; m],
            ret: vec![INF; m],
            observed: vec![false; c.nodes()],
            path_seen: vec![false; c.paths.len()],
            work: Vec::new(),
        }
    }

    fn observe(&mut self, v: u32) {
        if !self.observed[v as usize] {
            self.observed[v as usize] = true;
            self.work.push(v);
        }
    }

    /// Reads that completed, and writes acknowledged, within the prefix.
    fn completed(&mut self, c: &Compiled, cut: u32) -> Result<(), Stop> {
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
                    self.inc[i] = true;
                    self.ret[i] = o.done;
                    if c.model == ModelKind::Kv {
                        if !self.path_seen[o.from as usize] {
                            self.path_seen[o.from as usize] = true;
                            for &p in c.path(o.from) {
                                self.observe(p);
                            }
                        }
                    } else {
                        self.observe(o.node);
                    }
                }
                Kind::Write | Kind::Cas => {
                    if done && o.status == Status::Ok {
                        self.inc[i] = true;
                        self.ret[i] = o.done;
                        if o.kind == Kind::Cas {
                            self.observe(o.from);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The writers of observed values took effect, whatever their outcome says; a cas
    /// among them observed the value it replaced.
    fn writers(&mut self, c: &Compiled, cut: u32) -> Result<(), Stop> {
        while let Some(v) = self.work.pop() {
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
            if !self.inc[w as usize] {
                self.inc[w as usize] = true;
                if o.kind == Kind::Cas {
                    self.observe(o.from);
                }
            }
        }
        Ok(())
    }
}

/// kv: each get's path says what came right before each append it saw; the get that said
/// so first, per node.
fn kv_parents(
    c: &Compiled,
    inc: &[bool],
    parent: &mut [u32],
    path_seen: &mut [bool],
) -> Result<Vec<u32>, Stop> {
    let mut parent_by = vec![NONE; c.nodes()];
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
    Ok(parent_by)
}
