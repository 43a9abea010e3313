//! A finished run's concrete fault schedule (which steps fired, when, on which nodes) and the
//! scenario text that plays it again exactly: what `chaos run --replay` plays and what every
//! trial of `chaos shrink` varies.
//!
//! The schedule is read from the run folder alone: plan.json (each firing's drawn `for:`,
//! `then:` and mode), faults.jsonl (when each firing applied and to which nodes: a leader or a
//! `pick:` is only known then) and result.json (the seed, where the scenario and compose file
//! were, when the workload began on the history's clock). The replayed scenario has only `at:`
//! triggers, node names as targets and explicit partition grudges: nothing left to chance.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::checks::linearizable;
use crate::error::{HarnessError, Result};
use crate::faults::kinds::{Action, PARAMS};
use crate::run_folder::{
    read_faults, Confirmation, FaultEvent, Grudge, Phase, RecordedPlan, RunResult, PLAN, RESULT,
};
use crate::scenario::units::{format_duration, format_seconds, parse_duration};
use crate::scenario::CheckKind;

/// The keys of a recorded step a concrete firing of `action` keeps as they are: the parameters
/// its fault takes (`Fault::takes`) but those the firing drew (its partition's sides, its
/// clock offset, written from what happened), and `optional`.
fn copied_params(step: &Value, action: &str) -> Map<String, Value> {
    let action = Action::named(action);
    let copied = |key: &str| {
        key == "optional"
            || action
                .is_some_and(|a| a.takes(key) && PARAMS.iter().any(|p| p.key == key && !p.drawn))
    };
    step.as_object()
        .map(|step| {
            step.iter()
                .filter(|(k, _)| copied(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// One firing of a fault step as it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConcreteStep {
    /// The step of the recorded scenario it came from, and which of its firings.
    pub step: usize,
    pub firing: usize,
    /// Since the workload began.
    #[serde(with = "duration_text")]
    pub at: Duration,
    pub action: String,
    pub targets: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Who dropped packets from whom (partitions other than `isolate`, whose sides were drawn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grudge: Option<Grudge>,
    /// How long until the undo (`for:`).
    #[serde(with = "opt_duration_text", skip_serializing_if = "Option::is_none")]
    pub hold: Option<Duration>,
    /// A follow-up action and how long after the apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub then: Option<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
    /// The step's action keys (`delay:`, `match:`, ...), as the scenario wrote them.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
}

impl ConcreteStep {
    /// When the step's last effect ends: its undo or its follow-up.
    pub fn ends(&self) -> Duration {
        let then = self
            .then
            .as_ref()
            .and_then(|(_, after)| parse_duration(after).ok())
            .unwrap_or_default();
        self.at + self.hold.unwrap_or_default().max(then)
    }

    /// `12.3s kill etcd2 for 4s`, for tables and the report.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} {} {}",
            format_seconds(self.at),
            self.action,
            self.targets.join(",")
        );
        if let Some(mode) = &self.mode {
            s.push_str(&format!(" ({mode})"));
        }
        if let Some(offset) = &self.offset {
            s.push_str(&format!(" {offset}"));
        }
        if let Some(hold) = self.hold {
            s.push_str(&format!(" for {}", format_seconds(hold)));
        }
        if let Some((action, after)) = &self.then {
            s.push_str(&format!(", {action} after {after}"));
        }
        s
    }

    /// The step as scenario YAML (a list item indented under `faults:`).
    fn yaml(&self) -> String {
        let j = |v: &Value| v.to_string();
        let mut out = format!(
            "  # step {} of the recorded scenario, firing {}\n  - at: {}\n    do: {}\n    target: {}\n",
            self.step,
            self.firing + 1,
            format_duration(self.at),
            self.action,
            j(&json!(self.targets))
        );
        if let Some(mode) = &self.mode {
            out.push_str(&format!("    mode: {mode}\n"));
        }
        if let Some(grudge) = &self.grudge {
            out.push_str(&format!("    grudge: {}\n", j(&json!(grudge))));
        }
        if let Some(hold) = self.hold {
            out.push_str(&format!("    for: {}\n", format_duration(hold)));
        }
        if let Some((action, after)) = &self.then {
            out.push_str(&format!("    then: {{ do: {action}, after: {after} }}\n"));
        }
        if let Some(offset) = &self.offset {
            out.push_str(&format!("    offset: \"{offset}\"\n"));
        }
        for (key, value) in &self.params {
            out.push_str(&format!("    {key}: {}\n", j(value)));
        }
        out
    }
}

/// The parts of a workload that shrinking shortens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkloadShape {
    #[serde(with = "duration_text")]
    pub duration: Duration,
    pub processes: u32,
    /// Operations per second.
    pub rate: f64,
}

impl WorkloadShape {
    pub fn describe(&self) -> String {
        format!(
            "{} x {} processes at {}/s",
            format_seconds(self.duration),
            self.processes,
            self.rate
        )
    }
}

/// A schedule and workload to play: what a replay plays and what a shrink trial varies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Schedule {
    pub steps: Vec<ConcreteStep>,
    pub workload: WorkloadShape,
}

/// A finished run folder, read for replaying.
#[derive(Debug, Clone)]
pub struct RecordedRun {
    pub dir: PathBuf,
    pub name: String,
    pub seed: u64,
    /// The scenario file the run was played from: messages name it, and a relative compose
    /// file is looked for from there.
    pub scenario_path: PathBuf,
    pub compose_path: PathBuf,
    /// The run's scenario text with its credentials restored from the scenario file.
    text: String,
    /// The run's scenario, as a value (to copy a step's action keys and the workload).
    value: Value,
    pub schedule: Schedule,
    /// Names of the checks that found a violation (`linearizable (cas-register)`).
    pub failed_checks: Vec<String>,
    /// When the first linearizability violation's witness completed, since the workload
    /// began: a fault that started later cannot have caused it.
    pub violation_at: Option<Duration>,
    /// Whether the run reached every precondition of its `reached:` and found a violation: a
    /// smaller schedule must then reach them too (shrink).
    pub confirmed: bool,
}

fn missing(dir: &Path, what: &str) -> HarnessError {
    HarnessError::BadInput(format!("{}: {what}", dir.display()))
}

/// A run folder's file that could not be read: a missing one asks whether this is a run folder.
fn no_file(dir: &Path, file: &str, e: HarnessError) -> HarnessError {
    if e.to_string().ends_with(": missing") {
        missing(dir, &format!("no {file}; is this a run folder?"))
    } else {
        e
    }
}

impl RecordedRun {
    pub fn read(dir: &Path) -> Result<RecordedRun> {
        if !dir.is_dir() {
            return Err(missing(dir, "no such folder; is this a run folder?"));
        }
        let recorded = crate::run_folder::read(dir, "scenario.yaml").map_err(|e| {
            if e.to_string().ends_with(": missing") {
                missing(dir, "no scenario.yaml; is this a run folder?")
            } else {
                e
            }
        })?;
        let plan = crate::run_folder::read_plan(dir).map_err(|e| no_file(dir, PLAN, e))?;
        let result = RunResult::read(dir).map_err(|e| no_file(dir, RESULT, e))?;
        let older = |field: &str| {
            missing(
                dir,
                &format!(
                    "result.json has no `{field}`: a run from an older chaos, which did not \
                     record what a replay needs; play the scenario again"
                ),
            )
        };
        let meta = result.meta.clone();
        let scenario_path = meta.scenario_path.ok_or_else(|| older("scenario_path"))?;
        let compose_path = meta.compose_path.ok_or_else(|| older("compose_path"))?;
        let seed = meta.seed.ok_or_else(|| older("seed"))?;
        let name = meta.scenario.unwrap_or_else(|| "replay".to_string());
        let Some(workload_started) = meta.workload_started_ns else {
            return Err(missing(
                dir,
                "result.json has no `workload_started_ns`: the workload never started (or the \
                 run is from an older chaos), so there is no schedule to replay",
            ));
        };
        let events = read_faults(dir);

        let text = restore_credentials(&recorded, &scenario_path, dir)?;
        let value: Value = serde_saphyr::from_str(&text)
            .map_err(|e| missing(dir, &crate::scenario::wording::in_file("scenario.yaml", &e)))?;
        let steps = concrete_steps(&plan, &events, &value, workload_started)
            .map_err(|e| missing(dir, &e))?;
        let workload = workload_shape(dir, &text).map_err(|e| missing(dir, &e))?;
        let failed_checks = result
            .checks
            .iter()
            .filter(|c| c.verdict == checker::Verdict::Illegal)
            .map(|c| c.name.clone())
            .collect();
        let violation_at = first_violation(&result)
            .map(|t| Duration::from_nanos(t.saturating_sub(workload_started)));
        Ok(RecordedRun {
            confirmed: result.confirmation == Some(Confirmation::Confirmed),
            dir: dir.to_path_buf(),
            name,
            seed,
            scenario_path,
            compose_path,
            text,
            value,
            schedule: Schedule { steps, workload },
            failed_checks,
            violation_at,
        })
    }

    /// The scenario that plays `schedule` with the run's seed: the recorded scenario with its
    /// `faults:` replaced by the concrete steps, the compose file named by its absolute path
    /// (so the text plays from any folder), and the workload's length, processes and rate.
    pub fn scenario_text(&self, schedule: &Schedule, header: &str) -> String {
        let mut text = self.text.clone();
        let mut cluster = self.value["cluster"].clone();
        if !cluster.is_object() {
            cluster = json!({});
        }
        cluster["compose"] = json!(self.compose_path);
        text = set_top_level(&text, "cluster", &format!("cluster: {cluster}\n"));
        text = set_top_level(&text, "seed", &format!("seed: {}\n", self.seed));
        if schedule.workload != self.schedule.workload {
            let mut workload = self.value["workload"].clone();
            let w = &schedule.workload;
            workload["duration"] = json!(format_duration(w.duration));
            workload["processes"] = json!(w.processes);
            workload["rate"] = json!(format!("{}/s", w.rate));
            text = set_top_level(&text, "workload", &format!("workload: {workload}\n"));
        }
        let mut faults = String::from(if schedule.steps.is_empty() {
            "faults: []\n"
        } else {
            "faults:\n"
        });
        for step in &schedule.steps {
            faults.push_str(&step.yaml());
        }
        text = set_top_level(&text, "faults", &faults);
        let renumber = StepRenumbering::new(schedule);
        if self.value["reached"].is_object() {
            let mut reached = self.value["reached"].clone();
            renumber.apply(&mut reached);
            text = set_top_level(&text, "reached", &format!("reached: {reached}\n"));
        }
        if let Some(step) = self.value["workload"]["lasts-past"]["step"].as_u64() {
            let mut workload =
                serde_saphyr::from_str::<Value>(&text).unwrap_or_default()["workload"].clone();
            workload["lasts-past"]["step"] = json!(renumber.last(step as usize).unwrap_or(0));
            text = set_top_level(&text, "workload", &format!("workload: {workload}\n"));
        }
        format!("{header}{text}")
    }

    /// The recorded steps that `reached:` and `workload.lasts-past` name and that `schedule`
    /// no longer plays: a candidate without them cannot reach the same situation.
    pub fn named_steps_dropped(&self, schedule: &Schedule) -> Vec<usize> {
        let mut named = Vec::new();
        if let Some(reached) = self.value["reached"].as_object() {
            for p in reached.values() {
                StepRenumbering::collect(p, &mut named);
            }
        }
        named.extend(
            self.value["workload"]["lasts-past"]["step"]
                .as_u64()
                .map(|s| s as usize),
        );
        named.sort_unstable();
        named.dedup();
        named.retain(|s| !schedule.steps.iter().any(|c| c.step == *s));
        named
    }
}

/// A concrete schedule plays each firing of a recorded step as a step of its own, so the step
/// numbers a scenario's `reached:` names change: "step N applied", "during N" and "before N"
/// become the first concrete step from N, "after N" (once it is over) the last.
struct StepRenumbering(Vec<usize>);

/// The keys of a `reached:` predicate that name a step, and whether they mean its end.
/// (`of-step`, the nodes a step acted on, becomes the first firing's, whose apply names them.)
const STEP_KEYS: &[(&str, bool)] = &[
    ("step", false),
    ("of-step", false),
    ("during", false),
    ("invoked-before", false),
    ("answered-before", false),
    ("answered-after-applied", false),
    ("after-step", true),
    ("invoked-after", true),
    ("answered-after", true),
];

impl StepRenumbering {
    fn new(schedule: &Schedule) -> StepRenumbering {
        StepRenumbering(schedule.steps.iter().map(|c| c.step).collect())
    }

    fn first(&self, recorded: usize) -> Option<usize> {
        self.0.iter().position(|s| *s == recorded)
    }

    fn last(&self, recorded: usize) -> Option<usize> {
        self.0.iter().rposition(|s| *s == recorded)
    }

    /// Renumbers every step a predicate (or a nested filter of it) names, in place.
    fn apply(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    let end = STEP_KEYS
                        .iter()
                        .find(|(k, _)| k == key)
                        .map(|(_, end)| *end);
                    match (end, v.as_u64()) {
                        (Some(end), Some(n)) => {
                            let n = n as usize;
                            let new = if end { self.last(n) } else { self.first(n) };
                            // Dropped steps are refused before a candidate plays
                            // (named_steps_dropped); keep the number as it was.
                            *v = json!(new.unwrap_or(n));
                        }
                        _ => self.apply(v),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.apply(v)),
            _ => {}
        }
    }

    fn collect(value: &Value, out: &mut Vec<usize>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (STEP_KEYS.iter().any(|(k, _)| k == key), v.as_u64()) {
                        (true, Some(n)) => out.push(n as usize),
                        _ => StepRenumbering::collect(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| StepRenumbering::collect(v, out)),
            _ => {}
        }
    }
}

