//! Explains an illegal register, cas-register or kv partition from its shortest illegal
//! prefix (sets: `explain_set.rs`), and lays out a legal prefix's linearization.

use super::chains::{decide, Layout};
use super::explain_set::{explain_set, show_set};
use super::prefix::{build, Prefix, Stop, Witness};
use super::{illegal, Compiled, Kind, INF, INIT, NONE};
use crate::answer::{Explanation, LinearizedStep, MAX_STEPS};
use crate::history::{show, Operation, Status};
use crate::model::{text_of, ModelKind};

/// What real-time order the shortest illegal prefix (ending with event `end`, completed by
/// `z`) breaks, for when the operation's own value says nothing simpler: the two operations
/// that cannot be ordered, and the operation (if any) that certainly took effect too early.
fn real_time_story(
    c: &Compiled,
    ops: &[&Operation],
    end: u32,
    z: u32,
) -> (String, Option<Operation>) {
    let summary = |o: u32| Operation::clone(ops[c.ops[o as usize].src as usize]);
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
pub(super) fn explain(
    key: &Option<String>,
    ops: &[&Operation],
    c: &Compiled,
    out_of_time: &dyn Fn() -> Option<&'static str>,
) -> Result<Option<Explanation>, String> {
    let Some((end, z)) = shortest_illegal_prefix(c, out_of_time)? else {
        return Ok(None);
    };
    let s = Scene::new(key, ops, c, end, z)?;
    if c.model == ModelKind::Set {
        return Ok(Some(explain_set(&s)));
    }
    let zo = c.ops[z as usize];
    if zo.kind != Kind::Read && zo.status == Status::Fail {
        // Its failure leaves a value someone observed without a write.
        return failed_write(&s).map(Some);
    }
    Ok(Some(explain_value(&s)))
}

fn lost_track() -> String {
    "the reads-from procedure lost track of the violation".to_string()
}

/// The completion that ends the shortest illegal prefix (found by bisection) and the
/// operation that completes there. `Ok(None)` when time ran out.
fn shortest_illegal_prefix(
    c: &Compiled,
    out_of_time: &dyn Fn() -> Option<&'static str>,
) -> Result<Option<(u32, u32)>, String> {
    let mut cuts: Vec<u32> = c.ops.iter().map(|o| o.done).filter(|&d| d != INF).collect();
    cuts.sort_unstable();
    match cuts.last() {
        Some(&last) if illegal(c, last)? => {}
        _ => return Err(lost_track()),
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
        .ok_or_else(lost_track)?;
    Ok(Some((end, z as u32)))
}

/// The shortest illegal prefix, which ends with event `end` (shifted by one) when `z`
/// completes, and the legal prefix just before it with its layout.
pub(super) struct Scene<'a, 'c> {
    pub(super) key: &'a Option<String>,
    pub(super) ops: &'a [&'a Operation],
    pub(super) c: &'a Compiled<'c>,
    pub(super) t: Prefix,
    pub(super) lay: Layout,
    pub(super) z: u32,
    pub(super) end: u32,
}

impl<'a, 'c> Scene<'a, 'c> {
    fn new(
        key: &'a Option<String>,
        ops: &'a [&'a Operation],
        c: &'a Compiled<'c>,
        end: u32,
        z: u32,
    ) -> Result<Self, String> {
        let t = match build(c, end - 1) {
            Ok(t) => t,
            Err(Stop::Unsupported(why)) => return Err(why),
            Err(Stop::Illegal(_)) => return Err(lost_track()),
        };
        let lay = match decide(c, &t) {
            Ok(l) => l,
            Err(Stop::Unsupported(why)) => return Err(why),
            Err(Stop::Illegal(_)) => return Err(lost_track()),
        };
        Ok(Scene {
            key,
            ops,
            c,
            t,
            lay,
            z,
            end,
        })
    }

    pub(super) fn summary(&self, o: u32) -> Operation {
        Operation::clone(self.ops[self.c.ops[o as usize].src as usize])
    }

    /// `<key>: <op> (<where>) cannot be linearized: it needs <needs><could>`.
    pub(super) fn cannot(&self, op: &Operation, needs: &str, could: &str) -> String {
        format!(
            "{}{} ({}) cannot be linearized: it needs {}{}",
            crate::answer::key_prefix(self.key),
            op.describe(),
            op.locate(),
            needs,
            could
        )
    }

    /// The explanation, with the legal prefix's linearization as the partial one.
    pub(super) fn explanation(
        &self,
        op: Operation,
        message: String,
        needs: String,
        states: Vec<String>,
        after: Option<Operation>,
    ) -> Explanation {
        let (steps, linearized) = linearization(self.ops, self.c, &self.lay);
        let end_event = (self.end - 1) as usize;
        Explanation {
            key: self.key.clone(),
            message,
            op,
            needs,
            states,
            after,
            prefix_end_event: end_event,
            prefix_ops: self.ops.iter().filter(|o| o.invoke <= end_event).count(),
            prefix_confirmed: true,
            longest_linearization: steps,
            linearized,
        }
    }

    /// A node's value as text (kv: the pieces leading to it, as far as the prefix knows).
    fn show_node(&self, v: u32) -> String {
        let (c, t) = (self.c, &self.t);
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
    }
}

