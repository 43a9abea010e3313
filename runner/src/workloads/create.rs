//! The create workload: creates of fresh keys, recorded as `cas [nil, v]` (systems::CREATE says
//! why).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use super::WorkloadConfig;
use crate::systems::{Operation, CREATE};

/// A fresh key each time: a create can only fail if someone created it before.
pub(super) fn next(config: &WorkloadConfig, values: &AtomicU64) -> Operation {
    let value = values.fetch_add(1, Ordering::Relaxed);
    let key = format!("c{value}");
    if let Ok(mut created) = config.created.lock() {
        created.push(key.clone());
    }
    Operation {
        f: CREATE,
        key,
        value: json!([Value::Null, value]),
    }
}
