//! junit.xml: one test suite per scenario, one test case per check (and seed); a violation is a
//! failure whose message is the sentence people read in the report, with the run folder.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::error::{HarnessError, Result};
use crate::run_folder::{CheckInWords, Reached};

/// What junit needs of one run.
#[derive(Clone, Debug)]
pub struct RunCases {
    pub scenario: String,
    pub seed: String,
    pub verdict: String,
    pub folder: String,
    pub command: String,
    pub duration_s: f64,
    pub checks: Vec<CheckInWords>,
    /// Why the run was not checked.
    pub error: Option<String>,
    /// What a suite expected of the run: with `fail` (a known-bad control) the violation is the
    /// success, and a pass is the failure.
    pub expect: Option<String>,
    /// What the verdict confirms of the bug (`confirmed`, `held`, `not-reached`, ...), when the
    /// scenario declares preconditions.
    pub confirmation: Option<String>,
    pub preconditions: Vec<Reached>,
}

/// The test case "preconditions reached": a failure of type `not reached` naming each
/// predicate the run did not reach, with what was seen instead.
fn preconditions_case(run: &RunCases, seed: &str) -> Option<TestCase> {
    run.confirmation.as_ref()?;
    let missing: Vec<&Reached> = run.preconditions.iter().filter(|p| !p.reached).collect();
    let status = if missing.is_empty() {
        TestCaseStatus::success()
    } else {
        let names: Vec<&str> = missing.iter().map(|p| p.name.as_str()).collect();
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(format!(
            "not reached: {} ({})",
            names.join(", "),
            run.folder
        ))
        .set_type("not reached")
        .set_description(
            missing
                .iter()
                .map(|p| format!("{}: {}", p.name, p.evidence))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        s
    };
    let mut c = TestCase::new(format!("preconditions reached{seed}"), status);
    c.set_classname(run.scenario.clone());
    c.set_system_out(
        run.preconditions
            .iter()
            .map(|p| {
                format!(
                    "{} {}: {}",
                    if p.reached { "reached" } else { "NOT reached" },
                    p.name,
                    p.evidence
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    );
    Some(c)
}

fn case(
    run: &RunCases,
    name: String,
    verdict: &str,
    sentences: &[String],
    detail: &str,
) -> TestCase {
    let message = format!(
        "{} ({})",
        sentences.first().map(String::as_str).unwrap_or(detail),
        run.folder
    );
    let description = format!(
        "{}\n\nchecker: {detail}\nrun folder: {}\nreproduce: {}",
        sentences.join("\n"),
        run.folder,
        run.command
    );
    let status = match verdict {
        "ok" => TestCaseStatus::success(),
        "illegal" => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(message)
                .set_type("violation")
                .set_description(description);
            s
        }
        other => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_message(message)
                .set_type(other.to_string())
                .set_description(description);
            s
        }
    };
    let mut c = TestCase::new(name, status);
    c.set_classname(run.scenario.clone());
    c.set_time(std::time::Duration::from_secs_f64(run.duration_s.max(0.0)));
    c
}

fn cases(run: &RunCases, with_seed: bool) -> Vec<TestCase> {
    let seed = if with_seed {
        format!(" (seed {})", run.seed)
    } else {
        String::new()
    };
    if run.expect.as_deref() == Some("fail") {
        // A known-bad control: one case, passed when a check found the violation.
        let name = format!("expected violation{seed}");
        let found: Vec<String> = run
            .checks
            .iter()
            .filter(|c| c.verdict == "illegal")
            .flat_map(|c| c.sentences.first().cloned())
            .collect();
        let mut c = if run.verdict == "illegal" {
            TestCase::new(name, TestCaseStatus::success())
        } else {
            let why = format!(
                "the known-bad control did not fail: verdict {} ({})",
                run.verdict, run.folder
            );
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(why.clone())
                .set_type("control passed")
                .set_description(format!("{why}\nreproduce: {}", run.command));
            TestCase::new(name, s)
        };
        if !found.is_empty() {
            c.set_system_out(found.join("\n"));
        }
        c.set_classname(run.scenario.clone());
        c.set_time(std::time::Duration::from_secs_f64(run.duration_s.max(0.0)));
        return std::iter::once(c)
            .chain(preconditions_case(run, &seed))
            .collect();
    }
    if run.checks.is_empty() {
        let e = run.error.clone().unwrap_or_else(|| "no check ran".into());
        return vec![case(
            run,
            format!("run{seed}"),
            &run.verdict,
            std::slice::from_ref(&e),
            &e,
        )];
    }
    run.checks
        .iter()
        .map(|c| {
            let name = format!("{}{seed}", c.name);
            case(run, name, &c.verdict, &c.sentences, &c.summary)
        })
        .chain(preconditions_case(run, &seed))
        .collect()
}

/// junit.xml for one or many runs: a suite per scenario.
pub fn junit(runs: &[RunCases], with_seed: bool) -> Result<String> {
    let mut report = Report::new("chaos");
    let mut scenarios: Vec<&str> = runs.iter().map(|r| r.scenario.as_str()).collect();
    scenarios.sort_unstable();
    scenarios.dedup();
    for s in scenarios {
        let mut suite = TestSuite::new(s.to_string());
        for r in runs.iter().filter(|r| r.scenario == s) {
            suite.add_test_cases(cases(r, with_seed));
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .map_err(|e| HarnessError::infra(format!("junit.xml: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(verdict: &str, expect: Option<&str>) -> RunCases {
        RunCases {
            scenario: "etcd-stale-reads".into(),
            seed: "1".into(),
            verdict: verdict.into(),
            folder: "etcd-stale-reads/x-s1".into(),
            command: "chaos run scenarios/etcd/stale-reads.yaml --seed 1".into(),
            duration_s: 30.0,
            checks: vec![CheckInWords {
                name: "linearizable".into(),
                verdict: verdict.into(),
                sentences: vec!["a read on key k0 returned 3".into()],
                summary: "summary".into(),
            }],
            error: None,
            expect: expect.map(str::to_string),
            confirmation: None,
            preconditions: Vec::new(),
        }
    }

    #[test]
    fn a_known_bad_control_that_passed_is_the_failure() {
        let passed = junit(&[run("ok", Some("fail"))], true).unwrap();
        assert!(passed.contains("expected violation (seed 1)"), "{passed}");
        assert!(
            passed.contains("the known-bad control did not fail: verdict ok"),
            "{passed}"
        );
        assert!(passed.contains("<failure"), "{passed}");
        let failed = junit(&[run("illegal", Some("fail"))], true).unwrap();
        assert!(!failed.contains("<failure"), "{failed}");
        assert!(failed.contains("a read on key k0 returned 3"), "{failed}");
        // Without an expectation a violation is the failure, as before.
        let plain = junit(&[run("illegal", None)], true).unwrap();
        assert!(plain.contains("<failure"), "{plain}");
    }
}
