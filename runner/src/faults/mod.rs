//! The fault engine: plays a scenario's fault steps against the cluster. Each step waits for its
//! trigger (a time, a count of completed operations, a log line, a probed role), resolves its
//! targets at that moment, applies its action, and undoes it after `for:`. Every action and undo
//! is recorded in faults.jsonl, with what happened that no step did (effects.rs) and the final
//! heal: the engine is faults.jsonl's one writer.

mod effects;
pub mod kinds;
pub mod log;
mod partition;
mod triggers;

pub use partition::partition_grudge;
use triggers::Trigger;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::cluster::Cluster;
use crate::recorder::Recorder;
use crate::run_folder::{FaultEvent, FaultLog, Grudge, Phase};
use crate::scenario::plan::{ActionParams, Firing, Plan, StepPlan};
use crate::scenario::{Action, FaultStep, PartitionMode, Pick, Role, Target};
use crate::systems::SystemAdapter;
use kinds::Cx;

pub struct FaultEngine {
    pub cluster: Arc<Cluster>,
    pub adapter: Arc<dyn SystemAdapter>,
    pub recorder: Arc<Recorder>,
    pub log: FaultLog,
    /// What the progress line shows: faults in force now (by step) and steps that fired.
    pub state: std::sync::Mutex<EngineState>,
    /// How long a node a fault started again may take to answer again (the system's
    /// readiness budget).
    pub ready_within: Duration,
}

#[derive(Default)]
pub struct EngineState {
    active: BTreeMap<usize, String>,
    fired: BTreeSet<usize>,
    /// Steps whose every firing has played out (what `armed-after:` waits for).
    over: BTreeSet<usize>,
    /// The nodes each step acted on: the targets of its applies that succeeded (what
    /// `node: { of-step: N }` names).
    targets: BTreeMap<usize, BTreeSet<String>>,
    /// The exits of nodes recorded so far (node, when Docker saw it end).
    exits_seen: BTreeSet<(String, String)>,
    /// The first step a node refused in a way that means the scenario cannot be played as
    /// written (`Fault::fatal_when_refused`), in words.
    refused: Option<String>,
}

/// How long a role target waits for a node to hold the role. An election takes a second or two,
/// but one right after a partition heals, on a loaded machine, took more than 5 s in CI.
const ROLE_WAIT: Duration = Duration::from_secs(10);

impl FaultEngine {
    pub fn new(
        cluster: Arc<Cluster>,
        adapter: Arc<dyn SystemAdapter>,
        recorder: Arc<Recorder>,
        log: FaultLog,
    ) -> FaultEngine {
        FaultEngine {
            cluster,
            adapter,
            recorder,
            log,
            state: Default::default(),
            ready_within: Duration::from_secs(120),
        }
    }

    /// The budget for nodes a fault started again to answer again.
    pub fn with_ready_within(mut self, within: Duration) -> FaultEngine {
        self.ready_within = within;
        self
    }

