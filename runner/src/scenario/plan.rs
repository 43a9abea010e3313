//! The fault plan: every random choice of a scenario drawn up front from the seed, so the same
//! scenario and seed always give the same plan (written to the run folder as plan.json).
//!
//! Which node is the leader is only known when a fault fires; the plan fixes the random number
//! (`choice`) used to pick among the candidates then.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::{Action, FaultStep, PartitionMode, Scenario, Spanned, Target};

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub seed: u64,
    pub steps: Vec<StepPlan>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepPlan {
    pub step: usize,
    /// The trigger as a person reads it: "at 10s", "after 2000 ops", "on log etcd2 /regex/".
    pub trigger: String,
    pub target: Target,
    pub firings: Vec<Firing>,
    /// Parameters of the step's action (proxy and filesystem faults).
    pub params: ActionParams,
    /// The run may pass without this step ever applying (`optional: true`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// The trigger watches only once this step is over (`armed-after:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub armed_after: Option<usize>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ActionParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(with = "opt_nanos", skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    #[serde(with = "opt_nanos", skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errno: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    pub lose_unsynced: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<super::ContainerRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<super::TransferVia>,
    /// partition: the scenario's own grudge (node -> nodes it drops), used instead of `mode:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grudge: Option<std::collections::BTreeMap<String, std::collections::BTreeSet<String>>>,
    /// The JVM faults: where the rule acts, or the rule itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm: Option<super::JvmSpec>,
}

/// One application of a step's action.
#[derive(Debug, Clone, Serialize)]
pub struct Firing {
    /// Time since the workload began, for time-triggered steps.
    #[serde(with = "opt_nanos", skip_serializing_if = "Option::is_none")]
    pub at: Option<Duration>,
    pub action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<PartitionMode>,
    /// How long until the undo (`for:`).
    #[serde(with = "opt_nanos", skip_serializing_if = "Option::is_none")]
    pub hold: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub then: Option<FollowUp>,
    /// Seeds the pick among candidate nodes when the firing happens.
    pub choice: u64,
    /// clock-skew: the wall-clock offset in milliseconds, drawn from the step's `offset:`.
    #[serde(with = "opt_offset", skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FollowUp {
    pub action: Action,
    #[serde(with = "opt_nanos")]
    pub after: Option<Duration>,
}

/// A random generator for one named purpose, independent of the others, so adding a fault step
/// does not change the workload's choices or another step's.
pub fn rng_for(seed: u64, purpose: &str, index: u64) -> ChaCha8Rng {
    // FNV-1a over the purpose: stable across Rust versions, unlike DefaultHasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in purpose.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ h);
    rng.set_stream(index);
    rng
}

/// Draws every random choice of the scenario's fault steps from the seed: the plan a run plays
/// and plan.json records. Each step has its own stream, so one step's draws never move another's.
pub fn make_plan(spec: &Scenario, seed: u64) -> Plan {
    let workload_length = spec.workload.duration.0;
    let steps = spec
        .faults
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let step = &step.value;
            let mut rng = rng_for(seed, "fault-step", i as u64);
            let target = step
                .target
                .as_ref()
                .map(|t| t.value.clone())
                .unwrap_or_default();
            let (mut trigger, firings) = firings(step, &target, &mut rng, workload_length);
            if let Some(armed) = &step.armed_after {
                trigger.push_str(&format!(" once step {} is over", armed.value));
            }
            StepPlan {
                step: i,
                trigger,
                target,
                firings,
                params: action_params(step),
                optional: step.optional,
                armed_after: step.armed_after.as_ref().map(|a| a.value),
            }
        })
        .collect();
    Plan { seed, steps }
}

