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
//! - roles from `ozone admin om roles --json` run in an OM container;
//! - Ratis indexes of each OM from its /prom page ([`parse_prom`]);
//! - admin command lines ([`admin`]) and named log triggers ([`TRIGGERS`]) for scenarios.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bollard::Docker;
use ozone_rpc::{BucketLayout, CallRecord, OmClient, OmError, OmRequest, OmResponse, Status};
use serde_json::{json, Value};
use tokio::sync::OnceCell;

use super::{AdapterSettings, Operation, Outcome, SystemAdapter, SystemClient, SystemInfo};
use crate::cluster::Cluster;
use crate::scenario::plan::ActionParams;
use crate::scenario::{Action, ContainerRef, Role, WorkloadKind};

/// The version the compose profiles build by default (`OZONE_VERSION` overrides it): the newest
/// release whose jars Maven Central serves whole enough to run (it serves no 2.1.x server jars).
pub const VERSION: &str = "2.2.0";
pub const SERVICE_ID: &str = "omservice";
/// OM client RPC (ozone.om.address), HTTP (/prom, /jmx), Ratis.
pub const OM_RPC_PORT: u16 = 9862;
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
s3-object workloads, roles, /prom, readiness, the per-OM lookups of `converge`, the \
transfer-leader, take-snapshot and close-container actions, slow fsync through chaosfs on the \
OM Ratis log, clock skew in the JVMs, and the log lines of the leader-change, \
install-snapshot-notified, install-snapshot-finished, snapshot-taken, log-purged and \
container-closed triggers. Not yet met live: the install-snapshot-in-progress and \
put-block-failed lines (neither was printed in any run) and chaosfs on the datanodes' \
directories.";

pub const INFO: SystemInfo = SystemInfo {
    name: "ozone",
    workloads: &[
        WorkloadKind::Create,
        WorkloadKind::S3Object,
        WorkloadKind::Lease,
        WorkloadKind::Stream,
    ],
    has_roles: true,
    ready_within: std::time::Duration::from_secs(300),
    make: |cluster, settings| Box::new(Ozone::new(cluster, settings)),    admin_actions: ADMIN_ACTIONS,
    speaks_s3: true,
    applied_index: true,
    scm_ha_profile: Some(scm_ha_profile),
    caveat: Some(NOT_YET_LIVE),
};

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

