//! Workloads: processes (Jepsen's sense: at most one operation in flight each) that issue
//! operations at a set rate through a system adapter's clients, and record each one. Each kind
//! is a [`Workload`] (kind.rs) in its own module, listed once in [`REGISTRY`] here; the processes,
//! their end and the final reads here serve every kind.

mod create;
pub mod fencing;
mod kind;
pub mod lease;
mod register;
mod s3_object;
mod set;
mod stream;

pub use kind::{names, names_where, Workload, WorkloadContext, WorkloadKind};

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use crate::recorder::Recorder;
use crate::scenario::plan::rng_for;
use crate::scenario::{FencingSpec, LeaseSpec, S3Mix, WorkloadSpec};
use crate::systems::{Operation, Outcome, SystemAdapter, SystemClient, CREATE};

/// Every workload kind, in the order docs/scenarios.md and `kind:`'s error message list them.
/// A new kind is its `mod` line above, its constant below and one line here.
pub static REGISTRY: &[WorkloadKind] = &[
    WorkloadKind::REGISTER,
    WorkloadKind::SET,
    WorkloadKind::CREATE,
    WorkloadKind::S3_OBJECT,
    WorkloadKind::FENCING,
    WorkloadKind::LEASE,
    WorkloadKind::STREAM,
];

impl WorkloadKind {
    pub const REGISTER: WorkloadKind = WorkloadKind(&register::Register);
    pub const SET: WorkloadKind = WorkloadKind(&set::Set);
    pub const CREATE: WorkloadKind = WorkloadKind(&create::Create);
    pub const S3_OBJECT: WorkloadKind = WorkloadKind(&s3_object::S3Object);
    pub const FENCING: WorkloadKind = WorkloadKind(&fencing::Fencing);
    pub const LEASE: WorkloadKind = WorkloadKind(&lease::Lease);
    pub const STREAM: WorkloadKind = WorkloadKind(&stream::Stream);
}

pub struct WorkloadConfig {
    pub kind: WorkloadKind,
    pub processes: u32,
    pub keys: u32,
    /// Operations per second across all processes.
    pub rate: f64,
    pub duration: Duration,
    pub timeout: Duration,
    /// Process slot i talks to nodes[i % len].
    pub nodes: Vec<String>,
    pub seed: u64,
    /// Keys a create, lease or stream workload made, for the final reads.
    pub created: std::sync::Mutex<Vec<String>>,
    /// s3-object: weights of the operations.
    pub mix: S3Mix,
    /// Every process ticks at the same instants (bursts of concurrent operations).
    pub burst: bool,
    /// stream: bytes per put.
    pub stream_length: u64,
    /// create: send every call answered OK once more this long after its answer (`resend`).
    pub duplicate_after: Option<Duration>,
    /// fencing: the shape of each round.
    pub fencing: FencingSpec,
    /// lease: the life of each file.
    pub lease: LeaseSpec,
}

impl WorkloadConfig {
    /// The scenario's `workload:` section, played by `processes` on `nodes` with the run's seed.
    pub fn for_scenario(workload: &WorkloadSpec, nodes: Vec<String>, seed: u64) -> Self {
        WorkloadConfig {
            kind: workload.kind.value,
            processes: workload.processes,
            keys: workload.keys,
            rate: workload.rate.0,
            duration: workload.duration.0,
            timeout: workload.timeout.0,
            nodes,
            seed,
            created: Default::default(),
            mix: workload.mix.as_ref().map_or(S3Mix::DEFAULT, |m| m.value),
            burst: workload.burst,
            duplicate_after: workload.duplicate_after.map(|d| d.0),
            stream_length: workload.stream.as_ref().map_or_else(
                || crate::scenario::StreamSpec::default().length,
                |s| s.value.length,
            ),
            fencing: workload
                .fencing
                .as_ref()
                .map(|f| f.value.clone())
                .unwrap_or_default(),
            lease: workload
                .lease
                .as_ref()
                .map(|l| l.value.clone())
                .unwrap_or_default(),
        }
    }
}

