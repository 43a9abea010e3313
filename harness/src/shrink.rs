//! `chaos shrink RUN_DIR`: the smallest fault schedule that still fails the run's check.
//!
//! Every candidate is a real run of the recorded scenario with a concrete schedule (replay.rs),
//! in its own folder under RUN_DIR/shrink/. The search, within a budget of runs:
//! 1. the recorded schedule replayed (does the failure reproduce at all?);
//! 2. the steps that began after the first violation's witness completed dropped (they cannot
//!    have caused it);
//! 3. delta debugging over the remaining steps (Zeller's ddmin);
//! 4. each `for:` window halved, then each fault started later within its window;
//! 5. the workload cut to end shortly after the last fault;
//! 6. half the processes, then half the rate.
//!
//! A candidate fails when the same check finds a violation (for linearizability, on any key)
//! in `need` of `repeats` runs, and, when the run was confirmed (every `reached:` precondition
//! reached), when it is confirmed too; a candidate that drops a step the preconditions name is
//! refused without a play. The smallest failing schedule is written as a plain scenario,
//! RUN_DIR/shrink/minimal.yaml, which is then played as it is `confirm` times to say how
//! reproducible it is; shrink.json and the run's report compare the two schedules.

use std::path::{Path, PathBuf};
use std::time::Duration;

use checker::Verdict;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::error::{
    HarnessError, Result, EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNKNOWN, EXIT_VIOLATION,
};
use crate::load::LoadOptions;
use crate::replay::{ConcreteStep, RecordedRun, Schedule};
use crate::run::{run_scenario, RunOptions};
use crate::run_folder::{
    Confirmation, Reproduced, RunResult, ShrinkSummary, ShrinkTrial, ShrunkSchedule, ShrunkStep,
    ShrunkWorkload,
};
use crate::scenario::units::{format_duration, format_seconds};

pub struct ShrinkOptions {
    /// Runs the whole shrink may play, confirmation included.
    pub runs: u32,
    /// A candidate is played up to `repeats` times and fails when `need` of them fail.
    pub repeats: u32,
    pub need: u32,
    /// Plays of minimal.yaml at the end, to say how reproducible it is (within `runs`).
    pub confirm: u32,
    pub ready_timeout: Option<Duration>,
}

/// How a candidate did.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tried {
    Fails,
    Passes,
    /// The budget ran out or the user interrupted before it was decided.
    Stopped,
}

struct Trial {
    label: String,
    schedule: Schedule,
    failures: u32,
    plays: u32,
    folders: Vec<String>,
    failed: bool,
}

struct Shrinker<'a> {
    run: &'a RecordedRun,
    options: &'a ShrinkOptions,
    dir: PathBuf,
    interrupt: CancellationToken,
    /// Runs the search may use (the budget less the confirmation plays).
    search_budget: u32,
    used: u32,
    trials: Vec<Trial>,
    best: Schedule,
    /// Failures and plays of exactly `best`.
    best_record: (u32, u32),
    reduced: bool,
    interrupted: bool,
    /// A trial the harness could not play (Docker gone, a cluster that never got ready): the
    /// search stops, and a schedule that could not play is no schedule that passed.
    harness_error: Option<String>,
}

pub async fn shrink(
    run_dir: &Path,
    options: &ShrinkOptions,
    interrupt: CancellationToken,
) -> Result<i32> {
    let (run, dir) = open_run(run_dir, options)?;
    print_recorded(&run);
    let mut s = Shrinker {
        run: &run,
        options,
        dir,
        interrupt,
        search_budget: options.runs.saturating_sub(options.confirm).max(1),
        used: 0,
        trials: Vec::new(),
        best: run.schedule.clone(),
        best_record: (0, 0),
        reduced: false,
        interrupted: false,
        harness_error: None,
    };
    let baseline = s
        .try_candidate(run.schedule.clone(), "the recorded schedule, replayed")
        .await;
    if baseline != Tried::Fails {
        return s.not_reproduced(baseline);
    }
    let finished = s.search().await;
    s.conclude(finished).await
}

