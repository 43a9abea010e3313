//! `chaos`: plays YAML scenarios against real clusters in Docker, records every operation,
//! checks the history and writes a run folder with a report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use chaos::cluster::{compose, docker, images};
use chaos::error::{self, HarnessError, EXIT_BAD_INPUT, EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK};
use chaos::rate_stop::{PlayHeld, RateStops};
use chaos::{bench, checks, report, run, scenario};

#[derive(Parser)]
#[command(
    name = "chaos",
    version,
    about = "Fault-injection testbed for real distributed systems"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play scenarios against real clusters; exit 0 pass, 1 violation, 2 unknown, 254 bad
    /// scenario, 255 infrastructure failure.
    Run(RunArgs),
    /// Find the smallest fault schedule that still fails a run's check, by playing smaller
    /// ones (each a real run under RUN_DIR/shrink/); writes RUN_DIR/shrink/minimal.yaml.
    /// Exit 1: the minimal schedule still fails; 0: the failure did not reproduce; 2: the
    /// budget ran out before any reduction; 254: not a run folder chaos can replay.
    Shrink {
        run_dir: PathBuf,
        /// Runs to spend, the confirmation plays included.
        #[arg(long, default_value_t = 20)]
        runs: u32,
        /// Plays per candidate at most ...
        #[arg(long, default_value_t = 2)]
        repeats: u32,
        /// ... of which this many must fail for it to count as failing (a candidate that
        /// passes once stops there, so only kept candidates cost the repeats).
        #[arg(long, default_value_t = 2)]
        need: u32,
        /// Plays of minimal.yaml at the end, to say how reproducible it is.
        #[arg(long, default_value_t = 2)]
        confirm: u32,
        #[arg(long, value_parser = parse_duration)]
        ready_timeout: Option<Duration>,
    },
    /// Check a run folder (its scenario's checks) or a history file (with --model).
    Check {
        path: PathBuf,
        /// Model for a history file: register, cas-register, kv, set, s3-object.
        #[arg(long)]
        model: Option<String>,
        /// History format: auto, jsonl, edn, jepsen-log.
        #[arg(long, default_value = "auto")]
        format: String,
        /// Search budget; past it the verdict is unknown (exit 2). Default: a run folder's own
        /// scenario says (`timeout:` of each check), else 60 s.
        #[arg(long, value_parser = parse_duration)]
        timeout: Option<Duration>,
        /// Print the full result as JSON.
        #[arg(long)]
        json: bool,
        /// Leave out the lines that cannot be read instead of refusing the history: they are
        /// counted and named, and the verdict is never ok while any were left out (exit 2).
        #[arg(long)]
        lenient: bool,
    },
    /// Validate scenarios, or suites with every scenario and comparison they name, without
    /// starting or building anything.
    Lint {
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
        /// Validate them as `chaos run --scm-ha` plays them (Ozone scenarios on three SCMs).
        #[arg(long)]
        scm_ha: bool,
    },
    /// Re-render a run folder's report from the folder alone; with --index DIR, build
    /// DIR/index.html (and DIR/junit.xml) over every run folder under DIR.
    Report {
        #[arg(required_unless_present = "index")]
        run_dir: Option<PathBuf>,
        #[arg(long, conflicts_with = "run_dir")]
        index: Option<PathBuf>,
        /// Print the run's (or a comparison folder's) summary.md, a few lines of Markdown to
        /// paste into a bug tracker.
        #[arg(long, conflicts_with = "index")]
        summary: bool,
        /// Exit 0 for a run folder whose history or plan is missing or broken (the page says
        /// so in its head either way); without it, such a folder exits 254.
        #[arg(long, conflicts_with = "index")]
        partial: bool,
    },
    /// Build images.
    Images {
        #[command(subcommand)]
        command: ImagesCommand,
    },
    /// Play one scenario on two builds over the same seeds and conclude whether B fixes what A
    /// shows; exit 0 fix confirmed, 1 not, 255 when runs could not play, 254 bad arguments.
    Compare(CompareArgs),
    /// Remove containers, networks and volumes left by runs that are no longer alive.
    Clean,
    /// Measure the harness on a real etcd cluster (ready time, trigger latency, cost per op).
    Bench(BenchArgs),
    /// A model checker's counterexample (TLC -dumpTrace json, ITF) on a real cluster, through
    /// a mapping of its actions (docs/traces.md); bad input exits 254 before anything starts.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Write the scenario that plays the trace (on stdout, or to --out); `chaos lint` accepts it.
    Import {
        trace: PathBuf,
        /// The mapping of the trace's actions onto the cluster.
        #[arg(long)]
        map: PathBuf,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Import the trace into OUT/traces/NAME.yaml and play it as `chaos run` plays a scenario;
    /// the verdict says how many of the trace's steps the run followed.
    Play(TracePlayArgs),
}

