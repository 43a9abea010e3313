//! System adapters: one module per system that knows how to talk to it (client operations, roles,
//! ports). Everything else in the harness is system-agnostic.

pub mod etcd;
pub mod garage;
pub mod ozone;
pub mod prefixed;
pub mod redis;
pub mod s3;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::cluster::Cluster;
// What a client is asked and how it answered are the recorder's words (history.jsonl's).
pub use crate::recorder::{Operation, Outcome};
use crate::scenario::{ReadConsistency, Role, S3Spec, Scenario, WorkloadKind};

/// What the scenario validator needs to know about a system before anything starts.
pub struct SystemInfo {
    pub name: &'static str,
    pub workloads: &'static [WorkloadKind],
    pub has_roles: bool,
    /// How long its nodes may take to become healthy, unless `--ready-timeout` says otherwise
    /// (eight JVMs starting on two cores take longer than three etcd processes).
    pub ready_within: Duration,
    pub make: fn(&Cluster, &AdapterSettings) -> Box<dyn SystemAdapter>,
    /// The admin faults (`Mechanism::Admin`) its adapter carries out, by name.
    pub admin_actions: &'static [&'static str],
    /// Whether its adapter talks S3 and reads the scenario's `s3:` section.
    pub speaks_s3: bool,
    /// Whether its adapter answers `applied_indexes` (the `converge` check needs it).
    pub applied_index: bool,
    /// Whether its adapter reads a node's metrics page (`reached:` probes of a `metric:`).
    pub metrics: bool,
    /// The command that, run alone in a node's image with no site settings, exits 0 when the
    /// build defines a configuration key and names it missing otherwise (`reached:` predicates
    /// of kind `config:`, asked before the cluster starts).
    pub config_query: Option<fn(&str) -> Vec<String>>,
    /// The profile `--scm-ha` plays a scenario on instead of its own (ozone -> ozone-scm-ha).
    pub scm_ha_profile: Option<fn(&str) -> String>,
    /// What `chaos run` says up front about a system whose adapter has not met everything live.
    pub caveat: Option<&'static str>,
}

impl SystemInfo {
    /// The capabilities most systems have: none of the optional ones.
    pub const PLAIN: SystemInfo = SystemInfo {
        name: "",
        workloads: &[],
        has_roles: false,
        ready_within: Duration::from_secs(120),
        make: |_, _| unreachable!("PLAIN is only a template for the optional capabilities"),
        admin_actions: &[],
        speaks_s3: false,
        applied_index: false,
        metrics: false,
        config_query: None,
        scm_ha_profile: None,
        caveat: None,
    };
}

pub const SYSTEMS: &[SystemInfo] = &[etcd::INFO, redis::INFO, s3::INFO, garage::INFO, ozone::INFO];

pub fn lookup(name: &str) -> Option<&'static SystemInfo> {
    SYSTEMS.iter().find(|s| s.name == name)
}

/// The admin actions a system's adapter carries out (checked before anything starts).
pub fn admin_actions(system: &str) -> &'static [&'static str] {
    lookup(system).map_or(&[], |s| s.admin_actions)
}

/// The systems whose adapters talk S3 and read the scenario's `s3:` section.
pub fn s3_systems() -> Vec<&'static str> {
    SYSTEMS
        .iter()
        .filter(|s| s.speaks_s3)
        .map(|s| s.name)
        .collect()
}

pub fn speaks_s3(system: &str) -> bool {
    lookup(system).is_some_and(|s| s.speaks_s3)
}

/// Whether a system's adapter answers `applied_indexes` (the `converge` check needs it).
pub fn has_applied_index(system: &str) -> bool {
    lookup(system).is_some_and(|s| s.applied_index)
}

/// The profile `--scm-ha` plays a scenario of this system on instead of the scenario's own:
/// ozone's three-SCM variant (`ozone` -> `ozone-scm-ha`). None: the system has no SCM.
pub fn scm_ha_profile(system: &str, profile: &str) -> Option<String> {
    lookup(system)
        .and_then(|s| s.scm_ha_profile)
        .map(|variant| variant(profile))
}

