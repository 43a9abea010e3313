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

const NIL: u32 = u32::MAX;

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

pub(crate) enum Outcome<S> {
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

pub(crate) fn search<M: SeqModel>(
    model: &mut M,
    ops: &[SOp],
    limits: &Limits,
) -> Outcome<M::State> {
    let n = ops.len();
    let head = (2 * n) as u32;
    let mut next = vec![NIL; 2 * n + 1];
    let mut prev = vec![NIL; 2 * n + 1];

    // Entries sorted by time: call of op i is 2i, its return 2i+1.
    let mut entries: Vec<(u32, u32)> = Vec::with_capacity(2 * n);
    for (i, o) in ops.iter().enumerate() {
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
    let mut class = Vec::with_capacity(n);
    for i in 0..n {
        class.push(model.class(i));
    }
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
    let zob: Vec<(u64, u64)> = (0..n as u64)
        .map(|i| {
            (
                mix(i.wrapping_mul(2).wrapping_add(0x5151)),
                mix(i.wrapping_mul(2).wrapping_add(0xA3A3_0001)),
            )
        })
        .collect();
    let has_observe = class.contains(&Class::Observe);

    let mut remaining = ops.iter().filter(|o| !o.info()).count();
    let mut state = model.init();
    let mut set_fp = (0u64, 0u64);
    let mut stack: Vec<(u32, M::State)> = Vec::new();
    let mut cache: Cache = Cache::default();
    let mut best_rank: usize = 0;
    let mut best: Vec<(usize, M::State)> = Vec::new();
    let mut stuck_op = usize::MAX;
    let mut stuck_states: Vec<M::State> = Vec::new();
    let mut iterations: u64 = 0;
    let mut window: Vec<u32> = Vec::new();

    macro_rules! lift {
        ($o:expr) => {{
            let c = 2 * $o;
            next[prev[c] as usize] = next[c];
            if next[c] != NIL {
                prev[next[c] as usize] = prev[c];
            }
            if !ops[$o].info() {
                let r = c + 1;
                next[prev[r] as usize] = next[r];
                if next[r] != NIL {
                    prev[next[r] as usize] = prev[r];
                }
            }
        }};
    }
    macro_rules! unlift {
        ($o:expr) => {{
            let c = 2 * $o;
            if !ops[$o].info() {
                let r = c + 1;
                next[prev[r] as usize] = r as u32;
                if next[r] != NIL {
                    prev[next[r] as usize] = r as u32;
                }
            }
            next[prev[c] as usize] = c as u32;
            if next[c] != NIL {
                prev[next[c] as usize] = c as u32;
            }
        }};
    }

    let path = |stack: &Vec<(u32, M::State)>, state: &M::State| -> Vec<(usize, M::State)> {
        let mut out = Vec::with_capacity(stack.len());
        for (k, (o, _)) in stack.iter().enumerate() {
            let after = stack
                .get(k + 1)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| state.clone());
            out.push((*o as usize, after));
        }
        out
    };

    let mut e = next[head as usize];
    loop {
        if remaining == 0 {
            return Outcome::Ok {
                states: cache.len() as u64,
                memory: cache.capacity() * ENTRY_BYTES + stack.capacity() * 16,
            };
        }
        iterations += 1;
        if iterations & 0x3FF == 0 {
            let memory = cache.capacity() * ENTRY_BYTES;
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
                return Outcome::Unknown {
                    reason,
                    best,
                    states: cache.len() as u64,
                    memory,
                };
            }
        }
        debug_assert!(
            e != NIL,
            "a pending return always exists while remaining > 0"
        );
        if e == NIL {
            // Cannot happen (a pending return entry always exists); be safe anyway.
            break;
        }
        if e & 1 == 0 {
            let o = (e / 2) as usize;
            if let Some(ns) = model.step(&state, o) {
                let (a, b) = model.fingerprint(&ns);
                let f = (set_fp.0 ^ zob[o].0, set_fp.1 ^ zob[o].1);
                let key = (((f.0 ^ a) as u128) << 64) | (f.1 ^ b) as u128;
                if cache.insert(key) {
                    lift!(o);
                    if !has_observe
                        || window_ok(
                            model,
                            &ns,
                            ops,
                            &class,
                            &reset_after,
                            &next,
                            head,
                            &mut window,
                        )
                    {
                        stack.push((o as u32, std::mem::replace(&mut state, ns)));
                        set_fp = f;
                        if !ops[o].info() {
                            remaining -= 1;
                        }
                        e = next[head as usize];
                        continue;
                    }
                    unlift!(o);
                }
            }
            e = next[e as usize];
        } else {
            let o = (e / 2) as usize;
            let r = rank[o];
            if stuck_op == usize::MAX || r > best_rank {
                best_rank = r;
                stuck_op = o;
                best = path(&stack, &state);
                stuck_states.clear();
            }
            if r == best_rank && stuck_states.len() < 8 && !stuck_states.contains(&state) {
                stuck_states.push(state.clone());
            }
            let Some((p, ps)) = stack.pop() else {
                break;
            };
            let p = p as usize;
            unlift!(p);
            state = ps;
            set_fp = (set_fp.0 ^ zob[p].0, set_fp.1 ^ zob[p].1);
            if !ops[p].info() {
                remaining += 1;
            }
            e = next[2 * p];
        }
    }
    Outcome::Illegal {
        stuck: stuck_op,
        best,
        stuck_states,
        states: cache.len() as u64,
        memory: cache.capacity() * ENTRY_BYTES,
    }
}

/// Every pending Observe operation that must come before all remaining Reset
/// operations has to be reachable from `s` through Grow operations alone.
#[allow(clippy::too_many_arguments)]
#[inline]
fn window_ok<M: SeqModel>(
    model: &mut M,
    s: &M::State,
    ops: &[SOp],
    class: &[Class],
    reset_after: &[u32],
    next: &[u32],
    head: u32,
    window: &mut Vec<u32>,
) -> bool {
    window.clear();
    let mut min_reset = u32::MAX;
    let mut e = next[head as usize];
    while e != NIL {
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
    for &o in window.iter() {
        let o = o as usize;
        if ops[o].ret < min_reset && !model.compatible(s, o) {
            return false;
        }
    }
    true
}
