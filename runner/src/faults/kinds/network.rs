//! Network partitions: iptables rules in the nodes' network namespaces.

use futures_util::future::BoxFuture;

use super::{Action, Applied, Cx, Fault, Healed, InForce, Mechanism, Shows};
use crate::cluster::Cluster;

/// Drops packets between the sides drawn from `mode:` (or the step's `grudge:`).
pub struct Partition;
/// Removes every partition rule (the undo of a step removes only that step's rules).
pub struct Heal;

impl Fault for Partition {
    fn name(&self) -> &'static str {
        "partition"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&Heal))
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Network
    }
    fn takes(&self) -> &'static [&'static str] {
        &["mode", "grudge"]
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move {
            let outcome = match cx.grudge {
                Some(grudge) => cx.cluster().partition(grudge).await,
                None => Ok(()),
            };
            (outcome, None)
        })
    }
    fn in_force(&self) -> InForce {
        InForce::UntilUndoOrFinalHeal
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "cut off",
            opens: Some("cut off"),
            closes: &[],
        }
    }
}

impl Fault for Heal {
    fn name(&self) -> &'static str {
        "heal"
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Network
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move {
            let outcome = match cx.grudge {
                Some(grudge) => cx.cluster().unpartition(grudge).await,
                None => cx.cluster().heal_network().await,
            };
            (outcome, None)
        })
    }
    /// Once a partition was applied: every rule removed.
    fn final_heal<'a>(&'a self, cluster: &'a Cluster) -> BoxFuture<'a, Vec<Healed>> {
        Box::pin(async move {
            if !cluster.was_partitioned() {
                return Vec::new();
            }
            vec![("all".into(), self.name(), cluster.heal_network().await)]
        })
    }
    fn in_force(&self) -> InForce {
        InForce::Instant
    }
    fn shows(&self) -> Shows {
        Shows::Mark {
            what: "healed",
            opens: None,
            closes: &["cut off"],
        }
    }
}
