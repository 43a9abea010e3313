//! `chaos shrink` and `chaos run --replay` on real etcd clusters: a failing run buried in
//! other faults shrinks to the one or two that cause it, a replay plays the same nodes at
//! the same times, Ctrl-C keeps the best schedule so far. Bad run folders need no Docker.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{json, out_dir, play, repo};
use serde_json::Value;

fn chaos(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .current_dir(repo())
        .args(args)
        .output()
        .expect("chaos runs");
    eprintln!(
        "chaos {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// (seconds since the workload began, action, targets) of each fault step that applied.
fn applied(run: &Path) -> Vec<(f64, String, Vec<String>)> {
    let start = json(run, "result.json")["workload_started_ns"]
        .as_u64()
        .unwrap();
    chaos::run_folder::read_faults(run)
        .into_iter()
        .filter(|e| e.applied())
        .map(|e| {
            let at = (e.started - start) as f64 / 1e9;
            (at, e.action, e.targets)
        })
        .collect()
}

/// The replay applied the same actions to the same nodes, each within 300 ms of the original.
fn assert_same_schedule(original: &Path, replay: &Path) {
    let (a, b) = (applied(original), applied(replay));
    assert_eq!(a.len(), b.len(), "{a:?}\n{b:?}");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.1, &x.2), (&y.1, &y.2), "{a:?}\n{b:?}");
        assert!((x.0 - y.0).abs() < 0.3, "{x:?} replayed at {y:?}");
    }
}

#[test]
fn a_failing_run_buried_in_other_faults_shrinks_to_one_or_two_steps_and_replays_exactly() {
    let scenario = "scenarios/etcd/stale-reads-noisy.yaml";
    let (output, run) = play("shrink", scenario, &[]);
    assert_eq!(output.status.code(), Some(1), "the noisy control fails");
    let original = applied(&run);
    assert_eq!(original.len(), 4, "{original:?}");
    let run_arg = run.to_str().unwrap();

    // Ctrl-C in the second trial: the trial's cluster goes, the best schedule so far is kept.
    let mut child = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .current_dir(repo())
        .args(["shrink", run_arg])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // A candidate plays twice by default: trial-02-1, trial-02-2.
    let second = run.join("shrink/trial-02-1");
    let deadline = Instant::now() + Duration::from_secs(300);
    while std::fs::read_to_string(second.join("history.jsonl")).map_or(0, |t| t.lines().count())
        < 100
    {
        assert!(Instant::now() < deadline, "the second trial never started");
        std::thread::sleep(Duration::from_millis(200));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let summary = json(&run, "shrink/shrink.json");
    assert!(
        summary["conclusion"]
            .as_str()
            .unwrap()
            .starts_with("interrupted"),
        "{summary}"
    );
    assert!(run.join("shrink/minimal.yaml").is_file());
    let trial = json(&second, "result.json");
    assert_eq!(trial["verdict"], "interrupted");
    let left = Command::new("docker")
        .args(["ps", "-a", "-q", "--filter"])
        .arg(format!(
            "label=chaos.run={}",
            trial["run_id"].as_str().unwrap()
        ))
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "the interrupted trial left containers"
    );

    // The whole shrink, within 20 runs.
    let shrink = chaos(&["shrink", run_arg, "--runs", "20"]);
    assert_eq!(
        shrink.status.code(),
        Some(1),
        "the minimal schedule still fails"
    );
    let summary = json(&run, "shrink/shrink.json");
    assert!(summary["runs_used"].as_u64().unwrap() <= 20, "{summary}");
    let minimal = &summary["minimal"]["steps"];
    let steps = minimal.as_array().unwrap();
    assert!(
        !steps.is_empty() && steps.len() <= 2,
        "at most two fault steps: {minimal}"
    );
    // Each kept step is one that fired in the recorded run, on the same nodes. Which one is
    // kept depends on the trials: with serializable reads, a node that was paused serves
    // stale values too once it resumes, as the partitioned one does.
    for step in steps {
        let targets: Vec<String> = step["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        assert!(
            original
                .iter()
                .any(|(_, action, t)| step["action"] == action.as_str() && *t == targets),
            "{step} is not a step of {original:?}"
        );
    }
    // The replay of the recorded schedule (trial 1) hit the same nodes at the same times.
    assert_same_schedule(&run, &run.join("shrink/trial-01-1"));

    // minimal.yaml is a plain scenario: only `at:` times and node names, and it plays as it is
    // (the confirmation plays are `chaos run` of that file).
    let yaml = std::fs::read_to_string(run.join("shrink/minimal.yaml")).unwrap();
    assert!(!yaml.contains("role:") && !yaml.contains("pick:") && !yaml.contains("every:"));
    let lint = chaos(&["lint", run.join("shrink/minimal.yaml").to_str().unwrap()]);
    assert_eq!(lint.status.code(), Some(0));
    let confirm = summary["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["label"] == "play minimal.yaml as it is")
        .expect("a confirmation");
    assert!(confirm["plays"].as_u64().unwrap() >= 1, "{confirm}");
    let reproduced = &summary["reproduced"];
    assert!(
        reproduced["failures"].as_u64().unwrap() >= 1,
        "{reproduced}"
    );
    let report = std::fs::read_to_string(run.join("index.html")).unwrap();
    assert!(
        report.contains("Shrunk schedule"),
        "the report compares the schedules"
    );

    // `chaos run --replay` plays the recorded schedule again.
    let out = out_dir("replay", scenario);
    let replay = chaos(&["run", "--replay", run_arg, "--out", out.to_str().unwrap()]);
    assert!(
        [0, 1].contains(&replay.status.code().unwrap()),
        "a replay is a run"
    );
    let replayed = common::run_folder(&out);
    assert_same_schedule(&run, &replayed);
    let result: Value = json(&replayed, "result.json");
    assert_eq!(result["seed"], json(&run, "result.json")["seed"]);
}

#[test]
fn a_folder_that_cannot_be_replayed_is_one_line_and_exit_254() {
    let dir = repo().join(format!("target/e2e-runs/not-a-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let arg = dir.to_str().unwrap();
    for args in [vec!["shrink", arg], vec!["run", "--replay", arg]] {
        let out = chaos(&args);
        assert_eq!(out.status.code(), Some(254), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("no scenario.yaml"), "{err}");
    }
    // A run folder from before replays: scenario.yaml and plan.json, but result.json does not
    // say where the scenario was.
    std::fs::write(dir.join("scenario.yaml"), "name: t\n").unwrap();
    std::fs::write(dir.join("plan.json"), r#"{"seed": 1, "steps": []}"#).unwrap();
    std::fs::write(
        dir.join("result.json"),
        r#"{"seed": 1, "verdict": "illegal"}"#,
    )
    .unwrap();
    let out = chaos(&["shrink", arg]);
    assert_eq!(out.status.code(), Some(254));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("older chaos"), "{err}");
    std::fs::remove_file(dir.join("plan.json")).unwrap();
    let out = chaos(&["shrink", arg]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no plan.json"));
}
