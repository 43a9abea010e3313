//! Generated hot-key histories for tests and benchmarks: a linearizable in-memory store
//! driven by many concurrent processes, recorded with real-time intervals, and optionally
//! made non-linearizable at a known point.
//!
//! Each operation is invoked, takes effect atomically at one later step, and completes at a
//! still later step, so a history without a fault is linearizable by construction (the
//! order of the effects is a linearization). An operation with an unknown outcome (`info`)
//! may take effect before its completion, never, or after it (a timeout whose request still
//! lands later); its process is retired and a new process number takes its slot, as Jepsen
//! does. Written values are unique: `write`/`cas` write a fresh integer, `put`/`append` a fresh
//! token `x<n>y` (no token is a prefix of another).
//!
//! Faults, injected at the first chance after `fault_at` of the operations were started:
//!
//! * [`Fault::StaleRead`]: a read returns the value of a write W1 although a write W2 that
//!   began after W1 had completed was itself acknowledged before the read began.
//! * [`Fault::LostWrite`]: a write is acknowledged but the store drops it; writes to that key
//!   are held back until a read that began after the acknowledgement has seen the old value
//!   (whose write had completed before the lost one began).
//!
//! Either way the history is not linearizable whatever the other operations did, and
//! [`Generated::witness`] names the read that shows it.

use crate::history::{Event, EventType, History};
use crate::model::ModelKind;
use crate::Verdict;
use serde_json::{json, Value};

/// What to break.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    StaleRead,
    LostWrite,
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Spec {
    /// `register` (read, write), `cas-register` (read, write, cas), `kv` (get, put, append)
    /// or `set` (add, read: a fifth of the operations read the whole set).
    pub model: ModelKind,
    /// Operations invoked.
    pub ops: usize,
    /// Processes with an operation in flight at once (Jepsen's concurrency).
    pub processes: usize,
    /// Keys; key `k0` is the hottest (weights 1, 1/2, 1/3, ...).
    pub keys: usize,
    /// Fraction of operations whose outcome is unknown (`info`), 0.0 to 1.0.
    pub info: f64,
    pub fault: Fault,
    /// Where the fault goes, as a fraction of the operations started (0.0 to 1.0).
    pub fault_at: f64,
    pub seed: u64,
}

impl Spec {
    /// A linearizable history of `ops` operations on `keys` keys.
    pub fn new(model: ModelKind, ops: usize, processes: usize, keys: usize, info: f64) -> Spec {
        Spec {
            model,
            ops,
            processes,
            keys,
            info,
            fault: Fault::None,
            fault_at: 0.6,
            seed: 1,
        }
    }

    pub fn fault(mut self, fault: Fault) -> Spec {
        self.fault = fault;
        self
    }

    pub fn seed(mut self, seed: u64) -> Spec {
        self.seed = seed;
        self
    }
}

/// A generated history and what a checker must say about it.
#[derive(Clone, Debug)]
pub struct Generated {
    pub history: History,
    pub expected: Verdict,
    /// The read (index into `history.ops`) that the fault made impossible to linearize.
    pub witness: Option<usize>,
}

/// A small deterministic generator (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum F {
    Read,
    Write,
    Cas,
    Put,
    Append,
    Add,
}

impl F {
    fn name(self) -> &'static str {
        match self {
            F::Read => "read",
            F::Write => "write",
            F::Cas => "cas",
            F::Put => "put",
            F::Append => "append",
            F::Add => "add",
        }
    }
    fn writes(self) -> bool {
        self != F::Read
    }
}

/// The store's value of one key: an integer register (0 = nil), a kv string, or a set (the
/// first n elements the key's adds applied).
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Reg(u64),
    Text(String),
    Set(usize),
}

impl Val {
    fn json(&self) -> Value {
        match self {
            Val::Reg(0) => Value::Null,
            Val::Reg(n) => json!(n),
            Val::Text(s) => json!(s),
            Val::Set(n) => json!(n),
        }
    }
}

