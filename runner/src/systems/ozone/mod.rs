//! Apache Ozone: three Ozone Managers in Ratis HA (service id `omservice`), one SCM, three
//! datanodes and an S3 gateway from chaos-ozone, built here from Ozone's released jars on Maven
//! Central (images/ozone; compose profile `ozone`; profile `ozone-scm-ha`, which `chaos run
//! --scm-ha` plays, has three SCMs in SCM HA).
//!
//! Met live on Ozone 2.2.0: everything below but what [`NOT_YET_LIVE`] lists (those parts are
//! built to published interfaces and tested on outputs written to their formats;
//! harness/tests/fixtures/ozone says which outputs are recorded):
//! - client operations go through the native OM client of the `ozone-rpc` crate (Hadoop RPC,
//!   SIMPLE auth): the `create` workload creates a key "if absent" as Ozone can, by committing a
//!   staging key and renaming it onto the target (a rename onto an existing key answers
//!   KEY_ALREADY_EXISTS); a rename whose answer never came is resent byte for byte (same client
//!   id and call id) `retries` times, which is what the OM retry cache must recognise, and
//!   `duplicate-after` sends answered renames again; the `lease` workload hsyncs, recovers and
//!   closes files in an FSO bucket with the same client;
//! - the `stream` workload runs Ozone's own shell (`ozone sh key put --stream`) in a node's
//!   container ([`ShellClient`]);
//! - per-OM lookups for `converge: { lookups: true }`: each OM made leader in turn;
//! - roles from each OM's HA leader-state gauge on /prom ([`roles_from_gauges`]), and from
//!   `ozone admin om roles --json` run in an OM container when the gauges do not decide;
//! - Ratis indexes of each OM from its /prom page ([`parse_prom`]);
//! - the SCM's safe mode and open pipelines, asked natively (the `ozone-rpc` crate's
//!   `ScmClient`) while a cluster is awaited, with `ozone admin` as the fallback;
//! - admin command lines ([`admin`]) and named log triggers ([`TRIGGERS`]) for scenarios.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bollard::Docker;
use ozone_rpc::{BucketLayout, OmClient, OmRequest, ScmClient, Status};
use serde_json::json;
use tokio::sync::OnceCell;

use super::{ask_each, ask_until, AdapterSettings, SystemAdapter, SystemClient, SystemInfo};
use crate::cluster::docker::exec;
use crate::cluster::Cluster;
use crate::scenario::plan::ActionParams;
use crate::scenario::{Action, Role, TransferVia, WorkloadKind};

pub mod admin;
mod client;
mod probe;
mod reads;
mod shell;

pub use admin::{admin_commands, ADMIN_ACTIONS};
use client::{describe, lookup_answer, OzoneClient};
pub use probe::{
    indexes_json, installed_checkpoint, lagging, metric_value, parse_prom, parse_roles,
    snapshot_index, trigger, NamedTrigger, RatisIndexes, TRIGGERS,
};
use reads::ReadRoute;
pub use shell::stream_read_value;
use shell::ShellClient;

/// The version the compose profiles build by default (`OZONE_VERSION` overrides it): the newest
/// release whose jars Maven Central serves whole enough to run (it serves no 2.1.x server jars).
pub const VERSION: &str = "2.2.0";
pub const SERVICE_ID: &str = "omservice";
/// OM client RPC (ozone.om.address), HTTP (/prom, /jmx), Ratis.
pub const OM_RPC_PORT: u16 = 9862;
/// The SCM's client RPC (ozone.scm.client.port): StorageContainerLocationProtocol.
pub const SCM_CLIENT_PORT: u16 = 9860;
pub const OM_HTTP_PORT: u16 = 9874;
pub const OM_RATIS_PORT: u16 = 9872;
pub const S3G_PORT: u16 = 9878;
/// Where the workload's keys live (created on the first connect; security is off).
pub const VOLUME: &str = "chaos";
pub const BUCKET: &str = "keys";
/// The lease workload's bucket: FILE_SYSTEM_OPTIMIZED, the only layout whose files can be
/// hsync'd and lease-recovered.
pub const FILES: &str = "files";
/// The stream workload's bucket.
pub const STREAM: &str = "stream";

