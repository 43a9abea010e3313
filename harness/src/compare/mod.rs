//! `chaos compare SCENARIO --build A --build B --seeds 1..N` (issue 24): the same scenario and
//! seeds played on two builds, seed by seed (A then B, so a slow spell of the machine falls on
//! both), each run a plain run folder under `OUT/compare/<scenario>/<UTC time>/<build>/s<seed>`;
//! then per build a row of classes (confirmed, held, not reached, ...; k of N with 95%
//! intervals) and a conclusion line. The comparison folder gets `compare.json` and a
//! self-contained `index.html` that links each run's report; `chaos report --index` lists it.
//! It stops once more seeds cannot change the conclusion (decide.rs; `--all-seeds` plays them
//! all), plays a seed's runs at once with `--side-by-side`, and spreads over machines as
//! shares joined by a merge (share.rs).
//!
//! A build is a release version (`2.2.0`), a release plus patches (`2.2.0+fixes/X.patch+...`),
//! a release with Apache Ratis swapped for another version (`2.2.0+ratis=3.3.0[+fixes/X.patch]`),
//! an Ozone distribution (`dist:PATH`), an Ozone source tree built here with Maven
//! (`src:DIR[+fixes/X.patch...]`, the patches applied to a copy), an image (`image:TAG`), or a setting added to the
//! scenario's `cluster.environment` for every node (`set:KEY=VALUE`, any system).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::cluster::{docker, ozone_build, ozone_source, ozone_swap};
use crate::error::{HarnessError, Result, EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION};
use crate::rates::{Class, Tally};
use crate::run_folder::{ComparedBuild, ComparedRun, Comparison};
use crate::scenario::LoadedScenario;

mod decide;
mod share;
pub use decide::decide;
pub use share::merge;

use crate::shard::Shard;

/// One side of a comparison, as `--build` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Build {
    /// chaos-ozone:<version>, from Maven Central.
    Release(String),
    /// A release plus patches, applied in order.
    Patched(String, Vec<PathBuf>),
    /// A release (plus patches) with a dependency's jars swapped for another version's.
    Swapped(String, ozone_swap::Swap, Vec<PathBuf>),
    /// An Ozone distribution, a folder or tarball.
    Dist(PathBuf),
    /// An Ozone source tree, built with Maven, plus patches applied to a copy of it.
    Source(PathBuf, Vec<PathBuf>),
    /// An image already here (OZONE_IMAGE).
    Image(String),
    /// KEY=VALUE in the scenario's cluster.environment, for every node.
    Set(String, String),
}

impl Build {
    pub fn parse(text: &str) -> std::result::Result<Build, String> {
        let text = text.trim();
        if let Some(path) = text.strip_prefix("dist:") {
            if path.is_empty() {
                return Err("--build dist:PATH needs a path".into());
            }
            return Ok(Build::Dist(PathBuf::from(path)));
        }
        if let Some(spec) = text.strip_prefix("src:") {
            let (dir, patches) =
                ozone_source::parse_spec(spec).map_err(|e| format!("--build {text}: {e}"))?;
            return Ok(Build::Source(dir, patches));
        }
        if let Some(tag) = text.strip_prefix("image:") {
            if tag.is_empty() || tag.contains(char::is_whitespace) {
                return Err(format!("--build `{text}`: image:TAG needs an image tag"));
            }
            return Ok(Build::Image(tag.to_string()));
        }
        if let Some(setting) = text.strip_prefix("set:") {
            return match setting.split_once('=') {
                Some((k, v))
                    if !k.is_empty()
                        && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
                {
                    Ok(Build::Set(k.to_string(), v.to_string()))
                }
                _ => Err(format!(
                    "--build `{text}`: set:KEY=VALUE needs a variable name (letters, digits, _) and a value"
                )),
            };
        }
        let mut parts = text.split('+');
        let version = parts.next().unwrap_or_default().to_string();
        if !ozone_build::valid_version(&version) {
            return Err(format!(
                "--build `{text}`: not a build (a release like 2.2.0, 2.2.0+fixes/X.patch, 2.2.0+ratis=3.3.0, dist:PATH, src:DIR, image:TAG or set:KEY=VALUE)"
            ));
        }
        // After the version: patches, and at most one swap (NAME=VERSION) among them.
        let (mut patches, mut swap) = (Vec::new(), None);
        for part in parts {
            if part.is_empty() {
                return Err(format!("--build `{text}`: an empty patch name after `+`"));
            }
            if !ozone_swap::is_swap(part) {
                patches.push(PathBuf::from(part));
                continue;
            }
            let parsed = ozone_swap::Swap::parse(part)
                .map_err(|e| format!("--build `{text}`: {part}: {e}"))?;
            if let Some(first) = swap.replace(parsed) {
                return Err(format!(
                    "--build `{text}`: two swaps ({first} and {part}); one dependency version a build"
                ));
            }
        }
        Ok(match (swap, patches.is_empty()) {
            (Some(swap), _) => Build::Swapped(version, swap, patches),
            (None, true) => Build::Release(version),
            (None, false) => Build::Patched(version, patches),
        })
    }

