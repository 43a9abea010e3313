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

impl Explainers {
    /// Each list in call order.
    fn new<M: SeqModel>(model: &M, ops: &[SOp], class: &[Class], resets: &[usize]) -> Explainers {
        let n = ops.len();
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
    }
}

/// Searches for a linearization of `ops`, or of the prefix of the history that
/// ends with event `cut` (operations called later are left out, those that
/// completed later are pending there).
pub(crate) fn search<M: SeqModel>(
    model: &mut M,
    ops: &[SOp],
    limits: &Limits,
    cut: Option<u32>,
) -> SearchEnd<M::State> {
    let class: Vec<Class> = (0..ops.len()).map(|i| model.class(i)).collect();
    let view = PrefixView::new(ops, &class, cut);
    let (seen, active) = match &view {
        Some(v) => (&v.ops[..], Some(&v.active[..])),
        None => (ops, None),
    };
    let mut s = Search::new(model, seen, class, active);
    match s.run(limits) {
        Some(end) => end,
        None => s.illegal(ops, cut),
    }
}

/// The operations as the prefix that ends with event `cut` sees them, and which of them
/// take part in it.
struct PrefixView {
    ops: Vec<SOp>,
    active: Vec<bool>,
}

impl PrefixView {
    /// `None` when every operation takes part as it is (no cut, nothing failed).
    fn new(ops: &[SOp], class: &[Class], cut: Option<u32>) -> Option<PrefixView> {
        if cut.is_none() && !ops.iter().any(|o| o.failed) {
            return None;
        }
        let cut = cut.unwrap_or(u32::MAX - 1);
        let mut ops = ops.to_vec();
        let mut active = vec![true; ops.len()];
        for (i, o) in ops.iter_mut().enumerate() {
            if o.call > cut || (o.failed && o.ret <= cut) {
                active[i] = false;
            } else if o.ret > cut {
                o.ret = u32::MAX;
                // A read still in flight at the cut shows nothing.
                active[i] = class[i] != Class::Observe;
            }
        }
        Some(PrefixView { ops, active })
    }
}

fn is_active(active: Option<&[bool]>, i: usize) -> bool {
    active.is_none_or(|a| a[i])
}

/// Entries sorted by time: call of op i is 2i, its return 2i+1.
fn time_order(ops: &[SOp], active: Option<&[bool]>) -> Vec<(u32, u32)> {
    let mut entries: Vec<(u32, u32)> = Vec::with_capacity(2 * ops.len());
    for (i, o) in ops.iter().enumerate() {
        if !is_active(active, i) {
            continue;
        }
        entries.push((o.call, 2 * i as u32));
        if !o.info() {
            entries.push((o.ret, 2 * i as u32 + 1));
        }
    }
    entries.sort_unstable();
    entries
}

/// What the search looks up but never changes.
struct Timeline {
    class: Vec<Class>,
    /// Rank of each return in time order.
    rank: Vec<usize>,
    /// For each return, the first call of a Reset operation after it (every operation
    /// called after a pending return is itself pending).
    reset_after: Vec<u32>,
    explainers: Option<Explainers>,
    /// Zobrist keys of the operations: the linearized set's fingerprint is their xor.
    zob: Vec<(u64, u64)>,
    has_observe: bool,
}