/// The run's scenario text with the credentials the run folder keeps as `"[redacted]"` taken
/// from the scenario file it was played from (the `s3:` block, the cluster's environment).
fn restore_credentials(recorded: &str, scenario_path: &Path, dir: &Path) -> Result<String> {
    const REDACTED: &str = "[redacted]";
    if !recorded.contains(REDACTED) {
        return Ok(recorded.to_string());
    }
    let original = crate::scenario::read_file(scenario_path).map_err(|e| {
        missing(
            dir,
            &format!(
                "scenario.yaml has redacted credentials and the scenario it was played from, {}, \
                 cannot be read for them ({e})",
                scenario_path.display()
            ),
        )
    })?;
    let parse = |t: &str| serde_saphyr::from_str::<Value>(t).unwrap_or(Value::Null);
    let (run, source) = (parse(recorded), parse(&original));
    let mut text = recorded.to_string();
    if run["s3"].to_string().contains(REDACTED) && source["s3"].is_object() {
        text = set_top_level(&text, "s3", &format!("s3: {}\n", source["s3"]));
    }
    let mut cluster = run["cluster"].clone();
    if let Some(env) = cluster["environment"].as_object_mut() {
        for (key, value) in env.iter_mut() {
            if value == REDACTED {
                *value = source["cluster"]["environment"][key].clone();
            }
        }
        text = set_top_level(&text, "cluster", &format!("cluster: {cluster}\n"));
    }
    if text.contains(REDACTED) {
        return Err(missing(
            dir,
            &format!(
                "scenario.yaml has redacted credentials that {} no longer holds",
                scenario_path.display()
            ),
        ));
    }
    Ok(text)
}