    /// The build with its relative patch or distribution path taken from `folder` (a suite's
    /// builds are written relative to the suite file, as its scenarios are).
    pub fn relative_to(self, folder: &Path) -> Build {
        match self {
            Build::Patched(v, patches) => {
                Build::Patched(v, patches.iter().map(|p| folder.join(p)).collect())
            }
            Build::Swapped(v, swap, patches) => {
                Build::Swapped(v, swap, patches.iter().map(|p| folder.join(p)).collect())
            }
            Build::Dist(path) => Build::Dist(folder.join(path)),
            Build::Source(dir, patches) => Build::Source(
                folder.join(dir),
                patches.iter().map(|p| folder.join(p)).collect(),
            ),
            other => other,
        }
    }

    /// Whether the build is an Ozone image (everything but a setting).
    pub fn is_ozone(&self) -> bool {
        !matches!(self, Build::Set(..))
    }

    /// What makes two builds the same: the version and the patches' bytes, the distribution's
    /// or source tree's folder (with the patches' bytes), the tag, the setting.
    fn identity(&self) -> Result<String> {
        Ok(match self {
            Build::Release(v) => format!("chaos-ozone:{v}"),
            Build::Patched(v, p) => ozone_build::patched_tag(v, p)?,
            Build::Swapped(v, s, p) => ozone_swap::swapped_tag(v, s, p)?,
            Build::Dist(p) => format!("dist:{}", p.canonicalize().unwrap_or(p.clone()).display()),
            Build::Source(d, p) => format!(
                "src:{}+{}",
                d.canonicalize().unwrap_or(d.clone()).display(),
                ozone_source::patches_digest(p)?.unwrap_or_default()
            ),
            Build::Image(t) => format!("image:{t}"),
            Build::Set(k, v) => format!("set:{k}={v}"),
        })
    }
}

/// The words of the `chaos compare` command that plays this comparison again from the
/// repository's root, without `--seeds` (compare.json's `reproduce`): the scenario and every
/// build's patch or distribution path relative to the root (a suite's relative to its file
/// first), every `--build` in order (or `--versions`), and `--ready-timeout` when given.
pub fn reproduce_words(options: &CompareOptions) -> Vec<String> {
    let shown = |p: &Path| {
        crate::run_folder::repo_relative(&options.paths_from.join(p))
            .display()
            .to_string()
    };
    let mut words = vec![
        "chaos".to_string(),
        "compare".to_string(),
        crate::run_folder::repo_relative(&options.scenario)
            .display()
            .to_string(),
    ];
    if options.survey {
        words.extend(["--versions".to_string(), options.builds.join(",")]);
    } else {
        for text in &options.builds {
            let build = match Build::parse(text) {
                Ok(Build::Patched(v, patches)) => {
                    let patches: Vec<String> = patches.iter().map(|p| shown(p)).collect();
                    format!("{v}+{}", patches.join("+"))
                }
                Ok(Build::Swapped(v, swap, patches)) => {
                    let mut words = vec![v, swap.to_string()];
                    words.extend(patches.iter().map(|p| shown(p)));
                    words.join("+")
                }
                Ok(Build::Dist(path)) => format!("dist:{}", shown(&path)),
                Ok(Build::Source(dir, patches)) => {
                    let mut words = vec![shown(&dir)];
                    words.extend(patches.iter().map(|p| shown(p)));
                    format!("src:{}", words.join("+"))
                }
                _ => text.trim().to_string(),
            };
            words.extend(["--build".to_string(), build]);
        }
    }
    if let Some(t) = options.ready_timeout {
        words.extend([
            "--ready-timeout".to_string(),
            format!("{}ms", t.as_millis()),
        ]);
    }
    words
}

