//! The run folder's files, each with its type, its write and its read: faults.jsonl
//! (faults.rs), history.jsonl (history.rs, through the checker's one reader and pairing),
//! plan.json (plan.rs), result.json (result.rs, the run's meta at its top level from meta.rs,
//! the witnesses' data from witness.rs), converge.json (converge.rs), fencing.jsonl and
//! probe.json (fencing.rs), build.json (build.rs), report.json (report.rs), shrink/shrink.json
//! (shrink.rs) and observed.jsonl (here); and a comparison folder's compare.json (compare.rs).
//! Every command that reads one back (check, report, replay, shrink) reads only files inside
//! it (a symbolic link that leads out is refused), of a bounded size, and says which file and
//! why when it cannot.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::error::{HarnessError, Result};

mod build;
mod compare;
mod converge;
mod faults;
mod fencing;
mod history;
mod meta;
mod plan;
mod report;
mod result;
mod shown;
mod shrink;
mod witness;
pub use build::{Build, BUILD};
pub use compare::{ComparedBuild, ComparedRun, Comparison, COMPARE};
pub use converge::{Converged, Lookups, CONVERGE};
pub use faults::{
    parse_faults, read_faults, FaultEvent, FaultLog, Grudge, NodeExit, Phase, FAULTS,
};
pub use fencing::{read_fencing, FencingLine, FencingLog, Probe, FENCING, PROBE};
pub use history::{history_refused, read_history, read_history_lenient, HistoryLog, HISTORY};
pub use meta::{Attach, RunMeta, RESULT};
pub use plan::{read_plan, PlannedFiring, PlannedFollowUp, PlannedStep, RecordedPlan, PLAN};
pub use report::{CheckInWords, ReportSummary, REPORT};
pub use result::{
    CheckResult, Confirmation, Evidence, Failures, Latency, Reached, RunResult, RunVerdict, Stats,
    TraceFollowed,
};
pub use shown::{command_line, repo_relative, shell_word};
pub use shrink::{
    Reproduced, ShrinkSummary, ShrinkTrial, ShrunkSchedule, ShrunkStep, ShrunkWorkload, SHRINK,
};
pub use witness::{Lost, OpRef, Witness};

/// A JSON-lines file written one flushed line at a time.
pub struct JsonlWriter {
    file: Mutex<BufWriter<File>>,
}

impl JsonlWriter {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(JsonlWriter {
            file: Mutex::new(BufWriter::new(File::create(path)?)),
        })
    }

    /// Adds to a file an earlier phase of the run began.
    pub fn append(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(JsonlWriter {
            file: Mutex::new(BufWriter::new(file)),
        })
    }

    pub fn write(&self, value: &impl Serialize) {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // A full disk must not stop the run; the check will then see a short history.
        if serde_json::to_writer(&mut *file, value).is_ok() {
            let _ = file.write_all(b"\n");
            let _ = file.flush();
        }
    }
}

/// observed.jsonl: what the harness saw of a `reached:` predicate only a probe can see.
pub const OBSERVED: &str = "observed.jsonl";

/// One line of observed.jsonl.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Observed {
    /// The predicate's name in `reached:`.
    pub name: String,
    /// Nanoseconds since the run began.
    pub time: u64,
    pub reached: bool,
    /// What showed it (a probe's answer), or why not.
    pub evidence: String,
}

/// The one time base of everything a run shows (result.json's sentences, the report, JUnit,
/// summary.md): seconds from the workload's start, as a scenario's `at:` counts them. The
/// recorder's times (history.jsonl, faults.jsonl, the logs' prefixes) count from the run's start,
/// the cluster's start included; times before zero are the cluster's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// The workload's start in the recorder's nanoseconds.
    pub t0: u64,
}

impl Clock {
    /// result.json's (or a run's meta's) `workload_started_ns` ([`RunMeta`]); without it (a
    /// folder written before it was recorded, a run stopped before its workload) the first
    /// operation's invocation, else the run's start.
    pub fn of_run(result: &serde_json::Value, first_op: Option<u64>) -> Clock {
        Clock::of_meta(&RunMeta::of(result), first_op)
    }

    /// [`Clock::of_run`] of a meta already read.
    pub fn of_meta(meta: &RunMeta, first_op: Option<u64>) -> Clock {
        Clock {
            t0: meta.workload_started_ns.or(first_op).unwrap_or(0),
        }
    }

    /// Seconds from the workload's start (negative: the cluster's start).
    pub fn s(self, ns: u64) -> f64 {
        (ns as f64 - self.t0 as f64) / 1e9
    }

