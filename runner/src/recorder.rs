//! Recording as things happen: history.jsonl (every operation's invocation and completion). Each
//! line is flushed at once, so a harness that dies leaves a history that can still be checked.
//! What it records is in its own words, [`Operation`] and [`Outcome`], which the systems'
//! clients answer in and the workloads ask in.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use checker::{Event, EventType};
use serde_json::Value;
use tokio::sync::watch;

use crate::run_folder::HistoryLog;

pub struct Recorder {
    history: HistoryLog,
    next_index: Mutex<u64>,
    start: Instant,
    completed: watch::Sender<u64>,
    /// Completions so far by outcome: ok, fail, info (for the progress line).
    outcomes: [AtomicU64; 3],
}

impl Recorder {
    pub fn create(path: &Path, start: Instant) -> std::io::Result<Self> {
        Ok(Recorder {
            history: HistoryLog::create(path)?,
            next_index: Mutex::new(0),
            start,
            completed: watch::channel(0).0,
            outcomes: Default::default(),
        })
    }

    /// Completions so far: (ok, fail, info).
    pub fn tally(&self) -> (u64, u64, u64) {
        let n = |i: usize| self.outcomes[i].load(Ordering::Relaxed);
        (n(0), n(1), n(2))
    }

    fn count_kind(&self, kind: EventType) {
        let slot = match kind {
            EventType::Ok => 0,
            EventType::Fail => 1,
            EventType::Info => 2,
            EventType::Invoke => return,
        };
        self.outcomes[slot].fetch_add(1, Ordering::Relaxed);
    }

    /// Nanoseconds since the run began (monotonic).
    pub fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    pub fn start(&self) -> Instant {
        self.start
    }

    /// Completed operations so far, for `after: {ops: N}` triggers.
    pub fn completed(&self) -> watch::Receiver<u64> {
        self.completed.subscribe()
    }

    /// Writes one event with the next index and `time` (now, when None): index and time are
    /// taken under one lock so the file is ordered by both.
    fn write(&self, mut event: Event, time: Option<u64>) {
        let mut next = self.next_index.lock().unwrap_or_else(|e| e.into_inner());
        event.index = *next;
        event.time = time.unwrap_or_else(|| self.now());
        self.history.write(&event);
        *next += 1;
        self.count_kind(event.kind);
        if event.kind != EventType::Invoke {
            self.completed.send_modify(|n| *n += 1);
        }
    }

    /// Writes an event that happened at `time` (run clock) elsewhere, e.g. a fencing round's
    /// events after the round: the caller keeps times ascending.
    pub fn write_at(&self, event: Event, time: u64) {
        self.write(event, Some(time));
    }

    pub fn invoke(&self, process: u64, op: &Operation, node: &str) {
        self.write(
            line(process, EventType::Invoke, op, op_value(op), node),
            None,
        );
    }

    pub fn complete(&self, process: u64, op: &Operation, outcome: &Outcome, node: &str) {
        self.complete_identified(process, op, outcome, node, None);
    }

    /// A completion with the retry identity (client id, call id) of the call that decided it,
    /// when the client learned it while performing the operation (`retry-consistent` groups by
    /// it).
    pub fn complete_identified(
        &self,
        process: u64,
        op: &Operation,
        outcome: &Outcome,
        node: &str,
        identity: Option<(String, String)>,
    ) {
        let (kind, value, error) = match outcome {
            Outcome::Ok(v) => (EventType::Ok, v, None),
            Outcome::Fail(e) => (EventType::Fail, op_value(op), Some(e)),
            Outcome::Info(e) => (EventType::Info, op_value(op), Some(e)),
        };
        let mut event = line(process, kind, op, value, node);
        event.error = error.cloned();
        if let Some((client, call)) = identity {
            event.client = Some(client);
            event.call = Some(call);
        }
        self.write(event, None);
    }
}

/// One client operation as the workload issues it (Jepsen's `f`, key and value).
#[derive(Debug, Clone)]
pub struct Operation {
    pub f: &'static str,
    pub key: String,
    pub value: Value,
}

/// How an operation ended, as history.jsonl records it: a `fail` only when it certainly did not
/// take effect, `info` whenever that is unknown (a checker must allow it either way).
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Took effect; the value is the result.
    Ok(Value),
    /// Certainly did not take effect.
    Fail(String),
    /// Unknown: it may take effect at any time, or never.
    Info(String),
}

