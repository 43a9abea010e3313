//! S3 object stores (s3s-fs here; MinIO, Garage, Ceph RGW with their images) through chaos-s3's
//! signed client: the s3-object workload (get / put / delete / put-if-none-match / put-if-match,
//! recorded as the checker's `s3-object` model wants them), and a bucket for the fencing
//! workload and the conditional-write probe. No roles: every node answers S3.
//!
//! Endpoints are the nodes' published S3 ports (through the proxy when the scenario uses one);
//! credentials, bucket and region come from the scenario's `s3:` section and never reach the
//! history, faults.jsonl or the logs.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chaos_s3::{BucketStore, GetCondition, GetResult, PutCondition, S3Client, S3Outcome, Timeouts};
use serde_json::{json, Value};

use super::{
    ask_until, AdapterSettings, Operation, Outcome, SystemAdapter, SystemClient, SystemInfo,
};
use crate::cluster::Cluster;
use crate::scenario::{EtagForm, Role, S3Spec, WorkloadKind};

pub const INFO: SystemInfo = SystemInfo {
    name: "s3",
    workloads: &[WorkloadKind::S3_OBJECT, WorkloadKind::FENCING],
    has_roles: false,
    ready_within: std::time::Duration::from_secs(120),
    make: |cluster, settings| Box::new(S3::new(cluster, settings)),
    speaks_s3: true,
    ..SystemInfo::PLAIN
};

pub struct S3 {
    /// Node name -> http://127.0.0.1:<published S3 port, or its proxy>.
    endpoints: BTreeMap<String, String>,
    spec: Option<S3Spec>,
    connect_timeout: Duration,
}

impl S3 {
    /// Endpoints for the nodes that publish the `s3:` section's port (or, without one, their
    /// first port); other systems' adapters use this for their S3 gateways.
    pub fn new(cluster: &Cluster, settings: &AdapterSettings) -> Self {
        let spec = settings.s3.clone();
        let endpoints = cluster
            .names()
            .into_iter()
            .filter_map(|n| {
                let port = match spec.as_ref().and_then(|s| s.port) {
                    Some(p) => p,
                    None => *cluster.node(&n)?.ports.keys().next()?,
                };
                let addr = cluster.endpoint(&n, port)?;
                Some((n, format!("http://{addr}")))
            })
            .collect();
        S3 {
            endpoints,
            spec,
            connect_timeout: settings.connect_timeout,
        }
    }

    /// Whether the node answers S3.
    pub fn serves(&self, node: &str) -> bool {
        self.endpoints.contains_key(node)
    }

    /// The nodes that answer S3.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.endpoints.keys().map(String::as_str)
    }

    /// The scenario's `s3:` section (credentials, bucket, region, port).
    pub fn spec(&self) -> Result<&S3Spec, String> {
        self.spec
            .as_ref()
            .ok_or_else(|| "this system needs the scenario's `s3:` section".to_string())
    }

    /// A client bound to one node. Requests are bounded by the workload's timeout; this one
    /// only stops a request that outlives any sensible workload.
    pub fn client(&self, node: &str) -> Result<S3Client, String> {
        self.client_with(node, Duration::from_secs(60))
    }

    fn client_with(&self, node: &str, request: Duration) -> Result<S3Client, String> {
        let spec = self.spec()?;
        let endpoint = self
            .endpoints
            .get(node)
            .ok_or_else(|| format!("node {node} publishes no S3 port"))?;
        S3Client::new(
            endpoint,
            &spec.region,
            &spec.access_key,
            &spec.secret_key,
            Timeouts {
                connect: self.connect_timeout,
                request,
            },
        )
        .map(|c| c.with_unquoted_if_match(spec.if_match_etag == EtagForm::Unquoted))
        .map_err(|e| e.to_string())
    }

    pub fn bucket(&self) -> Option<&str> {
        self.spec.as_ref().map(|s| s.bucket.as_str())
    }
}

#[async_trait]
impl SystemAdapter for S3 {
    async fn roles(&self) -> BTreeMap<String, Role> {
        BTreeMap::new()
    }

