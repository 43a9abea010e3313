//! Wing & Gong / Lowe just-in-time linearization search with a visited cache of
//! (linearized set, state) fingerprints, as in Porcupine, plus model-aware pruning.
//!
//! Operations sit in a doubly linked list of call and return entries sorted by
//! time. The search repeatedly tries to linearize an operation whose call comes
//! before the first pending return; reaching a return entry means the operation
//! it belongs to cannot be placed from here, so it backtracks. Operations with an
//! unknown outcome have no return entry: they may be linearized at any point
//! after their call, or never.

use crate::model::{mix, Class, SOp, SeqModel};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The end of the operation list (no next or previous entry); not a model value.
const NO_LINK: u32 = u32::MAX;

/// The cache keys are already uniformly random fingerprints: hash them as is.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ b as u64;
        }
    }
    fn write_u128(&mut self, i: u128) {
        self.0 = i as u64;
    }
}

type Cache = HashSet<u128, BuildHasherDefault<PassThrough>>;

/// Limits shared by all partitions of one check.
pub(crate) struct Limits<'a> {
    pub deadline: Instant,
    pub max_memory: usize,
    /// Set from outside to cancel the check.
    pub stop: &'a AtomicBool,
}

pub(crate) enum SearchEnd<S> {
    Ok {
        states: u64,
        memory: usize,
    },
    Illegal {
        /// The operation (index into the search ops) that could never be placed.
        stuck: usize,
        /// The longest partial linearization: operations and the state after each.
        best: Vec<(usize, S)>,
        /// States the model was in when `stuck` had to be placed (a few).
        stuck_states: Vec<S>,
        /// Observations that placing `stuck` made impossible, with the state it
        /// left (a few): when a write cannot be placed, these are the real victims.
        blockers: Vec<(usize, S)>,
        /// Whether the prefix ending with `stuck`'s completion is known to be the
        /// shortest illegal one (no pruned configuration could have got further).
        exact: bool,
        /// A completion whose prefix is known to be illegal (when not `exact`).
        illegal_by: Option<u32>,
        states: u64,
        memory: usize,
    },
    Unknown {
        reason: String,
        best: Vec<(usize, S)>,
        states: u64,
        memory: usize,
    },
}

/// Bytes per cache entry in a hashbrown table (key plus control byte), as an estimate.
const ENTRY_BYTES: usize = 17;

