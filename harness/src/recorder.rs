//! Recording as things happen: history.jsonl (every operation's invocation and completion). Each
//! line is flushed at once, so a harness that dies leaves a history that can still be checked.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::run_folder::JsonlWriter;
use crate::systems::{Operation, Outcome};

pub struct Recorder {
    history: JsonlWriter,
    next_index: Mutex<u64>,
    start: Instant,
    completed: watch::Sender<u64>,
    /// Completions so far by outcome: ok, fail, info (for the progress line).
    outcomes: [AtomicU64; 3],
}

impl Recorder {
    pub fn create(path: &Path, start: Instant) -> std::io::Result<Self> {
        Ok(Recorder {
            history: JsonlWriter::create(path)?,
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

    fn count(&self, event: &Value) {
        if let Some(kind) = event["type"].as_str() {
            self.count_kind(kind);
        }
    }

    fn count_kind(&self, kind: &str) {
        let slot = match kind {
            "ok" => 0,
            "fail" => 1,
            "info" => 2,
            _ => return,
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

    /// Writes one operation's line: index and time are taken under one lock so the file is
    /// ordered by both.
    fn write(&self, mut line: Line<'_>) {
        let mut next = self.next_index.lock().unwrap_or_else(|e| e.into_inner());
        line.index = *next;
        line.time = self.now();
        self.history.write(&line);
        *next += 1;
        self.count_kind(line.kind);
    }

    /// Writes an event that happened at `time` (run clock) elsewhere, e.g. a fencing round's
    /// events after the round: the caller keeps times ascending.
    pub fn write_at(&self, mut event: Value, time: u64) {
        let mut next = self.next_index.lock().unwrap_or_else(|e| e.into_inner());
        event["index"] = json!(*next);
        event["time"] = json!(time);
        self.history.write(&event);
        *next += 1;
        self.count(&event);
        if event["type"] != "invoke" {
            self.completed.send_modify(|n| *n += 1);
        }
    }

    pub fn invoke(&self, process: u64, op: &Operation, node: &str) {
        self.write(Line::new(process, "invoke", op, op_value(op), node));
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
        let mut line = match outcome {
            Outcome::Ok(v) => Line::new(process, "ok", op, v, node),
            Outcome::Fail(e) => Line {
                error: Some(e),
                ..Line::new(process, "fail", op, op_value(op), node)
            },
            Outcome::Info(e) => Line {
                error: Some(e),
                ..Line::new(process, "info", op, op_value(op), node)
            },
        };
        if let Some((client, call)) = &identity {
            line.client = Some(client);
            line.call = Some(call);
        }
        self.write(line);
        self.completed.send_modify(|n| *n += 1);
    }
}

/// One operation's line of history.jsonl, written without building a JSON object first (the
/// recorder writes two per operation). The fields are in the order of their names, the order
/// a `serde_json::Value` object writes its keys in, so the line is the same, byte for byte.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    f: &'a str,
    index: u64,
    key: &'a str,
    node: &'a str,
    process: u64,
    time: u64,
    #[serde(rename = "type")]
    kind: &'static str,
    value: &'a Value,
}

impl<'a> Line<'a> {
    fn new(
        process: u64,
        kind: &'static str,
        op: &'a Operation,
        value: &'a Value,
        node: &'a str,
    ) -> Self {
        Line {
            call: None,
            client: None,
            error: None,
            f: op.f,
            index: 0,
            key: &op.key,
            node,
            process,
            time: 0,
            kind,
            value,
        }
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

    /// The lines are those a JSON object of the same fields writes, byte for byte (what the
    /// recorder wrote before it serialized its lines directly).
    #[test]
    fn lines_are_the_json_objects_of_their_fields() {
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
        let times: Vec<u64> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["time"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        let expected = [
            json!({"process": 0, "type": "invoke", "f": "read", "key": "k\"1", "value": null, "node": "etcd1"}),
            json!({"process": 0, "type": "ok", "f": "read", "key": "k\"1", "value": 7, "node": "etcd1"}),
            json!({"process": 1, "type": "invoke", "f": "cas", "key": "k\"1", "value": [3, {"b": 1, "a": "é\n"}], "node": "etcd2"}),
            json!({"process": 1, "type": "fail", "f": "cas", "key": "k\"1", "value": [3, {"b": 1, "a": "é\n"}], "node": "etcd2", "error": "compare failed"}),
            json!({"process": 17, "type": "invoke", "f": "final-read", "key": "k\"1", "value": null, "node": "etcd3"}),
            json!({"process": 17, "type": "info", "f": "cas", "key": "k\"1", "value": [3, {"b": 1, "a": "é\n"}], "node": "n", "error": "reset", "client": "c0ffee", "call": "c0ffee/2"}),
        ];
        let expected: String = expected
            .into_iter()
            .zip(&times)
            .enumerate()
            .map(|(i, (mut e, t))| {
                e["index"] = json!(i);
                e["time"] = json!(t);
                format!("{}\n", serde_json::to_string(&e).unwrap())
            })
            .collect();
        assert_eq!(text, expected);
        assert_eq!(recorder.tally(), (1, 1, 1));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
