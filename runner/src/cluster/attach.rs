//! `chaos run --attach PROJECT`: the nodes of a compose project a user brought up with
//! `docker compose -p PROJECT --profile P up`, found by Compose's labels and matched to the
//! scenario's nodes by service name. Nothing of the cluster is created or removed here: faults
//! act on the project's containers through the Docker API as on the harness's own, partitions
//! in their network namespaces, and the run leaves the cluster up and healed.
//!
//! Compose publishes `127.0.0.1::2379` on a random host port that Docker draws again at every
//! start, so a node a fault restarted would lose its clients. Each published port is reached
//! through a relay of the harness's on a loopback port of its own, which forwards every new
//! connection to the node's port of the moment (looked up again whenever the harness starts a
//! node).

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bollard::models::ContainerInspectResponse;
use bollard::query_parameters::{InspectContainerOptions, ListContainersOptionsBuilder};
use bollard::Docker;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::compose::ComposeFile;
use super::logs::follow_logs;
use super::{Cluster, Node};
use crate::cluster::docker::docker_error;
use crate::error::{HarnessError, Result};

/// The labels `docker compose` puts on every container it creates.
pub const LABEL_PROJECT: &str = "com.docker.compose.project";
pub const LABEL_SERVICE: &str = "com.docker.compose.service";

/// What an attached run needs: the project, and the scenario's nodes in the compose file.
pub struct AttachSpec<'a> {
    pub project: &'a str,
    /// The profile the scenario names (for the messages that say how to bring it up).
    pub profile: &'a str,
    /// The profile's cluster: services keyed by node name, each with its compose key.
    pub compose: &'a ComposeFile,
    pub nodes: &'a [String],
    pub run_id: &'a str,
    pub logs_dir: &'a std::path::Path,
    pub run_start: std::time::Instant,
    pub ready_timeout: Duration,
    pub secrets: &'a [String],
}

/// An attached cluster's own parts: the project, and a relay per published port.
pub(super) struct Attached {
    pub project: String,
    /// (node, container port) -> the relay clients use.
    relays: BTreeMap<(String, u16), Relay>,
}