/// What `chaos run` says up front about a system whose adapter has not met a live cluster yet.
pub fn caveat(system: &str) -> Option<&'static str> {
    lookup(system).and_then(|s| s.caveat)
}

/// Node -> URL of its client port as the harness reaches it (through the proxy if there is one),
/// for the nodes that publish that port: `client_urls(cluster, 2379, |a| format!("http://{a}"))`.
pub fn client_urls(
    cluster: &Cluster,
    port: u16,
    url: impl Fn(std::net::SocketAddr) -> String,
) -> BTreeMap<String, String> {
    cluster
        .names()
        .into_iter()
        .filter_map(|n| Some((n.clone(), url(cluster.endpoint(&n, port)?))))
        .collect()
}

/// Asks every node at once, each for at most `patience`; a node that does not answer in time
/// (paused, partitioned, down) or answers `None` is left out. Roles and index probes.
pub async fn ask_each<'a, T, Fut>(
    nodes: impl IntoIterator<Item = &'a String>,
    patience: Duration,
    ask: impl Fn(&'a String) -> Fut,
) -> Vec<(String, T)>
where
    Fut: std::future::Future<Output = Option<T>>,
{
    let asks = nodes.into_iter().map(|node| {
        let answer = tokio::time::timeout(patience, ask(node));
        async move { Some((node.clone(), answer.await.ok()??)) }
    });
    futures_util::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Asks again every `every` until the answer is `Ok` or `deadline` has passed, and returns the
/// last answer: readiness waits, "until the roles say so", a CLI that must succeed.
pub async fn ask_until<T, E, Fut>(
    deadline: Instant,
    every: Duration,
    mut ask: impl FnMut() -> Fut,
) -> Result<T, E>
where
    Fut: std::future::Future<Output = Result<T, E>>,
{
    loop {
        match ask().await {
            Ok(answer) => return Ok(answer),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => tokio::time::sleep(every).await,
        }
    }
}

/// A client's retry: the very same call sent again while its answer is unknown, at most
/// `retries` more times. The etcd gateway and the Ozone client resend this way (each in a
/// three-line loop: the Ozone one needs its client mutably between attempts); what makes a
/// call the same (a request id, a recorded frame) is theirs.
pub struct Resends {
    retries: u32,
    /// The attempt the last answer came from (1: the first send).
    attempt: u32,
}

impl Resends {
    pub fn new(retries: u32) -> Self {
        Resends {
            retries,
            attempt: 1,
        }
    }

    /// Whether to send the call again, given whether its last answer is unknown; counts it.
    pub fn again(&mut self, unknown: bool) -> bool {
        let again = unknown && self.attempt <= self.retries;
        self.attempt += u32::from(again);
        again
    }

    /// " (answer to attempt 3 of call c/7)" when a resend was answered, else nothing: a
    /// refusal's text then says the node refused a resend, which is what a retry bug looks like.
    pub fn note(&self, call: impl std::fmt::Display) -> String {
        if self.attempt > 1 {
            format!(" (answer to attempt {} of call {call})", self.attempt)
        } else {
            String::new()
        }
    }
}

pub fn names() -> Vec<&'static str> {
    SYSTEMS.iter().map(|s| s.name).collect()
}

pub struct AdapterSettings {
    pub workload: WorkloadKind,
    /// How often a client resends a request whose answer never came (0: never).
    pub retries: u32,
    /// How long a client waits before such a resend.
    pub resend_after: Duration,
    /// The workload sends answered calls again (`resend`): the client keeps them for that.
    pub sends_duplicates: bool,
    pub read: ReadConsistency,
    /// Bounds connecting to a node; a refused or timed-out connect means nothing was sent.
    pub connect_timeout: Duration,
    /// Object stores: credentials, bucket, region, port (the scenario's `s3:` section).
    pub s3: Option<S3Spec>,
    /// The scenario's `cluster.environment`: an adapter whose native client honours the
    /// system's own client keys reads them here (Ozone: `OZONE-SITE.XML_ozone.client.*`).
    pub environment: Vec<(String, String)>,
}