/// For each Observe operation, the Reset operations that could have set the
/// state it saw (called before it returned), flattened.
pub(crate) struct Explainers {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Explainers {
    #[inline]
    fn of(&self, g: usize) -> &[u32] {
        &self.list[self.start[g] as usize..self.start[g + 1] as usize]
    }
}

/// Explainer tables cost |Reset| x |Observe| model calls to build; above this the
/// search falls back to the weaker "no Reset may intervene" rule.
const MAX_EXPLAINER_PAIRS: usize = 4_000_000;

/// Searches for a linearization of `ops`, or of the prefix of the history that
/// ends with event `cut` (operations called later are left out, those that
/// completed later are pending there).
pub(crate) fn search<M: SeqModel>(
    model: &mut M,
    ops: &[SOp],
    limits: &Limits,
    cut: Option<u32>,
) -> SearchEnd<M::State> {
    let n = ops.len();
    let head = (2 * n) as u32;
    let mut next = vec![NO_LINK; 2 * n + 1];
    let mut prev = vec![NO_LINK; 2 * n + 1];
    let class: Vec<Class> = (0..n).map(|i| model.class(i)).collect();

    let orig_ops = ops;
    let cut_at = cut.unwrap_or(u32::MAX - 1);
    let mut truncated;
    let mut active = None;
    let ops = if cut.is_none() && !ops.iter().any(|o| o.failed) {
        ops
    } else {
        let cut = cut.unwrap_or(u32::MAX - 1);
        truncated = ops.to_vec();
        let mut act = vec![true; n];
        for (i, o) in truncated.iter_mut().enumerate() {
            if o.call > cut || (o.failed && o.ret <= cut) {
                act[i] = false;
            } else if o.ret > cut {
                o.ret = u32::MAX;
                // A read still in flight at the cut shows nothing.
                act[i] = class[i] != Class::Observe;
            }
        }
        active = Some(act);
        &truncated[..]
    };
    let is_active = |i: usize| active.as_ref().is_none_or(|a| a[i]);

    // Entries sorted by time: call of op i is 2i, its return 2i+1.
    let mut entries: Vec<(u32, u32)> = Vec::with_capacity(2 * n);
    for (i, o) in ops.iter().enumerate() {
        if !is_active(i) {
            continue;
        }
        entries.push((o.call, 2 * i as u32));
        if !o.info() {
            entries.push((o.ret, 2 * i as u32 + 1));
        }
    }
    entries.sort_unstable();
    let mut last = head;
    for &(_, e) in &entries {
        next[last as usize] = e;
        prev[e as usize] = last;
        last = e;
    }
    // Rank of each return in time order, and for each return the first call of a
    // Reset operation after it (every operation called after a pending return is
    // itself pending).
    let mut rank = vec![usize::MAX; n];
    let mut reset_after = vec![u32::MAX; n];
    {
        let mut r = 0;
        for &(_, e) in &entries {
            if e & 1 == 1 {
                rank[(e / 2) as usize] = r;
                r += 1;
            }
        }
        let mut first_reset = u32::MAX;
        for &(t, e) in entries.iter().rev() {
            let o = (e / 2) as usize;
            if e & 1 == 0 {
                if class[o] == Class::Reset {
                    first_reset = t;
                }
            } else {
                reset_after[o] = first_reset;
            }
        }
    }
    let resets: Vec<usize> = (0..n)
        .filter(|&i| class[i] == Class::Reset && is_active(i))
        .collect();
    let observes = (0..n)
        .filter(|&i| class[i] == Class::Observe && is_active(i))
        .count();
    let has_observe = observes > 0;
    // For each Observe operation, the Reset operations that could set the state it
    // saw (called before it returned), by call time.
    let explainers: Option<Explainers> =
        (resets.len() * observes <= MAX_EXPLAINER_PAIRS).then(|| {
            let mut start = Vec::with_capacity(n + 1);
            let mut list = Vec::new();
            for g in 0..n {
                start.push(list.len() as u32);
                if class[g] == Class::Observe {
                    // `resets` is in call order already (operations are sorted by invocation).
                    list.extend(
                        resets
                            .iter()
                            .copied()
                            .filter(|&p| ops[p].call < ops[g].ret && model.explains(p, g))
                            .map(|p| p as u32),
                    );
                }
            }
            start.push(list.len() as u32);
            Explainers { start, list }
        });
    let zob: Vec<(u64, u64)> = (0..n as u64)
        .map(|i| {
            (
                mix(i.wrapping_mul(2).wrapping_add(0x5151)),
                mix(i.wrapping_mul(2).wrapping_add(0xA3A3_0001)),
            )
        })
        .collect();

    let mut remaining = (0..n).filter(|&i| !ops[i].info() && is_active(i)).count();
    let mut linearized = vec![false; n];
    let mut state = model.init();
    let mut set_fp = (0u64, 0u64);
    // (operation, state before it, forced: it changed nothing so no alternative needs trying)
    let mut stack: Vec<(u32, M::State, bool)> = Vec::new();
    let mut cache: Cache = Cache::with_capacity_and_hasher(4 * n, Default::default());
    let mut best_rank: usize = 0;
    let mut best: Vec<(usize, M::State)> = Vec::new();
    let mut stuck_op = usize::MAX;
    let mut stuck_states: Vec<M::State> = Vec::new();
    let mut iterations: u64 = 0;
    let mut window: Vec<u32> = Vec::new();
    // The furthest return a pruned configuration could have reached.
    let mut pruned_rank: usize = 0;
    let mut pruned_at: u32 = 0;
    // The last observation that placing each operation made impossible.
    let mut blocker: Vec<Option<(u32, M::State)>> = vec![None; n];
    let mut blockers: Vec<(usize, M::State)> = Vec::new();

    macro_rules! lift {
        ($o:expr) => {{
            let c = 2 * $o;
            next[prev[c] as usize] = next[c];
            if next[c] != NO_LINK {
                prev[next[c] as usize] = prev[c];
            }
            if !ops[$o].info() {
                let r = c + 1;
                next[prev[r] as usize] = next[r];
                if next[r] != NO_LINK {
                    prev[next[r] as usize] = prev[r];
                }
            }
            linearized[$o] = true;
        }};
    }
    macro_rules! unlift {
        ($o:expr) => {{
            let c = 2 * $o;
            if !ops[$o].info() {
                let r = c + 1;
                next[prev[r] as usize] = r as u32;
                if next[r] != NO_LINK {
                    prev[next[r] as usize] = r as u32;
                }
            }
            next[prev[c] as usize] = c as u32;
            if next[c] != NO_LINK {
                prev[next[c] as usize] = c as u32;
            }
            linearized[$o] = false;
        }};
    }
    macro_rules! prune_ok {
        ($o:expr, $ns:expr) => {
            !has_observe
                || match window_ok(
                    model,
                    $ns,
                    ops,
                    &class,
                    &reset_after,
                    explainers.as_ref(),
                    &linearized,
                    &next,
                    head,
                    &mut window,
                ) {
                    Ok(()) => true,
                    Err(g) => {
                        // Nothing from here could get past g's return.
                        if rank[g] > pruned_rank {
                            pruned_rank = rank[g];
                            pruned_at = ops[g].ret;
                        }
                        blocker[$o] = Some((g as u32, $ns.clone()));
                        false
                    }
                }
        };
    }

    // `best` shares its first `shared` entries with the stack, so recording a
    // new best copies only what changed since (a long, mostly forward search
    // would otherwise copy its whole path at every step).
    let mut shared: usize = 0;

    // `e == NEW` means a configuration was just reached.
    const NEW: u32 = u32::MAX - 1;
    let mut e = NEW;
    'search: loop {
        if e == NEW {
            if remaining == 0 {
                return SearchEnd::Ok {
                    states: cache.len() as u64,
                    memory: cache.capacity() * ENTRY_BYTES + stack.capacity() * 16,
                };
            }
            iterations += 1;
            if iterations & 0x3FF == 1 {
                let memory = cache.capacity() * ENTRY_BYTES + model.memory();
                let reason = if limits.stop.load(Ordering::Relaxed) {
                    Some("cancelled".to_string())
                } else if memory > limits.max_memory {
                    Some(format!(
                        "memory budget exhausted ({} MiB of visited states)",
                        memory >> 20
                    ))
                } else if Instant::now() > limits.deadline {
                    Some("time budget exhausted".to_string())
                } else {
                    None
                };
                if let Some(reason) = reason {
                    return SearchEnd::Unknown {
                        reason,
                        best,
                        states: cache.len() as u64,
                        memory,
                    };
                }
            }
            // An observation that may go next and is legal now (a read that sees
            // the current value) can always be moved to the front of any
            // completion: take it without branching.
            let mut forced = None;
            let mut x = next[head as usize];
            while x != NO_LINK && x & 1 == 0 {
                let o = (x / 2) as usize;
                // Only pure observations: anything else would also be missing
                // from wherever it really happened.
                if class[o] == Class::Observe && model.step(&state, o).is_some_and(|ns| ns == state)
                {
                    forced = Some(o);
                    break;
                }
                x = next[x as usize];
            }
            if let Some(o) = forced {
                let f = (set_fp.0 ^ zob[o].0, set_fp.1 ^ zob[o].1);
                let (a, b) = model.fingerprint(&state);
                let key = (((f.0 ^ a) as u128) << 64) | (f.1 ^ b) as u128;
                let mut alive = cache.insert(key);
                if alive {
                    lift!(o);
                    alive = prune_ok!(o, &state);
                    if alive {
                        stack.push((o as u32, state.clone(), true));
                        set_fp = f;
                        if !ops[o].info() {
                            remaining -= 1;
                        }
                        continue 'search;
                    }
                    unlift!(o);
                }
                // This configuration is dead: backtrack.
                e = NO_LINK;
            } else {
                e = next[head as usize];
            }
        }
        if e != NO_LINK && e & 1 == 0 {
            let o = (e / 2) as usize;
            if let Some(ns) = model.step(&state, o) {
                let (a, b) = model.fingerprint(&ns);
                let f = (set_fp.0 ^ zob[o].0, set_fp.1 ^ zob[o].1);
                let key = (((f.0 ^ a) as u128) << 64) | (f.1 ^ b) as u128;
                if cache.insert(key) {
                    lift!(o);
                    if prune_ok!(o, &ns) {
                        stack.push((o as u32, std::mem::replace(&mut state, ns), false));
                        set_fp = f;
                        if !ops[o].info() {
                            remaining -= 1;
                        }
                        e = NEW;
                        continue;
                    }
                    unlift!(o);
                }
            }
            e = next[e as usize];
            continue;
        }
        if e != NO_LINK {
            // A return entry: its operation cannot be placed from here.
            let o = (e / 2) as usize;
            let r = rank[o];
            if stuck_op == usize::MAX || r > best_rank {
                best_rank = r;
                stuck_op = o;
                best.truncate(shared);
                for k in shared..stack.len() {
                    let after = stack
                        .get(k + 1)
                        .map(|(_, s, _)| s.clone())
                        .unwrap_or_else(|| state.clone());
                    best.push((stack[k].0 as usize, after));
                }
                shared = stack.len();
                stuck_states.clear();
                blockers.clear();
            }
            if r == best_rank && blockers.len() < 8 {
                if let Some((g, bs)) = &blocker[o] {
                    let b = (*g as usize, bs.clone());
                    if !blockers.contains(&b) {
                        blockers.push(b);
                    }
                }
            }
            if r == best_rank && stuck_states.len() < 8 && !stuck_states.contains(&state) {
                stuck_states.push(state.clone());
            }
        }
        // Backtrack past forced steps to the last real choice.
        loop {
            let Some((p, ps, forced)) = stack.pop() else {
                break 'search;
            };
            shared = shared.min(stack.len());
            let p = p as usize;
            unlift!(p);
            state = ps;
            set_fp = (set_fp.0 ^ zob[p].0, set_fp.1 ^ zob[p].1);
            if !ops[p].info() {
                remaining += 1;
            }
            if !forced {
                e = next[2 * p];
                break;
            }
        }
    }
    // A failed operation absent here but still in flight at the stuck return
    // could have explained it in that prefix: then the prefix is not known.
    let straddled = |at: u32| {
        orig_ops.iter().enumerate().any(|(i, o)| {
            o.call < at && at < o.ret && o.ret <= cut_at && (o.failed || model.pending_differs(i))
        })
    };
    let exact = pruned_rank <= best_rank && stuck_op != usize::MAX && !straddled(ops[stuck_op].ret);
    // No configuration, pruned or not, got past the blocking observation with the
    // latest return: the prefix ending there is illegal (if nothing straddles it).
    let illegal_by = (pruned_rank > best_rank && stuck_op != usize::MAX)
        .then_some(pruned_at)
        .filter(|&at| !straddled(at));
    if stuck_op == usize::MAX {
        // Every path ended in a forced dead end before any return was reached:
        // blame the first pending return.
        let mut x = next[head as usize];
        while x != NO_LINK && x & 1 == 0 {
            x = next[x as usize];
        }
        stuck_op = if x == NO_LINK { 0 } else { (x / 2) as usize };
        stuck_states.push(state.clone());
    }
    SearchEnd::Illegal {
        exact,
        illegal_by,
        stuck: stuck_op,
        best,
        stuck_states,
        blockers,
        states: cache.len() as u64,
        memory: cache.capacity() * ENTRY_BYTES,
    }
}