    async fn connect(&self, node: &str) -> Result<Box<dyn SystemClient>, String> {
        Ok(Box::new(S3ObjectClient {
            client: self.client(node)?,
            bucket: self.spec()?.bucket.clone(),
        }))
    }

    /// Creates the bucket through the first node that accepts it, retrying for up to `within`
    /// (a node's port may open before its S3 API answers; a distributed store needs quorum).
    async fn prepare(&self, within: Duration) -> Result<(), String> {
        let bucket = self.spec()?.bucket.clone();
        let clients = &self
            .endpoints
            .keys()
            .map(|node| Ok((node, self.client(node)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let bucket = &bucket;
        let create_on_any = || async move {
            let mut last = String::from("no node publishes an S3 port");
            for (node, client) in clients {
                let reply = client.create_bucket(bucket).await;
                match reply.outcome {
                    S3Outcome::Ok(()) => return Ok(()),
                    S3Outcome::Fail(r) | S3Outcome::Info(r) => {
                        last = format!("CreateBucket {bucket} on {node}: {r}")
                    }
                }
            }
            Err(last)
        };
        let every = Duration::from_millis(250);
        ask_until(Instant::now() + within, every, create_on_any).await
    }

    fn object_store(&self, node: &str, timeout: Duration) -> Option<BucketStore> {
        Some(BucketStore {
            client: self.client_with(node, timeout).ok()?,
            bucket: self.bucket()?.to_string(),
        })
    }
}

struct S3ObjectClient {
    client: S3Client,
    bucket: String,
}

/// ETags as the model compares them: without the quotes some stores add and others drop.
fn etag_value(etag: Option<&str>) -> Value {
    etag.map(|e| Value::from(e.trim_matches('"')))
        .unwrap_or(Value::Null)
}

fn outcome<T>(o: S3Outcome<T>, ok: impl FnOnce(T) -> Value) -> Outcome {
    match o {
        S3Outcome::Ok(v) => Outcome::Ok(ok(v)),
        S3Outcome::Fail(r) => Outcome::Fail(r),
        S3Outcome::Info(r) => Outcome::Info(r),
    }
}

#[async_trait]
impl SystemClient for S3ObjectClient {
    /// `get` (and the final `read`): `{"body", "etag"}` or null when absent. `put` with value
    /// `{"body"}`, `{"body", "if_none_match": "*"}` or `{"body", "if_match": E}`: `{"etag"}`;
    /// a refused condition is `fail` with "precondition failed (HTTP 412 ...)", which the
    /// model reads as "the condition did not hold". `delete`: null.
    async fn invoke(&mut self, op: &Operation) -> Outcome {
        let key = op.key.as_str();
        match op.f {
            "get" | "read" => {
                let reply = self
                    .client
                    .get(&self.bucket, key, &GetCondition::default())
                    .await;
                outcome(reply.outcome, |g| match g {
                    GetResult::Found(o) => json!({
                        "body": String::from_utf8_lossy(&o.body),
                        "etag": etag_value(o.etag.as_deref()),
                    }),
                    GetResult::Absent | GetResult::NotModified => Value::Null,
                })
            }
            "put" => {
                let body = op.value["body"].as_str().unwrap_or_default().to_string();
                let cond = if op.value.get("if_none_match").is_some() {
                    PutCondition::IfNoneMatchAny
                } else if let Some(e) = op.value["if_match"].as_str() {
                    PutCondition::IfMatch(format!("\"{e}\""))
                } else {
                    PutCondition::None
                };
                let reply = self
                    .client
                    .put(&self.bucket, key, body.into_bytes(), &cond)
                    .await;
                outcome(
                    reply.outcome,
                    |etag| json!({"etag": etag_value(etag.as_deref())}),
                )
            }
            "delete" => {
                let reply = self.client.delete(&self.bucket, key).await;
                outcome(reply.outcome, |()| Value::Null)
            }
            other => Outcome::Fail(format!("the s3 client has no operation {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_lose_their_quotes() {
        assert_eq!(etag_value(Some("\"abc\"")), json!("abc"));
        assert_eq!(etag_value(Some("abc")), json!("abc"));
        assert_eq!(etag_value(None), Value::Null);
    }
}
