//! Explains an illegal set partition: the read that cannot take its place among the layers
//! of the legal prefix, with the least and the most the set can hold while it was in flight.

use super::explain::Scene;
use super::prefix::subset;
use super::{Compiled, Kind, INF, NONE};
use crate::answer::Explanation;
use crate::history::{show, Operation};

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
/// add that failed) cannot take its place among the layers of the legal prefix.
pub(super) fn explain_set(s: &Scene) -> Explanation {
    let c = s.c;
    let (victim, failed) = victim(s);
    let vo = c.ops[victim as usize];
    let sz: &[u32] = if vo.kind == Kind::Read {
        c.path(vo.from)
    } else {
        &[]
    };
    let (zi, zr) = (vo.inv, vo.done.min(s.end));
    let needs = format!("set {}", show_set(c, sz));
    let layers = Layers::new(s);
    let (lo, hi) = layers.bounds(zi, zr);
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
    let (could, after) = if let Some(e) = failed {
        let a = s.summary(s.z);
        let text = format!(
            ", which holds {}, but only {} ({}) adds it, and that failed",
            show(&c.values[e as usize]),
            a.describe(),
            a.locate()
        );
        (text, None)
    } else if let Some(&f) = sz.iter().find(|&&f| c.writer[f as usize] == NONE) {
        let text = format!(
            ", but nothing adds {}{by_then}",
            show(&c.values[f as usize])
        );
        (text, None)
    } else if let Some(k) = layers.incomparable(sz) {
        layers.incomparable_story(k, sz)
    } else {
        layers.missing_or_early(sz, zi, zr, &range, by_then)
    };
    let op = s.summary(victim);
    let message = s.cannot(&op, &needs, &could);
    s.explanation(op, message, needs, states, after)
}

/// The read that cannot be placed: `z` itself, or, when `z` is an add that failed, a read
/// that holds its element (with that element).
fn victim(s: &Scene) -> (u32, Option<u32>) {
    let (c, t, z) = (s.c, &s.t, s.z);
    let zo = c.ops[z as usize];
    if zo.kind == Kind::Read {
        return (z, None);
    }
    let e = zo.node;
    let r = (0..c.ops.len())
        .find(|&i| {
            t.inc[i]
                && c.ops[i].kind == Kind::Read
                && c.path(c.ops[i].from).binary_search(&e).is_ok()
        })
        .unwrap_or(z as usize) as u32;
    (r, Some(e))
}

fn holds(set: &[u32], e: u32) -> bool {
    set.binary_search(&e).is_ok()
}

/// The layers of the legal prefix: each one's set (the initial node holds nothing; the
/// last node, of adds nobody saw, holds everything) and when its operations ran.
struct Layers<'s, 'a, 'c> {
    s: &'s Scene<'a, 'c>,
    n: usize,
    set: Vec<Option<u32>>,
    reader: Vec<u32>,
    /// Earliest completion of a read at each layer.
    rd: Vec<u32>,
    /// Earliest completion at layers after k.
    later: Vec<u32>,
    /// Latest invocation of a read at layers before k.
    reads_before: Vec<u32>,
}

impl<'s, 'a, 'c> Layers<'s, 'a, 'c> {
    fn new(s: &'s Scene<'a, 'c>) -> Self {
        let (c, t) = (s.c, &s.t);
        let n = t.parent.len();
        let mut set: Vec<Option<u32>> = vec![None; n];
        let mut reader: Vec<u32> = vec![NONE; n];
        let (mut rd, mut wr) = (vec![INF; n], vec![INF; n]);
        for (i, o) in c.ops.iter().enumerate() {
            if !t.inc[i] {
                continue;
            }
            let k = t.node[i] as usize;
            if o.kind == Kind::Read {
                set[k] = Some(o.from);
                reader[k] = i as u32;
                rd[k] = rd[k].min(t.ret[i]);
            } else {
                wr[k] = wr[k].min(t.ret[i]);
            }
        }
        let mut later = vec![INF; n + 1];
        for k in (0..n).rev() {
            later[k] = later[k + 1].min(rd[k]).min(wr[k]);
        }
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
        Layers {
            s,
            n,
            set,
            reader,
            rd,
            later,
            reads_before,
        }
    }

