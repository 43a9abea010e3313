//! End-to-end test of Ceph radosgw in `chaos run`: scenarios/ceph/fencing.yaml against a real
//! cluster (one mon + mgr, three BlueStore OSDs, two gateways, Debian's Ceph 16.2) with the
//! gateway paused and killed, an OSD killed and another paused. RGW's conditional writes are
//! atomic, so the probe and the three fencing verdicts must pass (exit 0), and the run must
//! really have exercised the protocol: takeovers completed, uploads acknowledged, old writers
//! fenced. Docker is required; chaos-ceph:latest is built by `chaos run` when it is missing
//! (about 3 minutes); nothing here skips.

mod common;

use common::{assert_no_secret, fencing_checks, json, lines, play, result};

const SECRET: &str = "chaos-ceph-secret-key";

#[test]
fn fencing_on_ceph_rgw_passes_under_gateway_and_osd_faults() {
    let (output, run) = play("ceph", "scenarios/ceph/fencing.yaml", &[]);
    let result = result(&run);
    assert_eq!(output.status.code(), Some(0), "{result}");
    assert_eq!(result["verdict"], "ok", "{result}");

    // The probe: RGW refuses a conditional write whose condition does not hold, and accepts
    // If-Match with the current ETag (sent unquoted, as RGW 16.2 needs).
    let checks = fencing_checks(&result);
    assert_eq!(checks[0]["verdict"], "ok", "{}", checks[0]["summary"]);
    let probe = json(&run, "probe.json");
    assert_eq!(probe["enforced"], true, "{probe}");
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
    assert_no_secret(&run, SECRET, 10);
}