impl Timeline {
    fn new<M: SeqModel>(
        model: &M,
        ops: &[SOp],
        class: Vec<Class>,
        entries: &[(u32, u32)],
        active: Option<&[bool]>,
    ) -> Timeline {
        let n = ops.len();
        let mut rank = vec![usize::MAX; n];
        let mut reset_after = vec![u32::MAX; n];
        let mut r = 0;
        for &(_, e) in entries {
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
        let resets: Vec<usize> = (0..n)
            .filter(|&i| class[i] == Class::Reset && is_active(active, i))
            .collect();
        let observes = (0..n)
            .filter(|&i| class[i] == Class::Observe && is_active(active, i))
            .count();
        let explainers = (resets.len() * observes <= MAX_EXPLAINER_PAIRS)
            .then(|| Explainers::new(model, ops, &class, &resets));
        let zob = (0..n as u64)
            .map(|i| {
                (
                    mix(i.wrapping_mul(2).wrapping_add(0x5151)),
                    mix(i.wrapping_mul(2).wrapping_add(0xA3A3_0001)),
                )
            })
            .collect();
        Timeline {
            class,
            rank,
            reset_after,
            explainers,
            zob,
            has_observe: observes > 0,
        }
    }
}

/// The operations not linearized yet, as a doubly linked list of call and return entries
/// in time order, and the pruning rule that watches them.
struct Pending<'a, M: SeqModel> {
    model: &'a mut M,
    ops: &'a [SOp],
    t: Timeline,
    next: Vec<u32>,
    prev: Vec<u32>,
    head: u32,
    linearized: Vec<bool>,
    window: Vec<u32>,
    /// The furthest return a pruned configuration could have reached.
    pruned_rank: usize,
    pruned_at: u32,
    /// The last observation that placing each operation made impossible.
    blocker: Vec<Option<(u32, M::State)>>,
}

impl<M: SeqModel> Pending<'_, M> {
    #[inline]
    fn lift(&mut self, o: usize) {
        let (next, prev) = (&mut self.next, &mut self.prev);
        let c = 2 * o;
        next[prev[c] as usize] = next[c];
        if next[c] != NO_LINK {
            prev[next[c] as usize] = prev[c];
        }
        if !self.ops[o].info() {
            let r = c + 1;
            next[prev[r] as usize] = next[r];
            if next[r] != NO_LINK {
                prev[next[r] as usize] = prev[r];
            }
        }
        self.linearized[o] = true;
    }

    #[inline]
    fn unlift(&mut self, o: usize) {
        let (next, prev) = (&mut self.next, &mut self.prev);
        let c = 2 * o;
        if !self.ops[o].info() {
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
        self.linearized[o] = false;
    }

    /// An observation that may go next and is legal now (a read that sees the current
    /// value) can always be moved to the front of any completion: it needs no branching.
    #[inline]
    fn forced_observation(&mut self, state: &M::State) -> Option<usize> {
        let mut x = self.next[self.head as usize];
        while x != NO_LINK && x & 1 == 0 {
            let o = (x / 2) as usize;
            // Only pure observations: anything else would also be missing
            // from wherever it really happened.
            if self.t.class[o] == Class::Observe
                && self.model.step(state, o).is_some_and(|ns| ns == *state)
            {
                return Some(o);
            }
            x = self.next[x as usize];
        }
        None
    }

    /// Whether the configuration reached by linearizing `o` into state `ns` may still
    /// complete; if not, remembers how far it could have got.
    #[inline]
    fn prune_ok(&mut self, o: usize, ns: &M::State) -> bool {
        if !self.t.has_observe {
            return true;
        }
        match self.window_ok(ns) {
            Ok(()) => true,
            Err(g) => {
                // Nothing from here could get past g's return.
                if self.t.rank[g] > self.pruned_rank {
                    self.pruned_rank = self.t.rank[g];
                    self.pruned_at = self.ops[g].ret;
                }
                self.blocker[o] = Some((g as u32, ns.clone()));
                false
            }
        }
    }

    /// Every pending Observe operation in the window must still be reachable: either
    /// from `s` through Grow operations alone, or through some pending Reset that was
    /// called before it returned and could have set what it saw.
    #[inline]
    fn window_ok(&mut self, s: &M::State) -> Result<(), usize> {
        let (ops, t) = (self.ops, &self.t);
        self.window.clear();
        let mut min_reset = u32::MAX;
        let mut e = self.next[self.head as usize];
        while e != NO_LINK {
            let o = (e / 2) as usize;
            if e & 1 == 1 {
                if min_reset == u32::MAX {
                    min_reset = t.reset_after[o];
                }
                break;
            }
            match t.class[o] {
                Class::Reset => {
                    if min_reset == u32::MAX {
                        min_reset = ops[o].call;
                    }
                }
                Class::Observe => self.window.push(o as u32),
                Class::Grow => {}
            }
            e = self.next[e as usize];
        }
        for &g in self.window.iter() {
            let g = g as usize;
            match &t.explainers {
                Some(ex) => {
                    if !self.model.compatible(s, g)
                        && !ex.of(g).iter().any(|&p| !self.linearized[p as usize])
                    {
                        return Err(g);
                    }
                }
                None => {
                    if ops[g].ret < min_reset && !self.model.compatible(s, g) {
                        return Err(g);
                    }
                }
            }
        }
        Ok(())
    }

    /// The first return still pending: the one every path runs into.
    fn first_return(&self) -> Option<usize> {
        let mut x = self.next[self.head as usize];
        while x != NO_LINK && x & 1 == 0 {
            x = self.next[x as usize];
        }
        (x != NO_LINK).then_some((x / 2) as usize)
    }
}

