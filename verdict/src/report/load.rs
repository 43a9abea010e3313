//! Reading a run folder for the report: only files inside the folder (symbolic links that lead
//! out are refused), every text redacted of credentials on the way in.

use std::path::{Path, PathBuf};

use checker::Status;
use serde_json::Value;

use crate::error::{HarnessError, Result};
pub use crate::redact::{redact, redact_value};
use crate::run_folder::{
    parse_faults, read, FaultEvent, RunResult, RunVerdict, ShrinkSummary, FAULTS, HISTORY, PLAN,
    RESULT,
};
pub use crate::run_folder::{parse_log, Clock, LogLine};

/// OpStatus of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpStatus {
    Ok,
    Fail,
    Info,
}

impl OpStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OpStatus::Ok => "ok",
            OpStatus::Fail => "fail",
            OpStatus::Info => "info",
        }
    }
}

/// One operation: an invocation paired with its completion (info when none came).
#[derive(Clone, Debug)]
pub struct Op {
    /// Position in invocation order (the checker's op id).
    pub id: usize,
    pub process: u64,
    pub f: String,
    pub key: Option<String>,
    pub value: Value,
    pub output: Value,
    pub outcome: OpStatus,
    /// Nanoseconds since the run began.
    pub invoke: u64,
    pub complete: Option<u64>,
    pub node: Option<String>,
    /// 1-based line of the invocation in history.jsonl.
    pub line: usize,
}

impl Op {
    /// `read -> 3`, `write 4`, `cas [1,2]`, `write 5 (unknown)`.
    pub fn describe(&self) -> String {
        let mut s = self.f.clone();
        if !self.value.is_null() {
            s.push(' ');
            s.push_str(&show(&self.value));
        }
        match self.outcome {
            OpStatus::Ok if !self.output.is_null() && self.output != self.value => {
                s.push_str(" → ");
                s.push_str(&show(&self.output));
            }
            OpStatus::Ok if self.value.is_null() => s.push_str(" → nil"),
            OpStatus::Ok => {}
            OpStatus::Fail => s.push_str(" (failed)"),
            OpStatus::Info => s.push_str(" (unknown)"),
        }
        s
    }
}

/// A field of the run's meta as people read it ([`show`]): nil when absent.
pub fn shown<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "nil".to_string(), T::to_string)
}

/// A value as people read it: strings bare, null as nil, lists with spaces.
pub fn show(v: &Value) -> String {
    match v {
        Value::Null => "nil".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(" ")),
        other => other.to_string(),
    }
}

#[derive(Clone, Debug)]
pub struct NodeLog {
    pub node: String,
    pub lines: Vec<LogLine>,
}

/// Everything the report shows, read from one run folder.
pub struct RunFolder {
    pub dir: PathBuf,
    /// The time base every time on the page counts from.
    pub clock: Clock,
    /// result.json, redacted; what the run was is its `meta`.
    pub result: RunResult,
    pub scenario: String,
    pub ops: Vec<Op>,
    pub faults: Vec<FaultEvent>,
    pub logs: Vec<NodeLog>,
    /// Lines of history.jsonl that could not be read.
    pub bad_lines: Vec<usize>,
    /// Files of the folder that are there but were not read, and why (a link that leads out
    /// of the folder, a file too large): the report says so rather than show them as empty.
    pub unread: Vec<String>,
    /// shrink/shrink.json, once `chaos shrink` has looked for a smaller schedule.
    pub shrink: Option<ShrinkSummary>,
    /// What the verdict rests on and could not be read, each with why: a missing or broken
    /// history.jsonl, a plan.json that is there and broken. The page says so in its head, and
    /// `chaos report` exits 254 unless `--partial`.
    pub incomplete: Vec<String>,
}

/// Reads `rel` inside `dir`, refusing anything whose real path is outside the folder.
pub fn read_inside(dir: &Path, rel: &str) -> Option<String> {
    crate::run_folder::read_optional(dir, rel)
}

