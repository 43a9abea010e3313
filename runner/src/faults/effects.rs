//! What happened to the cluster that no step did, recorded in faults.jsonl as `effect` events:
//! the replies the proxies dropped, what chaosfs injected in each node, and nodes whose program
//! exited by itself.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::FaultEngine;
use crate::run_folder::{FaultEvent, NodeExit, Phase};
use crate::scenario::LoadedScenario;

impl FaultEngine {
    /// Records what the proxies did to single requests as it happens, until `proxy_events`
    /// closes or the task is aborted.
    pub fn log_proxy_effects(
        self: Arc<Self>,
        mut proxy_events: tokio::sync::mpsc::UnboundedReceiver<crate::cluster::proxy::ProxyEvent>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            while let Some(event) = proxy_events.recv().await {
                let effect = FaultEvent::at(
                    self.recorder.now(),
                    event.fault.into(),
                    Phase::Effect,
                    event.node.clone(),
                    "request applied, reply dropped".into(),
                );
                self.record(effect.with_detail(&event));
            }
        })
    }

    /// Appends what chaosfs injected in each node (every delayed or failed fsync, every crash)
    /// to faults.jsonl, on the run's clock. Those lines come after the harness's own, each with
    /// its time.
    pub async fn merge_chaosfs_logs(&self, loaded: &LoadedScenario) {
        let zero_unix = self.run_zero_unix();
        for node in self.cluster.names() {
            let has_fs = loaded
                .compose
                .service(&node)
                .is_some_and(|s| !s.x_chaos.fs.is_empty());
            if !has_fs {
                continue;
            }
            let log = match self
                .cluster
                .exec(&node, vec!["cat".into(), "/.chaosfs/faults.jsonl".into()])
                .await
            {
                Ok(log) => log,
                Err(e) => {
                    tracing::warn!("cannot read the chaosfs log of {node}: {e}");
                    continue;
                }
            };
            for line in log.lines() {
                let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                if !matches!(event["event"].as_str(), Some("inject" | "crash")) {
                    continue;
                }
                let time = event["unix_ns"]
                    .as_u64()
                    .unwrap_or(0)
                    .saturating_sub(zero_unix);
                let fault = event["fault"].as_str().unwrap_or("crash");
                self.record_quietly(FaultEvent {
                    detail: Some(json!({"path": event["path"], "detail": event["detail"]})),
                    ..FaultEvent::at(
                        time,
                        format!("fs:{fault}"),
                        Phase::Effect,
                        node.clone(),
                        "injected by chaosfs".into(),
                    )
                });
            }
        }
    }

    /// Records each node whose program exited though no fault took it down (action `exited`),
    /// at the time Docker saw it end, with its exit code and the last error lines of its log
    /// (`logs_dir`): the `stays-up` check reads them. An exit already recorded is not again.
    pub async fn record_self_exits(&self, logs_dir: &Path) {
        let zero_unix = self.run_zero_unix();
        for exit in self.cluster.self_exits().await {
            // A node still down from an exit already recorded is the same exit.
            let first_seen = self
                .state()
                .exits_seen
                .insert((exit.node.clone(), exit.finished_at.clone()));
            if !first_seen {
                continue;
            }
            let time = time::OffsetDateTime::parse(
                &exit.finished_at,
                &time::format_description::well_known::Rfc3339,
            )
            .map(|t| (t.unix_timestamp_nanos().max(0) as u64).saturating_sub(zero_unix))
            .unwrap_or_else(|_| self.recorder.now());
            let log = std::fs::read_to_string(logs_dir.join(format!("{}.log", exit.node)))
                .unwrap_or_default();
            let event = FaultEvent::at(
                time,
                "exited".into(),
                Phase::Effect,
                exit.node.clone(),
                format!("exited by itself (exit code {})", exit.exit_code),
            );
            self.record(event.with_detail(&NodeExit {
                exit_code: exit.exit_code,
                finished_at: exit.finished_at.clone(),
                last_errors: last_errors(&log),
            }));
        }
    }

    /// The run clock's zero on the wall clock (unix ns), to place times other programs report.
    fn run_zero_unix(&self) -> u64 {
        let now_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64;
        now_unix.saturating_sub(self.recorder.now())
    }
}

/// The lines of a node's log that say why it stopped: the last "Terminating" line and the
/// exception line after it (a JVM may spend a minute shutting down after it, printing other
/// errors), then the last ERROR, FATAL or panic lines; the last line when there is none.
fn last_errors(log: &str) -> Vec<String> {
    let lines: Vec<&str> = log.lines().collect();
    let clip = |l: &str| -> String { l.chars().take(400).collect() };
    let mut found = Vec::new();
    if let Some(i) = lines.iter().rposition(|l| l.contains("Terminating")) {
        found.push(clip(lines[i]));
        if let Some(next) = lines
            .get(i + 1)
            .filter(|l| l.contains("Exception") || l.contains("Error"))
        {
            found.push(clip(next));
        }
    }
    let mut errors: Vec<String> = lines
        .iter()
        .rev()
        .take(200)
        .filter(|l| ["ERROR", "FATAL", "panic"].iter().any(|w| l.contains(w)))
        .filter(|l| !l.contains("Terminating"))
        .take(2)
        .map(|l| clip(l))
        .collect();
    errors.reverse();
    found.extend(errors);
    if found.is_empty() {
        found.extend(lines.last().map(|l| clip(l)));
    }
    found
}

#[cfg(test)]
mod tests {
    /// The line that says why the OM went down, and its exception, come first, ahead of the
    /// errors it printed while shutting down.
    #[test]
    fn the_terminating_line_leads_the_last_errors() {
        let log = "a\nERROR x: Terminating with exit status 2: flush failed\n\
                   java.lang.IllegalArgumentException: lastApplied: (t:1, i:275) < (t:1, i:470)\n\
                   \tat y\nINFO z\nERROR om.OzoneManager: OzoneManager stop failed.\n";
        assert_eq!(
            super::last_errors(log),
            [
                "ERROR x: Terminating with exit status 2: flush failed",
                "java.lang.IllegalArgumentException: lastApplied: (t:1, i:275) < (t:1, i:470)",
                "ERROR om.OzoneManager: OzoneManager stop failed.",
            ]
        );
        assert_eq!(super::last_errors("one\ntwo\n"), ["two"]);
    }
}
