//! etcd v3 (3.4 from Debian): register operations through the gRPC API, roles from each node's
//! endpoint status.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use etcd_client::{Client, Compare, CompareOp, GetOptions, Txn, TxnOp};
use serde_json::Value;

use super::{
    AdapterSettings, Operation, Outcome, Resends, SystemAdapter, SystemClient, SystemInfo, CREATE,
};
use crate::cluster::Cluster;
use crate::scenario::{ReadConsistency, Role, WorkloadKind};

pub const CLIENT_PORT: u16 = 2379;

pub const INFO: SystemInfo = SystemInfo {
    name: "etcd",
    workloads: &[WorkloadKind::REGISTER, WorkloadKind::CREATE],
    has_roles: true,
    ready_within: std::time::Duration::from_secs(120),
    make: |cluster, settings| Box::new(Etcd::new(cluster, settings)),
    ..SystemInfo::PLAIN
};

pub struct Etcd {
    /// Node name -> http://127.0.0.1:<published client port>.
    endpoints: BTreeMap<String, String>,
    read: ReadConsistency,
    connect_timeout: Duration,
    workload: WorkloadKind,
    retries: u32,
}

impl Etcd {
    fn new(cluster: &Cluster, settings: &AdapterSettings) -> Self {
        let endpoints = super::client_urls(cluster, CLIENT_PORT, |a| format!("http://{a}"));
        Etcd {
            endpoints,
            read: settings.read,
            connect_timeout: settings.connect_timeout,
            workload: settings.workload,
            retries: settings.retries,
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
        // (member id, the leader it believes in, its term) from every node that answers.
        let answers = super::ask_each(
            self.endpoints.keys(),
            Duration::from_secs(1),
            |node| async move {
                let status = self.client(node).await.ok()?.status().await.ok()?;
                let member = status.header()?.member_id();
                Some((member, status.leader(), status.raft_term()))
            },
        )
        .await;
        // A node cut off from the others may still believe in an old leader; trust the highest term.
        let Some(&(_, (_, leader, term))) = answers.iter().max_by_key(|(_, a)| a.2) else {
            return BTreeMap::new();
        };
        answers
            .iter()
            .map(|(node, (member, _, _))| {
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
        if self.workload == WorkloadKind::CREATE {
            let base = self
                .endpoints
                .get(node)
                .ok_or_else(|| format!("node {node} publishes no client port {CLIENT_PORT}"))?;
            return Ok(Box::new(GatewayClient::new(
                base,
                self.connect_timeout,
                self.retries,
            )?));
        }
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
                    Err(e) => classify(&e),
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

/// etcd's JSON gateway over HTTP/1.1 (`/v3/kv/...`, base64 keys and values), for workloads whose
/// requests a proxy must see one by one. Creates are transactions "put if absent"; a request whose
/// connection dies after sending is resent as is (same body, same call id), as client libraries
/// with automatic retries do. The history records what the caller is finally told.
struct GatewayClient {
    http: reqwest::Client,
    base: String,
    retries: u32,
    client_id: String,
    next_call: u64,
}

impl GatewayClient {
    fn new(base: &str, connect_timeout: Duration, retries: u32) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .pool_max_idle_per_host(1)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(GatewayClient {
            http,
            base: base.to_string(),
            retries,
            client_id: format!("{:08x}", rand::random::<u32>()),
            next_call: 0,
        })
    }

    async fn post(&self, path: &str, body: &Value, call: &str) -> Result<Value, reqwest::Error> {
        self.http
            .post(format!("{}{path}", self.base))
            .header("x-chaos-call", call)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await
            .map(|b| serde_json::from_slice(&b).unwrap_or(Value::Null))
    }
}

fn b64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn unb64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

#[async_trait]
impl SystemClient for GatewayClient {
    async fn invoke(&mut self, op: &Operation) -> Outcome {
        self.next_call += 1;
        let call = format!("{}/{}", self.client_id, self.next_call);
        let key = b64(&op.key);
        match op.f {
            "read" => {
                match self
                    .post("/v3/kv/range", &serde_json::json!({ "key": key }), &call)
                    .await
                {
                    Ok(resp) => Outcome::Ok(
                        resp["kvs"][0]["value"]
                            .as_str()
                            .map(|v| decode(unb64(v).as_bytes()))
                            .unwrap_or(Value::Null),
                    ),
                    Err(e) => classify_gateway(&e),
                }
            }
            // A create (cas [null, v]): the key with v if it does not exist.
            CREATE => {
                let value = b64(&encode(&op.value[1]));
                let body = serde_json::json!({
                    "compare": [{"key": key, "result": "EQUAL", "target": "CREATE", "create_revision": "0"}],
                    "success": [{"request_put": {"key": key, "value": value}}],
                    "failure": [{"request_range": {"key": key}}],
                });
                let mut resends = Resends::new(self.retries);
                let mut answer = self.post("/v3/kv/txn", &body, &call).await;
                // Sent, and the answer never came: resend the very same request.
                while resends.again(
                    matches!(&answer, Err(e) if matches!(classify_gateway(e), Outcome::Info(_))),
                ) {
                    answer = self.post("/v3/kv/txn", &body, &call).await;
                }
                match &answer {
                    Ok(resp) if resp["succeeded"] == Value::Bool(true) => {
                        Outcome::Ok(op.value.clone())
                    }
                    Ok(_) => Outcome::Fail(format!("already exists{}", resends.note(&call))),
                    Err(e) => classify_gateway(e),
                }
            }
            other => Outcome::Fail(format!("the etcd gateway client has no operation {other}")),
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

// How etcd's errors become outcomes: here and nowhere else. A read whose outcome is unknown
// is made fail by `workloads::invoke_within`, as for every system.

/// Errors of a write through gRPC: certain no-ops (the server refused before applying, or the
/// request never left) are fail; anything that may have reached the server is info.
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

/// Errors of a write through the JSON gateway: a connection never made is fail; anything after
/// sending (a reset, a timeout, an HTTP error status) is info.
fn classify_gateway(error: &reqwest::Error) -> Outcome {
    if error.is_connect() {
        Outcome::Fail(error.to_string())
    } else {
        Outcome::Info(error.to_string())
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

    #[tokio::test]
    async fn a_gateway_connection_never_made_is_fail() {
        let refused = reqwest::Client::new()
            .post("http://127.0.0.1:1/v3/kv/txn")
            .send()
            .await
            .unwrap_err();
        assert!(matches!(classify_gateway(&refused), Outcome::Fail(_)));
    }
}