#[derive(clap::Args)]
struct TracePlayArgs {
    trace: PathBuf,
    #[arg(long)]
    map: PathBuf,
    /// As `chaos run --seed`.
    #[arg(long)]
    seed: Option<u64>,
    /// As `chaos run --seeds`.
    #[arg(long, conflicts_with_all = ["seed", "repeat"])]
    seeds: Option<chaos::suite::SeedRange>,
    /// As `chaos run --repeat`.
    #[arg(long, default_value_t = 1, value_parser = parse_repeat)]
    repeat: u32,
    /// Where the imported scenario (OUT/traces/) and the run folders go.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    #[arg(long, value_parser = parse_duration)]
    ready_timeout: Option<Duration>,
    /// As `chaos run --attach`.
    #[arg(long, value_name = "PROJECT")]
    attach: Option<String>,
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("held_to_rates").args(["rate", "suite"])))]
struct RunArgs {
    #[arg(required_unless_present_any = ["suite", "replay"])]
    scenarios: Vec<PathBuf>,
    /// Play a run folder's concrete schedule again: the same steps at the same times on
    /// the same nodes, with its seed (a schedule drawn by `every:` or `pick:` included).
    #[arg(long, conflicts_with_all = ["scenarios", "suite", "seed", "scm_ha"])]
    replay: Option<PathBuf>,
    /// A suite file: scenarios, each with seeds (see docs/running.md, suites and nightly jobs).
    #[arg(long, conflicts_with_all = ["seed", "repeat"])]
    suite: Option<PathBuf>,
    /// With --suite: play only the i-th of n deterministic shares (like 2/3).
    #[arg(long, requires = "suite")]
    shard: Option<chaos::suite::Shard>,
    /// Overrides the scenario's seed (with --repeat, the first of consecutive seeds).
    #[arg(long)]
    seed: Option<u64>,
    /// Plays each scenario once per seed: `1..10` (both ends), `7`, or `1,4,9`; ends with a
    /// table of rates (confirmed, held, not reached, harness errors; 95% intervals).
    #[arg(long, conflicts_with_all = ["seed", "repeat", "suite", "replay"])]
    seeds: Option<chaos::suite::SeedRange>,
    /// Plays each scenario this many times, with consecutive seeds (at least once: a run of
    /// nothing is no pass; at most 10000, as for --seeds).
    #[arg(long, default_value_t = 1, value_parser = parse_repeat)]
    repeat: u32,
    /// With --seeds: hold each scenario's plays to a share instead of each to a verdict,
    /// `confirmed=90%` (the classes of a suite's `rate:`; repeatable): exit 0 when every share
    /// is met, 1 when one is not. A scenario stops once more seeds cannot change that.
    #[arg(long, value_name = "CLASS=SHARE", requires = "seeds")]
    rate: Vec<String>,
    /// Play every seed of what is held to a rate (--rate, a suite's `rate:`) or compared (a
    /// suite's comparisons), though it was decided before.
    #[arg(long, requires = "held_to_rates")]
    all_seeds: bool,
    /// Where run folders go.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// How long nodes may take to become ready (default: the system's, 120 s; Ozone 300 s).
    #[arg(long, value_parser = parse_duration)]
    ready_timeout: Option<Duration>,
    /// Ozone: play on three SCMs in SCM HA (the scenario's profile + `-scm-ha`, e.g.
    /// `ozone-scm-ha`) instead of one; the same node names, plus scm2 and scm3. An error
    /// for a scenario of any other system.
    #[arg(long)]
    scm_ha: bool,
    /// Play on the nodes of a compose project already up (`docker compose -p PROJECT
    /// --profile P up -d --wait`) instead of a cluster of the harness's own; the cluster is
    /// left up and healed. Faults that need the harness to create the nodes are refused.
    #[arg(long, value_name = "PROJECT", conflicts_with_all = ["suite", "replay", "scm_ha"])]
    attach: Option<String>,
    /// With --seeds or --repeat: one cluster for every seed of a scenario instead of one per
    /// seed. Between seeds every fault is undone and every node checked healthy; each seed's
    /// keys carry its run's prefix. Faults that need nodes made for the run (chaosfs, clock
    /// skew, the client proxy) are refused.
    #[arg(long, conflicts_with_all = ["suite", "replay", "attach"])]
    reuse_cluster: bool,
}

#[derive(clap::Args)]
struct CompareArgs {
    #[arg(required_unless_present = "merge")]
    scenario: Option<PathBuf>,
    /// A build, twice: A (expected to show the bug), then B (expected to fix it). A release
    /// `2.2.0`, `2.2.0+fixes/X.patch[+more.patch]`, `2.2.0+ratis=3.3.0[+fixes/X.patch]` (Apache
    /// Ratis swapped for that version), `dist:PATH`, `src:DIR[+fixes/X.patch]`
    /// (an Ozone source tree built here with Maven), `image:TAG`, or
    /// `set:KEY=VALUE` (the scenario's cluster.environment, every node; any system).
    #[arg(long = "build", required_unless_present_any = ["versions", "merge"])]
    builds: Vec<String>,
    /// Instead of --build: which of these releases the bug affects (`2.0.0,2.2.0,2.2.1`), each
    /// played on the same seeds; ends with affected / not affected / undecided per release.
    #[arg(long, value_delimiter = ',', conflicts_with = "builds")]
    versions: Vec<String>,
    /// `1..10` (both ends), `7`, or `1,4,9`. Played in this order, and only until more seeds
    /// cannot change the conclusion (docs/confirming-a-fix.md, when a comparison stops).
    #[arg(long, required_unless_present = "merge")]
    seeds: Option<chaos::suite::SeedRange>,
    /// Play every seed, though the conclusion was decided before.
    #[arg(long)]
    all_seeds: bool,
    /// Play only the i-th of n deterministic shares of the (seed, build) pairs (like 1/2),
    /// every one of them, into a share's folder for --merge.
    #[arg(long, conflicts_with = "merge")]
    shard: Option<chaos::suite::Shard>,
    /// Play each seed's runs on both builds at once (two clusters side by side), when the
    /// machine's available memory holds both (4 GiB a cluster); otherwise one at a time.
    #[arg(long)]
    side_by_side: bool,
    /// Join the folders of every share of one comparison (--shard) into one comparison, its
    /// page and its conclusion.
    #[arg(long, num_args = 1.., value_name = "DIR", conflicts_with_all = ["scenario", "builds", "versions", "seeds", "all_seeds", "side_by_side"])]
    merge: Vec<PathBuf>,
    /// Reports folder: the comparison goes to OUT/compare/<scenario>/<UTC time>/.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    #[arg(long, value_parser = parse_duration)]
    ready_timeout: Option<Duration>,
}

