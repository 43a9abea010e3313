//! One run of a scenario, in one direction: plan -> cluster + workload + faults -> history ->
//! checks -> result.json -> report. This module orchestrates: the run folder, the meta and the
//! verdict here; creating the cluster and tearing it down in create.rs (or, attached to a
//! compose project's, in attached.rs); the workload, the faults and the final phase on a
//! ready cluster in drive.rs. The cluster is removed on every way out.

mod attached;
mod create;
mod drive;
mod phases;
pub mod reuse;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::error::{HarnessError, Result, EXIT_INTERRUPTED};
use crate::run_folder::{Attach, RunMeta, RunVerdict};
use crate::scenario::plan::make_plan;
use crate::scenario::LoadedScenario;
use crate::{checks, report};

pub struct RunOptions {
    pub seed: Option<u64>,
    /// Where run folders go (reports/ by default).
    pub out: PathBuf,
    /// None: the system's own (`SystemInfo::ready_within`).
    pub ready_timeout: Option<Duration>,
    /// What the suite expects of this play (`pass`, `fail`, `any`), kept in result.json so the
    /// index's junit holds the run to it.
    pub expect: Option<&'static str>,
    /// This exact run folder instead of OUT/NAME/STAMP (a shrink trial's).
    pub folder: Option<PathBuf>,
    /// The run folder this run replays (`--replay`, a shrink trial), kept in result.json.
    pub replay_of: Option<PathBuf>,
    /// The command that reproduces the run when `chaos run SCENARIO --seed N` would not (a
    /// comparison's run: the comparison of its seed, with its builds).
    pub command: Option<String>,
}

pub struct RunOutcome {
    pub run_dir: PathBuf,
    pub exit_code: i32,
    pub seed: u64,
    pub summary: String,
}

/// A run id that sorts by time and is unique on this machine.
fn new_run_id(now: time::OffsetDateTime) -> String {
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]t[hour][minute][second]"
        ))
        .unwrap_or_default();
    format!("{stamp}-{:04x}", rand::random::<u16>())
}

pub fn run_folder(out: &Path, scenario: &str, now: time::OffsetDateTime, seed: u64) -> PathBuf {
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_default();
    out.join(scenario).join(format!("{stamp}-s{seed}"))
}

pub async fn run_scenario(
    loaded: &LoadedScenario,
    options: &RunOptions,
    interrupt: CancellationToken,
) -> Result<RunOutcome> {
    let spec = &loaded.spec;
    let seed = options
        .seed
        .or(spec.seed)
        .unwrap_or_else(|| rand::random::<u32>() as u64);
    let now = time::OffsetDateTime::now_utc();
    let run_id = new_run_id(now);
    let mut run_dir = options
        .folder
        .clone()
        .unwrap_or_else(|| run_folder(&options.out, &spec.name, now, seed));
    if run_dir.exists() {
        // Two runs of one scenario and seed in the same second (--repeat with a fixed seed).
        run_dir = run_dir.with_file_name(format!(
            "{}-{}",
            run_dir.file_name().unwrap_or_default().to_string_lossy(),
            &run_id[run_id.len() - 4..]
        ));
    }
    let logs_dir = run_dir.join("logs");
    std::fs::create_dir_all(&logs_dir)
        .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", logs_dir.display())))?;
    if options.folder.is_none() {
        let latest = options.out.join(&spec.name).join("latest");
        let _ = std::fs::remove_file(&latest);
        if let Some(name) = run_dir.file_name() {
            let _ = std::os::unix::fs::symlink(name, &latest);
        }
    }
    crate::run_folder::write_file(
        &run_dir.join("scenario.yaml"),
        loaded.resolved_text(seed).as_bytes(),
    )
    .map_err(|e| HarnessError::infra(e.to_string()))?;
    let plan = make_plan(spec, seed);
    plan.write(&run_dir)
        .map_err(|e| HarnessError::infra(e.to_string()))?;
    eprintln!(
        "run {} of {} (seed {seed}) -> {}",
        run_id,
        spec.name,
        run_dir.display()
    );

    let started = Instant::now();
    let phases = phases::Phases::new();
    let outcome = create::play(
        loaded,
        options,
        &run_dir,
        &run_id,
        &plan,
        interrupt.clone(),
        &phases,
    )
    .await;
    let elapsed = started.elapsed();
    let meta = RunMeta {
        run_id: Some(run_id.clone()),
        odd: Vec::new(),
        scenario: Some(spec.name.clone()),
        description: Some(spec.description.clone()),
        system: Some(spec.system.value.clone()),
        profile: Some(loaded.profile.clone()),
        seed: Some(seed),
        started: Some(
            now.format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
        ),
        duration_s: Some(elapsed.as_secs_f64()),
        command: Some(
            options
                .command
                .clone()
                .unwrap_or_else(|| reproduce_command(loaded, seed)),
        ),
        expect: options.expect.map(str::to_string),
        // What `chaos run --replay` and `chaos shrink` need besides the folder's own files.
        scenario_path: Some(
            loaded
                .path
                .canonicalize()
                .unwrap_or_else(|_| loaded.path.clone()),
        ),
        compose_path: Some(loaded.compose_path.clone()),
        workload_started_ns: phases.workload_started.get().copied(),
        replay_of: options.replay_of.clone(),
        // An attached run's cluster is a compose project's; its keys carry the run's prefix.
        attach: loaded.attach.as_ref().map(|project| Attach {
            project: project.clone(),
            key_prefix: key_prefix(&run_id),
        }),
    };

    let result = match outcome {
        Ok(Played::BuildLacks(lacking)) => {
            for line in &lacking {
                eprintln!("{line}");
            }
            checks::write_not_started(&run_dir, spec, &meta, &lacking)?
        }
        Ok(Played::Complete) if interrupt.is_cancelled() => {
            checks::write_unchecked(&run_dir, &meta, RunVerdict::Interrupted, "the run was interrupted; the partial history is kept: check it with `chaos check RUN_DIR`")?;
            report::render(&run_dir)?;
            return Ok(RunOutcome {
                exit_code: EXIT_INTERRUPTED,
                summary: format!(
                    "{}: interrupted, history kept in {}",
                    spec.name,
                    run_dir.display()
                ),
                run_dir,
                seed,
            });
        }
        Ok(Played::Complete) => {
            let result = checks::check_run(&run_dir, spec, &meta)?;
            phases.end("check");
            result
        }
        Err(e) => {
            let verdict = if matches!(e, HarnessError::Interrupted(_)) {
                RunVerdict::Interrupted
            } else {
                RunVerdict::Error
            };
            checks::write_unchecked(&run_dir, &meta, verdict, &e.to_string())?;
            let _ = report::render(&run_dir);
            return Err(e);
        }
    };
    // The report's one line names the verdict and, for a violation, says what went wrong.
    let summary = report::render(&run_dir)?;
    phases.end("report");
    eprint!("{}", phases.table());
    Ok(RunOutcome {
        exit_code: result.exit_code,
        summary,
        run_dir,
        seed,
    })
}

