//! The fault engine: plays a scenario's fault steps against the cluster. Each step waits for its
//! trigger (a time, a count of completed operations, a log line, a probed role), resolves its
//! targets at that moment, applies its action, and undoes it after `for:`. Every action and undo
//! is recorded in faults.jsonl.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use regex::Regex;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::cluster::Cluster;
use crate::recorder::{FaultEvent, JsonlWriter, Recorder};
use crate::scenario::plan::{Firing, Plan, StepPlan};
use crate::scenario::{Action, FaultStep, PartitionMode, Pick, Role, Target};
use crate::systems::SystemAdapter;

pub struct FaultEngine {
    pub cluster: Arc<Cluster>,
    pub adapter: Arc<dyn SystemAdapter>,
    pub recorder: Arc<Recorder>,
    pub log: Arc<JsonlWriter>,
}

/// How long a role target waits for a node to hold the role (an election takes a second or two).
const ROLE_WAIT: Duration = Duration::from_secs(5);

/// Node -> the nodes it drops packets from.
pub type Grudge = BTreeMap<String, BTreeSet<String>>;

impl FaultEngine {
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
        for firing in &step.firings {
            let fired_by = match &trigger {
                Trigger::Time => {
                    let at = workload_start + firing.at.unwrap_or_default();
                    tokio::time::sleep_until(at.into()).await;
                    step.trigger.clone()
                }
                Trigger::Ops(n) => {
                    let mut completed = self.recorder.completed();
                    let _ = completed.wait_for(|c| *c >= *n).await;
                    step.trigger.clone()
                }
                Trigger::Log { node, regex } => loop {
                    match logs.recv().await {
                        Ok(line) => {
                            let node_matches = node.as_ref().is_none_or(|n| *n == line.node);
                            if node_matches && regex.is_match(&line.text) {
                                break format!("{} ({}: {})", step.trigger, line.node, line.text);
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => return,
                    }
                },
                Trigger::Probe { node, role } => loop {
                    let roles = self.adapter.roles().await;
                    let hit = roles
                        .iter()
                        .find(|(n, r)| **r == *role && node.as_ref().is_none_or(|want| want == *n));
                    if let Some((n, _)) = hit {
                        break format!("{} ({n})", step.trigger);
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                },
            };
            self.fire(step.step, &step.target, firing, fired_by).await;
        }
    }

    async fn fire(&self, step: usize, target: &Target, firing: &Firing, trigger: String) {
        let mut rng = ChaCha8Rng::seed_from_u64(firing.choice);
        let started = self.recorder.now();
        let targets = match self.resolve(target, &mut rng).await {
            Ok(t) => t,
            Err(why) => {
                self.record(FaultEvent {
                    time: self.recorder.now(),
                    started,
                    step: Some(step),
                    action: firing.action.name().into(),
                    phase: "apply",
                    targets: Vec::new(),
                    mode: None,
                    grudge: None,
                    trigger: Some(trigger),
                    outcome: format!("skipped: {why}"),
                });
                return;
            }
        };
        let grudge = firing.mode.map(|mode| {
            let all = self.cluster.names();
            partition_grudge(mode, &targets, &all, &mut rng)
        });
        self.act(
            step,
            firing.action,
            "apply",
            &targets,
            firing.mode,
            grudge.as_ref(),
            Some(trigger),
        )
        .await;
        if let (Some(hold), Some(undo)) = (firing.hold, firing.action.undo()) {
            tokio::time::sleep(hold).await;
            // Undoing a partition removes this step's rules only, not another step's.
            self.act(step, undo, "undo", &targets, None, grudge.as_ref(), None)
                .await;
        }
        if let Some(then) = &firing.then {
            tokio::time::sleep(then.after.unwrap_or_default()).await;
            self.act(step, then.action, "then", &targets, None, None, None)
                .await;
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn act(
        &self,
        step: usize,
        action: Action,
        phase: &'static str,
        targets: &[String],
        mode: Option<PartitionMode>,
        grudge: Option<&Grudge>,
        trigger: Option<String>,
    ) {
        let started = self.recorder.now();
        let outcome = match (action, grudge) {
            (Action::Partition, Some(grudge)) => self.cluster.partition(grudge).await.map(|_| ()),
            (Action::Heal, Some(grudge)) => self.cluster.unpartition(grudge).await,
            (Action::Heal, None) => self.cluster.heal_network().await,
            _ => {
                let results = futures_util::future::join_all(
                    targets.iter().map(|node| self.node_action(action, node)),
                )
                .await;
                results
                    .into_iter()
                    .collect::<Result<Vec<()>, _>>()
                    .map(|_| ())
            }
        };
        self.record(FaultEvent {
            time: self.recorder.now(),
            started,
            step: Some(step),
            action: action.name().into(),
            phase,
            targets: targets.to_vec(),
            mode: mode.map(|m| format!("{m:?}").to_lowercase()),
            grudge: grudge.map(|g| json!(g)),
            trigger,
            outcome: match outcome {
                Ok(()) => "ok".into(),
                Err(e) => e.to_string(),
            },
        });
    }

    async fn node_action(&self, action: Action, node: &str) -> crate::error::Result<()> {
        let c = &self.cluster;
        match action {
            Action::Pause => c.pause(node).await,
            Action::Unpause => c.unpause(node).await,
            Action::Kill => c.kill(node).await,
            Action::Stop => c.stop(node).await,
            Action::Start => c.start(node).await,
            Action::Restart => c.restart(node).await,
            Action::Partition | Action::Heal => Ok(()),
        }
    }

    async fn resolve(&self, target: &Target, rng: &mut ChaCha8Rng) -> Result<Vec<String>, String> {
        match target {
            Target::Nodes(nodes) => Ok(nodes.clone()),
            Target::Select { role, pick } => {
                let mut candidates: Vec<String> = match role {
                    None => self.cluster.names(),
                    Some(role) => self.nodes_with_role(*role).await,
                };
                if candidates.is_empty() {
                    return Err(
                        format!("no node had role {role:?} within {ROLE_WAIT:?}").to_lowercase()
                    );
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

    /// Nodes with a role; during an election nobody is leader, so ask again for a while.
    async fn nodes_with_role(&self, role: Role) -> Vec<String> {
        let deadline = Instant::now() + ROLE_WAIT;
        loop {
            let found: Vec<String> = self
                .adapter
                .roles()
                .await
                .into_iter()
                .filter(|(_, r)| *r == role)
                .map(|(n, _)| n)
                .collect();
            if !found.is_empty() || Instant::now() >= deadline {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub fn record(&self, event: FaultEvent) {
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

enum Trigger {
    Time,
    Ops(u64),
    Log { node: Option<String>, regex: Regex },
    Probe { node: Option<String>, role: Role },
}

impl Trigger {
    fn from_step(step: &FaultStep) -> Trigger {
        if let Some(after) = &step.after {
            Trigger::Ops(after.ops)
        } else if let Some(on) = &step.on {
            Trigger::Log {
                node: on.log.node.as_ref().map(|n| n.value.clone()),
                // Validated when the scenario was loaded.
                regex: Regex::new(&on.log.regex.value)
                    .unwrap_or_else(|_| Regex::new("$^").unwrap()),
            }
        } else if let Some(when) = &step.when {
            Trigger::Probe {
                node: when.node.as_ref().map(|n| n.value.clone()),
                role: when.role,
            }
        } else {
            Trigger::Time
        }
    }
}

/// Who drops packets from whom for a partition of `all` nodes.
pub fn partition_grudge(
    mode: PartitionMode,
    targets: &[String],
    all: &[String],
    rng: &mut ChaCha8Rng,
) -> Grudge {
    let mut grudge: Grudge = all.iter().map(|n| (n.clone(), BTreeSet::new())).collect();
    let mut cut = |a: &[String], b: &[String]| {
        for x in a {
            for y in b {
                grudge.get_mut(x).map(|s| s.insert(y.clone()));
                grudge.get_mut(y).map(|s| s.insert(x.clone()));
            }
        }
    };
    // Targets first (in the smaller side), then the others in seeded order.
    let mut order: Vec<String> = targets.to_vec();
    let mut rest: Vec<String> = all
        .iter()
        .filter(|n| !targets.contains(n))
        .cloned()
        .collect();
    rest.shuffle(rng);
    order.extend(rest.iter().cloned());
    match mode {
        PartitionMode::Isolate => cut(targets, &rest),
        PartitionMode::Halves => {
            let (small, big) = order.split_at(all.len() / 2);
            cut(small, big);
        }
        PartitionMode::Bridge => {
            let mid = all.len() / 2;
            let (left, right) = order.split_at(mid);
            // right[0] is the bridge: it sees both sides.
            cut(left, right.get(1..).unwrap_or_default());
        }
        PartitionMode::MajorityRing => {
            let n = order.len();
            let window = n / 2 + 1;
            let back = (window - 1) / 2;
            for (i, node) in order.iter().enumerate() {
                let sees: BTreeSet<usize> = (0..window).map(|d| (i + n + d - back) % n).collect();
                let drops = (0..n)
                    .filter(|j| !sees.contains(j))
                    .map(|j| order[j].clone());
                grudge.get_mut(node).map(|s| s.extend(drops));
            }
        }
    }
    grudge
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("n{i}")).collect()
    }

    #[test]
    fn isolate_cuts_targets_from_everyone_both_ways() {
        let all = names(3);
        let g = partition_grudge(
            PartitionMode::Isolate,
            &["n2".to_string()],
            &all,
            &mut ChaCha8Rng::seed_from_u64(1),
        );
        assert_eq!(
            g["n2"],
            BTreeSet::from(["n1".to_string(), "n3".to_string()])
        );
        assert_eq!(g["n1"], BTreeSet::from(["n2".to_string()]));
        assert_eq!(g["n3"], BTreeSet::from(["n2".to_string()]));
    }

    #[test]
    fn halves_put_targets_in_the_minority() {
        let all = names(5);
        let g = partition_grudge(
            PartitionMode::Halves,
            &["n4".to_string()],
            &all,
            &mut ChaCha8Rng::seed_from_u64(2),
        );
        assert_eq!(g["n4"].len(), 3);
        let minority: Vec<_> = g.iter().filter(|(_, s)| s.len() == 3).collect();
        assert_eq!(minority.len(), 2);
    }

    #[test]
    fn majority_ring_every_node_sees_a_majority_and_none_the_same() {
        let all = names(5);
        let g = partition_grudge(
            PartitionMode::MajorityRing,
            &[],
            &all,
            &mut ChaCha8Rng::seed_from_u64(3),
        );
        let mut views = BTreeSet::new();
        for (node, drops) in &g {
            assert_eq!(drops.len(), 2, "{node} sees a majority of 5");
            assert!(!drops.contains(node));
            views.insert(drops.clone());
        }
        assert_eq!(views.len(), 5);
    }

    #[test]
    fn bridge_node_sees_both_sides() {
        let all = names(5);
        let g = partition_grudge(
            PartitionMode::Bridge,
            &[],
            &all,
            &mut ChaCha8Rng::seed_from_u64(4),
        );
        let bridges: Vec<_> = g.iter().filter(|(_, s)| s.is_empty()).collect();
        assert_eq!(bridges.len(), 1);
        assert_eq!(g.values().filter(|s| s.len() == 2).count(), 4);
    }
}
