//! Network partitions: iptables rules in a chain of their own in each node's network
//! namespace, set by short-lived tools containers.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, InspectContainerOptions, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, StartContainerOptions, WaitContainerOptions,
};
use bollard::Docker;
use futures_util::StreamExt;

use super::{Cluster, NodeState};
use crate::cluster::docker::{run_labels, LABEL_NODE};
use crate::error::{HarnessError, Result};

/// The image used for network faults: iptables run in a node's network namespace.
pub const TOOLS_IMAGE: &str = "chaos-tools:latest";

impl Cluster {
    /// The node's address on the run network (it may change after a restart).
    async fn address(&self, node: &str) -> Result<Option<String>> {
        let info = self
            .docker
            .inspect_container(self.container(node)?, None::<InspectContainerOptions>)
            .await?;
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
            jobs.push(self.run_tools(node.clone(), script));
        }
        for result in futures_util::future::join_all(jobs).await {
            result?;
        }
        Ok(())
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
        self.docker
            .create_container(
                Some(CreateContainerOptionsBuilder::new().name(&helper).build()),
                body,
            )
            .await?;
        let outcome = async {
            self.docker
                .start_container(&helper, None::<StartContainerOptions>)
                .await?;
            let mut wait = self
                .docker
                .wait_container(&helper, None::<WaitContainerOptions>);
            let mut code = 0;
            while let Some(status) = wait.next().await {
                match status {
                    Ok(s) => code = s.status_code,
                    Err(bollard::errors::Error::DockerContainerWaitError { code: c, .. }) => {
                        code = c
                    }
                    Err(e) => return Err(HarnessError::from(e)),
                }
            }
            if code != 0 {
                let output = container_output(&self.docker, &helper).await;
                return Err(HarnessError::infra(format!(
                    "iptables on {node} failed (exit {code}): {}",
                    output.trim()
                )));
            }
            Ok(())
        }
        .await;
        let _ = self
            .docker
            .remove_container(
                &helper,
                Some(RemoveContainerOptionsBuilder::new().force(true).build()),
            )
            .await;
        outcome
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

async fn container_output(docker: &Docker, container: &str) -> String {
    let options = LogsOptionsBuilder::new().stdout(true).stderr(true).build();
    let mut stream = docker.logs(container, Some(options));
    let mut out = String::new();
    while let Some(Ok(chunk)) = stream.next().await {
        out.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
    }
    out
}