/// Refuses, before anything starts or is written, an output folder (`--out`) a run could not
/// write into: the folder, or the nearest folder above it that exists when it is to be made,
/// must be a folder this process can create a file in (a probe file, removed at once).
pub fn check_out_folder(out: &Path) -> Result<()> {
    let mut existing = out;
    let meta = loop {
        let here = if existing.as_os_str().is_empty() {
            Path::new(".")
        } else {
            existing
        };
        match std::fs::metadata(here) {
            Ok(meta) => {
                existing = here;
                break meta;
            }
            Err(_) => match here.parent() {
                Some(parent) => existing = parent,
                None => {
                    return Err(HarnessError::BadInput(format!(
                        "output folder {}: no folder above it exists",
                        out.display()
                    )))
                }
            },
        }
    };
    let made = if existing == out {
        String::new()
    } else {
        format!(" (to make {} in)", out.display())
    };
    if !meta.is_dir() {
        return Err(HarnessError::BadInput(format!(
            "output folder {}: {} is not a folder{made}",
            out.display(),
            existing.display()
        )));
    }
    let probe = existing.join(format!(".chaos-write-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(HarnessError::BadInput(format!(
            "output folder {}: cannot write in {}{made}: {e}; choose another with --out",
            out.display(),
            existing.display()
        ))),
    }
}

fn reproduce_command(loaded: &LoadedScenario, seed: u64) -> String {
    let mut command = format!(
        "chaos run {} --seed {seed}",
        crate::run_folder::shell_word(
            &crate::run_folder::repo_relative(&loaded.path)
                .display()
                .to_string()
        )
    );
    if loaded.scm_ha {
        command.push_str(" --scm-ha");
    }
    // A reused cluster is gone when its command ends: its seed alone reproduces the run.
    if let Some(project) = loaded
        .attach
        .as_ref()
        .filter(|p| !p.starts_with(reuse::PROJECT_PREFIX))
    {
        command.push_str(&format!(" --attach {project}"));
    }
    command
}

/// What an attached run puts before every key it sends (and before an object store's bucket
/// name): a cluster that outlives runs never shows one run another's keys.
pub fn key_prefix(run_id: &str) -> String {
    format!("chaos-{run_id}-")
}

/// How far a run went.
enum Played {
    /// The cluster started and the workload, faults and final phase played.
    Complete,
    /// Stopped before the cluster started (an attached run: before anything was played on
    /// it): the build lacks a key a `config:` precondition names (one sentence each).
    BuildLacks(Vec<String>),
}