#[derive(clap::Args)]
struct BenchArgs {
    #[arg(long, default_value_t = 5)]
    ready_trials: usize,
    #[arg(long, default_value_t = 50)]
    trigger_trials: usize,
    #[arg(long, default_value_t = 15)]
    workload_seconds: u64,
    #[arg(long, default_value = "docker-compose.yml")]
    compose: PathBuf,
    /// Measure the s3-object workload against an object store instead (operations per
    /// second, latency percentiles, the harness's CPU per operation; no faults).
    #[arg(long)]
    s3: bool,
    /// With --s3: the store, a compose profile: s3s-fs (1 node) or garage (3 nodes).
    #[arg(long, default_value = "s3s-fs")]
    store: String,
    /// With --s3: processes and target rate.
    #[arg(long, default_value_t = 16)]
    processes: u32,
    #[arg(long, default_value_t = 4000.0)]
    rate: f64,
    /// Measure the Ozone profile instead, --ready-trials times: each phase of its start (every
    /// JVM listening, an OM leader, a pipeline open, the SCM out of safe mode, serviceable), a
    /// restart of every OM and of one OM, and the JVMs' resident memory; then the medians.
    #[arg(long, conflicts_with = "s3")]
    ozone: bool,
}

#[derive(Subcommand)]
enum ImagesCommand {
    /// Build the base image, the tools image and the images of compose profiles (all if none).
    #[command(group(clap::ArgGroup::new("release_change").args(["patch", "swap"]).multiple(true)))]
    Build {
        profiles: Vec<String>,
        /// Rebuild even if the images exist.
        #[arg(long)]
        force: bool,
        #[arg(long, default_value = "docker-compose.yml")]
        compose: PathBuf,
        /// `ozone` only: a release plus this unified diff against Ozone's source tree
        /// (repeatable, applied in order): chaos-ozone:<version>-p<digest of the patches>.
        /// With --source: applied to a copy of the source tree, never to DIR.
        #[arg(long, conflicts_with = "dist")]
        patch: Vec<PathBuf>,
        /// `ozone` only: a release (plus --patch) whose Apache Ratis jars are replaced by
        /// another version's from Maven Central, `ratis=3.3.0`:
        /// chaos-ozone:<version>-ratis<ratis version>[-p<digest of the patches>].
        #[arg(long, value_name = "NAME=VERSION", conflicts_with_all = ["dist", "source"])]
        swap: Option<String>,
        /// `ozone` only: the release the patches or the swap apply to (default OZONE_VERSION,
        /// else 2.2.0).
        #[arg(long, requires = "release_change", conflicts_with = "source")]
        version: Option<String>,
        /// `ozone` only: an Ozone source tree (a checkout of apache/ozone), built here with
        /// Ozone's Maven dist build: chaos-ozone:src-<version>-<commit>[-d<digest of
        /// uncommitted changes>][-p<digest of the patches>], reused when it is here.
        #[arg(long, conflicts_with = "dist")]
        source: Option<PathBuf>,
        /// `ozone` only: an Ozone distribution, a folder or .tar.gz as `mvn package -Pdist`
        /// writes it: chaos-ozone:dist-<version>-<digest of the jars>.
        #[arg(long)]
        dist: Option<PathBuf>,
    },
}

/// `--repeat`: 1 to [`chaos::suite::SeedRange::MAX`] plays, like `--seeds`.
fn parse_repeat(text: &str) -> Result<u32, String> {
    let max = chaos::suite::SeedRange::MAX;
    let shown = chaos_core::shown::shown(text);
    let n: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expects a whole number of plays from 1 to {max}; got {shown}"))?;
    match n {
        0 => Err("0 plays: a run of nothing is no pass; at least 1".into()),
        n if n > max => Err(format!("{n} plays of each scenario; at most {max}")),
        n => Ok(n as u32),
    }
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    scenario::units::parse_duration(text)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CHAOS_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    // Bad arguments exit 254, as every other bad input does (clap's own default is 2, which
    // chaos reserves for "could not decide"); --help and --version exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                EXIT_BAD_INPUT as u8
            } else {
                0
            });
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_INFRA as u8);
        }
    };
    let code = runtime.block_on(dispatch(cli));
    ExitCode::from(code.clamp(0, 255) as u8)
}

