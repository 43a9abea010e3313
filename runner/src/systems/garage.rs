//! Garage 2.5 (crates.io `garage`; images/garage): a distributed S3 object store, three nodes
//! in the compose profile `garage`. Clients talk S3 exactly as to any other store (this adapter
//! hands them to the [`S3`] adapter); what is Garage's own is `prepare`, which turns three
//! freshly started daemons into a cluster with Garage's CLI inside the nodes:
//!
//! 1. `garage node id -q` in every node; `garage node connect <id>@<node>:3901` from the first
//!    node to the others (the node ids are random, so the config file cannot list them);
//! 2. unless a layout is already applied (`garage layout show`: version 1 or more), `garage
//!    layout assign -z dc1 -c 1GB <id>` for every node and `garage layout apply --version 1`;
//! 3. `garage key import --yes` of the scenario's `s3:` key (Garage key ids are `GK` and 24 hex
//!    digits, secrets 64 hex digits) unless `garage key info` knows it, `garage key allow
//!    --create-bucket` (the fencing workload creates a bucket per round);
//! 4. `garage bucket create` unless `garage bucket info` knows it, `garage bucket allow --read
//!    --write --owner`;
//! 5. until every node's S3 API answers a GET of a missing object with 404.
//!
//! Every step is retried until the deadline (a node that has just started, a layout not yet
//! known to every node, tables without quorum) and skips what exists, so `prepare` can run again
//! on a prepared cluster. Errors never carry the secret key: the import's command line is
//! written with `[redacted]` in its place.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bollard::Docker;
use chaos_s3::{BucketStore, GetCondition, S3Outcome};

use super::s3::S3;
use super::{ask_until, AdapterSettings, SystemAdapter, SystemClient, SystemInfo};
use crate::cluster::docker::exec;
use crate::cluster::Cluster;
use crate::scenario::{Role, WorkloadKind};

pub const INFO: SystemInfo = SystemInfo {
    name: "garage",
    workloads: &[WorkloadKind::S3_OBJECT, WorkloadKind::FENCING],
    has_roles: false,
    ready_within: std::time::Duration::from_secs(120),
    make: |cluster, settings| Box::new(Garage::new(cluster, settings)),
    speaks_s3: true,
    ..SystemInfo::PLAIN
};

/// Garage's RPC port between the nodes (`rpc_bind_addr` in images/garage/garage.toml).
pub const RPC_PORT: u16 = 3901;

/// How long one `garage` CLI command may take in one node (it connects to the local daemon
/// over RPC; a paused daemon never answers).
const CLI_PATIENCE: Duration = Duration::from_secs(20);

pub struct Garage {
    s3: S3,
    /// Node -> container id, for the CLI run inside it (in the profile's order).
    containers: BTreeMap<String, String>,
    docker: Docker,
}

impl Garage {
    fn new(cluster: &Cluster, settings: &AdapterSettings) -> Self {
        let containers = cluster
            .names()
            .into_iter()
            .filter_map(|n| Some((n.clone(), cluster.node(&n)?.container.clone())))
            .collect();
        Garage {
            s3: S3::new(cluster, settings),
            containers,
            docker: cluster.docker().clone(),
        }
    }

    /// `garage ARGS` in one node; the error names the command with the secret redacted.
    async fn garage(&self, node: &str, args: &[&str]) -> Result<String, String> {
        let container = self
            .containers
            .get(node)
            .ok_or_else(|| format!("no node {node}"))?;
        let mut cmd = vec!["garage".to_string()];
        cmd.extend(args.iter().map(|a| a.to_string()));
        match exec(&self.docker, container, &cmd, Some(CLI_PATIENCE)).await {
            Ok(out) => Ok(out.all),
            Err(e) => Err(self.redact(&format!("`{}` in {node}: {e}", cmd.join(" ")))),
        }
    }

    fn redact(&self, text: &str) -> String {
        match self.s3.spec() {
            Ok(s) if !s.secret_key.is_empty() => text.replace(&s.secret_key, "[redacted]"),
            _ => text.to_string(),
        }
    }

    /// Runs `garage ARGS` in `node` until it succeeds or the deadline passes.
    async fn until_ok(
        &self,
        deadline: Instant,
        node: &str,
        args: &[&str],
    ) -> Result<String, String> {
        let every = Duration::from_millis(500);
        ask_until(deadline, every, || self.garage(node, args)).await
    }

    /// Every node answers a GET of an object that does not exist with 404: the layout, the key
    /// and the bucket have reached it, and it can reach a read quorum.
    async fn until_s3_answers(&self, deadline: Instant, bucket: &str) -> Result<(), String> {
        for node in self.containers.keys() {
            let client = &self.s3.client(node)?;
            let get_missing = || async move {
                let absent = GetCondition::default();
                let get = client.get(bucket, "chaos-ready-probe", &absent);
                match tokio::time::timeout(Duration::from_secs(5), get).await {
                    Ok(reply) => match reply.outcome {
                        S3Outcome::Ok(_) => Ok(()),
                        S3Outcome::Fail(e) | S3Outcome::Info(e) => Err(e),
                    },
                    Err(_) => Err("no answer within 5s".to_string()),
                }
            };
            ask_until(deadline, Duration::from_millis(250), get_missing)
                .await
                .map_err(|why| format!("S3 GET on {node}: {}", self.redact(&why)))?;
        }
        Ok(())
    }
}