/// When an info operation's write takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effect {
    /// Between invocation and completion, like an acknowledged one.
    Now,
    /// After its (info) completion, at a random later step.
    Later,
    Never,
}

#[derive(Clone, Debug)]
struct Flight {
    op: usize,
    process: u64,
    key: usize,
    f: F,
    /// Written value (write, cas new value, put or append token number).
    arg: u64,
    /// A cas's expected value (0 = nil).
    expect: u64,
    invoke_time: u64,
    info: bool,
    effect: Effect,
    /// It has had its step (taken effect, or decided not to yet).
    stepped: bool,
    applied: bool,
    /// The cas did not match.
    failed: bool,
    /// A read's result, or the state right after a write took effect.
    result: Option<Val>,
    /// The store acknowledges it but drops it (the lost write).
    lost: bool,
}

/// An acknowledged write: when it ran and the state right after it.
#[derive(Clone, Debug)]
struct Done {
    invoke_time: u64,
    complete_time: u64,
    after: Val,
}

struct Key {
    value: Val,
    /// The operation that set the current value, and whether it has been acknowledged
    /// (the initial value counts as acknowledged).
    setter: Option<usize>,
    setter_acked: bool,
    /// Recent acknowledged writes, oldest first.
    done: Vec<Done>,
    /// Writes may not take effect (the lost-write fault holds them back).
    frozen: bool,
    /// set: the elements added, in the order the adds took effect.
    applied: Vec<u64>,
}

fn token(n: u64) -> String {
    format!("x{n}y")
}

/// Applies a write-like operation to the store.
fn apply(fl: &mut Flight, k: &mut Key) {
    match fl.f {
        F::Read => return,
        F::Write => k.value = Val::Reg(fl.arg),
        F::Cas => {
            if k.value == Val::Reg(fl.expect) {
                k.value = Val::Reg(fl.arg);
            } else {
                fl.failed = true;
                return;
            }
        }
        F::Put => k.value = Val::Text(token(fl.arg)),
        F::Append => {
            if let Val::Text(s) = &mut k.value {
                s.push_str(&token(fl.arg));
            }
        }
        F::Add => {
            k.applied.push(fl.arg);
            k.value = Val::Set(k.applied.len());
        }
    }
    fl.applied = true;
    fl.result = Some(k.value.clone());
    k.setter = Some(fl.op);
    k.setter_acked = false;
}

