//! Decides a prefix: nodes into chains, real time inside each chain, and an order of the
//! chains (conditions 2 and 3 of the module doc).

use super::prefix::{Prefix, Stop, Witness};
use super::{Compiled, Kind, INF, INIT, NONE};

/// A legal prefix laid out: chains, depths and a linearization.
pub(super) struct Layout {
    pub(super) child: Vec<u32>,
    pub(super) chain: Vec<u32>,
    /// Per chain: earliest completion and latest invocation.
    pub(super) a: Vec<u32>,
    pub(super) b: Vec<u32>,
    /// The first node of each chain.
    pub(super) root: Vec<u32>,
    /// Operations (indices into `Compiled::ops`) in linearization order.
    pub(super) order: Vec<u32>,
}

/// Decides a prefix: a layout if it is linearizable.
pub(super) fn decide(c: &Compiled, p: &Prefix) -> Result<Layout, Stop> {
    let Chains {
        child,
        chain,
        depth,
        root,
    } = link_chains(p)?;
    let entries = positions(c, p, &chain, &depth);
    let spans = spans(&entries, root.len())?;
    let by_key = match order_chains(&spans) {
        Ok(k) => k,
        Err((x, y, u, v)) => return Err(Stop::Illegal(Witness::Cycle { x, y, u, v, chain })),
    };
    let mut order = Vec::with_capacity(p.included);
    for &x in &by_key {
        let (s, e) = spans.range[x as usize];
        order.extend(entries[s..e].iter().map(|e| e.3).filter(|&o| o != NONE));
    }
    Ok(Layout {
        child,
        chain,
        a: spans.a,
        b: spans.b,
        root,
        order,
    })
}

/// The present nodes linked into chains, each node with its depth in its chain.
struct Chains {
    child: Vec<u32>,
    chain: Vec<u32>,
    depth: Vec<u32>,
    /// The first node of each chain.
    root: Vec<u32>,
}

/// Condition 1: no node has two children; and every present node hangs from a root.
fn link_chains(p: &Prefix) -> Result<Chains, Stop> {
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
    Ok(Chains {
        child,
        chain,
        depth,
        root,
    })
}

/// The prefix's operations sorted by chain and position in it, as
/// (chain << 32 | position, invocation, completion, operation); the initial value's
/// writer first.
fn positions(c: &Compiled, p: &Prefix, chain: &[u32], depth: &[u32]) -> Vec<(u64, u32, u32, u32)> {
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
    entries
}

/// Per chain: earliest completion `a` and latest invocation `b`, the operations that set
/// them, and the chain's range of entries.
struct Spans {
    a: Vec<u32>,
    b: Vec<u32>,
    a_op: Vec<u32>,
    b_op: Vec<u32>,
    range: Vec<(usize, usize)>,
}

/// Condition 2: inside each chain, nothing at a later position returned before something
/// at an earlier one was invoked.
fn spans(entries: &[(u64, u32, u32, u32)], chains: usize) -> Result<Spans, Stop> {
    let mut a = vec![INF; chains];
    let mut b = vec![0u32; chains];
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
    Ok(Spans {
        a,
        b,
        a_op,
        b_op,
        range,
    })
}

/// Condition 3: the chains sorted by `min(a, b)`, each `a` past every earlier `b`. `Err`:
/// two chains that must each precede the other, as the `x, y, u, v` of `Witness::Cycle`.
fn order_chains(s: &Spans) -> Result<Vec<u32>, (u32, u32, u32, u32)> {
    let (a, b) = (&s.a, &s.b);
    let mut by_key: Vec<u32> = (0..a.len() as u32).collect();
    by_key.sort_unstable_by_key(|&x| a[x as usize].min(b[x as usize]));
    let (mut latest, mut latest_chain) = (0u32, NONE);
    for &j in &by_key {
        let j = j as usize;
        if a[j] < latest {
            let i = latest_chain as usize;
            return Err((s.a_op[i], s.b_op[j], s.a_op[j], s.b_op[i]));
        }
        if b[j] >= latest {
            (latest, latest_chain) = (b[j], j as u32);
        }
    }
    Ok(by_key)
}
