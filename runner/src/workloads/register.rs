//! The register workload: reads, writes of unique values and compare-and-sets on a few keys.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use super::{Workload, WorkloadConfig};
use crate::systems::Operation;

pub(super) struct Register;

impl Workload for Register {
    fn name(&self) -> &'static str {
        "register"
    }

    fn operation_kinds(&self) -> &'static [&'static str] {
        &["read", "write", "cas"]
    }

    fn key(&self, index: u32) -> String {
        format!("k{index}")
    }

    /// Half reads; a quarter cas from the value this process last saw on the key (a write when
    /// it saw none); the rest writes.
    fn next(
        &self,
        config: &WorkloadConfig,
        rng: &mut ChaCha8Rng,
        last_seen: &HashMap<String, Value>,
        values: &AtomicU64,
    ) -> Operation {
        next(self, config, rng, last_seen, values)
    }
}

fn next(
    register: &Register,
    config: &WorkloadConfig,
    rng: &mut ChaCha8Rng,
    last_seen: &HashMap<String, Value>,
    values: &AtomicU64,
) -> Operation {
    let key = register.key(rng.random_range(0..config.keys));
    let roll: f64 = rng.random();
    let fresh = || Value::from(values.fetch_add(1, Ordering::Relaxed));
    if roll < 0.5 {
        Operation {
            f: "read",
            key,
            value: Value::Null,
        }
    } else if let (true, Some(expected)) = (roll < 0.75, last_seen.get(&key)) {
        Operation {
            f: "cas",
            value: json!([expected, fresh()]),
            key,
        }
    } else {
        Operation {
            f: "write",
            key,
            value: fresh(),
        }
    }
}