/// The furthest the search got: the return it could not pass and how it got there.
struct Best<S> {
    rank: usize,
    /// The operation whose return stopped it; `usize::MAX` before any return was reached.
    stuck: usize,
    /// The longest partial linearization: operations and the state after each.
    path: Vec<(usize, S)>,
    /// `path` shares its first `shared` entries with the stack, so recording a new best
    /// copies only what changed since (a long, mostly forward search would otherwise copy
    /// its whole path at every step).
    shared: usize,
    stuck_states: Vec<S>,
    blockers: Vec<(usize, S)>,
}

impl<S: Clone + Eq> Best<S> {
    /// The search reached the return of `o` (rank `r`) in `state` along `stack`.
    fn reached(
        &mut self,
        o: usize,
        r: usize,
        stack: &[(u32, S, bool)],
        state: &S,
        blocker: &Option<(u32, S)>,
    ) {
        if self.stuck == usize::MAX || r > self.rank {
            self.rank = r;
            self.stuck = o;
            self.path.truncate(self.shared);
            for k in self.shared..stack.len() {
                let after = stack
                    .get(k + 1)
                    .map(|(_, s, _)| s.clone())
                    .unwrap_or_else(|| state.clone());
                self.path.push((stack[k].0 as usize, after));
            }
            self.shared = stack.len();
            self.stuck_states.clear();
            self.blockers.clear();
        }
        if r == self.rank && self.blockers.len() < 8 {
            if let Some((g, bs)) = blocker {
                let b = (*g as usize, bs.clone());
                if !self.blockers.contains(&b) {
                    self.blockers.push(b);
                }
            }
        }
        if r == self.rank && self.stuck_states.len() < 8 && !self.stuck_states.contains(state) {
            self.stuck_states.push(state.clone());
        }
    }
}

/// The search's state: the current configuration, the path to it and what was visited.
struct Search<'a, M: SeqModel> {
    p: Pending<'a, M>,
    state: M::State,
    set_fp: (u64, u64),
    /// Operations with a return entry not linearized yet.
    remaining: usize,
    /// (operation, state before it, forced: it changed nothing so no alternative needs trying)
    stack: Vec<(u32, M::State, bool)>,
    cache: Cache,
    iterations: u64,
    best: Best<M::State>,
}