async fn dispatch(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Run(args) => run_command(args).await,
        Command::Shrink {
            run_dir,
            runs,
            repeats,
            need,
            confirm,
            ready_timeout,
        } => {
            let options = chaos::shrink::ShrinkOptions {
                runs,
                repeats,
                need,
                confirm,
                ready_timeout,
            };
            chaos::shrink::shrink(&run_dir, &options, interrupt_token()).await
        }
        Command::Check {
            path,
            model,
            format,
            timeout,
            json,
            lenient,
        } => checks::check_command(&path, model.as_deref(), &format, timeout, json, lenient),
        Command::Lint { scenarios, scm_ha } => {
            Ok(lint(&scenarios, chaos::load::LoadOptions { scm_ha }))
        }
        Command::Report {
            run_dir,
            index,
            summary,
            partial,
        } => report_command(run_dir, index, summary, partial),
        Command::Images {
            command:
                ImagesCommand::Build {
                    profiles,
                    force,
                    compose,
                    patch,
                    swap,
                    version,
                    dist,
                    source,
                },
        } => {
            if patch.is_empty() && dist.is_none() && source.is_none() && swap.is_none() {
                build_images(&compose, &profiles, force).await
            } else {
                let from = OzoneFrom {
                    patches: &patch,
                    swap,
                    version,
                    dist: dist.as_deref(),
                    source: source.as_deref(),
                };
                build_ozone(&profiles, from, force).await
            }
        }
        Command::Compare(args) => {
            if let Err(e) = chaos::run::check_out_folder(&args.out) {
                eprintln!("error: {e}");
                return e.exit_code();
            }
            if !args.merge.is_empty() {
                chaos::compare::merge(&args.merge, &args.out).map(|merged| merged.exit_code)
            } else {
                let options = chaos::compare::CompareOptions {
                    scenario: args.scenario.unwrap_or_default(),
                    survey: !args.versions.is_empty(),
                    builds: if args.versions.is_empty() {
                        args.builds
                    } else {
                        args.versions
                    },
                    seeds: args.seeds.map(|s| s.0).unwrap_or_default(),
                    all_seeds: args.all_seeds,
                    shard: args.shard,
                    side_by_side: args.side_by_side,
                    out: args.out,
                    ready_timeout: args.ready_timeout,
                    paths_from: PathBuf::new(),
                };
                chaos::compare::compare(&options, interrupt_token())
                    .await
                    .map(|compared| compared.exit_code)
            }
        }
        Command::Clean => clean().await,
        Command::Bench(args) => bench_command(args).await,
        Command::Trace {
            command: TraceCommand::Import { trace, map, out },
        } => trace_import(&trace, &map, out.as_deref()),
        Command::Trace {
            command: TraceCommand::Play(args),
        } => trace_play(args).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// `chaos run`: scenarios, a suite, or a run folder's schedule again (`--replay`).
async fn run_command(args: RunArgs) -> error::Result<i32> {
    let RunArgs {
        scenarios,
        replay,
        suite,
        shard,
        seed,
        seeds: seed_list,
        repeat,
        rate,
        all_seeds,
        out,
        ready_timeout,
        scm_ha,
        attach,
        reuse_cluster,
    } = args;
    let bounds = chaos::suite::rate_bounds(&rate).map_err(HarnessError::BadInput)?;
    let load = chaos::load::LoadOptions { scm_ha };
    chaos::run::check_out_folder(&out)?;
    if let Some(run_dir) = replay {
        return replay_run(&run_dir, repeat, out, ready_timeout).await;
    }
    let options = ManyOptions {
        out,
        ready_timeout,
        load,
        attach,
        reuse_cluster,
    };
    match suite {
        Some(file) => {
            let work = chaos::suite::load_work(&file, shard)?;
            // Every comparison is checked, as every scenario is, before any container starts.
            let mut comparisons = Vec::new();
            for c in &work.comparisons {
                let (mut compare_options, prepared) =
                    c.prepare(&file, &options.out, options.ready_timeout)?;
                compare_options.all_seeds |= all_seeds;
                comparisons.push((compare_options, prepared));
            }
            let list: Vec<_> = work
                .plays
                .iter()
                .map(|p| ToPlay {
                    path: p.scenario.clone(),
                    seed: Some(p.seed),
                    expect: Some(p.expect),
                    entry: p.entry,
                })
                .collect();
            let stops = chaos::suite::rate_stops(&work.plays, all_seeds);
            let loaded = load_all(list.iter().map(|p| &p.path), &options)?;
            let played = run_many(list, loaded, &options, stops).await?;
            let mut compared = Vec::new();
            if played.worst != EXIT_INTERRUPTED {
                for (compare_options, prepared) in comparisons {
                    let interrupt = played.interrupt.clone();
                    let got = chaos::compare::play(&compare_options, prepared, interrupt).await;
                    let code = match &got {
                        Ok(c) => c.exit_code,
                        Err(e) => {
                            eprintln!("error: {e}");
                            e.exit_code()
                        }
                    };
                    compared.push(got);
                    if code == EXIT_INTERRUPTED {
                        break;
                    }
                }
            }
            Ok(played.held_to(&work, &compared))
        }
        None => {
            // The plays are counted, and then every scenario is validated once, whatever the
            // number of seeds, before any play starts.
            let per_scenario = match &seed_list {
                Some(range) => range.0.len() as u64,
                None => u64::from(repeat),
            };
            let plays = per_scenario * scenarios.len() as u64;
            if plays > chaos::suite::MAX_PLAYS {
                return Err(HarnessError::BadInput(format!(
                    "{} scenarios, {per_scenario} seeds each: {plays} plays; \
                     a command plays at most {}",
                    scenarios.len(),
                    chaos::suite::MAX_PLAYS
                )));
            }
            if let Some(first) = seed.filter(|s| s.checked_add(u64::from(repeat) - 1).is_none()) {
                return Err(HarnessError::BadInput(format!(
                    "--seed {first} with --repeat {repeat} goes past the largest seed, {}",
                    u64::MAX
                )));
            }
            let loaded = load_all(scenarios.iter(), &options)?;
            // Each scenario with each of its seeds: --seeds, or --repeat consecutive ones from
            // --seed (or the scenario's own), or once with its own seed.
            let mut list = Vec::new();
            for (entry, path) in scenarios.iter().enumerate() {
                let seeds: Vec<Option<u64>> = match (&seed_list, repeat) {
                    (Some(range), _) => range.0.iter().map(|s| Some(*s)).collect(),
                    (None, 1) => vec![seed],
                    (None, n) => {
                        let first = match seed {
                            Some(s) => s,
                            None => loaded
                                .iter()
                                .find(|(p, _)| p == path)
                                .and_then(|(_, s)| s.spec.seed)
                                .unwrap_or(0),
                        };
                        if first.checked_add(u64::from(n) - 1).is_none() {
                            return Err(HarnessError::BadInput(format!(
                                "{}: its seed {first} with --repeat {n} goes past the largest \
                                 seed, {}",
                                path.display(),
                                u64::MAX
                            )));
                        }
                        (0..u64::from(n)).map(|i| Some(first + i)).collect()
                    }
                };
                list.extend(seeds.into_iter().map(|seed| ToPlay {
                    path: path.clone(),
                    seed,
                    expect: None,
                    entry,
                }));
            }
            // --rate: each scenario's plays are one entry held to the bounds.
            let stops = RateStops::new(
                list.iter().map(|p| PlayHeld {
                    entry: p.entry,
                    name: p.path.display().to_string(),
                    bounds: &bounds,
                    own_verdict: false,
                }),
                all_seeds,
            );
            let played = run_many(list, loaded, &options, stops).await?;
            Ok(if bounds.is_empty() {
                played.worst
            } else {
                played.held_to_rates()
            })
        }
    }
}

/// `chaos report`: one run folder's page, or the index over a folder of runs.
fn report_command(
    run_dir: Option<PathBuf>,
    index: Option<PathBuf>,
    summary: bool,
    partial: bool,
) -> error::Result<i32> {
    // A folder whose verdict rests on what could not be read: said on stderr, and no exit 0
    // without --partial.
    let held = |incomplete: &[String]| {
        let word = if partial { "note" } else { "error" };
        for i in incomplete {
            eprintln!("{word}: incomplete: {i}");
        }
        if incomplete.is_empty() || partial {
            EXIT_OK
        } else {
            eprintln!(
                "error: the report cannot vouch for this run's verdict (the page says so); \
                 --partial accepts it"
            );
            EXIT_BAD_INPUT
        }
    };
    match (run_dir, index) {
        (Some(dir), None) if summary => report::summary_written(&dir).map(|(text, incomplete)| {
            print!("{text}");
            held(&incomplete)
        }),
        (_, Some(dir)) => report::index::render_index_skipping(&dir).map(|(runs, skipped)| {
            for s in &skipped {
                eprintln!("skipped: {s}");
            }
            let skipped = match skipped.len() {
                0 => String::new(),
                n => format!(", {n} folders skipped"),
            };
            println!(
                "{} ({} runs{skipped})",
                dir.join("index.html").display(),
                runs.len()
            );
            EXIT_OK
        }),
        (Some(run_dir), None) => report::render_written(&run_dir).map(|written| {
            println!("{}", written.line);
            println!("{}", run_dir.join("index.html").display());
            held(&written.incomplete)
        }),
        (None, None) => Err(HarnessError::BadInput(
            "chaos report RUN_DIR or --index DIR".into(),
        )),
    }
}

/// `chaos bench`: the harness on etcd, the s3-object workload on a store, or Ozone's start.
async fn bench_command(args: BenchArgs) -> error::Result<i32> {
    if args.ozone {
        bench::run_ozone(&args.compose, args.ready_trials).await?;
    } else if args.s3 {
        let (seconds, processes, rate) = (args.workload_seconds, args.processes, args.rate);
        bench::run_s3(&args.compose, &args.store, seconds, processes, rate).await?;
    } else {
        let options = bench::BenchOptions {
            ready_trials: args.ready_trials,
            trigger_trials: args.trigger_trials,
            workload_seconds: args.workload_seconds,
        };
        bench::run(&args.compose, &options).await?;
    }
    Ok(EXIT_OK)
}

/// `chaos trace import`: the scenario on stdout, or written to `out` (validated first, as it
/// will be found there: its compose file as its base's).
fn trace_import(trace: &Path, map: &Path, out: Option<&Path>) -> error::Result<i32> {
    let imported = chaos::trace_import::import(trace, map).map_err(HarnessError::Scenario)?;
    match out {
        None => print!("{}", imported.text),
        Some(out) => {
            chaos::trace_import::write(&imported, out)?;
            eprintln!("{}: imported from {}", out.display(), trace.display());
        }
    }
    Ok(EXIT_OK)
}

/// `chaos trace play`: imports into OUT/traces/NAME.yaml and plays that as `chaos run` does.
async fn trace_play(args: TracePlayArgs) -> error::Result<i32> {
    chaos::run::check_out_folder(&args.out)?;
    let imported =
        chaos::trace_import::import(&args.trace, &args.map).map_err(HarnessError::Scenario)?;
    let path = args
        .out
        .join("traces")
        .join(format!("{}.yaml", imported.name));
    chaos::trace_import::write(&imported, &path)?;
    eprintln!("{}: imported from {}", path.display(), args.trace.display());
    run_command(RunArgs {
        scenarios: vec![path],
        replay: None,
        suite: None,
        shard: None,
        seed: args.seed,
        seeds: args.seeds,
        repeat: args.repeat,
        rate: Vec::new(),
        all_seeds: false,
        out: args.out,
        ready_timeout: args.ready_timeout,
        scm_ha: false,
        attach: args.attach,
        reuse_cluster: false,
    })
    .await
}

/// `chaos lint FILE...`: each scenario, or each suite with every scenario and comparison it
/// names, validated without starting anything; `FILE: ok` on stdout for each valid one, every
/// problem on stderr (exit 254).
fn lint(paths: &[PathBuf], options: chaos::load::LoadOptions) -> i32 {
    let mut worst = EXIT_OK;
    for path in paths {
        if chaos::suite::is_suite(path) {
            let linted = chaos::suite::lint(path, options);
            for valid in &linted.valid {
                println!("{}: ok", valid.display());
            }
            for problem in &linted.problems {
                eprintln!("{problem}");
            }
            if linted.problems.is_empty() {
                println!("{}: ok", path.display());
            } else {
                worst = EXIT_BAD_INPUT;
            }
            continue;
        }
        match chaos::load::load_with(path, options) {
            Ok(_) => println!("{}: ok", path.display()),
            Err(errors) => {
                for e in errors {
                    eprintln!("{e}");
                }
                worst = EXIT_BAD_INPUT;
            }
        }
    }
    worst
}

/// Ctrl-C and SIGTERM cancel the run; the run then heals, tears down and keeps its history.
fn interrupt_token() -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return,
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => eprintln!("\ninterrupted: healing and removing the cluster ..."),
            _ = term.recv() => eprintln!("terminated: healing and removing the cluster ..."),
        }
        cancel.cancel();
    });
    token
}