/// Printed by `chaos run` for this system, so nobody mistakes a green run of the harness for a
/// tested integration of the parts that have not met a live cluster yet.
pub const NOT_YET_LIVE: &str = "ozone: run live on 2.2.0: the create, lease, stream and \
s3-object workloads and the register workload's follower reads, roles, /prom, readiness, the \
per-OM lookups of `converge`, the transfer-leader, take-snapshot and close-container actions, \
slow fsync through chaosfs on the OM Ratis log, clock skew in the JVMs, the JVM faults \
(Byteman: delay, throw, hold, trace, in the OMs), and the log lines of the leader-change, \
install-snapshot-notified, install-snapshot-finished, om-state-reloaded, snapshot-taken, \
log-purged and container-closed triggers; on Ozone master built from source (78d5650c313f), the \
JVM faults in the datanodes and the put-block-failed line. Not yet met live: the \
install-snapshot-in-progress line (never printed in any run) and chaosfs on the datanodes' \
directories.";

pub const INFO: SystemInfo = SystemInfo {
    name: "ozone",
    workloads: &[
        WorkloadKind::REGISTER,
        WorkloadKind::CREATE,
        WorkloadKind::S3_OBJECT,
        WorkloadKind::FENCING,
        WorkloadKind::LEASE,
        WorkloadKind::STREAM,
    ],
    has_roles: true,
    ready_within: std::time::Duration::from_secs(300),
    make: |cluster, settings| Box::new(Ozone::new(cluster, settings)),
    admin_actions: ADMIN_ACTIONS,
    speaks_s3: true,
    applied_index: true,
    metrics: true,
    // `ozone getconf` reads every default resource (ozone-default.xml and the ones generated
    // from @Config annotations): exit 0 with the value, or 255 and "Configuration K is missing".
    config_query: Some(|key| {
        ["ozone", "getconf", "-confKey", key]
            .iter()
            .map(|w| w.to_string())
            .collect()
    }),
    scm_ha_profile: Some(scm_ha_profile),
    caveat: Some(NOT_YET_LIVE),
};

/// The OM HA gauge that is 1 on the leader (Hadoop metrics2 `OMHAMetrics`, snake_cased).
const LEADER_STATE: &str = "omha_metrics_ozone_manager_ha_leader_state";

/// `chaos run --scm-ha` plays an Ozone scenario of profile P on profile P + this suffix: the same
/// nodes (om1..om3, dn1..dn3, s3g, scm) and scm2, scm3, three SCMs in SCM HA (service id
/// `scmservice`, `scm` the primordial one, scm2 and scm3 bootstrapped from it).
pub const SCM_HA_SUFFIX: &str = "-scm-ha";

/// The SCM-HA variant of a profile (`ozone` -> `ozone-scm-ha`; a variant is its own).
pub fn scm_ha_profile(profile: &str) -> String {
    if profile.ends_with(SCM_HA_SUFFIX) {
        profile.to_string()
    } else {
        format!("{profile}{SCM_HA_SUFFIX}")
    }
}

/// Whether a node of the profile is an SCM (scm; scm2 and scm3 in SCM HA).
pub fn is_scm(node: &str) -> bool {
    node.strip_prefix("scm")
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
}