/// One operation's line of history.jsonl (index and time are the recorder's to set).
fn line(process: u64, kind: EventType, op: &Operation, value: &Value, node: &str) -> Event {
    Event {
        node: Some(node.to_string()),
        ..Event::new(process, kind, op.f, Some(&op.key), value.clone())
    }
}

/// What an invocation (and a completion that did not succeed) records as the value: none for
/// a read.
fn op_value(op: &Operation) -> &Value {
    match op.f {
        "read" | "final-read" => &Value::Null,
        _ => &op.value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_are_indexed_flushed_and_counted() {
        let dir = std::env::temp_dir().join(format!("chaos-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.jsonl");
        let recorder = Recorder::create(&path, Instant::now()).unwrap();
        let completed = recorder.completed();
        let op = Operation {
            f: "write",
            key: "k1".into(),
            value: json!(3),
        };
        recorder.invoke(0, &op, "etcd1");
        recorder.complete(0, &op, &Outcome::Info("timeout".into()), "etcd1");
        // Read back without dropping the recorder: each line must already be on disk.
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["index"], 1);
        assert_eq!(lines[1]["type"], "info");
        assert_eq!(lines[1]["error"], "timeout");
        assert!(lines[1]["time"].as_u64() >= lines[0]["time"].as_u64());
        assert_eq!(*completed.borrow(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The lines hold the fields of the operation, its outcome and its identity, and are
    /// checker::Event's serialization (the format is defined once, by the type both the
    /// recorder and the checker use).
    #[test]
    fn lines_are_the_events_of_their_operations() {
        let dir = std::env::temp_dir().join(format!("chaos-rec-bytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.jsonl");
        let recorder = Recorder::create(&path, Instant::now()).unwrap();
        let op = |f: &'static str, value: Value| Operation {
            f,
            key: "k\"1".into(),
            value,
        };
        let read = op("read", Value::Null);
        let cas = op("cas", json!([3, {"b": 1, "a": "é\n"}]));
        recorder.invoke(0, &read, "etcd1");
        recorder.complete(0, &read, &Outcome::Ok(json!(7)), "etcd1");
        recorder.invoke(1, &cas, "etcd2");
        recorder.complete(1, &cas, &Outcome::Fail("compare failed".into()), "etcd2");
        recorder.invoke(17, &op("final-read", json!(5)), "etcd3");
        let identity = Some(("c0ffee".to_string(), "c0ffee/2".to_string()));
        recorder.complete_identified(17, &cas, &Outcome::Info("reset".into()), "n", identity);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let expected = [
            json!({"process": 0, "type": "invoke", "f": "read", "key": "k\"1", "value": null, "node": "etcd1"}),
            json!({"process": 0, "type": "ok", "f": "read", "key": "k\"1", "value": 7, "node": "etcd1"}),
            json!({"process": 1, "type": "invoke", "f": "cas", "key": "k\"1", "value": [3, {"b": 1, "a": "é\n"}], "node": "etcd2"}),
            json!({"process": 1, "type": "fail", "f": "cas", "key": "k\"1", "value": [3, {"b": 1, "a": "é\n"}], "node": "etcd2", "error": "compare failed"}),
            json!({"process": 17, "type": "invoke", "f": "final-read", "key": "k\"1", "value": null, "node": "etcd3"}),
            json!({"process": 17, "type": "info", "f": "cas", "key": "k\"1", "value": [3, {"b": 1, "a": "é\n"}], "node": "n", "error": "reset", "client": "c0ffee", "call": "c0ffee/2"}),
        ];
        assert_eq!(lines.len(), expected.len());
        for (i, (mut e, line)) in expected.into_iter().zip(&lines).enumerate() {
            e["index"] = json!(i);
            e["time"] = line["time"].clone();
            assert_eq!(line, &e);
        }
        let events: Vec<String> = text
            .lines()
            .map(|l| serde_json::to_string(&serde_json::from_str::<Event>(l).unwrap()).unwrap())
            .collect();
        assert_eq!(text, events.join("\n") + "\n");
        assert_eq!(recorder.tally(), (1, 1, 1));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