    /// `12.345 s`, `-80.221 s`.
    pub fn at(self, ns: u64) -> String {
        format!("{:.3} s", self.s(ns))
    }

    /// A log line's time (seconds since the run began) from the workload's start.
    pub fn log(self, secs: f64) -> f64 {
        secs - self.t0 as f64 / 1e9
    }
}

/// One line of a node's log.
#[derive(Clone, Debug)]
pub struct LogLine {
    /// Seconds since the run began (from the `[   12.345678] ` prefix), if present.
    pub time: Option<f64>,
    pub text: String,
    /// 1-based line number in the file.
    pub number: usize,
}

/// `[   12.345678] text` lines; lines without the prefix keep the time of the line before.
pub fn parse_log(text: &str) -> Vec<LogLine> {
    let mut last = None;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let mut time = last;
            let mut body = line;
            if let Some(rest) = line.strip_prefix('[') {
                if let Some(end) = rest.find("] ") {
                    if let Ok(t) = rest[..end].trim().parse::<f64>() {
                        time = Some(t);
                        body = &rest[end + 2..];
                    }
                }
            }
            last = time;
            LogLine {
                time,
                text: crate::redact::redact(body),
                number: i + 1,
            }
        })
        .collect()
}

/// observed.jsonl as it is written: one flushed [`Observed`] a line, by the probes of the build
/// before the cluster starts and of the predicates while the workload plays.
pub struct ObservedLog(JsonlWriter);

impl ObservedLog {
    pub fn create(run_dir: &Path) -> std::io::Result<Self> {
        JsonlWriter::create(&run_dir.join(OBSERVED)).map(ObservedLog)
    }

    /// Adds to what an earlier phase of the run wrote.
    pub fn append(run_dir: &Path) -> std::io::Result<Self> {
        JsonlWriter::append(&run_dir.join(OBSERVED)).map(ObservedLog)
    }

    pub fn write(&self, observed: &Observed) {
        self.0.write(observed);
    }
}

/// The lines of observed.jsonl that read (none when the file is missing).
pub fn read_observed(dir: &Path) -> Vec<Observed> {
    read_optional(dir, OBSERVED)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The largest file of a run folder that is read (a million-operation history is about
/// 200 MB; a report must not take a machine down).
pub const MAX_FILE: u64 = 512 << 20;

/// The real path of `rel` inside `dir`, if it exists there and is a regular file no larger
/// than [`MAX_FILE`]; otherwise why not, in a user's words.
pub fn path_inside(dir: &Path, rel: &str) -> std::result::Result<PathBuf, String> {
    let root = dir
        .canonicalize()
        .map_err(|e| format!("{}: cannot open the run folder: {e}", dir.display()))?;
    let shown = dir.join(rel);
    let path = root
        .join(rel)
        .canonicalize()
        .map_err(|_| format!("{}: missing", shown.display()))?;
    if !path.starts_with(&root) {
        return Err(format!(
            "{}: leads out of the run folder (to {}); only files inside it are read",
            shown.display(),
            path.display()
        ));
    }
    let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", shown.display()))?;
    if !meta.is_file() {
        return Err(format!("{}: not a regular file", shown.display()));
    }
    if meta.len() > MAX_FILE {
        return Err(format!(
            "{}: {}",
            shown.display(),
            checker::read::larger_than(meta.len(), MAX_FILE, "a run folder's file")
        ));
    }
    Ok(path)
}

/// The text of `rel` inside `dir` (invalid UTF-8 replaced), or why it cannot be read.
pub fn read(dir: &Path, rel: &str) -> Result<String> {
    let path = path_inside(dir, rel).map_err(HarnessError::BadInput)?;
    let bytes = std::fs::read(&path)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", dir.join(rel).display())))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// [`read`] for a file a run folder may lack: None when it is missing, outside or too large.
pub fn read_optional(dir: &Path, rel: &str) -> Option<String> {
    read(dir, rel).ok()
}

/// A JSON file of the run folder that must be a JSON object (result.json, plan.json, ...).
pub fn read_object(dir: &Path, rel: &str) -> Result<serde_json::Value> {
    let text = read(dir, rel)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        HarnessError::BadInput(format!(
            "{}: not JSON ({})",
            dir.join(rel).display(),
            checker::json_error_words(&e)
        ))
    })?;
    if !value.is_object() {
        return Err(HarnessError::BadInput(format!(
            "{}: expected a JSON object {{ ... }}, found {}",
            dir.join(rel).display(),
            json_kind(&value)
        )));
    }
    Ok(value)
}

/// A JSON file of the run folder read as its type `T` (a missing field takes its default), or
/// why not: missing, not JSON, not an object, or not what a run writes there (which field).
pub fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, rel: &str) -> Result<T> {
    from_object(dir, rel, read_object(dir, rel)?)
}