/// Whether a node of the profile is an Ozone Manager (om1, om2, om3).
pub fn is_om(node: &str) -> bool {
    node.strip_prefix("om")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// How long one `ozone admin` command may take in one OM container (a JVM starts each time).
pub const ADMIN_PATIENCE: Duration = Duration::from_secs(20);
/// How many times `transfer-leader` asks the OMs before it says the transfer failed.
const TRANSFER_ATTEMPTS: u32 = 3;

pub struct Ozone {
    /// OM node -> its RPC endpoint on the host (through the proxy when there is one).
    rpc: BTreeMap<String, SocketAddr>,
    /// OM node -> its HTTP endpoint on the host (/prom).
    http: BTreeMap<String, SocketAddr>,
    /// SCM node -> its client RPC endpoint on the host (every SCM of an HA group: the one
    /// that leads answers).
    scms: BTreeMap<String, SocketAddr>,
    /// OM node -> container id, for `ozone admin` run inside it.
    containers: BTreeMap<String, String>,
    /// Every node -> container id: the stream workload runs Ozone's shell in its node's.
    shells: BTreeMap<String, String>,
    docker: Docker,
    retries: u32,
    resend_after: Duration,
    sends_duplicates: bool,
    connect_timeout: Duration,
    /// Volume and bucket created once per run.
    setup: Arc<OnceCell<()>>,
    /// The S3 gateway (s3g) for the s3-object workload, through the S3 adapter.
    s3: Option<super::s3::S3>,
    /// The workload: which bucket per-OM lookups read.
    workload: WorkloadKind,
    /// The OM that led when the cluster became serviceable: new clients call it first, as a
    /// client that has found the leader once does, rather than a follower the scenario may
    /// have paused (a paused OM accepts the connection and never answers).
    leader_hint: Arc<std::sync::Mutex<Option<String>>>,
    /// Where reads go and with which hint: Ozone's client keys in `cluster.environment`.
    reads: Result<ReadRoute, String>,
}

impl Ozone {
    fn new(cluster: &Cluster, settings: &AdapterSettings) -> Self {
        let oms: Vec<String> = cluster.names().into_iter().filter(|n| is_om(n)).collect();
        let rpc = oms
            .iter()
            .filter_map(|n| Some((n.clone(), cluster.endpoint(n, OM_RPC_PORT)?)))
            .collect();
        let http = oms
            .iter()
            .filter_map(|n| Some((n.clone(), cluster.direct_endpoint(n, OM_HTTP_PORT)?)))
            .collect();
        let scms = cluster
            .names()
            .into_iter()
            .filter(|n| is_scm(n))
            .filter_map(|n| Some((n.clone(), cluster.direct_endpoint(&n, SCM_CLIENT_PORT)?)))
            .collect();
        let containers = oms
            .iter()
            .filter_map(|n| Some((n.clone(), cluster.node(n)?.container.clone())))
            .collect();
        let shells = cluster
            .names()
            .into_iter()
            .filter_map(|n| Some((n.clone(), cluster.node(&n)?.container.clone())))
            .collect();
        Ozone {
            rpc,
            http,
            scms,
            containers,
            shells,
            docker: cluster.docker().clone(),
            retries: settings.retries,
            resend_after: settings.resend_after,
            sends_duplicates: settings.sends_duplicates,
            connect_timeout: settings.connect_timeout,
            setup: Arc::new(OnceCell::new()),
            s3: settings
                .workload
                .needs_object_store()
                .then(|| super::s3::S3::new(cluster, settings)),
            workload: settings.workload,
            leader_hint: Default::default(),
            reads: ReadRoute::from_environment(&settings.environment),
        }
    }

    /// Moves leadership to `om` and waits until the roles say so. A transfer the OMs refused
    /// or left unfinished is asked again, up to `TRANSFER_ATTEMPTS` times: a leader that is
    /// "stepping down", or a cluster whose first setConfiguration stalls its commits for 20-40
    /// s (seen live with follower reads on), answers the first ask with an error but takes a
    /// later one.
    async fn make_leader(&self, om: &str, via: TransferVia) -> Result<String, String> {
        let leads = || async move {
            match self.roles().await.get(om) {
                Some(Role::Leader) => Ok(()),
                _ => Err(()),
            }
        };
        let mut last = String::new();
        for attempt in 1..=TRANSFER_ATTEMPTS {
            let transfer = match via {
                TransferVia::Service => self.transfer_leadership(om).await,
                TransferVia::Raft => self.ratis_transfer_leadership(om).await,
            };
            let deadline = Instant::now() + ADMIN_PATIENCE;
            if ask_until(deadline, Duration::from_millis(500), leads)
                .await
                .is_ok()
            {
                let how = transfer.unwrap_or_else(|e| format!("after an error ({e})"));
                return Ok(format!("{om} leads, attempt {attempt}: {how}"));
            }
            last = match transfer {
                Err(e) => format!("could not make {om} the leader: {e}"),
                Ok(_) => format!("{om} was not the leader {ADMIN_PATIENCE:?} after the transfer"),
            };
            tracing::info!("transfer to {om}, attempt {attempt} of {TRANSFER_ATTEMPTS}: {last}");
        }
        Err(format!("{last} ({TRANSFER_ATTEMPTS} attempts)"))
    }

    /// Asks the OMs to move leadership to `om` as `ozone admin om transfer -n om` does (the
    /// OM's TransferLeadership request), sent by the native client: no JVM to start, where the
    /// CLI costs seconds of CPU on two cores. The OM answers once Ratis has moved leadership
    /// and reset the peers' priorities, which took 10.3 s on Ozone 2.2.0 (the OM's own Ratis
    /// client waited 5 s before its first request), so the call gets the CLI's patience. The
    /// CLI stays the fallback (an OM that does not know the request, a call that failed).
    async fn transfer_leadership(&self, om: &str) -> Result<String, String> {
        let native = match self
            .om_client_within(ADMIN_PATIENCE)
            .call(OmRequest::transfer_leadership(om))
            .await
        {
            Ok(answer) if answer.status == Status::OK => {
                return Ok(format!(
                    "the OMs moved leadership to {om} (TransferLeadership: OK)"
                ))
            }
            Ok(answer) => format!("TransferLeadership answered {:?}", answer.status),
            Err(e) => e.to_string(),
        };
        self.run_admin(&admin::transfer_leader(om))
            .await
            .map_err(|cli| format!("natively: {native}; with the CLI: {cli}"))
    }

    /// Asks Ratis itself to move leadership to `om` (`ozone ratis election transfer`, a JVM in
    /// an OM container): no OM runs a request of its own for it, so it cannot wait on the
    /// apply thread as the OM's TransferLeadership can with linearizable reads on.
    async fn ratis_transfer_leadership(&self, om: &str) -> Result<String, String> {
        let oms: Vec<&str> = self.rpc.keys().map(String::as_str).collect();
        self.run_admin(&admin::ratis_transfer_leader(&oms, om))
            .await
            .map(|out| format!("Ratis moved leadership to {om} ({})", out.trim()))
    }

    /// The S3 adapter and the gateway node that answers S3 (the workload's node if it does).
    fn gateway<'a>(&'a self, node: &'a str) -> Result<(&'a super::s3::S3, &'a str), String> {
        let s3 = self
            .s3
            .as_ref()
            .ok_or("the ozone adapter speaks S3 for the s3-object and fencing workloads only")?;
        let node = if s3.serves(node) {
            node
        } else {
            s3.nodes()
                .next()
                .ok_or(format!("no node publishes the S3 gateway port {S3G_PORT}"))?
        };
        Ok((s3, node))
    }

    fn om_client(&self) -> OmClient {
        self.om_client_within(ozone_rpc::ClientConfig::default().call_timeout)
    }

    /// A client of every OM whose calls may each take `call_timeout` to be answered.
    fn om_client_within(&self, call_timeout: Duration) -> OmClient {
        let (ids, addrs): (Vec<String>, Vec<SocketAddr>) =
            self.rpc.iter().map(|(n, a)| (n.clone(), *a)).unzip();
        let config = ozone_rpc::ClientConfig {
            connect_timeout: self.connect_timeout,
            call_timeout,
            ..Default::default()
        };
        let client = OmClient::connect(addrs, "hadoop")
            .with_node_ids(&ids)
            .with_config(config);
        match self.leader_hint.lock().ok().and_then(|h| h.clone()) {
            Some(leader) => client.starting_at(&leader),
            None => client,
        }
    }

    /// A client of one OM alone, one attempt per call: a follower's refusal is the read's
    /// answer, not a reason to fail over (reads.rs).
    fn own_om_client(&self, node: &str) -> Result<OmClient, String> {
        let addr = self.rpc.get(node).ok_or(format!(
            "{node} is not an OM: follower reads go to the process's OM"
        ))?;
        let config = ozone_rpc::ClientConfig {
            connect_timeout: self.connect_timeout,
            // Below the workload's timeout, so the client drops a connection whose answer is
            // late instead of reading that answer as the next call's (seen live: "not a
            // response to this call" after a timed-out read).
            call_timeout: Duration::from_secs(2),
            max_attempts: 1,
            ..Default::default()
        };
        Ok(OmClient::connect(vec![*addr], "hadoop")
            .with_node_ids(&[node])
            .with_config(config))
    }

    /// Each OM's Ratis indexes from its /prom page; an OM that does not answer is left out.
    pub async fn probe(&self) -> BTreeMap<String, RatisIndexes> {
        let http = reqwest::Client::new();
        ask_each(self.http.keys(), Duration::from_secs(2), |node| {
            let url = format!("http://{}/prom", self.http[node]);
            let http = &http;
            async move {
                let text = http.get(url).send().await.ok()?.text().await.ok()?;
                Some(parse_prom(&text, node))
            }
        })
        .await
        .into_iter()
        .collect()
    }

    /// Waits until an OM is the leader, the SCM has left safe mode and a pipeline of three
    /// datanodes is open: what the stream and lease workloads' writes need, and what Ozone's
    /// own acceptance tests wait for (compose/testlib.sh). Says what it saw, or what was
    /// still missing when `within` ran out.
    pub async fn wait_serviceable(&self, within: Duration) -> Result<String, String> {
        let serviceable = || async move {
            let (roles, scm) = tokio::join!(self.roles(), self.scm_state());
            let leader = roles.iter().find(|(_, r)| **r == Role::Leader);
            let mut missing = Vec::new();
            if leader.is_none() {
                missing.push("no OM is the leader".to_string());
            }
            match &scm {
                Ok(scm) if scm.in_safe_mode => missing.push("the SCM is in safe mode".into()),
                Ok(_) => {}
                Err(e) => missing.push(format!("the SCM's safe mode is unknown ({e})")),
            }
            let (open, asked) = scm
                .as_ref()
                .map_or((0, ""), |scm| (scm.open_ratis_three, scm.asked));
            if open == 0 {
                missing.push("no RATIS/THREE pipeline is open".to_string());
            }
            match leader {
                Some((om, _)) if missing.is_empty() => {
                    if let Ok(mut hint) = self.leader_hint.lock() {
                        *hint = Some(om.clone());
                    }
                    Ok(format!(
                        "{om} leads, the SCM is out of safe mode, {open} RATIS/THREE pipeline(s) \
                         open (the SCM asked {asked})"
                    ))
                }
                _ => Err(missing),
            }
        };
        // A TCP round trip per question: asking often costs the cluster nothing.
        let every = Duration::from_millis(250);
        ask_until(Instant::now() + within, every, serviceable)
            .await
            .map_err(|missing| format!("after {within:?}: {}", missing.join("; ")))
    }

    /// The SCM's safe mode and open RATIS/THREE pipelines, from the first SCM that answers
    /// natively (in SCM HA, the leader: followers refuse). When none does (a build whose
    /// protocol this client does not speak, a cluster whose SCM port is not published), from
    /// `ozone admin` in the scm container: two JVMs, seconds of CPU each.
    async fn scm_state(&self) -> Result<ScmState, String> {
        let mut native = String::from("no SCM publishes its client port");
        for (node, addr) in &self.scms {
            let scm = ScmClient::new(*addr, "hadoop", Duration::from_secs(2));
            match tokio::try_join!(scm.in_safe_mode(), scm.pipelines()) {
                Ok((in_safe_mode, pipelines)) => {
                    return Ok(ScmState {
                        in_safe_mode,
                        open_ratis_three: pipelines
                            .iter()
                            .filter(|p| p.is_open_ratis_three())
                            .count(),
                        asked: "over RPC",
                    })
                }
                Err(e) => native = format!("{node}: {e}"),
            }
        }
        let cli = self.cli_scm_state().await;
        // The CLI's JVMs compete with the cluster's for two cores: ask it no more often than
        // every 2 s, as the wait always did before it asked natively.
        tokio::time::sleep(Duration::from_millis(1750)).await;
        cli.map_err(|cli| format!("natively: {native}; with the CLI: {cli}"))
    }

    async fn cli_scm_state(&self) -> Result<ScmState, String> {
        let scm = self
            .shells
            .get("scm")
            .ok_or("the cluster has no node scm")?;
        let (status, list) = (admin::safemode_status(), admin::pipelines());
        let (safemode, pipelines) = tokio::join!(
            exec(&self.docker, scm, &status, None),
            exec(&self.docker, scm, &list, None),
        );
        let safemode = safemode.map_err(|e| e.to_string())?;
        if !safemode.stdout.contains("safe mode") {
            return Err(format!("the SCM says `{}`", safemode.stdout.trim()));
        }
        Ok(ScmState {
            in_safe_mode: !safemode.stdout.contains("out of safe mode"),
            open_ratis_three: pipelines.map_or(0, |out| count_open_three(&out.stdout)),
            asked: "with ozone admin",
        })
    }

    /// Runs a command line in the first OM container that runs it successfully, giving each
    /// [`ADMIN_PATIENCE`] (a paused or stopped container refuses at once; a partitioned one
    /// makes the CLI wait for OMs it cannot reach).
    pub async fn run_admin(&self, cmd: &[String]) -> Result<String, String> {
        let mut last = String::from("no OM container");
        for (node, container) in &self.containers {
            match exec(&self.docker, container, cmd, Some(ADMIN_PATIENCE)).await {
                Ok(out) => return Ok(out.stdout),
                Err(e) => last = format!("`{}` in {node}: {e}", cmd.join(" ")),
            }
        }
        Err(last)
    }
}