    /// When the add `i` (at layer `k`) certainly had taken effect: its completion, or that
    /// of anything that must follow it.
    fn proof(&self, i: usize) -> u32 {
        let t = &self.s.t;
        let k = t.node[i] as usize;
        t.ret[i].min(self.rd[k]).min(self.later[k + 1])
    }

    /// Adds come in any order within a layer, so the states while a read was in flight
    /// (from `zi` to `zr`) are every set between the elements certainly added before it
    /// began (an add done, or something that must follow it done) and those that may have
    /// been added before it returned (the add begun, and every read that lacks it begun).
    fn bounds(&self, zi: u32, zr: u32) -> (Vec<u32>, Vec<u32>) {
        let (c, t) = (self.s.c, &self.s.t);
        let (mut lo, mut hi): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for (i, o) in c.ops.iter().enumerate() {
            if !t.inc[i] || o.kind == Kind::Read {
                continue;
            }
            let k = t.node[i] as usize;
            if self.proof(i) < zi {
                lo.push(o.node);
            }
            if o.inv < zr && self.reads_before[k] < zr {
                hi.push(o.node);
            }
        }
        lo.sort_unstable();
        hi.sort_unstable();
        (lo, hi)
    }

    /// A layer whose set neither holds nor is held by `sz`.
    fn incomparable(&self, sz: &[u32]) -> Option<usize> {
        (1..self.n).find(|&k| {
            self.set[k].is_some_and(|p| {
                let l = self.s.c.path(p);
                !subset(l, sz) && !subset(sz, l)
            })
        })
    }

    fn incomparable_story(&self, k: usize, sz: &[u32]) -> (String, Option<Operation>) {
        let c = self.s.c;
        let l = c.path(self.set[k].unwrap_or(0));
        let e = l.iter().copied().find(|&e| !holds(sz, e)).unwrap_or(0);
        let f = sz.iter().copied().find(|&f| !holds(l, f)).unwrap_or(0);
        let r = self.s.summary(self.reader[k]);
        let after = (c.writer[e as usize] != NONE).then(|| self.s.summary(c.writer[e as usize]));
        let text = format!(
            ", but {} ({}) saw {}, which it lacks, and lacked {}, which it holds: a set only grows",
            r.describe(),
            r.locate(),
            show(&c.values[e as usize]),
            show(&c.values[f as usize])
        );
        (text, after)
    }

    /// An element `sz` lacks that was certainly added before the read began, or something
    /// that must precede the read, begun only after it returned.
    fn missing_or_early(
        &self,
        sz: &[u32],
        zi: u32,
        zr: u32,
        range: &str,
        by_then: String,
    ) -> (String, Option<Operation>) {
        let (c, t) = (self.s.c, &self.s.t);
        let missing = c
            .ops
            .iter()
            .enumerate()
            .filter(|&(i, o)| t.inc[i] && o.kind != Kind::Read && !holds(sz, o.node))
            .map(|(i, _)| (self.proof(i), i as u32))
            .filter(|&(proof, _)| proof < zi)
            .min();
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
            let a = self.s.summary(w);
            let text = format!(
                ", but once {} ({}) had taken effect every state held {}: {range}",
                a.describe(),
                a.locate(),
                show(&c.values[c.ops[w as usize].node as usize]),
            );
            (text, Some(a))
        } else if let Some((_, w)) = early {
            let a = self.s.summary(w);
            let what = if c.ops[w as usize].kind == Kind::Read {
                "which saw less, so came before it,"
            } else {
                "whose element it holds,"
            };
            let text = format!(
                ", but {} ({}), {what} began only after it returned{by_then}",
                a.describe(),
                a.locate()
            );
            (text, None)
        } else {
            (by_then, None)
        }
    }
}
