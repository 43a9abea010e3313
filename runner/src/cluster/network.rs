//! Network partitions: iptables rules in a chain of their own in each node's network
//! namespace, set by short-lived tools containers.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::InspectContainerOptions;

use super::{Cluster, NodeState};
use crate::cluster::docker::{docker_error, run_labels, run_once, LABEL_NODE};
use crate::error::{HarnessError, Result};

/// The image used for network faults: iptables run in a node's network namespace.
pub const TOOLS_IMAGE: &str = "chaos-tools:latest";

impl Cluster {
    /// The node's address on the run network (it may change after a restart).
    async fn address(&self, node: &str) -> Result<Option<String>> {
        let info = self
            .docker
            .inspect_container(self.container(node)?, None::<InspectContainerOptions>)
            .await
            .map_err(docker_error)?;
        Ok(info
            .network_settings
            .and_then(|n| n.networks)
            .and_then(|n| n.get(&self.network).cloned())
            .and_then(|e| e.ip_address)
            .filter(|ip| !ip.is_empty()))
    }

    /// Applies a grudge: each node drops every packet from the nodes listed for it (Jepsen's
    /// model; a symmetric cut lists both directions). Rules live in a chain of their own in the
    /// node's network namespace, set by a short-lived tools container that joins it.
    pub async fn partition(&self, grudge: &BTreeMap<String, BTreeSet<String>>) -> Result<()> {
        self.partitioned
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.grudge_rules(grudge, "-A").await
    }

    /// Removes the rules of one grudge (one copy of each: overlapping partitions stay in force).
    pub async fn unpartition(&self, grudge: &BTreeMap<String, BTreeSet<String>>) -> Result<()> {
        self.grudge_rules(grudge, "-D").await
    }

    async fn grudge_rules(
        &self,
        grudge: &BTreeMap<String, BTreeSet<String>>,
        verb: &str,
    ) -> Result<()> {
        let mut addresses = HashMap::new();
        for node in self.names() {
            if let Some(ip) = self.address(&node).await? {
                addresses.insert(node, ip);
            }
        }
        let mut jobs = Vec::new();
        for (node, peers) in grudge {
            // A stopped node has no network namespace to put rules in; it is cut off anyway.
            if peers.is_empty() || self.state(node).await? == NodeState::Stopped {
                continue;
            }
            let mut script = String::from(CHAIN_SETUP);
            for peer in peers {
                if let Some(ip) = addresses.get(peer) {
                    // A rule may be gone already (the node restarted: new namespace).
                    let tolerate = if verb == "-D" {
                        " 2>/dev/null || true"
                    } else {
                        ""
                    };
                    script.push_str(&format!(
                        "iptables -w {verb} CHAOS -s {ip} -j DROP{tolerate}\n"
                    ));
                }
            }
            jobs.push(async move {
                let started = self.started_at(node).await;
                let outcome = self.run_tools(node.clone(), script).await;
                // A node stopped or restarted meanwhile (a restart step beside the partition)
                // took its namespace, and the rules in it, along: nothing is left to remove.
                if outcome.is_err() && verb == "-D" && self.started_at(node).await != started {
                    return Ok(());
                }
                outcome
            });
        }
        for result in futures_util::future::join_all(jobs).await {
            result?;
        }
        Ok(())
    }

    /// When the node's container last started, while it runs; None while it is stopped.
    async fn started_at(&self, node: &str) -> Option<String> {
        let info = self
            .docker
            .inspect_container(self.container(node).ok()?, None::<InspectContainerOptions>)
            .await
            .ok()?;
        let state = info.state?;
        state.running.filter(|r| *r)?;
        state.started_at
    }

    /// Removes every partition rule on every running node.
    pub async fn heal_network(&self) -> Result<()> {
        let mut jobs = Vec::new();
        for node in self.names() {
            if self.state(&node).await? == NodeState::Running {
                jobs.push(self.run_tools(node, format!("{CHAIN_SETUP}iptables -w -F CHAOS\n")));
            }
        }
        for result in futures_util::future::join_all(jobs).await {
            result?;
        }
        Ok(())
    }

    async fn run_tools(&self, node: String, script: String) -> Result<()> {
        let target = self.container(&node)?.to_string();
        let helper = format!("chaos-{}-net-{}-{}", self.run_id, node, unique());
        let mut labels = run_labels(&self.run_id);
        labels.insert(LABEL_NODE.into(), format!("{node}-net"));
        let body = ContainerCreateBody {
            image: Some(TOOLS_IMAGE.into()),
            entrypoint: Some(vec!["sh".into(), "-ec".into(), script]),
            labels: Some(labels),
            host_config: Some(HostConfig {
                network_mode: Some(format!("container:{target}")),
                cap_add: Some(vec!["NET_ADMIN".into()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let (code, output) = run_once(&self.docker, &helper, body).await?;
        if code != 0 {
            return Err(HarnessError::infra(format!(
                "iptables on {node} failed (exit {code}): {}",
                output.trim()
            )));
        }
        Ok(())
    }
}

/// A chain of our own, hooked into INPUT once; flushing it heals without touching Docker's rules.
const CHAIN_SETUP: &str = "iptables -w -N CHAOS 2>/dev/null || true\n\
iptables -w -C INPUT -j CHAOS 2>/dev/null || iptables -w -I INPUT -j CHAOS\n";

fn unique() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}