/// What the SCM says of itself while a cluster is awaited.
struct ScmState {
    in_safe_mode: bool,
    open_ratis_three: usize,
    /// How it was asked: "over RPC" or "with ozone admin".
    asked: &'static str,
}

/// The roles the OMs' leader-state gauges decide, or `None` when they do not.
///
/// An OM sets its gauge when it learns of a new leader (OzoneManagerStateMachine's
/// `notifyLeaderChanged`, Ozone 2.2.0), never when a leader merely steps down: a leader cut off
/// keeps its 1 until it hears of the next one. So one OM at 1 is the leader and every other OM
/// a follower (as the CLI lists them: a paused or stopped OM is still in the leader's group);
/// two at 1 is a stale gauge the CLI must settle; none at 1 says "no leader" only when every OM
/// answered (a leader whose page did not answer in time may still lead).
pub fn roles_from_gauges(
    oms: &[&String],
    gauges: &[(String, f64)],
) -> Option<BTreeMap<String, Role>> {
    let leaders: Vec<&String> = gauges
        .iter()
        .filter(|(_, state)| *state >= 1.0)
        .map(|(om, _)| om)
        .collect();
    match leaders.as_slice() {
        [leader] => Some(
            oms.iter()
                .map(|&om| {
                    let role = if om == *leader {
                        Role::Leader
                    } else {
                        Role::Follower
                    };
                    (om.clone(), role)
                })
                .collect(),
        ),
        [] if gauges.len() == oms.len() => Some(BTreeMap::new()),
        _ => None,
    }
}

