//! Faults as types: each fault action is one [`Fault`] (its name, the scenario keys it takes,
//! its undo, how it is applied, what the final heal does for it, how faults.jsonl's readers
//! and the report's timeline show it), and [`REGISTRY`] lists them once. Everything else
//! (parsing `do:`, validation, the plan's draws, the engine, replay and shrink, the report,
//! the checks' fault windows, the final heal) asks the registry rather than naming actions.
//!
//! A new fault is a type in one of these modules (or a new one), its line in [`REGISTRY`] and
//! its row in docs/scenarios.md. A scenario key no fault takes yet is also a field of
//! `scenario::FaultStep`, of `plan::ActionParams` and a line of [`PARAMS`].

mod admin;
mod clock;
mod fs;
pub mod jvm;
mod network;
mod node;
mod proxy;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::FaultEngine;
use crate::cluster::Cluster;
use crate::error::Result;
use crate::run_folder::Grudge;
use crate::scenario::named::{self, Named};
use crate::scenario::plan::ActionParams;
use crate::scenario::FaultStep;

/// Every fault action, in the order `do:`'s error message and `chaos lint` list them. A new
/// fault is one line here.
pub static REGISTRY: &[&dyn Fault] = &[
    &node::Pause,
    &node::Unpause,
    &node::Kill,
    &node::Stop,
    &node::Start,
    &node::Restart,
    &network::Partition,
    &network::Heal,
    &proxy::LoseReply,
    &proxy::DelayReplies,
    &proxy::ResetConnections,
    &proxy::ClearProxy,
    &fs::SlowFsync,
    &fs::FailFsync,
    &fs::SlowWrites,
    &fs::Crash,
    &fs::ClearFs,
    &admin::TransferLeader,
    &admin::TakeSnapshot,
    &admin::CloseContainer,
    &admin::Prepare,
    &clock::ClockSkew,
    &clock::RestoreClock,
    &jvm::JvmDelay,
    &jvm::JvmThrow,
    &jvm::JvmHold,
    &jvm::JvmTrace,
    &jvm::JvmRule,
    &jvm::JvmUnload,
];

/// The scenario keys that set a fault's parameters (beside the trigger, target and timing
/// keys every step has), in the order validation reports them. Which fault takes which is
/// each fault's [`Fault::takes`] and [`Fault::needs`].
pub static PARAMS: &[Param] = &[
    Param::copied("match", "", |s| s.matching.is_some()),
    Param::copied("count", "", |s| s.count.is_some()),
    Param::copied("delay", "", |s| s.delay.is_some()),
    Param::copied("jitter", "", |s| s.jitter.is_some()),
    Param::copied("errno", "", |s| s.errno.is_some()),
    Param::copied("fraction", "", |s| s.fraction.is_some()),
    Param::copied("lose-unsynced", "", |s| s.lose_unsynced.is_some()),
    Param::copied("container", " (the container id)", |s| {
        s.container.is_some()
    }),
    Param::copied("via", "", |s| s.via.is_some()),
    Param::copied("paths", "", |s| s.paths.is_some()),
    Param::drawn("offset", " (e.g. +70s, -30s, +60s..+90s)", |s| {
        s.offset.is_some()
    }),
    Param::drawn("mode", "", |s| s.mode.is_some()),
    Param::drawn("grudge", "", |s| s.grudge.is_some()),
    Param::copied("jvm", " (class, method, at: where the rule acts)", |s| {
        s.jvm.is_some()
    }),
];

/// A scenario key of a fault step that sets a parameter.
pub struct Param {
    pub key: &'static str,
    /// Said after the key when a fault needs it and it is missing.
    pub hint: &'static str,
    /// Replay writes it from what the firing drew (its partition's sides, its clock offset)
    /// instead of copying the recorded step's.
    pub drawn: bool,
    /// Whether a step gives it.
    pub given: fn(&FaultStep) -> bool,
}

impl Param {
    const fn copied(key: &'static str, hint: &'static str, given: fn(&FaultStep) -> bool) -> Param {
        Param {
            key,
            hint,
            drawn: false,
            given,
        }
    }
    const fn drawn(key: &'static str, hint: &'static str, given: fn(&FaultStep) -> bool) -> Param {
        Param {
            key,
            hint,
            drawn: true,
            given,
        }
    }
}