/// A JSON file of the run folder read as its type with its secrets redacted, as every page
/// shows them.
pub fn read_redacted<T: serde::de::DeserializeOwned>(dir: &Path, rel: &str) -> Result<T> {
    let mut value = crate::run_folder::read_object(dir, rel)?;
    redact_value(&mut value);
    crate::run_folder::from_object(dir, rel, value)
}

/// result.json read as [`read_redacted`] reads a file, its odd seed or duration noted
/// ([`RunResult::of`]).
pub fn read_result_redacted(dir: &Path) -> Result<RunResult> {
    let mut value = crate::run_folder::read_object(dir, RESULT)?;
    redact_value(&mut value);
    RunResult::of(dir, value)
}

fn bad(path: &Path, what: impl std::fmt::Display) -> HarnessError {
    HarnessError::BadInput(format!("{}: {what}", path.display()))
}

/// Reads a run folder. result.json must be there; everything else is optional.
pub fn load(dir: &Path) -> Result<RunFolder> {
    if !dir.is_dir() {
        return Err(bad(dir, "not a run folder (no such directory)"));
    }
    let mut result = crate::run_folder::read_object(dir, RESULT)?;
    redact_value(&mut result);
    // Every result.json a run writes names its scenario and verdict (an interrupted run's
    // too): without them the page would be about "nil".
    for field in ["scenario", "verdict"] {
        if !result[field].is_string() {
            return Err(bad(
                &dir.join(RESULT),
                format!("no `{field}` (text): not the result.json of a chaos run"),
            ));
        }
    }
    let result = RunResult::of(dir, result)?;
    let mut unread = result.meta.odd.clone();
    let scenario = noting(
        &mut unread,
        dir,
        "scenario.yaml",
        read(dir, "scenario.yaml"),
    );
    let scenario = redact(&scenario.unwrap_or_default());
    let mut incomplete = Vec::new();
    let (ops, bad_lines) = match crate::run_folder::read_history_lenient(dir) {
        Ok((history, bad_lines)) => {
            // Lines a check would refuse (anything but a last line cut short).
            if !bad_lines.is_empty() {
                incomplete.extend(crate::run_folder::history_refused(dir));
            }
            (operations(history), bad_lines)
        }
        // A run that ended before its workload (an error, an interrupt) may have none; a
        // verdict of its checks was read from one.
        Err(_) if std::fs::symlink_metadata(dir.join(HISTORY)).is_err() => {
            if matches!(
                result.verdict,
                RunVerdict::Ok | RunVerdict::Illegal | RunVerdict::Unknown
            ) {
                incomplete.push(format!(
                    "{}: missing, and the run's verdict ({}) was checked on it",
                    dir.join(HISTORY).display(),
                    result.verdict.word()
                ));
            }
            Default::default()
        }
        Err(e) => {
            incomplete.push(e.to_string());
            Default::default()
        }
    };
    // A plan.json that is there must read, as `chaos check` holds it to.
    if std::fs::symlink_metadata(dir.join(PLAN)).is_ok() {
        if let Err(e) = crate::run_folder::read_plan(dir) {
            incomplete.push(e.to_string());
        }
    }
    let faults = noting(&mut unread, dir, FAULTS, read(dir, FAULTS));
    let faults = parse_faults(&faults.unwrap_or_default())
        .into_iter()
        .map(FaultEvent::redacted)
        .collect();
    let logs = read_logs(dir);
    Ok(RunFolder {
        dir: dir.to_path_buf(),
        clock: Clock::of_meta(&result.meta, ops.iter().map(|o| o.invoke).min()),
        result,
        scenario,
        ops,
        faults,
        logs,
        bad_lines,
        unread,
        shrink: ShrinkSummary::read(dir),
        incomplete,
    })
}

/// What was read, or None; a file that is simply missing is no news, one that is there and
/// refused is noted in `unread`.
fn noting<T>(unread: &mut Vec<String>, dir: &Path, rel: &str, read: Result<T>) -> Option<T> {
    match read {
        Ok(v) => Some(v),
        Err(e) => {
            if std::fs::symlink_metadata(dir.join(rel)).is_ok() {
                unread.push(e.to_string());
            }
            None
        }
    }
}