impl Ozone {
    /// The volume and buckets every OM workload writes into, once per run; "already exists"
    /// is fine (an attached cluster, or a process that got there first). `prepare` makes them
    /// before the workload and its faults start, so a fault step at 0 s does not race them.
    async fn ensure_volume_and_buckets(&self) -> Result<(), String> {
        let mut om = self.om_client();
        self.setup
            .get_or_try_init(|| async {
                for req in [
                    OmRequest::create_volume(VOLUME, "hadoop", "hadoop"),
                    OmRequest::create_bucket(VOLUME, BUCKET, Some(BucketLayout::ObjectStore)),
                    OmRequest::create_bucket(
                        VOLUME,
                        FILES,
                        Some(BucketLayout::FileSystemOptimized),
                    ),
                    OmRequest::create_bucket(VOLUME, STREAM, Some(BucketLayout::ObjectStore)),
                ] {
                    match om.call(req).await {
                        Ok(r)
                            if r.is_ok()
                                || r.status == Status::VOLUME_ALREADY_EXISTS
                                || r.status == Status::BUCKET_ALREADY_EXISTS => {}
                        Ok(r) => return Err(format!("setup: {}", describe(&r))),
                        Err(e) => return Err(format!("setup: {e}")),
                    }
                }
                Ok(())
            })
            .await
            .map(|_| ())
    }

