//! What a fault step waits for before it fires: a time, a count of completed operations, a
//! log line, a JVM fault's rule firing, a probed role, or a node falling behind.

use std::time::{Duration, Instant};

use regex::Regex;
use tokio::sync::broadcast;

use super::kinds::jvm::Firing as JvmFiring;
use super::FaultEngine;
use crate::cluster::LogLine;
use crate::scenario::plan::{Firing, StepPlan};
use crate::scenario::{FaultStep, JvmEvent, Role};
use crate::systems;

pub(super) enum Trigger {
    Time,
    Ops(u64),
    Log {
        node: Option<String>,
        regex: Regex,
    },
    /// A JVM fault step's rule fired (chaos's helper's `CHAOS-JVM` line).
    Jvm {
        node: Option<String>,
        step: usize,
        event: Option<JvmEvent>,
    },
    Probe {
        node: Option<String>,
        role: Role,
    },
    /// A node more than `by` entries behind the highest applied index.
    Behind {
        node: Option<String>,
        by: u64,
    },
}

impl Trigger {
    pub(super) fn from_step(step: &FaultStep) -> Trigger {
        if let Some(after) = &step.after {
            Trigger::Ops(after.ops)
        } else if let Some(jvm) = step.on.as_ref().and_then(|on| on.jvm.as_ref()) {
            Trigger::Jvm {
                node: jvm.node.as_ref().map(|n| n.value.clone()),
                step: jvm.step.value,
                event: jvm.event,
            }
        } else if let Some(log) = step.on.as_ref().and_then(|on| on.log.as_ref()) {
            Trigger::Log {
                node: log.node.as_ref().map(|n| n.value.clone()),
                // Validated when the scenario was loaded.
                regex: Regex::new(&log.regex.value).unwrap_or_else(|_| Regex::new("$^").unwrap()),
            }
        } else if let Some(when) = &step.when {
            let node = when.node.as_ref().map(|n| n.value.clone());
            match when.behind {
                Some(by) => Trigger::Behind { node, by },
                // Validated: one of role and behind.
                None => Trigger::Probe {
                    node,
                    role: when.role.unwrap_or(Role::Leader),
                },
            }
        } else {
            Trigger::Time
        }
    }

    /// Waits until the trigger fires for this firing and says what fired it (the step's
    /// trigger, with the line or the node that did); None when the logs ended first.
    pub(super) async fn fired(
        &self,
        engine: &FaultEngine,
        step: &StepPlan,
        firing: &Firing,
        logs: &mut broadcast::Receiver<LogLine>,
        workload_start: Instant,
    ) -> Option<String> {
        let fired_by = match self {
            Trigger::Time => {
                let at = workload_start + firing.at.unwrap_or_default();
                tokio::time::sleep_until(at.into()).await;
                step.trigger.clone()
            }
            Trigger::Ops(n) => {
                let mut completed = engine.recorder.completed();
                let _ = completed.wait_for(|c| *c >= *n).await;
                step.trigger.clone()
            }
            Trigger::Log { node, regex } => {
                let line = first_line(logs, node, |text| regex.is_match(text)).await?;
                format!("{} ({}: {})", step.trigger, line.node, line.text)
            }
            Trigger::Jvm {
                node,
                step: k,
                event,
            } => {
                let fired = |text: &str| {
                    JvmFiring::parse(text)
                        .is_some_and(|f| f.step() == Some(*k) && f.event.counts_as(*event))
                };
                let line = first_line(logs, node, fired).await?;
                format!("{} ({}: {})", step.trigger, line.node, line.text)
            }
            Trigger::Probe { node, role } => loop {
                let adapter = engine.adapter.as_ref();
                if let Some(n) = systems::role_holder(adapter, *role, node.as_deref()).await {
                    break format!("{} ({n})", step.trigger);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            },
            Trigger::Behind { node, by } => loop {
                let adapter = engine.adapter.as_ref();
                if let Some((n, a, top)) = systems::behind_by(adapter, node.as_deref(), *by).await {
                    break format!("{} ({n} at {a}, highest {top})", step.trigger);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            },
        };
        Some(fired_by)
    }
}

/// The first line of `node`'s log (any node's when None) whose text matches; None when the
/// logs ended first.
async fn first_line(
    logs: &mut broadcast::Receiver<LogLine>,
    node: &Option<String>,
    matches: impl Fn(&str) -> bool,
) -> Option<LogLine> {
    loop {
        match logs.recv().await {
            Ok(line) if node.as_ref().is_none_or(|n| *n == line.node) && matches(&line.text) => {
                return Some(line)
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(_) => return None,
        }
    }
}
