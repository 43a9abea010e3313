//! Redis (7.0 from Debian): unique values added to a few sets (SADD), read back whole
//! (SMEMBERS); roles from INFO replication (primary = leader, replica = follower).

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::MultiplexedConnection;
use redis::AsyncConnectionConfig;
use serde_json::Value;

use super::{AdapterSettings, Operation, Outcome, SystemAdapter, SystemClient, SystemInfo};
use crate::cluster::Cluster;
use crate::scenario::{Role, WorkloadKind};

pub const CLIENT_PORT: u16 = 6379;

pub const INFO: SystemInfo = SystemInfo {
    name: "redis",
    workloads: &[WorkloadKind::SET],
    has_roles: true,
    ready_within: std::time::Duration::from_secs(120),
    make: |cluster, settings| Box::new(Redis::new(cluster, settings)),
    ..SystemInfo::PLAIN
};

pub struct Redis {
    endpoints: BTreeMap<String, String>,
    connect_timeout: Duration,
}

impl Redis {
    fn new(cluster: &Cluster, settings: &AdapterSettings) -> Self {
        let endpoints = super::client_urls(cluster, CLIENT_PORT, |a| format!("redis://{a}/"));
        Redis {
            endpoints,
            connect_timeout: settings.connect_timeout,
        }
    }

    async fn connection(&self, node: &str) -> Result<MultiplexedConnection, String> {
        let url = self
            .endpoints
            .get(node)
            .ok_or_else(|| format!("node {node} publishes no client port {CLIENT_PORT}"))?;
        let client = redis::Client::open(url.as_str()).map_err(|e| e.to_string())?;
        // No response timeout here: the workload bounds each operation and classifies it.
        let config = AsyncConnectionConfig::new().set_connection_timeout(self.connect_timeout);
        client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| format!("connect {node}: {e}"))
    }
}

#[async_trait]
impl SystemAdapter for Redis {
    async fn roles(&self) -> BTreeMap<String, Role> {
        super::ask_each(
            self.endpoints.keys(),
            Duration::from_secs(1),
            |node| async move {
                let mut conn = self.connection(node).await.ok()?;
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query_async(&mut conn)
                    .await
                    .ok()?;
                Some(if info.contains("role:master") {
                    Role::Leader
                } else {
                    Role::Follower
                })
            },
        )
        .await
        .into_iter()
        .collect()
    }

    async fn connect(&self, node: &str) -> Result<Box<dyn SystemClient>, String> {
        Ok(Box::new(RedisClient {
            conn: self.connection(node).await?,
        }))
    }
}

struct RedisClient {
    conn: MultiplexedConnection,
}

#[async_trait]
impl SystemClient for RedisClient {
    async fn invoke(&mut self, op: &Operation) -> Outcome {
        match op.f {
            "add" => {
                let result: redis::RedisResult<i64> = redis::cmd("SADD")
                    .arg(&op.key)
                    .arg(op.value.to_string())
                    .query_async(&mut self.conn)
                    .await;
                match result {
                    Ok(_) => Outcome::Ok(op.value.clone()),
                    Err(e) => classify(&e),
                }
            }
            "read" | "final-read" => {
                let result: redis::RedisResult<Vec<String>> = redis::cmd("SMEMBERS")
                    .arg(&op.key)
                    .query_async(&mut self.conn)
                    .await;
                match result {
                    Ok(members) => {
                        let mut values: Vec<Value> = members
                            .iter()
                            .map(|m| {
                                m.parse::<i64>()
                                    .map(Value::from)
                                    .unwrap_or(Value::from(m.as_str()))
                            })
                            .collect();
                        values.sort_by_key(|v| v.as_i64());
                        Outcome::Ok(Value::Array(values))
                    }
                    Err(e) => classify(&e),
                }
            }
            other => Outcome::Fail(format!("redis has no operation {other}")),
        }
    }
}

/// A command the server refused (an error reply) did not apply; a dropped connection may have.
fn classify(error: &redis::RedisError) -> Outcome {
    if error.kind() == redis::ErrorKind::IoError
        || error.is_timeout()
        || error.is_connection_dropped()
    {
        if error.is_connection_refusal() {
            Outcome::Fail(error.to_string())
        } else {
            Outcome::Info(error.to_string())
        }
    } else {
        Outcome::Fail(error.to_string())
    }
}
