//! End-to-end tests of object stores in `chaos run`: concurrent creates with If-None-Match: *
//! on s3s-fs (its conditional PUT checks and writes without a lock) must fail the
//! linearizability check and name the key and the two successful creates; the fencing workload
//! on s3s-fs writes its events and the three verdicts; credentials never reach the run folder;
//! a MinIO scenario without the user's image exits 255 and says how to get it. Docker is
//! required (and chaos-s3s-fs:latest, which `chaos run` builds with images/s3s-fs/build.sh when
//! it is missing); nothing here skips.

mod common;

use std::process::Command;
use std::sync::Mutex;

use common::{
    assert_no_secret, assert_two_writers_took_one_term, fencing_checks, json, lines, play, result,
};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const SECRET: &str = "chaos-secret-key";

#[test]
fn concurrent_creates_on_s3s_fs_are_not_linearizable() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (output, run) = play("s3", "scenarios/s3s-fs/concurrent-create.yaml", &[]);
    assert_eq!(output.status.code(), Some(1));
    let r = result(&run);
    let check = &r["checks"][0];
    assert_eq!(check["check"], "linearizable");
    assert_eq!(check["model"], "s3-object");
    assert_eq!(check["verdict"], "illegal");
    let summary = check["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("more than one create succeeded on key o"),
        "{summary}"
    );
    // The witness names the key and the two creates, and the history says both succeeded.
    let witness = &check["witnesses"][0];
    let key = witness["key"].as_str().unwrap();
    assert!(summary.contains(&format!("on key {key}:")), "{summary}");
    let creates = witness["creates"].as_array().unwrap();
    assert_eq!(creates.len(), 2);
    let history = lines(&run, "history.jsonl");
    for create in creates {
        let body = &create["body"];
        assert!(
            summary.contains(&body.to_string()),
            "{summary} names {body}"
        );
        let ok = history.iter().find(|e| {
            e["type"] == "ok" && e["key"] == key && e["f"] == "put" && {
                // The completion's process matches the invocation with this body.
                history.iter().any(|i| {
                    i["type"] == "invoke"
                        && i["process"] == e["process"]
                        && i["value"]["body"] == *body
                        && i["value"]["if_none_match"] == "*"
                })
            }
        });
        assert!(ok.is_some(), "create of {body} on {key} acknowledged");
    }
    // Both sides were really exercised: refused creates too.
    let fails = history
        .iter()
        .filter(|e| {
            e["type"] == "fail"
                && e["error"]
                    .as_str()
                    .is_some_and(|s| s.contains("precondition failed"))
        })
        .count();
    assert!(fails > 50, "{fails} refused creates");
    assert!(String::from_utf8_lossy(&output.stdout).contains("more than one create succeeded"));
    assert_no_secret(&run, SECRET, 6);
}

#[test]
fn fencing_on_s3s_fs_records_events_and_three_verdicts() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (output, run) = play("s3", "scenarios/s3s-fs/fencing.yaml", &[]);
    let code = output.status.code();
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    let r = result(&run);
    let checks = fencing_checks(&r);
    // The probe: s3s-fs refuses a conditional write whose condition does not hold.
    assert_eq!(checks[0]["verdict"], "ok", "{}", checks[0]["summary"]);
    let probe = json(&run, "probe.json");
    assert_eq!(probe["enforced"], true);
    for c in &checks[1..] {
        let verdict = c["verdict"].as_str().unwrap();
        assert!(verdict == "ok" || verdict == "illegal", "{c}");
        assert!(c["detail"]["rounds"].as_u64().unwrap() >= 5, "{c}");
    }
    // What s3s-fs does to racing takeovers: its If-None-Match: * is check-then-write, so two
    // contenders create the same fence object (several rounds out of 20 or more).
    assert_two_writers_took_one_term(checks);
    assert_eq!(code, Some(1));
    // The events are in fencing.jsonl and the operations in history.jsonl.
    let events = lines(&run, "fencing.jsonl");
    assert!(events.iter().any(|e| e["type"] == "takeover_completed"));
    assert!(events.iter().any(|e| e["type"] == "upload_acked"));
    let history = lines(&run, "history.jsonl");
    assert!(history
        .iter()
        .any(|e| e["f"] == "upload" && e["type"] == "ok"));
    // `chaos check` re-checks the saved run to the same verdicts.
    let again = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .args(["check"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stdout).contains("fencing: OneWriterPerTerm: illegal"));
    assert_no_secret(&run, SECRET, 6);
}

#[test]
fn a_minio_scenario_without_the_image_says_how_to_get_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let present = Command::new("docker")
        .args(["image", "inspect", "minio/minio:latest"])
        .output()
        .expect("the docker client")
        .status
        .success();
    assert!(
        !present,
        "this test checks the message for a missing minio/minio image; it is loaded here"
    );
    let (output, run) = play("s3", "scenarios/minio/fencing-quorum-loss.yaml", &[]);
    assert_eq!(output.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("docker pull minio/minio"), "{stderr}");
    assert!(stderr.contains("docker load"), "{stderr}");
    let r = result(&run);
    assert_eq!(r["verdict"], "error");
    assert!(r["error"]
        .as_str()
        .unwrap()
        .contains("docker pull minio/minio"));
}
