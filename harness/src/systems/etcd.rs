//! etcd v3 (3.4 from Debian): register operations through the gRPC API, roles from each node's
//! endpoint status.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use etcd_client::{Client, Compare, CompareOp, GetOptions, Txn, TxnOp};
use serde_json::Value;

use super::{AdapterSettings, Operation, Outcome, SystemAdapter, SystemClient, SystemInfo};
use crate::cluster::Cluster;
use crate::scenario::{ReadConsistency, Role, WorkloadKind};

pub const CLIENT_PORT: u16 = 2379;

pub const INFO: SystemInfo = SystemInfo {
    name: "etcd",
    workloads: &[WorkloadKind::Register],
    has_roles: true,
    make: |cluster, settings| Box::new(Etcd::new(cluster, settings)),
};

pub struct Etcd {
    /// Node name -> http://127.0.0.1:<published client port>.
    endpoints: BTreeMap<String, String>,
    read: ReadConsistency,
    connect_timeout: Duration,
}

impl Etcd {
    fn new(cluster: &Cluster, settings: &AdapterSettings) -> Self {
        let endpoints = cluster
            .names()
            .into_iter()
            .filter_map(|n| {
                let addr = cluster.endpoint(&n, CLIENT_PORT)?;
                Some((n, format!("http://{addr}")))
            })
            .collect();
        Etcd {
            endpoints,
            read: settings.read,
            connect_timeout: settings.connect_timeout,
        }
    }

    /// Connects eagerly, so a refused or timed-out connection is known before any request is sent.
    async fn client(&self, node: &str) -> Result<Client, String> {
        let url = self
            .endpoints
            .get(node)
            .ok_or_else(|| format!("node {node} publishes no client port {CLIENT_PORT}"))?;
        let channel = tonic::transport::Endpoint::from_shared(url.clone())
            .map_err(|e| e.to_string())?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true)
            .connect()
            .await
            .map_err(|e| format!("connect {node}: {}", error_chain(&e)))?;
        Client::from_channel(etcd_client::Channel::Tonic(channel), None)
            .await
            .map_err(|e| format!("connect {node}: {e}"))
    }
}

#[async_trait]
impl SystemAdapter for Etcd {
    async fn roles(&self) -> BTreeMap<String, Role> {
        // Ask every node at once; a paused or partitioned node simply does not answer in time.
        let asks = self.endpoints.keys().map(|node| async move {
            let status = tokio::time::timeout(Duration::from_secs(1), async {
                let mut client = self.client(node).await.ok()?;
                client.status().await.ok()
            })
            .await
            .ok()
            .flatten()?;
            let header = status.header()?;
            Some((
                node.clone(),
                header.member_id(),
                status.leader(),
                status.raft_term(),
            ))
        });
        let answers: Vec<_> = futures_util::future::join_all(asks)
            .await
            .into_iter()
            .flatten()
            .collect();
        // A node cut off from the others may still believe in an old leader; trust the highest term.
        let Some(&(_, _, leader, term)) = answers.iter().max_by_key(|a| a.3) else {
            return BTreeMap::new();
        };
        answers
            .iter()
            .map(|(node, member, _, _)| {
                let role = if *member == leader && term > 0 {
                    Role::Leader
                } else {
                    Role::Follower
                };
                (node.clone(), role)
            })
            .collect()
    }

    async fn connect(&self, node: &str) -> Result<Box<dyn SystemClient>, String> {
        Ok(Box::new(EtcdClient {
            client: self.client(node).await?,
            read: self.read,
        }))
    }
}

struct EtcdClient {
    client: Client,
    read: ReadConsistency,
}