impl AdapterSettings {
    /// A run's settings, from its scenario. `key_prefix`: an attached run's, which its fencing
    /// buckets (`<bucket>-f<round>`) carry too.
    pub fn for_scenario(spec: &Scenario, key_prefix: Option<&str>) -> Self {
        AdapterSettings {
            workload: spec.workload.kind.value,
            retries: spec.workload.retries,
            resend_after: spec.workload.resend_after.0,
            sends_duplicates: spec.workload.duplicate_after.is_some(),
            read: spec.workload.read,
            connect_timeout: Duration::from_secs(1),
            s3: spec.s3.as_ref().map(|s| {
                let mut s3 = s.value.clone();
                if let Some(prefix) = key_prefix {
                    s3.bucket = format!("{prefix}{}", s3.bucket);
                }
                s3
            }),
            environment: spec
                .cluster
                .environment
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    /// A benchmark's settings: the workload, no resends, linearizable reads, a 1 s connect.
    pub fn plain(workload: WorkloadKind, s3: Option<S3Spec>) -> Self {
        AdapterSettings {
            workload,
            retries: 0,
            resend_after: Duration::ZERO,
            sends_duplicates: false,
            read: ReadConsistency::Linearizable,
            connect_timeout: Duration::from_secs(1),
            s3,
            environment: Vec::new(),
        }
    }
}

/// The `f` of a create (the `create` workload), which its clients answer to: `cas` with value
/// `[null, v]`. To the cas-register model the workload is checked with, creating a fresh key
/// with v is exactly a compare-and-set from nil (it takes effect iff the key holds nothing, and
/// then the key holds v), and the checker has no operation `create`. Were the checker to read
/// `create` as cas from nil, this is the one line of the harness to change.
pub const CREATE: &str = "cas";

/// A node holding `role` now (the named one, or any).
pub async fn role_holder(
    adapter: &(impl SystemAdapter + ?Sized),
    role: Role,
    node: Option<&str>,
) -> Option<String> {
    adapter
        .roles()
        .await
        .into_iter()
        .find(|(n, r)| *r == role && node.is_none_or(|want| want == n))
        .map(|(n, _)| n)
}

/// A node more than `by` entries behind the highest applied index now: (node, its index, the
/// highest).
pub async fn behind_by(
    adapter: &(impl SystemAdapter + ?Sized),
    node: Option<&str>,
    by: u64,
) -> Option<(String, u64, u64)> {
    let applied = adapter.applied_indexes().await;
    let top = applied.values().flatten().max().copied().unwrap_or(0);
    applied.into_iter().find_map(|(n, a)| {
        let a = a?;
        let wanted = node.is_none_or(|w| w == n);
        (wanted && top.saturating_sub(a) > by).then_some((n, a, top))
    })
}

#[async_trait]
pub trait SystemAdapter: Send + Sync {
    /// The role of each node that answered, right now.
    async fn roles(&self) -> BTreeMap<String, Role>;

    /// A client for one process, bound to one node. An error means nothing was sent.
    async fn connect(&self, node: &str) -> Result<Box<dyn SystemClient>, String>;

    /// An admin action (transfer-leader, take-snapshot, close-container, prepare) on the
    /// targets, with the system's own tools; the answer is what they printed.
    async fn admin(
        &self,
        action: crate::scenario::Action,
        _targets: &[String],
        _params: &crate::scenario::plan::ActionParams,
    ) -> Result<String, String> {
        Err(format!("this system has no admin action {action}"))
    }

    /// Each node's applied index (Raft/Ratis log), for the `converge` check: `None` for a node
    /// that did not answer; empty for a system without the probe.
    async fn applied_indexes(&self) -> BTreeMap<String, Option<u64>> {
        BTreeMap::new()
    }

    /// Each node's own answer to a lookup of each key (node -> key -> answer), for the
    /// `converge` check's lookups: a node that could not be asked answers `{"error": ...}`;
    /// empty for a system without per-node lookups.
    async fn replica_lookups(&self, _keys: &[String]) -> crate::run_folder::Lookups {
        BTreeMap::new()
    }

    /// Whether a node the faults started again serves requests again, beyond its healthcheck
    /// (an Ozone OM: back in its Ratis group, with a leader elected); true by default.
    async fn answers(&self, _node: &str) -> bool {
        true
    }

    /// A metric of a node's metrics page (`name` or `name{label="value",...}`; the largest
    /// sample that matches); None when the node or the metric does not answer.
    async fn metric(&self, _node: &str, _name: &str) -> Option<f64> {
        None
    }

    /// What must exist before the workload (an object store's bucket), retried up to `within`.
    async fn prepare(&self, _within: Duration) -> Result<(), String> {
        Ok(())
    }

    /// The nodes the workload's processes talk to when the scenario names none (`workload.nodes`);
    /// None: every node of the cluster.
    fn client_nodes(&self) -> Option<Vec<String>> {
        None
    }

    /// The bucket of an object store through one node, for the fencing workload and the
    /// conditional-write probe; None for systems that are not object stores.
    fn object_store(&self, _node: &str, _timeout: Duration) -> Option<chaos_s3::BucketStore> {
        None
    }
}

#[async_trait]
pub trait SystemClient: Send {
    /// Performs one operation. Timeouts are the workload's business (it wraps this call).
    async fn invoke(&mut self, op: &Operation) -> Outcome;

    /// The retry identity (client id, call id) of the call that decided the last operation,
    /// for clients that can resend a call byte for byte (Ozone's rename); None otherwise.
    fn last_call(&self) -> Option<(String, String)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resends_stop_at_an_answer_or_after_retries_and_name_the_attempt() {
        let mut resends = Resends::new(2);
        assert_eq!(resends.note("c/1"), "");
        assert!(resends.again(true));
        assert!(!resends.again(false), "a known answer ends the resends");
        assert_eq!(resends.note("c/1"), " (answer to attempt 2 of call c/1)");

        let mut resends = Resends::new(2);
        let sent = 1 + std::iter::from_fn(|| resends.again(true).then_some(())).count();
        assert_eq!(sent, 3, "the first send and two resends");
        assert_eq!(resends.note(7), " (answer to attempt 3 of call 7)");

        let mut never = Resends::new(0);
        assert!(!never.again(true));
        assert_eq!(never.note(7), "");
    }

    #[tokio::test]
    async fn ask_each_leaves_out_nodes_that_are_slow_or_say_nothing() {
        let nodes: Vec<String> = ["a", "b", "c"].iter().map(|n| n.to_string()).collect();
        let answers = ask_each(&nodes, Duration::from_millis(50), |node| async move {
            match node.as_str() {
                "a" => Some(1),
                "b" => None,
                _ => {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Some(3)
                }
            }
        })
        .await;
        assert_eq!(answers, vec![("a".to_string(), 1)]);
    }

    #[tokio::test]
    async fn ask_until_returns_the_first_ok_or_the_last_error() {
        let asked = std::cell::Cell::new(0);
        let third_time = || {
            asked.set(asked.get() + 1);
            let n = asked.get();
            async move {
                if n == 3 {
                    Ok(n)
                } else {
                    Err(n)
                }
            }
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        assert_eq!(ask_until(deadline, Duration::ZERO, third_time).await, Ok(3));
        let never = || async { Err::<(), _>("no") };
        assert_eq!(
            ask_until(Instant::now(), Duration::ZERO, never).await,
            Err("no")
        );
    }
}