/// Where and how `run_many` plays.
struct ManyOptions {
    out: PathBuf,
    ready_timeout: Option<Duration>,
    load: chaos::load::LoadOptions,
    /// `--attach PROJECT`.
    attach: Option<String>,
    /// `--reuse-cluster`: one cluster for every seed of a scenario.
    reuse_cluster: bool,
}

/// Validates each scenario once, however often it is named, before any container starts;
/// every problem of every scenario is returned together.
fn load_all<'a>(
    paths: impl Iterator<Item = &'a PathBuf>,
    options: &ManyOptions,
) -> Result<Vec<(PathBuf, scenario::LoadedScenario)>, HarnessError> {
    let mut loaded: Vec<(PathBuf, scenario::LoadedScenario)> = Vec::new();
    let mut problems = Vec::new();
    let mut seen: Vec<&PathBuf> = Vec::new();
    for path in paths {
        if seen.contains(&path) {
            continue;
        }
        seen.push(path);
        let attached =
            chaos::load::load_with(path, options.load).and_then(|mut s| match &options.attach {
                Some(project) => s.attach_to(project).map(|()| s),
                None if options.reuse_cluster => s.check_reusable().map(|()| s),
                None => Ok(s),
            });
        match attached {
            Ok(s) => loaded.push((path.clone(), s)),
            Err(mut e) => problems.append(&mut e),
        }
    }
    if !problems.is_empty() {
        return Err(HarnessError::Scenario(problems));
    }
    Ok(loaded)
}

