//! Explains an illegal set partition: the read that cannot take its place among the layers
//! of the legal prefix, with the least and the most the set can hold while it was in flight.

use super::chains::Layout;
use super::explain::linearization;
use super::prefix::{subset, Prefix};
use super::{Compiled, Kind, INF, NONE};
use crate::history::{show, Operation};
use crate::linearizable::{Explanation, OpSummary};

/// Elements shown of a set, at most.
const SHOW_ELEMENTS: usize = 16;

/// `#{1 2 3}`, or `#{1 2 ... (40 elements)}` for a big set.
pub(super) fn show_set(c: &Compiled, es: &[u32]) -> String {
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
pub(super) fn explain_set(
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
