//! A cluster: one container per compose service of a profile, on a network of the run's own,
//! everything labelled with the run id. Node lifecycle faults (pause, kill, ...) and network
//! partitions act here; the fault engine decides when and on whom.

mod attach;
mod clock;
// A compose file is read with the scenario (scenario/compose.rs); the cluster is made from it.
pub use crate::scenario::compose;
pub mod docker;
pub mod images;
mod logs;
mod network;
pub mod ozone_build;
pub mod ozone_source;
pub mod ozone_swap;
pub mod proxy;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use bollard::models::{
    ContainerCreateBody, DeviceMapping, EndpointSettings, HealthConfig, HostConfig,
    NetworkCreateRequest, NetworkingConfig, PortBinding, VolumeCreateRequest,
};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, InspectContainerOptions, KillContainerOptionsBuilder,
    RestartContainerOptionsBuilder, StartContainerOptions, StopContainerOptionsBuilder,
};
use bollard::Docker;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

pub use attach::{AttachSpec, LABEL_PROJECT, LABEL_SERVICE};
use clock::faketime_environment;
pub use clock::LIBFAKETIME;
pub use logs::LogLine;
use logs::{follow_logs, log_tail, LOG_TAIL_LINES};
pub use network::TOOLS_IMAGE;

use crate::cluster::compose::{parse_port, ComposeFile, Service};
use crate::cluster::docker::{docker_error, docker_message};
use crate::cluster::docker::{run_labels, LABEL_NODE};
use crate::error::{HarnessError, Result};

/// Where the chaosfs binary is mounted in nodes that use it.
pub const CHAOSFS_PATH: &str = "/chaosfs";

#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    pub container: String,
    /// Container port -> host port on 127.0.0.1.
    pub ports: BTreeMap<u16, u16>,
    /// The container port Byteman's agent listens on, when the node runs a JVM with it
    /// (`x-chaos: { jvm: PORT }`): the JVM faults' way in.
    pub jvm_agent: Option<u16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    Running,
    Paused,
    Stopped,
}

pub struct Cluster {
    docker: Docker,
    pub run_id: String,
    network: String,
    pub nodes: Vec<Node>,
    logs: broadcast::Sender<LogLine>,
    stop_logs: CancellationToken,
    log_tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Proxies in front of client ports, by (node, container port), when the scenario uses them.
    proxies: BTreeMap<(String, u16), proxy::Proxy>,
    /// Set once a partition was applied, so the final heal skips the helper containers otherwise.
    partitioned: std::sync::atomic::AtomicBool,
    /// Node -> its clock offset in ms, for the nodes whose clock a fault moved.
    skewed: std::sync::Mutex<BTreeMap<String, i64>>,
    /// Nodes the harness took down (kill, stop) and has not started since: any other node
    /// found down exited by itself.
    downed: std::sync::Mutex<BTreeSet<String>>,
    /// Nodes a fault paused and nothing has unpaused since.
    paused: std::sync::Mutex<BTreeSet<String>>,
    /// Kind of fault -> the nodes it is in force on, for the faults whose state only the
    /// harness knows (a proxy's armed lost replies, a chaosfs setting): the final heal's.
    in_force: std::sync::Mutex<BTreeMap<&'static str, BTreeSet<String>>>,
    /// Set when the nodes are a compose project's (`--attach`), not the harness's own.
    attached: Option<attach::Attached>,
    /// When every node of the harness's own had been created and started (before the wait
    /// for readiness): where a run's "create" phase ends.
    pub created: Option<std::time::Instant>,
}

/// A node whose program exited though no fault took it down.
pub struct SelfExit {
    pub node: String,
    pub exit_code: i64,
    /// Docker's FinishedAt (RFC 3339).
    pub finished_at: String,
}

