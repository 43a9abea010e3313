//! End-to-end tests of the faults below the process (chaosfs) and of the proxy, on real
//! clusters: Redis loses acknowledged writes without fsync and keeps them with it, etcd stays
//! linearizable under slow fsyncs and crashes that drop un-fsynced data, a lost reply makes a
//! retried create answer "already exists", the proxy alone changes nothing, and a skewed clock
//! reaches Redis while it runs, and a step armed after another ignores the log lines printed
//! before the other was over. Docker is required; nothing here skips.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chaos::run_folder::{read_faults, FaultEvent, Phase};
use common::result;
use serde_json::Value;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Plays a scenario into a fresh folder; returns the exit code and the run folder.
fn play(scenario: &str) -> (i32, PathBuf) {
    let (output, run) = common::play("faults", scenario, &[]);
    (output.status.code().unwrap_or(-1), run)
}

fn faults(run: &Path) -> Vec<FaultEvent> {
    read_faults(run)
}

#[test]
fn redis_without_fsync_loses_acknowledged_writes_in_a_crash() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("scenarios/redis/lose-unsynced.yaml");
    assert_eq!(code, 1);
    let r = result(&run);
    let durable = &r["checks"][0];
    assert_eq!(durable["check"], "durable");
    assert_eq!(durable["verdict"], "illegal");
    let lost = durable["detail"]["lost"].as_array().unwrap();
    assert!(!lost.is_empty(), "the lost writes are listed");
    assert!(
        lost[0]["op"]["status"] == "ok",
        "a lost write was acknowledged"
    );
    assert!(faults(&run)
        .iter()
        .any(|f| f.action == "fs:crash" && f.phase == Phase::Effect));
}

#[test]
fn redis_with_fsync_always_keeps_every_acknowledged_write() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("scenarios/redis/fsync-always.yaml");
    assert_eq!(code, 0);
    let r = result(&run);
    assert_eq!(r["checks"][0]["verdict"], "ok");
    // The crash really happened and really dropped what was not fsynced.
    assert!(faults(&run)
        .iter()
        .any(|f| f.action == "crash" && f.applied()));
    assert!(r["checks"][0]["detail"]["acknowledged"].as_u64().unwrap() > 1000);
}

#[test]
fn etcd_stays_linearizable_with_a_slow_fsync_leader_and_latency_shows_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("scenarios/etcd/slow-fsync-leader.yaml");
    assert_eq!(code, 0);
    let r = result(&run);
    let during = r["stats"]["latency_during_faults"]["write"]["p50_ms"]
        .as_f64()
        .unwrap();
    let outside = r["stats"]["latency_outside_faults"]["write"]["p50_ms"]
        .as_f64()
        .unwrap();
    // Every write waits for the leader's 200 ms fsync inside the window.
    assert!(
        during >= 150.0,
        "median write during the fault: {during} ms"
    );
    assert!(
        during > outside * 3.0,
        "during {during} ms, outside {outside} ms"
    );
    let injected = faults(&run)
        .iter()
        .filter(|f| f.action == "fs:fsync-delay")
        .count();
    assert!(injected >= 20, "{injected} delayed fsyncs recorded");
}

#[test]
fn etcd_survives_crashes_that_drop_unsynced_data() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("scenarios/etcd/crash-lose-unsynced.yaml");
    assert_eq!(
        code, 0,
        "etcd fsyncs what it acknowledges; a loss would be a finding"
    );
    let crashes = faults(&run)
        .iter()
        .filter(|f| f.action == "crash" && f.applied())
        .count();
    assert_eq!(crashes, 3);
}

