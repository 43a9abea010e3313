//! Ozone before any container: every Ozone scenario lints, and `chaos run` with OZONE_IMAGE naming
//! an image that is not here exits 255 with the `docker pull` line and says what is not yet
//! verified live. Needs a Docker engine (the image check asks it), as the other end-to-end tests
//! do. The live cluster is in ozone_e2e.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ozone_scenarios() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(repo().join("scenarios/ozone"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_ozone_scenario_lints() {
    let paths = ozone_scenarios();
    assert!(paths.len() >= 6, "{paths:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .arg("lint")
        .args(&paths)
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The regexes of `on: log` triggers in the Ozone scenarios are the adapter's named triggers.
#[test]
fn ozone_scenarios_trigger_on_named_lines() {
    let known: Vec<&str> = chaos::systems::ozone::TRIGGERS
        .iter()
        .map(|t| t.regex)
        .collect();
    let mut seen = 0;
    for path in ozone_scenarios() {
        let text = std::fs::read_to_string(&path).unwrap();
        // Only triggers (`- on: { log: ... }`); the `reached:` log predicates may name any line.
        for line in text.lines().filter(|l| l.contains("on: { log:")) {
            let Some(rest) = line.split("regex: \"").nth(1) else {
                continue;
            };
            let regex = rest.split("\" }").next().unwrap().replace("\\\\", "\\");
            assert!(
                known.contains(&regex.as_str()),
                "{}: {regex}",
                path.display()
            );
            seen += 1;
        }
    }
    assert!(seen >= 2);
}

/// `chaos run ARGS` with OZONE_IMAGE naming a user's image that is not here (the profiles build
/// chaos-ozone themselves; any other tag is the user's to pull or load): it must stop before
/// starting anything, exit 255 and say (on both streams) how to get the image. Returns stderr.
fn run_without_the_image(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .arg("run")
        .args(args)
        .env("OZONE_IMAGE", "apache/ozone:0.0.0-chaos-missing")
        .current_dir(repo())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(255), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("docker pull apache/ozone:0.0.0-chaos-missing"),
        "{stdout}"
    );
    assert!(
        stderr.contains("    docker pull apache/ozone:0.0.0-chaos-missing\n"),
        "{stderr}"
    );
    stderr
}

#[test]
fn run_with_a_missing_user_image_exits_255_with_the_pull_line() {
    let scenario = repo().join("scenarios/ozone/retry-after-restart.yaml");
    let stderr = run_without_the_image(&[scenario.as_os_str()]);
    // What is still unverified on a live cluster is said up front.
    assert!(stderr.contains("Not yet met live"), "{stderr}");
}

/// The same with `--scm-ha` (three SCMs, profile ozone-scm-ha): one image for every node, so
/// the same 255 and `docker pull` line before anything starts; the run folder names the profile
/// and its reproduce command carries the flag.
#[test]
fn run_with_scm_ha_without_the_image_exits_255_with_the_pull_line() {
    let scenario = repo().join("scenarios/ozone/retry-after-restart.yaml");
    let runs = repo().join(format!("target/tmp/scm-ha-runs-{}", std::process::id()));
    run_without_the_image(&[
        "--scm-ha".as_ref(),
        scenario.as_os_str(),
        "--out".as_ref(),
        runs.as_os_str(),
    ]);
    // The run folder says which cluster it was and how to play it again.
    let latest = runs.join("ozone-retry-after-restart/latest/result.json");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&latest).unwrap()).unwrap();
    assert_eq!(result["profile"], "ozone-scm-ha", "{result}");
    let command = result["command"].as_str().unwrap();
    assert!(command.ends_with(" --seed 1 --scm-ha"), "{command}");
    std::fs::remove_dir_all(&runs).unwrap();
}

/// Admin actions, applied-index triggers and the converge check are checked before anything
/// starts: a system without them, close-container without its container id, and a `when:` with
/// both a role and a lag are rejected (exit 254) with the key path.
#[test]
fn admin_actions_are_validated() {
    let dir = repo().join("target/tmp/ozone-lint");
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "etcd-transfer.yaml",
            "name: t\nsystem: etcd\ncluster: { profile: etcd }\nworkload: { kind: register, rate: 1/s, duration: 1s }\nfaults:\n  - at: 1s\n    do: transfer-leader\n    target: etcd2\n",
            "faults[0].do: system `etcd` has no admin action transfer-leader",
        ),
        (
            "ozone-close.yaml",
            "name: t\nsystem: ozone\ncluster: { profile: ozone }\nworkload: { kind: create, rate: 1/s, duration: 1s }\nfaults:\n  - at: 1s\n    do: close-container\n",
            "faults[0].container: close-container needs `container:`",
        ),
        (
            "etcd-behind.yaml",
            "name: t\nsystem: etcd\ncluster: { profile: etcd }\nworkload: { kind: register, rate: 1/s, duration: 1s }\nfaults:\n  - when: { node: etcd2, behind: 10 }\n    do: pause\n    target: etcd2\n",
            "faults[0].when.behind: system `etcd` has no applied-index probe",
        ),
        (
            "ozone-when-both.yaml",
            "name: t\nsystem: ozone\ncluster: { profile: ozone }\nworkload: { kind: create, rate: 1/s, duration: 1s }\nfaults:\n  - when: { node: om3, role: leader, behind: 10 }\n    do: pause\n    target: om3\n",
            "faults[0].when: `when:` needs one of `role:` and `behind:`",
        ),
        (
            "etcd-converge.yaml",
            "name: t\nsystem: etcd\ncluster: { profile: etcd }\nworkload: { kind: register, rate: 1/s, duration: 1s }\nchecks:\n  - converge: { bound: 5 }\n",
            "checks[0].converge: system `etcd` has no applied-index probe",
        ),
    ];
    for (file, text, expected) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_chaos"))
            .arg("lint")
            .arg(&path)
            .current_dir(repo())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(254), "{file}: {stderr}");
        assert!(stderr.contains(expected), "{file}: {stderr}");
    }
}