/// A build's name as a folder: what it was given as, with anything but letters, digits and
/// `.=+-` replaced by `_` (`2.2.0+fixes/X.patch` -> `2.2.0+fixes_X.patch`).
pub fn folder_name(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".=+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The conclusion of a comparison with every seed played: [`decide`] with no seed left.
pub fn conclude(a: (&str, &Tally), b: (&str, &Tally), preconditions: bool) -> (bool, String) {
    decide(a, b, preconditions, 0).unwrap_or_default()
}

/// Which releases a bug affects (`chaos compare --versions`): a release on which the bug was
/// confirmed (violated, without preconditions) in at least one seed is affected; one that held
/// (passed) on every seed is not; any other is undecided. Whether every release was decided,
/// and the line that says which.
pub fn survey(sides: &[(&str, &Tally)], preconditions: bool) -> (bool, String) {
    let (bug, fixed) = decide::classes(preconditions);
    let (mut affected, mut held, mut undecided) = (Vec::new(), Vec::new(), Vec::new());
    for (name, tally) in sides {
        let n = tally.runs;
        if tally.count(bug) > 0 {
            affected.push(format!(
                "{name} ({} in {} of {n})",
                bug.word(),
                tally.count(bug)
            ));
        } else if n > 0 && tally.count(fixed) == n {
            held.push(format!("{name} ({} in {n} of {n})", fixed.word()));
        } else {
            let seen: Vec<String> = Class::ALL
                .iter()
                .filter(|c| tally.count(**c) > 0)
                .map(|c| format!("{} in {} of {n}", c.word(), tally.count(*c)))
                .collect();
            undecided.push(format!("{name} ({})", seen.join(", ")));
        }
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let mut line = format!(
        "affected: {}; not affected: {}",
        list(&affected),
        list(&held)
    );
    if !undecided.is_empty() {
        line.push_str(&format!("; undecided: {}", undecided.join(", ")));
    }
    (undecided.is_empty(), line)
}

/// What `chaos compare` was asked.
pub struct CompareOptions {
    pub scenario: PathBuf,
    pub builds: Vec<String>,
    /// `--versions`: which of these releases the bug affects, rather than a fix on B.
    pub survey: bool,
    pub seeds: Vec<u64>,
    /// `--all-seeds`: play every seed, though the conclusion was decided before.
    pub all_seeds: bool,
    /// `--shard i/n`: play only this share of the (seed, build) pairs, every one of them.
    pub shard: Option<Shard>,
    /// `--side-by-side`: a seed's runs on every build at once, where memory allows.
    pub side_by_side: bool,
    pub out: PathBuf,
    pub ready_timeout: Option<std::time::Duration>,
    /// Where the builds' relative patch and distribution paths start: the suite file's folder
    /// for a suite's comparison, empty (the working directory) for `chaos compare`.
    pub paths_from: PathBuf,
}

/// What a comparison ended as: its exit code (as `chaos compare` exits), its conclusion line,
/// each build's tally and where its folder is.
pub struct Compared {
    pub exit_code: i32,
    pub conclusion: String,
    /// Whether the scenario declares preconditions (`reached:`): confirmed / held, or
    /// violated / passed.
    pub preconditions: bool,
    pub sides: Vec<(String, Tally)>,
    pub dir: PathBuf,
}

impl Compared {
    /// Whether the fix is confirmed on the seeds that reached their preconditions: `conclude`
    /// over each side's runs with the not-reached ones left out (a run that did not reach its
    /// preconditions tested nothing, either way); false when a side reached none.
    pub fn confirmed_where_reached(&self) -> bool {
        let reached = |t: &Tally| Tally {
            runs: t.runs - t.count(Class::NotReached),
            counts: t
                .counts
                .iter()
                .filter(|(class, _)| **class != Class::NotReached)
                .map(|(class, n)| (*class, *n))
                .collect(),
            seconds: Vec::new(),
        };
        match self.sides.as_slice() {
            [(a, ta), (b, tb)] => {
                conclude((a, &reached(ta)), (b, &reached(tb)), self.preconditions).0
            }
            _ => false,
        }
    }
}

/// A comparison whose arguments were checked (builds parsed, patches and distributions
/// found, the scenario loaded): nothing built or started yet.
pub struct Prepared {
    base: LoadedScenario,
    builds: Vec<(String, Build)>,
}

/// One build, ready to play: its label, its folder name, the image it runs (Ozone builds) and
/// the scenario as it plays on it (None when this share of the comparison plays none of its
/// runs).
struct Side {
    label: String,
    folder: String,
    image: Option<String>,
    loaded: Option<LoadedScenario>,
    tally: Tally,
    runs: Vec<ComparedRun>,
}

/// The scenario with KEY=VALUE in its cluster.environment, as a text that plays it that way
/// (so the run folder's scenario.yaml and `chaos run --replay` play the build too); comments
/// are not kept.
fn with_setting(loaded: &LoadedScenario, key: &str, value: &str) -> Result<LoadedScenario> {
    let mut doc: Value = serde_saphyr::from_str(&loaded.text)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", loaded.path.display())))?;
    let cluster = doc
        .get_mut("cluster")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| {
            HarnessError::BadInput(format!("{}: no cluster section", loaded.path.display()))
        })?;
    let env = cluster.entry("environment").or_insert_with(|| json!({}));
    if !env.is_object() {
        *env = json!({});
    }
    env[key] = Value::String(value.to_string());
    let body = serde_saphyr::to_string(&doc)
        .map_err(|e| HarnessError::infra(format!("cannot write the scenario with {key}: {e}")))?;
    let text = format!(
        "# {} as `chaos compare` played it with set:{key}={value} (cluster.environment {key} on every node; comments dropped)\n{body}",
        loaded.path.display()
    );
    crate::load::load_text(&loaded.path, text, Default::default()).map_err(HarnessError::Scenario)
}

/// The scenario on an Ozone image: every node of its profile whose image is an Ozone image
/// (chaos-ozone:*, or OZONE_IMAGE's) runs `tag` instead.
fn on_image(path: &Path, tag: &str) -> Result<LoadedScenario> {
    let mut loaded = crate::load::load(path).map_err(HarnessError::Scenario)?;
    if play_on_ozone_image(&mut loaded, tag) == 0 {
        return Err(HarnessError::BadInput(format!(
            "{}: no node runs an Ozone image (chaos-ozone:*), so an Ozone build changes nothing",
            path.display()
        )));
    }
    Ok(loaded)
}

/// Every node whose image is an Ozone image (chaos-ozone:*, or OZONE_IMAGE's) runs `tag`
/// instead; the number of nodes changed.
pub fn play_on_ozone_image(loaded: &mut LoadedScenario, tag: &str) -> usize {
    let user = std::env::var("OZONE_IMAGE").ok();
    let mut replaced = 0;
    for service in loaded.compose.services.values_mut() {
        if let Some(image) = &mut service.image {
            if image.starts_with("chaos-ozone:") || Some(image.as_str()) == user.as_deref() {
                *image = tag.to_string();
                replaced += 1;
            }
        }
    }
    replaced
}

pub async fn compare(options: &CompareOptions, interrupt: CancellationToken) -> Result<Compared> {
    let prepared = prepare(options)?;
    play(options, prepared, interrupt).await
}

/// Checks a comparison's arguments without building or starting anything (bad ones are
/// `BadInput`, exit 254), so a suite refuses a bad comparison before its first run.
pub fn prepare(options: &CompareOptions) -> Result<Prepared> {
    if options.survey && options.builds.is_empty() {
        return Err(HarnessError::BadInput(
            "--versions names no release (for example --versions 2.0.0,2.2.0,2.2.1)".into(),
        ));
    }
    if !options.survey && options.builds.len() != 2 {
        return Err(HarnessError::BadInput(format!(
            "chaos compare needs two builds, --build A (the one with the bug) --build B (the fix); got {}",
            options.builds.len()
        )));
    }
    if options.seeds.is_empty() {
        return Err(HarnessError::BadInput("--seeds names no seed".into()));
    }
    share::Pairs {
        shard: options.shard,
        seeds: options.seeds.len(),
        builds: options.builds.len(),
    }
    .check()?;
    let base = crate::load::load(&options.scenario).map_err(HarnessError::Scenario)?;
    let system = base.spec.system.value.clone();
    let mut builds = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for text in &options.builds {
        let build = Build::parse(text)
            .map_err(HarnessError::BadInput)?
            .relative_to(&options.paths_from);
        if build.is_ozone() && system != "ozone" {
            return Err(HarnessError::BadInput(format!(
                "--build {text} is an Ozone build, and {} plays {system} (for other systems: set:KEY=VALUE)",
                options.scenario.display()
            )));
        }
        match &build {
            Build::Patched(v, patches) => ozone_build::check_patch_args(v, patches)?,
            Build::Swapped(v, swap, patches) => ozone_swap::check_swap_args(v, swap, patches)?,
            Build::Dist(path) => drop(ozone_build::find_dist(path)?),
            Build::Source(dir, patches) => drop(ozone_source::check_args(dir, patches)?),
            _ => {}
        }
        let identity = build.identity()?;
        if let Some((other, _)) = seen.iter().find(|(_, i)| *i == identity) {
            return Err(HarnessError::BadInput(format!(
                "--build {text} is the same build as --build {other}: nothing to compare"
            )));
        }
        if seen
            .iter()
            .any(|(t, _)| folder_name(t) == folder_name(text))
        {
            return Err(HarnessError::BadInput(format!(
                "--build {text}: two builds with the same folder name {}",
                folder_name(text)
            )));
        }
        seen.push((text.clone(), identity));
        builds.push((text.clone(), build));
    }
    Ok(Prepared { base, builds })
}

/// Plays a prepared comparison: every image first, then seed by seed on each build.
pub async fn play(
    options: &CompareOptions,
    prepared: Prepared,
    interrupt: CancellationToken,
) -> Result<Compared> {
    let started = Instant::now();
    let Prepared { base, builds } = prepared;
    // Every image first: a build that fails stops the comparison before any run.
    let root = std::env::current_dir().unwrap_or_default();
    let mut sides = Vec::new();
    let pairs = share::Pairs {
        shard: options.shard,
        seeds: options.seeds.len(),
        builds: builds.len(),
    };
    for (index, (label, build)) in builds.iter().enumerate() {
        if !pairs.plays_build(index) {
            sides.push(Side {
                label: label.clone(),
                folder: folder_name(label),
                image: None,
                loaded: None,
                tally: Tally::default(),
                runs: Vec::new(),
            });
            continue;
        }
        let image = match build {
            Build::Set(..) => None,
            _ => {
                let docker = docker::connect().await?;
                Some(match build {
                    Build::Release(v) => ozone_build::ensure_release(&docker, &root, v).await?,
                    Build::Patched(v, p) => {
                        ozone_build::ensure_patched(&docker, &root, v, p, false).await?
                    }
                    Build::Swapped(v, s, p) => {
                        ozone_swap::ensure_swapped(&docker, &root, v, s, p, false).await?
                    }
                    Build::Dist(path) => {
                        ozone_build::ensure_dist(&docker, &root, path, false).await?
                    }
                    Build::Source(dir, patches) => {
                        ozone_source::ensure_source(&docker, &root, dir, patches, false).await?
                    }
                    Build::Image(tag) => {
                        if !crate::cluster::images::exists(&docker, tag).await {
                            return Err(HarnessError::BadInput(format!(
                                "--build {label}: no image {tag} here (docker load it, or build it with chaos images build ozone)"
                            )));
                        }
                        tag.clone()
                    }
                    Build::Set(..) => unreachable!(),
                })
            }
        };
        let loaded = match (build, &image) {
            (Build::Set(k, v), _) => with_setting(&base, k, v)?,
            (_, Some(tag)) => on_image(&options.scenario, tag)?,
            _ => unreachable!(),
        };
        if let Some(tag) = &image {
            eprintln!("build {label}: image {tag}");
        }
        sides.push(Side {
            label: label.clone(),
            folder: folder_name(label),
            image,
            loaded: Some(loaded),
            tally: Tally::default(),
            runs: Vec::new(),
        });
    }

    let now = time::OffsetDateTime::now_utc();
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_default();
    let dir = options
        .out
        .join("compare")
        .join(&base.spec.name)
        .join(match options.shard {
            Some(s) => format!("{stamp}-share{}of{}", s.index, s.count),
            None => stamp,
        });
    std::fs::create_dir_all(&dir)
        .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", dir.display())))?;
    let labels: Vec<&str> = sides.iter().map(|s| s.label.as_str()).collect();
    eprintln!(
        "comparing {} on {} over {} seed(s) -> {}",
        base.spec.name,
        labels.join(", "),
        options.seeds.len(),
        dir.display()
    );
    let reproduce = reproduce_words(options);
    let record_of = |seeds: &[u64]| {
        Comparison {
            reproduce: reproduce.clone(),
            ..Default::default()
        }
        .command(seeds)
    };
    let preconditions = !base.spec.reached.is_empty();
    let mut interrupted = false;
    let mut seeds_left = options.seeds.len() as u32;
    let side_by_side = options.side_by_side && side_by_side_fits(&sides);
    'seeds: for (seed_index, seed) in options.seeds.iter().enumerate() {
        // This seed's run on each build this share plays: one after the other, or side by
        // side (each run is a cluster of its own, on a network of its own).
        let runs: Vec<_> = sides
            .iter()
            .enumerate()
            .filter(|(index, _)| pairs.plays(seed_index, *index))
            .filter_map(|(index, side)| Some((index, side, side.loaded.as_ref()?)))
            .map(|(index, side, loaded)| {
                let run_dir = dir.join(&side.folder).join(format!("s{seed}"));
                let run_options = crate::run::RunOptions {
                    seed: Some(*seed),
                    out: options.out.clone(),
                    ready_timeout: options.ready_timeout,
                    expect: None,
                    folder: Some(run_dir),
                    replay_of: None,
                    // The run alone would not play this build: the comparison of its seed does.
                    command: record_of(&[*seed]),
                };
                let interrupt = interrupt.clone();
                async move { (index, play_run(side, loaded, run_options, interrupt).await) }
            })
            .collect();
        let played = if side_by_side {
            futures_util::future::join_all(runs).await
        } else {
            let mut played = Vec::new();
            for run in runs {
                played.push(run.await);
            }
            played
        };
        for (index, (run, stopped)) in played {
            let side = &mut sides[index];
            println!(
                "[{}] seed {seed}: {} ({})",
                side.label,
                run.class.word(),
                run.summary
            );
            side.tally.add(run.class, run.seconds);
            side.runs.push(ComparedRun {
                folder: run
                    .folder
                    .strip_prefix(&dir)
                    .unwrap_or(&run.folder)
                    .to_path_buf(),
                ..run
            });
            interrupted |= stopped;
        }
        if interrupted {
            break 'seeds;
        }
        seeds_left -= 1;
        // Stop once more seeds cannot change the conclusion (decide.rs has the rule).
        if !options.survey && !options.all_seeds && options.shard.is_none() && seeds_left > 0 {
            let (a, b) = (&sides[0], &sides[1]);
            if decide(
                (&a.label, &a.tally),
                (&b.label, &b.tally),
                preconditions,
                seeds_left,
            )
            .is_some()
            {
                eprintln!(
                    "decided after seed {seed}: the {seeds_left} seed(s) left cannot change the conclusion (--all-seeds plays them)"
                );
                break;
            }
        }
    }

    let record = Comparison {
        scenario: base.spec.name.clone(),
        scenario_path: crate::run_folder::repo_relative(&options.scenario),
        started: now
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        seeds: options.seeds.clone(),
        preconditions,
        wall_s: started.elapsed().as_secs_f64(),
        survey: options.survey,
        shard: options.shard.map(|s| s.to_string()),
        builds: sides
            .into_iter()
            .map(|s| ComparedBuild {
                build: s.label,
                folder: s.folder,
                image: s.image,
                counts: Default::default(),
                runs: s.runs,
            })
            .collect(),
        reproduce,
        ..Default::default()
    };
    finish(record, dir, seeds_left, interrupted)
}