    /// Each OM's HA leader-state gauge from its /prom page; an OM that did not answer within
    /// 2 s, or has no gauge yet (none before its first leader), is left out.
    async fn leader_gauges(&self) -> Vec<(String, f64)> {
        ask_each(self.http.keys(), Duration::from_secs(2), |om| {
            self.metric(om, LEADER_STATE)
        })
        .await
    }

    /// Roles as `ozone admin om roles --json` lists them; empty when no OM could run it.
    async fn cli_roles(&self) -> BTreeMap<String, Role> {
        match self.run_admin(&admin::roles()).await {
            Ok(out) => parse_roles(&out)
                .into_iter()
                .filter(|(node, _)| self.rpc.contains_key(node))
                .collect(),
            Err(_) => BTreeMap::new(),
        }
    }
}

/// Open pipelines over three datanodes in `ozone admin pipeline list`'s output.
pub fn count_open_three(list: &str) -> usize {
    list.lines()
        .filter(|l| l.contains("ReplicationConfig: RATIS/THREE") && l.contains("State:OPEN"))
        .count()
}

#[async_trait]
impl SystemAdapter for Ozone {
    /// The fencing workload and the conditional-write probe go through the S3 gateway.
    fn object_store(&self, node: &str, timeout: Duration) -> Option<chaos_s3::BucketStore> {
        let (s3, node) = self.gateway(node).ok()?;
        s3.object_store(node, timeout)
    }

    /// From the OMs' /prom gauges when they decide (a page each, milliseconds), else from the
    /// admin CLI (a JVM: seconds, 14-18 s on a loaded 2-core machine, which made steps aimed
    /// at `role: leader` fire that late).
    async fn roles(&self) -> BTreeMap<String, Role> {
        let oms: Vec<&String> = self.rpc.keys().collect();
        match roles_from_gauges(&oms, &self.leader_gauges().await) {
            Some(roles) => roles,
            None => self.cli_roles().await,
        }
    }

