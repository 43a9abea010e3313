//! Suites for nightly jobs: a list of scenarios, each with seeds, expanded into (scenario, seed)
//! plays, and comparisons, each `chaos compare` of two builds over seeds; `--shard i/n` keeps a
//! deterministic share so a CI matrix spreads one suite over many machines, and the shards
//! together play every pair, and every comparison, exactly once.
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
//!   - compare: ozone/recover-lease-divergence.yaml
//!     builds: [2.2.0, "2.2.0+../fixes/HDDS-16767.patch"]   # A (the bug), B (the fix), as
//!     seeds: 3                            # `chaos compare --build` takes them; paths relative
//!     expect: fix-confirmed               # to the suite file; what compare must conclude:
//!                                         # fix-confirmed | fix-confirmed-where-reached |
//!                                         # not-confirmed | any (default)
//! ```
//!
//! `chaos run --suite` then exits 1 when a play's verdict or a comparison's conclusion differs
//! from what its entry expects, so a known-bad control that passes fails the night as surely as
//! a regression does, and so does a fix that no longer holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chaos_core::shown::shown;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::compare::{Build, CompareOptions, Compared, Prepared};
use crate::error::{HarnessError, Result, ScenarioError, EXIT_OK, EXIT_VIOLATION};
use crate::rate_stop::{PlayHeld, RateStops};

/// A suite file, validated.
#[derive(Debug)]
pub struct Suite {
    pub name: Option<String>,
    pub scenarios: Vec<Entry>,
}

/// One entry of a suite: a scenario played on each of its seeds, or a comparison.
#[derive(Debug)]
pub enum Entry {
    Plays(PlaysEntry),
    Compare(CompareEntry),
}

#[derive(Debug)]
pub struct PlaysEntry {
    pub scenario: PathBuf,
    pub seeds: Vec<u64>,
    pub expect: Option<ExpectSpec>,
    /// Holds the entry's plays to a share instead of each to a verdict: `{ confirmed: 80% }`
    /// (at least 80% of its plays confirmed): class name (of `rates::RATE_NAMES`) -> least share.
    pub rate: Vec<(String, f64)>,
}

/// `chaos compare SCENARIO --build A --build B --seeds ...`, held to its conclusion.
#[derive(Debug)]
pub struct CompareEntry {
    pub scenario: PathBuf,
    /// A (expected to show the bug) and B (expected to fix it), as written.
    pub builds: [String; 2],
    pub seeds: Vec<u64>,
    pub expect: CompareExpect,
    /// Where its `builds:` is written, for what `chaos compare` later finds wrong with them.
    pub at: EntryAt,
}

/// Where an entry's key is written in its suite file: the entry's index under `scenarios:`,
/// the key's line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EntryAt {
    pub index: usize,
    pub line: u64,
    pub column: u64,
}

impl EntryAt {
    fn of<T>(index: usize, value: &Spanned<T>) -> EntryAt {
        EntryAt {
            index,
            line: value.referenced.line(),
            column: value.referenced.column(),
        }
    }

    /// `FILE:line:column: scenarios[i].KEY: message` (`scenarios[i]: ...` without a key).
    pub fn error(&self, file: &Path, key: &str, message: impl Into<String>) -> ScenarioError {
        let entry = format!("scenarios[{}]", self.index);
        ScenarioError {
            file: file.to_path_buf(),
            line: self.line,
            column: self.column,
            path: if key.is_empty() {
                entry
            } else {
                format!("{entry}.{key}")
            },
            message: message.into(),
        }
    }
}

/// An entry as written; `parse` makes it an `Entry` or says what is wrong with it, at the
/// key that is wrong.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryText {
    #[serde(default)]
    scenario: Option<Spanned<PathBuf>>,
    #[serde(default)]
    compare: Option<Spanned<PathBuf>>,
    #[serde(default)]
    builds: Option<Spanned<Vec<String>>>,
    seeds: Spanned<Seeds>,
    #[serde(default)]
    first_seed: Option<Spanned<u64>>,
    #[serde(default)]
    expect: Option<Spanned<ExpectSpec>>,
    #[serde(default)]
    rate: Option<Spanned<BTreeMap<String, Percent>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteText {
    #[serde(default)]
    name: Option<String>,
    scenarios: Spanned<Vec<Spanned<EntryText>>>,
}

/// `80%`: a share of an entry's plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percent(pub f64);

impl FromStr for Percent {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Percent, String> {
        let bad = || {
            format!(
                "{} is not a share from 0% to 100%; expected e.g. 80%",
                shown(text)
            )
        };
        let number = text.trim().strip_suffix('%').ok_or_else(bad)?;
        let value: f64 = number.trim().parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&value) {
            return Err(bad());
        }
        Ok(Percent(value / 100.0))
    }
}