/// One run of a comparison: how it ended (its folder as it is on disk), and whether it was
/// interrupted.
async fn play_run(
    side: &Side,
    loaded: &LoadedScenario,
    options: crate::run::RunOptions,
    interrupt: CancellationToken,
) -> (ComparedRun, bool) {
    let run_dir = options.folder.clone().unwrap_or_default();
    let seed = options.seed.unwrap_or_default();
    let started = Instant::now();
    let mut interrupted = false;
    let (class, summary, folder) = match crate::run::run_scenario(loaded, &options, interrupt).await
    {
        Ok(outcome) => {
            let class = if outcome.exit_code == EXIT_INTERRUPTED {
                interrupted = true;
                Class::Error
            } else {
                Class::of_run(&outcome.run_dir)
            };
            (class, outcome.summary, outcome.run_dir)
        }
        Err(e) => {
            interrupted = e.exit_code() == EXIT_INTERRUPTED;
            let first = e.to_string().lines().next().unwrap_or_default().to_string();
            eprintln!("error: {e}");
            (Class::Error, first, run_dir)
        }
    };
    let build = crate::run_folder::Build {
        build: Some(side.label.clone()),
        image: side.image.clone(),
    };
    let _ = build.write(&folder);
    let run = ComparedRun {
        seed,
        class,
        folder,
        seconds: started.elapsed().as_secs_f64(),
        summary,
    };
    (run, interrupted)
}

