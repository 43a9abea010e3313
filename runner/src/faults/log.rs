//! Reading faults.jsonl back: when each fault was in force, and what to call it. The report
//! draws these windows, and the checks lay a lost write on the fault that lost it.

use crate::faults::kinds::{Action, InForce};
use crate::run_folder::{Clock, FaultEvent, Phase};

/// A fault from its application to its undo (or the end of the run).
#[derive(Clone, Debug)]
pub struct Window {
    pub start: u64,
    pub end: u64,
    pub action: String,
    pub label: String,
    pub targets: Vec<String>,
    /// Index of the apply event in faults.jsonl.
    pub event: usize,
}

/// Fault label: `partition isolate etcd2`, `kill etcd1`.
pub fn fault_label(f: &FaultEvent) -> String {
    let mut s = f.action.clone();
    for extra in [&f.mode, &f.offset].into_iter().flatten() {
        s.push(' ');
        s.push_str(extra);
    }
    if !f.targets.is_empty() {
        s.push(' ');
        s.push_str(&f.targets.join(", "));
    }
    s
}

/// How long the fault an event names counts as in force (its `Fault::in_force`); a name no
/// fault has (an effect, an exit) counts until its undo.
fn in_force(action: &str) -> InForce {
    Action::named(action).map_or(InForce::UntilUndo, |a| a.fault().in_force())
}

/// When the final heal began, if the run got that far.
pub fn final_heal_time(faults: &[FaultEvent]) -> Option<u64> {
    faults
        .iter()
        .filter(|f| f.phase == Phase::FinalHeal)
        .map(|f| f.time)
        .min()
}

/// Each fault that applied, from its application to its undo (or the final heal, or `end`).
pub fn windows(faults: &[FaultEvent], end: u64) -> Vec<Window> {
    let final_heal = final_heal_time(faults);
    let mut out = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        if !f.applied() {
            continue;
        }
        let in_force = in_force(&f.action);
        if in_force == InForce::Instant {
            continue;
        }
        let start = f.started.min(f.time);
        let undo = faults[i + 1..]
            .iter()
            .find(|u| u.phase == Phase::Undo && u.step == f.step && u.targets == f.targets)
            .map(|u| u.time);
        let healed_at_end = in_force == InForce::UntilUndoOrFinalHeal;
        let stop = undo
            .or(if healed_at_end { final_heal } else { None })
            .unwrap_or(end)
            .max(start);
        out.push(Window {
            start,
            end: stop,
            label: fault_label(f),
            action: f.action.clone(),
            targets: f.targets.clone(),
            event: i,
        });
    }
    out
}

/// The fault that lost a write acknowledged at `acked` by `node`: the first fault on that node
/// after the acknowledgement (a later one found the write already gone), else the first fault on
/// any node after it, else the last one before it. `before`: only faults that began by then.
/// Named with its time from the workload's start (`kill redis1 at 20.000 s`).
pub fn fault_that_lost(
    windows: &[Window],
    acked: u64,
    node: Option<&str>,
    before: Option<u64>,
    clock: Clock,
) -> Option<String> {
    let after = |w: &&Window| w.start >= acked && before.is_none_or(|b| w.start <= b);
    let on_node = |w: &&Window| node.is_some_and(|n| w.targets.iter().any(|t| t == n));
    windows
        .iter()
        .filter(after)
        .find(on_node)
        .or_else(|| windows.iter().find(after))
        .or_else(|| windows.iter().rfind(|w| w.start <= acked))
        .map(|w| format!("{} at {}", w.label, clock.at(w.start)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start: u64, label: &str, target: &str) -> Window {
        Window {
            start,
            end: start + 10,
            action: "kill".into(),
            label: label.into(),
            targets: vec![target.into()],
            event: 0,
        }
    }

    /// The write's own node's first crash after the acknowledgement lost it, not the last
    /// crash of the run nor a crash of another node in between; named with its time from the
    /// workload's start (here 10 s after the run's).
    #[test]
    fn a_lost_write_is_laid_on_the_first_fault_on_its_node_after_it() {
        let windows = [
            window(5_000_000_000, "kill redis1", "redis1"),
            window(20_000_000_000, "kill redis2", "redis2"),
            window(30_000_000_000, "kill redis1", "redis1"),
            window(50_000_000_000, "kill redis1", "redis1"),
        ];
        let clock = Clock { t0: 10_000_000_000 };
        let lost = |acked: u64, node: Option<&str>| {
            fault_that_lost(&windows, acked, node, None, clock).unwrap()
        };
        assert_eq!(
            lost(10_000_000_000, Some("redis1")),
            "kill redis1 at 20.000 s"
        );
        // Unknown node: the first fault after it.
        assert_eq!(lost(10_000_000_000, None), "kill redis2 at 10.000 s");
        // No fault after it: the last one before.
        assert_eq!(
            lost(60_000_000_000, Some("redis1")),
            "kill redis1 at 40.000 s"
        );
        // A fault during the cluster's start is before zero.
        assert_eq!(
            fault_that_lost(
                &windows,
                1_000_000_000,
                Some("redis1"),
                None,
                Clock { t0: 8_000_000_000 }
            ),
            Some("kill redis1 at -3.000 s".to_string())
        );
    }
}
