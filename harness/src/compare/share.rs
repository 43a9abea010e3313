//! A comparison spread over machines: `chaos compare --shard i/n` plays the i-th of n
//! deterministic shares of its (seed, build) pairs, and `chaos compare --merge DIR...` joins
//! the shares' folders into the one comparison a single machine would have written (with every
//! seed played: a share cannot stop early, since it does not see the others' runs).
//!
//! The pairs are taken in the order one machine plays them (seed 1 on A, seed 1 on B, seed 2
//! on A, ...) and dealt round-robin, so two shares of a two-build comparison are each one
//! build: each machine builds one image.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{HarnessError, Result};
use crate::run_folder::{ComparedBuild, Comparison};
use crate::shard::Shard;

use super::Compared;

/// Which (seed, build) pairs of a comparison a share plays.
pub struct Pairs {
    pub shard: Option<Shard>,
    pub seeds: usize,
    pub builds: usize,
}

impl Pairs {
    pub fn plays(&self, seed_index: usize, build_index: usize) -> bool {
        self.shard
            .is_none_or(|s| s.keeps(seed_index * self.builds + build_index))
    }

    pub fn plays_build(&self, build_index: usize) -> bool {
        (0..self.seeds).any(|seed| self.plays(seed, build_index))
    }

    /// A share that would play nothing is a mistake in the command (`--shard 7/7` of 6 pairs).
    pub fn check(&self) -> Result<()> {
        match self.shard {
            Some(s) if s.index > self.seeds * self.builds => Err(HarnessError::BadInput(format!(
                "--shard {s}: the comparison has {} (seed, build) pairs, so share {} would play none (at most {} shares)",
                self.seeds * self.builds,
                s.index,
                self.seeds * self.builds
            ))),
            _ => Ok(()),
        }
    }
}

/// Joins the shares in `dirs` into one comparison folder under `out` and concludes it.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Compared> {
    let shares = read_shares(dirs)?;
    let first = &shares[0].1;
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_default();
    let dir = out
        .join("compare")
        .join(&first.scenario)
        .join(format!("{stamp}-merged"));
    let mut builds: Vec<ComparedBuild> = first
        .builds
        .iter()
        .map(|b| ComparedBuild {
            runs: Vec::new(),
            ..b.clone()
        })
        .collect();
    // Where each run's folder is now.
    let mut copies = Vec::new();
    for (share_dir, share) in &shares {
        for (merged, theirs) in builds.iter_mut().zip(&share.builds) {
            if theirs.image.is_some() {
                merged.image.clone_from(&theirs.image);
            }
            for run in &theirs.runs {
                copies.push((share_dir.join(&run.folder), run.folder.clone()));
                merged.runs.push(run.clone());
            }
        }
    }
    // Every pair once, in the order one machine plays them; checked before anything is written.
    let seeds = &first.seeds;
    let order = |seed: u64| seeds.iter().position(|s| *s == seed);
    for build in &mut builds {
        build.runs.sort_by_key(|r| order(r.seed));
        for seed in seeds {
            let n = build.runs.iter().filter(|r| r.seed == *seed).count();
            if n != 1 {
                return Err(HarnessError::BadInput(format!(
                    "the shares hold {n} runs of seed {seed} on build {}, not one: a share was cut short (interrupted?)",
                    build.build
                )));
            }
        }
    }
    let io = |e: std::io::Error| HarnessError::infra(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(io)?;
    for (from, folder) in copies {
        copy_dir(&from, &dir.join(folder)).map_err(io)?;
    }
    let record = Comparison {
        started: shares
            .iter()
            .map(|(_, s)| s.started.clone())
            .min()
            .unwrap_or_default(),
        // The shares played side by side: the comparison took as long as the longest.
        wall_s: shares.iter().map(|(_, s)| s.wall_s).fold(0.0, f64::max),
        shard: None,
        builds,
        ..first.clone()
    };
    eprintln!(
        "merged {} shares of {} -> {}",
        shares.len(),
        record.scenario,
        dir.display()
    );
    super::finish(record, dir, 0, false)
}

