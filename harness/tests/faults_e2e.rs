//! End-to-end tests of the faults below the process (chaosfs) and of the proxy, on real
//! clusters: Redis loses acknowledged writes without fsync and keeps them with it, etcd stays
//! linearizable under slow fsyncs and crashes that drop un-fsynced data, a lost reply makes a
//! retried create answer "already exists", and the proxy alone changes nothing. Docker is
//! required; nothing here skips.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::{lines, result};
use serde_json::Value;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Plays a scenario into a fresh folder; returns the exit code and the run folder.
fn play(scenario: &str) -> (i32, PathBuf) {
    let (output, run) = common::play("faults", scenario, &[]);
    (output.status.code().unwrap_or(-1), run)
}

fn faults(run: &Path) -> Vec<Value> {
    lines(run, "faults.jsonl")
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
        .any(|f| f["action"] == "fs:crash" && f["phase"] == "effect"));
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
        .any(|f| f["action"] == "crash" && f["phase"] == "apply" && f["outcome"] == "ok"));
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
        .filter(|f| f["action"] == "fs:fsync-delay")
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
        .filter(|f| f["action"] == "crash" && f["phase"] == "apply" && f["outcome"] == "ok")
        .count();
    assert_eq!(crashes, 3);
}

#[test]
fn a_lost_reply_makes_the_retry_answer_already_exists() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (code, run) = play("scenarios/etcd/lost-reply-retry.yaml");
    assert_eq!(code, 1);
    let lost: Vec<Value> = faults(&run)
        .into_iter()
        .filter(|f| f["action"] == "lose-reply" && f["phase"] == "effect")
        .collect();
    assert!(!lost.is_empty());
    // The dropped reply said the create succeeded...
    let dropped = lost[0]["detail"]["dropped_reply"].as_str().unwrap();
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