impl<'de> Deserialize<'de> for Percent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// `chaos run --rate`'s bounds, `confirmed=90%` each: the classes and shares of a suite's
/// `rate:`, each class once.
pub fn rate_bounds(given: &[String]) -> std::result::Result<Vec<(String, f64)>, String> {
    let mut bounds: Vec<(String, f64)> = Vec::new();
    for text in given {
        let refused = |why: String| format!("--rate {}: {why}", shown(text));
        let (class, percent) = text
            .split_once('=')
            .ok_or_else(|| refused("expected CLASS=SHARE, e.g. confirmed=90%".into()))?;
        let class = class.trim();
        if !crate::rates::RATE_NAMES.contains(&class) {
            return Err(refused(crate::scenario::wording::not_one_of(
                class,
                "class of runs --rate counts",
                crate::rates::RATE_NAMES,
            )));
        }
        if bounds.iter().any(|(c, _)| c == class) {
            return Err(refused(format!("names {class} twice")));
        }
        let Percent(at_least) = percent.parse().map_err(refused)?;
        bounds.push((class.to_string(), at_least));
    }
    Ok(bounds)
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

/// `expect: fail` for every seed of the entry, or `expect: { 3: fail }` per seed; or, for a
/// compare entry, the conclusion it must reach.
#[derive(Debug)]
pub enum ExpectSpec {
    All(Expect),
    PerSeed(BTreeMap<u64, Expect>),
    Conclusion(CompareExpect),
}

/// Every word `expect:` takes, for the message that refuses another.
fn expect_words() -> String {
    format!(
        "pass, fail or any (a scenario entry; or a map of seed to one of them), {CONCLUSIONS} (a \
         compare entry)"
    )
}

// By hand rather than `untagged`, whose refusal names no word: a misspelt expectation is told
// which words there are.
impl<'de> Deserialize<'de> for ExpectSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Words;
        impl<'de> serde::de::Visitor<'de> for Words {
            type Value = ExpectSpec;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "one of {}", expect_words())
            }

            fn visit_str<E: serde::de::Error>(
                self,
                word: &str,
            ) -> std::result::Result<ExpectSpec, E> {
                let plays = [Expect::Pass, Expect::Fail, Expect::Any];
                let conclusions = [
                    CompareExpect::FixConfirmed,
                    CompareExpect::FixConfirmedWhereReached,
                    CompareExpect::NotConfirmed,
                ];
                if let Some(e) = plays.into_iter().find(|e| e.word() == word) {
                    Ok(ExpectSpec::All(e))
                } else if let Some(c) = conclusions.into_iter().find(|c| c.word() == word) {
                    Ok(ExpectSpec::Conclusion(c))
                } else {
                    Err(E::custom(format!(
                        "{} is not an expectation; expected {}",
                        shown(word),
                        expect_words()
                    )))
                }
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<ExpectSpec, A::Error> {
                let mut per_seed = BTreeMap::new();
                while let Some((seed, expect)) = map.next_entry::<u64, Expect>()? {
                    per_seed.insert(seed, expect);
                }
                Ok(ExpectSpec::PerSeed(per_seed))
            }
        }
        d.deserialize_any(Words)
    }
}

/// What a comparison of a suite must conclude, in `chaos compare`'s words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompareExpect {
    /// "fix confirmed" (compare's exit 0): B never shows the bug, and A shows it on every seed
    /// or often enough that the 95% intervals are apart (compare/decide.rs).
    FixConfirmed,
    /// "fix confirmed" over the seeds that reached their preconditions, at least one on each
    /// side: for a scenario whose race a seed may miss (a not-reached run tested nothing).
    FixConfirmedWhereReached,
    /// "not confirmed" with every run played (compare's exit 1): B does not fix what A shows.
    NotConfirmed,
    /// Either conclusion; never a harness that failed.
    #[default]
    Any,
}

const CONCLUSIONS: &str = "fix-confirmed, fix-confirmed-where-reached, not-confirmed or any";

impl CompareExpect {
    pub fn accepts(self, got: &Compared) -> bool {
        match self {
            CompareExpect::FixConfirmed => got.exit_code == EXIT_OK,
            CompareExpect::FixConfirmedWhereReached => {
                got.exit_code == EXIT_OK
                    || (got.exit_code == EXIT_VIOLATION && got.confirmed_where_reached())
            }
            CompareExpect::NotConfirmed => got.exit_code == EXIT_VIOLATION,
            CompareExpect::Any => [EXIT_OK, EXIT_VIOLATION].contains(&got.exit_code),
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            CompareExpect::FixConfirmed => "fix-confirmed",
            CompareExpect::FixConfirmedWhereReached => "fix-confirmed-where-reached",
            CompareExpect::NotConfirmed => "not-confirmed",
            CompareExpect::Any => "any",
        }
    }
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

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
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

    /// The items this shard keeps, the first at position `start` of the round-robin.
    fn share<T>(&self, start: usize, items: Vec<T>) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.keeps(start + i))
            .map(|(_, item)| item)
            .collect()
    }
}

/// Reads a suite file: an error is `FILE:line:column: key.path: message`.
pub fn load(path: &Path) -> Result<Suite> {
    let text = crate::scenario::read_file(path).map_err(|e| HarnessError::Scenario(vec![e]))?;
    parse(&text).map_err(|mut e| {
        e.file = path.to_path_buf();
        HarnessError::Scenario(vec![e])
    })
}

/// Whether a file is a suite rather than a scenario: a YAML mapping with `scenarios:` (a
/// scenario has no such key). A file that is neither is left to the scenario's reader to say so.
pub fn is_suite(path: &Path) -> bool {
    let Ok(text) = crate::scenario::read_file(path) else {
        return false;
    };
    crate::scenario::wording::parse_yaml::<serde_json::Value>(&text)
        .is_ok_and(|v| v.get("scenarios").is_some())
}

