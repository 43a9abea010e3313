//! Suites for nightly jobs: a list of scenarios, each with seeds, expanded into (scenario, seed)
//! plays; `--shard i/n` keeps a deterministic share so a CI matrix spreads one suite over many
//! machines, and the shards together play every pair exactly once.
//!
//! ```yaml
//! name: nightly                           # optional
//! scenarios:
//!   - scenario: etcd/register-faults.yaml # relative to the suite file
//!     seeds: 5                            # five seeds: first_seed, first_seed + 1, ...
//!     first_seed: 100                     # default 1
//!   - scenario: etcd/stale-reads.yaml
//!     seeds: [1, 7, 42]                   # or an explicit list
//!     expect: fail                        # pass | fail | any (default), or per seed:
//!                                         # { 1: fail, 7: any } (seeds not named: any)
//! ```
//!
//! `chaos run --suite` then exits 1 when a play's verdict differs from what its entry expects,
//! so a known-bad control that passes fails the night as surely as a regression does.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Deserialize;

use crate::error::{HarnessError, Result};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    #[serde(default)]
    pub name: Option<String>,
    pub scenarios: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub scenario: PathBuf,
    pub seeds: Seeds,
    #[serde(default)]
    pub first_seed: Option<u64>,
    #[serde(default)]
    pub expect: Option<ExpectSpec>,
    /// Holds the entry's plays to a share instead of each to a verdict: `{ confirmed: 80% }`
    /// (at least 80% of its plays confirmed). A class of `rates::RATE_NAMES`.
    #[serde(default)]
    pub rate: Option<std::collections::BTreeMap<String, Percent>>,
}

/// `80%`: a share of an entry's plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percent(pub f64);

impl<'de> Deserialize<'de> for Percent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let bad =
            || serde::de::Error::custom(format!("`{text}` is not a share; expected e.g. 80%"));
        let number = text.trim().strip_suffix('%').ok_or_else(bad)?;
        let value: f64 = number.trim().parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&value) {
            return Err(bad());
        }
        Ok(Percent(value / 100.0))
    }
}

/// What a play of a suite must end with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// Every check passed (exit 0).
    Pass,
    /// A check found a violation (exit 1): a known-bad control.
    Fail,
    /// Either, or a check that could not decide (exit 0, 1 or 2); never a broken harness.
    #[default]
    Any,
}

impl Expect {
    pub fn accepts(self, exit_code: i32) -> bool {
        match self {
            Expect::Pass => exit_code == 0,
            Expect::Fail => exit_code == 1,
            Expect::Any => (0..=2).contains(&exit_code),
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Expect::Pass => "pass",
            Expect::Fail => "fail",
            Expect::Any => "any",
        }
    }
}

/// `expect: fail` for every seed of the entry, or `expect: { 3: fail }` per seed.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ExpectSpec {
    All(Expect),
    PerSeed(std::collections::BTreeMap<u64, Expect>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Seeds {
    Count(u64),
    List(Vec<u64>),
}

/// One run of a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Play {
    pub scenario: PathBuf,
    pub seed: u64,
    pub expect: Expect,
    /// The entry's position in the suite (its plays are held to its `rate:` together).
    pub entry: usize,
    /// The entry's `rate:` bounds: class name -> least share.
    pub rate: Vec<(String, f64)>,
}

/// `i/n`: the i-th of n shards, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("--shard expects i/n with 1 <= i <= n (like 2/3), got `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// `--seeds`: `1..10` (both ends included), `7`, or a list `1,4,9`; at most
/// [`SeedRange::MAX`] seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedRange(pub Vec<u64>);

impl SeedRange {
    pub const MAX: u64 = 10_000;
}

impl FromStr for SeedRange {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<SeedRange, String> {
        let bad = || {
            format!("--seeds expects a range like 1..10, a seed, or a list like 1,4,9; got `{s}`")
        };
        let number = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        let seeds: Vec<u64> = match s.split_once("..") {
            Some((low, high)) => {
                let (low, high) = (number(low)?, number(high)?);
                if low > high {
                    return Err(format!("--seeds `{s}`: the range is empty (low > high)"));
                }
                if high - low >= Self::MAX {
                    return Err(format!(
                        "--seeds `{s}`: {} seeds; at most {} at once",
                        u128::from(high - low) + 1,
                        Self::MAX
                    ));
                }
                (low..=high).collect()
            }
            None => s
                .split(',')
                .map(number)
                .collect::<std::result::Result<_, _>>()?,
        };
        if seeds.len() as u64 > Self::MAX {
            return Err(format!("--seeds: at most {} seeds at once", Self::MAX));
        }
        Ok(SeedRange(seeds))
    }
}