    async fn admin(
        &self,
        action: Action,
        targets: &[String],
        params: &ActionParams,
    ) -> Result<String, String> {
        let oms: Vec<&str> = self.rpc.keys().map(String::as_str).collect();
        let commands = admin_commands(action, targets, params.container, &oms)?;
        // Asked again until the roles say `om` leads: a transfer answered with an error (a
        // leader "stepping down") or left unfinished was seen to leave a step's condition
        // unmet for the rest of the run (follower-read-released-early, 4 of 20 runs).
        if let ("transfer-leader", [om]) = (action.name(), targets) {
            return self.make_leader(om, params.via.unwrap_or_default()).await;
        }
        let mut out = String::new();
        for cmd in commands {
            out.push_str(&self.run_admin(&cmd).await?);
        }
        Ok(out)
    }

    /// The native client talks to the OM service (failing over from OM to OM), the S3 and
    /// stream workloads to the gateway: never to the SCM or a datanode.
    fn client_nodes(&self) -> Option<Vec<String>> {
        if self.workload.needs_object_store() || self.workload == WorkloadKind::STREAM {
            Some(
                self.shells
                    .keys()
                    .filter(|n| n.starts_with("s3g"))
                    .cloned()
                    .collect(),
            )
        } else {
            Some(self.rpc.keys().cloned().collect())
        }
        .filter(|nodes: &Vec<String>| !nodes.is_empty())
    }

    /// An OM answers again once it is back in its Ratis group (an applied index on /prom) and
    /// some OM leads (its HA leader-state gauge is 1; the admin CLI's roles when no OM's page
    /// has the gauge). The other nodes: their healthcheck says.
    async fn answers(&self, node: &str) -> bool {
        if !self.http.contains_key(node) {
            return true;
        }
        let probe = self.probe().await;
        if probe.get(node).and_then(|i| i.applied).is_none() {
            return false;
        }
        let gauges = self.leader_gauges().await;
        if gauges.is_empty() {
            return self.cli_roles().await.values().any(|r| *r == Role::Leader);
        }
        gauges.iter().any(|(_, state)| *state >= 1.0)
    }

    /// A metric of an OM's /prom page (the other nodes' pages are not read).
    async fn metric(&self, node: &str, name: &str) -> Option<f64> {
        let url = format!("http://{}/prom", self.http.get(node)?);
        let fetch = async { reqwest::get(url).await.ok()?.text().await.ok() };
        let text = tokio::time::timeout(Duration::from_secs(2), fetch)
            .await
            .ok()??;
        metric_value(&text, name)
    }

    async fn applied_indexes(&self) -> BTreeMap<String, Option<u64>> {
        let probe = self.probe().await;
        self.http
            .keys()
            .map(|n| (n.clone(), probe.get(n).and_then(|i| i.applied)))
            .collect()
    }

    async fn connect(&self, node: &str) -> Result<Box<dyn SystemClient>, String> {
        if self.s3.is_some() {
            let (s3, gateway) = self.gateway(node)?;
            return s3.connect(gateway).await;
        }
        if self.rpc.is_empty() {
            return Err(format!("no OM publishes its RPC port {OM_RPC_PORT}"));
        }
        self.ensure_volume_and_buckets().await?;
        let om = self.om_client();
        if self.workload == WorkloadKind::STREAM {
            let container = self
                .shells
                .get(node)
                .ok_or(format!("no container for node {node}"))?;
            return Ok(Box::new(ShellClient {
                docker: self.docker.clone(),
                container: container.clone(),
            }));
        }
        let mut client = OzoneClient::new(om, self.retries);
        client.resend_after = self.resend_after;
        client.keep_answered = self.sends_duplicates;
        match self.reads.clone()? {
            ReadRoute::Leader(hint) => client.read_hint = hint,
            ReadRoute::OwnOm(hint) => {
                client.read_hint = Some(hint);
                client.own_om = Some(self.own_om_client(node)?);
            }
        }
        Ok(Box::new(client))
    }