#[test]
fn a_lost_reply_makes_the_retry_answer_already_exists() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("scenarios/etcd/lost-reply-retry.yaml");
    assert_eq!(code, 1);
    let lost: Vec<FaultEvent> = faults(&run)
        .into_iter()
        .filter(|f| f.action == "lose-reply" && f.phase == Phase::Effect)
        .collect();
    assert!(!lost.is_empty());
    // The dropped reply said the create succeeded...
    let detail = lost[0].detail.clone().unwrap_or_default();
    let dropped = detail["dropped_reply"].as_str().unwrap();
    assert!(dropped.contains("\"succeeded\":true"), "{dropped}");
    // ...and the client was told, after resending, that the key already existed.
    let history = std::fs::read_to_string(run.join("history.jsonl")).unwrap();
    assert!(history.contains("already exists (answer to attempt 2"));
    let r = result(&run);
    let summary = r["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.starts_with("key c"), "{summary}");
}

#[test]
fn the_proxy_without_faults_changes_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("scenarios/etcd/proxy-no-faults.yaml");
    assert_eq!(code, 0);
    let r = result(&run);
    assert_eq!(
        r["stats"]["by_kind"]["cas"]["info"],
        Value::Null,
        "no unknown outcomes"
    );
    assert!(r["stats"]["ok"].as_u64().unwrap() > 200);
}

/// Clock skew reaches a C program while it runs: Redis's TIME answers an hour ahead during the
/// first window, 30 s behind during the second and true time before, between and after (asked
/// from outside every 300 ms while the scenario plays); faults.jsonl records each offset and
/// the process that loaded libfaketime.
#[test]
fn redis_time_follows_the_clock_skew_and_comes_back_to_true_time() {
    use std::process::Command;
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = "scenarios/redis/clock-skew.yaml";
    let out = common::out_dir("faults", scenario);
    let mut chaos = common::chaos_run(scenario, &[], &out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("chaos runs");
    let started = Instant::now();
    // (seconds since chaos started, Redis's clock minus true time in seconds)
    let mut samples: Vec<(f64, f64)> = Vec::new();
    let exit = loop {
        if let Some(status) = chaos.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "chaos never ended"
        );
        std::thread::sleep(Duration::from_millis(300));
        let names = Command::new("docker")
            .args([
                "ps",
                "--filter",
                "label=chaos.run",
                "--format",
                "{{.Names}}",
            ])
            .output()
            .unwrap();
        let names = String::from_utf8_lossy(&names.stdout).into_owned();
        let Some(container) = names.lines().find(|n| n.ends_with("-redis1")) else {
            continue;
        };
        let asked = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let time = Command::new("docker")
            .args(["exec", container, "redis-cli", "TIME"])
            .output()
            .unwrap();
        let answered = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let text = String::from_utf8_lossy(&time.stdout).into_owned();
        let mut fields = text.split_whitespace().map(|f| f.parse::<f64>());
        let (Some(Ok(secs)), Some(Ok(micros))) = (fields.next(), fields.next()) else {
            continue;
        };
        let truth = (asked.as_secs_f64() + answered.as_secs_f64()) / 2.0;
        samples.push((started.elapsed().as_secs_f64(), secs + micros / 1e6 - truth));
    };
    assert_eq!(exit.code(), Some(0), "samples: {samples:?}");
    let near = |want: f64| move |s: &&(f64, f64)| (s.1 - want).abs() < 3.0;
    let ahead: Vec<_> = samples.iter().filter(near(3600.0)).collect();
    let behind: Vec<_> = samples.iter().filter(near(-30.0)).collect();
    let true_time: Vec<_> = samples.iter().filter(near(0.0)).collect();
    assert!(ahead.len() >= 5, "an hour ahead: {samples:?}");
    assert!(behind.len() >= 3, "30 s behind: {samples:?}");
    assert_eq!(
        ahead.len() + behind.len() + true_time.len(),
        samples.len(),
        "every answer is one of the three clocks: {samples:?}"
    );
    // True time before the first window and after the last.
    assert!(true_time.first().unwrap().0 < ahead.first().unwrap().0);
    assert!(ahead.last().unwrap().0 < behind.first().unwrap().0);
    assert!(true_time.last().unwrap().0 > behind.last().unwrap().0);

    let run = common::run_folder(&out);
    let events = faults(&run);
    let offsets: Vec<&str> = events.iter().filter_map(|f| f.offset.as_deref()).collect();
    assert_eq!(offsets, ["+3600s", "+0s", "-30s", "+0s"], "{events:?}");
    assert!(events.iter().all(FaultEvent::ok));
    assert_eq!(
        events[0].detail.clone().unwrap_or_default()["processes"]["redis1"][0],
        "1 redis-server"
    );
}