#[async_trait]
impl SystemClient for EtcdClient {
    async fn invoke(&mut self, op: &Operation) -> Outcome {
        let key = op.key.as_str();
        match op.f {
            "read" => {
                let options = match self.read {
                    ReadConsistency::Linearizable => None,
                    ReadConsistency::Serializable => Some(GetOptions::new().with_serializable()),
                };
                match self.client.get(key, options).await {
                    Ok(resp) => Outcome::Ok(
                        resp.kvs()
                            .first()
                            .map(|kv| decode(kv.value()))
                            .unwrap_or(Value::Null),
                    ),
                    // A read changes nothing, so any failure is a definite no-op.
                    Err(e) => Outcome::Fail(e.to_string()),
                }
            }
            "write" => match self.client.put(key, encode(&op.value), None).await {
                Ok(_) => Outcome::Ok(op.value.clone()),
                Err(e) => classify(&e),
            },
            "cas" => {
                let (Some(from), Some(to)) = (op.value.get(0), op.value.get(1)) else {
                    return Outcome::Fail("cas needs [from, to]".into());
                };
                let compare = if from.is_null() {
                    Compare::version(key, CompareOp::Equal, 0)
                } else {
                    Compare::value(key, CompareOp::Equal, encode(from))
                };
                let txn = Txn::new()
                    .when([compare])
                    .and_then([TxnOp::put(key, encode(to), None)]);
                match self.client.txn(txn).await {
                    Ok(resp) if resp.succeeded() => Outcome::Ok(op.value.clone()),
                    Ok(_) => Outcome::Fail("compare failed".into()),
                    Err(e) => classify(&e),
                }
            }
            other => Outcome::Fail(format!("etcd has no operation {other}")),
        }
    }
}

fn encode(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn decode(bytes: &[u8]) -> Value {
    let text = String::from_utf8_lossy(bytes);
    text.parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::String(text.into_owned()))
}

/// Errors of a write: certain no-ops (the server refused before applying, or the request never
/// left) are fail; anything that may have reached the server is info.
fn classify(error: &etcd_client::Error) -> Outcome {
    use tonic::Code;
    let text = format!("{error}: {}", error_chain(error));
    match error {
        etcd_client::Error::GRpcStatus(status) => match status.code() {
            Code::InvalidArgument
            | Code::FailedPrecondition
            | Code::NotFound
            | Code::AlreadyExists
            | Code::PermissionDenied
            | Code::Unauthenticated
            | Code::OutOfRange
            | Code::Unimplemented
            | Code::ResourceExhausted => Outcome::Fail(text),
            Code::Unavailable if refused(error) => Outcome::Fail(text),
            _ => Outcome::Info(text),
        },
        etcd_client::Error::TransportError(_) if refused(error) => Outcome::Fail(text),
        _ => Outcome::Info(text),
    }
}

/// The connection was refused while reconnecting: the request was never sent.
fn refused(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        if let Some(status) = e.downcast_ref::<tonic::Status>() {
            if let Some(inner) = std::error::Error::source(status) {
                if refused(inner) {
                    return true;
                }
            }
        }
        source = e.source();
    }
    error.to_string().contains("Connection refused")
}

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut source = error.source();
    while let Some(e) = source {
        parts.push(e.to_string());
        source = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_as_etcd_strings() {
        assert_eq!(decode(encode(&Value::from(42)).as_bytes()), Value::from(42));
        assert_eq!(decode(b"x"), Value::from("x"));
    }

    #[test]
    fn server_refusals_are_fail_and_timeouts_info() {
        let refusal = etcd_client::Error::GRpcStatus(tonic::Status::invalid_argument("bad"));
        assert!(matches!(classify(&refusal), Outcome::Fail(_)));
        let timeout = etcd_client::Error::GRpcStatus(tonic::Status::unavailable(
            "etcdserver: request timed out",
        ));
        assert!(matches!(classify(&timeout), Outcome::Info(_)));
        let deadline = etcd_client::Error::GRpcStatus(tonic::Status::deadline_exceeded("late"));
        assert!(matches!(classify(&deadline), Outcome::Info(_)));
    }
}