    /// Each OM made leader in turn (a follower does not serve reads) and asked alone for every
    /// key: `{"length": n, "open": bool}`, `"absent"`, or `{"error": ...}`.
    async fn replica_lookups(&self, keys: &[String]) -> crate::run_folder::Lookups {
        let bucket = if self.workload == WorkloadKind::LEASE {
            FILES
        } else if [WorkloadKind::CREATE, WorkloadKind::REGISTER].contains(&self.workload) {
            BUCKET
        } else {
            // The s3-object workload's objects live in s3v, behind the gateway.
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for (om, addr) in &self.rpc {
            let answers = match self.make_leader(om, TransferVia::Service).await {
                Ok(_) => {
                    let config = ozone_rpc::ClientConfig {
                        connect_timeout: self.connect_timeout,
                        ..Default::default()
                    };
                    let mut alone = OmClient::connect(vec![*addr], "hadoop").with_config(config);
                    let mut answers = BTreeMap::new();
                    for key in keys {
                        let answer = alone.call(OmRequest::lookup_key(VOLUME, bucket, key)).await;
                        answers.insert(key.clone(), lookup_answer(&answer));
                    }
                    answers
                }
                Err(e) => keys
                    .iter()
                    .map(|k| (k.clone(), json!({ "error": e })))
                    .collect(),
            };
            out.insert(om.clone(), answers);
        }
        out
    }

    /// A cluster that serves every workload (healthy containers only mean open ports): then
    /// the s3-object workload's bucket, created through s3g (in Ozone's `s3v` volume).
    async fn prepare(&self, within: Duration) -> Result<(), String> {
        let started = tokio::time::Instant::now();
        let state = self.wait_serviceable(within).await?;
        eprintln!(
            "ozone: {state}, {:.1} s after the nodes were healthy",
            started.elapsed().as_secs_f64()
        );
        match &self.s3 {
            Some(s3) => s3.prepare(within).await,
            None if self.rpc.is_empty() => Ok(()),
            None => self.ensure_volume_and_buckets().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ozone admin pipeline list` as 2.2.0 printed it (node lists shortened): only open
    /// pipelines over three datanodes count.
    #[test]
    fn open_pipelines_of_three_datanodes() {
        let list = "Pipeline{ Id: 104622c1-22b7-4aff-b2b6-98356331d9bb, Nodes: [ {dc080a6c(dn3/172.23.0.8), ReplicaIndex: 0},], ReplicationConfig: RATIS/ONE, State:OPEN, leaderId:dc080a6c, CreationTimestamp2026-12-01T18:22:40Z[UTC]}\n\
                    Pipeline{ Id: 78f1aea4-1df3-4860-95cf-78b4ac53e99b, Nodes: [ {72059697(dn2/172.23.0.7), ReplicaIndex: 0}, {cef42d0d(dn1/172.23.0.6), ReplicaIndex: 0}, {dc080a6c(dn3/172.23.0.8), ReplicaIndex: 0},], ReplicationConfig: RATIS/THREE, State:OPEN, leaderId:72059697, CreationTimestamp2026-12-01T18:22:41Z[UTC]}\n\
                    Pipeline{ Id: 3e40bb8f-ffa8-4f43-8b1e-6dcf8f763b1d, Nodes: [], ReplicationConfig: RATIS/THREE, State:ALLOCATED, leaderId:, CreationTimestamp2026-12-01T18:22:41Z[UTC]}\n";
        assert_eq!(count_open_three(list), 1);
        assert_eq!(count_open_three(""), 0);
    }

    /// One gauge at 1 names the leader and makes every other OM a follower, answered or not;
    /// two at 1, or none at 1 with an OM silent, is left to the admin CLI.
    #[test]
    fn roles_from_the_leader_state_gauges() {
        let names: Vec<String> = ["om1", "om2", "om3"].map(String::from).to_vec();
        let oms: Vec<&String> = names.iter().collect();
        let g = |pairs: &[(&str, f64)]| -> Vec<(String, f64)> {
            pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
        };
        let one = roles_from_gauges(&oms, &g(&[("om2", 1.0), ("om3", 0.0)])).unwrap();
        assert_eq!(one.get("om2"), Some(&Role::Leader));
        assert_eq!(
            one.get("om1"),
            Some(&Role::Follower),
            "a paused OM is a follower"
        );
        assert_eq!(one.get("om3"), Some(&Role::Follower));
        let stale = g(&[("om1", 1.0), ("om2", 1.0), ("om3", 0.0)]);
        assert_eq!(roles_from_gauges(&oms, &stale), None);
        let none = g(&[("om1", 0.0), ("om2", 0.0), ("om3", 0.0)]);
        assert_eq!(roles_from_gauges(&oms, &none), Some(BTreeMap::new()));
        assert_eq!(roles_from_gauges(&oms, &none[..2]), None);
        assert_eq!(roles_from_gauges(&oms, &[]), None);
    }

    #[test]
    fn om_nodes_are_named_om_and_a_number() {
        assert!(is_om("om1") && is_om("om12"));
        assert!(!is_om("om") && !is_om("omx") && !is_om("scm") && !is_om("dn1"));
    }
}