fn read_logs(dir: &Path) -> Vec<NodeLog> {
    let Ok(root) = dir.canonicalize() else {
        return Vec::new();
    };
    let Ok(logs_dir) = root.join("logs").canonicalize() else {
        return Vec::new();
    };
    if !logs_dir.starts_with(&root) {
        return Vec::new();
    }
    let mut names: Vec<String> = std::fs::read_dir(&logs_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| {
            let text = read_inside(dir, &format!("logs/{name}"))?;
            Some(NodeLog {
                node: name.trim_end_matches(".log").to_string(),
                lines: parse_log(&text),
            })
        })
        .collect()
}

/// The report's operations (redacted) of a history read leniently through the checker's one
/// parser and pairing ([`crate::run_folder::read_history_lenient`]): a line that is no event or
/// a completion without its invocation is noted there rather than refused, so that the report
/// shows what it can.
pub fn operations(history: checker::History) -> Vec<Op> {
    history
        .ops
        .into_iter()
        .map(|o| {
            let (mut value, mut output) = (o.value, o.output);
            redact_value(&mut value);
            redact_value(&mut output);
            Op {
                id: o.id,
                process: o.process,
                f: o.f,
                key: o.key.as_deref().map(redact),
                value,
                output,
                outcome: match o.status {
                    Status::Ok => OpStatus::Ok,
                    Status::Fail => OpStatus::Fail,
                    Status::Info => OpStatus::Info,
                },
                invoke: o.invoke_time,
                complete: o.complete_time,
                node: o.node.as_deref().map(redact),
                line: o.line,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_credentials() {
        for (input, secret) in [
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
                "wJalrXUtnFEMI",
            ),
            (
                "aws_access_key_id: AKIAIOSFODNN7EXAMPLE",
                "AKIAIOSFODNN7EXAMPLE",
            ),
            (
                "Authorization: AWS4-HMAC-SHA256 Credential=x/y, Signature=abcdef",
                "abcdef",
            ),
            ("{\"password\":\"hunter2\"}", "hunter2"),
            ("GET /b/o?X-Amz-Signature=deadbeef&x=1", "deadbeef"),
            ("http://admin:s3cr3t@minio:9000/", "s3cr3t"),
            ("--s3-secret-key 'topsecret'", "topsecret"),
        ] {
            let out = redact(input);
            assert!(!out.contains(secret), "{input} -> {out}");
            assert!(out.contains("[redacted]"), "{input} -> {out}");
        }
        assert_eq!(redact("became leader at term 3"), "became leader at term 3");
    }

    #[test]
    fn pairs_operations_and_retires_unfinished_ones() {
        let dir = std::env::temp_dir().join(format!("chaos-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = r#"{"index":0,"time":10,"process":0,"type":"invoke","f":"write","key":"k","value":1}
{"index":1,"time":20,"process":1,"type":"invoke","f":"read","key":"k","value":null}
{"index":2,"time":30,"process":0,"type":"ok","f":"write","key":"k","value":1}
{"index":3,"time":40,"process":1,"type":"ok","f":"read","key":"k","value":1}
{"index":4,"time":50,"process":2,"type":"invoke","f":"write","key":"k","value":2}
not json"#;
        std::fs::write(dir.join("history.jsonl"), text).unwrap();
        let (history, bad) = crate::run_folder::read_history_lenient(&dir).unwrap();
        let ops = operations(history);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(bad, [6]);
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[1].describe(), "read → 1");
        assert_eq!(ops[1].complete, Some(40));
        assert_eq!(ops[2].outcome, OpStatus::Info);
        assert_eq!(ops[2].line, 5);
    }

    #[test]
    fn log_prefix_is_the_time() {
        let lines = parse_log("[    1.500000] hello\ncontinued\n[   2.000000] bye");
        assert_eq!(lines[0].time, Some(1.5));
        assert_eq!(lines[1].time, Some(1.5));
        assert_eq!(lines[1].text, "continued");
        assert_eq!(lines[2].text, "bye");
    }
}
