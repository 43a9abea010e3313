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
    let mut g = Generator::new(spec);
    while g.started < spec.ops || g.need_witness || g.slots.iter().any(|s| s.is_some()) {
        g.time += 1 + g.rng.below(1000);
        if !g.ghosts.is_empty() && g.rng.chance(0.02) {
            g.land_ghost();
        }
        let i = g.rng.below(g.slots.len() as u64) as usize;
        match g.slots[i].take() {
            None => g.invoke(i),
            Some(fl) if !fl.stepped => g.take_effect(i, fl),
            Some(fl) => g.complete(i, fl),
        }
    }
    g.finish()
}

/// The simulation: the store, the processes and their operations in flight, the events so
/// far and the fault's progress.
struct Generator<'s> {
    spec: &'s Spec,
    kv: bool,
    set: bool,
    rng: Rng,
    /// Key weights 1, 1/2, 1/3, ... and their sum.
    weights: Vec<f64>,
    total: f64,
    store: Vec<Key>,
    names: Vec<String>,
    events: Vec<Event>,
    /// Per process slot: its operation in flight.
    slots: Vec<Option<Flight>>,
    /// Per slot: its current process number.
    procs: Vec<u64>,
    next_process: u64,
    /// Info operations whose effect lands after their completion.
    ghosts: Vec<Flight>,
    /// Per slot and key: the last value its process saw (cas expectations).
    seen: Vec<Vec<u64>>,
    started: usize,
    counter: u64,
    time: u64,
    fault_from: usize,
    fault_pending: bool,
    witness: Option<usize>,
    /// The lost write's key and acknowledgement time; then a read of that key must follow.
    lost_key: Option<usize>,
    lost_acked: Option<u64>,
    need_witness: bool,
}