/// What a cluster needs to start.
pub struct ClusterSpec<'a> {
    pub compose: &'a ComposeFile,
    pub nodes: &'a [String],
    pub run_id: &'a str,
    pub logs_dir: &'a Path,
    pub run_start: Instant,
    pub ready_timeout: Duration,
    /// Extra environment for every node (the scenario's `cluster.environment`).
    pub environment: &'a [(String, String)],
    /// The static chaosfs binary on this machine, for nodes with `x-chaos: { fs: [...] }`.
    pub chaosfs: Option<&'a Path>,
    /// chaosfs commands applied before each such node's program starts.
    pub chaosfs_init: &'a [String],
    /// Credentials that must not reach logs/<node>.log: replaced by `[redacted]`.
    pub secrets: &'a [String],
    /// Load libfaketime into the nodes that can take clock skew (x-chaos.clock-skew).
    pub faketime: bool,
    /// Label the nodes as compose project `project`'s services, so that later runs attach to
    /// them (`chaos run --reuse-cluster`: one cluster for every seed of a scenario).
    pub project: Option<&'a str>,
}

impl Cluster {
    pub async fn launch(docker: &Docker, spec: ClusterSpec<'_>) -> Result<Cluster> {
        let mut labels = run_labels(spec.run_id);
        if let Some(project) = spec.project {
            labels.insert(LABEL_PROJECT.into(), project.into());
        }
        let network = format!("chaos-{}", spec.run_id);
        docker
            .create_network(NetworkCreateRequest {
                name: network.clone(),
                driver: Some("bridge".into()),
                labels: Some(labels.clone()),
                ..Default::default()
            })
            .await
            .map_err(|e| {
                HarnessError::infra(format!(
                    "cannot create network {network}: {}",
                    docker_message(&e)
                ))
            })?;
        let (logs, _) = broadcast::channel(4096);
        let mut cluster = Cluster {
            docker: docker.clone(),
            run_id: spec.run_id.to_string(),
            network,
            nodes: Vec::new(),
            logs,
            stop_logs: CancellationToken::new(),
            log_tasks: Vec::new(),
            partitioned: Default::default(),
            proxies: BTreeMap::new(),
            skewed: Default::default(),
            downed: Default::default(),
            paused: Default::default(),
            in_force: Default::default(),
            attached: None,
            created: None,
        };
        if let Err(e) = cluster.create_nodes(&spec, &labels).await {
            // Stop the log followers; the run sweeps what carries its label on every way out.
            let _ = cluster.teardown().await;
            return Err(e);
        }
        Ok(cluster)
    }

    async fn create_nodes(
        &mut self,
        spec: &ClusterSpec<'_>,
        labels: &HashMap<String, String>,
    ) -> Result<()> {
        for name in start_order(spec.compose, spec.nodes) {
            let service = spec.compose.service(&name).expect("validated node");
            let container = format!("chaos-{}-{}", self.run_id, name);
            let mut body = self
                .container_body(&name, service, &spec.compose.dir, labels)
                .await?;
            if let Some(env) = body.env.as_mut() {
                // Later entries win in Docker, so the scenario's settings override the file's.
                env.extend(spec.environment.iter().map(|(k, v)| format!("{k}={v}")));
            }
            if spec.faketime && service.x_chaos.clock_skew.support().is_ok() {
                body.env
                    .get_or_insert_with(Vec::new)
                    .extend(faketime_environment(service.x_chaos.clock_skew.preload()));
            }
            if spec.chaosfs.is_some() && !service.x_chaos.fs.is_empty() {
                self.wrap_in_chaosfs(&name, service, spec, &mut body)
                    .await?;
            }
            self.docker
                .create_container(
                    Some(
                        CreateContainerOptionsBuilder::new()
                            .name(&container)
                            .build(),
                    ),
                    body,
                )
                .await
                .map_err(|e| {
                    HarnessError::infra(format!(
                        "cannot create node {name}: {}",
                        docker_message(&e)
                    ))
                })?;
            self.nodes.push(Node {
                name: name.clone(),
                container: container.clone(),
                ports: BTreeMap::new(),
                jvm_agent: service.x_chaos.jvm,
            });
            self.docker
                .start_container(&container, None::<StartContainerOptions>)
                .await
                .map_err(|e| {
                    HarnessError::infra(format!("cannot start node {name}: {}", docker_message(&e)))
                })?;
            let log_path = spec.logs_dir.join(format!("{name}.log"));
            self.log_tasks.push(tokio::spawn(follow_logs(
                self.docker.clone(),
                name.clone(),
                container.clone(),
                (log_path, std::sync::Arc::new(spec.secrets.to_vec())),
                self.logs.clone(),
                self.stop_logs.clone(),
                (spec.run_start, None),
            )));
        }
        self.created = Some(std::time::Instant::now());
        self.wait_ready(spec.ready_timeout).await?;
        for i in 0..self.nodes.len() {
            let info = self
                .docker
                .inspect_container(&self.nodes[i].container, None::<InspectContainerOptions>)
                .await
                .map_err(docker_error)?;
            let ports = info
                .network_settings
                .and_then(|n| n.ports)
                .unwrap_or_default();
            for (key, bindings) in ports {
                let Some(container_port) = key.split('/').next().and_then(|p| p.parse().ok())
                else {
                    continue;
                };
                if let Some(host) = bindings
                    .unwrap_or_default()
                    .iter()
                    .find_map(|b| b.host_port.as_ref()?.parse().ok())
                {
                    self.nodes[i].ports.insert(container_port, host);
                }
            }
        }
        Ok(())
    }