/// A step's trigger in words and its firings: one per `every:` draw within the workload, one
/// for any other trigger, none for a step that never fires.
fn firings(
    step: &FaultStep,
    target: &Target,
    rng: &mut ChaCha8Rng,
    workload_length: Duration,
) -> (String, Vec<Firing>) {
    let once = |rng: &mut ChaCha8Rng, trigger: String, at: Option<Duration>| {
        (trigger, vec![draw_firing(step, target, rng, at)])
    };
    if let Some(every) = step.every {
        let mut firings = Vec::new();
        let mut t = every.draw(rng);
        while t < workload_length {
            firings.push(draw_firing(step, target, rng, Some(t)));
            t += every.draw(rng);
        }
        (format!("every {every}"), firings)
    } else if let Some(at) = step.at {
        once(rng, format!("at {at}"), Some(at.0))
    } else if let Some(after) = &step.after {
        once(rng, format!("after {} ops", after.ops), None)
    } else if let Some(on) = &step.on {
        let node = |n: &Option<Spanned<String>>| {
            n.as_ref()
                .map_or("any node".to_string(), |n| n.value.clone())
        };
        let trigger = match (&on.log, &on.jvm) {
            (Some(log), _) => format!("on log of {} /{}/", node(&log.node), log.regex.value),
            (None, Some(jvm)) => format!(
                "on step {}'s rule {} in {}",
                jvm.step.value,
                jvm.event
                    .map_or("firing".to_string(), |e| format!("{e:?}").to_lowercase()),
                node(&jvm.node)
            ),
            // Validated: one of log and jvm.
            (None, None) => "on nothing".to_string(),
        };
        once(rng, trigger, None)
    } else if let Some(when) = &step.when {
        let node = when.node.as_ref().map_or("any node", |n| n.value.as_str());
        let trigger = match (when.role, when.behind) {
            (_, Some(by)) => format!("when {node} is more than {by} behind"),
            (role, None) => format!(
                "when {node} is {:?}",
                role.unwrap_or(crate::scenario::Role::Leader)
            )
            .to_lowercase(),
        };
        once(rng, trigger, None)
    } else {
        ("never".to_string(), Vec::new())
    }
}

/// One firing's draws, in a fixed order (plans of older scenarios must not move): the action,
/// the partition mode, the hold, the follow-up's delay, the target choice, the clock offset.
fn draw_firing(
    step: &FaultStep,
    target: &Target,
    rng: &mut ChaCha8Rng,
    at: Option<Duration>,
) -> Firing {
    let action = step.actions.0[rng.random_range(0..step.actions.0.len())];
    let mode = action.takes("mode").then(|| {
        step.mode
            .unwrap_or_else(|| match (target, step.every.is_some()) {
                (Target::Select { role: None, .. }, true) => [
                    PartitionMode::Isolate,
                    PartitionMode::Halves,
                    PartitionMode::MajorityRing,
                ][rng.random_range(0..3)],
                _ => PartitionMode::Isolate,
            })
    });
    let hold = step
        .duration
        .filter(|_| action.undo().is_some())
        .map(|d| d.draw(rng));
    let then = step.then.as_ref().map(|t| FollowUp {
        action: t.action,
        after: Some(t.after.draw(rng)),
    });
    let choice = rng.random();
    // Drawn last and only for an action that takes it (clock-skew), so no other scenario's
    // plan moves.
    let offset = step
        .offset
        .filter(|_| action.takes("offset"))
        .map(|o| o.draw(rng));
    Firing {
        at,
        action,
        mode,
        hold,
        then,
        choice,
        offset,
    }
}

/// What an action needs besides its targets: the request a proxy fault matches, chaosfs's
/// settings, a partition's exact sides.
fn action_params(step: &FaultStep) -> ActionParams {
    let matching = step.matching.as_ref();
    ActionParams {
        method: matching.and_then(|m| m.method.clone()),
        path: matching.and_then(|m| m.path.as_ref().map(|p| p.value.clone())),
        header: matching.and_then(|m| m.header.as_ref()).and_then(|h| {
            h.value
                .iter()
                .next()
                .map(|(k, v)| (k.to_lowercase(), v.clone()))
        }),
        count: step.count,
        delay: step.delay.map(|d| d.0),
        jitter: step.jitter.map(|d| d.0),
        paths: step.paths.as_ref().map(|p| p.value.clone()),
        errno: step.errno.as_ref().map(|e| e.value.clone()),
        fraction: step.fraction.as_ref().map(|f| f.value),
        lose_unsynced: step.lose_unsynced.unwrap_or(false),
        container: step.container,
        via: step.via,
        grudge: step.grudge.as_ref().map(|g| {
            g.value
                .iter()
                .map(|(node, drops)| (node.clone(), drops.iter().cloned().collect()))
                .collect()
        }),
        jvm: step.jvm.as_ref().map(|j| j.value.clone()),
    }
}

mod opt_nanos {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&super::super::units::format_duration(*d)),
            None => s.serialize_none(),
        }
    }
}

mod opt_offset {
    use serde::Serializer;

    pub fn serialize<S: Serializer>(ms: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match ms {
            Some(ms) => s.serialize_str(&super::super::units::format_offset(*ms)),
            None => s.serialize_none(),
        }
    }
}