/// Each firing that applied, in the order of the recorded steps: the k-th `apply` event of a
/// step in faults.jsonl is its plan's k-th firing (a skipped one did nothing and is left out).
fn concrete_steps(
    plan: &RecordedPlan,
    events: &[FaultEvent],
    scenario: &Value,
    workload_started: u64,
) -> std::result::Result<Vec<ConcreteStep>, String> {
    let plan_steps = plan
        .steps
        .as_ref()
        .ok_or("plan.json has no `steps` (an older format?)")?;
    let mut out = Vec::new();
    for (i, plan_step) in plan_steps.iter().enumerate() {
        let firings = &plan_step.firings;
        let applies = events
            .iter()
            .filter(|e| e.step == Some(i) && e.phase == Phase::Apply);
        for (k, (event, firing)) in applies.zip(firings).enumerate() {
            if event.outcome.starts_with("skipped") {
                continue;
            }
            let duration = |v: &Option<String>| v.as_deref().and_then(|t| parse_duration(t).ok());
            let mode = firing.mode.clone();
            let action = firing
                .action
                .clone()
                .unwrap_or_else(|| event.action.clone());
            out.push(ConcreteStep {
                step: i,
                firing: k,
                at: Duration::from_nanos(event.started.saturating_sub(workload_started)),
                params: copied_params(&scenario["faults"][i], &action),
                action,
                targets: event.targets.clone(),
                // An isolated node's sides follow from its name; other modes drew theirs.
                grudge: event
                    .grudge
                    .clone()
                    .filter(|_| mode.as_deref() != Some("isolate")),
                mode,
                hold: duration(&firing.hold),
                then: firing.then.as_ref().and_then(|then| {
                    let after = then.after.as_deref().unwrap_or("0s");
                    Some((then.action.clone()?, after.to_string()))
                }),
                offset: event.offset.clone().or_else(|| firing.offset.clone()),
            });
        }
    }
    out.sort_by_key(|s| s.at);
    Ok(out)
}

