//! An adapter whose clients put a prefix before every key they send: a run attached to a
//! cluster that earlier runs (or people) wrote to (`chaos run --attach`) works on keys of its
//! own. The history keeps the workload's names (`k0`); only the wire sees `PREFIX` + `k0`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::{Operation, Outcome, SystemAdapter, SystemClient};
use crate::scenario::plan::ActionParams;
use crate::scenario::{Action, Role};

pub struct Prefixed {
    inner: Arc<dyn SystemAdapter>,
    prefix: String,
}

impl Prefixed {
    pub fn new(inner: Arc<dyn SystemAdapter>, prefix: String) -> Prefixed {
        Prefixed { inner, prefix }
    }
}

struct PrefixedClient {
    inner: Box<dyn SystemClient>,
    prefix: String,
}

#[async_trait]
impl SystemClient for PrefixedClient {
    async fn invoke(&mut self, op: &Operation) -> Outcome {
        let sent = Operation {
            f: op.f,
            key: format!("{}{}", self.prefix, op.key),
            value: op.value.clone(),
        };
        self.inner.invoke(&sent).await
    }

    fn last_call(&self) -> Option<(String, String)> {
        self.inner.last_call()
    }
}

#[async_trait]
impl SystemAdapter for Prefixed {
    async fn roles(&self) -> BTreeMap<String, Role> {
        self.inner.roles().await
    }

    async fn connect(&self, node: &str) -> Result<Box<dyn SystemClient>, String> {
        let inner = self.inner.connect(node).await?;
        Ok(Box::new(PrefixedClient {
            inner,
            prefix: self.prefix.clone(),
        }))
    }

    async fn admin(
        &self,
        action: Action,
        targets: &[String],
        params: &ActionParams,
    ) -> Result<String, String> {
        self.inner.admin(action, targets, params).await
    }

    async fn applied_indexes(&self) -> BTreeMap<String, Option<u64>> {
        self.inner.applied_indexes().await
    }

    /// Asked for the prefixed keys, answered under the workload's names.
    async fn replica_lookups(&self, keys: &[String]) -> crate::run_folder::Lookups {
        let sent: Vec<String> = keys.iter().map(|k| format!("{}{k}", self.prefix)).collect();
        self.inner
            .replica_lookups(&sent)
            .await
            .into_iter()
            .map(|(node, answers)| {
                let answers = answers
                    .into_iter()
                    .map(|(k, v)| (k.strip_prefix(&self.prefix).unwrap_or(&k).to_string(), v))
                    .collect();
                (node, answers)
            })
            .collect()
    }

    async fn answers(&self, node: &str) -> bool {
        self.inner.answers(node).await
    }

    async fn metric(&self, node: &str, name: &str) -> Option<f64> {
        self.inner.metric(node, name).await
    }

    async fn prepare(&self, within: Duration) -> Result<(), String> {
        self.inner.prepare(within).await
    }

    fn client_nodes(&self) -> Option<Vec<String>> {
        self.inner.client_nodes()
    }

    fn object_store(&self, node: &str, timeout: Duration) -> Option<chaos_s3::BucketStore> {
        self.inner.object_store(node, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::sync::Mutex;

    /// A store that remembers the keys it was sent.
    #[derive(Default)]
    struct Keys(Arc<Mutex<Vec<String>>>);

    struct KeysClient(Arc<Mutex<Vec<String>>>);

    #[async_trait]
    impl SystemClient for KeysClient {
        async fn invoke(&mut self, op: &Operation) -> Outcome {
            self.0.lock().unwrap().push(op.key.clone());
            Outcome::Ok(Value::Null)
        }
    }

    #[async_trait]
    impl SystemAdapter for Keys {
        async fn roles(&self) -> BTreeMap<String, Role> {
            BTreeMap::new()
        }
        async fn connect(&self, _node: &str) -> Result<Box<dyn SystemClient>, String> {
            Ok(Box::new(KeysClient(self.0.clone())))
        }
        async fn replica_lookups(&self, keys: &[String]) -> crate::run_folder::Lookups {
            let answers = keys.iter().map(|k| (k.clone(), json!("absent"))).collect();
            BTreeMap::from([("n1".to_string(), answers)])
        }
    }

    #[tokio::test]
    async fn the_wire_sees_the_prefix_and_the_run_its_own_names() {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let adapter = Prefixed::new(Arc::new(Keys(sent.clone())), "chaos-r1-".into());
        let mut client = adapter.connect("n1").await.unwrap();
        let op = Operation {
            f: "read",
            key: "k0".into(),
            value: Value::Null,
        };
        client.invoke(&op).await;
        assert_eq!(*sent.lock().unwrap(), ["chaos-r1-k0"]);
        let lookups = adapter.replica_lookups(&["k0".to_string()]).await;
        assert_eq!(lookups["n1"].keys().collect::<Vec<_>>(), ["k0"]);
    }
}
