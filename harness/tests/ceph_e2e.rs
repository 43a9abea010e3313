//! End-to-end test of Ceph radosgw in `chaos run`: scenarios/ceph/fencing.yaml against a real
//! cluster (one mon + mgr, three BlueStore OSDs, two gateways, Debian's Ceph 16.2) with the
//! gateway paused and killed, an OSD killed and another paused. RGW's conditional writes are
//! atomic, so the probe and the three fencing verdicts must pass (exit 0), and the run must
//! really have exercised the protocol: takeovers completed, uploads acknowledged, old writers
//! fenced. Docker is required; chaos-ceph:latest is built by `chaos run` when it is missing
//! (about 3 minutes); nothing here skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const SECRET: &str = "chaos-ceph-secret-key";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn lines(run: &Path, file: &str) -> Vec<Value> {
    std::fs::read_to_string(run.join(file))
        .unwrap_or_else(|e| panic!("{}: {e}", run.join(file).display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn fencing_on_ceph_rgw_passes_under_gateway_and_osd_faults() {
    let out = repo()
        .join("target/e2e-runs")
        .join(format!("ceph-fencing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .current_dir(repo())
        .args(["run", "scenarios/ceph/fencing.yaml", "--out"])
        .arg(&out)
        .output()
        .expect("chaos runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("chaos run scenarios/ceph/fencing.yaml\n--- stdout\n{stdout}--- stderr\n{stderr}");
    let scenario_dir = std::fs::read_dir(&out)
        .expect("a run folder")
        .next()
        .unwrap()
        .unwrap()
        .path();
    let run = std::fs::read_dir(&scenario_dir)
        .unwrap()
        .flatten()
        .find(|e| !e.file_type().unwrap().is_symlink())
        .unwrap()
        .path();
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("result.json")).unwrap()).unwrap();
    assert_eq!(output.status.code(), Some(0), "{result}");
    assert_eq!(result["verdict"], "ok", "{result}");

    // The probe: RGW refuses a conditional write whose condition does not hold, and accepts
    // If-Match with the current ETag (sent unquoted, as RGW 16.2 needs).
    let checks = result["checks"].as_array().unwrap();
    assert_eq!(checks[0]["check"], "conditional-writes");
    assert_eq!(checks[0]["verdict"], "ok", "{}", checks[0]["summary"]);
    let probe: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("probe.json")).unwrap()).unwrap();
    assert_eq!(probe["enforced"], true, "{probe}");
    let names: Vec<&str> = checks[1..]
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fencing: NoAckedWriteLoss",
            "fencing: NoAckAfterTakeover",
            "fencing: OneWriterPerTerm"
        ]
    );
    for c in &checks[1..] {
        assert_eq!(c["verdict"], "ok", "{c}");
        assert!(c["detail"]["rounds"].as_u64().unwrap() >= 3, "{c}");
    }

    // The protocol was exercised, faults and all.
    let events = lines(&run, "fencing.jsonl");
    let count = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    // (seeds 1 to 3 here: 15 to 18 takeovers, 43 to 51 acknowledged uploads, 10 to 12 fenced)
    assert!(count("writer_stalled") >= 1, "no writer stalled");
    assert!(
        count("takeover_completed") >= 6,
        "{} takeovers",
        count("takeover_completed")
    );
    assert!(
        count("upload_acked") >= 15,
        "{} uploads",
        count("upload_acked")
    );
    assert!(count("fenced") >= 1, "no writer was fenced");
    let history = lines(&run, "history.jsonl");
    assert!(history
        .iter()
        .any(|e| e["f"] == "upload" && e["type"] == "ok"));
    let faults = lines(&run, "faults.jsonl");
    for (action, node) in [
        ("pause", "ceph-rgw1"),
        ("kill", "ceph-rgw1"),
        ("kill", "ceph-osd1"),
        ("pause", "ceph-osd2"),
    ] {
        assert!(
            faults
                .iter()
                .any(|f| f.to_string().contains(action) && f.to_string().contains(node)),
            "no {action} of {node} in faults.jsonl"
        );
    }

    // Every node's log is there; no file holds the secret key.
    for node in [
        "ceph-mon",
        "ceph-osd0",
        "ceph-osd1",
        "ceph-osd2",
        "ceph-rgw1",
        "ceph-rgw2",
    ] {
        assert!(
            run.join(format!("logs/{node}.log")).is_file(),
            "logs/{node}.log"
        );
    }
    let mut stack = vec![run.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                assert!(
                    !text.contains(SECRET),
                    "{} holds the secret key",
                    path.display()
                );
            }
        }
    }
}