/// Operations that change nothing: when they fail or time out, they certainly did not take
/// effect, so they are recorded as fail rather than info.
fn is_read_only(f: &str) -> bool {
    f == "read" || f == "final-read" || f == "get"
}

/// One operation through a client, given at most `timeout`: an operation that outlives it is
/// info (it may still take effect). Every workload's operations go through here. The client
/// classifies its own protocol's errors as for any operation; here, once for every client, a
/// read whose outcome is unknown becomes fail, since it changed nothing either way.
pub(crate) async fn invoke_within(
    client: &mut dyn SystemClient,
    op: &Operation,
    timeout: Duration,
) -> Outcome {
    let outcome = match tokio::time::timeout(timeout, client.invoke(op)).await {
        Ok(outcome) => outcome,
        Err(_) => Outcome::Info("timeout".into()),
    };
    match outcome {
        Outcome::Info(why) if is_read_only(op.f) => Outcome::Fail(why),
        outcome => outcome,
    }
}

/// When a workload ends: its duration after it began, and with `lasts-past:` no sooner than a
/// while after a fault step is over (its nodes answering again), which is known only then.
#[derive(Debug)]
pub struct WorkloadEnd {
    duration: Duration,
    began: std::sync::OnceLock<Instant>,
    /// None: no step to wait for; Some(None): the step is not over yet.
    past_step: std::sync::Mutex<Option<Option<Instant>>>,
}

impl WorkloadEnd {
    pub fn after(duration: Duration) -> WorkloadEnd {
        WorkloadEnd {
            duration,
            began: Default::default(),
            past_step: std::sync::Mutex::new(None),
        }
    }

    /// Ends no sooner than the time [`WorkloadEnd::step_over_at`] names.
    pub fn waiting_for_a_step(duration: Duration) -> WorkloadEnd {
        WorkloadEnd {
            past_step: std::sync::Mutex::new(Some(None)),
            ..WorkloadEnd::after(duration)
        }
    }

    pub fn step_over_at(&self, end: Instant) {
        *self.past_step.lock().unwrap_or_else(|e| e.into_inner()) = Some(Some(end));
    }

    /// The workload began now (the first call counts).
    pub fn begin(&self) {
        let _ = self.began.set(Instant::now());
    }

    pub fn passed(&self) -> bool {
        let now = Instant::now();
        let by_duration = self.began.get().is_some_and(|b| now >= *b + self.duration);
        let by_step = match *self.past_step.lock().unwrap_or_else(|e| e.into_inner()) {
            None => true,
            Some(None) => false,
            Some(Some(end)) => now >= end,
        };
        by_duration && by_step
    }

