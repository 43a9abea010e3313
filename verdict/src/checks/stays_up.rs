//! The `stays-up` check: no node's program exited by itself. faults.jsonl's `exited` events
//! (recorded by the fault engine) name the nodes whose program ended without a fault that took
//! them down, with the exit code and the last error lines of the log.

use std::path::Path;

use checker::Verdict;
use serde::{Deserialize, Serialize};

use super::kind::{Check, Inputs};
use crate::error::Result;
use crate::run_folder::{parse_faults, CheckResult, Clock, FaultEvent, NodeExit, FAULTS};
use crate::scenario::{CheckKind, CheckSpec};

pub struct StaysUp;

impl Check for StaysUp {
    fn kind(&self) -> CheckKind {
        CheckKind::StaysUp
    }

    fn inputs(&self) -> &'static [&'static str] {
        &[FAULTS]
    }

    fn without_run_folder(&self) -> Result<Vec<CheckResult>> {
        Ok(vec![CheckResult::new(
            CheckKind::StaysUp.name(),
            CheckKind::StaysUp.name(),
            Verdict::Unknown,
            format!("stays-up reads a run folder's {FAULTS}"),
        )])
    }

    fn run(&self, _: &CheckSpec, inputs: &Inputs) -> Result<Vec<CheckResult>> {
        match inputs.run_dir {
            Some(dir) => Ok(vec![check(dir, inputs.clock)]),
            None => self.without_run_folder(),
        }
    }
}

/// The check: illegal when faults.jsonl names a node whose program exited by
/// itself, with its exit code, the time (from the workload's start) and the last error lines of
/// its log.
pub fn check(run_dir: &Path, clock: Clock) -> CheckResult {
    let Some(text) = crate::run_folder::read_optional(run_dir, FAULTS) else {
        return CheckResult::new(
            CheckKind::StaysUp.name(),
            CheckKind::StaysUp.name(),
            Verdict::Unknown,
            format!("stays-up: {FAULTS} is missing or unreadable"),
        );
    };
    let exits: Vec<FaultEvent> = parse_faults(&text)
        .into_iter()
        .filter(|f| f.action == "exited")
        .collect();
    if exits.is_empty() {
        return CheckResult::new(
            CheckKind::StaysUp.name(),
            CheckKind::StaysUp.name(),
            Verdict::Ok,
            "every node the faults did not take down was still running when they ended".into(),
        )
        .with_detail(Detail { exits: Vec::new() });
    }
    let sentences: Vec<String> = exits
        .iter()
        .map(|f| {
            let exit = f.detail_as::<NodeExit>();
            // The line that says it is going down, else the last error.
            let errors: Vec<String> = exit
                .iter()
                .flat_map(|e| &e.last_errors)
                .map(|l| rebase_log_line(l, clock))
                .collect();
            let why = match errors.iter().position(|l| l.contains("Terminating")) {
                // The Terminating line and the exception after it.
                Some(i) => errors[i..errors.len().min(i + 2)].join(" "),
                None => errors.last().cloned().unwrap_or_default(),
            };
            format!(
                "{} exited by itself at {} (exit code {}): {}",
                f.targets.first().map_or("?", String::as_str),
                clock.at(f.time),
                exit.map_or_else(|| "unknown".to_string(), |e| e.exit_code.to_string()),
                why.trim()
            )
        })
        .collect();
    CheckResult::new(
        CheckKind::StaysUp.name(),
        CheckKind::StaysUp.name(),
        Verdict::Illegal,
        sentences.join("; "),
    )
    .with_detail(Detail { exits })
}

/// A node's log line as a sentence quotes it: its `[  147.328473] ` prefix (seconds since the
/// run began) as seconds from the workload's start, `[24.528] `; a line without it as it is.
fn rebase_log_line(line: &str, clock: Clock) -> String {
    match crate::run_folder::parse_log(line).first() {
        Some(crate::run_folder::LogLine {
            time: Some(t),
            text,
            ..
        }) => format!("[{:.3}] {text}", clock.log(*t)),
        _ => line.to_string(),
    }
}

/// The stays-up check's detail in result.json: the `exited` effects of faults.jsonl, as written.
#[derive(Debug, Serialize, Deserialize)]
pub struct Detail {
    pub exits: Vec<FaultEvent>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `exited` event in faults.jsonl fails stays-up with the node, the time (from the
    /// workload's start), the exit code and the log's last error line; without one the check
    /// passes.
    #[test]
    fn stays_up_names_the_node_that_exited_by_itself() {
        let dir = std::env::temp_dir().join(format!("chaos-stays-up-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pause = r#"{"time":1000000000,"action":"pause","phase":"apply","targets":["om2"],"outcome":"ok"}"#;
        std::fs::write(dir.join("faults.jsonl"), format!("{pause}\n")).unwrap();
        // The workload began 122.8 s into the run (the cluster's start before it).
        let clock = Clock {
            t0: 122_800_000_000,
        };
        assert_eq!(check(&dir, clock).verdict, Verdict::Ok);
        let exited = r#"{"time":129930000000,"action":"exited","phase":"effect","targets":["om3"],"outcome":"exited by itself (exit code 2)","detail":{"exit_code":2,"last_errors":["[  129.328473] ERROR ratis.OzoneManagerDoubleBuffer: Terminating with exit status 2"]}}"#;
        std::fs::write(dir.join("faults.jsonl"), format!("{pause}\n{exited}\n")).unwrap();
        let result = check(&dir, clock);
        assert_eq!(result.verdict, Verdict::Illegal);
        assert_eq!(
            result.summary,
            "om3 exited by itself at 7.130 s (exit code 2): [6.528] ERROR ratis.OzoneManagerDoubleBuffer: Terminating with exit status 2"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