/// Every pending Observe operation in the window must still be reachable: either
/// from `s` through Grow operations alone, or through some pending Reset that was
/// called before it returned and could have set what it saw.
#[allow(clippy::too_many_arguments)]
#[inline]
fn window_ok<M: SeqModel>(
    model: &mut M,
    s: &M::State,
    ops: &[SOp],
    class: &[Class],
    reset_after: &[u32],
    explainers: Option<&Explainers>,
    linearized: &[bool],
    next: &[u32],
    head: u32,
    window: &mut Vec<u32>,
) -> Result<(), usize> {
    window.clear();
    let mut min_reset = u32::MAX;
    let mut e = next[head as usize];
    while e != NO_LINK {
        let o = (e / 2) as usize;
        if e & 1 == 1 {
            if min_reset == u32::MAX {
                min_reset = reset_after[o];
            }
            break;
        }
        match class[o] {
            Class::Reset => {
                if min_reset == u32::MAX {
                    min_reset = ops[o].call;
                }
            }
            Class::Observe => window.push(o as u32),
            Class::Grow => {}
        }
        e = next[e as usize];
    }
    for &g in window.iter() {
        let g = g as usize;
        match explainers {
            Some(ex) => {
                if !model.compatible(s, g) && !ex.of(g).iter().any(|&p| !linearized[p as usize]) {
                    return Err(g);
                }
            }
            None => {
                if ops[g].ret < min_reset && !model.compatible(s, g) {
                    return Err(g);
                }
            }
        }
    }
    Ok(())
}