/// The memory a cluster of each kind takes at most, with room to spare: an Ozone cluster used
/// 3.2 GB here (chaos bench --ozone), the others far less.
const CLUSTER_MEMORY_BYTES: u64 = 4 << 30;

/// Whether this machine has the memory to play every build's run of a seed at once
/// (MemAvailable in /proc/meminfo); says so when it does not.
fn side_by_side_fits(sides: &[Side]) -> bool {
    let clusters = sides.iter().filter(|s| s.loaded.is_some()).count() as u64;
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0);
    let needed = clusters * CLUSTER_MEMORY_BYTES;
    if available < needed {
        eprintln!(
            "--side-by-side: {:.1} GiB available, {} clusters need {:.0} GiB: one run at a time",
            available as f64 / f64::from(1u32 << 30),
            clusters,
            needed as f64 / f64::from(1u32 << 30)
        );
    }
    available >= needed
}

/// Concludes a comparison from its runs (a share of one only counts them), prints each
/// build's row and the conclusion, and writes compare.json, index.html and summary.md into
/// `dir`.
fn finish(
    mut record: Comparison,
    dir: PathBuf,
    seeds_left: u32,
    interrupted: bool,
) -> Result<Compared> {
    let rows: Vec<(String, Tally)> = record
        .builds
        .iter()
        .map(|b| (b.build.clone(), b.tally()))
        .collect();
    let preconditions = record.preconditions;
    let (confirmed, conclusion) = if let Some(shard) = &record.shard {
        let runs: u32 = rows.iter().map(|(_, t)| t.runs).sum();
        (
            false,
            format!(
                "share {shard} of the comparison: {runs} runs played; chaos compare --merge joins the shares and concludes"
            ),
        )
    } else if record.survey {
        let tallies: Vec<(&str, &Tally)> = rows.iter().map(|(n, t)| (n.as_str(), t)).collect();
        survey(&tallies, preconditions)
    } else {
        let (a, b) = (&rows[0], &rows[1]);
        let (a, b) = ((a.0.as_str(), &a.1), (b.0.as_str(), &b.1));
        // Interrupted with seeds left and nothing decided: what the seeds played say.
        decide(a, b, preconditions, seeds_left).unwrap_or_else(|| conclude(a, b, preconditions))
    };
    println!(
        "\n{} on each build (95% intervals, Wilson):",
        record.scenario
    );
    print!(
        "{}",
        crate::rates::table(&rows).replacen("scenario", "build   ", 1)
    );
    println!("{conclusion}");
    println!(
        "wall time {:.0} s ({} runs); {}",
        record.wall_s,
        rows.iter().map(|(_, t)| t.runs).sum::<u32>(),
        dir.join("index.html").display()
    );
    let errors = rows.iter().any(|(_, t)| t.count(Class::Error) > 0);
    let code = if interrupted {
        EXIT_INTERRUPTED
    } else if confirmed || (record.shard.is_some() && !errors) {
        EXIT_OK
    } else if errors {
        EXIT_INFRA
    } else if record.survey {
        crate::error::EXIT_UNKNOWN
    } else {
        EXIT_VIOLATION
    };
    record.confirmed = confirmed;
    record.conclusion = conclusion.clone();
    record.exit_code = code;
    for (build, (_, tally)) in record.builds.iter_mut().zip(&rows) {
        build.counts = tally
            .counts
            .iter()
            .map(|(c, n)| (c.word().to_string(), *n))
            .collect();
    }
    let io = |e: std::io::Error| HarnessError::infra(e.to_string());
    record.write(&dir).map_err(io)?;
    crate::run_folder::write_file(
        &dir.join("index.html"),
        crate::report::comparison::page(&record)
            .into_string()
            .as_bytes(),
    )
    .map_err(io)?;
    let _ = crate::report::summary_of(&dir);
    Ok(Compared {
        exit_code: code,
        conclusion,
        preconditions,
        sides: rows,
        dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_parse() {
        assert_eq!(Build::parse("2.2.0"), Ok(Build::Release("2.2.0".into())));
        assert_eq!(
            Build::parse("2.2.0+fixes/a.patch+b.patch"),
            Ok(Build::Patched(
                "2.2.0".into(),
                vec!["fixes/a.patch".into(), "b.patch".into()]
            ))
        );
        assert_eq!(Build::parse("dist:/x/y"), Ok(Build::Dist("/x/y".into())));
        assert_eq!(
            Build::parse("src:../ozone+fixes/a.patch"),
            Ok(Build::Source(
                "../ozone".into(),
                vec!["fixes/a.patch".into()]
            ))
        );
        assert!(Build::parse("src:").is_err());
        assert_eq!(
            Build::parse("src:../ozone+a.patch")
                .unwrap()
                .relative_to(Path::new("suites")),
            Build::Source("suites/../ozone".into(), vec!["suites/a.patch".into()])
        );
        assert_eq!(
            Build::parse("image:apache/ozone:2.1.1"),
            Ok(Build::Image("apache/ozone:2.1.1".into()))
        );
        assert_eq!(
            Build::parse("set:APPENDFSYNC=always"),
            Ok(Build::Set("APPENDFSYNC".into(), "always".into()))
        );
        assert!(Build::parse("set:=x").is_err());
        assert!(Build::parse("master").is_err());
        assert!(Build::parse("2.2.0+").is_err());
        assert_eq!(folder_name("2.2.0+fixes/X.patch"), "2.2.0+fixes_X.patch");
        // A suite's builds start from its folder; absolute paths and settings stay as they are.
        let suites = Path::new("suites");
        assert_eq!(
            Build::parse("dist:../d+/abs.patch")
                .unwrap()
                .relative_to(suites),
            Build::Dist("suites/../d+/abs.patch".into())
        );
        assert_eq!(
            Build::parse("2.2.0+../a.patch+/abs/b.patch")
                .unwrap()
                .relative_to(suites),
            Build::Patched(
                "2.2.0".into(),
                vec!["suites/../a.patch".into(), "/abs/b.patch".into()]
            )
        );
        assert_eq!(
            Build::parse("set:A=x/y").unwrap().relative_to(suites),
            Build::Set("A".into(), "x/y".into())
        );
        assert_eq!(folder_name("set:APPENDFSYNC=no"), "set_APPENDFSYNC=no");
        // A swapped dependency, alone or with patches (at most one swap).
        let ratis = |v: &str| ozone_swap::Swap::parse(&format!("ratis={v}")).unwrap();
        assert_eq!(
            Build::parse("2.2.0+ratis=3.3.0"),
            Ok(Build::Swapped("2.2.0".into(), ratis("3.3.0"), vec![]))
        );
        assert_eq!(
            Build::parse("2.2.0+ratis=3.2.2+../fixes/a.patch")
                .unwrap()
                .relative_to(suites),
            Build::Swapped(
                "2.2.0".into(),
                ratis("3.2.2"),
                vec!["suites/../fixes/a.patch".into()]
            )
        );
        assert_eq!(
            Build::parse("2.2.0+fixes/a.patch+ratis=3.3.0"),
            Ok(Build::Swapped(
                "2.2.0".into(),
                ratis("3.3.0"),
                vec!["fixes/a.patch".into()]
            ))
        );
        let unknown = Build::parse("2.2.0+hadoop=3.4.1").unwrap_err();
        assert!(
            unknown.contains("`hadoop` cannot be swapped; only `ratis=VERSION`"),
            "{unknown}"
        );
        assert!(Build::parse("2.2.0+ratis=3.3.0+ratis=3.2.2")
            .unwrap_err()
            .contains("two swaps"));
        assert!(Build::parse("2.2.0+ratis=x").is_err());
        assert_eq!(folder_name("2.2.0+ratis=3.3.0"), "2.2.0+ratis=3.3.0");
    }

    /// A command line split as a POSIX shell does, for the words [`command_line`] writes
    /// (plain words and single quotes).
    fn shell_split(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word: Option<String> = None;
        let (mut quoted, mut escaped) = (false, false);
        for c in line.chars() {
            match c {
                c if escaped => {
                    escaped = false;
                    word.get_or_insert_with(String::new).push(c);
                }
                '\\' if !quoted => escaped = true,
                '\'' => {
                    quoted = !quoted;
                    word.get_or_insert_with(String::new);
                }
                ' ' if !quoted => words.extend(word.take()),
                c => word.get_or_insert_with(String::new).push(c),
            }
        }
        words.extend(word);
        words
    }

    /// What `chaos compare`'s command line says, read back from its words as the CLI takes
    /// them: the scenario, each --build (or --versions), the seeds.
    fn parse_back(words: &[String], root: &Path) -> (PathBuf, Vec<Build>, Vec<String>, Vec<u64>) {
        assert_eq!(&words[..2], ["chaos", "compare"], "{words:?}");
        let (mut builds, mut versions, mut seeds) = (Vec::new(), Vec::new(), Vec::new());
        let mut rest = words[3..].iter();
        while let Some(flag) = rest.next() {
            let value = rest.next().expect("a value after each flag");
            match flag.as_str() {
                "--build" => builds.push(Build::parse(value).unwrap().relative_to(root)),
                "--versions" => versions = value.split(',').map(str::to_string).collect(),
                "--seeds" => seeds = value.parse::<crate::shard::SeedRange>().unwrap().0,
                other => panic!("{other}: not a flag chaos compare was given"),
            }
        }
        (root.join(&words[2]), builds, versions, seeds)
    }

    /// A comparison's summary.md: its Reproduce line, run from the repository's root, names
    /// the same scenario, builds (patches and distributions by paths from the root, whatever
    /// folder they were given from) and seeds; so does each run's own command, for its seed.
    #[test]
    fn the_reproduce_line_reads_back_into_the_same_builds_and_seeds() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .canonicalize()
            .unwrap();
        let scenario = root.join("scenarios/ozone/retry-after-restart.yaml");
        let builds = vec![
            "2.2.0".to_string(),
            format!("2.2.0+{}", root.join("fixes/HDDS-16743.patch").display()),
            "dist:../images/ozone".to_string(),
            format!(
                "2.2.0+ratis=3.3.0+{}",
                root.join("fixes/HDDS-16743.patch").display()
            ),
            "set:JAVA_OPTS=-Xmx1g -Dx='y'".to_string(),
        ];
        let options = CompareOptions {
            scenario: scenario.clone(),
            builds: builds.clone(),
            survey: false,
            seeds: vec![11, 12],
            all_seeds: false,
            shard: None,
            side_by_side: false,
            out: PathBuf::from("reports"),
            ready_timeout: None,
            // As a suite in suites/ names them.
            paths_from: root.join("suites"),
        };
        let record = Comparison {
            scenario: "ozone-retry-after-restart".into(),
            scenario_path: crate::run_folder::repo_relative(&scenario),
            seeds: options.seeds.clone(),
            reproduce: reproduce_words(&options),
            ..Default::default()
        };
        let dir = std::env::temp_dir().join(format!("chaos-reproduce-{}", std::process::id()));
        let markdown = crate::report::summary::comparison(&dir, &record);
        let line = markdown
            .lines()
            .find(|l| l.starts_with("- **Reproduce:** `"))
            .unwrap_or_else(|| panic!("{markdown}"));
        let command = line
            .trim_start_matches("- **Reproduce:** `")
            .strip_suffix('`')
            .unwrap();
        // Paths from the root, none absolute.
        assert!(!command.contains(&root.display().to_string()), "{command}");
        assert!(
            command.starts_with("chaos compare scenarios/ozone/retry-after-restart.yaml --build 2.2.0 --build 2.2.0+fixes/HDDS-16743.patch --build dist:images/ozone "),
            "{command}"
        );
        assert!(
            command.contains(" --build 2.2.0+ratis=3.3.0+fixes/HDDS-16743.patch "),
            "{command}"
        );
        let (path, parsed, versions, seeds) = parse_back(&shell_split(command), &root);
        assert_eq!(path.canonicalize().unwrap(), scenario);
        let expected: Vec<Build> = builds
            .iter()
            .map(|b| Build::parse(b).unwrap().relative_to(&options.paths_from))
            .collect();
        assert_eq!(parsed.len(), expected.len());
        for (got, want) in parsed.iter().zip(&expected) {
            assert_eq!(got.identity().unwrap(), want.identity().unwrap());
        }
        assert!(versions.is_empty());
        assert_eq!(seeds, vec![11, 12]);
        // One seed's command, as each run of the comparison records it.
        let one = record.command(&[12]).unwrap();
        assert_eq!(parse_back(&shell_split(&one), &root).3, vec![12]);
        // A survey gives its releases back.
        let survey = CompareOptions {
            survey: true,
            builds: vec!["2.1.1".into(), "2.2.0".into()],
            ..options
        };
        let words = reproduce_words(&survey);
        let (_, parsed, versions, _) = parse_back(&words, &root);
        assert!(parsed.is_empty());
        assert_eq!(versions, ["2.1.1", "2.2.0"]);
    }

    fn tally(classes: &[Class]) -> Tally {
        let mut t = Tally::default();
        for c in classes {
            t.add(*c, 1.0);
        }
        t
    }

    #[test]
    fn conclusions() {
        let a = tally(&[Class::Confirmed; 10]);
        let b = tally(&[Class::Held; 10]);
        assert_eq!(
            conclude(("A", &a), ("B", &b), true),
            (
                true,
                "fix confirmed: confirmed on A in 10 of 10 seeds, held on B in 10 of 10".into()
            )
        );
        let mut b2 = tally(&[Class::Held; 8]);
        b2.add(Class::Confirmed, 1.0);
        b2.add(Class::Confirmed, 1.0);
        let (ok, line) = conclude(("A", &a), ("B", &b2), true);
        assert!(!ok);
        assert_eq!(line, "not confirmed: B confirmed in 2 of 10");
        let v = tally(&[Class::Violated, Class::Violated]);
        let p = tally(&[Class::Passed, Class::Passed]);
        assert!(conclude(("no", &v), ("always", &p), false).0);
        let (ok, line) = conclude(("no", &p), ("always", &p), false);
        assert!(!ok && line.contains("no passed in 2 of 2"), "{line}");
    }

    #[test]
    fn surveys_of_releases() {
        let once = tally(&[Class::Held, Class::Confirmed, Class::NotReached]);
        let held = tally(&[Class::Held; 3]);
        let unsure = tally(&[Class::Held, Class::NotReached, Class::Held]);
        assert_eq!(
            survey(&[("2.0.0", &held), ("2.2.0", &once)], true),
            (
                true,
                "affected: 2.2.0 (confirmed in 1 of 3); not affected: 2.0.0 (held in 3 of 3)"
                    .into()
            )
        );
        let (decided, line) = survey(&[("2.2.1", &unsure)], true);
        assert!(!decided);
        assert_eq!(
            line,
            "affected: none; not affected: none; undecided: 2.2.1 (held in 2 of 3, not reached in 1 of 3)"
        );
        // Without preconditions a violation counts, and a pass on every seed holds.
        let v = tally(&[Class::Violated]);
        assert!(survey(&[("a", &v)], false)
            .1
            .starts_with("affected: a (violated in 1 of 1)"));
    }
}