/// The image OZONE_DIST or OZONE_SOURCE names (built unless it is here), and which of the two
/// named it; neither set: none. Both set is bad input.
async fn ozone_image_from_env() -> Result<Option<(String, &'static str)>, HarnessError> {
    use chaos::cluster::{ozone_build, ozone_source};
    let var = |name: &str| std::env::var_os(name).filter(|d| !d.is_empty());
    let root = std::env::current_dir().unwrap_or_default();
    match (var("OZONE_DIST"), var("OZONE_SOURCE")) {
        (Some(_), Some(_)) => Err(HarnessError::BadInput(
            "OZONE_DIST and OZONE_SOURCE are both set: the Ozone nodes run one build; unset one"
                .into(),
        )),
        (Some(dist), None) => {
            let docker = docker::connect().await?;
            let tag = ozone_build::ensure_dist(&docker, &root, Path::new(&dist), false).await?;
            Ok(Some((tag, "OZONE_DIST")))
        }
        (None, Some(source)) => {
            let (dir, patches) = ozone_source::parse_spec(&source.to_string_lossy())
                .map_err(|e| HarnessError::BadInput(format!("OZONE_SOURCE: {e}")))?;
            ozone_source::check_args(&dir, &patches)?;
            let docker = docker::connect().await?;
            let tag = ozone_source::ensure_source(&docker, &root, &dir, &patches, false).await?;
            Ok(Some((tag, "OZONE_SOURCE")))
        }
        (None, None) => Ok(None),
    }
}

/// One play of `chaos run`.
struct ToPlay {
    path: PathBuf,
    seed: Option<u64>,
    /// What a suite expects of it.
    expect: Option<chaos::suite::Expect>,
    /// Its suite entry (on the command line, its scenario's position): the plays that a rate
    /// holds together.
    entry: usize,
}

/// Plays each scenario with its seed in order, on the scenarios [`load_all`] validated,
/// skipping the plays of an entry held to a rate once `stops` says more cannot change it. With
/// more than one play of a scenario it ends with the table of rates.
async fn run_many(
    list: Vec<ToPlay>,
    mut loaded: Vec<(PathBuf, scenario::LoadedScenario)>,
    options: &ManyOptions,
    mut stops: RateStops,
) -> Result<Played, HarnessError> {
    // OZONE_DIST=PATH: the Ozone nodes run an image built from that distribution (built once);
    // OZONE_SOURCE=DIR[+PATCH...]: from that source tree, built with Maven (once).
    if let Some((tag, variable)) = ozone_image_from_env().await? {
        for (path, s) in &mut loaded {
            if chaos::compare::play_on_ozone_image(s, &tag) > 0 {
                eprintln!("{}: Ozone nodes run {tag} ({variable})", path.display());
            }
        }
    }
    // Ctrl-C interrupts the runs from here on; before, it stops chaos at once (an OZONE_DIST
    // or OZONE_SOURCE image build included).
    let interrupt = interrupt_token();
    let mut rows = Vec::new();
    let mut tallies: Vec<(String, chaos::rates::Tally)> = Vec::new();
    let mut codes = Vec::new();
    let mut worst = EXIT_OK;
    // `--reuse-cluster`: the cluster of the scenario playing now, made at its first seed.
    let mut reused: Option<(PathBuf, run::reuse::ReusedCluster)> = None;
    for play in &list {
        // An entry decided by its rate plays no more of its seeds.
        let found = loaded.iter().position(|(p, _)| *p == play.path);
        let Some(index) = found.filter(|_| !stops.skips(play.entry)) else {
            codes.push(None);
            continue;
        };
        if options.reuse_cluster && reused.as_ref().is_none_or(|(p, _)| *p != play.path) {
            if let Some((_, cluster)) = reused.take() {
                remove_reused(cluster).await;
            }
            let scenario = &mut loaded[index].1;
            match run::reuse::ReusedCluster::launch(
                scenario,
                &options.out,
                options.ready_timeout,
                &interrupt,
            )
            .await
            {
                Ok(cluster) => {
                    scenario.attach = Some(cluster.project.clone());
                    reused = Some((play.path.clone(), cluster));
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    let line = format!("{}: {}", scenario.spec.name, first_line(&e));
                    println!("{line}");
                    rows.push((scenario.spec.name.clone(), e.exit_code(), line));
                    codes.push(Some(e.exit_code()));
                    worst = worse(worst, e.exit_code());
                    if let Some(stopped) = stops.record(play.entry, chaos::rates::Class::Error) {
                        println!("{stopped}");
                    }
                    if interrupt.is_cancelled() {
                        break;
                    }
                    continue;
                }
            }
        }
        let scenario = &loaded[index].1;
        let run_options = run::RunOptions {
            seed: play.seed,
            out: options.out.clone(),
            ready_timeout: options.ready_timeout,
            expect: play.expect.map(|e| e.word()),
            folder: None,
            replay_of: None,
            command: None,
        };
        let started = std::time::Instant::now();
        let (code, line, class) =
            match run::run_scenario(scenario, &run_options, interrupt.clone()).await {
                Ok(outcome) => {
                    let class = if outcome.exit_code == EXIT_INTERRUPTED {
                        chaos::rates::Class::Error
                    } else {
                        chaos::rates::Class::of_run(&outcome.run_dir)
                    };
                    (outcome.exit_code, outcome.summary, class)
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    let line = format!("{}: {}", scenario.spec.name, first_line(&e));
                    (e.exit_code(), line, chaos::rates::Class::Error)
                }
            };
        println!("{line}");
        let name = scenario.spec.name.clone();
        match tallies.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => t.add(class, started.elapsed().as_secs_f64()),
            None => {
                let mut t = chaos::rates::Tally::default();
                t.add(class, started.elapsed().as_secs_f64());
                tallies.push((name.clone(), t));
            }
        }
        rows.push((name, code, line));
        codes.push(Some(code));
        worst = worse(worst, code);
        if let Some(stopped) = stops.record(play.entry, class) {
            println!("{stopped}");
        }
        if code == EXIT_INTERRUPTED {
            break;
        }
    }
    if let Some((_, cluster)) = reused.take() {
        remove_reused(cluster).await;
    }
    if rows.len() > 1 {
        println!("\nsummary:");
        for (name, code, line) in &rows {
            println!("  {code:>3}  {name:<32} {line}");
        }
    }
    if tallies.iter().any(|(_, t)| t.runs > 1) {
        println!("\nrates (95% intervals, Wilson):");
        print!("{}", chaos::rates::table(&tallies));
    }
    Ok(Played {
        worst,
        codes,
        stops,
        interrupt,
    })
}