/// The run to shrink, and its fresh shrink/ folder.
fn open_run(run_dir: &Path, options: &ShrinkOptions) -> Result<(RecordedRun, PathBuf)> {
    if options.need == 0 || options.need > options.repeats {
        return Err(HarnessError::BadInput(format!(
            "--need {} of --repeats {}: need must be between 1 and repeats",
            options.need, options.repeats
        )));
    }
    let run = RecordedRun::read(run_dir)?;
    if run.failed_checks.is_empty() {
        return Err(HarnessError::BadInput(format!(
            "{}: no check of this run found a violation; shrink a run that failed",
            run_dir.display()
        )));
    }
    let dir = run_dir.join("shrink");
    if dir.exists() {
        eprintln!("replacing the earlier shrink in {}", dir.display());
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", dir.display())))?;
    Ok((run, dir))
}

/// The recorded schedule, and the head of the table of trials.
fn print_recorded(run: &RecordedRun) {
    println!(
        "shrinking {} (seed {}): {} fault steps, workload {}; the failure to keep: {}",
        run.name,
        run.seed,
        run.schedule.steps.len(),
        run.schedule.workload.describe(),
        run.failed_checks.join(", ")
    );
    for step in &run.schedule.steps {
        println!("  {}", step.describe());
    }
    println!(
        "\n{:>5}  {:>5}  {:>6}  {:<34}  candidate",
        "trial", "steps", "failed", "workload"
    );
}

impl Shrinker<'_> {
    /// The recorded schedule did not fail again (or could not be played): say so and stop.
    fn not_reproduced(&self, baseline: Tried) -> Result<i32> {
        let conclusion = if let Some(e) = &self.harness_error {
            format!("the recorded schedule could not be replayed: {e}")
        } else if self.interrupted {
            "interrupted before the recorded schedule was replayed".to_string()
        } else if baseline == Tried::Stopped {
            "the budget ran out before the recorded schedule was replayed".to_string()
        } else {
            format!(
                "the failure did not reproduce: the recorded schedule passed {} of {} replays",
                self.best_record.1 - self.best_record.0,
                self.best_record.1
            )
        };
        println!("\n{conclusion}");
        self.write_summary(&conclusion, None)?;
        Ok(if self.harness_error.is_some() {
            EXIT_INFRA
        } else if self.interrupted {
            EXIT_INTERRUPTED
        } else if baseline == Tried::Stopped {
            EXIT_UNKNOWN
        } else {
            EXIT_OK
        })
    }

    /// Writes minimal.yaml, plays it `--confirm` times, and says how it ended.
    async fn conclude(&mut self, finished: bool) -> Result<i32> {
        let run = self.run;
        let minimal_path = self.dir.join("minimal.yaml");
        let header = format!(
            "# The smallest schedule `chaos shrink` found that still fails {} ({}).\n\
             # Recorded run: {}\n",
            run.failed_checks.join(", "),
            if self.reduced {
                "reduced from the recorded one"
            } else {
                "the recorded one"
            },
            run.dir.display()
        );
        let text = run.scenario_text(&self.best, &header);
        crate::run_folder::write_file(&minimal_path, text.as_bytes())
            .map_err(|e| HarnessError::infra(e.to_string()))?;
        if !self.interrupted && self.harness_error.is_none() {
            self.confirm(&minimal_path).await;
        }
        let (failures, plays) = self.best_record;
        let (kept, recorded) = (self.best.steps.len(), run.schedule.steps.len());
        let out_of_budget = !self.reduced && !finished;
        let conclusion = if let Some(e) = &self.harness_error {
            format!(
                "stopped, a trial could not play ({e}): the smallest failing schedule so far has {kept} of {recorded} steps; reproduced {failures} of {plays}"
            )
        } else if self.interrupted {
            format!(
                "interrupted: the smallest failing schedule so far has {kept} of {recorded} steps; reproduced {failures} of {plays}"
            )
        } else if out_of_budget {
            format!(
                "the budget of {} runs ran out before any reduction; the recorded schedule reproduced {failures} of {plays}",
                self.options.runs
            )
        } else {
            format!(
                "{kept} of {recorded} fault steps still fail, workload {}; reproduced {failures} of {plays}",
                self.best.workload.describe()
            )
        };
        println!("\n{conclusion}");
        for step in &self.best.steps {
            println!("  {}", step.describe());
        }
        println!("{}", minimal_path.display());
        self.write_summary(&conclusion, Some(&minimal_path))?;
        Ok(if self.harness_error.is_some() {
            EXIT_INFRA
        } else if self.interrupted {
            EXIT_INTERRUPTED
        } else if out_of_budget {
            EXIT_UNKNOWN
        } else {
            EXIT_VIOLATION
        })
    }
}