    /// Waits until the end has passed.
    pub async fn reached(&self) {
        while !self.passed() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Runs every process until the duration is over or the run is cancelled.
pub async fn run(
    adapter: Arc<dyn SystemAdapter>,
    recorder: Arc<Recorder>,
    config: Arc<WorkloadConfig>,
    cancel: CancellationToken,
) {
    let end = Arc::new(WorkloadEnd::after(config.duration));
    run_until(adapter, recorder, config, cancel, end).await
}

/// Runs every process until `end` has passed or the run is cancelled.
pub async fn run_until(
    adapter: Arc<dyn SystemAdapter>,
    recorder: Arc<Recorder>,
    config: Arc<WorkloadConfig>,
    cancel: CancellationToken,
    end: Arc<WorkloadEnd>,
) {
    end.begin();
    let values = Arc::new(AtomicU64::new(1));
    let tasks: Vec<_> = (0..config.processes)
        .map(|slot| {
            tokio::spawn(process_loop(
                slot,
                adapter.clone(),
                recorder.clone(),
                config.clone(),
                values.clone(),
                end.clone(),
                cancel.clone(),
            ))
        })
        .collect();
    for task in tasks {
        let _ = task.await;
    }
}

async fn process_loop(
    slot: u32,
    adapter: Arc<dyn SystemAdapter>,
    recorder: Arc<Recorder>,
    config: Arc<WorkloadConfig>,
    values: Arc<AtomicU64>,
    end: Arc<WorkloadEnd>,
    cancel: CancellationToken,
) {
    let mut rng = rng_for(config.seed, "workload", u64::from(slot));
    let node = config.nodes[slot as usize % config.nodes.len()].clone();
    let interval = Duration::from_secs_f64(f64::from(config.processes) / config.rate);
    // Spread the processes' first ticks over one interval.
    // (Unless the scenario wants bursts: then every process ticks at once.)
    let offset = if config.burst {
        Duration::ZERO
    } else {
        interval.mul_f64(f64::from(slot) / f64::from(config.processes))
    };
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + offset, interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut process = u64::from(slot);
    let mut client: Option<Box<dyn SystemClient>> = None;
    // The last value this process saw per key: what its cas operations expect.
    let mut last_seen: HashMap<String, Value> = HashMap::new();
    // duplicate-after: creates this client saw answered OK, oldest first, to send again.
    let mut answered: VecDeque<(Instant, Operation)> = VecDeque::new();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        if end.passed() {
            return;
        }
        if client.is_none() {
            match adapter.connect(&node).await {
                Ok(c) => client = Some(c),
                Err(e) => {
                    tracing::debug!(slot, %node, "connect failed: {e}");
                    continue;
                }
            }
        }
        let Some(active) = client.as_mut() else {
            continue;
        };
        let due = config
            .duplicate_after
            .is_some_and(|after| answered.front().is_some_and(|(t, _)| t.elapsed() >= after));
        let op = match due.then(|| answered.pop_front()).flatten() {
            Some((_, first)) => Operation {
                f: checker::history::RESEND,
                ..first
            },
            None => next_operation(&config, &mut rng, &last_seen, &values),
        };
        recorder.invoke(process, &op, &node);
        let outcome = tokio::select! {
            // Cancelled mid-operation: the invocation stays open, which the checker reads as
            // an unknown outcome, exactly what it is.
            _ = cancel.cancelled() => return,
            outcome = invoke_within(active.as_mut(), &op, config.timeout) => outcome,
        };
        recorder.complete_identified(process, &op, &outcome, &node, active.last_call());
        if config.duplicate_after.is_some() && op.f == CREATE && matches!(outcome, Outcome::Ok(_)) {
            answered.push_back((Instant::now(), op.clone()));
        }
        match &outcome {
            Outcome::Ok(value) => config.kind.remember(&mut last_seen, &op, value),
            Outcome::Fail(_) => {}
            Outcome::Info(_) => {
                // Its operation may still take effect: this process is done; a new one (new
                // number, new connection) takes the slot.
                process += u64::from(config.processes);
                client = None;
                // The new client cannot send the old one's calls again.
                answered.clear();
            }
        }
    }
}

/// The next operation of one process: its kind draws it.
fn next_operation(
    config: &WorkloadConfig,
    rng: &mut ChaCha8Rng,
    last_seen: &HashMap<String, Value>,
    values: &AtomicU64,
) -> Operation {
    config.kind.next(config, rng, last_seen, values)
}

/// Every key the workload may have touched: what final reads and per-node lookups read.
pub fn touched_keys(config: &WorkloadConfig) -> Vec<String> {
    config.kind.touched_keys(config)
}

/// After the workload: read every key once through a node that answers, with fresh processes
/// (nothing for a kind without final reads).
pub async fn final_reads(
    adapter: &dyn SystemAdapter,
    recorder: &Recorder,
    config: &WorkloadConfig,
    first_process: u64,
) {
    let Some(f) = config.kind.final_read() else {
        return;
    };
    let mut process = first_process;
    let keys = touched_keys(config);
    for key in keys {
        let op = Operation {
            f,
            key,
            value: Value::Null,
        };
        for node in &config.nodes {
            let Ok(mut client) = adapter.connect(node).await else {
                continue;
            };
            recorder.invoke(process, &op, node);
            let outcome = invoke_within(client.as_mut(), &op, config.timeout).await;
            recorder.complete(process, &op, &outcome, node);
            process += 1;
            if matches!(outcome, Outcome::Ok(_)) {
                break;
            }
        }
    }
}

#[cfg(test)]
impl WorkloadConfig {
    /// A small configuration for unit tests: `kind` on node `a`, the rest at test values.
    pub(crate) fn example(kind: WorkloadKind) -> Self {
        WorkloadConfig {
            kind,
            processes: 2,
            keys: 3,
            rate: 10.0,
            duration: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            nodes: vec!["a".into()],
            seed: 1,
            created: Default::default(),
            mix: S3Mix::DEFAULT,
            burst: false,
            stream_length: 1,
            duplicate_after: None,
            fencing: Default::default(),
            lease: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config() -> WorkloadConfig {
        WorkloadConfig::example(WorkloadKind::REGISTER)
    }

    #[test]
    fn writes_are_unique_and_cas_expects_a_seen_value() {
        let config = config();
        let values = AtomicU64::new(1);
        let mut rng = rng_for(1, "workload", 0);
        let mut last_seen = HashMap::new();
        let mut written = Vec::new();
        let mut cas = 0;
        for _ in 0..500 {
            let op = next_operation(&config, &mut rng, &last_seen, &values);
            match op.f {
                "write" => {
                    written.push(op.value.clone());
                    last_seen.insert(op.key.clone(), op.value.clone());
                }
                "cas" => {
                    cas += 1;
                    assert_eq!(Some(&op.value[0]), last_seen.get(&op.key));
                    written.push(op.value[1].clone());
                }
                _ => {}
            }
        }
        let mut unique = written.clone();
        unique.sort_by_key(|v| v.as_u64());
        unique.dedup();
        assert_eq!(unique.len(), written.len());
        assert!(cas > 50, "{cas}");
    }

    #[test]
    fn s3_operations_follow_the_mix_with_unique_bodies() {
        let mut config = config();
        config.kind = WorkloadKind::S3_OBJECT;
        config.mix = S3Mix {
            put_if_none_match: 3,
            delete: 1,
            ..Default::default()
        };
        let values = AtomicU64::new(1);
        let mut rng = rng_for(1, "workload", 0);
        let mut bodies = Vec::new();
        let mut deletes = 0;
        for _ in 0..400 {
            let op = next_operation(&config, &mut rng, &HashMap::new(), &values);
            match op.f {
                "put" => {
                    assert_eq!(op.value["if_none_match"], "*");
                    bodies.push(op.value["body"].as_str().unwrap().to_string());
                }
                "delete" => deletes += 1,
                other => panic!("{other} is not in the mix"),
            }
        }
        assert!(
            deletes > 50 && bodies.len() > 200,
            "{deletes} {}",
            bodies.len()
        );
        let n = bodies.len();
        bodies.sort();
        bodies.dedup();
        assert_eq!(bodies.len(), n);
        // put-if-match expects the ETag the process saw, or reads when it saw none.
        config.mix = S3Mix {
            put_if_match: 1,
            ..Default::default()
        };
        let op = next_operation(&config, &mut rng, &HashMap::new(), &values);
        assert_eq!(op.f, "get");
        let seen: HashMap<String, Value> = (0..3).map(|k| (format!("o{k}"), json!("e1"))).collect();
        let op = next_operation(&config, &mut rng, &seen, &values);
        assert_eq!(op.value["if_match"], "e1");
    }

    /// A client that answers every operation OK and names the key as its call id.
    struct Echo {
        last: Option<(String, String)>,
    }

    #[async_trait::async_trait]
    impl SystemClient for Echo {
        async fn invoke(&mut self, op: &Operation) -> Outcome {
            self.last = Some(("client".into(), op.key.clone()));
            Outcome::Ok(op.value.clone())
        }
        fn last_call(&self) -> Option<(String, String)> {
            self.last.clone()
        }
    }

    /// A client that never knows: every operation's outcome is unknown, after `delay`.
    struct Unknowing {
        delay: Duration,
    }

    #[async_trait::async_trait]
    impl SystemClient for Unknowing {
        async fn invoke(&mut self, _op: &Operation) -> Outcome {
            tokio::time::sleep(self.delay).await;
            Outcome::Info("connection reset".into())
        }
    }

    /// A read whose outcome is unknown is fail, whatever the client said or however it ended;
    /// a write's stays info.
    #[tokio::test]
    async fn an_unknown_read_is_fail_and_an_unknown_write_info() {
        let op = |f: &'static str| Operation {
            f,
            key: "k".into(),
            value: Value::Null,
        };
        let patience = Duration::from_millis(50);
        let mut answers = Unknowing {
            delay: Duration::ZERO,
        };
        let mut hangs = Unknowing {
            delay: Duration::from_secs(5),
        };
        for f in ["read", "get", "final-read"] {
            let said = invoke_within(&mut answers, &op(f), patience).await;
            assert!(
                matches!(&said, Outcome::Fail(w) if w == "connection reset"),
                "{f}: {said:?}"
            );
            let timed_out = invoke_within(&mut hangs, &op(f), patience).await;
            assert!(
                matches!(&timed_out, Outcome::Fail(w) if w == "timeout"),
                "{f}: {timed_out:?}"
            );
        }
        for f in ["write", "cas", "put"] {
            let said = invoke_within(&mut answers, &op(f), patience).await;
            assert!(matches!(said, Outcome::Info(_)), "{f}: {said:?}");
            let timed_out = invoke_within(&mut hangs, &op(f), patience).await;
            assert!(matches!(timed_out, Outcome::Info(_)), "{f}: {timed_out:?}");
        }
    }

    struct EchoAdapter;

    #[async_trait::async_trait]
    impl SystemAdapter for EchoAdapter {
        async fn roles(&self) -> std::collections::BTreeMap<String, crate::scenario::Role> {
            Default::default()
        }
        async fn connect(&self, _node: &str) -> Result<Box<dyn SystemClient>, String> {
            Ok(Box::new(Echo { last: None }))
        }
    }

    /// duplicate-after: every create answered OK is sent again (`resend`) once it is that old,
    /// and completions carry the client's retry identity.
    #[tokio::test]
    async fn answered_creates_are_sent_again_after_the_delay() {
        let dir = std::env::temp_dir().join(format!("chaos-dup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.jsonl");
        let recorder = Arc::new(Recorder::create(&path, Instant::now()).unwrap());
        let mut c = config();
        c.kind = WorkloadKind::CREATE;
        c.processes = 1;
        c.rate = 20.0;
        c.duration = Duration::from_millis(1500);
        c.duplicate_after = Some(Duration::from_millis(500));
        run(
            Arc::new(EchoAdapter),
            recorder,
            Arc::new(c),
            CancellationToken::new(),
        )
        .await;
        let events: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let oks = |f: &str| -> Vec<Value> {
            events
                .iter()
                .filter(|e| e["type"] == "ok" && e["f"] == f)
                .cloned()
                .collect()
        };
        let (creates, resends) = (oks(CREATE), oks("resend"));
        assert!(creates.len() >= 5 && !resends.is_empty(), "{events:?}");
        // Each resend repeats an earlier create: same key, same value, same identity.
        for r in &resends {
            let first = creates.iter().find(|c| c["key"] == r["key"]).unwrap();
            assert_eq!(first["value"], r["value"]);
            assert_eq!(
                (&first["client"], &first["call"]),
                (&r["client"], &r["call"])
            );
        }
        // The oldest creates come back first, each once.
        let keys: Vec<&Value> = resends.iter().map(|r| &r["key"]).collect();
        let firsts: Vec<&Value> = creates.iter().take(keys.len()).map(|c| &c["key"]).collect();
        assert_eq!(keys, firsts);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_same_seed_gives_the_same_operations() {
        let config = config();
        let ops = |seed| {
            let values = AtomicU64::new(1);
            let mut rng = rng_for(seed, "workload", 0);
            (0..50)
                .map(|_| {
                    let op = next_operation(&config, &mut rng, &HashMap::new(), &values);
                    format!("{} {} {}", op.f, op.key, op.value)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(ops(4), ops(4));
        assert_ne!(ops(4), ops(5));
    }
}