/// Removes a reused cluster; a failure is said, and the next run's sweep takes what is left.
async fn remove_reused(cluster: run::reuse::ReusedCluster) {
    if let Err(e) = cluster.remove().await {
        eprintln!("error: removing the reused cluster: {e}");
    }
}

/// `chaos run --replay RUN_DIR`: the run's concrete schedule, `repeat` times.
async fn replay_run(
    run_dir: &Path,
    repeat: u32,
    out: PathBuf,
    ready_timeout: Option<Duration>,
) -> Result<i32, HarnessError> {
    let recorded = chaos::replay::RecordedRun::read(run_dir)?;
    let header = format!("# A replay of {}\n", run_dir.display());
    let text = recorded.scenario_text(&recorded.schedule, &header);
    let loaded = chaos::load::load_text(&recorded.scenario_path, text, Default::default())
        .map_err(HarnessError::Scenario)?;
    eprintln!(
        "replaying {} fault steps of {} (seed {})",
        recorded.schedule.steps.len(),
        run_dir.display(),
        recorded.seed
    );
    let interrupt = interrupt_token();
    let mut worst = EXIT_OK;
    for _ in 0..repeat.max(1) {
        let options = run::RunOptions {
            seed: Some(recorded.seed),
            out: out.clone(),
            ready_timeout,
            expect: None,
            folder: None,
            replay_of: Some(run_dir.to_path_buf()),
            command: None,
        };
        let code = match run::run_scenario(&loaded, &options, interrupt.clone()).await {
            Ok(outcome) => {
                println!("{}", outcome.summary);
                outcome.exit_code
            }
            Err(e) => {
                eprintln!("error: {e}");
                e.exit_code()
            }
        };
        worst = worse(worst, code);
        if code == EXIT_INTERRUPTED {
            break;
        }
    }
    Ok(worst)
}

/// The exit codes of the plays of `chaos run`, in order (none for a play skipped), the one
/// that says most, and how the entries held to a rate stand.
struct Played {
    worst: i32,
    codes: Vec<Option<i32>>,
    stops: RateStops,
    /// Cancelled by Ctrl-C or SIGTERM, for what a suite plays after (its comparisons).
    interrupt: CancellationToken,
}

impl Played {
    /// A suite's exit code: each play and each comparison held to what its entry expects (a
    /// table of expected against got): 1 when any differs, 0 when all are as expected; a
    /// broken harness or an interruption still says so (254, 255, 130).
    fn held_to(
        &self,
        work: &chaos::suite::Work,
        compared: &[error::Result<chaos::compare::Compared>],
    ) -> i32 {
        let worst = compared
            .iter()
            .map(|got| {
                got.as_ref()
                    .map_or_else(HarnessError::exit_code, |c| c.exit_code)
            })
            .fold(self.worst, worse);
        if matches!(worst, EXIT_BAD_INPUT | EXIT_INFRA | EXIT_INTERRUPTED) {
            return worst;
        }
        let plays = &work.plays;
        let word = |code: i32| match code {
            EXIT_OK => "pass",
            error::EXIT_VIOLATION => "fail",
            error::EXIT_UNKNOWN => "unknown",
            _ => "error",
        };
        println!("\nexpected against got:");
        let mut deviations = 0;
        let mut played = 0;
        for (play, code) in plays.iter().zip(&self.codes) {
            let Some(code) = code else { continue };
            played += 1;
            let held = play.expect.accepts(*code);
            if !held {
                deviations += 1;
            }
            println!(
                "  {:<11} {:<8} {:<7} seed {:<4} {}",
                if held { "as expected" } else { "DIFFERS" },
                play.expect.word(),
                word(*code),
                play.seed,
                play.scenario.display()
            );
        }
        if !plays.is_empty() || compared.is_empty() {
            let skipped = match self.codes.len() - played {
                0 => String::new(),
                n => format!(
                    "; {played} of {} played, the other {n} could not change their entry's rate",
                    self.codes.len()
                ),
            };
            println!(
                "{} of {played} plays as expected{skipped}",
                played - deviations
            );
        }
        deviations += self.stops.print_closing();
        if !compared.is_empty() {
            let mut differ = 0;
            for (comparison, got) in work.comparisons.iter().zip(compared) {
                let (held, row) = comparison.held(got);
                differ += usize::from(!held);
                println!("{row}");
            }
            println!(
                "{} of {} comparisons as expected",
                compared.len() - differ,
                compared.len()
            );
            deviations += differ;
        }
        if deviations > 0 {
            error::EXIT_VIOLATION
        } else {
            EXIT_OK
        }
    }
}