/// Generates a history per `spec`.
///
/// Panics if the model is `s3-object`.
pub fn generate(spec: &Spec) -> Generated {
    assert!(
        matches!(
            spec.model,
            ModelKind::Register | ModelKind::CasRegister | ModelKind::Kv | ModelKind::Set
        ),
        "the generator makes register, cas-register, kv and set histories"
    );
    let kv = spec.model == ModelKind::Kv;
    let set = spec.model == ModelKind::Set;
    let mut rng = Rng::new(spec.seed);
    let processes = spec.processes.max(1);
    let keys = spec.keys.max(1);
    let weights: Vec<f64> = (0..keys).map(|k| 1.0 / (k as f64 + 1.0)).collect();
    let total: f64 = weights.iter().sum();
    let pick_key = |rng: &mut Rng| {
        let mut x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        for (k, w) in weights.iter().enumerate() {
            if x < *w {
                return k;
            }
            x -= w;
        }
        keys - 1
    };
    let initial = if kv {
        Val::Text(String::new())
    } else if set {
        Val::Set(0)
    } else {
        Val::Reg(0)
    };
    let mut store: Vec<Key> = (0..keys)
        .map(|_| Key {
            value: initial.clone(),
            setter: None,
            setter_acked: true,
            done: Vec::new(),
            frozen: false,
            applied: Vec::new(),
        })
        .collect();
    let names: Vec<String> = (0..keys).map(|k| format!("k{k}")).collect();

    let mut events: Vec<Event> = Vec::with_capacity(spec.ops * 2 + 16);
    let mut slots: Vec<Option<Flight>> = vec![None; processes];
    let mut procs: Vec<u64> = (0..processes as u64).collect();
    let mut next_process = processes as u64;
    // Info operations whose effect lands after their completion.
    let mut ghosts: Vec<Flight> = Vec::new();
    // Per slot and key: the last value its process saw (cas expectations).
    let mut seen: Vec<Vec<u64>> = vec![vec![0; keys]; processes];
    let mut started = 0usize;
    let mut counter = 0u64;
    let mut time = 0u64;
    let fault_from = ((spec.ops as f64) * spec.fault_at.clamp(0.0, 1.0)) as usize;
    let mut fault_pending = spec.fault != Fault::None;
    let mut witness: Option<usize> = None;
    // The lost write's key and acknowledgement time; then a read of that key must follow.
    let mut lost_key: Option<usize> = None;
    let mut lost_acked: Option<u64> = None;
    let mut need_witness = false;

    let mut push = |time: u64, process: u64, kind: EventType, f: F, key: usize, value: Value| {
        let name = if kv && f == F::Read { "get" } else { f.name() };
        let mut e = Event::new(process, kind, name, Some(&names[key]), value);
        e.index = events.len() as u64;
        e.time = time;
        events.push(e);
    };

    while started < spec.ops || need_witness || slots.iter().any(|s| s.is_some()) {
        time += 1 + rng.below(1000);
        if !ghosts.is_empty() && rng.chance(0.02) {
            let g = rng.below(ghosts.len() as u64) as usize;
            if !store[ghosts[g].key].frozen {
                let mut fl = ghosts.swap_remove(g);
                let k = fl.key;
                apply(&mut fl, &mut store[k]);
            }
        }
        let i = rng.below(processes as u64) as usize;
        let Some(mut fl) = slots[i].take() else {
            if started >= spec.ops && !need_witness {
                continue;
            }
            // Invoke.
            let forced = need_witness;
            let (key, f) = if need_witness {
                need_witness = false;
                (lost_key.unwrap_or(0), F::Read)
            } else {
                let key = pick_key(&mut rng);
                let r = rng.below(100);
                let f = match (spec.model, r) {
                    (ModelKind::Set, 0..=19) => F::Read,
                    (ModelKind::Set, _) => F::Add,
                    (_, 0..=49) => F::Read,
                    (ModelKind::Register, _) => F::Write,
                    (ModelKind::CasRegister, 50..=69) => F::Write,
                    (ModelKind::CasRegister, _) => F::Cas,
                    (_, 50..=64) => F::Put,
                    _ => F::Append,
                };
                (key, f)
            };
            counter += 1;
            let expect = match f {
                F::Cas if rng.chance(0.5) => match store[key].value {
                    Val::Reg(v) => v,
                    _ => 0,
                },
                F::Cas => seen[i][key],
                _ => 0,
            };
            let op = started;
            started += 1;
            // The lost write's witness must be a read that completes.
            let info = !forced && rng.chance(spec.info);
            let effect = if !info {
                Effect::Now
            } else {
                match rng.below(3) {
                    0 => Effect::Now,
                    1 => Effect::Later,
                    _ => Effect::Never,
                }
            };
            let mut fl = Flight {
                op,
                process: procs[i],
                key,
                f,
                arg: counter,
                expect,
                invoke_time: time,
                info,
                effect,
                stepped: false,
                applied: false,
                failed: false,
                result: None,
                lost: false,
            };
            // The lost write: an acknowledged plain write on a key whose current value was
            // set by an acknowledged write. Writes to the key wait from now on.
            if fault_pending
                && spec.fault == Fault::LostWrite
                && started > fault_from
                && !info
                && matches!(f, F::Write | F::Put | F::Append | F::Add)
                && store[key].setter_acked
            {
                fl.lost = true;
                store[key].frozen = true;
                fault_pending = false;
                lost_key = Some(key);
            }
            let value = match f {
                F::Read => Value::Null,
                F::Write => json!(counter),
                F::Cas => json!([Val::Reg(expect).json(), counter]),
                F::Put | F::Append => json!(token(counter)),
                F::Add => json!(counter),
            };
            push(time, procs[i], EventType::Invoke, f, key, value);
            slots[i] = Some(fl);
            continue;
        };
        let key = fl.key;
        if !fl.stepped {
            // Take effect (once), unless held back.
            let k = &mut store[key];
            if fl.f.writes() && k.frozen && !fl.lost {
                slots[i] = Some(fl);
                continue;
            }
            fl.stepped = true;
            match fl.f {
                F::Read => {
                    let mut v = k.value.clone();
                    if let Some(acked) = lost_acked {
                        if lost_key == Some(key) && k.frozen && fl.invoke_time > acked && !fl.info {
                            // The lost write's witness sees the value from before it.
                            k.frozen = false;
                            witness = Some(fl.op);
                        }
                    }
                    if fault_pending
                        && spec.fault == Fault::StaleRead
                        && started > fault_from
                        && !fl.info
                    {
                        // W2 acknowledged before this read began, W1 before W2 began.
                        let d = &k.done;
                        if let Some(j2) = d.iter().rposition(|w| w.complete_time < fl.invoke_time) {
                            let w2 = d[j2].invoke_time;
                            if let Some(j1) = d[..j2].iter().rposition(|w| w.complete_time < w2) {
                                v = d[j1].after.clone();
                                fault_pending = false;
                                witness = Some(fl.op);
                            }
                        }
                    }
                    fl.result = Some(v);
                }
                _ if fl.lost => fl.result = Some(k.value.clone()),
                _ if fl.effect == Effect::Now => apply(&mut fl, k),
                _ => {} // later or never: decided at completion
            }
            slots[i] = Some(fl);
            continue;
        }
        // Complete.
        if fl.info {
            if fl.effect == Effect::Later {
                ghosts.push(fl.clone());
            }
            push(time, fl.process, EventType::Info, fl.f, key, Value::Null);
            procs[i] = next_process;
            next_process += 1;
            seen[i] = vec![0; keys];
            continue;
        }
        let cas_value = || json!([Val::Reg(fl.expect).json(), fl.arg]);
        let (kind, value) = match fl.f {
            F::Read => {
                let v = fl.result.clone().unwrap_or(Val::Reg(0));
                if let Val::Reg(n) = v {
                    seen[i][key] = n;
                }
                match v {
                    Val::Set(n) => (EventType::Ok, json!(store[key].applied[..n])),
                    v => (EventType::Ok, v.json()),
                }
            }
            F::Write => (EventType::Ok, json!(fl.arg)),
            F::Cas if fl.failed => (EventType::Fail, cas_value()),
            F::Cas => (EventType::Ok, cas_value()),
            F::Put | F::Append => (EventType::Ok, json!(token(fl.arg))),
            F::Add => (EventType::Ok, json!(fl.arg)),
        };
        if fl.f.writes() && kind == EventType::Ok {
            if !kv && !set {
                seen[i][key] = fl.arg;
            }
            let k = &mut store[key];
            if fl.lost {
                lost_acked = Some(time);
                need_witness = true;
            } else {
                if k.setter == Some(fl.op) {
                    k.setter_acked = true;
                }
                k.done.push(Done {
                    invoke_time: fl.invoke_time,
                    complete_time: time,
                    after: fl.result.clone().unwrap_or(Val::Reg(0)),
                });
                if k.done.len() > 256 {
                    k.done.drain(..128);
                }
            }
        }
        push(time, fl.process, kind, fl.f, key, value);
    }
    let history = History::from_events(events).expect("generated history is well formed");
    let expected = if witness.is_some() {
        Verdict::Illegal
    } else {
        Verdict::Ok
    };
    Generated {
        history,
        expected,
        witness,
    }
}
