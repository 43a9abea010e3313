//! faults.jsonl: one [`FaultEvent`] a line, written by the fault engine as things happen (each
//! step's apply, undo, follow-up and `ready`, what the proxies and chaosfs did, nodes that exited,
//! the final heal) and read back by the checks, the report, replay and shrink.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JsonlWriter;

/// The file's name in a run folder.
pub const FAULTS: &str = "faults.jsonl";

/// Node -> the nodes it drops packets from (a partition's grudge).
pub type Grudge = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// Where in a fault's life an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// A step's action, when its trigger fired.
    Apply,
    /// Its undo, after `for:`.
    Undo,
    /// Its follow-up (`then:`).
    Then,
    /// The nodes a restart or start brought back answer again (or did not in time).
    Ready,
    /// What happened to one request or node without a step: a lost reply, a chaosfs
    /// injection, a node that exited by itself.
    Effect,
    /// The heal after the workload.
    FinalHeal,
}

impl Phase {
    /// As faults.jsonl spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Apply => "apply",
            Phase::Undo => "undo",
            Phase::Then => "then",
            Phase::Ready => "ready",
            Phase::Effect => "effect",
            Phase::FinalHeal => "final-heal",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of faults.jsonl. The fields are written in this order, the optional ones only
/// when present; reading, a field a hand-written line lacks takes its default.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FaultEvent {
    /// Nanoseconds since the run began, when the action completed.
    #[serde(default)]
    pub time: u64,
    /// When the action was started, same clock.
    #[serde(default)]
    pub started: u64,
    /// Index of the scenario's fault step; absent for effects and the final heal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    #[serde(default)]
    pub action: String,
    pub phase: Phase,
    #[serde(default)]
    pub targets: Vec<String>,
    /// A partition's mode (`isolate`, `halves`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// A partition's sides, on its apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grudge: Option<Grudge>,
    /// What fired the step (`at 10s`, a log line, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// "ok", or what went wrong.
    #[serde(default)]
    pub outcome: String,
    /// What the action reached or an effect was (a lost reply, a chaosfs injection, an exit's
    /// code and last log errors, how long nodes took to answer again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Value>,
    /// clock-skew, restore-clock: the node's wall-clock offset from then on (`+70s`, `+0s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
}

/// An `exited` effect's detail: a node whose program exited though no fault took it down.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeExit {
    pub exit_code: i64,
    /// Docker's FinishedAt (RFC 3339).
    pub finished_at: String,
    /// The last error lines of its log, the one that says it is going down first if any.
    pub last_errors: Vec<String>,
}

impl FaultEvent {
    /// Its detail read as the type its kind writes (None: none, or not of that shape).
    pub fn detail_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.detail.clone()?).ok()
    }

    /// The same event with its detail.
    pub fn with_detail(mut self, detail: &impl Serialize) -> Self {
        self.detail = serde_json::to_value(detail).ok();
        self
    }

    /// An event of no step that happened at `time` to `node` (an effect, a final heal).
    pub fn at(time: u64, action: String, phase: Phase, node: String, outcome: String) -> Self {
        FaultEvent {
            time,
            started: time,
            step: None,
            action,
            phase,
            targets: vec![node],
            mode: None,
            grudge: None,
            trigger: None,
            outcome,
            detail: None,
            offset: None,
        }
    }

    /// Whether it succeeded (its outcome is `ok`).
    pub fn ok(&self) -> bool {
        self.outcome == "ok"
    }

    /// Whether it is a step's action that succeeded.
    pub fn applied(&self) -> bool {
        self.phase == Phase::Apply && self.ok()
    }

    /// Its texts with credentials taken out, for what the report shows.
    pub fn redacted(mut self) -> Self {
        use crate::redact::{redact, redact_value};
        for text in [&mut self.action, &mut self.outcome]
            .into_iter()
            .chain(&mut self.targets)
            .chain(self.mode.as_mut())
            .chain(self.trigger.as_mut())
            .chain(self.offset.as_mut())
        {
            *text = redact(text);
        }
        if let Some(grudge) = &mut self.grudge {
            *grudge = std::mem::take(grudge)
                .into_iter()
                .map(|(node, from)| (node, from.iter().map(|n| redact(n)).collect()))
                .collect();
        }
        if let Some(detail) = &mut self.detail {
            redact_value(detail);
        }
        self
    }
}

/// faults.jsonl as it is written: one flushed line per event.
pub struct FaultLog(JsonlWriter);

impl FaultLog {
    pub fn create(run_dir: &Path) -> std::io::Result<Self> {
        JsonlWriter::create(&run_dir.join(FAULTS)).map(FaultLog)
    }

    pub fn write(&self, event: &FaultEvent) {
        self.0.write(event);
    }
}

/// The events of a run folder's faults.jsonl, in their order; none when the file is missing or
/// unreadable, and a line that is not an event is left out.
pub fn read_faults(run_dir: &Path) -> Vec<FaultEvent> {
    super::read_optional(run_dir, FAULTS)
        .map(|text| parse_faults(&text))
        .unwrap_or_default()
}

/// The events of faults.jsonl's text.
pub fn parse_faults(text: &str) -> Vec<FaultEvent> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines the engine wrote before the event had a type read back and write again byte
    /// for byte.
    #[test]
    fn events_read_and_write_as_they_were_written() {
        let lines = [
            r#"{"time":5,"started":4,"step":0,"action":"partition","phase":"apply","targets":["n1"],"mode":"isolate","grudge":{"n1":["n2","n3"],"n2":["n1"]},"trigger":"at 1s","outcome":"ok"}"#,
            r#"{"time":6,"started":6,"step":0,"action":"heal","phase":"undo","targets":["n1"],"outcome":"ok"}"#,
            r#"{"time":7,"started":7,"step":1,"action":"restart","phase":"ready","targets":["n2"],"outcome":"answering again after 1.0 s","detail":{"after_s":1.0,"not_answering":[]}}"#,
            r#"{"time":8,"started":8,"action":"exited","phase":"effect","targets":["n3"],"outcome":"exited by itself (exit code 2)","detail":{"exit_code":2}}"#,
            r#"{"time":9,"started":9,"action":"restore-clock","phase":"final-heal","targets":["n1"],"outcome":"ok","offset":"+0s"}"#,
            r#"{"time":9,"started":9,"step":2,"action":"clock-skew","phase":"then","targets":["n1"],"outcome":"ok","offset":"+70s"}"#,
        ];
        for line in lines {
            let event: FaultEvent = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&event).unwrap(), line);
        }
        let phases: Vec<Phase> = parse_faults(&lines.join("\n"))
            .iter()
            .map(|e| e.phase)
            .collect();
        use Phase::*;
        assert_eq!(phases, [Apply, Undo, Ready, Effect, FinalHeal, Then]);
    }
}