impl<'a, M: SeqModel> Search<'a, M> {
    fn new(
        model: &'a mut M,
        ops: &'a [SOp],
        class: Vec<Class>,
        active: Option<&[bool]>,
    ) -> Search<'a, M> {
        let n = ops.len();
        let entries = time_order(ops, active);
        let t = Timeline::new(model, ops, class, &entries, active);
        let head = (2 * n) as u32;
        let mut next = vec![NO_LINK; 2 * n + 1];
        let mut prev = vec![NO_LINK; 2 * n + 1];
        let mut last = head;
        for &(_, e) in &entries {
            next[last as usize] = e;
            prev[e as usize] = last;
            last = e;
        }
        let remaining = (0..n)
            .filter(|&i| !ops[i].info() && is_active(active, i))
            .count();
        let state = model.init();
        Search {
            p: Pending {
                model,
                ops,
                t,
                next,
                prev,
                head,
                linearized: vec![false; n],
                window: Vec::new(),
                pruned_rank: 0,
                pruned_at: 0,
                blocker: vec![None; n],
            },
            state,
            set_fp: (0, 0),
            remaining,
            stack: Vec::new(),
            cache: Cache::with_capacity_and_hasher(4 * n, Default::default()),
            iterations: 0,
            best: Best {
                rank: 0,
                stuck: usize::MAX,
                path: Vec::new(),
                shared: 0,
                stuck_states: Vec::new(),
                blockers: Vec::new(),
            },
        }
    }

    /// Searches until a linearization is found or the budget runs out (`Some`), or every
    /// configuration is exhausted (`None`).
    fn run(&mut self, limits: &Limits) -> Option<SearchEnd<M::State>> {
        // `e == NEW` means a configuration was just reached.
        const NEW: u32 = u32::MAX - 1;
        let mut e = NEW;
        loop {
            if e == NEW {
                if self.remaining == 0 {
                    return Some(SearchEnd::Ok {
                        states: self.cache.len() as u64,
                        memory: self.cache.capacity() * ENTRY_BYTES + self.stack.capacity() * 16,
                    });
                }
                if let Some(end) = self.over_budget(limits) {
                    return Some(end);
                }
                if let Some(o) = self.p.forced_observation(&self.state) {
                    if self.take_forced(o) {
                        continue;
                    }
                    // This configuration is dead: backtrack.
                    e = NO_LINK;
                } else {
                    e = self.p.next[self.p.head as usize];
                }
            }
            if e != NO_LINK && e & 1 == 0 {
                e = if self.try_call(e) {
                    NEW
                } else {
                    self.p.next[e as usize]
                };
                continue;
            }
            if e != NO_LINK {
                // A return entry: its operation cannot be placed from here.
                let o = (e / 2) as usize;
                let r = self.p.t.rank[o];
                let blocker = &self.p.blocker[o];
                self.best.reached(o, r, &self.stack, &self.state, blocker);
            }
            match self.backtrack() {
                Some(next) => e = next,
                None => return None,
            }
        }
    }

    /// Checks the budget every 1024 configurations.
    #[inline]
    fn over_budget(&mut self, limits: &Limits) -> Option<SearchEnd<M::State>> {
        self.iterations += 1;
        if self.iterations & 0x3FF != 1 {
            return None;
        }
        let memory = self.cache.capacity() * ENTRY_BYTES + self.p.model.memory();
        let reason = if limits.stop.load(Ordering::Relaxed) {
            "cancelled".to_string()
        } else if memory > limits.max_memory {
            format!(
                "memory budget exhausted ({} MiB of visited states)",
                memory >> 20
            )
        } else if Instant::now() > limits.deadline {
            "time budget exhausted".to_string()
        } else {
            return None;
        };
        Some(SearchEnd::Unknown {
            reason,
            best: std::mem::take(&mut self.best.path),
            states: self.cache.len() as u64,
            memory,
        })
    }

    /// The visited-cache key of the configuration with `o` linearized into state `s`, and
    /// the linearized set's new fingerprint.
    #[inline]
    fn cache_key(&self, o: usize, s: &M::State) -> (u128, (u64, u64)) {
        let z = self.p.t.zob[o];
        let f = (self.set_fp.0 ^ z.0, self.set_fp.1 ^ z.1);
        let (a, b) = self.p.model.fingerprint(s);
        ((((f.0 ^ a) as u128) << 64) | (f.1 ^ b) as u128, f)
    }

    /// Takes the forced observation `o`; false if that configuration is visited or pruned.
    #[inline]
    fn take_forced(&mut self, o: usize) -> bool {
        let (key, f) = self.cache_key(o, &self.state);
        if !self.cache.insert(key) {
            return false;
        }
        self.p.lift(o);
        if !self.p.prune_ok(o, &self.state) {
            self.p.unlift(o);
            return false;
        }
        self.stack.push((o as u32, self.state.clone(), true));
        self.linearized(o, f);
        true
    }

    /// Tries to linearize the operation whose call entry is `e`; false if it cannot go
    /// here or leads to a visited or pruned configuration.
    #[inline]
    fn try_call(&mut self, e: u32) -> bool {
        let o = (e / 2) as usize;
        let Some(ns) = self.p.model.step(&self.state, o) else {
            return false;
        };
        let (key, f) = self.cache_key(o, &ns);
        if !self.cache.insert(key) {
            return false;
        }
        self.p.lift(o);
        if !self.p.prune_ok(o, &ns) {
            self.p.unlift(o);
            return false;
        }
        self.stack
            .push((o as u32, std::mem::replace(&mut self.state, ns), false));
        self.linearized(o, f);
        true
    }

    #[inline]
    fn linearized(&mut self, o: usize, set_fp: (u64, u64)) {
        self.set_fp = set_fp;
        if !self.p.ops[o].info() {
            self.remaining -= 1;
        }
    }

    /// Backtracks past forced steps to the last real choice: the entry to try next, or
    /// `None` when nothing is left to try.
    fn backtrack(&mut self) -> Option<u32> {
        loop {
            let (p, ps, forced) = self.stack.pop()?;
            self.best.shared = self.best.shared.min(self.stack.len());
            let p = p as usize;
            self.p.unlift(p);
            self.state = ps;
            let z = self.p.t.zob[p];
            self.set_fp = (self.set_fp.0 ^ z.0, self.set_fp.1 ^ z.1);
            if !self.p.ops[p].info() {
                self.remaining += 1;
            }
            if !forced {
                return Some(self.p.next[2 * p]);
            }
        }
    }

    /// Every configuration is exhausted: what got furthest, and whether the prefix that
    /// ends with its stuck return is known to be the shortest illegal one.
    fn illegal(self, orig: &[SOp], cut: Option<u32>) -> SearchEnd<M::State> {
        let Search {
            p,
            state,
            cache,
            mut best,
            ..
        } = self;
        let cut_at = cut.unwrap_or(u32::MAX - 1);
        // A failed operation absent here but still in flight at the stuck return
        // could have explained it in that prefix: then the prefix is not known.
        let straddled = |at: u32| {
            orig.iter().enumerate().any(|(i, o)| {
                o.call < at
                    && at < o.ret
                    && o.ret <= cut_at
                    && (o.failed || p.model.pending_differs(i))
            })
        };
        let reached = best.stuck != usize::MAX;
        let exact = p.pruned_rank <= best.rank && reached && !straddled(p.ops[best.stuck].ret);
        // No configuration, pruned or not, got past the blocking observation with the
        // latest return: the prefix ending there is illegal (if nothing straddles it).
        let illegal_by = (p.pruned_rank > best.rank && reached)
            .then_some(p.pruned_at)
            .filter(|&at| !straddled(at));
        if !reached {
            // Every path ended in a forced dead end before any return was reached:
            // blame the first pending return.
            best.stuck = p.first_return().unwrap_or(0);
            best.stuck_states.push(state.clone());
        }
        SearchEnd::Illegal {
            exact,
            illegal_by,
            stuck: best.stuck,
            best: best.path,
            stuck_states: best.stuck_states,
            blockers: best.blockers,
            states: cache.len() as u64,
            memory: cache.capacity() * ENTRY_BYTES,
        }
    }
}