/// What a fault acts through, which says what the nodes and the run need for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// The Docker API on the node's container.
    Docker,
    /// iptables rules in the nodes' network namespaces.
    Network,
    /// The harness's proxy in front of the clients' ports.
    Proxy,
    /// chaosfs mounted over the node's data directories (`x-chaos: { fs: [...] }`).
    Chaosfs,
    /// The system adapter's own admin tools (`SystemInfo::admin_actions`).
    Admin,
    /// libfaketime in the node's processes (`x-chaos: { clock-skew: true }`).
    Faketime,
    /// Byteman's agent in the node's JVM (`x-chaos: { jvm: PORT }`).
    Jvm,
}

/// How long faults.jsonl's readers (the report's fault lanes, a lost write's fault) count a
/// fault as in force after it applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InForce {
    /// It ends something rather than starting it (heal, unpause, start, restart): no window.
    Instant,
    /// Until its undo, else to the end of the run.
    UntilUndo,
    /// Until its undo, else until the final heal, which undoes it too.
    UntilUndoOrFinalHeal,
}

/// How the report's timeline draws the fault on its target nodes' rows.
#[derive(Clone, Copy, Debug)]
pub enum Shows {
    /// A mark named `what`; the state it opens on the node's row, and the states it closes.
    Mark {
        what: &'static str,
        opens: Option<&'static str>,
        closes: &'static [&'static str],
    },
    /// Down from its start to its end, then not answering until its `ready` event.
    Restart,
    /// The node's clock runs at the event's `offset` from then on.
    Clock,
    /// Not on the node rows (only in the fault lanes).
    Nothing,
}

/// One application of a fault on its resolved targets.
pub struct Cx<'a> {
    pub engine: &'a FaultEngine,
    /// The step's index in the scenario (a JVM fault's rule is named after it).
    pub step: usize,
    pub targets: &'a [String],
    pub params: &'a ActionParams,
    /// partition and its undo: who drops packets from whom (the step's own sides).
    pub grudge: Option<&'a Grudge>,
    /// clock-skew: the firing's drawn offset in ms.
    pub offset: Option<i64>,
}

impl<'a> Cx<'a> {
    pub fn cluster(&self) -> &'a Cluster {
        &self.engine.cluster
    }
}

/// What applying a fault gave: its outcome and faults.jsonl's `detail`.
pub type Applied = (Result<()>, Option<Value>);

/// What the final heal did: the node (or `all`), the action recorded, its outcome.
pub type Healed = (String, &'static str, Result<()>);

/// A fault action.
pub trait Fault: Send + Sync + 'static {
    /// The name a scenario's `do:` and faults.jsonl use.
    fn name(&self) -> &'static str;

    /// The action `for:` applies to undo it.
    fn undo(&self) -> Option<Action> {
        None
    }

    fn mechanism(&self) -> Mechanism {
        Mechanism::Docker
    }

    /// The [`PARAMS`] keys it takes.
    fn takes(&self) -> &'static [&'static str] {
        &[]
    }

    /// The [`PARAMS`] keys it cannot do without (each also in `takes`).
    fn needs(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its own rule on its parameters beyond `takes` and `needs`: the key and the message.
    fn check(&self, _step: &FaultStep) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Whether the step needs chaosfs on its nodes.
    fn needs_chaosfs(&self, _step: &FaultStep) -> bool {
        self.mechanism() == Mechanism::Chaosfs
    }

    /// Whether a refusal means the scenario cannot be played as written (a JVM rule the node's
    /// JVM refused: its class or method is not there): the run then ends 255 naming the step,
    /// rather than as a step that did not apply.
    fn fatal_when_refused(&self) -> bool {
        false
    }

    /// Whether it starts nodes again (the engine then waits for them to answer: phase `ready`).
    fn brings_back(&self) -> bool {
        false
    }

    /// The clock offset faults.jsonl records with it, from the firing's drawn one.
    fn recorded_offset(&self, _drawn: Option<i64>) -> Option<i64> {
        None
    }

    /// Applies it: the outcome, and faults.jsonl's `detail` (what it reached).
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied>;

    /// What the final heal does for faults still in force when the workload ends (the undo
    /// actions carry it: start, heal, clear-proxy, clear-fs, restore-clock).
    fn final_heal<'a>(&'a self, _cluster: &'a Cluster) -> BoxFuture<'a, Vec<Healed>> {
        Box::pin(async { Vec::new() })
    }

    fn in_force(&self) -> InForce {
        InForce::UntilUndo
    }

    /// A fault with no undo that counts, for the checks' fault windows, until its nodes are
    /// back (a short grace after it completed) rather than to the end of the run.
    fn ends_when_back(&self) -> bool {
        false
    }

    fn shows(&self) -> Shows {
        Shows::Nothing
    }

    /// Over once applied (a reset, a leader transfer, a snapshot, a clear): a line on the
    /// report's timeline rather than a window to the end of the run.
    fn over_once_applied(&self) -> bool {
        false
    }
}

