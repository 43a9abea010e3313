//! The fencing workload's files: fencing.jsonl (one [`FencingLine`] a line: every event of every
//! round, written by the workload as each round ends, read by the `fencing` check) and
//! probe.json (the conditional-write probe's answer before the workload ([`Probe`]), read by the
//! `conditional-writes` check).

use std::path::Path;

use chaos_s3::FencingEvent;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Value};

use super::JsonlWriter;
use crate::error::Result;

/// fencing.jsonl's name in a run folder.
pub const FENCING: &str = "fencing.jsonl";

/// probe.json's name in a run folder.
pub const PROBE: &str = "probe.json";

/// One line of fencing.jsonl: chaos-s3's event with its round and the run clock's time, or a
/// round that did not start. Written as one JSON object, its keys in order of their names:
/// `{"owner":"w1a","round":1,"run_time":33871736579,"term":1,"time":10842,"type":"takeover_started"}`.
#[derive(Debug, Clone, PartialEq)]
pub enum FencingLine {
    /// An event of round `round`; its `time` counts from the round's start, `run_time` is the
    /// same moment on the run clock (None in a line written before it was recorded).
    Event {
        round: u64,
        run_time: Option<u64>,
        event: FencingEvent,
    },
    /// A round that could not start (its bucket could not be made), and why.
    NotStarted {
        round: u64,
        run_time: Option<u64>,
        reason: String,
    },
}

/// `type` of a round that did not start.
const NOT_STARTED: &str = "round_not_started";

impl FencingLine {
    pub fn round(&self) -> u64 {
        match self {
            FencingLine::Event { round, .. } | FencingLine::NotStarted { round, .. } => *round,
        }
    }

    fn to_value(&self) -> Value {
        let (mut line, round, run_time) = match self {
            FencingLine::Event {
                round,
                run_time,
                event,
            } => (
                serde_json::to_value(event).unwrap_or(Value::Null),
                round,
                run_time,
            ),
            FencingLine::NotStarted {
                round,
                run_time,
                reason,
            } => (
                json!({"type": NOT_STARTED, "reason": reason}),
                round,
                run_time,
            ),
        };
        line["round"] = json!(round);
        if let Some(t) = run_time {
            line["run_time"] = json!(t);
        }
        line
    }

    /// A line as written; None when it is no line of fencing.jsonl (an event of an unknown
    /// type, a line cut short).
    pub fn parse(text: &str) -> Option<FencingLine> {
        let v: Value = serde_json::from_str(text).ok()?;
        let round = v["round"].as_u64().unwrap_or(0);
        let run_time = v["run_time"].as_u64();
        if v["type"] == NOT_STARTED {
            return Some(FencingLine::NotStarted {
                round,
                run_time,
                reason: v["reason"].as_str().unwrap_or_default().to_string(),
            });
        }
        Some(FencingLine::Event {
            round,
            run_time,
            event: serde_json::from_value(v).ok()?,
        })
    }
}

impl Serialize for FencingLine {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

/// fencing.jsonl as it is written: one flushed line per event.
pub struct FencingLog(JsonlWriter);

impl FencingLog {
    pub fn create(run_dir: &Path) -> std::io::Result<Self> {
        JsonlWriter::create(&run_dir.join(FENCING)).map(FencingLog)
    }

    pub fn write(&self, line: &FencingLine) {
        self.0.write(line);
    }
}

/// The lines of a run folder's fencing.jsonl that read, in order (none when it is missing).
pub fn read_fencing(run_dir: &Path) -> Vec<FencingLine> {
    super::read_optional(run_dir, FENCING)
        .unwrap_or_default()
        .lines()
        .filter_map(FencingLine::parse)
        .collect()
}

/// probe.json: what the conditional-write probe tried on the store and what it answered. The
/// fields are written in this order (of their names, as the file always had them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Both conditions were refused as they must be.
    #[serde(default)]
    pub enforced: bool,
    /// The node probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What was tried and what the store answered, in one sentence.
    #[serde(default)]
    pub sentence: String,
    /// The answers, one line per step.
    #[serde(default)]
    pub steps: Vec<String>,
}

impl Probe {
    /// Writes probe.json (pretty JSON).
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        super::write_json(run_dir, PROBE, self)
    }

    /// A run folder's probe.json, or why it cannot be read (missing: the probe did not run).
    pub fn read(run_dir: &Path) -> Result<Probe> {
        super::read_json(run_dir, PROBE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("chaos-fencing-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The lines written read back; they are the JSON objects the workload always wrote (keys
    /// in order of their names), and a line without `run_time` or of an unknown type reads as
    /// it did.
    #[test]
    fn fencing_lines_written_read_back() {
        let dir = folder("lines");
        let log = FencingLog::create(&dir).unwrap();
        let lines = [
            FencingLine::Event {
                round: 1,
                run_time: Some(33871736579),
                event: FencingEvent::TakeoverStarted {
                    time: 10842,
                    owner: "w1a".into(),
                    term: 1,
                },
            },
            FencingLine::NotStarted {
                round: 2,
                run_time: Some(40000000000),
                reason: "CreateBucket b-f2: timed out".into(),
            },
        ];
        for line in &lines {
            log.write(line);
        }
        assert_eq!(read_fencing(&dir), lines);
        let text = std::fs::read_to_string(dir.join(FENCING)).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            r#"{"owner":"w1a","round":1,"run_time":33871736579,"term":1,"time":10842,"type":"takeover_started"}"#
        );
        std::fs::write(
            dir.join(FENCING),
            "{\"owner\":\"w\",\"round\":3,\"term\":2,\"time\":5,\"type\":\"takeover_started\"}\n\
             {\"round\":3,\"time\":6,\"type\":\"something_else\"}\n{\"round\":3,\"ti",
        )
        .unwrap();
        let read = read_fencing(&dir);
        assert_eq!(read.len(), 1);
        assert!(
            matches!(&read[0], FencingLine::Event { round: 3, run_time: None, event } if event.time() == 5)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_probe_written_reads_back() {
        let dir = folder("probe");
        let probe = Probe {
            node: Some("s3-1".into()),
            enforced: false,
            sentence: "the store does not enforce conditional writes".into(),
            steps: vec!["If-None-Match: * on a new key: accepted".into()],
        };
        probe.write(&dir).unwrap();
        let text = std::fs::read_to_string(dir.join(PROBE)).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(Probe::read(&dir).unwrap(), probe);
        std::fs::write(dir.join(PROBE), r#"{"enforced": true, "sentence": "ok"}"#).unwrap();
        let read = Probe::read(&dir).unwrap();
        assert!(read.enforced && read.node.is_none() && read.steps.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