impl Plan {
    /// Writes plan.json (pretty JSON; the plan's hash is over this serialization), which
    /// `run_folder::read_plan` reads back as a `RecordedPlan`.
    pub fn write(&self, run_dir: &std::path::Path) -> std::io::Result<()> {
        crate::run_folder::write_json(run_dir, crate::run_folder::PLAN, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(faults: &str) -> Scenario {
        let text = format!(
            "name: t\nsystem: etcd\ncluster: {{ profile: etcd }}\nworkload: {{ kind: register, rate: 10/s, duration: 60s }}\nfaults:\n{faults}"
        );
        super::super::parse(std::path::Path::new("t.yaml"), &text).unwrap()
    }

    #[test]
    fn same_seed_same_plan_other_seed_other_plan() {
        let s = scenario("  - every: 2s..6s\n    do: [pause, kill, partition]\n    for: 1s..3s\n");
        let a = serde_json::to_string(&make_plan(&s, 7)).unwrap();
        let b = serde_json::to_string(&make_plan(&s, 7)).unwrap();
        let c = serde_json::to_string(&make_plan(&s, 8)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn every_schedule_stays_inside_the_workload() {
        let s = scenario("  - every: 2s..6s\n    do: [pause, kill]\n    for: 1s\n");
        let plan = make_plan(&s, 1);
        let firings = &plan.steps[0].firings;
        assert!(
            firings.len() >= 10 && firings.len() <= 30,
            "{}",
            firings.len()
        );
        let mut last = Duration::ZERO;
        for f in firings {
            let at = f.at.unwrap();
            assert!(at > last && at < Duration::from_secs(60));
            assert!(at - last >= Duration::from_secs(2));
            last = at;
            assert_eq!(f.hold, Some(Duration::from_secs(1)));
        }
    }

    #[test]
    fn adding_a_step_keeps_the_others() {
        let one = scenario("  - at: 5s\n    do: kill\n");
        let two = scenario("  - at: 5s\n    do: kill\n  - every: 3s\n    do: pause\n");
        assert_eq!(
            make_plan(&one, 3).steps[0].firings[0].choice,
            make_plan(&two, 3).steps[0].firings[0].choice
        );
    }

    /// The plan a scenario draws, written, reads back with every value its readers use.
    #[test]
    fn a_written_plan_reads_back() {
        let text = "name: t\nsystem: etcd\ncluster: { profile: etcd }\n\
                    workload: { kind: register, rate: 10/s, duration: 20s }\nfaults:\n\
                    \x20 - every: 2s..6s\n    do: [pause, kill, partition]\n    for: 1s..3s\n\
                    \x20 - at: 5s\n    do: clock-skew\n    offset: +60s..+90s\n    then: { do: restore-clock, after: 2s }\n    optional: true\n";
        let spec = crate::scenario::parse_text(std::path::Path::new("t.yaml"), text).unwrap();
        let plan = make_plan(&spec, 9);
        let dir = std::env::temp_dir().join(format!("chaos-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        plan.write(&dir).unwrap();
        let read = crate::run_folder::read_plan(&dir).unwrap();
        assert_eq!(read.seed, Some(9));
        let steps = read.steps.unwrap();
        assert_eq!(steps.len(), plan.steps.len());
        for (read, planned) in steps.iter().zip(&plan.steps) {
            assert_eq!(read.step, Some(planned.step as u64));
            assert_eq!(read.trigger, planned.trigger);
            assert_eq!(read.optional, planned.optional);
            assert_eq!(read.firings.len(), planned.firings.len());
            for (r, p) in read.firings.iter().zip(&planned.firings) {
                let words = |v: &serde_json::Value| v.as_str().map(str::to_string);
                let p = serde_json::to_value(p).unwrap();
                assert_eq!(r.at, words(&p["at"]));
                assert_eq!(r.action, words(&p["action"]));
                assert_eq!(r.mode, words(&p["mode"]));
                assert_eq!(r.hold, words(&p["hold"]));
                assert_eq!(r.offset, words(&p["offset"]));
                assert_eq!(
                    r.then.as_ref().and_then(|t| t.after.clone()),
                    words(&p["then"]["after"])
                );
            }
        }
        assert!(steps[0].firings.len() > 1);
        assert!(steps[0].firings.iter().all(|f| f.hold.is_some()));
        assert!(steps[1].optional && steps[1].firings[0].offset.is_some());
        let then = steps[1].firings[0].then.clone().unwrap();
        assert_eq!(
            (then.action.as_deref(), then.after.as_deref()),
            (Some("restore-clock"), Some("2s"))
        );
        // A plan of an older format reads, without steps; one that is no plan does not.
        std::fs::write(dir.join(crate::run_folder::PLAN), r#"{"seed": 3}"#).unwrap();
        assert_eq!(crate::run_folder::read_plan(&dir).unwrap().steps, None);
        std::fs::write(dir.join(crate::run_folder::PLAN), r#"{"steps": 3}"#).unwrap();
        let e = crate::run_folder::read_plan(&dir).unwrap_err().to_string();
        assert!(
            e.contains("plan.json: not what a run writes there: "),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
