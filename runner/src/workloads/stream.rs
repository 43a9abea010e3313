//! The stream workload (Ozone): streaming puts of a set length, each to a fresh key.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::WorkloadConfig;
use crate::systems::Operation;

/// A fresh key each time, so a read tells which put it holds.
pub(super) fn next(config: &WorkloadConfig, values: &AtomicU64) -> Operation {
    let key = format!("s{}", values.fetch_add(1, Ordering::Relaxed));
    if let Ok(mut created) = config.created.lock() {
        created.push(key.clone());
    }
    Operation {
        f: "put",
        key,
        value: Value::from(config.stream_length),
    }
}
