//! The s3-object workload: gets, puts, deletes and conditional puts (If-None-Match: *,
//! If-Match) on a few objects, with the scenario's mix.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use super::{Workload, WorkloadConfig};
use crate::systems::Operation;

pub(super) struct S3Object;

impl Workload for S3Object {
    fn name(&self) -> &'static str {
        "s3-object"
    }

    fn operation_kinds(&self) -> &'static [&'static str] {
        &["get", "put", "delete"]
    }

    fn key(&self, index: u32) -> String {
        format!("o{index}")
    }

    fn takes(&self) -> &'static [&'static str] {
        &["mix"]
    }

    fn needs_object_store(&self) -> bool {
        true
    }

    /// One s3-object operation, drawn with the mix's weights. Bodies are unique; put-if-match
    /// expects the last ETag this process saw for the key (a plain get when it saw none).
    fn next(
        &self,
        config: &WorkloadConfig,
        rng: &mut ChaCha8Rng,
        last_seen: &HashMap<String, Value>,
        values: &AtomicU64,
    ) -> Operation {
        next(self, config, rng, last_seen, values)
    }

    /// What put-if-match expects: the last ETag this process saw for the key.
    fn remember(&self, last_seen: &mut HashMap<String, Value>, op: &Operation, answer: &Value) {
        match answer.get("etag").filter(|e| e.is_string()) {
            Some(etag) => {
                last_seen.insert(op.key.clone(), etag.clone());
            }
            None => {
                last_seen.remove(&op.key);
            }
        }
    }

    fn final_read(&self) -> Option<&'static str> {
        Some("get")
    }
}

fn next(
    s3: &S3Object,
    config: &WorkloadConfig,
    rng: &mut ChaCha8Rng,
    last_seen: &HashMap<String, Value>,
    values: &AtomicU64,
) -> Operation {
    let key = s3.key(rng.random_range(0..config.keys));
    let m = config.mix;
    let mut roll = rng.random_range(0..m.total().max(1));
    let mut pick = |weight: u32| {
        let hit = roll < weight;
        roll = roll.saturating_sub(weight);
        hit
    };
    let body = || Value::from(format!("b{}", values.fetch_add(1, Ordering::Relaxed)));
    let get = |key| Operation {
        f: "get",
        key,
        value: Value::Null,
    };
    if pick(m.get) {
        get(key)
    } else if pick(m.put) {
        Operation {
            f: "put",
            key,
            value: json!({ "body": body() }),
        }
    } else if pick(m.delete) {
        Operation {
            f: "delete",
            key,
            value: Value::Null,
        }
    } else if pick(m.put_if_none_match) {
        Operation {
            f: "put",
            key,
            value: json!({ "body": body(), "if_none_match": "*" }),
        }
    } else {
        match last_seen.get(&key) {
            Some(etag) => Operation {
                f: "put",
                value: json!({ "body": body(), "if_match": etag }),
                key,
            },
            None => get(key),
        }
    }
}