/// [`read_json`] of a file already read as a JSON object.
pub fn from_object<T: serde::de::DeserializeOwned>(
    dir: &Path,
    rel: &str,
    value: serde_json::Value,
) -> Result<T> {
    serde_json::from_value(value).map_err(|e| {
        HarnessError::BadInput(format!(
            "{}: not what a run writes there: {}",
            dir.join(rel).display(),
            checker::json_error_words(&e)
        ))
    })
}

/// Writes a JSON file of the run folder (pretty JSON): the one writer beside [`read_json`].
pub fn write_json<T: serde::Serialize + ?Sized>(
    dir: &Path,
    rel: &str,
    value: &T,
) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    write_file(&dir.join(rel), text.as_bytes())
}

/// Writes a whole file of a run folder or a report (everything but the files a run appends to
/// line by line: history.jsonl, faults.jsonl, observed.jsonl, fencing.jsonl, logs/): first to a
/// temporary name in the same folder, then renamed into place, so that a full disk leaves the
/// previous file or none, never part of one. The error names the file and its folder.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_with(path, |file| file.write_all(bytes))
}

/// [`write_file`] with what fills the temporary file given as a function (a test's writer
/// that fails after some bytes).
pub fn replace_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = folder.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| fill(&mut file))
        .and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        std::io::Error::new(
            e.kind(),
            format!("cannot write {name} in {}: {e}", folder.display()),
        )
    })
}

/// [`write_json`] through a JSON value, so the keys come out in order of their names at every
/// level (result.json, report.json and compare.json always had them so).
fn write_sorted<T: serde::Serialize>(dir: &Path, rel: &str, value: &T) -> std::io::Result<()> {
    let value = serde_json::to_value(value).map_err(std::io::Error::other)?;
    write_json(dir, rel, &value)
}

/// A field that does not read as its type reads as absent (`deserialize_with`), as it did for
/// the readers that asked for it by name.
fn lenient<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> std::result::Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(serde_json::Value::deserialize(d)?).ok())
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    /// A full disk mid-write (a writer that fails after 1,000 bytes) leaves the previous file
    /// whole, no temporary file beside it, and an error that names the file and its folder;
    /// with no previous file, none.
    #[test]
    fn a_failed_write_leaves_the_previous_file_or_none() {
        let dir = std::env::temp_dir().join(format!("chaos-write-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("index.html");
        let full_disk = |file: &mut File| -> std::io::Result<()> {
            file.write_all(&[b'x'; 1000])?;
            Err(std::io::Error::from_raw_os_error(28)) // ENOSPC
        };
        // No previous file: none after.
        let e = replace_with(&path, full_disk).unwrap_err();
        assert!(!path.exists());
        assert_eq!(e.raw_os_error(), None);
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
        let words = e.to_string();
        assert!(
            words.starts_with(&format!("cannot write index.html in {}: ", dir.display())),
            "{words}"
        );
        assert!(words.contains("No space left on device"), "{words}");
        // A previous file: kept whole.
        write_file(&path, b"the previous report").unwrap();
        replace_with(&path, full_disk).unwrap_err();
        assert_eq!(std::fs::read(&path).unwrap(), b"the previous report");
        // Nothing else in the folder: the temporary file is gone.
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["index.html".to_string()]);
        // A write that succeeds replaces it.
        write_json(&dir, "index.html", &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\n  \"a\": 1\n}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use super::*;

    #[test]
    fn only_files_inside_the_folder_are_read() {
        let base = std::env::temp_dir().join(format!("chaos-run-folder-{}", std::process::id()));
        let dir = base.join("run");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(base.join("outside.txt"), "secret").unwrap();
        std::fs::write(dir.join("result.json"), "[1,2,3]").unwrap();
        std::os::unix::fs::symlink(base.join("outside.txt"), dir.join("history.jsonl")).unwrap();
        let e = read(&dir, "history.jsonl").unwrap_err().to_string();
        assert!(e.contains("leads out of the run folder"), "{e}");
        let e = read(&dir, "faults.jsonl").unwrap_err().to_string();
        assert!(e.ends_with("faults.jsonl: missing"), "{e}");
        let e = read_object(&dir, "result.json").unwrap_err().to_string();
        assert!(
            e.contains("expected a JSON object { ... }, found a list"),
            "{e}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
