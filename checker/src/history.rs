//! The history model: events as recorded (one line of `history.jsonl` each) and
//! operations (an invocation paired with its completion).
//!
//! Semantics are Jepsen's: `ok` took effect and its value is the result, `fail`
//! certainly did not take effect, `info` (or an invocation that never completed)
//! may have taken effect at any point after its invocation, or never.

use crate::fx::FxHashMap as HashMap;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::fmt;

/// What an event says about its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventType {
    Invoke,
    Ok,
    Fail,
    Info,
}

/// One line of `history.jsonl`:
/// `{"index":0,"time":1234567,"process":3,"type":"invoke","f":"cas","key":"k1","value":[1,2]}`.
///
/// Unknown fields are ignored on read; `None` fields are not written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the history (the recorder numbers events from 0).
    #[serde(default)]
    pub index: u64,
    /// Nanoseconds since the run began (monotonic); 0 when unknown.
    #[serde(default)]
    pub time: u64,
    pub process: u64,
    #[serde(rename = "type")]
    pub kind: EventType,
    pub f: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_string"
    )]
    pub key: Option<String>,
    #[serde(default)]
    pub value: Value,
    /// Why a fail or info happened.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_string"
    )]
    pub error: Option<String>,
    /// Which node served the operation.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_string"
    )]
    pub node: Option<String>,
    /// Retry identity (with `call`): a retried invocation repeats both. On the invocation, or
    /// on the completion when the client learns it only while performing the operation.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_string"
    )]
    pub client: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_string"
    )]
    pub call: Option<String>,
}

impl Event {
    /// A convenience constructor for tests and generators.
    pub fn new(process: u64, kind: EventType, f: &str, key: Option<&str>, value: Value) -> Event {
        Event {
            index: 0,
            time: 0,
            process,
            kind,
            f: f.to_string(),
            key: key.map(str::to_string),
            value,
            error: None,
            node: None,
            client: None,
            call: None,
        }
    }
}

/// Accepts a string or a number (recorders differ) for identity-like fields.
fn de_opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
    })
}

/// How an operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Took effect; `output` is the result.
    Ok,
    /// Certainly did not take effect.
    Fail,
    /// Unknown outcome: an `info` completion or no completion at all.
    Info,
}

/// An invocation paired with its completion; also how a check's result shows an operation
/// (an explanation's, a witness's).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Operation {
    /// Position in `History::ops` (ordered by invocation).
    pub id: usize,
    pub process: u64,
    pub f: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The invocation's value.
    pub value: Value,
    pub status: Status,
    /// The completion's value (`Null` when there was no completion).
    pub output: Value,
    /// Position of the invocation in `History::events`.
    pub invoke: usize,
    /// Position of the completion in `History::events`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete: Option<usize>,
    pub invoke_time: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete_time: Option<u64>,
    /// 1-based line of the invocation in the file it was read from (0 if built in memory).
    pub line: usize,
    /// What the client said of a fail or info (`already exists (call 12 sent again)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The node the operation went to, when the history says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The client and call id of a call that may be sent again. An operation a check's result
    /// shows leaves them out: the retry check's duplicates name them once, beside their ops.
    #[serde(skip_serializing)]
    pub client: Option<String>,
    #[serde(skip_serializing)]
    pub call: Option<String>,
}

impl Operation {
    /// `read -> 3` / `write 4` / `cas [1 2] -> ok`. A long array (a set read) shows its
    /// first elements and its length.
    pub fn describe(&self) -> String {
        let arg = if self.value.is_null() {
            String::new()
        } else {
            format!(" {}", show_short(&self.value))
        };
        let res = match self.status {
            Status::Ok if !self.output.is_null() && self.output != self.value => {
                format!(" -> {}", show_short(&self.output))
            }
            Status::Ok => String::new(),
            Status::Fail => " (fail)".into(),
            Status::Info => " (outcome unknown)".into(),
        };
        format!("{}{arg}{res}", self.f)
    }

    /// `op #12, process 3, line 40`.
    pub fn locate(&self) -> String {
        if self.line > 0 {
            format!(
                "op #{}, process {}, line {}",
                self.id, self.process, self.line
            )
        } else {
            format!("op #{}, process {}", self.id, self.process)
        }
    }
}

/// Elements of an array shown by [`Operation::describe`].
const SHOW_ITEMS: usize = 16;

fn show_short(v: &Value) -> String {
    match v {
        Value::Array(a) if a.len() > SHOW_ITEMS => {
            let items: Vec<String> = a[..SHOW_ITEMS].iter().map(|x| x.to_string()).collect();
            format!("[{},... ({} elements)]", items.join(","), a.len())
        }
        v => show(v),
    }
}

/// A malformed sequence of events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryError {
    /// Position of the offending event.
    pub event: usize,
    pub message: String,
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event {}: {}", self.event, self.message)
    }
}

impl std::error::Error for HistoryError {}

/// A history: the events in order and the operations they form.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct History {
    pub events: Vec<Event>,
    pub ops: Vec<Operation>,
}

