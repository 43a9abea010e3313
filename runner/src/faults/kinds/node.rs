//! Faults on a node's container through the Docker API: pause, unpause, kill, stop, start,
//! restart.

use futures_util::future::BoxFuture;

use super::{on_each, Action, Applied, Cx, Fault, Healed, InForce, Shows};
use crate::cluster::{Cluster, NodeState};

/// Freezes every process of the node (Docker pause).
pub struct Pause;
pub struct Unpause;
/// SIGKILL.
pub struct Kill;
/// SIGTERM, SIGKILL after 10 s.
pub struct Stop;
pub struct Start;
/// Stop and start.
pub struct Restart;

impl Fault for Pause {
    fn name(&self) -> &'static str {
        "pause"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&Unpause))
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(on_each(cx.targets, move |n| cx.cluster().pause(n)))
    }
    fn in_force(&self) -> InForce {
        InForce::UntilUndoOrFinalHeal
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "paused",
            opens: Some("paused"),
            closes: &[],
        }
    }
}

impl Fault for Unpause {
    fn name(&self) -> &'static str {
        "unpause"
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(on_each(cx.targets, move |n| cx.cluster().unpause(n)))
    }
    fn in_force(&self) -> InForce {
        InForce::Instant
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "resumed",
            opens: None,
            closes: &["paused"],
        }
    }
}

impl Fault for Kill {
    fn name(&self) -> &'static str {
        "kill"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&Start))
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(on_each(cx.targets, move |n| cx.cluster().kill(n)))
    }
    fn ends_when_back(&self) -> bool {
        true
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "killed",
            opens: Some("down"),
            closes: &[],
        }
    }
}

impl Fault for Stop {
    fn name(&self) -> &'static str {
        "stop"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&Start))
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(on_each(cx.targets, move |n| cx.cluster().stop(n)))
    }
    fn ends_when_back(&self) -> bool {
        true
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "stopped",
            opens: Some("down"),
            closes: &[],
        }
    }
}

impl Fault for Start {
    fn name(&self) -> &'static str {
        "start"
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(on_each(cx.targets, move |n| cx.cluster().start(n)))
    }
    fn brings_back(&self) -> bool {
        true
    }
    /// Every node running and unpaused (whatever paused, killed or stopped it).
    fn final_heal<'a>(&'a self, cluster: &'a Cluster) -> BoxFuture<'a, Vec<Healed>> {
        Box::pin(async move {
            let mut done = Vec::new();
            for node in cluster.names() {
                match cluster.state(&node).await {
                    Ok(NodeState::Paused) => {
                        let outcome = cluster.unpause(&node).await;
                        done.push((node, Unpause.name(), outcome))
                    }
                    Ok(NodeState::Stopped) => {
                        let outcome = cluster.start(&node).await;
                        done.push((node, self.name(), outcome))
                    }
                    Ok(NodeState::Running) => {}
                    Err(e) => done.push((node, "inspect", Err(e))),
                }
            }
            done
        })
    }
    fn in_force(&self) -> InForce {
        InForce::Instant
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "started",
            opens: None,
            closes: &["down"],
        }
    }
}

impl Fault for Restart {
    fn name(&self) -> &'static str {
        "restart"
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(on_each(cx.targets, move |n| cx.cluster().restart(n)))
    }
    fn brings_back(&self) -> bool {
        true
    }
    fn in_force(&self) -> InForce {
        InForce::Instant
    }
    fn ends_when_back(&self) -> bool {
        true
    }
    fn shows(&self) -> Shows {
        Shows::Restart
    }
}
