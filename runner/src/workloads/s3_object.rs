//! The s3-object workload: gets, puts, deletes and conditional puts (If-None-Match: *,
//! If-Match) on a few objects, with the scenario's mix.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use super::{key_name, WorkloadConfig};
use crate::systems::Operation;

/// One s3-object operation, drawn with the mix's weights. Bodies are unique; put-if-match
/// expects the last ETag this process saw for the key (a plain get when it saw none).
pub(super) fn next(
    config: &WorkloadConfig,
    rng: &mut ChaCha8Rng,
    last_seen: &HashMap<String, Value>,
    values: &AtomicU64,
) -> Operation {
    let key = key_name(config.kind, rng.random_range(0..config.keys));
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
