//! The set workload: adds of unique elements to a few sets, and reads of a whole set.

use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::{key_name, WorkloadConfig};
use crate::systems::Operation;

/// One read in ten; every add a fresh element.
pub(super) fn next(config: &WorkloadConfig, rng: &mut ChaCha8Rng, values: &AtomicU64) -> Operation {
    let key = key_name(config.kind, rng.random_range(0..config.keys));
    if rng.random::<f64>() < 0.1 {
        Operation {
            f: "read",
            key,
            value: Value::Null,
        }
    } else {
        Operation {
            f: "add",
            key,
            value: Value::from(values.fetch_add(1, Ordering::Relaxed)),
        }
    }
}