/// Seconds since the run began of each line of a node's log that contains `text`.
fn log_times(run: &Path, node: &str, text: &str) -> Vec<f64> {
    let log = std::fs::read_to_string(run.join(format!("logs/{node}.log"))).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains(text))
        .filter_map(|l| l.strip_prefix('[')?.split(']').next()?.trim().parse().ok())
        .collect()
}

#[test]
fn an_armed_step_ignores_lines_printed_before_its_earlier_step_is_over() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("harness/tests/fixtures/etcd-armed-after.yaml");
    assert_eq!(code, 0, "{run:?}");
    let events = faults(&run);
    let seconds = |ns: u64| ns as f64 / 1e9;
    let event = |step: usize, phase: Phase| {
        events
            .iter()
            .find(|f| f.step == Some(step) && f.phase == phase && f.ok())
            .unwrap_or_else(|| panic!("step {step} {phase} in {events:#?}"))
    };
    let (killed, restarted) = (
        seconds(event(0, Phase::Apply).started),
        seconds(event(0, Phase::Undo).time),
    );
    // The leader step 0 killed was replaced while step 0 was in force: the line came, too early.
    let early: Vec<f64> = ["etcd1", "etcd2", "etcd3"]
        .iter()
        .flat_map(|n| log_times(&run, n, "became leader at term"))
        .filter(|t| *t > killed && *t < restarted)
        .collect();
    assert!(
        !early.is_empty(),
        "an election between {killed} s and {restarted} s"
    );
    let armed = event(1, Phase::Apply);
    assert!(
        seconds(armed.started) > restarted,
        "step 1 fired at {} s, before step 0 was over at {restarted} s (lines at {early:?})",
        seconds(armed.started)
    );
    assert!(
        armed
            .trigger
            .as_deref()
            .unwrap()
            .contains("once step 0 is over"),
        "{armed:?}"
    );
}

/// The nodes step `step` applied its action to (the run's first successful apply of it).
fn applied_targets(events: &[FaultEvent], step: usize) -> Vec<String> {
    events
        .iter()
        .find(|f| f.step == Some(step) && f.phase == Phase::Apply && f.ok())
        .unwrap_or_else(|| panic!("step {step} applied in {events:#?}"))
        .targets
        .clone()
}

#[test]
fn a_role_is_not_picked_from_a_node_another_step_paused() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("harness/tests/fixtures/etcd-pause-the-next-leader.yaml");
    assert_eq!(code, 0, "{run:?}");
    let events = faults(&run);
    let applied = |step| applied_targets(&events, step);
    let (first, second) = (applied(0), applied(1));
    assert_eq!(
        (first.len(), second.len()),
        (1, 1),
        "{first:?} then {second:?}"
    );
    assert_ne!(first, second, "step 1 paused the leader step 0 had paused");
}

#[test]
fn a_selection_among_named_nodes_lands_only_on_them() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("harness/tests/fixtures/etcd-among.yaml");
    assert_eq!(code, 0, "{run:?}");
    let events = faults(&run);
    let applied = |step| applied_targets(&events, step);
    let followers = applied(0);
    assert!(
        !followers.is_empty() && followers.iter().all(|n| n == "etcd1" || n == "etcd2"),
        "step 0 paused {followers:?}"
    );
    assert_eq!(applied(1), ["etcd3"]);
}
