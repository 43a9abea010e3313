//! The stream workload (Ozone): streaming puts of a set length, each to a fresh key.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::{kind, Workload, WorkloadConfig};
use crate::scenario::units::format_duration;
use crate::systems::Operation;

pub(super) struct Stream;

impl Workload for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }

    fn operation_kinds(&self) -> &'static [&'static str] {
        &["put", "final-read"]
    }

    fn key(&self, index: u32) -> String {
        format!("s{index}")
    }

    fn takes(&self) -> &'static [&'static str] {
        &["stream"]
    }

    fn describe(&self, c: &WorkloadConfig) -> String {
        format!(
            "{} processes streaming fresh keys of {} bytes, {}/s for {}",
            c.processes,
            c.stream_length,
            c.rate,
            format_duration(c.duration)
        )
    }

    /// A fresh key each time, so a read tells which put it holds.
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

    fn final_read(&self) -> Option<&'static str> {
        Some("final-read")
    }
}

fn next(config: &WorkloadConfig, values: &AtomicU64) -> Operation {
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