impl History {
    /// Pairs invocations with completions by process.
    ///
    /// A completion without a pending invocation on its process, or whose `f`
    /// differs from the invocation's, is an error. A second invocation on a
    /// process that still has one pending leaves the first with an unknown
    /// outcome (the process crashed and was reused).
    pub fn from_events(events: Vec<Event>) -> Result<History, HistoryError> {
        let lines: Vec<usize> = vec![0; events.len()];
        Self::from_events_with_lines(events, &lines)
    }

    pub(crate) fn from_events_with_lines(
        events: Vec<Event>,
        lines: &[usize],
    ) -> Result<History, HistoryError> {
        Self::pair(events, lines, false).map(|(history, _)| history)
    }

    /// The one pairing of invocations with completions (every reader of a history goes
    /// through it). Strict, a completion that pairs with no pending invocation of its process
    /// (none is pending, or its `f` differs) is an error; `lenient`, it is left out of the
    /// history and its line (from `lines`) returned, so that a reader that shows what it can
    /// (the report of a run folder a harness died writing) still shows the rest.
    pub(crate) fn pair(
        events: Vec<Event>,
        lines: &[usize],
        lenient: bool,
    ) -> Result<(History, Vec<usize>), HistoryError> {
        let mut ops: Vec<Operation> = Vec::new();
        let mut pending: HashMap<u64, usize> = HashMap::default();
        let mut kept: Vec<Event> = Vec::with_capacity(events.len());
        let mut skipped = Vec::new();
        for (n, e) in events.into_iter().enumerate() {
            let line = lines.get(n).copied().unwrap_or(0);
            // The event's position among those kept (all of them, unless lenient).
            let i = kept.len();
            match e.kind {
                EventType::Invoke => {
                    // A reused process: the earlier operation stays unknown.
                    pending.insert(e.process, ops.len());
                    ops.push(Operation {
                        id: ops.len(),
                        process: e.process,
                        f: e.f.clone(),
                        key: e.key.clone(),
                        value: e.value.clone(),
                        status: Status::Info,
                        output: Value::Null,
                        invoke: i,
                        complete: None,
                        invoke_time: e.time,
                        complete_time: None,
                        error: None,
                        node: e.node.clone(),
                        client: e.client.clone(),
                        call: e.call.clone(),
                        line,
                    });
                }
                kind => {
                    let unpaired = match pending.get(&e.process) {
                        None => Some(
                            format!(
                                "{:?} completion for process {} which has no pending invocation",
                                kind, e.process
                            )
                            .to_lowercase(),
                        ),
                        Some(&id) if ops[id].f != e.f => Some(format!(
                            "completion f {:?} for process {} does not match its invocation f {:?}",
                            e.f, e.process, ops[id].f
                        )),
                        // Times are monotonic from the run's start (0: unknown): a completion
                        // before its invocation contradicts the history's own clock.
                        Some(&id)
                            if e.time != 0
                                && ops[id].invoke_time != 0
                                && e.time < ops[id].invoke_time =>
                        {
                            Some(format!(
                                "completion at time {} is before its invocation at time {}{} (process {}): the history contradicts itself",
                                e.time,
                                ops[id].invoke_time,
                                if ops[id].line > 0 { format!(" on line {}", ops[id].line) } else { String::new() },
                                e.process
                            ))
                        }
                        Some(_) => None,
                    };
                    if let Some(message) = unpaired {
                        if lenient {
                            skipped.push(line);
                            continue;
                        }
                        return Err(HistoryError { event: n, message });
                    }
                    let id = pending.remove(&e.process).expect("pending, as just seen");
                    let op = &mut ops[id];
                    op.status = match kind {
                        EventType::Ok => Status::Ok,
                        EventType::Fail => Status::Fail,
                        _ => Status::Info,
                    };
                    op.output = e.value.clone();
                    op.complete = Some(i);
                    op.complete_time = Some(e.time);
                    op.error = e.error.clone();
                    if e.node.is_some() {
                        op.node = e.node.clone();
                    }
                    if op.key.is_none() {
                        op.key = e.key.clone();
                    }
                    if op.client.is_none() && op.call.is_none() {
                        op.client = e.client.clone();
                        op.call = e.call.clone();
                    }
                }
            }
            kept.push(e);
        }
        Ok((History { events: kept, ops }, skipped))
    }

    /// Operations grouped by key (operations without a key share the `None` group),
    /// in order of first appearance.
    pub fn by_key(&self) -> Vec<(Option<String>, Vec<&Operation>)> {
        let mut index: HashMap<Option<&str>, usize> = HashMap::default();
        let mut groups: Vec<(Option<String>, Vec<&Operation>)> = Vec::new();
        for op in &self.ops {
            let k = op.key.as_deref();
            let g = *index.entry(k).or_insert_with(|| {
                groups.push((op.key.clone(), Vec::new()));
                groups.len() - 1
            });
            groups[g].1.push(op);
        }
        groups
    }
}

/// The `f` of an operation that sends an earlier call again, byte for byte (same client and
/// call id): a correct system answers it as it answered the first and changes nothing, so the
/// linearizability models leave it out and `retry-consistent` judges it.
pub const RESEND: &str = "resend";

/// Renders a JSON value compactly the way a person would write it (strings unquoted
/// only when they are bare words).
pub fn show(v: &Value) -> String {
    match v {
        Value::Null => "nil".to_string(),
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}