/// The workload's length, processes and rate as the scenario parser reads them (its defaults
/// included).
fn workload_shape(dir: &Path, text: &str) -> std::result::Result<WorkloadShape, String> {
    let spec = crate::scenario::parse_text(&dir.join("scenario.yaml"), text)
        .map_err(|e| format!("scenario.yaml does not parse: {e}"))?;
    let w = &spec.workload;
    Ok(WorkloadShape {
        duration: w.duration.0,
        processes: w.processes,
        rate: w.rate.0,
    })
}

/// When the earliest linearizability violation's witness completed (history clock): the
/// operation that cannot be placed and the one that ruled it out.
fn first_violation(result: &RunResult) -> Option<u64> {
    let linearizable = CheckKind::Linearizable.name();
    result
        .checks
        .iter()
        .filter(|c| c.check == linearizable && c.verdict == checker::Verdict::Illegal)
        .flat_map(|c| {
            c.detail_as::<linearizable::Detail>()
                .unwrap_or_default()
                .partitions
        })
        .filter_map(|p| {
            let e = p.explanation?;
            let op = e.op.end()?;
            Some(op.max(e.after.and_then(|a| a.end()).unwrap_or(0)))
        })
        .min()
}

/// Replaces the top-level `key:` block of a YAML text (its line and the lines under it, up to
/// the next top-level key and the comments just above that key) with `block`; appends `block`
/// when the key is absent. Comments and layout elsewhere are kept.
pub fn set_top_level(text: &str, key: &str, block: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let is_key = |l: &str| l.starts_with(&format!("{key}:"));
    let top = |l: &str| {
        l.chars()
            .next()
            .is_some_and(|c| !c.is_whitespace() && c != '#')
    };
    let Some(start) = lines.iter().position(|l| is_key(l)) else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(block);
        return out;
    };
    let mut end = (start + 1..lines.len())
        .find(|&i| top(lines[i]))
        .unwrap_or(lines.len());
    if end < lines.len() {
        while end > start + 1 && (lines[end - 1].starts_with('#') || lines[end - 1].is_empty()) {
            end -= 1;
        }
    }
    let mut out = String::new();
    for l in &lines[..start] {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(block);
    for l in &lines[end..] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

mod duration_text {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::scenario::units::format_duration(*d))
    }
}