    async fn container_body(
        &self,
        name: &str,
        service: &Service,
        compose_dir: &Path,
        labels: &HashMap<String, String>,
    ) -> Result<ContainerCreateBody> {
        let mut labels = labels.clone();
        labels.insert(LABEL_NODE.into(), name.into());
        if labels.contains_key(LABEL_PROJECT) {
            labels.insert(LABEL_SERVICE.into(), service.dns_name(name).into());
        }
        let (exposed, bindings) = port_bindings(service)?;
        let (binds, anonymous) = self.volumes(service, compose_dir, &labels).await?;
        let healthcheck = service.healthcheck.as_ref().map(|h| HealthConfig {
            test: Some(h.test.clone()),
            interval: h.interval.map(|d| d.as_nanos() as i64),
            timeout: h.timeout.map(|d| d.as_nanos() as i64),
            retries: h.retries,
            start_period: h.start_period.map(|d| d.as_nanos() as i64),
            ..Default::default()
        });
        let devices = device_mappings(service);
        Ok(ContainerCreateBody {
            hostname: Some(
                service
                    .hostname
                    .clone()
                    .unwrap_or_else(|| service.dns_name(name).to_string()),
            ),
            image: service.image.clone(),
            cmd: service.command.clone(),
            entrypoint: service.entrypoint.clone(),
            env: Some(
                service
                    .environment
                    .0
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect(),
            ),
            labels: Some(labels),
            exposed_ports: Some(exposed),
            healthcheck,
            volumes: (!anonymous.is_empty()).then_some(anonymous),
            host_config: Some(HostConfig {
                network_mode: Some(self.network.clone()),
                port_bindings: Some(bindings),
                binds: (!binds.is_empty()).then_some(binds),
                cap_add: (!service.cap_add.is_empty()).then(|| service.cap_add.clone()),
                devices: (!devices.is_empty()).then_some(devices),
                ..Default::default()
            }),
            networking_config: Some(NetworkingConfig {
                endpoints_config: Some(HashMap::from([(
                    self.network.clone(),
                    EndpointSettings {
                        // The service's key, which the other nodes' configuration names (as
                        // under `docker compose`), and the node's name if it goes by another.
                        aliases: Some({
                            let mut aliases = vec![service.dns_name(name).to_string()];
                            if aliases[0] != name {
                                aliases.push(name.to_string());
                            }
                            aliases
                        }),
                        ..Default::default()
                    },
                )])),
            }),
            ..Default::default()
        })
    }

    /// A service's volumes: bind mounts (`source:target`, a named volume made for the run and
    /// labelled so it is swept) and anonymous volumes (`target`).
    async fn volumes(
        &self,
        service: &Service,
        compose_dir: &Path,
        labels: &HashMap<String, String>,
    ) -> Result<(Vec<String>, Vec<String>)> {
        let mut binds = Vec::new();
        let mut anonymous = Vec::new();
        for volume in &service.volumes {
            let parts: Vec<&str> = volume.split(':').collect();
            match parts.as_slice() {
                [target] => anonymous.push(target.to_string()),
                [source, rest @ ..] => {
                    let source = if source.starts_with('.') || source.starts_with('/') {
                        compose_dir.join(source).to_string_lossy().into_owned()
                    } else {
                        // A named volume belongs to the run, so it is labelled and swept.
                        let volume_name = format!("chaos-{}-{}", self.run_id, source);
                        self.docker
                            .create_volume(VolumeCreateRequest {
                                name: Some(volume_name.clone()),
                                labels: Some(labels.clone()),
                                ..Default::default()
                            })
                            .await
                            .map_err(docker_error)?;
                        volume_name
                    };
                    binds.push(format!("{source}:{}", rest.join(":")));
                }
                [] => {}
            }
        }
        Ok((binds, anonymous))
    }

