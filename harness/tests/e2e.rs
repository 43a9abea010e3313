//! End-to-end tests against real containers: real etcd clusters, real faults, real checks.
//! They need a Docker engine; .ci/run makes sure one answers. They never skip: no Docker is a
//! failure here, not a pass.
//!
//! The tests take turns (one cluster at a time on a 2-core machine).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn chaos() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chaos"));
    cmd.current_dir(repo());
    cmd
}

fn out_dir(name: &str) -> PathBuf {
    let dir = repo()
        .join("target/e2e-runs")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    let out = chaos().args(args).output().expect("chaos runs");
    eprintln!(
        "chaos {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run folders below `out` (reports/<scenario>/<run>), oldest first.
fn run_folders(out: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for scenario in std::fs::read_dir(out).unwrap().flatten() {
        for run in std::fs::read_dir(scenario.path()).unwrap().flatten() {
            let is_link = run.file_type().map(|t| t.is_symlink()).unwrap_or(true);
            if !is_link && run.path().is_dir() {
                found.push(run.path());
            }
        }
    }
    found.sort();
    found
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Containers, networks and volumes carrying a run's label, as the docker CLI sees them.
fn labelled(run_id: &str) -> Vec<String> {
    let filter = format!("label=chaos.run={run_id}");
    let mut left = Vec::new();
    for args in [
        vec!["ps", "-a", "-q", "--filter", filter.as_str()],
        vec!["network", "ls", "-q", "--filter", filter.as_str()],
        vec!["volume", "ls", "-q", "--filter", filter.as_str()],
    ] {
        let out = Command::new("docker")
            .args(&args)
            .output()
            .expect("docker CLI");
        assert!(out.status.success(), "docker {args:?} failed");
        left.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string),
        );
    }
    left
}

fn wait_for_history(run_root: &Path, min_lines: usize, limit: Duration) -> PathBuf {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(folder) = run_folders(run_root).pop() {
            let n = std::fs::read_to_string(folder.join("history.jsonl"))
                .map(|t| t.lines().count())
                .unwrap_or(0);
            if n >= min_lines {
                return folder;
            }
        }
        assert!(Instant::now() < deadline, "the workload never started");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn signal(child: &Child, sig: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
}

#[test]
fn register_faults_passes_with_every_fault_kind() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("register-faults");
    let o = run(&[
        "run",
        "scenarios/etcd/register-faults.yaml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "etcd must be linearizable here");
    let folder = run_folders(&out).pop().unwrap();
    let result = json(&folder.join("result.json"));
    assert_eq!(result["verdict"], "ok");
    let completed = result["stats"]["ok"].as_u64().unwrap();
    assert!(completed >= 1000, "only {completed} operations completed");
    let faults = chaos::run_folder::read_faults(&folder);
    for kind in ["kill", "pause", "partition"] {
        assert!(
            faults.iter().any(|f| f.action == kind && f.applied()),
            "no successful {kind} in faults.jsonl"
        );
    }
    for file in [
        "scenario.yaml",
        "plan.json",
        "history.jsonl",
        "junit.xml",
        "index.html",
        "logs/etcd1.log",
    ] {
        assert!(folder.join(file).is_file(), "{file} missing");
    }
    assert!(labelled(result["run_id"].as_str().unwrap()).is_empty());
}

#[test]
fn stale_reads_are_caught_on_most_seeds() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("stale-reads");
    let o = run(&[
        "run",
        "scenarios/etcd/stale-reads.yaml",
        "--seeds",
        "1..5",
        "--out",
        out.to_str().unwrap(),
    ]);
    let folders = run_folders(&out);
    assert_eq!(folders.len(), 5);
    let mut confirmed = 0;
    for folder in &folders {
        let result = json(&folder.join("result.json"));
        // Each run says whether it reached the situation: the follower cut off and healed,
        // reads answered meanwhile; with what showed it.
        let preconditions = result["preconditions"].as_array().unwrap();
        assert_eq!(preconditions.len(), 2, "{result}");
        if result["verdict"] != "illegal" {
            continue;
        }
        assert_eq!(
            result["confirmation"], "confirmed",
            "{}",
            result["preconditions"]
        );
        confirmed += 1;
        assert!(preconditions[0]["evidence"]
            .as_str()
            .unwrap()
            .contains("applied at"));
        // The violation names the key and a read that returned an overwritten value.
        let check = &result["checks"][0];
        let witness = &check["witnesses"][0];
        assert_eq!(witness["read"]["f"], "read", "{}", check["summary"]);
        assert!(witness["key"].as_str().unwrap().starts_with('k'));
        assert_ne!(
            witness["read"]["output"],
            witness["overwritten_by"]["value"]
        );
        let summary = check["summary"].as_str().unwrap();
        assert!(summary.contains("a read returned"), "{summary}");
        assert!(folder.join("junit.xml").is_file());
        let junit = std::fs::read_to_string(folder.join("junit.xml")).unwrap();
        assert!(junit.contains("preconditions reached"), "{junit}");
    }
    assert!(
        confirmed >= 4,
        "stale reads confirmed on {confirmed} of 5 seeds"
    );
    // The rates over the five seeds, each share with its Wilson interval.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("rates (95% intervals, Wilson):"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{confirmed} of 5 (")),
        "the table counts {confirmed} confirmed: {stdout}"
    );
    assert_eq!(o.status.code(), Some(1));
}

/// A run that never reached its bug's situation has not tested it: exit 2, naming what was not
/// reached, never a pass.
#[test]
fn a_run_that_misses_its_preconditions_is_not_a_pass() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("not-reached");
    // The only fault waits for more operations than the workload makes: it comes after the
    // workload ends, that is never.
    let scenario = out.join("late-fault.yaml");
    std::fs::write(
        &scenario,
        "name: e2e-late-fault\nsystem: etcd\ncluster: { profile: etcd }\n\
         workload: { kind: register, keys: 2, processes: 2, rate: 20/s, duration: 5s }\n\
         faults:\n  - after: { ops: 1000000 }\n    do: pause\n    target: etcd1\n    for: 1s\n    optional: true\n\
         checks:\n  - linearizable: { model: cas-register }\n\
         reached:\n  etcd1-paused: { step: 0, undone: true }\n  reads-answered: { history: { f: read, outcome: ok } }\n",
    )
    .unwrap();
    let o = run(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.join("reports").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("not reached: etcd1-paused"), "{stdout}");
    let folders = run_folders(&out.join("reports"));
    let result = json(&folders[0].join("result.json"));
    assert_eq!(result["verdict"], "ok", "the checks held");
    assert_eq!(result["confirmation"], "not-reached");
    let p = result["preconditions"].as_array().unwrap();
    assert_eq!(
        (p[0]["reached"].as_bool(), p[1]["reached"].as_bool()),
        (Some(false), Some(true))
    );
    assert!(
        p[0]["evidence"].as_str().unwrap().contains("never applied"),
        "{}",
        p[0]
    );
    // `chaos check` of the saved run says the same.
    let again = run(&["check", folders[0].to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("precondition etcd1-paused: NOT reached")
    );
}

#[test]
fn sigint_mid_run_cleans_up_and_keeps_a_checkable_history() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("sigint");
    let mut child = chaos()
        .args(["run", "scenarios/etcd/register-faults.yaml", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let folder = wait_for_history(&out, 200, Duration::from_secs(300));
    signal(&child, nix::sys::signal::Signal::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit code says interrupted");
    let result = json(&folder.join("result.json"));
    assert_eq!(result["verdict"], "interrupted");
    let run_id = result["run_id"].as_str().unwrap();
    assert_eq!(
        labelled(run_id),
        Vec::<String>::new(),
        "leftovers of {run_id}"
    );
    let check = run(&["check", folder.to_str().unwrap()]);
    let code = check.status.code().unwrap();
    assert!(
        [0, 1, 2].contains(&code),
        "chaos check on the partial run: {code}"
    );
    assert!(String::from_utf8_lossy(&check.stdout).contains("verdict:"));
}

#[test]
fn killed_harness_leftovers_are_swept_by_clean() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("sigkill");
    let mut child = chaos()
        .args(["run", "scenarios/etcd/stale-reads.yaml", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let folder = wait_for_history(&out, 50, Duration::from_secs(300));
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    child.wait().unwrap();
    // No result.json after SIGKILL: find the run id on the containers themselves.
    let ps = Command::new("docker")
        .args([
            "ps",
            "-a",
            "--filter",
            "label=chaos.node=etcd1",
            "--format",
            "{{.Label \"chaos.run\"}}",
        ])
        .output()
        .unwrap();
    let run_ids: Vec<String> = String::from_utf8_lossy(&ps.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        run_ids.len(),
        1,
        "one killed run's containers are left: {run_ids:?}"
    );
    assert!(!labelled(&run_ids[0]).is_empty());
    let clean = run(&["clean"]);
    assert_eq!(clean.status.code(), Some(0));
    assert!(
        labelled(&run_ids[0]).is_empty(),
        "chaos clean removed everything"
    );
    // The history written before the kill still checks.
    let check = run(&["check", folder.to_str().unwrap()]);
    assert!([0, 1, 2].contains(&check.status.code().unwrap()));
}

#[test]
fn a_node_that_never_gets_ready_is_an_infrastructure_failure() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("never-ready");
    let o = run(&[
        "run",
        "harness/tests/fixtures/never-ready.yaml",
        "--ready-timeout",
        "8s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("never became ready"), "{stderr}");
    let folder = run_folders(&out).pop().unwrap();
    let result = json(&folder.join("result.json"));
    assert_eq!(result["verdict"], "error");
    assert!(labelled(result["run_id"].as_str().unwrap()).is_empty());
}

#[test]
fn unreachable_docker_is_one_line_and_exit_255() {
    let o = chaos()
        .args(["run", "scenarios/etcd/stale-reads.yaml", "--out"])
        .arg(out_dir("no-docker"))
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let error_lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(error_lines.len(), 1, "{stderr}");
    assert!(
        error_lines[0].contains("Docker is not reachable"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

#[test]
fn reads_from_a_cut_off_redis_replica_are_caught() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("redis-replica");
    let o = run(&[
        "run",
        "scenarios/redis/replica-stale-reads.yaml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "asynchronous replicas serve stale reads"
    );
    let folder = run_folders(&out).pop().unwrap();
    let result = json(&folder.join("result.json"));
    let check = &result["checks"][0];
    assert_eq!(check["verdict"], "illegal");
    let explanation = check["detail"]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|p| p.get("explanation"))
        .unwrap();
    assert_eq!(explanation["op"]["f"], "read", "{}", explanation["message"]);
    assert!(check["summary"].as_str().unwrap().contains("read"));
}

/// A model checker's counterexample played on etcd (traces/etcd-leader-kill: a write, the
/// leader killed, a new one elected, a read): every step is triggered and observed in order,
/// and the verdict says how far the run followed the trace.
#[test]
fn an_etcd_leader_kill_trace_is_played_and_followed_step_by_step() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = out_dir("trace-etcd");
    let out_arg = out.to_string_lossy().to_string();
    let output = run(&[
        "trace",
        "play",
        "traces/etcd-leader-kill/counterexample.itf.json",
        "--map",
        "traces/etcd-leader-kill/mapping.yaml",
        "--seed",
        "1",
        "--out",
        &out_arg,
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(out.join("traces/etcd-leader-kill-trace.yaml").exists());
    let runs: Vec<PathBuf> = run_folders(&out)
        .into_iter()
        .filter(|r| r.join("result.json").exists())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let result: Value =
        serde_json::from_slice(&std::fs::read(runs[0].join("result.json")).unwrap()).unwrap();
    let trace = &result["trace"];
    assert_eq!(trace["steps"], 4, "{trace}");
    assert_eq!(trace["followed"], 4, "{trace}");
    assert_eq!(
        trace["sentence"], "followed all 4 steps of the trace, and the system held",
        "{trace}"
    );
}