/// A fault action, as a step names it: a handle on its [`Fault`] in the registry.
#[derive(Clone, Copy)]
pub struct Action(&'static dyn Fault);

impl Action {
    pub const fn of(fault: &'static dyn Fault) -> Action {
        Action(fault)
    }

    /// The action of a name (`do:`, faults.jsonl, a replayed step).
    pub fn named(name: &str) -> Option<Action> {
        REGISTRY
            .iter()
            .find(|f| f.name() == name)
            .map(|f| Action(*f))
    }

    pub fn all() -> impl Iterator<Item = Action> {
        REGISTRY.iter().map(|f| Action(*f))
    }

    pub fn name(self) -> &'static str {
        self.0.name()
    }

    pub fn fault(self) -> &'static dyn Fault {
        self.0
    }

    pub fn undo(self) -> Option<Action> {
        self.0.undo()
    }

    pub fn takes(self, key: &str) -> bool {
        self.0.takes().contains(&key)
    }

    fn index(self) -> usize {
        REGISTRY
            .iter()
            .position(|f| f.name() == self.name())
            .unwrap_or(usize::MAX)
    }
}

/// Every action's name, for messages.
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| REGISTRY.iter().map(|f| f.name()).collect())
}

/// Names as a sentence lists them: `a`, `a and b`, `a, b and c`.
pub fn listed(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The names of the faults that take (or need) a key, in registry order.
pub fn taking(key: &str, needed: bool) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|f| {
            if needed {
                f.needs().contains(&key)
            } else {
                f.takes().contains(&key)
            }
        })
        .map(|f| f.name())
        .collect()
}

/// The final heal: each fault's, in registry order, so that every node runs unpaused, every
/// partition, proxy fault and filesystem fault is gone and every moved clock is true again.
pub async fn final_heal(cluster: &Cluster) -> Vec<Healed> {
    let mut done = Vec::new();
    for fault in REGISTRY {
        done.extend(fault.final_heal(cluster).await);
    }
    done
}

/// Runs `each` on every target at once; the first error, if any.
async fn on_each<'a, F, Fut>(targets: &'a [String], each: F) -> Applied
where
    F: Fn(&'a str) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let results = futures_util::future::join_all(targets.iter().map(|n| each(n))).await;
    let outcome = results.into_iter().collect::<Result<Vec<()>>>().map(|_| ());
    (outcome, None)
}

impl PartialEq for Action {
    fn eq(&self, other: &Action) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Action {}

impl Hash for Action {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state)
    }
}

impl PartialOrd for Action {
    fn partial_cmp(&self, other: &Action) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// In registry order.
impl Ord for Action {
    fn cmp(&self, other: &Action) -> std::cmp::Ordering {
        self.index().cmp(&other.index())
    }
}

impl fmt::Debug for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// As a unit-only enum of the registry's names deserializes (the messages serde gives one).
impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        named::deserialize(deserializer)
    }
}

impl Named for Action {
    const ENUM: &'static str = "Action";
    fn names() -> &'static [&'static str] {
        names()
    }
    fn named(name: &str) -> Option<Action> {
        Action::named(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One fault per name; what a fault takes is a parameter, what it needs it takes, its
    /// undo is registered.
    #[test]
    fn the_registry_holds_together() {
        let mut seen = std::collections::BTreeSet::new();
        for fault in REGISTRY {
            assert!(seen.insert(fault.name()), "{} twice", fault.name());
            for key in fault.takes() {
                assert!(PARAMS.iter().any(|p| p.key == *key), "{key}");
            }
            for key in fault.needs() {
                assert!(fault.takes().contains(key), "{key}");
            }
            if let Some(undo) = fault.undo() {
                assert_eq!(Action::named(undo.name()), Some(undo));
            }
        }
        assert_eq!(names().len(), REGISTRY.len());
        assert_eq!(listed(&["a", "b", "c"]), "a, b and c");
        assert_eq!(
            taking("delay", true),
            ["delay-replies", "slow-fsync", "slow-writes", "jvm-delay"]
        );
    }

    #[test]
    fn an_unknown_action_names_every_action() {
        let err = serde_json::from_str::<Action>("\"explode\"").unwrap_err();
        assert!(err.to_string().contains("`restore-clock`"), "{err}");
    }
}
