//! Clock skew through libfaketime in the node's processes, changed while they run.

use futures_util::future::BoxFuture;
use serde_json::json;

use super::{Action, Applied, Cx, Fault, Healed, InForce, Mechanism, Shows};
use crate::cluster::Cluster;

/// The node's wall clock runs `offset` away from true time.
pub struct ClockSkew;
/// The node's wall clock is true time again.
pub struct RestoreClock;

/// Moves every target's clock to the offset; `detail` says which processes took it (the
/// evidence that it reached the program).
async fn set_clocks(cx: Cx<'_>) -> Applied {
    let offset = cx.offset.unwrap_or(0);
    let cluster = cx.cluster();
    let results =
        futures_util::future::join_all(cx.targets.iter().map(|n| cluster.set_clock(n, offset)))
            .await;
    let mut loaded = serde_json::Map::new();
    let mut failed = None;
    for (node, result) in cx.targets.iter().zip(results) {
        match result {
            Ok(processes) => {
                loaded.insert(node.clone(), json!(processes));
            }
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    (
        failed.map_or(Ok(()), Err),
        Some(json!({ "processes": loaded })),
    )
}

impl Fault for ClockSkew {
    fn name(&self) -> &'static str {
        "clock-skew"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&RestoreClock))
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Faketime
    }
    fn takes(&self) -> &'static [&'static str] {
        &["offset"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &["offset"]
    }
    fn recorded_offset(&self, drawn: Option<i64>) -> Option<i64> {
        Some(drawn.unwrap_or(0))
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(set_clocks(cx))
    }
    fn in_force(&self) -> InForce {
        InForce::UntilUndoOrFinalHeal
    }
    fn shows(&self) -> Shows {
        Shows::Clock
    }
}

impl Fault for RestoreClock {
    fn name(&self) -> &'static str {
        "restore-clock"
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Faketime
    }
    /// Offset 0: true time.
    fn recorded_offset(&self, _drawn: Option<i64>) -> Option<i64> {
        Some(0)
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(set_clocks(cx))
    }
    /// Every clock a fault moved is true time again.
    fn final_heal<'a>(&'a self, cluster: &'a Cluster) -> BoxFuture<'a, Vec<Healed>> {
        Box::pin(async move {
            let mut done = Vec::new();
            for node in cluster.skewed_nodes() {
                let outcome = cluster.set_clock(&node, 0).await.map(|_| ());
                done.push((node, self.name(), outcome));
            }
            done
        })
    }
    fn in_force(&self) -> InForce {
        InForce::Instant
    }
    fn shows(&self) -> Shows {
        Shows::Clock
    }
}