    /// Steps whose every firing has played out, its nodes answering again.
    pub fn steps_over(&self) -> BTreeSet<usize> {
        self.state().over.clone()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, EngineState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The faults in force now, as `partition etcd2`.
    pub fn active_faults(&self) -> Vec<String> {
        self.state().active.values().cloned().collect()
    }

    /// The first step whose fault a node refused for good (a JVM rule whose class or method the
    /// node's JVM does not have), in words: the run then ends 255 naming it.
    pub fn refused(&self) -> Option<String> {
        self.state().refused.clone()
    }

    /// The nodes step `step` acted on so far; None until one of its applies succeeded.
    pub fn targets_of(&self, step: usize) -> Option<Vec<String>> {
        let state = self.state();
        Some(state.targets.get(&step)?.iter().cloned().collect())
    }

    /// Steps that fired at least once.
    pub fn fired_steps(&self) -> BTreeSet<usize> {
        self.state().fired.clone()
    }

    /// Starts one task per step; they end when their firings are done or `stop` is cancelled
    /// (the final heal then undoes whatever is still broken).
    pub fn spawn_steps(
        self: &Arc<Self>,
        steps: &[&FaultStep],
        plan: &Plan,
        workload_start: Instant,
        stop: CancellationToken,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        plan.steps
            .iter()
            .zip(steps)
            .map(|(step_plan, step)| {
                let engine = self.clone();
                let trigger = Trigger::from_step(step);
                // Subscribe now, so no line printed before the task first runs is missed.
                let logs = engine.cluster.subscribe_logs();
                let step_plan = step_plan.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = engine.play_step(step_plan, trigger, logs, workload_start) => {}
                    }
                })
            })
            .collect()
    }

    async fn play_step(
        &self,
        step: StepPlan,
        trigger: Trigger,
        mut logs: tokio::sync::broadcast::Receiver<crate::cluster::LogLine>,
        workload_start: Instant,
    ) {
        if let Some(earlier) = step.armed_after {
            while !self.state().over.contains(&earlier) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            // Lines printed before the step was armed do not count.
            logs = logs.resubscribe();
        }
        for firing in &step.firings {
            let Some(fired_by) = trigger
                .fired(self, &step, firing, &mut logs, workload_start)
                .await
            else {
                return;
            };
            self.fire(&step, firing, fired_by).await;
        }
        self.state().over.insert(step.step);
    }

    async fn fire(&self, step: &StepPlan, firing: &Firing, trigger: String) {
        self.state().fired.insert(step.step);
        let mut rng = ChaCha8Rng::seed_from_u64(firing.choice);
        let started = self.recorder.now();
        let targets = match self.resolve(&step.target, &mut rng).await {
            Ok(t) => t,
            Err(why) => {
                self.record(FaultEvent {
                    time: self.recorder.now(),
                    started,
                    step: Some(step.step),
                    action: firing.action.name().into(),
                    phase: Phase::Apply,
                    targets: Vec::new(),
                    mode: None,
                    grudge: None,
                    trigger: Some(trigger),
                    outcome: format!("skipped: {why}"),
                    detail: None,
                    offset: None,
                });
                return;
            }
        };
        let grudge = firing.mode.map(|mode| match &step.params.grudge {
            Some(grudge) => grudge.clone(),
            None => partition_grudge(mode, &targets, &self.cluster.names(), &mut rng),
        });
        let act = |action, phase| Act {
            step: step.step,
            action,
            phase,
            targets: &targets,
            mode: None,
            grudge: grudge.as_ref(),
            params: &step.params,
            trigger: None,
            offset: None,
        };
        self.act(Act {
            mode: firing.mode,
            trigger: Some(trigger),
            offset: firing.offset,
            ..act(firing.action, Phase::Apply)
        })
        .await;
        if let (Some(hold), Some(undo)) = (firing.hold, firing.action.undo()) {
            tokio::time::sleep(hold).await;
            // Undoing a partition removes this step's rules only, not another step's.
            self.act(act(undo, Phase::Undo)).await;
        }
        if let Some(then) = &firing.then {
            tokio::time::sleep(then.after.unwrap_or_default()).await;
            self.act(Act {
                grudge: None,
                ..act(then.action, Phase::Then)
            })
            .await;
        }
    }

    async fn act(&self, act: Act<'_>) {
        let started = self.recorder.now();
        if act.phase == Phase::Apply {
            let label = format!("{} {}", act.action.name(), act.targets.join(","));
            self.state().active.insert(act.step, label);
        }
        let fault = act.action.fault();
        let offset = fault.recorded_offset(act.offset);
        // If the run ends while the action runs (an admin command that waits on a node that is
        // down), the task is dropped here: say so rather than leave no trace of the step.
        let mut unfinished = Unfinished {
            engine: self,
            event: Some(FaultEvent {
                time: 0,
                started,
                step: Some(act.step),
                action: act.action.name().into(),
                phase: act.phase,
                targets: act.targets.to_vec(),
                mode: None,
                grudge: None,
                trigger: act.trigger.clone(),
                outcome: "interrupted: the run ended while the action was running".into(),
                detail: None,
                offset: offset.map(crate::scenario::units::format_offset),
            }),
        };
        let (outcome, detail) = fault
            .apply(Cx {
                engine: self,
                step: act.step,
                targets: act.targets,
                params: act.params,
                grudge: act.grudge,
                offset,
            })
            .await;
        unfinished.event = None;
        // An undo or follow-up ends the step's fault; an action with no undo is over once done.
        if act.phase != Phase::Apply || act.action.undo().is_none() {
            self.state().active.remove(&act.step);
        }
        let brought_back = outcome.is_ok() && fault.brings_back();
        if let (Err(e), true) = (&outcome, fault.fatal_when_refused()) {
            self.state().refused.get_or_insert_with(|| {
                format!(
                    "step {} ({} on {}) was refused: {e}",
                    act.step,
                    act.action.name(),
                    act.targets.join(", ")
                )
            });
        }
        self.record(FaultEvent {
            time: self.recorder.now(),
            started,
            step: Some(act.step),
            action: act.action.name().into(),
            phase: act.phase,
            targets: act.targets.to_vec(),
            mode: act.mode.map(|m| format!("{m:?}").to_lowercase()),
            grudge: act.grudge.filter(|_| act.phase == Phase::Apply).cloned(),
            trigger: act.trigger.clone(),
            outcome: match outcome {
                Ok(()) => "ok".into(),
                Err(e) => e.to_string(),
            },
            detail,
            offset: offset.map(crate::scenario::units::format_offset),
        });
        if brought_back {
            self.await_answering(&act).await;
        }
    }

    /// After a restart or start: waits until every node it brought back is healthy and its
    /// adapter says it answers again (an OM back in its Ratis group, with a leader), and
    /// records when (phase `ready`), so that what must come after the restart (a step's
    /// `armed-after:`, a `reached:` predicate, `workload.lasts-past`) follows the cluster, not
    /// the clock.
    async fn await_answering(&self, act: &Act<'_>) {
        let started = self.recorder.now();
        let begun = Instant::now();
        let deadline = begun + self.ready_within;
        let mut pending: Vec<String> = act.targets.to_vec();
        loop {
            let mut still = Vec::new();
            for node in pending {
                if !(self.cluster.is_healthy(&node).await && self.adapter.answers(&node).await) {
                    still.push(node);
                }
            }
            pending = still;
            if pending.is_empty() || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let after = begun.elapsed().as_secs_f64();
        self.record(FaultEvent {
            time: self.recorder.now(),
            started,
            step: Some(act.step),
            action: act.action.name().into(),
            phase: Phase::Ready,
            targets: act.targets.to_vec(),
            mode: None,
            grudge: None,
            trigger: None,
            outcome: if pending.is_empty() {
                format!("answering again after {after:.1} s")
            } else {
                format!(
                    "{} not answering within {:.0} s",
                    pending.join(", "),
                    self.ready_within.as_secs_f64()
                )
            },
            detail: Some(json!({ "after_s": after, "not_answering": pending })),
            offset: None,
        });
    }

    async fn resolve(&self, target: &Target, rng: &mut ChaCha8Rng) -> Result<Vec<String>, String> {
        match target {
            Target::Nodes(nodes) => Ok(nodes.clone()),
            Target::Select { role, pick, among } => {
                let mut candidates: Vec<String> = match role {
                    None => self.cluster.names(),
                    Some(role) => self.nodes_with_role(*role, among.as_deref()).await,
                };
                if let Some(among) = among {
                    candidates.retain(|n| among.contains(n));
                }
                if candidates.is_empty() {
                    let of = among
                        .as_ref()
                        .map(|a| format!(" among {}", a.join(", ")))
                        .unwrap_or_default();
                    let role = role.map_or("any".into(), |r| format!("{r:?}").to_lowercase());
                    return Err(format!("no node{of} had role {role} within {ROLE_WAIT:?}"));
                }
                candidates.shuffle(rng);
                let n = candidates.len();
                let count = match pick {
                    Pick::One => 1,
                    Pick::All => n,
                    Pick::Majority => n / 2 + 1,
                    Pick::Minority => (n.saturating_sub(1) / 2).max(1),
                };
                candidates.truncate(count.min(n));
                candidates.sort();
                Ok(candidates)
            }
        }
    }

    /// Nodes with a role (of `among` when given); during an election nobody is leader, so ask
    /// again for a while.
    async fn nodes_with_role(&self, role: Role, among: Option<&[String]>) -> Vec<String> {
        let deadline = Instant::now() + ROLE_WAIT;
        loop {
            // A node another step took down or paused while the question was out answered as
            // it was, not as it is: leave it out (seen: a leader another step killed 80 ms
            // before; an etcd leader an `every:` step paused 0.3 s before, which the other
            // nodes still named as leader, so "pause the leader" found it already paused).
            let found: Vec<String> = self
                .adapter
                .roles()
                .await
                .into_iter()
                .filter(|(n, r)| {
                    *r == role && !self.cluster.is_downed(n) && !self.cluster.is_paused(n)
                })
                .filter(|(n, _)| among.is_none_or(|among| among.contains(n)))
                .map(|(n, _)| n)
                .collect();
            if !found.is_empty() || Instant::now() >= deadline {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The final heal: every fault's (`Fault::final_heal`: nodes running and unpaused,
    /// partitions, proxy and chaosfs faults gone, clocks true), each recorded.
    pub async fn final_heal(&self) {
        for (node, action, outcome) in kinds::final_heal(&self.cluster).await {
            let now = self.recorder.now();
            let outcome = match outcome {
                Ok(()) => "ok".into(),
                Err(e) => e.to_string(),
            };
            self.record(FaultEvent {
                offset: Action::named(action)
                    .and_then(|a| a.fault().recorded_offset(None))
                    .map(crate::scenario::units::format_offset),
                ..FaultEvent::at(now, action.into(), Phase::FinalHeal, node, outcome)
            });
        }
    }

    /// Records without a log line on the terminal (for the many effects chaosfs reports).
    pub fn record_quietly(&self, event: FaultEvent) {
        self.log.write(&event);
    }

    pub fn record(&self, event: FaultEvent) {
        if let (Some(step), Phase::Apply, true) = (event.step, &event.phase, event.ok()) {
            let mut state = self.state();
            let nodes = state.targets.entry(step).or_default();
            nodes.extend(event.targets.iter().cloned());
        }
        tracing::info!(
            "fault {} {} {:?}: {}",
            event.phase,
            event.action,
            event.targets,
            event.outcome
        );
        self.log.write(&event);
    }
}

/// The record of an action that has not finished, written if its task is dropped first.
struct Unfinished<'a> {
    engine: &'a FaultEngine,
    event: Option<FaultEvent>,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if let Some(mut event) = self.event.take() {
            event.time = self.engine.recorder.now();
            self.engine.record(event);
        }
    }
}

/// One action to apply and record.
struct Act<'a> {
    step: usize,
    action: Action,
    phase: Phase,
    targets: &'a [String],
    mode: Option<PartitionMode>,
    grudge: Option<&'a Grudge>,
    params: &'a ActionParams,
    trigger: Option<String>,
    /// clock-skew: this firing's offset in ms.
    offset: Option<i64>,
}
