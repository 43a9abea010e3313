//! Workloads as types: each kind a scenario's `workload: { kind: ... }` can name is one
//! [`Workload`] (its name, the operations it records, its keys, how a process draws its next
//! operation, which keys it touched, its final read, what it tells the terminal, how it plays,
//! the `workload:` keys of its own), and `REGISTRY` (workloads/mod.rs) lists them once. Parsing
//! `kind:`, validation, the run and the final reads ask the kind rather than naming kinds.
//!
//! A new workload kind is a module of `workloads/` with its type; its `mod` line, its constant
//! and its line in `REGISTRY` in workloads/mod.rs; and its row in docs/scenarios.md (the
//! systems that play it list it in their `SystemInfo::workloads`).

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{WorkloadConfig, REGISTRY};
use crate::error::Result;
use crate::recorder::Recorder;
use crate::scenario::named::{self, Named};
use crate::scenario::units::format_duration;
use crate::scenario::WorkloadSpec;
use crate::systems::{Operation, SystemAdapter};

/// What a workload plays against.
pub struct WorkloadContext {
    pub adapter: Arc<dyn SystemAdapter>,
    pub recorder: Arc<Recorder>,
    pub config: Arc<WorkloadConfig>,
    /// The run folder, for a workload's own side file (fencing.jsonl).
    pub run_dir: PathBuf,
    pub cancel: CancellationToken,
    /// When the processes stop (the duration, or later with `lasts-past:`).
    pub end: Arc<super::WorkloadEnd>,
}

/// A workload kind. Most play through processes (Jepsen's sense: one operation in flight
/// each), which draw each operation from [`Workload::next`]; a kind that plays its own way
/// (fencing rounds, lease files) overrides [`Workload::play`].
#[async_trait]
pub trait Workload: Send + Sync + 'static {
    /// Its name in `workload: { kind: ... }`.
    fn name(&self) -> &'static str;

    /// The operation kinds (`f`) it records in history.jsonl, its final reads and resends
    /// among them: what a `reached:` filter's `f:` can name.
    fn operation_kinds(&self) -> &'static [&'static str];

    /// The name of its key number `index` (of `keys:`).
    fn key(&self, index: u32) -> String;

    /// The `workload:` keys only this kind takes (`mix`, `fencing`, `duplicate-after`, ...).
    fn takes(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether it plays on an object store (the `s3:` section of a system that speaks S3).
    fn needs_object_store(&self) -> bool {
        false
    }

    /// Whether it plays through processes, which `lasts-past:` keeps going.
    fn plays_through_processes(&self) -> bool {
        true
    }

    /// When it ends at the latest: its duration unless it waits for more.
    fn longest(&self, spec: &WorkloadSpec) -> Duration {
        spec.duration.0
    }

    /// One line for the terminal: what the processes do, how fast, for how long.
    fn describe(&self, c: &WorkloadConfig) -> String {
        format!(
            "{} processes, {} keys, {}/s for {}",
            c.processes,
            c.keys,
            c.rate,
            format_duration(c.duration)
        )
    }

    /// The next operation of one process, from the values it last saw per key and the run's
    /// counter of unique values. A kind that plays its own way draws none: a read of its first
    /// key stands for one.
    fn next(
        &self,
        _config: &WorkloadConfig,
        _rng: &mut ChaCha8Rng,
        _last_seen: &HashMap<String, Value>,
        _values: &AtomicU64,
    ) -> Operation {
        Operation {
            f: "get",
            key: self.key(0),
            value: Value::Null,
        }
    }

    /// What a process remembers of an operation answered OK (what its next cas expects):
    /// the value it read or wrote, a cas's new value.
    fn remember(&self, last_seen: &mut HashMap<String, Value>, op: &Operation, answer: &Value) {
        let seen = match op.f {
            "cas" => answer.get(1).cloned().unwrap_or(Value::Null),
            _ => answer.clone(),
        };
        last_seen.insert(op.key.clone(), seen);
    }

    /// Every key it may have touched: what final reads and per-node lookups read.
    fn touched_keys(&self, config: &WorkloadConfig) -> Vec<String> {
        (0..config.keys).map(|k| self.key(k)).collect()
    }

    /// The operation (`f`) of its final reads, None when it has none. The durable check reads
    /// a set's (a file's) final state from operations named final-read.
    fn final_read(&self) -> Option<&'static str> {
        Some("read")
    }

    /// Plays until the duration is over or `cancel` fires, recording every operation.
    async fn play(&self, ctx: WorkloadContext) -> Result<()> {
        super::run_until(ctx.adapter, ctx.recorder, ctx.config, ctx.cancel, ctx.end).await;
        Ok(())
    }
}

/// The created keys, for the kinds that make a fresh key per operation.
pub(super) fn created(config: &WorkloadConfig) -> Vec<String> {
    config.created.lock().map(|c| c.clone()).unwrap_or_default()
}

/// A workload kind, as a scenario names it: a handle on its [`Workload`] in the registry.
#[derive(Clone, Copy)]
pub struct WorkloadKind(pub(super) &'static dyn Workload);

impl WorkloadKind {
    /// The kind of a name (`kind:`).
    pub fn named(name: &str) -> Option<WorkloadKind> {
        REGISTRY.iter().find(|k| k.name() == name).copied()
    }

    pub fn workload(self) -> &'static dyn Workload {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

/// Every kind's name, in registry order.
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| REGISTRY.iter().map(|k| k.name()).collect())
}

/// The names of the kinds for which `which` holds, in registry order.
pub fn names_where(which: impl Fn(&dyn Workload) -> bool) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|k| which(k.workload()))
        .map(|k| k.name())
        .collect()
}

impl std::ops::Deref for WorkloadKind {
    type Target = dyn Workload;
    fn deref(&self) -> &(dyn Workload + 'static) {
        self.0
    }
}

impl PartialEq for WorkloadKind {
    fn eq(&self, other: &WorkloadKind) -> bool {
        self.name() == other.name()
    }
}

impl Eq for WorkloadKind {}

impl fmt::Debug for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for WorkloadKind {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// As a unit-only enum of the registry's names deserializes (the messages serde gives one).
impl<'de> Deserialize<'de> for WorkloadKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        named::deserialize(deserializer)
    }
}

impl Named for WorkloadKind {
    const ENUM: &'static str = "WorkloadKind";
    fn names() -> &'static [&'static str] {
        names()
    }
    fn named(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::named(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One kind per name; what a kind takes belongs to it alone, and a name reads back as its
    /// kind.
    #[test]
    fn the_registry_holds_together() {
        let mut seen = std::collections::BTreeSet::new();
        let mut keys = std::collections::BTreeSet::new();
        for kind in REGISTRY {
            assert!(seen.insert(kind.name()), "{kind} twice");
            for key in kind.workload().takes() {
                assert!(keys.insert(*key), "{key} taken twice");
            }
            let read: WorkloadKind =
                serde_json::from_value(serde_json::json!(kind.name())).unwrap();
            assert_eq!(read, *kind);
        }
        let err = serde_json::from_str::<WorkloadKind>("\"queue\"").unwrap_err();
        assert!(err.to_string().contains("`stream`"), "{err}");
    }
}
