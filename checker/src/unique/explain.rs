//! Explains an illegal register, cas-register or kv partition from its shortest illegal
//! prefix (sets: `explain_set.rs`), and lays out a legal prefix's linearization.

use super::chains::{decide, Layout};
use super::explain_set::{explain_set, show_set};
use super::prefix::{build, Prefix, Stop, Witness};
use super::{illegal, Compiled, Kind, INF, INIT, NONE};
use crate::history::{show, Operation, Status};
use crate::linearizable::{Explanation, LinearizedStep, OpSummary, MAX_STEPS};
use crate::model::{text_of, ModelKind};

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
pub(super) fn explain(
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

/// A legal prefix's linearization (its last `MAX_STEPS` steps, with the state after each)
/// and its length.
pub(super) fn linearization(
    ops: &[&Operation],
    c: &Compiled,
    lay: &Layout,
) -> (Vec<LinearizedStep>, usize) {
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