/// Parses a suite's text; an error has no file name (`load` gives it one).
pub fn parse(text: &str) -> std::result::Result<Suite, ScenarioError> {
    let suite: SuiteText =
        crate::scenario::wording::parse_yaml(text).map_err(|e| e.in_file(Path::new("")))?;
    let list = suite.scenarios;
    if list.value.is_empty() {
        let mut e = unnamed(
            EntryAt::of(0, &list),
            "",
            "a suite needs at least one entry under `scenarios`",
        );
        e.path = "scenarios".into();
        return Err(e);
    }
    let mut runs = 0u64;
    let mut scenarios = Vec::new();
    for (index, spanned) in list.value.into_iter().enumerate() {
        let at = EntryAt::of(index, &spanned);
        let entry = entry(at, spanned.value)?;
        runs += match &entry {
            Entry::Plays(p) => p.seeds.len() as u64,
            Entry::Compare(c) => 2 * c.seeds.len() as u64,
        };
        if runs > MAX_PLAYS {
            return Err(unnamed(
                at,
                "",
                format!(
                    "with this entry the suite holds {runs} plays in all; a suite plays at most {MAX_PLAYS}"
                ),
            ));
        }
        scenarios.push(entry);
    }
    Ok(Suite {
        name: suite.name,
        scenarios,
    })
}

/// The most plays a suite may hold in all (each is a real run of minutes; a comparison plays
/// two per seed).
pub const MAX_PLAYS: u64 = 100_000;

/// An error of a suite's text: its file is named by `load`.
fn unnamed(at: EntryAt, key: &str, message: impl Into<String>) -> ScenarioError {
    at.error(Path::new(""), key, message)
}

/// One entry as written, checked: a scenario's plays or a comparison; the error is at the key
/// that is wrong (at the entry when it is the entry as a whole).
fn entry(at: EntryAt, e: EntryText) -> std::result::Result<Entry, ScenarioError> {
    let of = |value: &Spanned<_>| EntryAt::of(at.index, value);
    let path = match (&e.scenario, &e.compare) {
        (Some(_), Some(c)) => {
            return Err(unnamed(
                EntryAt::of(at.index, c),
                "compare",
                "an entry plays `scenario:` or compares two builds on `compare:`, not both",
            ))
        }
        (Some(p), None) | (None, Some(p)) => p.value.clone(),
        (None, None) => {
            return Err(unnamed(
                at,
                "",
                "an entry names `scenario: FILE` (plays) or `compare: FILE` (two builds)",
            ))
        }
    };
    let seeds = seeds(&e.seeds.value, e.first_seed.as_ref().map(|f| f.value)).map_err(
        |(key, message)| match (key, &e.first_seed) {
            ("first_seed", Some(f)) => unnamed(EntryAt::of(at.index, f), key, message),
            _ => unnamed(of(&e.seeds), key, message),
        },
    )?;
    let given = EntryGiven {
        builds: e.builds.map(|b| (EntryAt::of(at.index, &b), b.value)),
        expect: e.expect.map(|x| (EntryAt::of(at.index, &x), x.value)),
        rate: e.rate.map(|r| (EntryAt::of(at.index, &r), r.value)),
    };
    match e.compare {
        None => plays_entry(path, seeds, given).map(Entry::Plays),
        Some(_) => compare_entry(at, path, seeds, given).map(Entry::Compare),
    }
}

/// An entry's optional keys, each with where it is written.
struct EntryGiven {
    builds: Option<(EntryAt, Vec<String>)>,
    expect: Option<(EntryAt, ExpectSpec)>,
    rate: Option<(EntryAt, BTreeMap<String, Percent>)>,
}

fn plays_entry(
    scenario: PathBuf,
    seeds: Vec<u64>,
    given: EntryGiven,
) -> std::result::Result<PlaysEntry, ScenarioError> {
    if let Some((at, _)) = given.builds {
        return Err(unnamed(
            at,
            "builds",
            "`builds:` belongs to a compare entry (`compare: FILE`)",
        ));
    }
    if let Some((at, ExpectSpec::Conclusion(c))) = &given.expect {
        return Err(unnamed(
            *at,
            "expect",
            format!(
                "`{}` is what a compare entry expects; a scenario's plays expect pass, fail or any",
                c.word()
            ),
        ));
    }
    if let Some((at, rate)) = &given.rate {
        if let Some(class) = rate
            .keys()
            .find(|c| !crate::rates::RATE_NAMES.contains(&c.as_str()))
        {
            return Err(unnamed(
                *at,
                "rate",
                crate::scenario::wording::not_one_of(
                    class,
                    "class of runs `rate:` counts",
                    crate::rates::RATE_NAMES,
                ),
            ));
        }
        if given.expect.is_some() {
            return Err(unnamed(
                *at,
                "rate",
                "an entry is held to `expect:` or to `rate:`, not both",
            ));
        }
    }
    Ok(PlaysEntry {
        scenario,
        seeds,
        expect: given.expect.map(|(_, x)| x),
        rate: given
            .rate
            .into_iter()
            .flat_map(|(_, r)| r)
            .map(|(class, p)| (class, p.0))
            .collect(),
    })
}

