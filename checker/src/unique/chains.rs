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