/// Which values the legal prefix allows while `z` was in flight (invoked at `zi`,
/// completing at `zr`).
struct InFlight<'s, 'a, 'c> {
    s: &'s Scene<'a, 'c>,
    zi: u32,
    zr: u32,
    /// Per node: the earliest completion among operations on deeper nodes of its chain.
    deeper: Vec<u32>,
    /// Per node: the latest invocation among the writers leading to it.
    start: Vec<u32>,
    /// Of the chains with an operation that completed before z began, the two latest
    /// invocations (invocation, chain).
    top: [(u32, u32); 2],
}

impl<'s, 'a, 'c> InFlight<'s, 'a, 'c> {
    fn new(s: &'s Scene<'a, 'c>) -> Self {
        let (c, t, lay) = (s.c, &s.t, &s.lay);
        let (zi, zr) = (c.ops[s.z as usize].inv, s.end);
        let n = c.nodes();
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
        InFlight {
            s,
            zi,
            zr,
            deeper,
            start,
            top,
        }
    }

    /// A chain that must follow v's chain and had already begun when z began.
    fn after_chain(&self, v: u32) -> Option<u32> {
        let lay = &self.s.lay;
        let x = lay.chain[v as usize];
        let best = if self.top[0].1 == x {
            self.top[1]
        } else {
            self.top[0]
        };
        (best.1 != NONE && lay.a[x as usize] < best.0).then_some(best.1)
    }

    /// Whether node `v` may have been the state while z was in flight.
    fn possible(&self, v: u32) -> bool {
        self.s.t.present[v as usize]
            && self.start[v as usize] < self.zr
            && self.deeper[v as usize] >= self.zi
            && self.after_chain(v).is_none()
    }

    /// Every state possible while z was in flight, as text, and how many there are.
    fn states(&self) -> (Vec<String>, usize) {
        let n = self.s.c.nodes();
        let mut possible_nodes: Vec<u32> = (0..n as u32).filter(|&v| self.possible(v)).collect();
        possible_nodes.sort_by_key(|&v| (self.start[v as usize], v));
        let total = possible_nodes.len();
        (
            possible_nodes
                .iter()
                .map(|&v| self.s.show_node(v))
                .collect(),
            total,
        )
    }

    /// `need` was overwritten before z began: by the next write of its chain, or by a
    /// chain that must follow its chain. The text and that write.
    fn overwritten(
        &self,
        need: u32,
        states: &[String],
        total: usize,
        by_then: String,
    ) -> (String, Option<Operation>) {
        let (c, lay, zi) = (self.s.c, &self.s.lay, self.zi);
        let w = if self.deeper[need as usize] < zi {
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
            return (by_then, None);
        }
        let a = self.s.summary(w);
        let s = if states.is_empty() {
            String::new()
        } else {
            format!(" the state could only be {}", one_of(states, total))
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
        (text, Some(a))
    }

    /// `need`, or a value before it in its chain, was written only after z returned; when
    /// nothing was, the real-time order the prefix breaks.
    fn written_late(&self, need: u32, by_then: String) -> (String, Option<Operation>) {
        let (c, t, zr) = (self.s.c, &self.s.t, self.zr);
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
            let (text, a) = real_time_story(c, self.s.ops, self.s.end, self.s.z);
            return (format!("{text}{by_then}"), a);
        }
        let a = self.s.summary(w);
        let own = c.ops[w as usize].node == need;
        let text = format!(
            ", {} {} ({}), which began only after it returned{by_then}",
            if own {
                "but it is written by"
            } else {
                "which comes only after"
            },
            a.describe(),
            a.locate()
        );
        (text, None)
    }
}

