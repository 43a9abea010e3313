//! history.jsonl: one [`checker::Event`] a line (every operation's invocation and completion),
//! written by the recorder ([`HistoryLog`], one flushed line at a time, so a harness that dies
//! leaves a history that can still be checked) and read back through the checker crate's one
//! parser and one pairing: strictly for a check (but for a last line cut short), leniently for
//! the report, which shows what it can and names the lines it left out.

use std::path::Path;

use checker::{Event, Format, History, ReadOptions};

use super::JsonlWriter;
use crate::error::{HarnessError, Result};

/// The file's name in a run folder.
pub const HISTORY: &str = "history.jsonl";

/// history.jsonl as it is written: one flushed [`Event`] a line.
pub struct HistoryLog(JsonlWriter);

impl HistoryLog {
    /// A new history at `path` (a run folder's [`HISTORY`], or a benchmark's own file).
    pub fn create(path: &Path) -> std::io::Result<Self> {
        JsonlWriter::create(path).map(HistoryLog)
    }

    pub fn write(&self, event: &Event) {
        self.0.write(event);
    }
}

/// A run folder's history as a check reads it: inside the folder only, every line an event and
/// every completion paired, but for a last line cut short (the harness died while writing it),
/// which is left out and said so on stderr.
pub fn read_history(run_dir: &Path) -> Result<History> {
    let shown = run_dir.join(HISTORY);
    let path = super::path_inside(run_dir, HISTORY).map_err(HarnessError::BadInput)?;
    let options = ReadOptions {
        tolerate_cut_tail: true,
        ..ReadOptions::strict(Format::Jsonl)
    };
    let read = checker::read_history_with(&path, &options)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", shown.display())))?;
    if let Some(line) = read.cut_tail {
        eprintln!(
            "note: {}: line {line} is cut short (the run ended while it was written); checked without it",
            shown.display()
        );
    }
    Ok(read.history)
}

/// Why a check would refuse the run folder's history, in the check's words; None when it reads
/// (a last line cut short aside, which a check leaves out). The report asks this of a history
/// with lines it could not read: a cut last line is a note, anything else makes it incomplete.
pub fn history_refused(run_dir: &Path) -> Option<String> {
    let shown = run_dir.join(HISTORY);
    let options = ReadOptions {
        tolerate_cut_tail: true,
        ..ReadOptions::strict(Format::Jsonl)
    };
    let path = match super::path_inside(run_dir, HISTORY) {
        Ok(path) => path,
        Err(e) => return Some(e),
    };
    checker::read_history_with(&path, &options)
        .err()
        .map(|e| format!("{}: {e}", shown.display()))
}

/// A run folder's history as the report shows it: what reads, with the (1-based) lines that do
/// not ([`ReadOptions::lenient`]: a line that is no event, a completion without its invocation).
/// An error only when the file cannot be read at all (missing, outside the folder, too large).
pub fn read_history_lenient(run_dir: &Path) -> Result<(History, Vec<usize>)> {
    let shown = run_dir.join(HISTORY);
    let path = super::path_inside(run_dir, HISTORY).map_err(HarnessError::BadInput)?;
    let read = checker::read_history_with(&path, &ReadOptions::lenient(Format::Jsonl))
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", shown.display())))?;
    Ok((read.history, read.skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use checker::{EventType, Status};
    use serde_json::json;

    fn folder(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("chaos-history-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn event(index: u64, process: u64, kind: EventType, f: &str) -> Event {
        Event {
            index,
            time: 10 * index,
            node: Some("n1".into()),
            ..Event::new(process, kind, f, Some("k"), json!(index))
        }
    }

    /// What the log writes reads back as the same events, paired.
    #[test]
    fn events_written_read_back() {
        let dir = folder("round-trip");
        let log = HistoryLog::create(&dir.join(HISTORY)).unwrap();
        let mut events = vec![
            event(0, 0, EventType::Invoke, "write"),
            event(1, 1, EventType::Invoke, "read"),
            event(2, 0, EventType::Ok, "write"),
            event(3, 1, EventType::Info, "read"),
        ];
        events[3].error = Some("timeout".into());
        events[3].client = Some("c0ffee".into());
        events[3].call = Some("c0ffee/1".into());
        for e in &events {
            log.write(e);
        }
        let history = read_history(&dir).unwrap();
        assert_eq!(history.events, events);
        assert_eq!(history.ops.len(), 2);
        assert_eq!(history.ops[1].error.as_deref(), Some("timeout"));
        assert_eq!(history.ops[1].client.as_deref(), Some("c0ffee"));
        let (lenient, skipped) = read_history_lenient(&dir).unwrap();
        assert_eq!((lenient, skipped), (history, vec![]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A harness that died leaves an invocation without its completion and a last line cut
    /// short: a check reads it without the cut line, the report too, naming it; a completion
    /// without its invocation only the report reads past.
    #[test]
    fn a_history_a_dead_harness_left_still_reads() {
        let dir = folder("dead");
        let lines: Vec<String> = [
            event(0, 0, EventType::Invoke, "write"),
            event(1, 1, EventType::Invoke, "read"),
            event(2, 0, EventType::Ok, "write"),
        ]
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
        let cut = &lines[2][..lines[2].len() - 7];
        std::fs::write(
            dir.join(HISTORY),
            format!("{}\n{}\n{cut}", lines[0], lines[1]),
        )
        .unwrap();
        let history = read_history(&dir).unwrap();
        assert_eq!(history.ops.len(), 2);
        assert!(history.ops.iter().all(|o| o.status == Status::Info));
        let (shown, skipped) = read_history_lenient(&dir).unwrap();
        assert_eq!((shown.ops, skipped), (history.ops, vec![3]));

        let orphan = serde_json::to_string(&event(3, 9, EventType::Ok, "read")).unwrap();
        std::fs::write(
            dir.join(HISTORY),
            format!("{}\n{orphan}\n{}\n", lines[0], lines[2]),
        )
        .unwrap();
        let e = read_history(&dir).unwrap_err().to_string();
        assert!(e.ends_with("history.jsonl: line 2: ok completion for process 9 which has no pending invocation"), "{e}");
        let (shown, skipped) = read_history_lenient(&dir).unwrap();
        assert_eq!(skipped, [2]);
        assert_eq!(shown.ops[0].status, Status::Ok);
        assert_eq!(shown.ops[0].complete, Some(1));

        std::fs::remove_file(dir.join(HISTORY)).unwrap();
        let e = read_history_lenient(&dir).unwrap_err().to_string();
        assert!(e.ends_with("history.jsonl: missing"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