impl Shard {
    /// Round-robin over the suite's order: each scenario's seeds spread over the shards, so long
    /// and short scenarios share the machines evenly.
    pub fn keeps(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

/// Reads a suite file.
pub fn load(path: &Path) -> Result<Suite> {
    let text =
        crate::scenario::read_file(path).map_err(|e| HarnessError::BadInput(e.to_string()))?;
    parse(&text).map_err(|e| HarnessError::BadInput(format!("{}{e}", path.display())))
}

pub fn parse(text: &str) -> std::result::Result<Suite, String> {
    // Errors start with the separator after the file name: `:line:col: ...` or `: ...`.
    let suite: Suite =
        serde_saphyr::from_str(text).map_err(|e| crate::scenario::wording::in_file("", &e))?;
    if suite.scenarios.is_empty() {
        return Err(": a suite needs at least one entry under `scenarios`".into());
    }
    let mut plays = 0u64;
    for e in &suite.scenarios {
        for class in e.rate.iter().flat_map(|r| r.keys()) {
            if !crate::rates::RATE_NAMES.contains(&class.as_str()) {
                return Err(format!(
                    ": {}: `rate:` counts one of {}, not `{class}`",
                    e.scenario.display(),
                    crate::rates::RATE_NAMES.join(", ")
                ));
            }
        }
        if e.rate.is_some() && e.expect.is_some() {
            return Err(format!(
                ": {}: an entry is held to `expect:` or to `rate:`, not both",
                e.scenario.display()
            ));
        }
        if let Seeds::Count(0) = e.seeds {
            return Err(format!(
                ": {}: `seeds` must be at least 1",
                e.scenario.display()
            ));
        }
        if let Seeds::List(l) = &e.seeds {
            if l.is_empty() {
                return Err(format!(
                    ": {}: `seeds` is an empty list",
                    e.scenario.display()
                ));
            }
        }
        let count = match &e.seeds {
            Seeds::Count(n) => *n,
            Seeds::List(l) => l.len() as u64,
        };
        if count > SeedRange::MAX {
            return Err(format!(
                ": {}: {count} seeds; an entry plays at most {} seeds",
                e.scenario.display(),
                SeedRange::MAX
            ));
        }
        if let Seeds::Count(n) = e.seeds {
            let first = e.first_seed.unwrap_or(1);
            if first.checked_add(n - 1).is_none() {
                return Err(format!(
                    ": {}: `first_seed: {first}` and `seeds: {n}` go past the largest seed, {}",
                    e.scenario.display(),
                    u64::MAX
                ));
            }
        }
        plays += count;
    }
    if plays > MAX_PLAYS {
        return Err(format!(
            ": {plays} plays in all; a suite plays at most {MAX_PLAYS}"
        ));
    }
    Ok(suite)
}

/// The most plays a suite may hold in all (each is a real run of minutes).
pub const MAX_PLAYS: u64 = 100_000;

/// Every (scenario, seed) of the suite, in the suite's order; scenario paths are resolved
/// against the suite file's folder.
pub fn expand(suite: &Suite, base: &Path) -> Vec<Play> {
    let mut plays = Vec::new();
    for (entry, e) in suite.scenarios.iter().enumerate() {
        let scenario = if e.scenario.is_absolute() {
            e.scenario.clone()
        } else {
            base.join(&e.scenario)
        };
        let seeds: Vec<u64> = match &e.seeds {
            Seeds::Count(n) => {
                let first = e.first_seed.unwrap_or(1);
                (0..*n).map(|i| first + i).collect()
            }
            Seeds::List(l) => l.clone(),
        };
        for seed in seeds {
            let expect = match &e.expect {
                None => Expect::Any,
                Some(ExpectSpec::All(x)) => *x,
                Some(ExpectSpec::PerSeed(per)) => per.get(&seed).copied().unwrap_or_default(),
            };
            plays.push(Play {
                scenario: scenario.clone(),
                seed,
                expect,
                entry,
                rate: e
                    .rate
                    .iter()
                    .flatten()
                    .map(|(class, p)| (class.clone(), p.0))
                    .collect(),
            });
        }
    }
    plays
}

/// The plays of a suite file, optionally only one shard's share.
pub fn plays(path: &Path, shard: Option<Shard>) -> Result<Vec<Play>> {
    let suite = load(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let all = expand(&suite, base);
    Ok(match shard {
        Some(s) => all
            .into_iter()
            .enumerate()
            .filter(|(i, _)| s.keeps(*i))
            .map(|(_, p)| p)
            .collect(),
        None => all,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = "name: nightly\nscenarios:\n  - scenario: etcd/a.yaml\n    seeds: 4\n    first_seed: 10\n  - scenario: /abs/b.yaml\n    seeds: [3, 5]\n";

    #[test]
    fn expectations_for_all_seeds_or_per_seed() {
        let s = parse("scenarios:\n  - scenario: a.yaml\n    seeds: 2\n    expect: fail\n  - scenario: b.yaml\n    seeds: [3, 4]\n    expect: { 4: pass }\n  - scenario: c.yaml\n    seeds: 1\n").unwrap();
        let got: Vec<Expect> = expand(&s, Path::new("."))
            .iter()
            .map(|p| p.expect)
            .collect();
        assert_eq!(
            got,
            [
                Expect::Fail,
                Expect::Fail,
                Expect::Any,
                Expect::Pass,
                Expect::Any
            ]
        );
        assert!(Expect::Fail.accepts(1) && !Expect::Fail.accepts(0));
        assert!(Expect::Pass.accepts(0) && !Expect::Pass.accepts(2));
        assert!(Expect::Any.accepts(2) && !Expect::Any.accepts(255));
        assert!(
            parse("scenarios:\n  - scenario: a.yaml\n    seeds: 1\n    expect: maybe\n").is_err()
        );
    }

    #[test]
    fn expands_counts_and_lists() {
        let s = parse(SUITE).unwrap();
        let p = expand(&s, Path::new("suites"));
        assert_eq!(p.len(), 6);
        assert_eq!(p[0].scenario, PathBuf::from("suites/etcd/a.yaml"));
        assert_eq!(p[3].seed, 13);
        assert_eq!(
            p[5],
            Play {
                scenario: "/abs/b.yaml".into(),
                seed: 5,
                expect: Expect::Any,
                entry: 1,
                rate: Vec::new(),
            }
        );
    }

    #[test]
    fn shards_cover_everything_once() {
        let s = parse(SUITE).unwrap();
        let all = expand(&s, Path::new("."));
        let mut seen = Vec::new();
        for i in 1..=4 {
            let shard: Shard = format!("{i}/4").parse().unwrap();
            seen.extend(
                all.iter()
                    .enumerate()
                    .filter(|(j, _)| shard.keeps(*j))
                    .map(|(_, p)| p.clone()),
            );
        }
        let key = |p: &Play| (p.scenario.clone(), p.seed);
        seen.sort_by_key(key);
        let mut want = all.clone();
        want.sort_by_key(key);
        assert_eq!(seen, want);
    }

    #[test]
    fn rejects_bad_input() {
        assert!("0/3".parse::<Shard>().is_err());
        assert!("4/3".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
        assert!(parse("scenarios: []\n").is_err());
    }

    /// A count of seeds past what can be played, or past the largest seed, is refused with
    /// its limit (it once panicked allocating 2^64 seeds, or wrapped past u64::MAX).
    #[test]
    fn seed_counts_have_limits() {
        let entry = |seeds: &str| parse(&format!("scenarios:\n  - scenario: a.yaml\n{seeds}"));
        let e = entry("    seeds: 18446744073709551615\n").unwrap_err();
        assert!(e.contains("at most 10000 seeds"), "{e}");
        let e = entry("    seeds: 3\n    first_seed: 18446744073709551615\n").unwrap_err();
        assert!(e.contains("past the largest seed"), "{e}");
        assert!(entry("    seeds: 2\n    first_seed: 18446744073709551614\n").is_ok());
        let many = "  - scenario: a.yaml\n    seeds: 10000\n".repeat(11);
        let e = parse(&format!("scenarios:\n{many}")).unwrap_err();
        assert!(e.contains("at most 100000"), "{e}");
    }

    #[test]
    fn seed_ranges() {
        assert_eq!("1..3".parse::<SeedRange>().unwrap().0, [1, 2, 3]);
        assert_eq!("7".parse::<SeedRange>().unwrap().0, [7]);
        assert_eq!("1,4, 9".parse::<SeedRange>().unwrap().0, [1, 4, 9]);
        for bad in [
            "",
            "3..1",
            "a..b",
            "1..",
            "0..18446744073709551615",
            "1,,2",
            "-1",
        ] {
            assert!(bad.parse::<SeedRange>().is_err(), "{bad}");
        }
        assert!(parse("scenarios:\n  - scenario: a.yaml\n    seeds: 0\n").is_err());
        assert!(parse("scenarios:\n  - scenario: a.yaml\n    seeds: 1\n    typo: 2\n").is_err());
    }
}