fn compare_entry(
    at: EntryAt,
    scenario: PathBuf,
    seeds: Vec<u64>,
    given: EntryGiven,
) -> std::result::Result<CompareEntry, ScenarioError> {
    if let Some((at, _)) = given.rate {
        return Err(unnamed(
            at,
            "rate",
            format!("a compare entry is held to `expect:` ({CONCLUSIONS}), not to `rate:`"),
        ));
    }
    let expect = match given.expect {
        None | Some((_, ExpectSpec::All(Expect::Any))) => CompareExpect::Any,
        Some((_, ExpectSpec::Conclusion(c))) => c,
        Some((at, ExpectSpec::All(e))) => {
            return Err(unnamed(
                at,
                "expect",
                format!(
                    "a compare entry expects {CONCLUSIONS} (what chaos compare concludes), not `{}`",
                    e.word()
                ),
            ))
        }
        Some((at, ExpectSpec::PerSeed(_))) => {
            return Err(unnamed(
                at,
                "expect",
                format!(
                    "a compare entry expects one conclusion over all its seeds ({CONCLUSIONS}), not one per seed"
                ),
            ))
        }
    };
    let Some((at, builds)) = given.builds else {
        return Err(unnamed(
            at,
            "",
            "a compare entry needs `builds: [A, B]`: the build that shows the bug, then the fix",
        ));
    };
    let refused = |message: String| unnamed(at, "builds", message);
    let [a, b]: [String; 2] = builds.try_into().map_err(|builds: Vec<String>| {
        refused(format!(
            "names {} build(s); a comparison needs two, [A, B]: the build that shows the bug, then the fix",
            builds.len()
        ))
    })?;
    for text in [&a, &b] {
        Build::parse(text).map_err(|e| refused(e.replacen("--build ", "", 1)))?;
    }
    if a.trim() == b.trim() {
        return Err(refused(format!("names {a} twice: nothing to compare")));
    }
    Ok(CompareEntry {
        scenario,
        builds: [a, b],
        seeds,
        expect,
        at,
    })
}

/// An entry's seeds: a count from `first_seed` (default 1), or a list; within the limits. An
/// error names its key (`seeds` or `first_seed`).
fn seeds(
    seeds: &Seeds,
    first_seed: Option<u64>,
) -> std::result::Result<Vec<u64>, (&'static str, String)> {
    let count = match seeds {
        Seeds::Count(0) => return Err(("seeds", "must be at least 1".into())),
        Seeds::List(l) if l.is_empty() => return Err(("seeds", "is an empty list".into())),
        Seeds::Count(n) => *n,
        Seeds::List(l) => l.len() as u64,
    };
    if count > SeedRange::MAX {
        return Err((
            "seeds",
            format!(
                "{count} seeds; an entry plays at most {} seeds",
                SeedRange::MAX
            ),
        ));
    }
    Ok(match seeds {
        Seeds::Count(n) => {
            let first = first_seed.unwrap_or(1);
            if first.checked_add(n - 1).is_none() {
                return Err((
                    "first_seed",
                    format!(
                        "`first_seed: {first}` and `seeds: {n}` go past the largest seed, {}",
                        u64::MAX
                    ),
                ));
            }
            (first..=first + (n - 1)).collect()
        }
        Seeds::List(l) => l.clone(),
    })
}

/// A path of the suite resolved against the suite file's folder.
fn resolve(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// Every (scenario, seed) of the suite's plays, in the suite's order; scenario paths are
/// resolved against the suite file's folder. Comparisons are not plays (see `comparisons`).
pub fn expand(suite: &Suite, base: &Path) -> Vec<Play> {
    let mut plays = Vec::new();
    for (entry, e) in suite.scenarios.iter().enumerate() {
        let Entry::Plays(e) = e else { continue };
        let scenario = resolve(base, &e.scenario);
        for &seed in &e.seeds {
            let expect = match &e.expect {
                Some(ExpectSpec::All(x)) => *x,
                Some(ExpectSpec::PerSeed(per)) => per.get(&seed).copied().unwrap_or_default(),
                None | Some(ExpectSpec::Conclusion(_)) => Expect::Any,
            };
            plays.push(Play {
                scenario: scenario.clone(),
                seed,
                expect,
                entry,
                rate: e.rate.clone(),
            });
        }
    }
    plays
}

/// The entries of these plays held to a `rate:`, for `chaos run` to stop each once decided; a
/// play held to its own `expect:` keeps its entry playing every seed, as `all_seeds` keeps
/// every entry.
pub fn rate_stops(plays: &[Play], all_seeds: bool) -> RateStops {
    RateStops::new(
        plays.iter().map(|p| PlayHeld {
            entry: p.entry,
            name: p.scenario.display().to_string(),
            bounds: &p.rate,
            own_verdict: p.expect != Expect::Any,
        }),
        all_seeds,
    )
}

/// One comparison of a suite, its paths resolved against the suite file's folder.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub scenario: PathBuf,
    /// As written; their relative patch and distribution paths start from `paths_from`.
    pub builds: [String; 2],
    pub paths_from: PathBuf,
    pub seeds: Vec<u64>,
    pub expect: CompareExpect,
    /// Where its `builds:` is written in the suite file.
    pub at: EntryAt,
}

impl Comparison {
    /// What `chaos compare` is asked (playing under `out`, as `chaos compare --out` does),
    /// checked before anything starts, nothing built; a bad build is located at the entry's
    /// `builds:` in the suite file (`FILE:line:column: scenarios[i].builds: ...`).
    pub fn prepare(
        &self,
        suite: &Path,
        out: &Path,
        ready_timeout: Option<std::time::Duration>,
    ) -> Result<(CompareOptions, Prepared)> {
        let options = CompareOptions {
            scenario: self.scenario.clone(),
            builds: self.builds.to_vec(),
            survey: false,
            seeds: self.seeds.clone(),
            // Where-reached counts only the runs that reached their preconditions, which the
            // stopping rule does not know: every seed is played.
            all_seeds: self.expect == CompareExpect::FixConfirmedWhereReached,
            shard: None,
            side_by_side: false,
            out: out.to_path_buf(),
            ready_timeout,
            paths_from: self.paths_from.clone(),
        };
        let prepared = crate::compare::prepare(&options).map_err(|e| match e {
            HarnessError::BadInput(m) => HarnessError::Scenario(vec![self.at.error(
                suite,
                "builds",
                m.replace("--build ", ""),
            )]),
            other => other,
        })?;
        Ok((options, prepared))
    }

