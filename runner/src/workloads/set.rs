//! The set workload: adds of unique elements to a few sets, and reads of a whole set.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::{Workload, WorkloadConfig};
use crate::systems::Operation;

pub(super) struct Set;

impl Workload for Set {
    fn name(&self) -> &'static str {
        "set"
    }

    fn operation_kinds(&self) -> &'static [&'static str] {
        &["read", "add", "final-read"]
    }

    fn key(&self, index: u32) -> String {
        format!("set{index}")
    }

    /// One read in ten; every add a fresh element.
    fn next(
        &self,
        config: &WorkloadConfig,
        rng: &mut ChaCha8Rng,
        _last_seen: &HashMap<String, Value>,
        values: &AtomicU64,
    ) -> Operation {
        next(self, config, rng, values)
    }

    fn final_read(&self) -> Option<&'static str> {
        Some("final-read")
    }
}

fn next(set: &Set, config: &WorkloadConfig, rng: &mut ChaCha8Rng, values: &AtomicU64) -> Operation {
    let key = set.key(rng.random_range(0..config.keys));
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