/// Whether a node of the profile is an Ozone Manager (om1, om2, om3).
pub fn is_om(node: &str) -> bool {
    node.strip_prefix("om")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// How long one `ozone admin` command may take in one OM container (a JVM starts each time).
pub const ADMIN_PATIENCE: Duration = Duration::from_secs(20);

pub struct Ozone {
    /// OM node -> its RPC endpoint on the host (through the proxy when there is one).
    rpc: BTreeMap<String, SocketAddr>,
    /// OM node -> its HTTP endpoint on the host (/prom).
    http: BTreeMap<String, SocketAddr>,
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
            containers,
            shells,
            docker: cluster.docker().clone(),
            retries: settings.retries,
            resend_after: settings.resend_after,
            sends_duplicates: settings.sends_duplicates,
            connect_timeout: settings.connect_timeout,
            setup: Arc::new(OnceCell::new()),
            s3: (settings.workload == WorkloadKind::S3Object)
                .then(|| super::s3::S3::new(cluster, settings)),
            workload: settings.workload,
            leader_hint: Default::default(),
        }
    }

    /// Moves leadership to `om` (`ozone admin om transfer`) and waits until the roles say so.
    async fn make_leader(&self, om: &str) -> Result<(), String> {
        let transfer = self.run_admin(&admin::transfer_leader(om)).await;
        let deadline = tokio::time::Instant::now() + ADMIN_PATIENCE;
        loop {
            if self.roles().await.get(om) == Some(&Role::Leader) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(match transfer {
                    Err(e) => format!("could not make {om} the leader: {e}"),
                    Ok(_) => {
                        format!("{om} was not the leader {ADMIN_PATIENCE:?} after the transfer")
                    }
                });
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The S3 adapter and the gateway node that answers S3 (the workload's node if it does).
    fn gateway<'a>(&'a self, node: &'a str) -> Result<(&'a super::s3::S3, &'a str), String> {
        let s3 = self
            .s3
            .as_ref()
            .ok_or("the ozone adapter speaks S3 for the s3-object workload only")?;
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
        let (ids, addrs): (Vec<String>, Vec<SocketAddr>) =
            self.rpc.iter().map(|(n, a)| (n.clone(), *a)).unzip();
        let config = ozone_rpc::ClientConfig {
            connect_timeout: self.connect_timeout,
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

    /// Each OM's Ratis indexes from its /prom page; an OM that does not answer is left out.
    pub async fn probe(&self) -> BTreeMap<String, RatisIndexes> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap_or_default();
        let asks = self.http.iter().map(|(node, addr)| {
            let http = http.clone();
            async move {
                let text = http
                    .get(format!("http://{addr}/prom"))
                    .send()
                    .await
                    .ok()?
                    .text()
                    .await
                    .ok()?;
                Some((node.clone(), parse_prom(&text, node)))
            }
        });
        futures_util::future::join_all(asks)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// Waits until an OM is the leader, the SCM has left safe mode and a pipeline of three
    /// datanodes is open: what the stream and lease workloads' writes need, and what Ozone's
    /// own acceptance tests wait for (compose/testlib.sh). Says what it saw, or what was
    /// still missing when `within` ran out.
    pub async fn wait_serviceable(&self, within: Duration) -> Result<String, String> {
        let scm = self
            .shells
            .get("scm")
            .ok_or("the cluster has no node scm")?;
        let deadline = tokio::time::Instant::now() + within;
        let (safemode_status, pipeline_list) = (admin::safemode_status(), admin::pipelines());
        loop {
            let (roles, safemode, pipelines) = tokio::join!(
                self.roles(),
                exec(&self.docker, scm, &safemode_status),
                exec(&self.docker, scm, &pipeline_list),
            );
            let leader = roles.iter().find(|(_, r)| **r == Role::Leader);
            let open = pipelines.as_deref().map_or(0, count_open_three);
            let mut missing = Vec::new();
            if leader.is_none() {
                missing.push("no OM is the leader".to_string());
            }
            match &safemode {
                Ok(out) if out.contains("out of safe mode") => {}
                Ok(out) => missing.push(format!("the SCM says `{}`", out.trim())),
                Err(e) => missing.push(format!("the SCM's safe mode is unknown ({e})")),
            }
            if open == 0 {
                missing.push("no RATIS/THREE pipeline is open".to_string());
            }
            match leader {
                Some((om, _)) if missing.is_empty() => {
                    if let Ok(mut hint) = self.leader_hint.lock() {
                        *hint = Some(om.clone());
                    }
                    return Ok(format!(
                    "{om} leads, the SCM is out of safe mode, {open} RATIS/THREE pipeline(s) open"
                ));
                }
                _ if tokio::time::Instant::now() >= deadline => {
                    return Err(format!("after {within:?}: {}", missing.join("; ")))
                }
                _ => tokio::time::sleep(Duration::from_secs(2)).await,
            }
        }
    }

    /// Runs a command line in the first OM container that runs it successfully, giving each
    /// [`ADMIN_PATIENCE`] (a paused or stopped container refuses at once; a partitioned one
    /// makes the CLI wait for OMs it cannot reach).
    pub async fn run_admin(&self, cmd: &[String]) -> Result<String, String> {
        let mut last = String::from("no OM container");
        for (node, container) in &self.containers {
            match tokio::time::timeout(ADMIN_PATIENCE, exec(&self.docker, container, cmd)).await {
                Ok(Ok(out)) => return Ok(out),
                Ok(Err(e)) => last = format!("{node}: {e}"),
                Err(_) => last = format!("{node}: no answer within {ADMIN_PATIENCE:?}"),
            }
        }
        Err(last)
    }
}

/// Open pipelines over three datanodes in `ozone admin pipeline list`'s output.
pub fn count_open_three(list: &str) -> usize {
    list.lines()
        .filter(|l| l.contains("ReplicationConfig: RATIS/THREE") && l.contains("State:OPEN"))
        .count()
}

/// Standard output of a command in an OM container; a non-zero exit is an error.
async fn exec(docker: &Docker, container: &str, cmd: &[String]) -> Result<String, String> {
    let out = crate::cluster::docker::exec(docker, container, cmd)
        .await
        .map_err(|e| e.to_string())?;
    if out.code != 0 {
        return Err(format!("`{}` exited {}", cmd.join(" "), out.code));
    }
    Ok(out.stdout)
}

#[async_trait]
impl SystemAdapter for Ozone {
    async fn roles(&self) -> BTreeMap<String, Role> {
        match self.run_admin(&admin::roles()).await {
            Ok(out) => parse_roles(&out)
                .into_iter()
                .filter(|(node, _)| self.rpc.contains_key(node))
                .collect(),
            Err(_) => BTreeMap::new(),
        }
    }

    async fn admin(
        &self,
        action: Action,
        targets: &[String],
        params: &ActionParams,
    ) -> Result<String, String> {
        let oms: Vec<&str> = self.rpc.keys().map(String::as_str).collect();
        let mut out = String::new();
        for cmd in admin_commands(action, targets, params.container, &oms)? {
            out.push_str(&self.run_admin(&cmd).await?);
        }
        Ok(out)
    }

    /// The native client talks to the OM service (failing over from OM to OM), the S3 and
    /// stream workloads to the gateway: never to the SCM or a datanode.
    fn client_nodes(&self) -> Option<Vec<String>> {
        match self.workload {
            WorkloadKind::S3Object | WorkloadKind::Stream => Some(
                self.shells
                    .keys()
                    .filter(|n| n.starts_with("s3g"))
                    .cloned()
                    .collect(),
            ),
            _ => Some(self.rpc.keys().cloned().collect()),
        }
        .filter(|nodes: &Vec<String>| !nodes.is_empty())
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
        let mut om = self.om_client();
        // The volume and bucket, once; "already exists" is fine (another process made them).
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
            .await?;
        if self.workload == WorkloadKind::Stream {
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
        Ok(Box::new(client))
    }

    /// Each OM made leader in turn (a follower does not serve reads) and asked alone for every
    /// key: `{"length": n, "open": bool}`, `"absent"`, or `{"error": ...}`.
    async fn replica_lookups(&self, keys: &[String]) -> crate::checks::converge::Lookups {
        let bucket = match self.workload {
            WorkloadKind::Lease => FILES,
            WorkloadKind::Create => BUCKET,
            // The s3-object workload's objects live in s3v, behind the gateway.
            _ => return BTreeMap::new(),
        };
        let mut out = BTreeMap::new();
        for (om, addr) in &self.rpc {
            let answers = match self.make_leader(om).await {
                Ok(()) => {
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
            None => Ok(()),
        }
    }
}

/// One process's native OM client.
struct OzoneClient {
    om: OmClient,
    retries: u32,
    /// Wait before each resend (the scenario changes the cluster meanwhile).
    resend_after: Duration,
    /// Lease workload: the open key id (the writer's client id) of each file this process
    /// hsync'd and has not closed.
    open: HashMap<String, u64>,
    /// Each created key's rename, answered OK: what a `resend` sends again (kept only when
    /// the workload sends duplicates).
    answered: HashMap<String, CallRecord>,
    keep_answered: bool,
    /// The retry identity of the call that decided the last operation.
    last: Option<(String, String)>,
}

/// A call's retry identity as the history records it: the RPC client id (a UUID) and call id.
fn identity(record: &CallRecord) -> (String, String) {
    (
        ozone_rpc::uuid_string(&record.client_id),
        record.call_id.to_string(),
    )
}

/// The stream workload's client: Ozone's own shell (`ozone sh`) run in a node's container, so
/// the data goes through Ozone's streaming client to the datanodes. Each key's bytes are its
/// name repeated (`yes KEY | head -c LENGTH`), so a read can tell whole from short or corrupt.
struct ShellClient {
    docker: Docker,
    container: String,
}

/// `ozone sh key put --stream` of LENGTH pattern bytes at KEY ($1 = key, $2 = length).
const STREAM_PUT: &str = r#"set -e
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
head -c "$2" < <(yes "$1") > "$d/data"  # not a pipeline: yes ends on SIGPIPE
ozone sh key put --stream "o3://omservice/chaos/stream/$1" "$d/data""#;

/// Reads KEY back whole ($1 = key) and prints `absent`, its length when the bytes are the
/// pattern, or `LENGTH corrupt`.
const STREAM_READ: &str = r#"d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
if ! ozone sh key get "o3://omservice/chaos/stream/$1" "$d/data" > "$d/err" 2>&1; then
  if grep -q KEY_NOT_FOUND "$d/err"; then echo absent; exit 0; fi
  tail -n 3 "$d/err" >&2; exit 1
fi
n=$(stat -c %s "$d/data")
# coreutils only (the image may lack cmp): compare digests.
want=$(head -c "$n" < <(yes "$1") | sha256sum)
if [ "$(sha256sum < "$d/data")" = "$want" ]; then echo "$n"; else echo "$n corrupt"; fi"#;

/// A final read's answer from STREAM_READ's output: `[]` (absent), `[length]` (the pattern),
/// `["N bytes, not the pattern"]` (corrupt: a value no put wrote).
pub fn stream_read_value(stdout: &str) -> Option<Value> {
    let line = stdout.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    if line == "absent" {
        return Some(json!([]));
    }
    match line.split_once(' ') {
        None => line.parse::<u64>().ok().map(|n| json!([n])),
        Some((n, "corrupt")) => n
            .parse::<u64>()
            .ok()
            .map(|n| json!([format!("{n} bytes, not the pattern")])),
        Some(_) => None,
    }
}

impl ShellClient {
    async fn script(
        &self,
        script: &str,
        args: &[&str],
    ) -> Result<crate::cluster::docker::ExecOutput, String> {
        let mut cmd = vec![
            "bash".to_string(),
            "-c".into(),
            script.into(),
            "chaos".into(),
        ];
        cmd.extend(args.iter().map(|a| a.to_string()));
        crate::cluster::docker::exec(&self.docker, &self.container, &cmd)
            .await
            .map_err(|e| e.to_string())
    }
}

/// The last lines of what a command printed, for an outcome's reason.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(2)..].join(" | ")
}

#[async_trait]
impl SystemClient for ShellClient {
    async fn invoke(&mut self, op: &Operation) -> Outcome {
        match op.f {
            "put" => {
                let Some(length) = op.value.as_u64() else {
                    return Outcome::Fail("ozone stream put needs a length".into());
                };
                match self
                    .script(STREAM_PUT, &[&op.key, &length.to_string()])
                    .await
                {
                    Ok(out) if out.code == 0 => Outcome::Ok(Value::from(length)),
                    // The shell failed somewhere between the OM and the close: the key may
                    // still have been committed.
                    Ok(out) => Outcome::Info(format!("exit {}: {}", out.code, tail(&out.all))),
                    Err(e) => Outcome::Fail(format!("exec: {e}")),
                }
            }
            "final-read" => match self.script(STREAM_READ, &[&op.key]).await {
                Ok(out) if out.code == 0 => match stream_read_value(&out.stdout) {
                    Some(v) => Outcome::Ok(v),
                    None => Outcome::Fail(format!("unreadable answer: {}", tail(&out.stdout))),
                },
                Ok(out) => Outcome::Fail(format!("exit {}: {}", out.code, tail(&out.all))),
                Err(e) => Outcome::Fail(format!("exec: {e}")),
            },
            other => Outcome::Fail(format!("the ozone shell has no operation {other}")),
        }
    }
}

/// A lookup's answer as the converge check compares it.
fn lookup_answer(result: &Result<OmResponse, OmError>) -> Value {
    match result {
        Ok(r) if r.is_ok() => match &r.key_info {
            Some(k) => json!({ "length": k.data_size, "open": k.is_open() }),
            None => json!({ "error": "OK without a KeyInfo" }),
        },
        Ok(r) if r.status == Status::KEY_NOT_FOUND => json!("absent"),
        Ok(r) => json!({ "error": describe(r) }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// The outcome of a call that changes state: OK is `ok`, a refusal `fail`, an answer that may
/// still take effect (or none) `info`.
fn change_outcome(result: Result<OmResponse, OmError>, ok: Value) -> Outcome {
    match result {
        Ok(r) if r.is_ok() => Outcome::Ok(ok),
        Ok(r) if r.outcome() == ozone_rpc::Outcome::Info => Outcome::Info(describe(&r)),
        Ok(r) => Outcome::Fail(describe(&r)),
        Err(e) => error_outcome(&e),
    }
}

fn describe(r: &OmResponse) -> String {
    match &r.message {
        Some(m) if !m.is_empty() => format!("{}: {m}", r.status.name()),
        _ => r.status.name(),
    }
}

fn error_outcome(e: &OmError) -> Outcome {
    match e.outcome() {
        ozone_rpc::Outcome::Fail => Outcome::Fail(e.to_string()),
        _ => Outcome::Info(e.to_string()),
    }
}

#[async_trait]
impl SystemClient for OzoneClient {
    fn last_call(&self) -> Option<(String, String)> {
        self.last.clone()
    }

    async fn invoke(&mut self, op: &Operation) -> Outcome {
        self.last = None;
        match op.f {
            "read" => match self
                .om
                .call(OmRequest::lookup_key(VOLUME, BUCKET, &op.key))
                .await
            {
                Ok(r) if r.is_ok() => Outcome::Ok(r.key_length().map_or(Value::Null, Value::from)),
                Ok(r) if r.status == Status::KEY_NOT_FOUND => Outcome::Ok(Value::Null),
                // A lookup changes nothing: any failure is a definite no-op.
                Ok(r) => Outcome::Fail(describe(&r)),
                Err(e) => Outcome::Fail(e.to_string()),
            },
            // cas [null, v]: make key hold a value of length v unless it exists.
            "cas" => {
                let Some(size) = op.value.get(1).and_then(Value::as_u64) else {
                    return Outcome::Fail("ozone cas needs [null, n]".into());
                };
                self.create(&op.key, size, &op.value).await
            }
            // The rename that created the key, sent again byte for byte (duplicate-after): the
            // OM must answer it from its retry cache as it did the first time.
            "resend" => {
                let Some(record) = self.answered.remove(&op.key) else {
                    return Outcome::Fail(format!("no answered call created {}", op.key));
                };
                self.last = Some(identity(&record));
                match self.resend(&record).await {
                    Ok(r) if r.is_ok() => Outcome::Ok(op.value.clone()),
                    Ok(r) if r.status == Status::KEY_ALREADY_EXISTS => Outcome::Fail(format!(
                        "already exists (call {} sent again)",
                        record.call_id
                    )),
                    Ok(r) if r.outcome() == ozone_rpc::Outcome::Info => Outcome::Info(describe(&r)),
                    Ok(r) => Outcome::Fail(describe(&r)),
                    Err(e) => error_outcome(&e),
                }
            }
            "hsync" | "close" => {
                let Some(length) = op.value.as_u64() else {
                    return Outcome::Fail(format!("ozone {} needs a length", op.f));
                };
                if op.f == "hsync" {
                    self.hsync(&op.key, length).await
                } else {
                    self.close(&op.key, length).await
                }
            }
            "recover-lease" => {
                let result = self
                    .om
                    .call(OmRequest::recover_lease(VOLUME, FILES, &op.key, false))
                    .await;
                change_outcome(result, json!("recovery started"))
            }
            // A file's final state for the durable check: [length] once closed; [] while it is
            // open or absent (nothing closed is there; an acknowledged close is then lost).
            "final-read" => {
                match self
                    .om
                    .call(OmRequest::lookup_key(VOLUME, FILES, &op.key))
                    .await
                {
                    Ok(r) if r.is_ok() => match &r.key_info {
                        Some(k) if !k.is_open() => Outcome::Ok(json!([k.data_size])),
                        _ => Outcome::Ok(json!([])),
                    },
                    Ok(r) if r.status == Status::KEY_NOT_FOUND => Outcome::Ok(json!([])),
                    Ok(r) => Outcome::Fail(describe(&r)),
                    Err(e) => Outcome::Fail(e.to_string()),
                }
            }
            other => Outcome::Fail(format!("ozone has no operation {other}")),
        }
    }
}

impl OzoneClient {
    fn new(om: OmClient, retries: u32) -> Self {
        OzoneClient {
            om,
            retries,
            resend_after: Duration::ZERO,
            open: HashMap::new(),
            answered: HashMap::new(),
            keep_answered: false,
            last: None,
        }
    }

    /// Opens `file` in the FSO bucket and hsyncs `length` bytes (CommitKey with hsync: the file
    /// is visible at that length and stays open for this writer).
    async fn hsync(&mut self, file: &str, length: u64) -> Outcome {
        let open = match self
            .om
            .call(OmRequest::create_key(VOLUME, FILES, file, length))
            .await
        {
            Ok(r) if r.is_ok() => r,
            Ok(r) => return Outcome::Fail(format!("create: {}", describe(&r))),
            Err(e) => return error_outcome(&e),
        };
        let Some(id) = open.open_key_id else {
            return Outcome::Fail("create: no open key id".into());
        };
        self.open.insert(file.to_owned(), id);
        let result = self
            .om
            .call(OmRequest::hsync_key(VOLUME, FILES, file, length, id))
            .await;
        change_outcome(result, Value::from(length))
    }

    /// Closes a file this process hsync'd, at `length` (CommitKey without hsync).
    async fn close(&mut self, file: &str, length: u64) -> Outcome {
        let Some(&id) = self.open.get(file) else {
            return Outcome::Fail(format!("{file} is not open in this process"));
        };
        let result = self
            .om
            .call(OmRequest::commit_key(VOLUME, FILES, file, length, id))
            .await;
        let outcome = change_outcome(result, Value::from(length));
        if matches!(outcome, Outcome::Ok(_)) {
            self.open.remove(file);
        }
        outcome
    }

    /// Staging key of length `size` (no data: the OM records the length it is told), then one
    /// rename onto `key`: the only step that touches `key`, so only its outcome can be info.
    async fn create(&mut self, key: &str, size: u64, value: &Value) -> Outcome {
        let staging = format!("staging/{key}-{size}");
        let open = match self
            .om
            .call(OmRequest::create_key(VOLUME, BUCKET, &staging, size))
            .await
        {
            Ok(r) if r.is_ok() => r,
            Ok(r) => return Outcome::Fail(format!("staging create: {}", describe(&r))),
            Err(e) => return Outcome::Fail(format!("staging create: {e}")),
        };
        let Some(id) = open.open_key_id else {
            return Outcome::Fail("staging create: no open key id".into());
        };
        match self
            .om
            .call(OmRequest::commit_key(VOLUME, BUCKET, &staging, size, id))
            .await
        {
            Ok(r) if r.is_ok() => {}
            // key itself is untouched whatever happened to the staging key.
            Ok(r) => return Outcome::Fail(format!("staging commit: {}", describe(&r))),
            Err(e) => return Outcome::Fail(format!("staging commit: {e}")),
        }
        let (record, mut result) = self
            .om
            .call_recorded(OmRequest::rename_key(VOLUME, BUCKET, &staging, key))
            .await;
        let mut attempt = 1;
        while attempt <= self.retries && !answered(&result) {
            // Sent, and the answer never came: resend the very same call (client id, call id).
            tokio::time::sleep(self.resend_after).await;
            attempt += 1;
            result = self.resend(&record).await;
        }
        let note = if attempt > 1 {
            format!(" (answer to attempt {attempt} of call {})", record.call_id)
        } else {
            String::new()
        };
        self.last = Some(identity(&record));
        match result {
            Ok(r) if r.is_ok() => {
                if self.keep_answered {
                    self.answered.insert(key.to_owned(), record);
                }
                Outcome::Ok(value.clone())
            }
            Ok(r) if r.status == Status::KEY_ALREADY_EXISTS => {
                Outcome::Fail(format!("already exists{note}"))
            }
            Ok(r) if r.outcome() == ozone_rpc::Outcome::Info => Outcome::Info(describe(&r)),
            Ok(r) => Outcome::Fail(format!("{}{note}", describe(&r))),
            Err(e) => error_outcome(&e),
        }
    }
}

/// Whether the OM said whether the call took effect (an answer that is not `info`).
fn answered(result: &Result<OmResponse, OmError>) -> bool {
    match result {
        Ok(r) => r.outcome() != ozone_rpc::Outcome::Info,
        Err(e) => e.outcome() != ozone_rpc::Outcome::Info,
    }
}

/// How long one resend keeps looking for an OM that answers (the OMs may all be restarting).
const RESEND_PATIENCE: Duration = Duration::from_secs(120);

impl OzoneClient {
    /// One resend of a recorded call, byte for byte, to the OMs in turn (the last one that
    /// answered first) until one answers it or [`RESEND_PATIENCE`] runs out: a refused connect,
    /// "not the leader", or a connection an OM still starting drops after the call was sent is
    /// no answer (sending the same call again is what a retry is: the retry cache must make it
    /// harmless), so the resend waits out restarts and elections, as a Java client's failover
    /// does, and the first OM that answers decides.
    async fn resend(&mut self, record: &CallRecord) -> Result<OmResponse, OmError> {
        let deadline = tokio::time::Instant::now() + RESEND_PATIENCE;
        let mut order: Vec<SocketAddr> = self.om.nodes().iter().map(|n| n.addr).collect();
        let current = self.om.current();
        order.sort_by_key(|a| *a != current);
        let mut last = Err(OmError::NoNodes);
        loop {
            for &to in &order {
                let result = self.om.resend(record, to).await;
                // Every transport error and every "not the leader" is no answer yet.
                let keep_looking = result.is_err();
                if !keep_looking {
                    return result;
                }
                last = result;
            }
            if tokio::time::Instant::now() >= deadline {
                return last;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// One OM's Ratis indexes as its /prom page shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RatisIndexes {
    /// `ratis_state_machine_appliedIndex`: the last log index the OM state machine applied.
    pub applied: Option<u64>,
    /// `ratis_state_machine_applyCompletedIndex`.
    pub apply_completed: Option<u64>,
    /// `ratis_server_peerCommitIndex` for the OM itself (follower label = instance label).
    pub commit: Option<u64>,
    /// `ratis_state_machine_takeSnapshot_count`: snapshots this OM has taken since it started.
    /// /prom has no gauge of the last snapshot index in the sources read; that index is in the
    /// "taking snapshot" log line ([`snapshot_index`]).
    pub snapshots_taken: Option<u64>,
}

/// Parses Prometheus text (format 0.0.4) for one OM's Ratis indexes. `node` is the OM's Ratis
/// peer id (the OM node id, e.g. `om1`); samples of other instances are ignored.
pub fn parse_prom(text: &str, node: &str) -> RatisIndexes {
    let mut out = RatisIndexes::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, labels, value) = match line.find('{') {
            Some(open) => {
                let Some(close) = line.rfind('}') else {
                    continue;
                };
                (
                    &line[..open],
                    parse_labels(&line[open + 1..close]),
                    line[close + 1..].trim(),
                )
            }
            None => {
                let mut parts = line.splitn(2, char::is_whitespace);
                (
                    parts.next().unwrap_or_default(),
                    BTreeMap::new(),
                    parts.next().unwrap_or_default().trim(),
                )
            }
        };
        // The value, then an optional timestamp.
        let Some(number) = value
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        else {
            continue;
        };
        if !number.is_finite() || number < 0.0 {
            continue;
        }
        let number = number as u64;
        let instance = labels.get("instance").map(String::as_str);
        if instance.is_some_and(|i| i != node) {
            continue;
        }
        match name {
            "ratis_state_machine_appliedIndex" => out.applied = Some(number),
            "ratis_state_machine_applyCompletedIndex" => out.apply_completed = Some(number),
            "ratis_state_machine_takeSnapshot_count" => out.snapshots_taken = Some(number),
            "ratis_server_peerCommitIndex"
                if labels.get("follower").map(String::as_str) == Some(node) =>
            {
                out.commit = Some(number)
            }
            _ => {}
        }
    }
    out
}

/// `a="b",c="d",` (a trailing comma is what the Prometheus simpleclient writes).
fn parse_labels(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].trim().trim_start_matches(',').trim().to_string();
        let value_start = eq + 2;
        let mut value = String::new();
        let mut end = None;
        let mut chars = rest[value_start..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(match n {
                            'n' => '\n',
                            other => other,
                        });
                    }
                }
                '"' => {
                    end = Some(value_start + i + 1);
                    break;
                }
                c => value.push(c),
            }
        }
        out.insert(name, value);
        match end {
            Some(e) => rest = &rest[e..],
            None => break,
        }
    }
    out
}

/// Roles from `ozone admin om roles --json`: `[{"om1": {"serverRole": "LEADER", ...}}, ...]`.
/// LEADER is the leader; FOLLOWER the followers; other Ratis roles (CANDIDATE, LISTENER) and
/// anything unreadable are left out.
pub fn parse_roles(json_text: &str) -> BTreeMap<String, Role> {
    let Some(start) = json_text.find('[') else {
        return BTreeMap::new();
    };
    // The first JSON value; whatever the CLI prints after it (warnings) is ignored.
    let mut values = serde_json::Deserializer::from_str(&json_text[start..])
        .into_iter::<Vec<BTreeMap<String, Value>>>();
    let Some(Ok(list)) = values.next() else {
        return BTreeMap::new();
    };
    list.into_iter()
        .flatten()
        .filter_map(|(node, info)| {
            let role = match info.get("serverRole")?.as_str()? {
                "LEADER" => Role::Leader,
                "FOLLOWER" => Role::Follower,
                _ => return None,
            };
            Some((node, role))
        })
        .collect()
}

/// Command lines for Ozone's admin CLI, run in an OM container ([`Ozone::admin`]). Sources:
/// `hadoop-ozone/cli-admin/.../admin/om/` (`GetServiceRolesSubcommand`,
/// `TransferOmLeaderSubCommand` with `-n/--newLeaderId` or `-r/--random`, `PrepareSubCommand`,
/// `CancelPrepareSubCommand`), `.../admin/scm/container/CloseSubcommand`, and the Ratis shell
/// that Ozone embeds as `ozone ratis` (`snapshot create -peers ... -peerId ...`).
pub mod admin {
    use super::{OM_RATIS_PORT, SERVICE_ID};

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    pub fn roles() -> Vec<String> {
        words(&[
            "ozone",
            "admin",
            "om",
            "roles",
            "--service-id",
            SERVICE_ID,
            "--json",
        ])
    }

    /// Makes `om` the OM leader.
    pub fn transfer_leader(om: &str) -> Vec<String> {
        words(&[
            "ozone",
            "admin",
            "om",
            "transfer",
            "--service-id",
            SERVICE_ID,
            "-n",
            om,
        ])
    }

    /// Makes a follower picked by the OM the leader.
    pub fn transfer_leader_random() -> Vec<String> {
        words(&[
            "ozone",
            "admin",
            "om",
            "transfer",
            "--service-id",
            SERVICE_ID,
            "-r",
        ])
    }

    /// Asks `om` to take a Ratis snapshot now (then purge up to it, with small purge gaps).
    pub fn take_snapshot(oms: &[&str], om: &str) -> Vec<String> {
        let peers: Vec<String> = oms.iter().map(|o| format!("{o}:{OM_RATIS_PORT}")).collect();
        let mut w = words(&["ozone", "ratis", "snapshot", "create", "-peers"]);
        w.push(peers.join(","));
        w.extend(words(&["-peerId", om]));
        w
    }

    /// "SCM is out of safe mode." once it is (run where `ozone.scm.client.address` points).
    pub fn safemode_status() -> Vec<String> {
        words(&["ozone", "admin", "safemode", "status"])
    }

    /// One `Pipeline{ ... ReplicationConfig: RATIS/THREE, State:OPEN, ...}` line per pipeline.
    pub fn pipelines() -> Vec<String> {
        words(&["ozone", "admin", "pipeline", "list"])
    }

    pub fn close_container(id: u64) -> Vec<String> {
        let mut w = words(&["ozone", "admin", "container", "close"]);
        w.push(id.to_string());
        w
    }

    /// Closes every OPEN container: the ids from `ozone admin container list --state=OPEN`
    /// (JSON, a `"containerID" : n` field per container), one close each.
    pub fn close_open_containers() -> Vec<String> {
        words(&[
            "bash",
            "-c",
            "set -o pipefail; ozone admin container list --state=OPEN --count=10000 \
             | grep -o '\"containerID\" *: *[0-9]*' | grep -o '[0-9]*$' \
             | xargs -r -n1 ozone admin container close",
        ])
    }

    pub fn prepare() -> Vec<String> {
        words(&[
            "ozone",
            "admin",
            "om",
            "prepare",
            "--service-id",
            SERVICE_ID,
        ])
    }

    pub fn cancel_prepare() -> Vec<String> {
        words(&[
            "ozone",
            "admin",
            "om",
            "cancelprepare",
            "--service-id",
            SERVICE_ID,
        ])
    }
}

/// The scenario actions this adapter carries out with [`admin`] command lines.
pub const ADMIN_ACTIONS: &[Action] = &[
    Action::TransferLeader,
    Action::TakeSnapshot,
    Action::CloseContainer,
    Action::Prepare,
];

/// The command lines of an admin action on its resolved targets.
pub fn admin_commands(
    action: Action,
    targets: &[String],
    container: Option<ContainerRef>,
    oms: &[&str],
) -> Result<Vec<Vec<String>>, String> {
    let om_targets = || -> Result<Vec<&String>, String> {
        let bad: Vec<&String> = targets.iter().filter(|t| !is_om(t)).collect();
        if bad.is_empty() && !targets.is_empty() {
            Ok(targets.iter().collect())
        } else {
            Err(format!(
                "{action} needs Ozone Managers as targets, got {targets:?}"
            ))
        }
    };
    Ok(match action {
        Action::TransferLeader => match om_targets()?.as_slice() {
            [one] => vec![admin::transfer_leader(one)],
            _ => {
                return Err(format!(
                    "{action} needs exactly one target, got {targets:?}"
                ))
            }
        },
        Action::TakeSnapshot => om_targets()?
            .into_iter()
            .map(|om| admin::take_snapshot(oms, om))
            .collect(),
        Action::CloseContainer => match container.ok_or("close-container needs `container:`")? {
            ContainerRef::Id(id) => vec![admin::close_container(id)],
            ContainerRef::Open => vec![admin::close_open_containers()],
        },
        Action::Prepare => vec![admin::prepare()],
        other => return Err(format!("ozone has no admin action {other}")),
    })
}

/// A log line worth triggering on, with where its text comes from.
#[derive(Debug, Clone, Copy)]
pub struct NamedTrigger {
    pub name: &'static str,
    /// Which nodes print it (om, scm, datanode).
    pub printed_by: &'static str,
    pub regex: &'static str,
    /// The source of the format string and the version it was read in.
    pub source: &'static str,
}

/// The log lines Ozone scenarios trigger on. Each regex is tested on a line in
/// harness/tests/fixtures/ozone; the format strings were read in the Ozone 2.x line (the
/// `master` branch past 2.0, which 2.1.1 was cut from) and Ratis 3.x, which Ozone 2.x uses.
/// Scenarios copy these regexes into `on: { log: { regex } }` (a test checks they match).
pub const TRIGGERS: &[NamedTrigger] = &[
    NamedTrigger {
        name: "leader-change",
        printed_by: "om",
        regex: r"changes role from \w+ to LEADER at term \d+",
        source:
            "Ratis 3.x RaftServerImpl.setRole: \"{}: changes role from {} to {} at term {} for {}\"",
    },
    NamedTrigger {
        name: "install-snapshot-notified",
        printed_by: "om",
        regex: r"Received install snapshot notification from OM leader: \S+ with term index",
        source: "Ozone 2.x OzoneManagerStateMachine.notifyInstallSnapshotFromLeader",
    },
    NamedTrigger {
        name: "install-snapshot-in-progress",
        printed_by: "om",
        regex: r"Snapshot Installation by StateMachine is in progress",
        source: "Ratis 3.x SnapshotInstallationHandler (InstallSnapshotResult.IN_PROGRESS)",
    },
    NamedTrigger {
        name: "install-snapshot-finished",
        printed_by: "om",
        regex: r"Install Checkpoint is finished with Term: \d+ and Index: \d+",
        source: "Ozone 2.x OzoneManager.installCheckpoint",
    },
    NamedTrigger {
        name: "snapshot-taken",
        printed_by: "om",
        regex: r"taking snapshot\. applied = .*current snapshot index = \(t:\d+, i:\d+\)",
        source: "Ozone 2.x OzoneManagerStateMachine.takeSnapshotImpl",
    },
    NamedTrigger {
        name: "log-purged",
        printed_by: "om",
        regex: r"SegmentedRaftLog: purge \d+",
        source: "Ratis 3.x RaftLogBase.purge: \"{}: purge {}\"",
    },
    NamedTrigger {
        name: "container-closed",
        printed_by: "datanode",
        regex: r"ContainerLog \| ID=\d+ \|.*\| State=CLOSED \|",
        source: "Ozone 2.2.0 datanode container log (ContainerLogger, dn-container-log4j2): \
                 recorded live; 2.2.0 prints no \"Container N is closed with bcsId\" line",
    },
    NamedTrigger {
        name: "put-block-failed",
        printed_by: "datanode audit log (a file, tailed into the output by the compose profile)",
        regex: r"op=PUT_BLOCK .*\| ret=FAILURE",
        source: "Ozone 2.x datanode audit (AuditMessage, dn-audit-log4j2.properties)",
    },
];

pub fn trigger(name: &str) -> Option<&'static NamedTrigger> {
    TRIGGERS.iter().find(|t| t.name == name)
}

/// The index of a "taking snapshot" line (`current snapshot index = (t:2, i:1500)`).
pub fn snapshot_index(line: &str) -> Option<u64> {
    let rest = &line[line.find("current snapshot index = (t:")?..];
    let i = rest.find(", i:")? + 4;
    let end = rest[i..].find(')')? + i;
    rest[i..end].trim().parse().ok()
}

/// Term and index of an "Install Checkpoint is finished" line.
pub fn installed_checkpoint(line: &str) -> Option<(u64, u64)> {
    let rest = &line[line.find("Install Checkpoint is finished with Term: ")? + 42..];
    let (term, rest) = rest.split_once(" and Index: ")?;
    let index = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    Some((term.trim().parse().ok()?, index.parse().ok()?))
}

/// What a scenario can assert about the OMs' indexes: the lowest applied index over the OMs that
/// answered, and those whose applied index is more than `bound` behind the highest.
pub fn lagging(indexes: &BTreeMap<String, RatisIndexes>, bound: u64) -> Vec<(String, u64, u64)> {
    let top = indexes
        .values()
        .filter_map(|i| i.applied)
        .max()
        .unwrap_or(0);
    indexes
        .iter()
        .filter_map(|(n, i)| {
            let a = i.applied?;
            (top.saturating_sub(a) > bound).then(|| (n.clone(), a, top))
        })
        .collect()
}

/// The figures of a probe as JSON, for faults.jsonl and result.json.
pub fn indexes_json(indexes: &BTreeMap<String, RatisIndexes>) -> Value {
    json!(indexes)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded from live Ozone 2.2.0 (harness/tests/fixtures/ozone/README.md).
    const LEADER: &str = include_str!("../../tests/fixtures/ozone/om3-leader.prom");
    const FOLLOWER: &str = include_str!("../../tests/fixtures/ozone/om1-follower.prom");
    const ROLES: &str = include_str!("../../tests/fixtures/ozone/roles.json");
    const OM_LIVE_LOG: &str = include_str!("../../tests/fixtures/ozone/om-2.2.0.log");
    // Written to the format strings, not yet met live.
    const OM_LOG: &str = include_str!("../../tests/fixtures/ozone/om.log");
    const DN_LOG: &str = include_str!("../../tests/fixtures/ozone/dn-2.2.0.log");
    const DN_AUDIT: &str = include_str!("../../tests/fixtures/ozone/dn-audit.log");

    #[test]
    fn prom_of_the_leader_gives_its_own_indexes() {
        let i = parse_prom(LEADER, "om3");
        assert_eq!(i.applied, Some(623));
        assert_eq!(i.apply_completed, Some(623));
        // Its own commit index, not a follower's (om2 is at 621 in the leader's view).
        assert_eq!(i.commit, Some(623));
        assert_eq!(i.snapshots_taken, Some(0));
    }

    #[test]
    fn prom_of_a_follower() {
        let i = parse_prom(FOLLOWER, "om1");
        assert_eq!((i.applied, i.commit), (Some(616), Some(613)));
        assert_eq!(i.snapshots_taken, Some(0));
        // Samples of another instance say nothing about this one.
        assert_eq!(parse_prom(FOLLOWER, "om3"), RatisIndexes::default());
        let probe = BTreeMap::from([
            ("om3".to_string(), parse_prom(LEADER, "om3")),
            ("om1".to_string(), parse_prom(FOLLOWER, "om1")),
        ]);
        assert_eq!(lagging(&probe, 5), vec![("om1".to_string(), 616, 623)]);
        assert!(lagging(&probe, 10).is_empty());
        assert_eq!(indexes_json(&probe)["om1"]["applied"], 616);
    }

    #[test]
    fn prom_parsing_survives_odd_input() {
        let text = "ratis_state_machine_appliedIndex{instance=\"om2\",note=\"a \\\"b\\\" }\",} 7.0 1700000000\n\
                    ratis_state_machine_appliedIndex NaN\nbroken{ 3\n\n# comment\n";
        assert_eq!(parse_prom(text, "om2").applied, Some(7));
        assert_eq!(parse_prom("", "om1"), RatisIndexes::default());
        // Without labels (a single-OM exporter), the sample counts for any node.
        assert_eq!(
            parse_prom("ratis_state_machine_appliedIndex 12\n", "om1").applied,
            Some(12)
        );
    }

    #[test]
    fn roles_from_the_admin_cli() {
        let roles = parse_roles(ROLES);
        assert_eq!(roles.len(), 3);
        assert_eq!(roles["om3"], Role::Leader);
        assert_eq!(roles["om1"], Role::Follower);
        assert_eq!(roles["om2"], Role::Follower);
        // Log noise before the JSON, a candidate, and garbage.
        let noisy = "WARN something\n[ {\"om1\": {\"serverRole\": \"CANDIDATE\", \"hostname\": \"om1\"}}, {\"om2\": {\"serverRole\": \"LEADER\"}} ]";
        assert_eq!(
            parse_roles(noisy),
            BTreeMap::from([("om2".to_string(), Role::Leader)])
        );
        assert!(parse_roles("om1 : LEADER (om1)").is_empty());
    }

    #[test]
    fn admin_command_lines() {
        let line = |w: Vec<String>| w.join(" ");
        assert_eq!(
            line(admin::roles()),
            "ozone admin om roles --service-id omservice --json"
        );
        assert_eq!(
            line(admin::transfer_leader("om2")),
            "ozone admin om transfer --service-id omservice -n om2"
        );
        assert_eq!(
            line(admin::transfer_leader_random()),
            "ozone admin om transfer --service-id omservice -r"
        );
        assert_eq!(
            line(admin::take_snapshot(&["om1", "om2", "om3"], "om2")),
            "ozone ratis snapshot create -peers om1:9872,om2:9872,om3:9872 -peerId om2"
        );
        assert_eq!(
            line(admin::close_container(5)),
            "ozone admin container close 5"
        );
        assert_eq!(
            line(admin::prepare()),
            "ozone admin om prepare --service-id omservice"
        );
        assert_eq!(
            line(admin::cancel_prepare()),
            "ozone admin om cancelprepare --service-id omservice"
        );
    }

    #[test]
    fn admin_actions_become_command_lines() {
        let oms = ["om1", "om2", "om3"];
        let t = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let lines = |r: Result<Vec<Vec<String>>, String>| {
            r.unwrap().iter().map(|w| w.join(" ")).collect::<Vec<_>>()
        };
        assert_eq!(
            lines(admin_commands(
                Action::TransferLeader,
                &t(&["om2"]),
                None,
                &oms
            )),
            ["ozone admin om transfer --service-id omservice -n om2"]
        );
        assert_eq!(
            lines(admin_commands(
                Action::TakeSnapshot,
                &t(&["om1", "om3"]),
                None,
                &oms
            ))
            .len(),
            2
        );
        assert_eq!(
            lines(admin_commands(
                Action::CloseContainer,
                &[],
                Some(ContainerRef::Id(1)),
                &oms
            )),
            ["ozone admin container close 1"]
        );
        assert_eq!(
            lines(admin_commands(Action::Prepare, &t(&["om1"]), None, &oms)),
            ["ozone admin om prepare --service-id omservice"]
        );
        assert!(admin_commands(Action::TransferLeader, &t(&["om1", "om2"]), None, &oms).is_err());
        assert!(admin_commands(Action::TransferLeader, &t(&["dn1"]), None, &oms).is_err());
        assert!(admin_commands(Action::CloseContainer, &[], None, &oms).is_err());
        assert!(admin_commands(Action::Pause, &[], None, &oms).is_err());
    }

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

    /// The leader-change trigger matches the lines live OMs printed when they won an election.
    #[test]
    fn leader_change_matches_live_lines() {
        let re = regex::Regex::new(trigger("leader-change").unwrap().regex).unwrap();
        let hits: Vec<&str> = OM_LIVE_LOG.lines().filter(|l| re.is_match(l)).collect();
        assert_eq!(hits.len(), 2, "{OM_LIVE_LOG}");
        assert!(hits[1]
            .contains("om3@group-D66704EFC61C: changes role from CANDIDATE to LEADER at term 2"));
    }

    /// Every named trigger matches its recorded line, and no other recorded line.
    #[test]
    fn triggers_match_their_recorded_lines() {
        let lines: Vec<&str> = OM_LOG
            .lines()
            .chain(DN_LOG.lines())
            .chain(DN_AUDIT.lines())
            .collect();
        let expect = [
            ("leader-change", 1usize, "CANDIDATE to LEADER at term 2"),
            ("install-snapshot-notified", 1, "from OM leader: om1"),
            ("install-snapshot-in-progress", 1, "om3@group"),
            ("install-snapshot-finished", 1, "Index: 1523"),
            ("snapshot-taken", 1, "i:1500), took"),
            ("log-purged", 1, "purge 1500"),
            ("container-closed", 1, "ID=1 | Index=0 | BCSID=2"),
            ("put-block-failed", 1, "bcsId: 0"),
        ];
        assert_eq!(expect.len(), TRIGGERS.len());
        for (name, count, witness) in expect {
            let t = trigger(name).unwrap_or_else(|| panic!("no trigger {name}"));
            let re = regex::Regex::new(t.regex).unwrap();
            let hits: Vec<&&str> = lines.iter().filter(|l| re.is_match(l)).collect();
            assert_eq!(hits.len(), count, "{name}: {hits:?}");
            assert!(hits[0].contains(witness), "{name}: {}", hits[0]);
            assert!(!t.source.is_empty());
        }
    }

    #[test]
    fn indexes_from_log_lines() {
        let taken = OM_LOG
            .lines()
            .find(|l| l.contains("taking snapshot"))
            .unwrap();
        assert_eq!(snapshot_index(taken), Some(1500));
        let done = OM_LOG
            .lines()
            .find(|l| l.contains("Install Checkpoint"))
            .unwrap();
        assert_eq!(installed_checkpoint(done), Some((2, 1523)));
        assert_eq!(snapshot_index("nothing"), None);
        assert_eq!(
            installed_checkpoint("Install Checkpoint is finished with Term: x"),
            None
        );
    }

    /// A fake OM on loopback with keys, open keys and a retry cache keyed by (client id, call
    /// id), as Ozone's: it can apply the next rename and drop its answer (a lost reply), and
    /// "restart" (forget its retry cache), which is the bug retry-after-restart looks for.
    mod fake {
        use std::collections::HashMap;
        use std::net::SocketAddr;
        use std::sync::{Arc, Mutex};

        use ozone_rpc::io::{read_frame, read_preamble};
        use ozone_rpc::om::{KeyInfo, OmRequestBody};
        use ozone_rpc::rpc::{self, RpcResponseHeader};
        use ozone_rpc::{CmdType, OmRequest, OmResponse, Status};
        use tokio::io::AsyncWriteExt;

        #[derive(Default)]
        pub struct State {
            pub keys: HashMap<String, u64>,
            /// Files of the FSO bucket: length, the writer's id while open (hsync'd), and
            /// whether lease recovery began.
            pub files: HashMap<String, (u64, Option<u64>, bool)>,
            /// Whether the soft limit of every open file has passed (as an OM whose clock
            /// says so decides).
            pub past_soft_limit: bool,
            open: HashMap<u64, (String, u64)>,
            next_id: u64,
            cache: HashMap<(Vec<u8>, i32), OmResponse>,
            pub lose_next_rename_reply: bool,
            pub restart_after_lost_reply: bool,
            pub renames_applied: usize,
        }

        impl State {
            /// What a restart of every OM does to the retry cache: it is gone.
            pub fn restart(&mut self) {
                self.cache.clear();
            }
        }

        fn apply(st: &mut State, req: &OmRequest) -> OmResponse {
            let r = |cmd, status| OmResponse::new(cmd, status);
            match &req.body {
                OmRequestBody::CreateKey { args } => {
                    st.next_id += 1;
                    let id = st.next_id;
                    st.open
                        .insert(id, (args.key.clone(), args.data_size.unwrap_or(0)));
                    let mut resp = r(CmdType::CREATE_KEY, Status::OK);
                    resp.open_key_id = Some(id);
                    resp
                }
                OmRequestBody::CommitKey {
                    args,
                    open_key_id,
                    hsync,
                } if args.bucket == super::FILES => {
                    let len = args.data_size.unwrap_or(0);
                    if let Some((_, _, true)) = st.files.get(&args.key) {
                        return r(CmdType::COMMIT_KEY, Status::KEY_UNDER_LEASE_RECOVERY);
                    }
                    if !st.open.contains_key(open_key_id) {
                        return r(CmdType::COMMIT_KEY, Status::KEY_NOT_FOUND);
                    }
                    if !*hsync {
                        st.open.remove(open_key_id);
                    }
                    let writer = hsync.then_some(*open_key_id);
                    st.files.insert(args.key.clone(), (len, writer, false));
                    r(CmdType::COMMIT_KEY, Status::OK)
                }
                OmRequestBody::CommitKey {
                    args, open_key_id, ..
                } => match st.open.remove(open_key_id) {
                    Some((key, _)) => {
                        st.keys.insert(key, args.data_size.unwrap_or(0));
                        r(CmdType::COMMIT_KEY, Status::OK)
                    }
                    None => r(CmdType::COMMIT_KEY, Status::KEY_NOT_FOUND),
                },
                OmRequestBody::RecoverLease { key, .. } => {
                    let past = st.past_soft_limit;
                    match st.files.get_mut(key) {
                        None => r(CmdType::RECOVER_LEASE, Status::KEY_NOT_FOUND),
                        Some((_, None, _)) => r(CmdType::RECOVER_LEASE, Status::KEY_ALREADY_CLOSED),
                        Some(_) if !past => r(
                            CmdType::RECOVER_LEASE,
                            Status::KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD,
                        ),
                        Some((_, Some(_), recovering)) => {
                            *recovering = true;
                            r(CmdType::RECOVER_LEASE, Status::OK)
                        }
                    }
                }
                OmRequestBody::LookupKey { args } if args.bucket == super::FILES => {
                    match st.files.get(&args.key) {
                        Some((len, writer, _)) => {
                            let mut resp = r(CmdType::LOOKUP_KEY, Status::OK);
                            resp.key_info = Some(KeyInfo {
                                key: args.key.clone(),
                                data_size: *len,
                                metadata: writer
                                    .map(|w| (ozone_rpc::HSYNC_CLIENT_ID.into(), w.to_string()))
                                    .into_iter()
                                    .collect(),
                                ..Default::default()
                            });
                            resp
                        }
                        None => r(CmdType::LOOKUP_KEY, Status::KEY_NOT_FOUND),
                    }
                }
                OmRequestBody::RenameKey { args, to_key } => {
                    if st.keys.contains_key(to_key) {
                        return r(CmdType::RENAME_KEY, Status::KEY_ALREADY_EXISTS);
                    }
                    let Some(len) = st.keys.remove(&args.key) else {
                        return r(CmdType::RENAME_KEY, Status::KEY_NOT_FOUND);
                    };
                    st.keys.insert(to_key.clone(), len);
                    st.renames_applied += 1;
                    r(CmdType::RENAME_KEY, Status::OK)
                }
                OmRequestBody::LookupKey { args } => match st.keys.get(&args.key) {
                    Some(len) => {
                        let mut resp = r(CmdType::LOOKUP_KEY, Status::OK);
                        resp.key_info = Some(KeyInfo {
                            key: args.key.clone(),
                            data_size: *len,
                            ..Default::default()
                        });
                        resp
                    }
                    None => r(CmdType::LOOKUP_KEY, Status::KEY_NOT_FOUND),
                },
                _ => r(req.cmd_type(), Status::OK),
            }
        }

        pub async fn spawn(state: Arc<Mutex<State>>) -> SocketAddr {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                while let Ok((mut stream, _)) = listener.accept().await {
                    let state = state.clone();
                    tokio::spawn(async move {
                        if read_preamble(&mut stream).await.is_err()
                            || read_frame(&mut stream).await.is_err()
                        {
                            return;
                        }
                        while let Ok(body) = read_frame(&mut stream).await {
                            let call = rpc::decode_request(&body).unwrap();
                            let req = OmRequest::decode(&call.payload).unwrap();
                            let h = call.header.clone();
                            let (resp, lose) = {
                                let mut st = state.lock().unwrap();
                                let id = (h.client_id.clone(), h.call_id);
                                if let Some(cached) = st.cache.get(&id) {
                                    (cached.clone(), false)
                                } else {
                                    let resp = apply(&mut st, &req);
                                    st.cache.insert(id, resp.clone());
                                    let lose = req.cmd_type() == CmdType::RENAME_KEY
                                        && std::mem::take(&mut st.lose_next_rename_reply);
                                    if lose && st.restart_after_lost_reply {
                                        st.cache.clear();
                                    }
                                    (resp, lose)
                                }
                            };
                            if lose {
                                return; // applied, answer lost: the connection closes
                            }
                            let header =
                                RpcResponseHeader::success(h.call_id, &h.client_id, h.retry_count);
                            let frame = rpc::response_frame(&header, Some(&resp.encode()));
                            if stream.write_all(&frame).await.is_err() {
                                return;
                            }
                        }
                    });
                }
            });
            addr
        }
    }

    async fn client_of(state: &Arc<std::sync::Mutex<fake::State>>, retries: u32) -> OzoneClient {
        let addr = fake::spawn(state.clone()).await;
        OzoneClient::new(OmClient::connect(vec![addr], "hadoop"), retries)
    }

    fn cas(key: &str, v: u64) -> Operation {
        Operation {
            f: "cas",
            key: key.into(),
            value: json!([null, v]),
        }
    }

    #[tokio::test]
    async fn create_is_a_rename_onto_the_key_and_reads_its_length() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut c = client_of(&state, 0).await;
        assert!(matches!(c.invoke(&cas("c1", 7)).await, Outcome::Ok(v) if v == json!([null, 7])));
        match c.invoke(&cas("c1", 8)).await {
            Outcome::Fail(why) => assert_eq!(why, "already exists"),
            other => panic!("{other:?}"),
        }
        let read = |key: &str| Operation {
            f: "read",
            key: key.into(),
            value: Value::Null,
        };
        assert!(matches!(c.invoke(&read("c1")).await, Outcome::Ok(v) if v == json!(7)));
        assert!(matches!(
            c.invoke(&read("c2")).await,
            Outcome::Ok(Value::Null)
        ));
        assert_eq!(state.lock().unwrap().keys.get("c1"), Some(&7));
    }

    /// A lost answer is resent byte for byte; an OM with its retry cache answers OK.
    #[tokio::test]
    async fn a_resend_after_a_lost_reply_is_answered_from_the_retry_cache() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        state.lock().unwrap().lose_next_rename_reply = true;
        let mut c = client_of(&state, 1).await;
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Ok(_)));
        assert_eq!(state.lock().unwrap().renames_applied, 1);
    }

    /// The bug: the retry cache is gone (every OM restarted), the resend is executed again and
    /// answers KEY_ALREADY_EXISTS for the rename its first attempt applied.
    #[tokio::test]
    async fn a_resend_after_a_restart_without_the_retry_cache_fails() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        {
            let mut st = state.lock().unwrap();
            st.lose_next_rename_reply = true;
            st.restart_after_lost_reply = true;
        }
        let mut c = client_of(&state, 1).await;
        match c.invoke(&cas("c1", 3)).await {
            Outcome::Fail(why) => {
                assert!(
                    why.starts_with("already exists (answer to attempt 2 of call"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
        // ...although the key holds the value: a read of 3 after a failed create of 3.
        assert_eq!(state.lock().unwrap().keys.get("c1"), Some(&3));
    }

    /// With resend-after, the resend comes that much later (a scenario restarts every OM in
    /// between); here the fake keeps its retry cache, so the late resend is answered OK.
    #[tokio::test]
    async fn a_resend_waits_resend_after() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        state.lock().unwrap().lose_next_rename_reply = true;
        let mut c = client_of(&state, 1).await;
        c.resend_after = Duration::from_millis(300);
        let start = std::time::Instant::now();
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Ok(_)));
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert_eq!(state.lock().unwrap().renames_applied, 1);
    }

    /// duplicate-after: the rename that created a key, answered OK, is sent again byte for
    /// byte; an OM with its retry cache answers it OK again, an OM that lost it (every OM
    /// restarted) executes it again: KEY_ALREADY_EXISTS. Both carry the rename's identity.
    #[tokio::test]
    async fn a_duplicate_of_an_answered_rename() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut c = client_of(&state, 0).await;
        c.keep_answered = true;
        let resend = |key: &str, v: u64| Operation {
            f: "resend",
            key: key.into(),
            value: json!([null, v]),
        };
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Ok(_)));
        let first = c.last_call().unwrap();
        assert!(matches!(c.invoke(&cas("c2", 4)).await, Outcome::Ok(_)));
        let second = c.last_call().unwrap();
        assert_eq!(first.0, second.0, "one client id");
        assert_ne!(first.1, second.1, "a call id each");
        // Answered from the retry cache: the same answer, the same identity.
        let again = c.invoke(&resend("c1", 3)).await;
        assert!(
            matches!(&again, Outcome::Ok(v) if *v == json!([null, 3])),
            "{again:?}"
        );
        assert_eq!(c.last_call(), Some(first));
        // After a restart of every OM the cache is gone: the rename runs again and fails.
        state.lock().unwrap().restart();
        match c.invoke(&resend("c2", 4)).await {
            Outcome::Fail(why) => assert!(why.starts_with("already exists (call "), "{why}"),
            o => panic!("{o:?}"),
        }
        assert_eq!(c.last_call(), Some(second));
        assert_eq!(state.lock().unwrap().renames_applied, 2);
        // A key this client did not create cannot be sent again; reads carry no identity.
        assert!(matches!(c.invoke(&resend("c9", 1)).await, Outcome::Fail(_)));
        let read = Operation {
            f: "read",
            key: "c1".into(),
            value: Value::Null,
        };
        c.invoke(&read).await;
        assert_eq!(c.last_call(), None);
    }

    /// Without retries, a lost answer is an unknown outcome.
    #[tokio::test]
    async fn a_lost_reply_without_retries_is_info() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        state.lock().unwrap().lose_next_rename_reply = true;
        let mut c = client_of(&state, 0).await;
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Info(_)));
    }

    fn file_op(f: &'static str, file: &str, value: Value) -> Operation {
        Operation {
            f,
            key: file.into(),
            value,
        }
    }

    /// The lease workload's steps on an OM that decides inside the soft limit: the
    /// recoverLease is refused, the close succeeds, the final read sees the closed length.
    #[tokio::test]
    async fn hsync_refused_recovery_then_close() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut writer = client_of(&state, 0).await;
        let mut other = client_of(&state, 0).await;
        let hsync = writer.invoke(&file_op("hsync", "f0", json!(1024))).await;
        assert!(
            matches!(&hsync, Outcome::Ok(v) if *v == json!(1024)),
            "{hsync:?}"
        );
        assert_eq!(state.lock().unwrap().files["f0"].0, 1024);
        // While open, the final state is "nothing closed".
        let read = other
            .invoke(&file_op("final-read", "f0", Value::Null))
            .await;
        assert!(
            matches!(&read, Outcome::Ok(v) if *v == json!([])),
            "{read:?}"
        );
        match other
            .invoke(&file_op("recover-lease", "f0", Value::Null))
            .await
        {
            Outcome::Fail(why) => assert!(
                why.starts_with("KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD"),
                "{why}"
            ),
            o => panic!("{o:?}"),
        }
        let close = writer.invoke(&file_op("close", "f0", json!(2048))).await;
        assert!(
            matches!(&close, Outcome::Ok(v) if *v == json!(2048)),
            "{close:?}"
        );
        let read = other
            .invoke(&file_op("final-read", "f0", Value::Null))
            .await;
        assert!(
            matches!(&read, Outcome::Ok(v) if *v == json!([2048])),
            "{read:?}"
        );
        // Only the writer holds the file open.
        assert!(matches!(
            other.invoke(&file_op("close", "f0", json!(1))).await,
            Outcome::Fail(_)
        ));
    }

    /// On an OM that applied the recoverLease past the soft limit (the late follower of
    /// recover-lease-divergence), recovery begins and the writer's close is refused: the file
    /// stays open at its hsync'd length.
    #[tokio::test]
    async fn recovery_past_the_soft_limit_refuses_the_close() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut writer = client_of(&state, 0).await;
        let mut other = client_of(&state, 0).await;
        assert!(matches!(
            writer.invoke(&file_op("hsync", "f0", json!(1024))).await,
            Outcome::Ok(_)
        ));
        state.lock().unwrap().past_soft_limit = true;
        assert!(matches!(
            other
                .invoke(&file_op("recover-lease", "f0", Value::Null))
                .await,
            Outcome::Ok(_)
        ));
        match writer.invoke(&file_op("close", "f0", json!(2048))).await {
            Outcome::Fail(why) => assert!(why.starts_with("KEY_UNDER_LEASE_RECOVERY"), "{why}"),
            o => panic!("{o:?}"),
        }
        let mut om = OmClient::connect(vec![fake::spawn(state.clone()).await], "hadoop");
        let looked = om.call(OmRequest::lookup_key(VOLUME, FILES, "f0")).await;
        assert_eq!(
            lookup_answer(&looked),
            json!({"length": 1024, "open": true})
        );
        let absent = om.call(OmRequest::lookup_key(VOLUME, FILES, "f9")).await;
        assert_eq!(lookup_answer(&absent), json!("absent"));
    }

    #[test]
    fn stream_reads_become_durable_values() {
        assert_eq!(stream_read_value("absent\n"), Some(json!([])));
        assert_eq!(
            stream_read_value("log line\n8388608\n"),
            Some(json!([8388608]))
        );
        assert_eq!(
            stream_read_value("4096 corrupt\n"),
            Some(json!(["4096 bytes, not the pattern"]))
        );
        assert_eq!(stream_read_value(""), None);
        assert_eq!(stream_read_value("Exception in thread main"), None);
    }

    /// The stream workload's shell scripts, run by bash with a stand-in `ozone` on PATH that
    /// keeps keys as files (this tests the scripts' pattern, comparison and answers, not Ozone).
    #[test]
    fn the_stream_scripts_tell_whole_short_corrupt_and_absent() {
        let dir = std::env::temp_dir().join(format!("chaos-stream-{}", std::process::id()));
        let (bin, store) = (dir.join("bin"), dir.join("store"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&store).unwrap();
        let fake = bin.join("ozone");
        std::fs::write(
            &fake,
            "#!/bin/bash\n\
             # ozone sh key put --stream URI FILE | ozone sh key get URI FILE\n\
             case \"$3\" in\n\
               put) cp \"$6\" \"$FAKE_STORE/${5##*/}\" ;;\n\
               get) [ -f \"$FAKE_STORE/${4##*/}\" ] || { echo 'KEY_NOT_FOUND Key not found' >&2; exit 1; }\n\
                    cp \"$FAKE_STORE/${4##*/}\" \"$5\" ;;\n\
             esac\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = |script: &str, args: &[&str]| {
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(script)
                .arg("chaos")
                .args(args)
                .env(
                    "PATH",
                    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
                )
                .env("FAKE_STORE", &store)
                .output()
                .unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).to_string(),
            )
        };
        assert_eq!(run(STREAM_PUT, &["s1", "1000"]).0, Some(0));
        let written = std::fs::read(store.join("s1")).unwrap();
        assert_eq!(written.len(), 1000);
        assert!(written.starts_with(b"s1\ns1\n"));
        let read = |key: &str| stream_read_value(&run(STREAM_READ, &[key]).1);
        assert_eq!(read("s1"), Some(json!([1000])));
        assert_eq!(read("s2"), Some(json!([])));
        // A key that reads back short shows its length; one with other bytes is corrupt.
        std::fs::write(store.join("s1"), &written[..600]).unwrap();
        assert_eq!(read("s1"), Some(json!([600])));
        std::fs::write(store.join("s1"), vec![0u8; 1000]).unwrap();
        assert_eq!(read("s1"), Some(json!(["1000 bytes, not the pattern"])));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn close_container_takes_an_id_or_open() {
        let oms = ["om1", "om2", "om3"];
        let open =
            admin_commands(Action::CloseContainer, &[], Some(ContainerRef::Open), &oms).unwrap();
        assert_eq!(open.len(), 1);
        assert!(open[0][2].contains("ozone admin container list --state=OPEN"));
        assert!(open[0][2].contains("xargs -r -n1 ozone admin container close"));
        let parse = |text: &str| serde_saphyr::from_str::<ContainerRef>(text);
        assert_eq!(parse("open").unwrap(), ContainerRef::Open);
        assert_eq!(parse("7").unwrap(), ContainerRef::Id(7));
        assert!(parse("closed").is_err());
    }

    #[test]
    fn om_nodes_are_named_om_and_a_number() {
        assert!(is_om("om1") && is_om("om12"));
        assert!(!is_om("om") && !is_om("omx") && !is_om("scm") && !is_om("dn1"));
    }
}