/// What z (a read, cas or get) needs, in words, and the node that holds it.
fn needs_of(s: &Scene) -> (String, u32) {
    let (c, zo) = (s.c, s.c.ops[s.z as usize]);
    match (c.model, zo.kind) {
        (ModelKind::Kv, _) => {
            let output = &s.ops[zo.src as usize].output;
            (format!("value {:?}", text_of(output)), zo.node)
        }
        (_, Kind::Cas) => (
            format!("value {}", show(&c.values[zo.from as usize])),
            zo.from,
        ),
        _ => (
            format!("value {}", show(&c.values[zo.node as usize])),
            zo.node,
        ),
    }
}

/// kv: where z's path disagrees with what the legal prefix already fixed (another get saw
/// a different piece before one of its appends, or another append extended the value).
fn kv_fork(s: &Scene) -> Option<(Operation, String)> {
    let (c, t, lay) = (s.c, &s.t, &s.lay);
    let zo = c.ops[s.z as usize];
    if c.model != ModelKind::Kv || zo.from == NONE {
        return None;
    }
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
            let by = s.summary(t.parent_by[p as usize]);
            let text = format!(
                ", but {} ({}) saw {:?} follow {}",
                by.describe(),
                by.locate(),
                c.text[p as usize],
                s.show_node(q)
            );
            return Some((s.summary(c.writer[p as usize]), text));
        }
        if other != NONE && other != p {
            let w = s.summary(c.writer[other as usize]);
            let text = format!(
                ", but {} ({}) is what follows {}: an append extends the whole value",
                w.describe(),
                w.locate(),
                s.show_node(prev)
            );
            return Some((w, text));
        }
        prev = p;
    }
    None
}

/// cas: the value it needs was already taken by another cas.
fn cas_fork(s: &Scene, need: u32) -> Option<(Operation, String)> {
    let (c, t, lay) = (s.c, &s.t, &s.lay);
    let taken = c.model == ModelKind::CasRegister
        && c.ops[s.z as usize].kind == Kind::Cas
        && t.present[need as usize]
        && lay.child[need as usize] != NONE;
    if !taken {
        return None;
    }
    let w = s.summary(c.writer[lay.child[need as usize] as usize]);
    let text = format!(
        ", but {} ({}) replaced that value too, and nothing writes it again",
        w.describe(),
        w.locate()
    );
    Some((w, text))
}

/// A read, cas or get that cannot see the value it needs: why, from the legal prefix.
fn explain_value(s: &Scene) -> Explanation {
    let c = s.c;
    let f = InFlight::new(s);
    let (states, total) = f.states();
    let (needs, need) = needs_of(s);
    let by_then = if states.is_empty() {
        String::new()
    } else {
        format!(
            "; by then the state could only be {}",
            one_of(&states, total)
        )
    };
    let (could, after) = if let Some((after, fork)) = kv_fork(s).or_else(|| cas_fork(s, need)) {
        (format!("{fork}{by_then}"), Some(after))
    } else if need == NONE || (need != INIT && c.writer[need as usize] == NONE) {
        let what = if c.model == ModelKind::Kv {
            "which no sequence of puts and appends produces"
        } else {
            "which no operation writes"
        };
        (format!(", {what}{by_then}"), None)
    } else if s.t.present[need as usize] && !f.possible(need) && f.start[need as usize] < f.zr {
        f.overwritten(need, &states, total, by_then)
    } else {
        f.written_late(need, by_then)
    };
    let op = s.summary(s.z);
    let message = s.cannot(&op, &needs, &could);
    s.explanation(op, message, needs, states, after)
}

/// The shortest illegal prefix ends with the failure of a write whose value an operation
/// observed: that operation is the one that cannot be linearized.
fn failed_write(s: &Scene) -> Result<Explanation, String> {
    let (c, t) = (s.c, &s.t);
    let node = c.ops[s.z as usize].node;
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
        return Err(lost_track());
    };
    let op = s.summary(v as u32);
    let w = s.summary(s.z);
    let needs = match c.model {
        ModelKind::Kv => format!("value {:?}", text_of(&s.ops[c.ops[v].src as usize].output)),
        _ => format!("value {}", show(&c.values[node as usize])),
    };
    let message = format!(
        "{}{} ({}) cannot be linearized: it needs {}, which only {} ({}) writes, and that failed",
        crate::answer::key_prefix(s.key),
        op.describe(),
        op.locate(),
        needs,
        w.describe(),
        w.locate()
    );
    Ok(s.explanation(op, message, needs, Vec::new(), None))
}

/// A legal prefix's linearization (its last `MAX_STEPS` steps, with the state after each)
/// and its length.
pub(super) fn linearization(
    ops: &[&Operation],
    c: &Compiled,
    lay: &Layout,
) -> (Vec<LinearizedStep>, usize) {
    let summary = |o: u32| Operation::clone(ops[c.ops[o as usize].src as usize]);
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