/// Each share's compare.json, in share order; refused unless they are every share of one
/// comparison, each once.
fn read_shares(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, Comparison)>> {
    if dirs.is_empty() {
        return Err(HarnessError::BadInput(
            "--merge names no folder (the shares' comparison folders)".into(),
        ));
    }
    let mut by_index: BTreeMap<usize, (PathBuf, Comparison)> = BTreeMap::new();
    let mut count = None;
    for dir in dirs {
        let record = Comparison::read(dir).map_err(|e| {
            HarnessError::BadInput(format!("{}: not a comparison folder ({e})", dir.display()))
        })?;
        let shard: Shard = record
            .shard
            .as_deref()
            .ok_or_else(|| {
                HarnessError::BadInput(format!(
                    "{}: a whole comparison, not a share of one (chaos compare --shard i/n writes shares)",
                    dir.display()
                ))
            })?
            .parse()
            .map_err(|e: String| HarnessError::BadInput(format!("{}: {e}", dir.display())))?;
        if let Some((first_dir, first)) = by_index.values().next() {
            if let Some(what) = differs(first, &record) {
                return Err(HarnessError::BadInput(format!(
                    "{}: a share of another comparison than {}: {what}",
                    dir.display(),
                    first_dir.display()
                )));
            }
        }
        if *count.get_or_insert(shard.count) != shard.count {
            return Err(HarnessError::BadInput(format!(
                "{}: share {shard}, where {} was cut into {} shares",
                dir.display(),
                dirs[0].display(),
                count.unwrap_or_default()
            )));
        }
        if let Some((other, _)) = by_index.get(&shard.index) {
            return Err(HarnessError::BadInput(format!(
                "share {shard} given twice: {} and {}",
                other.display(),
                dir.display()
            )));
        }
        by_index.insert(shard.index, (dir.clone(), record));
    }
    let count = count.unwrap_or_default();
    let missing: Vec<String> = (1..=count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(HarnessError::BadInput(format!(
            "share {} missing: the merge needs every share of the comparison",
            missing.join(", ")
        )));
    }
    Ok(by_index.into_values().collect())
}

/// What makes two shares parts of different comparisons, said, or None.
fn differs(a: &Comparison, b: &Comparison) -> Option<String> {
    let labels =
        |c: &Comparison| -> Vec<String> { c.builds.iter().map(|b| b.build.clone()).collect() };
    let pairs: [(&str, String, String); 5] = [
        ("scenario", a.scenario.clone(), b.scenario.clone()),
        (
            "scenario file",
            a.scenario_path.display().to_string(),
            b.scenario_path.display().to_string(),
        ),
        ("seeds", format!("{:?}", a.seeds), format!("{:?}", b.seeds)),
        ("builds", labels(a).join(", "), labels(b).join(", ")),
        ("command", a.reproduce.join(" "), b.reproduce.join(" ")),
    ];
    pairs
        .into_iter()
        .find(|(_, x, y)| x != y)
        .map(|(what, x, y)| format!("its {what} is {y}, the other's {x}"))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_shares_of_two_builds_are_one_build_each() {
        let pairs = |index| Pairs {
            shard: Some(Shard { index, count: 2 }),
            seeds: 10,
            builds: 2,
        };
        assert!((0..10).all(|s| pairs(1).plays(s, 0) && !pairs(1).plays(s, 1)));
        assert!((0..10).all(|s| pairs(2).plays(s, 1) && !pairs(2).plays(s, 0)));
        // Three shares: every pair in exactly one.
        for seed in 0..10 {
            for build in 0..2 {
                let owners = (1..=3)
                    .filter(|&index| {
                        Pairs {
                            shard: Some(Shard { index, count: 3 }),
                            seeds: 10,
                            builds: 2,
                        }
                        .plays(seed, build)
                    })
                    .count();
                assert_eq!(owners, 1);
            }
        }
    }

    #[test]
    fn a_share_that_plays_nothing_is_refused() {
        let pairs = Pairs {
            shard: Some(Shard { index: 7, count: 7 }),
            seeds: 3,
            builds: 2,
        };
        let e = pairs.check().unwrap_err().to_string();
        assert!(
            e.contains("--shard 7/7: the comparison has 6 (seed, build) pairs"),
            "{e}"
        );
    }

    fn share(dir: &Path, shard: &str, seeds: Vec<u64>, scenario: &str) {
        std::fs::create_dir_all(dir).unwrap();
        Comparison {
            scenario: scenario.into(),
            seeds,
            shard: Some(shard.into()),
            builds: vec![
                ComparedBuild {
                    build: "a".into(),
                    ..Default::default()
                },
                ComparedBuild {
                    build: "b".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
        .write(dir)
        .unwrap();
    }

    #[test]
    fn merges_refuse_what_is_not_one_comparison() {
        let tmp = std::env::temp_dir().join(format!("chaos-merge-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let (one, two, other, three) = (tmp.join("1"), tmp.join("2"), tmp.join("o"), tmp.join("3"));
        share(&one, "1/3", vec![1, 2], "s");
        share(&two, "2/3", vec![1, 2], "s");
        share(&three, "3/3", vec![1, 2, 3], "s");
        share(&other, "2/3", vec![1, 2], "t");
        let err = |dirs: &[&PathBuf]| {
            let dirs: Vec<PathBuf> = dirs.iter().map(|d| (*d).clone()).collect();
            read_shares(&dirs).unwrap_err().to_string()
        };
        let e = err(&[&one, &two]);
        assert!(e.contains("share 3/3 missing"), "{e}");
        let e = err(&[&one, &other]);
        assert!(
            e.contains("a share of another comparison")
                && e.contains("its scenario is t, the other's s"),
            "{e}"
        );
        let e = err(&[&one, &three]);
        assert!(
            e.contains("its seeds is [1, 2, 3], the other's [1, 2]"),
            "{e}"
        );
        let e = err(&[&one, &one]);
        assert!(e.contains("share 1/3 given twice"), "{e}");
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