impl Cluster {
    /// The nodes of compose project `spec.project`, once every one is running and healthy.
    pub async fn attach(docker: &Docker, spec: AttachSpec<'_>) -> Result<Cluster> {
        let AttachSpec {
            project, profile, ..
        } = spec;
        let up = format!("docker compose -p {project} --profile {profile} up -d --wait");
        let listed = docker
            .list_containers(Some(
                ListContainersOptionsBuilder::new()
                    .all(true)
                    .filters(&HashMap::from([(
                        "label".to_string(),
                        vec![format!("{LABEL_PROJECT}={project}")],
                    )]))
                    .build(),
            ))
            .await
            .map_err(docker_error)?;
        if listed.is_empty() {
            return Err(HarnessError::BadInput(format!(
                "--attach {project}: Docker has no container of compose project `{project}`; \
                 bring the cluster up first: {up}"
            )));
        }
        // Service -> its containers' names.
        let mut by_service: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in &listed {
            let labels = c.labels.clone().unwrap_or_default();
            let (Some(service), Some(name)) = (
                labels.get(LABEL_SERVICE),
                c.names.as_ref().and_then(|n| n.first()),
            ) else {
                continue;
            };
            by_service
                .entry(service.clone())
                .or_default()
                .push(name.trim_start_matches('/').to_string());
        }
        let mut nodes = Vec::new();
        let mut missing = Vec::new();
        for node in spec.nodes {
            let service = spec
                .compose
                .service(node)
                .map_or(node.as_str(), |s| s.dns_name(node));
            match by_service.get(service).map(Vec::as_slice) {
                None | Some([]) => missing.push(if service == node {
                    node.clone()
                } else {
                    format!("{node} (service {service})")
                }),
                Some([container]) => nodes.push(Node {
                    name: node.clone(),
                    container: container.clone(),
                    ports: BTreeMap::new(),
                    jvm_agent: spec.compose.service(node).and_then(|s| s.x_chaos.jvm),
                }),
                Some(many) => {
                    return Err(HarnessError::BadInput(format!(
                        "--attach {project}: service {service} has {} containers ({}); a node is \
                         one container: bring it up unscaled ({up})",
                        many.len(),
                        many.join(", ")
                    )))
                }
            }
        }
        if !missing.is_empty() {
            return Err(HarnessError::BadInput(format!(
                "--attach {project}: the project has no container for node(s) {} of profile \
                 `{profile}` (its services: {}); bring the profile up: {up}",
                missing.join(", "),
                by_service.keys().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
        let mut inspected = Vec::new();
        for node in &nodes {
            let info = docker
                .inspect_container(&node.container, None::<InspectContainerOptions>)
                .await
                .map_err(docker_error)?;
            let state = info.state.clone().unwrap_or_default();
            if state.running != Some(true) || state.paused == Some(true) {
                let what = if state.paused == Some(true) {
                    "paused".to_string()
                } else {
                    format!("not running (exit code {})", state.exit_code.unwrap_or(0))
                };
                return Err(HarnessError::BadInput(format!(
                    "--attach {project}: node {} (container {}) is {what}; a run starts from a \
                     healthy cluster: {up}",
                    node.name, node.container
                )));
            }
            inspected.push(info);
        }
        let network = common_network(project, &inspected).ok_or_else(|| {
            HarnessError::BadInput(format!(
                "--attach {project}: the nodes share no network (partitions cut nodes off on \
                 the network they talk over)"
            ))
        })?;
        let (logs, _) = broadcast::channel(4096);
        let mut cluster = Cluster {
            docker: docker.clone(),
            run_id: spec.run_id.to_string(),
            network,
            nodes,
            logs,
            stop_logs: CancellationToken::new(),
            log_tasks: Vec::new(),
            proxies: BTreeMap::new(),
            partitioned: Default::default(),
            skewed: Default::default(),
            downed: Default::default(),
            paused: Default::default(),
            in_force: Default::default(),
            attached: Some(Attached {
                project: project.to_string(),
                relays: BTreeMap::new(),
            }),
            created: None,
        };
        if let Err(e) = cluster.attach_nodes(&spec, &inspected).await {
            let _ = cluster.teardown().await;
            return Err(e);
        }
        Ok(cluster)
    }

    async fn attach_nodes(
        &mut self,
        spec: &AttachSpec<'_>,
        inspected: &[ContainerInspectResponse],
    ) -> Result<()> {
        // Only what the nodes print from now on: a line of an earlier life (an election at
        // the cluster's start) must not fire a log trigger.
        let from = time::OffsetDateTime::now_utc();
        for (i, info) in inspected.iter().enumerate() {
            let node = self.nodes[i].clone();
            let mut relays = Vec::new();
            for (port, host) in published_ports(info) {
                let relay = Relay::start(SocketAddr::from(([127, 0, 0, 1], host)))
                    .await
                    .map_err(|e| HarnessError::infra(format!("cannot start a relay: {e}")))?;
                self.nodes[i].ports.insert(port, relay.listen.port());
                relays.push(((node.name.clone(), port), relay));
            }
            if let Some(attached) = self.attached.as_mut() {
                attached.relays.extend(relays);
            }
            let log_path = spec.logs_dir.join(format!("{}.log", node.name));
            self.log_tasks.push(tokio::spawn(follow_logs(
                self.docker.clone(),
                node.name.clone(),
                node.container.clone(),
                (log_path, Arc::new(spec.secrets.to_vec())),
                self.logs.clone(),
                self.stop_logs.clone(),
                (spec.run_start, Some(from)),
            )));
        }
        self.wait_ready(spec.ready_timeout).await
    }

    /// Each node's image as its container runs it: (the image's id, the name the container was
    /// created with, e.g. `chaos-ozone:2.2.0`). An attached cluster's images are whatever the
    /// user brought up, so what a run asks of a build is asked of these.
    pub async fn node_images(&self) -> Result<BTreeMap<String, (String, String)>> {
        let mut images = BTreeMap::new();
        for node in &self.nodes {
            let info = self
                .docker
                .inspect_container(&node.container, None::<InspectContainerOptions>)
                .await
                .map_err(docker_error)?;
            let shown = info.config.as_ref().and_then(|c| c.image.clone());
            if let Some(id) = info.image.clone() {
                images.insert(node.name.clone(), (id.clone(), shown.unwrap_or(id)));
            }
        }
        Ok(images)
    }

    /// The compose project this cluster is attached to; None for the harness's own cluster.
    pub fn attached_project(&self) -> Option<&str> {
        self.attached.as_ref().map(|a| a.project.as_str())
    }

    /// After the harness started a node of an attached cluster: Docker may have published its
    /// ports on new host ports, where its relays now forward.
    pub(super) async fn follow_ports(&self, node: &str) -> Result<()> {
        let Some(attached) = &self.attached else {
            return Ok(());
        };
        let info = self
            .docker
            .inspect_container(self.container(node)?, None::<InspectContainerOptions>)
            .await
            .map_err(docker_error)?;
        for (port, host) in published_ports(&info) {
            if let Some(relay) = attached.relays.get(&(node.to_string(), port)) {
                relay.forward_to(SocketAddr::from(([127, 0, 0, 1], host)));
            }
        }
        Ok(())
    }

    pub(super) fn stop_relays(&self) {
        if let Some(attached) = &self.attached {
            for relay in attached.relays.values() {
                relay.stop.cancel();
            }
        }
    }
}

/// Container port -> host port, for every published TCP port.
fn published_ports(info: &ContainerInspectResponse) -> Vec<(u16, u16)> {
    let ports = info
        .network_settings
        .as_ref()
        .and_then(|n| n.ports.clone())
        .unwrap_or_default();
    let mut out: Vec<(u16, u16)> = ports
        .into_iter()
        .filter(|(key, _)| key.ends_with("/tcp"))
        .filter_map(|(key, bindings)| {
            let port = key.split('/').next()?.parse().ok()?;
            let host = bindings?
                .iter()
                .find_map(|b| b.host_port.as_ref()?.parse().ok())?;
            Some((port, host))
        })
        .collect();
    out.sort();
    out
}

/// The network every node is on: the project's default network when they all are, else the
/// first one they share (by name).
fn common_network(project: &str, inspected: &[ContainerInspectResponse]) -> Option<String> {
    let networks = |info: &ContainerInspectResponse| -> Vec<String> {
        let mut names: Vec<String> = info
            .network_settings
            .as_ref()
            .and_then(|n| n.networks.as_ref())
            .map(|n| n.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    };
    let mut shared = networks(inspected.first()?);
    for info in &inspected[1..] {
        let theirs = networks(info);
        shared.retain(|n| theirs.contains(n));
    }
    let default = format!("{project}_default");
    if shared.contains(&default) {
        Some(default)
    } else {
        shared.into_iter().next()
    }
}

/// A TCP relay on a loopback port of its own: each connection goes to the upstream of the
/// moment, so a node's clients keep one address while Docker moves its published port.
struct Relay {
    listen: SocketAddr,
    upstream: Arc<Mutex<SocketAddr>>,
    stop: CancellationToken,
}

impl Relay {
    async fn start(upstream: SocketAddr) -> std::io::Result<Relay> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let listen = listener.local_addr()?;
        let upstream = Arc::new(Mutex::new(upstream));
        let stop = CancellationToken::new();
        let (to, stopped) = (upstream.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = stopped.cancelled() => return,
                    a = listener.accept() => a,
                };
                let Ok((mut client, _)) = accepted else {
                    continue;
                };
                let target = *to.lock().unwrap_or_else(|e| e.into_inner());
                let stopped = stopped.clone();
                tokio::spawn(async move {
                    // A node that is down refuses: the client sees its connection closed, as
                    // it would talking to the node itself.
                    let Ok(mut server) = TcpStream::connect(target).await else {
                        return;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    tokio::select! {
                        _ = stopped.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                    }
                });
            }
        });
        Ok(Relay {
            listen,
            upstream,
            stop,
        })
    }

    fn forward_to(&self, upstream: SocketAddr) {
        *self.upstream.lock().unwrap_or_else(|e| e.into_inner()) = upstream;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Connections made after `forward_to` reach the new upstream.
    #[tokio::test]
    async fn a_relay_follows_its_upstream() {
        async fn echo(tag: u8) -> SocketAddr {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                while let Ok((mut s, _)) = listener.accept().await {
                    tokio::spawn(async move {
                        let mut b = [0u8; 1];
                        while s.read_exact(&mut b).await.is_ok() {
                            let _ = s.write_all(&[b[0], tag]).await;
                        }
                    });
                }
            });
            addr
        }
        async fn ask(relay: &Relay) -> [u8; 2] {
            let mut s = TcpStream::connect(relay.listen).await.unwrap();
            s.write_all(b"x").await.unwrap();
            let mut answer = [0u8; 2];
            s.read_exact(&mut answer).await.unwrap();
            answer
        }
        let (one, two) = (echo(1).await, echo(2).await);
        let relay = Relay::start(one).await.unwrap();
        assert_eq!(ask(&relay).await, [b'x', 1]);
        relay.forward_to(two);
        assert_eq!(ask(&relay).await, [b'x', 2]);
        relay.stop.cancel();
    }
}
