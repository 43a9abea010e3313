//! The create workload: creates of fresh keys, recorded as `cas [nil, v]` (systems::CREATE says
//! why).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use super::{kind, Workload, WorkloadConfig};
use crate::systems::{Operation, CREATE};

pub(super) struct Create;

impl Workload for Create {
    fn name(&self) -> &'static str {
        "create"
    }

    fn operation_kinds(&self) -> &'static [&'static str] {
        &["cas", "resend", "read"]
    }

    fn key(&self, index: u32) -> String {
        format!("k{index}")
    }

    fn takes(&self) -> &'static [&'static str] {
        &["duplicate-after"]
    }

    /// A fresh key each time: a create can only fail if someone created it before.
    fn next(
        &self,
        config: &WorkloadConfig,
        _rng: &mut ChaCha8Rng,
        _last_seen: &HashMap<String, Value>,
        values: &AtomicU64,
    ) -> Operation {
        next(config, values)
    }

    fn touched_keys(&self, config: &WorkloadConfig) -> Vec<String> {
        kind::created(config)
    }
}

fn next(config: &WorkloadConfig, values: &AtomicU64) -> Operation {
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