impl<'s> Generator<'s> {
    fn new(spec: &'s Spec) -> Generator<'s> {
        let kv = spec.model == ModelKind::Kv;
        let set = spec.model == ModelKind::Set;
        let processes = spec.processes.max(1);
        let keys = spec.keys.max(1);
        let weights: Vec<f64> = (0..keys).map(|k| 1.0 / (k as f64 + 1.0)).collect();
        let total: f64 = weights.iter().sum();
        let initial = if kv {
            Val::Text(String::new())
        } else if set {
            Val::Set(0)
        } else {
            Val::Reg(0)
        };
        let store: Vec<Key> = (0..keys)
            .map(|_| Key {
                value: initial.clone(),
                setter: None,
                setter_acked: true,
                done: Vec::new(),
                frozen: false,
                applied: Vec::new(),
            })
            .collect();
        Generator {
            spec,
            kv,
            set,
            rng: Rng::new(spec.seed),
            weights,
            total,
            store,
            names: (0..keys).map(|k| format!("k{k}")).collect(),
            events: Vec::with_capacity(spec.ops * 2 + 16),
            slots: vec![None; processes],
            procs: (0..processes as u64).collect(),
            next_process: processes as u64,
            ghosts: Vec::new(),
            seen: vec![vec![0; keys]; processes],
            started: 0,
            counter: 0,
            time: 0,
            fault_from: ((spec.ops as f64) * spec.fault_at.clamp(0.0, 1.0)) as usize,
            fault_pending: spec.fault != Fault::None,
            witness: None,
            lost_key: None,
            lost_acked: None,
            need_witness: false,
        }
    }

    fn pick_key(&mut self) -> usize {
        let mut x = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * self.total;
        for (k, w) in self.weights.iter().enumerate() {
            if x < *w {
                return k;
            }
            x -= w;
        }
        self.weights.len() - 1
    }

    fn push(&mut self, process: u64, kind: EventType, f: F, key: usize, value: Value) {
        let name = if self.kv && f == F::Read {
            "get"
        } else {
            f.name()
        };
        let mut e = Event::new(process, kind, name, Some(&self.names[key]), value);
        e.index = self.events.len() as u64;
        e.time = self.time;
        self.events.push(e);
    }

    /// A late info write takes effect now (unless its key is held back).
    fn land_ghost(&mut self) {
        let g = self.rng.below(self.ghosts.len() as u64) as usize;
        if !self.store[self.ghosts[g].key].frozen {
            let mut fl = self.ghosts.swap_remove(g);
            let k = fl.key;
            apply(&mut fl, &mut self.store[k]);
        }
    }

    /// Slot `i` is free: invoke its next operation (the lost write's witness first).
    fn invoke(&mut self, i: usize) {
        let spec = self.spec;
        if self.started >= spec.ops && !self.need_witness {
            return;
        }
        let forced = self.need_witness;
        let (key, f) = if self.need_witness {
            self.need_witness = false;
            (self.lost_key.unwrap_or(0), F::Read)
        } else {
            let key = self.pick_key();
            let r = self.rng.below(100);
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
        self.counter += 1;
        let counter = self.counter;
        let expect = match f {
            F::Cas if self.rng.chance(0.5) => match self.store[key].value {
                Val::Reg(v) => v,
                _ => 0,
            },
            F::Cas => self.seen[i][key],
            _ => 0,
        };
        let op = self.started;
        self.started += 1;
        // The lost write's witness must be a read that completes.
        let info = !forced && self.rng.chance(spec.info);
        let effect = if !info {
            Effect::Now
        } else {
            match self.rng.below(3) {
                0 => Effect::Now,
                1 => Effect::Later,
                _ => Effect::Never,
            }
        };
        let mut fl = Flight {
            op,
            process: self.procs[i],
            key,
            f,
            arg: counter,
            expect,
            invoke_time: self.time,
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
        if self.fault_pending
            && spec.fault == Fault::LostWrite
            && self.started > self.fault_from
            && !info
            && matches!(f, F::Write | F::Put | F::Append | F::Add)
            && self.store[key].setter_acked
        {
            fl.lost = true;
            self.store[key].frozen = true;
            self.fault_pending = false;
            self.lost_key = Some(key);
        }
        let value = match f {
            F::Read => Value::Null,
            F::Write => json!(counter),
            F::Cas => json!([Val::Reg(expect).json(), counter]),
            F::Put | F::Append => json!(token(counter)),
            F::Add => json!(counter),
        };
        self.push(self.procs[i], EventType::Invoke, f, key, value);
        self.slots[i] = Some(fl);
    }

    /// Operation `fl` of slot `i` takes effect (once), unless held back.
    fn take_effect(&mut self, i: usize, mut fl: Flight) {
        let key = fl.key;
        if fl.f.writes() && self.store[key].frozen && !fl.lost {
            self.slots[i] = Some(fl);
            return;
        }
        fl.stepped = true;
        match fl.f {
            F::Read => fl.result = Some(self.read(&fl)),
            _ if fl.lost => fl.result = Some(self.store[key].value.clone()),
            _ if fl.effect == Effect::Now => apply(&mut fl, &mut self.store[key]),
            _ => {} // later or never: decided at completion
        }
        self.slots[i] = Some(fl);
    }

    /// What read `fl` returns: the current value, or a stale one where the fault goes.
    fn read(&mut self, fl: &Flight) -> Val {
        let spec = self.spec;
        let k = &mut self.store[fl.key];
        let mut v = k.value.clone();
        if let Some(acked) = self.lost_acked {
            if self.lost_key == Some(fl.key) && k.frozen && fl.invoke_time > acked && !fl.info {
                // The lost write's witness sees the value from before it.
                k.frozen = false;
                self.witness = Some(fl.op);
            }
        }
        if self.fault_pending
            && spec.fault == Fault::StaleRead
            && self.started > self.fault_from
            && !fl.info
        {
            // W2 acknowledged before this read began, W1 before W2 began.
            let d = &k.done;
            if let Some(j2) = d.iter().rposition(|w| w.complete_time < fl.invoke_time) {
                let w2 = d[j2].invoke_time;
                if let Some(j1) = d[..j2].iter().rposition(|w| w.complete_time < w2) {
                    v = d[j1].after.clone();
                    self.fault_pending = false;
                    self.witness = Some(fl.op);
                }
            }
        }
        v
    }

    /// Operation `fl` of slot `i` completes; an info one retires its process.
    fn complete(&mut self, i: usize, fl: Flight) {
        let key = fl.key;
        if fl.info {
            if fl.effect == Effect::Later {
                self.ghosts.push(fl.clone());
            }
            self.push(fl.process, EventType::Info, fl.f, key, Value::Null);
            self.procs[i] = self.next_process;
            self.next_process += 1;
            self.seen[i] = vec![0; self.store.len()];
            return;
        }
        let cas_value = || json!([Val::Reg(fl.expect).json(), fl.arg]);
        let (kind, value) = match fl.f {
            F::Read => {
                let v = fl.result.clone().unwrap_or(Val::Reg(0));
                if let Val::Reg(n) = v {
                    self.seen[i][key] = n;
                }
                match v {
                    Val::Set(n) => (EventType::Ok, json!(self.store[key].applied[..n])),
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
            self.acknowledged(i, &fl);
        }
        self.push(fl.process, kind, fl.f, key, value);
    }

    /// Write `fl` of slot `i` is acknowledged.
    fn acknowledged(&mut self, i: usize, fl: &Flight) {
        if !self.kv && !self.set {
            self.seen[i][fl.key] = fl.arg;
        }
        if fl.lost {
            self.lost_acked = Some(self.time);
            self.need_witness = true;
            return;
        }
        let k = &mut self.store[fl.key];
        if k.setter == Some(fl.op) {
            k.setter_acked = true;
        }
        k.done.push(Done {
            invoke_time: fl.invoke_time,
            complete_time: self.time,
            after: fl.result.clone().unwrap_or(Val::Reg(0)),
        });
        if k.done.len() > 256 {
            k.done.drain(..128);
        }
    }

    fn finish(self) -> Generated {
        let history = History::from_events(self.events).expect("generated history is well formed");
        let expected = if self.witness.is_some() {
            Verdict::Illegal
        } else {
            Verdict::Ok
        };
        Generated {
            history,
            expected,
            witness: self.witness,
        }
    }
}