/// Garage's key format: `GK` and 24 hex digits; the secret 64 hex digits.
pub fn check_key(access_key: &str, secret_key: &str) -> Result<(), String> {
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    let id_ok = access_key
        .strip_prefix("GK")
        .is_some_and(|rest| hex(rest, 24));
    if !id_ok {
        return Err("Garage key ids are `GK` and 24 hex digits (s3.access-key)".into());
    }
    if !hex(secret_key, 64) {
        return Err("Garage secret keys are 64 hex digits (s3.secret-key)".into());
    }
    Ok(())
}

/// The node id in `garage node id -q` (`<64 hex>@<address>`, or the id alone).
pub fn parse_node_id(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let id = line.trim().split('@').next()?;
        (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_string())
    })
}

/// The applied layout version in `garage layout show` ("Current cluster layout version: N").
pub fn layout_version(output: &str) -> Option<u64> {
    output.lines().find_map(|line| {
        line.trim()
            .strip_prefix("Current cluster layout version:")?
            .trim()
            .parse()
            .ok()
    })
}

#[async_trait]
impl SystemAdapter for Garage {
    async fn roles(&self) -> BTreeMap<String, Role> {
        BTreeMap::new()
    }

    async fn connect(&self, node: &str) -> Result<Box<dyn SystemClient>, String> {
        self.s3.connect(node).await
    }

    async fn prepare(&self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let spec = self.s3.spec()?.clone();
        check_key(&spec.access_key, &spec.secret_key)?;
        let nodes: Vec<String> = self.containers.keys().cloned().collect();
        let first = nodes.first().ok_or("the profile has no node")?.clone();

        let mut ids = BTreeMap::new();
        for node in &nodes {
            let out = self.until_ok(deadline, node, &["node", "id", "-q"]).await?;
            let id = parse_node_id(&out)
                .ok_or_else(|| format!("`garage node id -q` in {node} printed no node id"))?;
            ids.insert(node.clone(), id);
        }
        for (node, id) in ids.iter().filter(|(n, _)| **n != first) {
            let peer = format!("{id}@{node}:{RPC_PORT}");
            self.until_ok(deadline, &first, &["node", "connect", &peer])
                .await?;
        }

        let show = self.until_ok(deadline, &first, &["layout", "show"]).await?;
        if layout_version(&show).unwrap_or(0) == 0 {
            for id in ids.values() {
                self.until_ok(
                    deadline,
                    &first,
                    &["layout", "assign", "-z", "dc1", "-c", "1GB", id],
                )
                .await?;
            }
            self.until_ok(deadline, &first, &["layout", "apply", "--version", "1"])
                .await?;
        }

        let key = spec.access_key.as_str();
        if self.garage(&first, &["key", "info", key]).await.is_err() {
            self.until_ok(
                deadline,
                &first,
                &[
                    "key",
                    "import",
                    "--yes",
                    "-n",
                    "chaos",
                    key,
                    &spec.secret_key,
                ],
            )
            .await?;
        }
        self.until_ok(deadline, &first, &["key", "allow", "--create-bucket", key])
            .await?;

        let bucket = spec.bucket.as_str();
        if self
            .garage(&first, &["bucket", "info", bucket])
            .await
            .is_err()
        {
            self.until_ok(deadline, &first, &["bucket", "create", bucket])
                .await?;
        }
        self.until_ok(
            deadline,
            &first,
            &[
                "bucket", "allow", "--read", "--write", "--owner", bucket, "--key", key,
            ],
        )
        .await?;

        self.until_s3_answers(deadline, bucket).await
    }

    fn object_store(&self, node: &str, timeout: Duration) -> Option<BucketStore> {
        self.s3.object_store(node, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_garage_format() {
        let secret = "0".repeat(64);
        assert!(check_key("GK0123456789abcdef01234567", &secret).is_ok());
        assert!(check_key("GK0123", &secret).is_err());
        assert!(check_key("AK0123456789abcdef01234567", &secret).is_err());
        assert!(check_key("GK0123456789abcdef01234567", "short").is_err());
    }

    #[test]
    fn node_ids_and_layout_versions() {
        let id = "a".repeat(64);
        assert_eq!(
            parse_node_id(&format!("{id}@172.18.0.2:3901\n")),
            Some(id.clone())
        );
        assert_eq!(parse_node_id(&format!("{id}\n")), Some(id));
        assert_eq!(parse_node_id("error: no\n"), None);
        let show =
            "==== CURRENT CLUSTER LAYOUT ====\nNo nodes\n\nCurrent cluster layout version: 0\n";
        assert_eq!(layout_version(show), Some(0));
        assert_eq!(
            layout_version("Current cluster layout version: 12"),
            Some(12)
        );
        assert_eq!(layout_version("nothing"), None);
    }
}