    /// Mounts chaosfs over the node's data directories before its program starts: the static
    /// binary is bind-mounted, runs as PID 1, mounts, then runs the original entrypoint and command
    /// as its child (signals forwarded, exit code passed through). Only this node gets /dev/fuse
    /// and SYS_ADMIN.
    async fn wrap_in_chaosfs(
        &self,
        name: &str,
        service: &Service,
        spec: &ClusterSpec<'_>,
        body: &mut ContainerCreateBody,
    ) -> Result<()> {
        let binary = spec.chaosfs.ok_or_else(|| {
            HarnessError::infra(format!(
                "node {name} mounts chaosfs but no chaosfs binary was built"
            ))
        })?;
        // The image's own entrypoint and command run under chaosfs unchanged.
        let image = self
            .docker
            .inspect_image(service.image.as_deref().unwrap_or_default())
            .await
            .map_err(docker_error)?;
        let config = image.config.unwrap_or_default();
        let entrypoint = service
            .entrypoint
            .clone()
            .or(config.entrypoint)
            .unwrap_or_default();
        let command = service.command.clone().or(config.cmd).unwrap_or_default();
        let mut wrapped = vec![CHAOSFS_PATH.to_string(), "run".to_string()];
        for dir in &service.x_chaos.fs {
            wrapped.extend(["--dir".to_string(), dir.clone()]);
        }
        for init in spec.chaosfs_init {
            wrapped.extend(["--init".to_string(), init.clone()]);
        }
        wrapped.push("--".to_string());
        wrapped.extend(entrypoint);
        wrapped.extend(command);
        body.entrypoint = Some(wrapped);
        body.cmd = Some(Vec::new());
        let host = body.host_config.get_or_insert_with(Default::default);
        host.binds
            .get_or_insert_with(Vec::new)
            .push(format!("{}:{CHAOSFS_PATH}:ro", binary.display()));
        host.devices
            .get_or_insert_with(Vec::new)
            .push(DeviceMapping {
                path_on_host: Some("/dev/fuse".into()),
                path_in_container: Some("/dev/fuse".into()),
                cgroup_permissions: Some("rwm".into()),
            });
        host.cap_add
            .get_or_insert_with(Vec::new)
            .push("SYS_ADMIN".into());
        host.security_opt
            .get_or_insert_with(Vec::new)
            .push("apparmor=unconfined".into());
        Ok(())
    }

