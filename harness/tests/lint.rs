//! `chaos lint` on shipped and broken scenarios: no Docker needed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn lint(paths: &[PathBuf]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .arg("lint")
        .args(paths)
        .current_dir(repo())
        .output()
        .expect("chaos runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_shipped_scenario_is_valid() {
    let mut paths = Vec::new();
    for system in std::fs::read_dir(repo().join("scenarios")).unwrap() {
        for file in std::fs::read_dir(system.unwrap().path()).unwrap() {
            paths.push(file.unwrap().path());
        }
    }
    assert!(paths.len() >= 2);
    let (code, out) = lint(&paths);
    assert_eq!(code, 0, "{out}");
}

/// Each broken scenario names file:line:column, the key path and what was expected; exit 254.
#[test]
fn broken_scenarios_are_located_and_rejected() {
    let dir = repo().join("harness/tests/bad-scenarios");
    let cases = [
        (
            "unknown-key.yaml",
            "8:3: workload.colour: unknown field `colour`",
        ),
        ("wrong-type.yaml", "7:9: workload.keys:"),
        (
            "bad-duration.yaml",
            "7:13: workload.duration: `5 fortnights`",
        ),
        (
            "unknown-node.yaml",
            "13:13: faults[0].target: unknown node `etcd9`",
        ),
        (
            "unknown-model.yaml",
            "9:28: checks[0].linearizable.model: unknown model `snapshot-isolation`",
        ),
    ];
    for (file, expected) in cases {
        let (code, out) = lint(&[dir.join(file)]);
        assert_eq!(code, 254, "{file}: {out}");
        let line = out.lines().next().unwrap_or_default();
        assert!(
            line.contains(&format!("{file}:{expected}")),
            "{file}: got `{line}`"
        );
    }
}
