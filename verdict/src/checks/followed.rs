//! How far a run followed the model checker's trace its scenario was imported from
//! (`chaos trace import`): the trace's steps are `reached:` predicates in order (the scenario's
//! `trace:` names each step's), so the first one not reached is where the run left the trace.

use checker::Verdict;

use crate::run_folder::{Reached, TraceFollowed};
use crate::scenario::origin::TraceOrigin;

/// The run's place on the trace: steps 1 to k reached, and what step k+1 expected and what the
/// run showed instead; or every step reached, and what the checks then found.
pub fn followed(origin: &TraceOrigin, reached: &[Reached], verdict: Verdict) -> TraceFollowed {
    let n = origin.steps.len();
    let outcome_of = |name: &str| reached.iter().find(|r| r.name == name);
    let left = origin.steps.iter().enumerate().find_map(|(i, step)| {
        match outcome_of(&step.reached.value) {
            Some(r) if r.reached => None,
            found => Some((i, step, found)),
        }
    });
    let (followed, sentence) = match left {
        None => (
            n,
            match verdict {
                Verdict::Illegal => {
                    format!("followed all {n} steps of the trace, then the invariant was violated")
                }
                Verdict::Ok => {
                    format!("followed all {n} steps of the trace, and the system held")
                }
                Verdict::Unknown => {
                    format!("followed all {n} steps of the trace; a check could not decide")
                }
            },
        ),
        Some((k, step, found)) => {
            let before = match k {
                0 => String::new(),
                1 => format!("followed step 1 of {n}, then "),
                k => format!("followed steps 1-{k} of {n}, then "),
            };
            let saw = found.map_or("the run did not evaluate it", |r| r.evidence.as_str());
            (
                k,
                format!(
                    "{before}left the trace at step {} ({}): expected {}, saw {saw}",
                    k + 1,
                    step.action,
                    step.expect
                ),
            )
        }
    };
    TraceFollowed {
        file: origin.file.clone(),
        format: origin.format.clone(),
        steps: n,
        followed,
        sentence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario's `trace:` of the HDDS-16743 shape, parsed as a scenario holds it.
    fn origin(steps: &[(&str, &str)]) -> TraceOrigin {
        let mut yaml = String::from("file: cex.itf.json\nformat: itf\nsteps:\n");
        for (i, (action, expect)) in steps.iter().enumerate() {
            yaml.push_str(&format!(
                "  - {{ action: \"{action}\", reached: step-{:02}, expect: \"{expect}\" }}\n",
                i + 1
            ));
        }
        serde_saphyr::from_str(&yaml).unwrap()
    }

    /// result.json's preconditions as a run wrote them.
    fn preconditions(json: &str) -> Vec<Reached> {
        serde_json::from_str(json).unwrap()
    }

    const THREE: &[(&str, &str)] = &[
        ("send(call: 1)", "history: { f: cas }"),
        ("restart", "step: 0, ready: true"),
        ("apply(call: 1)", "resent: { again: { outcome: definite } }"),
    ];

    #[test]
    fn the_first_step_not_reached_is_where_the_run_left_the_trace() {
        let reached = preconditions(
            r#"[
              {"name": "step-01", "kind": "history", "reached": true, "at_s": 0.4, "evidence": "cas ok"},
              {"name": "step-02", "kind": "step", "reached": false, "evidence": "step 0 never applied"},
              {"name": "step-03", "kind": "resent", "reached": true, "evidence": "a resend"}
            ]"#,
        );
        let got = followed(&origin(THREE), &reached, Verdict::Ok);
        assert_eq!((got.steps, got.followed), (3, 1));
        assert_eq!(
            got.sentence,
            "followed step 1 of 3, then left the trace at step 2 (restart): expected step: 0, \
             ready: true, saw step 0 never applied"
        );
    }

    #[test]
    fn a_run_that_left_at_once_and_one_that_followed_some() {
        let none = preconditions(
            r#"[{"name": "step-01", "kind": "history", "reached": false, "evidence": "no cas"}]"#,
        );
        let got = followed(&origin(THREE), &none, Verdict::Illegal);
        assert_eq!(got.followed, 0);
        assert_eq!(
            got.sentence,
            "left the trace at step 1 (send(call: 1)): expected history: { f: cas }, saw no cas"
        );
        let two = preconditions(
            r#"[
              {"name": "step-01", "kind": "history", "reached": true, "evidence": "cas ok"},
              {"name": "step-02", "kind": "step", "reached": true, "evidence": "applied"},
              {"name": "step-03", "kind": "resent", "reached": false, "evidence": "no resend answered"}
            ]"#,
        );
        let got = followed(&origin(THREE), &two, Verdict::Ok);
        assert_eq!(got.followed, 2);
        assert!(
            got.sentence.starts_with(
                "followed steps 1-2 of 3, then left the trace at step 3 (apply(call: 1))"
            ),
            "{}",
            got.sentence
        );
    }

    #[test]
    fn every_step_reached_then_the_checks_say_the_rest() {
        let all = preconditions(
            r#"[
              {"name": "step-01", "kind": "history", "reached": true, "evidence": "cas ok"},
              {"name": "other", "kind": "converge", "reached": false, "evidence": "not asked"},
              {"name": "step-02", "kind": "step", "reached": true, "evidence": "applied"},
              {"name": "step-03", "kind": "resent", "reached": true, "evidence": "resent"}
            ]"#,
        );
        let violated = followed(&origin(THREE), &all, Verdict::Illegal);
        assert_eq!(violated.followed, 3);
        assert_eq!(
            violated.sentence,
            "followed all 3 steps of the trace, then the invariant was violated"
        );
        assert_eq!(
            followed(&origin(THREE), &all, Verdict::Ok).sentence,
            "followed all 3 steps of the trace, and the system held"
        );
    }

    #[test]
    fn a_step_the_run_did_not_evaluate_says_so() {
        let got = followed(&origin(THREE), &[], Verdict::Ok);
        assert!(
            got.sentence.ends_with("saw the run did not evaluate it"),
            "{}",
            got.sentence
        );
    }
}
