//! A race is a rate, not a seed: what runs of one scenario ended as, counted over seeds, each
//! share with its 95% interval (Wilson's score interval, which stays inside 0..1 and says
//! something at 0 of N and N of N, unlike the normal approximation).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// What one run ended as.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// A violation, every precondition reached.
    Confirmed,
    /// No violation, every precondition reached.
    Held,
    /// No violation; a precondition not reached.
    NotReached,
    /// A violation, a precondition not reached.
    ViolatedUnreached,
    /// A violation, in a scenario that declares no preconditions.
    Violated,
    /// No violation, in a scenario that declares no preconditions.
    Passed,
    /// A check could not decide.
    Undecided,
    /// The harness or the infrastructure failed, or the run was interrupted.
    #[default]
    Error,
}

impl Class {
    pub const ALL: [Class; 8] = [
        Class::Confirmed,
        Class::Held,
        Class::NotReached,
        Class::ViolatedUnreached,
        Class::Violated,
        Class::Passed,
        Class::Undecided,
        Class::Error,
    ];

    /// The name files and a suite's `rate:` give it (`not-reached`).
    pub fn key(self) -> &'static str {
        match self {
            Class::Confirmed => "confirmed",
            Class::Held => "held",
            Class::NotReached => "not-reached",
            Class::ViolatedUnreached => "violated-unreached",
            Class::Violated => "violated",
            Class::Passed => "passed",
            Class::Undecided => "undecided",
            Class::Error => "error",
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Class::Confirmed => "confirmed",
            Class::Held => "held",
            Class::NotReached => "not reached",
            Class::ViolatedUnreached => "violated, unreached",
            Class::Violated => "violated",
            Class::Passed => "passed",
            Class::Undecided => "undecided",
            Class::Error => "harness errors",
        }
    }

    /// Classes a suite can hold an entry's share of: each class, `reached` (confirmed or held),
    /// `violation` (any exit 1) and `pass` (any exit 0).
    pub fn counts_as(self, name: &str) -> bool {
        match name {
            "reached" => matches!(self, Class::Confirmed | Class::Held),
            "violation" => matches!(
                self,
                Class::Confirmed | Class::ViolatedUnreached | Class::Violated
            ),
            "pass" => matches!(self, Class::Held | Class::Passed),
            other => self.key() == other,
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// The names a suite's `rate:` may count.
pub const RATE_NAMES: &[&str] = &[
    "confirmed",
    "held",
    "not-reached",
    "violated-unreached",
    "violated",
    "passed",
    "undecided",
    "error",
    "reached",
    "violation",
    "pass",
];

/// Wilson's 95% score interval for k successes in n trials.
pub fn wilson(k: u32, n: u32) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (f64::from(k), f64::from(n));
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * ((p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt()) / (1.0 + z2 / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// `7 of 10 (40-89%)`.
pub fn share(k: u32, n: u32) -> String {
    let (lo, hi) = wilson(k, n);
    format!("{k} of {n} ({:.0}-{:.0}%)", lo * 100.0, hi * 100.0)
}

/// How the runs of one scenario ended.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tally {
    pub runs: u32,
    pub counts: BTreeMap<Class, u32>,
    /// Seconds per run, for the wall time column.
    #[serde(skip)]
    pub seconds: Vec<f64>,
}

impl Tally {
    pub fn add(&mut self, class: Class, seconds: f64) {
        self.runs += 1;
        *self.counts.entry(class).or_default() += 1;
        self.seconds.push(seconds);
    }

    pub fn count(&self, class: Class) -> u32 {
        self.counts.get(&class).copied().unwrap_or(0)
    }

    /// Runs that count as `name` (a class or `reached`, `violation`, `pass`).
    pub fn count_as(&self, name: &str) -> u32 {
        self.counts
            .iter()
            .filter(|(c, _)| c.counts_as(name))
            .map(|(_, n)| n)
            .sum()
    }

    pub fn median_seconds(&self) -> f64 {
        let mut s = self.seconds.clone();
        s.sort_by(f64::total_cmp);
        s.get(s.len() / 2).copied().unwrap_or(0.0)
    }
}

/// The table `chaos run --seeds` / `--repeat` ends with: a row per scenario, the columns that
/// matter always (confirmed, held, not reached, harness errors) and the others when they
/// occurred.
pub fn table(rows: &[(String, Tally)]) -> String {
    let always = [
        Class::Confirmed,
        Class::Held,
        Class::NotReached,
        Class::Error,
    ];
    let columns: Vec<Class> = Class::ALL
        .into_iter()
        .filter(|c| always.contains(c) || rows.iter().any(|(_, t)| t.count(*c) > 0))
        .collect();
    let name_width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(8).max(8);
    let cell = 20;
    let mut out = format!("{:<name_width$}  {:>5}", "scenario", "runs");
    for c in &columns {
        out.push_str(&format!("  {:<cell$}", c.word()));
    }
    out.push_str("  median wall time\n");
    for (name, tally) in rows {
        out.push_str(&format!("{name:<name_width$}  {:>5}", tally.runs));
        for c in &columns {
            out.push_str(&format!("  {:<cell$}", share(tally.count(*c), tally.runs)));
        }
        out.push_str(&format!("  {:.0} s\n", tally.median_seconds()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_folder::RunResult;

    /// Wilson's interval against published values (Newcombe 1998, table I: 81 of 263 gives
    /// 0.2553-0.3662; 0 of 10 gives 0-0.2775; 10 of 10 gives 0.7225-1).
    #[test]
    fn wilson_intervals() {
        let close = |a: f64, b: f64| (a - b).abs() < 5e-4;
        let (lo, hi) = wilson(81, 263);
        assert!(close(lo, 0.2553) && close(hi, 0.3662), "{lo} {hi}");
        let (lo, hi) = wilson(0, 10);
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        let (lo, hi) = wilson(10, 10);
        assert!(close(lo, 0.7225) && close(hi, 1.0), "{lo} {hi}");
        assert_eq!(share(9, 10), "9 of 10 (60-98%)");
    }

    /// A class's key is what serde writes of it, and a suite's `rate:` may name it.
    #[test]
    fn each_class_key_is_its_serde_name() {
        for c in Class::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.key());
            assert!(RATE_NAMES.contains(&c.key()) && c.counts_as(c.key()));
        }
    }

    #[test]
    fn classes_from_results_and_the_table() {
        let class = |v: serde_json::Value| {
            Class::of_result(&serde_json::from_value::<RunResult>(v).unwrap())
        };
        assert_eq!(
            class(serde_json::json!({"verdict": "illegal", "confirmation": "confirmed"})),
            Class::Confirmed
        );
        assert_eq!(
            class(serde_json::json!({"verdict": "ok", "confirmation": "not-reached"})),
            Class::NotReached
        );
        assert_eq!(
            class(serde_json::json!({"verdict": "illegal"})),
            Class::Violated
        );
        assert_eq!(class(serde_json::json!({"verdict": "error"})), Class::Error);
        let mut t = Tally::default();
        for c in [Class::Confirmed, Class::Confirmed, Class::NotReached] {
            t.add(c, 10.0);
        }
        assert_eq!(t.count_as("reached"), 2);
        assert_eq!(t.count_as("violation"), 2);
        let text = table(&[("s".into(), t)]);
        assert!(text.contains("2 of 3"), "{text}");
        assert!(text.contains("1 of 3"), "{text}");
        assert!(
            !text.contains("violated"),
            "columns that never occurred are left out: {text}"
        );
    }
}