    /// Its row of the suite's closing table, and whether it concluded as expected: a
    /// comparison that could not play (an image that did not build) never is.
    pub fn held(&self, got: &Result<Compared>) -> (bool, String) {
        let (held, word, line) = match got {
            Ok(c) => {
                let word = match c.exit_code {
                    EXIT_OK => "fix-confirmed",
                    EXIT_VIOLATION => "not-confirmed",
                    crate::error::EXIT_INTERRUPTED => "interrupted",
                    _ => "error",
                };
                let mut line = c.conclusion.clone();
                if c.exit_code == EXIT_VIOLATION && c.confirmed_where_reached() {
                    line.push_str(" (fix confirmed where reached)");
                }
                (self.expect.accepts(c), word, line)
            }
            Err(e) => (
                false,
                "error",
                e.to_string().lines().next().unwrap_or_default().to_string(),
            ),
        };
        let row = format!(
            "  {:<11} {:<27} {:<13} seeds {} {}: {} against {}\n  {:<11} {line}",
            if held { "as expected" } else { "DIFFERS" },
            self.expect.word(),
            word,
            seeds_text(&self.seeds),
            self.scenario.display(),
            self.builds[0],
            self.builds[1],
            ""
        );
        (held, row)
    }
}

/// Seeds as `--seeds` takes them: `1..3` when consecutive, else `1,4,9`.
fn seeds_text(seeds: &[u64]) -> String {
    match (seeds.first(), seeds.last()) {
        (Some(first), Some(last))
            if seeds.len() > 1 && seeds.windows(2).all(|w| w[0].checked_add(1) == Some(w[1])) =>
        {
            format!("{first}..{last}")
        }
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// Every comparison of the suite, in the suite's order.
pub fn comparisons(suite: &Suite, base: &Path) -> Vec<Comparison> {
    suite
        .scenarios
        .iter()
        .filter_map(|e| match e {
            Entry::Compare(c) => Some(Comparison {
                scenario: resolve(base, &c.scenario),
                builds: c.builds.clone(),
                paths_from: base.to_path_buf(),
                seeds: c.seeds.clone(),
                expect: c.expect,
                at: c.at,
            }),
            Entry::Plays(_) => None,
        })
        .collect()
}

/// What a suite, or one shard of it, plays.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    pub plays: Vec<Play>,
    pub comparisons: Vec<Comparison>,
}

impl Work {
    /// One shard's share. Plays go round-robin in the suite's order, as they always have; a
    /// comparison is one unit of work that continues the round-robin after the last play (the
    /// first lands on a shard with one play fewer, the next on the shard after it).
    pub fn shard(self, shard: Shard) -> Work {
        let played = self.plays.len();
        Work {
            plays: shard.share(0, self.plays),
            comparisons: shard.share(played, self.comparisons),
        }
    }
}

/// What `chaos lint SUITE` found: each scenario found valid (once, in the suite's order), and
/// every problem, each one line (located) or a scenario's lines.
#[derive(Debug, Default)]
pub struct Linted {
    pub valid: Vec<PathBuf>,
    pub problems: Vec<String>,
}

/// Validates a suite as `chaos run --suite` does before anything starts, without playing
/// anything: the suite file, every scenario its entries play, and every comparison (its
/// scenario, and its builds: their syntax, patches and distributions found; nothing built).
pub fn lint(path: &Path, options: crate::scenario::LoadOptions) -> Linted {
    let mut linted = Linted::default();
    let work = match load_work(path, None) {
        Ok(work) => work,
        Err(e) => {
            linted.problems.push(e.to_string());
            return linted;
        }
    };
    let mut seen: Vec<&Path> = Vec::new();
    let said = |linted: &mut Linted, problem: String| {
        if !linted.problems.contains(&problem) {
            linted.problems.push(problem);
        }
    };
    for play in &work.plays {
        if seen.contains(&play.scenario.as_path()) {
            continue;
        }
        seen.push(&play.scenario);
        match crate::scenario::load_with(&play.scenario, options) {
            Ok(_) => linted.valid.push(play.scenario.clone()),
            Err(errors) => errors.iter().for_each(|e| said(&mut linted, e.to_string())),
        }
    }
    for c in &work.comparisons {
        match c.prepare(path, Path::new(""), None) {
            Ok(_) if !seen.contains(&c.scenario.as_path()) => linted.valid.push(c.scenario.clone()),
            Ok(_) => {}
            Err(HarnessError::Scenario(errors)) => {
                errors.iter().for_each(|e| said(&mut linted, e.to_string()))
            }
            Err(e) => said(&mut linted, e.to_string()),
        }
        seen.push(&c.scenario);
    }
    linted
}

/// The plays and comparisons of a suite file, optionally only one shard's share.
pub fn load_work(path: &Path, shard: Option<Shard>) -> Result<Work> {
    let suite = load(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let all = Work {
        plays: expand(&suite, base),
        comparisons: comparisons(&suite, base),
    };
    Ok(match shard {
        Some(s) => all.shard(s),
        None => all,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rates::{Class, Tally};

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
        // A word that is none of them is refused at its place, with the words there are.
        let e = parse("scenarios:\n  - scenario: a.yaml\n    seeds: 1\n    expect: maybe\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("4:13")
                && e.contains("`maybe` is not an expectation")
                && e.contains("fix-confirmed-where-reached"),
            "{e}"
        );
        let e = parse("scenarios:\n  - scenario: a.yaml\n    seeds: 1\n    expect: { 1: passs }\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("passs"), "{e}");
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
        let e = entry("    seeds: 18446744073709551615\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 10000 seeds"), "{e}");
        let e = entry("    seeds: 3\n    first_seed: 18446744073709551615\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("past the largest seed"), "{e}");
        assert!(entry("    seeds: 2\n    first_seed: 18446744073709551614\n").is_ok());
        let many = "  - scenario: a.yaml\n    seeds: 10000\n".repeat(11);
        let e = parse(&format!("scenarios:\n{many}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 100000"), "{e}");
    }

    const COMPARE: &str = "  - compare: ../scenarios/ozone/x.yaml\n    builds: [2.2.0, \"2.2.0+../fixes/F.patch\"]\n    seeds: 3\n    first_seed: 2\n    expect: fix-confirmed\n";

    #[test]
    fn compare_entries_parse_and_resolve_against_the_suite() {
        let s = parse(&format!("{SUITE}{COMPARE}  - compare: r.yaml\n    builds: [set:A=no, set:A=always]\n    seeds: [4, 9]\n    expect: fix-confirmed-where-reached\n  - compare: r.yaml\n    builds: [set:A=no, set:A=always]\n    seeds: 1\n")).unwrap();
        // Comparisons are not plays: the plays are SUITE's own.
        assert_eq!(
            expand(&s, Path::new("suites")),
            expand(&parse(SUITE).unwrap(), Path::new("suites"))
        );
        let c = comparisons(&s, Path::new("suites"));
        assert_eq!(
            c[0],
            Comparison {
                scenario: "suites/../scenarios/ozone/x.yaml".into(),
                builds: ["2.2.0".into(), "2.2.0+../fixes/F.patch".into()],
                paths_from: "suites".into(),
                seeds: vec![2, 3, 4],
                expect: CompareExpect::FixConfirmed,
                at: EntryAt {
                    index: 2,
                    line: 9,
                    column: 13
                },
            }
        );
        assert_eq!(c[1].seeds, [4, 9]);
        assert_eq!(c[1].expect, CompareExpect::FixConfirmedWhereReached);
        assert_eq!(
            c[2].expect,
            CompareExpect::Any,
            "no expect: either conclusion"
        );
        // A patch of a build is found from the suite's folder, as `chaos compare` would from the
        // working directory.
        assert_eq!(
            Build::parse(&c[0].builds[1])
                .unwrap()
                .relative_to(&c[0].paths_from),
            Build::Patched("2.2.0".into(), vec!["suites/../fixes/F.patch".into()])
        );
    }

    /// Each wrong compare entry is refused with the file's line and column and what is wrong.
    #[test]
    fn wrong_compare_entries_are_located() {
        let refused = |entry: &str| {
            parse(&format!(
                "scenarios:\n  - scenario: a.yaml\n    seeds: 1\n{entry}"
            ))
            .unwrap_err()
            .to_string()
        };
        for (entry, expected) in [
            (
                "  - compare: c.yaml\n    builds: [2.2.0]\n    seeds: 1\n",
                ":5:13: scenarios[1].builds: names 1 build(s); a comparison needs two",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1, 2.0.0]\n    seeds: 1\n",
                ":5:13: scenarios[1].builds: names 3 build(s)",
            ),
            (
                "  - compare: c.yaml\n    seeds: 1\n",
                ":4:5: scenarios[1]: a compare entry needs `builds: [A, B]`",
            ),
            (
                "  - compare: c.yaml\n    scenario: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 1\n",
                ":4:14: scenarios[1].compare: an entry plays `scenario:` or compares two builds on `compare:`, not both",
            ),
            (
                "  - seeds: 1\n",
                ":4:5: scenarios[1]: an entry names `scenario: FILE` (plays) or `compare: FILE` (two builds)",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 1\n    colour: red\n",
                ":7:5: scenarios[1].colour: unknown field `colour`",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, master]\n    seeds: 1\n",
                ":5:13: scenarios[1].builds: `master`: not a build",
            ),
            (
                "  - compare: c.yaml\n    builds: [set:A=1, set:A=1]\n    seeds: 1\n",
                ":5:13: scenarios[1].builds: names set:A=1 twice",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 0\n",
                ":6:12: scenarios[1].seeds: must be at least 1",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 1\n    expect: pass\n",
                ":7:13: scenarios[1].expect: a compare entry expects fix-confirmed, fix-confirmed-where-reached, not-confirmed or any (what chaos compare concludes), not `pass`",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 1\n    expect: { 1: fail }\n",
                ":7:13: scenarios[1].expect: a compare entry expects one conclusion over all its seeds",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 1\n    rate: { held: 50% }\n",
                ":7:11: scenarios[1].rate: a compare entry is held to `expect:`",
            ),
            (
                "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 1\n    expect: fixed\n",
                ":7:13: scenarios[1].expect: `fixed` is not an expectation",
            ),
            (
                "  - scenario: c.yaml\n    seeds: 1\n    expect: fix-confirmed\n",
                ":6:13: scenarios[1].expect: `fix-confirmed` is what a compare entry expects",
            ),
            (
                "  - scenario: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 1\n",
                ":5:13: scenarios[1].builds: `builds:` belongs to a compare entry",
            ),
            (
                "  - scenario: c.yaml\n    seeds: 2\n    first_seed: 18446744073709551615\n",
                ":6:17: scenarios[1].first_seed: `first_seed: 18446744073709551615` and `seeds: 2` go past the largest seed",
            ),
            (
                "  - scenario: c.yaml\n    seeds: 1\n    rate: { confirmd: 50% }\n",
                ":6:11: scenarios[1].rate: `confirmd` is not a class of runs `rate:` counts; one of: confirmed,",
            ),
        ] {
            let e = refused(entry);
            assert!(e.starts_with(expected), "{entry}: {e}");
        }
        // A comparison plays two runs per seed, and they count toward the suite's limit.
        let many = "  - compare: c.yaml\n    builds: [2.2.0, 2.2.1]\n    seeds: 10000\n".repeat(6);
        let e = parse(&format!("scenarios:\n{many}"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(":17:5: scenarios[5]: with this entry the suite holds 120000 plays in all; a suite plays at most 100000"),
            "{e}"
        );
    }

    /// Adding comparisons anywhere in a suite moves no plain play to another shard; each
    /// comparison lands in exactly one shard, the same one every time, spread over the shards.
    #[test]
    fn comparisons_shard_without_moving_plays() {
        let plain = parse(SUITE).unwrap();
        // SUITE with a comparison before, between and after its two entries.
        let (a, b) = (
            "  - scenario: etcd/a.yaml\n    seeds: 4\n    first_seed: 10\n",
            "  - scenario: /abs/b.yaml\n    seeds: [3, 5]\n",
        );
        assert_eq!(SUITE, format!("name: nightly\nscenarios:\n{a}{b}"));
        let mixed = parse(&format!("scenarios:\n{COMPARE}{a}{COMPARE}{b}{COMPARE}")).unwrap();
        assert_eq!(comparisons(&mixed, Path::new(".")).len(), 3);
        let work = |s: &Suite| Work {
            plays: expand(s, Path::new(".")),
            comparisons: comparisons(s, Path::new(".")),
        };
        for n in 1..=4 {
            let mut landed = Vec::new();
            for i in 1..=n {
                let shard = Shard { index: i, count: n };
                let share = work(&mixed).shard(shard);
                let key = |p: &Play| (p.scenario.clone(), p.seed, p.expect);
                assert_eq!(
                    share.plays.iter().map(key).collect::<Vec<_>>(),
                    work(&plain)
                        .shard(shard)
                        .plays
                        .iter()
                        .map(key)
                        .collect::<Vec<_>>(),
                    "shard {i}/{n}: the same plays as without comparisons"
                );
                assert_eq!(share, work(&mixed).shard(shard), "deterministic");
                landed.extend(share.comparisons.iter().map(|c| (i, c.clone())));
            }
            assert_eq!(landed.len(), 3, "{n} shards: each comparison exactly once");
            // 6 plays: the comparisons continue the round-robin at positions 6, 7, 8.
            let shards: Vec<usize> = landed.iter().map(|(i, _)| *i).collect();
            let want: Vec<usize> = (6..9).map(|p| p % n + 1).collect();
            let mut sorted = want.clone();
            sorted.sort_unstable();
            assert_eq!(shards, sorted, "{n} shards");
        }
    }

    fn compared(exit_code: i32, a: &[Class], b: &[Class]) -> Compared {
        let tally = |classes: &[Class]| {
            let mut t = Tally::default();
            classes.iter().for_each(|c| t.add(*c, 1.0));
            t
        };
        Compared {
            exit_code,
            conclusion: "the conclusion".into(),
            preconditions: true,
            sides: vec![("A".into(), tally(a)), ("B".into(), tally(b))],
            dir: PathBuf::new(),
        }
    }

    /// What each expectation accepts of what compare concluded, and the closing table's rows.
    #[test]
    fn comparisons_held_to_their_conclusion() {
        use Class::{Confirmed, Held, NotReached};
        let fixed = compared(EXIT_OK, &[Confirmed; 3], &[Held; 3]);
        let unreached = compared(EXIT_VIOLATION, &[Confirmed; 3], &[Held, NotReached, Held]);
        let regressed = compared(EXIT_VIOLATION, &[Confirmed; 3], &[Held, Confirmed, Held]);
        let nothing = compared(EXIT_VIOLATION, &[NotReached; 3], &[Held; 3]);
        let broken = compared(
            crate::error::EXIT_INFRA,
            &[Confirmed; 3],
            &[Class::Error; 3],
        );
        use CompareExpect::*;
        for (expect, accepted) in [
            (FixConfirmed, [true, false, false, false, false]),
            (FixConfirmedWhereReached, [true, true, false, false, false]),
            (NotConfirmed, [false, true, true, true, false]),
            (Any, [true, true, true, true, false]),
        ] {
            let got: Vec<bool> = [&fixed, &unreached, &regressed, &nothing, &broken]
                .iter()
                .map(|c| expect.accepts(c))
                .collect();
            assert_eq!(got, accepted, "{}", expect.word());
        }
        let mut c = comparisons(
            &parse(&format!("scenarios:\n{COMPARE}")).unwrap(),
            Path::new("s"),
        )
        .remove(0);
        let (held, row) = c.held(&Ok(fixed));
        assert!(held);
        assert_eq!(
            row,
            "  as expected fix-confirmed               fix-confirmed seeds 2..4 s/../scenarios/ozone/x.yaml: 2.2.0 against 2.2.0+../fixes/F.patch\n              the conclusion"
        );
        let (held, row) = c.held(&Ok(regressed));
        assert!(
            !held && row.starts_with("  DIFFERS     fix-confirmed               not-confirmed"),
            "{row}"
        );
        c.expect = FixConfirmedWhereReached;
        let (held, row) = c.held(&Ok(unreached));
        assert!(
            held && row.ends_with("the conclusion (fix confirmed where reached)"),
            "{row}"
        );
        let (held, row) = c.held(&Err(HarnessError::infra("patch.sh failed\nmore")));
        assert!(
            !held && row.contains(" error ") && row.ends_with("patch.sh failed"),
            "{row}"
        );
        assert_eq!(seeds_text(&[1, 4, 9]), "1,4,9");
        assert_eq!(seeds_text(&[7]), "7");
    }

    /// A suite played as `chaos run --suite` plays it, each play's outcome drawn from its seed:
    /// an entry held to a rate skips its seeds once decided, in each shard over that shard's
    /// seeds; the others, and every entry under --all-seeds, play every seed.
    #[test]
    fn suite_entries_held_to_a_rate_stop_when_decided() {
        use crate::rate_stop::Standing;
        let s = parse("scenarios:\n  - scenario: race.yaml\n    seeds: 10\n    rate: { confirmed: 80% }\n  - scenario: control.yaml\n    seeds: 3\n    expect: fail\n  - scenario: flaky.yaml\n    seeds: 6\n    rate: { reached: 50%, error: 0% }\n").unwrap();
        // race.yaml confirms on every seed; flaky.yaml misses its race on seeds 1 to 4.
        let outcome = |p: &Play| match (p.entry, p.seed) {
            (2, 1..=4) => Class::NotReached,
            (1, _) => Class::Violated,
            _ => Class::Confirmed,
        };
        let play = |plays: Vec<Play>, all_seeds: bool| {
            let mut stops = rate_stops(&plays, all_seeds);
            let mut played = Vec::new();
            let mut lines = Vec::new();
            for p in &plays {
                if stops.skips(p.entry) {
                    continue;
                }
                played.push((p.entry, p.seed));
                lines.extend(stops.record(p.entry, outcome(p)));
            }
            let standings: Vec<(usize, u32, u32, Vec<Standing>)> = stops
                .entries()
                .iter()
                .map(|h| {
                    let each = h.standings().iter().map(|s| s.3).collect();
                    (h.entry, h.played(), h.planned, each)
                })
                .collect();
            (played, lines, standings)
        };
        let all = expand(&s, Path::new("."));
        let (played, lines, standings) = play(all.clone(), false);
        let seeds = |entry: usize| -> Vec<u64> {
            played
                .iter()
                .filter(|(e, _)| *e == entry)
                .map(|(_, s)| *s)
                .collect()
        };
        assert_eq!(seeds(0), (1..=8).collect::<Vec<_>>(), "8 of 10 meet 80%");
        assert_eq!(seeds(1), [1, 2, 3], "held to expect: every seed");
        assert_eq!(seeds(2), [1, 2, 3, 4], "4 of 6 not reached: 50% missed");
        assert_eq!(
            lines,
            [
                "./race.yaml: stopped after 8 of 10 seeds: confirmed >= 80% met (8 of 8); the 2 left cannot change it (--all-seeds plays every one)",
                "./flaky.yaml: stopped after 4 of 6 seeds: error >= 0% met (0 of 4), reached >= 50% missed (0 of 4); the 2 left cannot change them (--all-seeds plays every one)"
            ]
        );
        use Standing::{Met, Missed};
        assert_eq!(
            standings,
            [(0, 8, 10, vec![Met]), (2, 4, 6, vec![Met, Missed])],
            "as every seed would end"
        );
        // --all-seeds: every seed, the same standings.
        let (played, lines, standings) = play(all.clone(), true);
        assert_eq!((played.len(), lines.len()), (19, 0));
        assert_eq!(
            standings,
            [(0, 10, 10, vec![Met]), (2, 6, 6, vec![Met, Missed])]
        );
        // Shard 1/2 holds seeds 1, 3, 5, 7, 9 of race.yaml (80% of 5: 4 needed) and 2, 4, 6
        // of flaky.yaml (50% of 3: 2 needed, missed once seeds 2 and 4 are not reached).
        let shard = Work {
            plays: all,
            comparisons: Vec::new(),
        }
        .shard(Shard { index: 1, count: 2 });
        let (played, _, standings) = play(shard.plays, false);
        assert_eq!(
            played,
            [
                (0, 1),
                (0, 3),
                (0, 5),
                (0, 7),
                (1, 1),
                (1, 3),
                (2, 2),
                (2, 4)
            ]
        );
        assert_eq!(
            standings,
            [(0, 4, 5, vec![Met]), (2, 2, 3, vec![Met, Missed])]
        );
    }

    #[test]
    fn rate_bounds_from_the_command_line() {
        let given =
            |texts: &[&str]| rate_bounds(&texts.iter().map(|t| t.to_string()).collect::<Vec<_>>());
        assert_eq!(
            given(&["confirmed=90%", "reached = 100 %"]).unwrap(),
            [("confirmed".into(), 0.9), ("reached".into(), 1.0)]
        );
        for (bad, why) in [
            (
                &["confirmd=90%"][..],
                "`confirmd` is not a class of runs --rate counts; one of: confirmed,",
            ),
            (
                &["confirmed=120%"],
                "--rate `confirmed=120%`: `120%` is not a share from 0% to 100%; expected e.g. 80%",
            ),
            (&["confirmed=-1%"], "is not a share"),
            (&["confirmed=90"], "is not a share"),
            (&["confirmed"], "expected CLASS=SHARE"),
            (&["held=1%", "held=2%"], "names held twice"),
        ] {
            let e = given(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
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