impl Shrinker<'_> {
    /// The passes after the baseline; true when every candidate was tried (the budget did not
    /// cut the search short).
    async fn search(&mut self) -> bool {
        // Steps that began after the violation was already witnessed.
        if let Some(seen) = self.run.violation_at {
            let before: Vec<ConcreteStep> = self
                .best
                .steps
                .iter()
                .filter(|s| s.at <= seen)
                .cloned()
                .collect();
            if before.len() < self.best.steps.len() {
                let label = format!(
                    "drop the steps that began after the violation was seen ({})",
                    format_seconds(seen)
                );
                if self.try_steps(before, &label).await == Tried::Stopped {
                    return false;
                }
            }
        }
        if !self.ddmin().await {
            return false;
        }
        // Shorter windows, then later starts.
        for i in 0..self.best.steps.len() {
            let Some(hold) = self.best.steps[i]
                .hold
                .filter(|h| *h >= Duration::from_secs(1))
            else {
                continue;
            };
            let mut candidate = self.best.clone();
            candidate.steps[i].hold = Some(round_ms(hold / 2));
            let label = format!("halve the window of `{}`", self.best.steps[i].describe());
            if self.try_candidate(candidate, &label).await == Tried::Stopped {
                return false;
            }
        }
        for i in 0..self.best.steps.len() {
            let Some(hold) = self.best.steps[i]
                .hold
                .filter(|h| *h >= Duration::from_secs(2))
            else {
                continue;
            };
            let mut candidate = self.best.clone();
            let shift = round_ms(hold / 2);
            candidate.steps[i].at += shift;
            candidate.steps[i].hold = Some(hold - shift);
            candidate.steps.sort_by_key(|s| s.at);
            let label = format!(
                "start `{}` {} later",
                self.best.steps[i].describe(),
                format_seconds(shift)
            );
            if self.try_candidate(candidate, &label).await == Tried::Stopped {
                return false;
            }
        }
        // The workload ends soon after the last fault is undone.
        let last_end = self.best.steps.iter().map(ConcreteStep::ends).max();
        // Whole seconds, for people reading minimal.yaml.
        let end = last_end.unwrap_or_default() + Duration::from_secs(2);
        let end = Duration::from_secs(end.as_secs_f64().ceil() as u64).max(Duration::from_secs(3));
        if end.as_secs_f64() < self.best.workload.duration.as_secs_f64() * 0.9 {
            let mut candidate = self.best.clone();
            candidate.workload.duration = end;
            let label = format!("end the workload at {}", format_seconds(end));
            if self.try_candidate(candidate, &label).await == Tried::Stopped {
                return false;
            }
        }
        if self.best.workload.processes > 1 {
            let mut candidate = self.best.clone();
            candidate.workload.processes = self.best.workload.processes.div_ceil(2);
            let label = format!("{} processes", candidate.workload.processes);
            if self.try_candidate(candidate, &label).await == Tried::Stopped {
                return false;
            }
        }
        let mut candidate = self.best.clone();
        candidate.workload.rate = (self.best.workload.rate / 2.0).max(1.0);
        if candidate.workload.rate < self.best.workload.rate {
            let label = format!("rate {}/s", candidate.workload.rate);
            if self.try_candidate(candidate, &label).await == Tried::Stopped {
                return false;
            }
        }
        true
    }

    /// Zeller's ddmin over the steps of `best`: try each chunk alone, then each complement,
    /// refining the chunks until single steps; false when stopped.
    async fn ddmin(&mut self) -> bool {
        let mut chunks = 2usize;
        while self.best.steps.len() >= 2 {
            let steps = self.best.steps.clone();
            let n = chunks.min(steps.len());
            let parts: Vec<Vec<usize>> = (0..n)
                .map(|k| (k * steps.len() / n..(k + 1) * steps.len() / n).collect())
                .collect();
            let pick = |keep: &dyn Fn(usize) -> bool| -> Vec<ConcreteStep> {
                steps
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| keep(*i))
                    .map(|(_, s)| s.clone())
                    .collect()
            };
            let mut reduced = false;
            // With two chunks each chunk is the other's complement, so complements come
            // only after finer splits.
            for part in &parts {
                let only = pick(&|i| part.contains(&i));
                let label = format!("keep only {}", names(&only));
                match self.try_steps(only, &label).await {
                    Tried::Fails => {
                        chunks = 2;
                        reduced = true;
                        break;
                    }
                    Tried::Stopped => return false,
                    Tried::Passes => {}
                }
            }
            if !reduced && n > 2 {
                for part in &parts {
                    let rest = pick(&|i| !part.contains(&i));
                    let label = format!("drop {}", names(&pick(&|i| part.contains(&i))));
                    match self.try_steps(rest, &label).await {
                        Tried::Fails => {
                            chunks = (n - 1).max(2);
                            reduced = true;
                            break;
                        }
                        Tried::Stopped => return false,
                        Tried::Passes => {}
                    }
                }
            }
            if !reduced {
                if n >= steps.len() {
                    break;
                }
                chunks = (2 * n).min(steps.len());
            }
        }
        true
    }

    async fn try_steps(&mut self, steps: Vec<ConcreteStep>, label: &str) -> Tried {
        let candidate = Schedule {
            steps,
            workload: self.best.workload,
        };
        self.try_candidate(candidate, label).await
    }

    /// Plays `candidate` until it has failed `need` times or cannot any more; keeps it as the
    /// best when it fails.
    async fn try_candidate(&mut self, candidate: Schedule, label: &str) -> Tried {
        let number = self.trials.len() + 1;
        let text = self.run.scenario_text(&candidate, "");
        let loaded =
            match crate::load::load_text(&self.run.scenario_path, text, LoadOptions::default()) {
                Ok(l) => l,
                Err(errors) => {
                    // A schedule this module wrote that does not load is a bug: say so, go on.
                    eprintln!("trial {number}: the candidate does not load:");
                    for e in errors {
                        eprintln!("  {e}");
                    }
                    return Tried::Passes;
                }
            };
        let (mut failures, mut plays, mut folders) = (0, 0, Vec::new());
        let need = self.options.need;
        let dropped = self.run.named_steps_dropped(&candidate);
        if !dropped.is_empty() {
            // Without a step its preconditions name, a candidate cannot reach the situation
            // the run confirmed: refused without a play.
            println!(
                "{number:>5}  {:>5}  {:>6}  {:<34}  {label} (refused: drops step {} that `reached:` names)",
                candidate.steps.len(),
                "-",
                candidate.workload.describe(),
                dropped.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
            );
            return Tried::Passes;
        }
        let verdict = loop {
            if failures >= need {
                break Tried::Fails;
            }
            if failures + (self.options.repeats - plays) < need {
                break Tried::Passes;
            }
            if self.used >= self.search_budget {
                break Tried::Stopped;
            }
            eprintln!(
                "shrink: run {} of {} | best {} of {} steps, {} | trial {number}: {label}",
                self.used + 1,
                self.options.runs,
                self.best.steps.len(),
                self.run.schedule.steps.len(),
                self.best.workload.describe()
            );
            let folder = if self.options.repeats > 1 {
                format!("trial-{number:02}-{}", plays + 1)
            } else {
                format!("trial-{number:02}")
            };
            self.used += 1;
            plays += 1;
            match self.play(&loaded, &folder).await {
                Some(failed) => {
                    failures += u32::from(failed);
                    folders.push(folder);
                }
                None => {
                    folders.push(folder);
                    break Tried::Stopped;
                }
            }
        };
        let failed = verdict == Tried::Fails;
        println!(
            "{number:>5}  {:>5}  {:>6}  {:<34}  {label}",
            candidate.steps.len(),
            format!("{failures}/{plays}"),
            candidate.workload.describe(),
        );
        if failed {
            if number > 1 {
                self.reduced = true;
            }
            self.best = candidate.clone();
            self.best_record = (failures, plays);
        } else if number == 1 {
            self.best_record = (failures, plays);
        }
        self.trials.push(Trial {
            label: label.to_string(),
            schedule: candidate,
            failures,
            plays,
            folders,
            failed,
        });
        verdict
    }

    /// One real run; whether the run's failing check failed again (None: interrupted, or the
    /// harness could not play it).
    async fn play(
        &mut self,
        loaded: &crate::scenario::LoadedScenario,
        folder: &str,
    ) -> Option<bool> {
        let options = RunOptions {
            seed: Some(self.run.seed),
            out: self.dir.clone(),
            ready_timeout: self.options.ready_timeout,
            expect: None,
            folder: Some(self.dir.join(folder)),
            replay_of: Some(self.run.dir.clone()),
            command: None,
        };
        let outcome = run_scenario(loaded, &options, self.interrupt.clone()).await;
        let exit = match &outcome {
            Ok(o) => o.exit_code,
            Err(e) => {
                eprintln!("{folder}: {e}");
                e.exit_code()
            }
        };
        if exit == EXIT_INTERRUPTED || self.interrupt.is_cancelled() {
            self.interrupted = true;
            return None;
        }
        if exit == EXIT_INFRA {
            self.harness_error = Some(match &outcome {
                Err(e) => e.to_string(),
                Ok(_) => format!(
                    "the harness failed; see {}",
                    self.dir.join(folder).display()
                ),
            });
            return None;
        }
        // The trial's result.json, written by this chaos moments ago.
        let result = RunResult::read(&self.dir.join(folder)).ok();
        let same_check = result
            .iter()
            .flat_map(|r| &r.checks)
            .any(|c| c.verdict == Verdict::Illegal && self.run.failed_checks.contains(&c.name));
        // A run that confirmed its bug shrinks only to schedules that reach the same
        // preconditions: a violation without them is another failure.
        let same_situation = !self.run.confirmed
            || result.is_some_and(|r| r.confirmation == Some(Confirmation::Confirmed));
        Some(same_check && same_situation)
    }

    /// Plays minimal.yaml itself, loaded as `chaos run` loads it.
    async fn confirm(&mut self, minimal: &Path) {
        if self.options.confirm == 0 {
            return;
        }
        let loaded = match crate::load::load(minimal) {
            Ok(l) => l,
            Err(errors) => {
                for e in errors {
                    eprintln!("minimal.yaml does not load: {e}");
                }
                return;
            }
        };
        let mut folders = Vec::new();
        let (mut failures, mut plays) = (0, 0);
        for k in 1..=self.options.confirm {
            if self.used >= self.options.runs {
                break;
            }
            eprintln!(
                "shrink: run {} of {} | confirming minimal.yaml ({k} of {})",
                self.used + 1,
                self.options.runs,
                self.options.confirm
            );
            self.used += 1;
            let folder = format!("confirm-{k}");
            let failed = self.play(&loaded, &folder).await;
            folders.push(folder);
            match failed {
                Some(f) => {
                    failures += u32::from(f);
                    plays += 1;
                }
                None => break,
            }
        }
        println!(
            "{:>5}  {:>5}  {:>6}  {:<34}  play minimal.yaml as it is",
            "conf",
            self.best.steps.len(),
            format!("{failures}/{plays}"),
            self.best.workload.describe(),
        );
        self.best_record.0 += failures;
        self.best_record.1 += plays;
        self.trials.push(Trial {
            label: "play minimal.yaml as it is".into(),
            schedule: self.best.clone(),
            failures,
            plays,
            folders,
            failed: failures > 0,
        });
    }

    fn write_summary(&self, conclusion: &str, minimal: Option<&Path>) -> Result<()> {
        let schedule = |s: &Schedule| ShrunkSchedule {
            steps: s
                .steps
                .iter()
                .map(|step| ShrunkStep {
                    describe: Some(step.describe()),
                    step: match json!(step) {
                        Value::Object(fields) => fields,
                        _ => Default::default(),
                    },
                })
                .collect(),
            workload: ShrunkWorkload {
                duration: Some(format_duration(s.workload.duration)),
                processes: Some(s.workload.processes),
                rate: Some(s.workload.rate),
            },
            workload_text: Some(s.workload.describe()),
        };
        let summary = ShrinkSummary {
            run: Some(self.run.dir.clone()),
            checks: Some(self.run.failed_checks.clone()),
            conclusion: Some(conclusion.to_string()),
            original: Some(schedule(&self.run.schedule)),
            minimal: Some(schedule(&self.best)),
            reproduced: Some(Reproduced {
                failures: self.best_record.0,
                plays: self.best_record.1,
            }),
            reduced: Some(self.reduced),
            budget: Some(self.options.runs),
            runs_used: Some(self.used),
            // From the repository's root, as the report page shows it ("Play it: chaos run ...").
            minimal_yaml: minimal.map(crate::run_folder::repo_relative),
            trials: Some(
                self.trials
                    .iter()
                    .enumerate()
                    .map(|(i, t)| ShrinkTrial {
                        trial: Some(i + 1),
                        label: Some(t.label.clone()),
                        steps: Some(t.schedule.steps.len()),
                        workload: Some(t.schedule.workload.describe()),
                        failures: Some(t.failures),
                        plays: Some(t.plays),
                        failed: Some(t.failed),
                        folders: t.folders.clone(),
                    })
                    .collect(),
            ),
        };
        summary
            .write(&self.dir)
            .map_err(|e| HarnessError::infra(e.to_string()))?;
        crate::report::render(&self.run.dir).map(|_| ())
    }
}

fn names(steps: &[ConcreteStep]) -> String {
    let list: Vec<String> = steps
        .iter()
        .map(|s| format!("{}@{}", s.action, format_seconds(s.at)))
        .collect();
    list.join(", ")
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis((d.as_millis() as u64).div_ceil(100) * 100)
}