    /// Waits until every node is healthy (or running, without a healthcheck).
    pub async fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut pending: BTreeSet<usize> = (0..self.nodes.len()).collect();
        while !pending.is_empty() {
            for i in pending.clone() {
                let node = &self.nodes[i];
                let info = self
                    .docker
                    .inspect_container(&node.container, None::<InspectContainerOptions>)
                    .await
                    .map_err(docker_error)?;
                let state = info.state.unwrap_or_default();
                if state.running != Some(true) {
                    return Err(HarnessError::infra(format!(
                        "node {} exited while starting (exit code {}); the end of its log:\n{}",
                        node.name,
                        state.exit_code.unwrap_or_default(),
                        log_tail(&self.docker, &node.container, LOG_TAIL_LINES).await
                    )));
                }
                let healthy = match state.health.and_then(|h| h.status) {
                    None => true,
                    Some(status) => status.to_string() == "healthy",
                };
                if healthy {
                    pending.remove(&i);
                }
            }
            if pending.is_empty() {
                break;
            }
            if Instant::now() > deadline {
                let names: Vec<&str> = pending
                    .iter()
                    .map(|&i| self.nodes[i].name.as_str())
                    .collect();
                let mut tails = String::new();
                for &i in &pending {
                    let node = &self.nodes[i];
                    let tail = log_tail(&self.docker, &node.container, LOG_TAIL_LINES).await;
                    tails.push_str(&format!("\n--- the end of {}'s log:\n{tail}", node.name));
                }
                return Err(HarnessError::infra(format!(
                    "node(s) {} never became ready within {:?} (their healthcheck never passed); \
                     whole logs in the run folder{tails}",
                    names.join(", "),
                    timeout
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(())
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.name.clone()).collect()
    }

    /// Where the harness reaches `container_port` of a node (through its proxy, if it has one).
    pub fn endpoint(&self, node: &str, container_port: u16) -> Option<SocketAddr> {
        if let Some(proxy) = self.proxies.get(&(node.to_string(), container_port)) {
            return Some(proxy.listen);
        }
        self.direct_endpoint(node, container_port)
    }

    /// The node's published port itself, bypassing any proxy.
    pub fn direct_endpoint(&self, node: &str, container_port: u16) -> Option<SocketAddr> {
        let port = *self.node(node)?.ports.get(&container_port)?;
        Some(SocketAddr::from(([127, 0, 0, 1], port)))
    }

    /// Puts a proxy in front of every published port; what they do goes to `events`.
    pub async fn start_proxies(
        &mut self,
        events: tokio::sync::mpsc::UnboundedSender<proxy::ProxyEvent>,
    ) -> Result<()> {
        for node in self.nodes.clone() {
            for &port in node.ports.keys() {
                let upstream = self.direct_endpoint(&node.name, port).expect("published");
                let proxy = proxy::Proxy::start(&node.name, upstream, events.clone())
                    .await
                    .map_err(|e| HarnessError::infra(format!("cannot start a proxy: {e}")))?;
                self.proxies.insert((node.name.clone(), port), proxy);
            }
        }
        Ok(())
    }

    /// The proxies in front of a node's ports.
    pub fn proxies_of(&self, node: &str) -> Vec<&proxy::Proxy> {
        self.proxies
            .iter()
            .filter(|((n, _), _)| n == node)
            .map(|(_, p)| p)
            .collect()
    }

    fn container(&self, node: &str) -> Result<&str> {
        self.node(node)
            .map(|n| n.container.as_str())
            .ok_or_else(|| HarnessError::infra(format!("no node {node}")))
    }

    pub async fn state(&self, node: &str) -> Result<NodeState> {
        let info = self
            .docker
            .inspect_container(self.container(node)?, None::<InspectContainerOptions>)
            .await
            .map_err(docker_error)?;
        let state = info.state.unwrap_or_default();
        Ok(if state.paused == Some(true) {
            NodeState::Paused
        } else if state.running == Some(true) {
            NodeState::Running
        } else {
            NodeState::Stopped
        })
    }

    /// Freezes the node's processes. The kernel's cgroup freezer gives up when a task does not
    /// stop in time (one in uninterruptible sleep, e.g. in an fsync on a slow filesystem) and
    /// runc then answers "unable to freeze" and thaws the group: a few more tries get it.
    pub async fn pause(&self, node: &str) -> Result<()> {
        let container = self.container(node)?;
        let mut attempt = 1;
        loop {
            match self.docker.pause_container(container).await {
                Err(e) if attempt < 5 && e.to_string().contains("unable to freeze") => {
                    tracing::warn!(node, attempt, "pause: {e}; trying again");
                    tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
                    attempt += 1;
                }
                r => {
                    r.map_err(docker_error)?;
                    mark(&self.paused, node, true);
                    return Ok(());
                }
            }
        }
    }

    pub async fn unpause(&self, node: &str) -> Result<()> {
        self.docker
            .unpause_container(self.container(node)?)
            .await
            .map_err(docker_error)?;
        mark(&self.paused, node, false);
        Ok(())
    }

    pub async fn kill(&self, node: &str) -> Result<()> {
        self.mark_downed(node, true);
        let options = KillContainerOptionsBuilder::new().signal("SIGKILL").build();
        self.docker
            .kill_container(self.container(node)?, Some(options))
            .await
            .map_err(docker_error)
    }

    /// SIGTERM, then SIGKILL after 10 s, as `docker stop`.
    pub async fn stop(&self, node: &str) -> Result<()> {
        self.mark_downed(node, true);
        let options = StopContainerOptionsBuilder::new().t(10).build();
        self.docker
            .stop_container(self.container(node)?, Some(options))
            .await
            .map_err(docker_error)
    }

    pub async fn start(&self, node: &str) -> Result<()> {
        self.docker
            .start_container(self.container(node)?, None::<StartContainerOptions>)
            .await
            .map_err(docker_error)?;
        self.mark_downed(node, false);
        self.follow_ports(node).await
    }

    pub async fn restart(&self, node: &str) -> Result<()> {
        let options = RestartContainerOptionsBuilder::new().t(10).build();
        self.docker
            .restart_container(self.container(node)?, Some(options))
            .await
            .map_err(docker_error)?;
        self.mark_downed(node, false);
        self.follow_ports(node).await
    }

    /// Whether the node runs and its healthcheck passes (running is enough without one).
    pub async fn is_healthy(&self, node: &str) -> bool {
        let Ok(container) = self.container(node) else {
            return false;
        };
        let Ok(info) = self
            .docker
            .inspect_container(container, None::<InspectContainerOptions>)
            .await
        else {
            return false;
        };
        let state = info.state.unwrap_or_default();
        state.running == Some(true)
            && state
                .health
                .and_then(|h| h.status)
                .is_none_or(|s| s.to_string() == "healthy")
    }

    /// Whether a fault took the node down (kill, stop) and nothing has started it since.
    pub fn is_downed(&self, node: &str) -> bool {
        self.downed.lock().expect("downed nodes").contains(node)
    }

    /// Whether a fault paused the node and nothing has unpaused it since.
    pub fn is_paused(&self, node: &str) -> bool {
        self.paused.lock().expect("paused nodes").contains(node)
    }

    fn mark_downed(&self, node: &str, down: bool) {
        mark(&self.downed, node, down);
    }

    /// The nodes that are down though no fault took them down: their program exited by itself
    /// (an assertion, a JVM-pause guard, a crash). A paused node is not down.
    pub async fn self_exits(&self) -> Vec<SelfExit> {
        let downed = self.downed.lock().expect("downed nodes").clone();
        let mut out = Vec::new();
        for node in self.nodes.iter().filter(|n| !downed.contains(&n.name)) {
            let Ok(info) = self
                .docker
                .inspect_container(&node.container, None::<InspectContainerOptions>)
                .await
            else {
                continue;
            };
            let state = info.state.unwrap_or_default();
            if state.running != Some(true) {
                out.push(SelfExit {
                    node: node.name.clone(),
                    exit_code: state.exit_code.unwrap_or(-1),
                    finished_at: state.finished_at.unwrap_or_default(),
                });
            }
        }
        out
    }

    /// Runs a command in a node and returns its output (stdout and stderr); a non-zero exit
    /// is an error.
    pub async fn exec(&self, node: &str, cmd: Vec<String>) -> Result<String> {
        match docker::exec(&self.docker, self.container(node)?, &cmd, None).await {
            Ok(out) => Ok(out.all),
            Err(e) => Err(HarnessError::infra(format!(
                "`{}` in {node} failed ({e})",
                cmd.join(" ")
            ))),
        }
    }

    /// `chaosfs ctl WORDS` inside a node that mounts chaosfs.
    pub async fn chaosfs_ctl(&self, node: &str, words: &[String]) -> Result<String> {
        let mut cmd = vec![CHAOSFS_PATH.to_string(), "ctl".to_string()];
        cmd.extend(words.iter().cloned());
        self.exec(node, cmd).await
    }

    /// Whether a partition was ever applied (the final heal skips the helper containers
    /// otherwise).
    pub fn was_partitioned(&self) -> bool {
        self.partitioned.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The nodes whose clock a fault moved and has not restored.
    pub fn skewed_nodes(&self) -> Vec<String> {
        self.skewed
            .lock()
            .expect("clock map")
            .iter()
            .filter(|(_, offset)| **offset != 0)
            .map(|(node, _)| node.clone())
            .collect()
    }

    /// Notes that a fault of `kind` is (`on`) or is no longer in force on `node`.
    pub fn note_in_force(&self, kind: &'static str, node: &str, on: bool) {
        let mut map = self.in_force.lock().unwrap_or_else(|e| e.into_inner());
        let nodes = map.entry(kind).or_default();
        if on {
            nodes.insert(node.to_string());
        } else {
            nodes.remove(node);
        }
    }

    /// The nodes a fault of `kind` is in force on.
    pub fn in_force(&self, kind: &str) -> Vec<String> {
        let map = self.in_force.lock().unwrap_or_else(|e| e.into_inner());
        map.get(kind)
            .map(|n| n.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Removes every container, network and volume of the run (also the ones a crash left);
    /// of an attached cluster, only the helpers the run made (the nodes are the project's).
    pub async fn teardown(mut self) -> Result<()> {
        self.stop_logs.cancel();
        self.stop_relays();
        for proxy in self.proxies.values() {
            proxy.stop();
        }
        for task in self.log_tasks.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
        crate::cluster::docker::sweep(&self.docker, Some(&self.run_id)).await?;
        Ok(())
    }

    pub fn docker(&self) -> &Docker {
        &self.docker
    }
}

/// A loopback port nobody listens on right now, below the kernel's ephemeral range: a port the
/// kernel may hand to an outgoing connection between this choice and Docker's bind was seen
/// taken by then ("Bind for 127.0.0.1:41945 failed: port is already allocated", a harness
/// error on the first seed of a 10-seed play, 2026-12-07).
fn free_port() -> Result<u16> {
    let ephemeral_from = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let below = 10_000..ephemeral_from.max(10_001);
    let mut rng = rand::rng();
    for _ in 0..64 {
        let port = rand::Rng::random_range(&mut rng, below.clone());
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| HarnessError::infra(format!("no free port on 127.0.0.1: {e}")))?;
    Ok(listener
        .local_addr()
        .map_err(|e| HarnessError::infra(e.to_string()))?
        .port())
}

/// Services in an order that respects depends_on (then file order).
fn start_order(compose: &ComposeFile, nodes: &[String]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let mut remaining: Vec<String> = nodes.to_vec();
    while !remaining.is_empty() {
        let before = remaining.len();
        remaining.retain(|name| {
            let deps = &compose
                .service(name)
                .map(|s| s.depends_on.0.clone())
                .unwrap_or_default();
            let ready = deps.iter().all(|d| order.contains(d) || !nodes.contains(d));
            if ready {
                order.push(name.clone());
            }
            !ready
        });
        if remaining.len() == before {
            // A cycle: start the rest in file order rather than hang.
            order.append(&mut remaining);
        }
    }
    order
}

/// The ports a service publishes, on 127.0.0.1 only: the exposed `port/tcp` keys and their
/// bindings.
type PortBindings = (Vec<String>, HashMap<String, Option<Vec<PortBinding>>>);

fn port_bindings(service: &Service) -> Result<PortBindings> {
    let mut exposed = Vec::new();
    let mut bindings = HashMap::new();
    for port in &service.ports {
        let port = parse_port(port).map_err(HarnessError::BadInput)?;
        let key = format!("{}/tcp", port.container);
        exposed.push(key.clone());
        bindings.insert(
            key,
            Some(vec![PortBinding {
                host_ip: Some("127.0.0.1".into()),
                // A fixed host port, chosen now when the file leaves it open: Docker
                // would pick a new one on every restart and clients would lose the node.
                host_port: Some(match port.host {
                    Some(p) => p.to_string(),
                    None => free_port()?.to_string(),
                }),
            }]),
        );
    }
    Ok((exposed, bindings))
}

/// `devices:` entries (`host[:inside[:permissions]]`) as Docker's device mappings.
fn device_mappings(service: &Service) -> Vec<DeviceMapping> {
    service
        .devices
        .iter()
        .map(|d| {
            let mut parts = d.split(':');
            let host = parts.next().unwrap_or_default().to_string();
            let inside = parts
                .next()
                .map(str::to_string)
                .unwrap_or_else(|| host.clone());
            DeviceMapping {
                path_on_host: Some(host),
                path_in_container: Some(inside),
                cgroup_permissions: Some(parts.next().unwrap_or("rwm").to_string()),
            }
        })
        .collect()
}

/// Adds `node` to a set of nodes in some state, or takes it out.
fn mark(set: &std::sync::Mutex<BTreeSet<String>>, node: &str, into: bool) {
    let mut set = set.lock().expect("node states");
    if into {
        set.insert(node.to_string());
    } else {
        set.remove(node);
    }
}