mod opt_duration_text {
    pub fn serialize<S: serde::Serializer>(
        d: &Option<std::time::Duration>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::duration_text::serialize(d, s),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_top_level_block_is_replaced_and_the_comments_of_the_next_key_stay() {
        let text =
            "name: t\nfaults:\n  - at: 1s\n    do: kill\n\n# what must hold\nchecks:\n  - x\n";
        let out = set_top_level(text, "faults", "faults: []\n");
        assert_eq!(
            out,
            "name: t\nfaults: []\n\n# what must hold\nchecks:\n  - x\n"
        );
        let out = set_top_level("name: t\n", "seed", "seed: 4\n");
        assert_eq!(out, "name: t\nseed: 4\n");
        let out = set_top_level(
            "cluster: { profile: etcd }\nseed: 1\n",
            "cluster",
            "cluster: {}\n",
        );
        assert_eq!(out, "cluster: {}\nseed: 1\n");
    }

    fn recorded() -> (RecordedPlan, Vec<FaultEvent>, Value) {
        let plan = serde_json::from_value(json!({"seed": 1, "steps": [
            {"step": 0, "trigger": "every 2s..3s", "firings": [
                {"at": "2s", "action": "partition", "mode": "halves", "hold": "1500ms", "choice": 1},
                {"at": "4500ms", "action": "kill", "hold": "2s", "choice": 2},
                {"at": "7s", "action": "pause", "hold": "1s", "choice": 3}]},
            {"step": 1, "trigger": "on log", "firings": [
                {"action": "clock-skew", "offset": "+90s", "then": {"action": "restore-clock", "after": "5s"}, "choice": 4}]},
        ]}))
        .unwrap();
        let ns = |s: f64| (s * 1e9) as u64;
        let events = serde_json::from_value(json!([
            {"time": ns(3.0), "started": ns(3.0), "step": 0, "action": "partition", "phase": "apply",
                   "targets": ["n2"], "mode": "halves", "outcome": "ok",
                   "grudge": {"n1": [], "n2": ["n1", "n3"], "n3": ["n2"]}},
            {"time": ns(4.6), "started": ns(4.5), "step": 0, "action": "heal", "phase": "undo", "targets": ["n2"], "outcome": "ok"},
            {"time": ns(5.6), "started": ns(5.5), "step": 0, "action": "kill", "phase": "apply", "targets": [], "outcome": "skipped: no node"},
            {"time": ns(6.0), "started": ns(5.9), "step": 1, "action": "clock-skew", "phase": "apply", "targets": ["n3"], "outcome": "ok", "offset": "+90s"},
            {"time": ns(8.1), "started": ns(8.0), "step": 0, "action": "pause", "phase": "apply", "targets": ["n1"], "outcome": "ok"},
            {"time": ns(9.0), "started": ns(9.0), "action": "heal", "phase": "final-heal", "targets": [], "outcome": "ok"},
        ]))
        .unwrap();
        let scenario = json!({"faults": [
            {"every": "2s..3s", "do": ["partition", "kill", "pause"], "for": "1s..2s"},
            {"on": {"log": {"regex": "x"}}, "do": "clock-skew", "offset": "+60s..+90s", "optional": true}]});
        (plan, events, scenario)
    }

    #[test]
    fn the_schedule_is_what_applied_when_it_applied_on_the_nodes_it_reached() {
        let (plan, events, scenario) = recorded();
        let steps = concrete_steps(&plan, &events, &scenario, 1_000_000_000).unwrap();
        let described: Vec<String> = steps.iter().map(ConcreteStep::describe).collect();
        assert_eq!(
            described,
            [
                "2s partition n2 (halves) for 1.5s",
                "4.9s clock-skew n3 +90s, restore-clock after 5s",
                "7s pause n1 for 1s"
            ]
        );
        assert_eq!(
            json!(steps[0].grudge.as_ref().unwrap()["n2"]),
            json!(["n1", "n3"])
        );
        assert_eq!(steps[1].params["optional"], json!(true));
        // The skipped kill (firing 2 of step 0) is not replayed; the pause is firing 3.
        assert_eq!((steps[2].step, steps[2].firing), (0, 2));
    }

    #[test]
    fn the_concrete_steps_parse_back_as_a_scenario_with_the_same_schedule() {
        let (plan, events, scenario) = recorded();
        let steps = concrete_steps(&plan, &events, &scenario, 1_000_000_000).unwrap();
        let yaml: String = steps.iter().map(ConcreteStep::yaml).collect();
        let text = format!(
            "name: t\nsystem: etcd\ncluster: {{ profile: etcd }}\nworkload: {{ kind: register, rate: 10/s, duration: 20s }}\nfaults:\n{yaml}"
        );
        let spec = crate::scenario::parse_text(Path::new("t.yaml"), &text).unwrap();
        let plan = crate::scenario::plan::make_plan(&spec, 9);
        let fired: Vec<(Option<Duration>, String)> = plan
            .steps
            .iter()
            .map(|s| (s.firings[0].at, format!("{:?}", s.target)))
            .collect();
        assert_eq!(
            fired,
            [
                (Some(Duration::from_secs(2)), r#"Nodes(["n2"])"#.to_string()),
                (
                    Some(Duration::from_millis(4900)),
                    r#"Nodes(["n3"])"#.to_string()
                ),
                (Some(Duration::from_secs(7)), r#"Nodes(["n1"])"#.to_string()),
            ]
        );
        assert_eq!(plan.steps[0].params.grudge.as_ref().unwrap()["n3"].len(), 1);
        assert_eq!(plan.steps[1].firings[0].offset, Some(90_000));
        assert_eq!(
            plan.steps[1].firings[0].then.as_ref().unwrap().after,
            Some(Duration::from_secs(5))
        );
    }

    #[test]
    fn preconditions_follow_their_steps_into_the_concrete_schedule() {
        // Recorded steps 0 (every: two firings played) and 1: the concrete steps are 0, 1
        // (from step 0) and 2 (from step 1).
        let (plan, events, scenario) = recorded();
        let mut steps = concrete_steps(&plan, &events, &scenario, 1_000_000_000).unwrap();
        steps.swap(1, 2);
        let renumber = StepRenumbering(steps.iter().map(|c| c.step).collect());
        let mut reached = json!({
            "a": {"step": 0, "undone": true},
            "b": {"log": {"regex": "x", "after-step": 0}},
            "c": {"resent": {"first": {"answered-before": 1}, "again": {"invoked-after": 1}}},
            "d": {"history": {"during": 1, "at-least": 5}},
        });
        renumber.apply(&mut reached);
        assert_eq!(reached["a"]["step"], 0, "applied: the first firing");
        assert_eq!(
            reached["b"]["log"]["after-step"], 1,
            "over: the last firing"
        );
        assert_eq!(reached["c"]["resent"]["first"]["answered-before"], 2);
        assert_eq!(reached["c"]["resent"]["again"]["invoked-after"], 2);
        assert_eq!(reached["d"]["history"]["during"], 2);
        assert_eq!(reached["d"]["history"]["at-least"], 5, "not a step");
        let mut named = Vec::new();
        StepRenumbering::collect(
            &json!({"x": {"step": 3}, "y": {"history": {"during": 1, "at-least": 7}}}),
            &mut named,
        );
        named.sort_unstable();
        assert_eq!(named, [1, 3]);
    }
}