impl Played {
    /// `chaos run --seeds ... --rate`'s exit code: 0 when every scenario met every bound, 1
    /// when one did not; a broken harness or an interruption still says so (254, 255, 130).
    fn held_to_rates(&self) -> i32 {
        if matches!(self.worst, EXIT_BAD_INPUT | EXIT_INFRA | EXIT_INTERRUPTED) {
            return self.worst;
        }
        println!("\nheld to the rate:");
        if self.stops.print_closing() > 0 {
            error::EXIT_VIOLATION
        } else {
            EXIT_OK
        }
    }
}

fn first_line(e: &HarnessError) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

/// The exit code that says most: infrastructure and interruption over violations over unknown.
fn worse(a: i32, b: i32) -> i32 {
    let rank = |c: i32| match c {
        EXIT_OK => 0,
        error::EXIT_UNKNOWN => 1,
        error::EXIT_VIOLATION => 2,
        EXIT_BAD_INPUT => 3,
        EXIT_INFRA => 4,
        _ => 5,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

async fn build_images(
    compose: &Path,
    profiles: &[String],
    force: bool,
) -> Result<i32, HarnessError> {
    let file =
        compose::ComposeFile::load(compose).map_err(|e| HarnessError::BadInput(e.to_string()))?;
    let profiles = if profiles.is_empty() {
        file.profiles()
    } else {
        profiles.to_vec()
    };
    let mut services = Vec::new();
    for profile in &profiles {
        let found = file.profile_services(profile);
        if found.is_empty() {
            return Err(HarnessError::BadInput(format!(
                "no service in profile `{profile}` (profiles: {})",
                file.profiles().join(", ")
            )));
        }
        services.extend(found);
    }
    let docker = docker::connect().await?;
    images::ensure_base(&docker, &file.dir, force).await?;
    let specs = images::images_for(&file, &services);
    // Images that cannot be built here (user-supplied) are reported, not fatal.
    let (buildable, external): (Vec<_>, Vec<_>) =
        specs.into_iter().partition(|s| s.build.is_some());
    images::ensure(&docker, &file.dir, &buildable, force).await?;
    for spec in external {
        if !images::exists(&docker, &spec.tag).await {
            eprintln!(
                "note: {} is not built here; bring it with docker load",
                spec.tag
            );
        }
    }
    Ok(EXIT_OK)
}

/// What `chaos images build ozone` builds an image from.
struct OzoneFrom<'a> {
    patches: &'a [PathBuf],
    swap: Option<String>,
    version: Option<String>,
    dist: Option<&'a Path>,
    source: Option<&'a Path>,
}

/// `chaos images build ozone --patch FILE... [--version V]`, `--swap ratis=V [--patch FILE...]
/// [--version V]`, `--dist PATH` or `--source DIR [--patch FILE...]`: prints the tag.
async fn build_ozone(
    profiles: &[String],
    from: OzoneFrom<'_>,
    force: bool,
) -> Result<i32, HarnessError> {
    use chaos::cluster::{ozone_build, ozone_source, ozone_swap};
    let OzoneFrom {
        patches,
        swap,
        version,
        dist,
        source,
    } = from;
    if profiles != ["ozone"] {
        return Err(HarnessError::BadInput(format!(
            "--patch, --swap, --dist and --source build Ozone images: `chaos images build ozone --patch FILE` (got profiles `{}`)",
            profiles.join(" ")
        )));
    }
    let root = std::env::current_dir().unwrap_or_default();
    let started = std::time::Instant::now();
    let tag = match (dist, source) {
        (Some(path), _) => {
            let docker = docker::connect().await?;
            ozone_build::ensure_dist(&docker, &root, path, force).await?
        }
        (None, Some(dir)) => {
            ozone_source::check_args(dir, patches)?;
            let docker = docker::connect().await?;
            ozone_source::ensure_source(&docker, &root, dir, patches, force).await?
        }
        (None, None) => {
            let version = version
                .or_else(|| std::env::var("OZONE_VERSION").ok())
                .unwrap_or_else(|| "2.2.0".into());
            if let Some(swap) = swap {
                let swap = ozone_swap::Swap::parse(&swap)
                    .map_err(|e| HarnessError::BadInput(format!("--swap {swap}: {e}")))?;
                ozone_swap::check_swap_args(&version, &swap, patches)?;
                let docker = docker::connect().await?;
                ozone_swap::ensure_swapped(&docker, &root, &version, &swap, patches, force).await?
            } else {
                ozone_build::check_patch_args(&version, patches)?;
                let docker = docker::connect().await?;
                ozone_build::ensure_patched(&docker, &root, &version, patches, force).await?
            }
        }
    };
    println!("{tag}");
    eprintln!(
        "{tag} ready in {:.0} s; play on it with OZONE_IMAGE={tag}",
        started.elapsed().as_secs_f64()
    );
    Ok(EXIT_OK)
}

async fn clean() -> Result<i32, HarnessError> {
    let docker = docker::connect().await?;
    let swept = docker::sweep(&docker, None).await?;
    println!(
        "removed {} container(s), {} network(s), {} volume(s) of dead runs",
        swept.containers.len(),
        swept.networks.len(),
        swept.volumes.len()
    );
    for name in swept.containers {
        println!("  {name}");
    }
    Ok(EXIT_OK)
}
