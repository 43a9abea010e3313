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
    // Errors go to stderr, the `ok` lines to stdout.
    let errors = String::from_utf8_lossy(&out.stderr);
    let oks = String::from_utf8_lossy(&out.stdout);
    assert!(
        oks.lines().all(|l| l.ends_with(": ok")),
        "stdout holds only ok lines: {oks}"
    );
    (out.status.code().unwrap_or(-1), format!("{oks}{errors}"))
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

/// The shipped nightly suite loads, and every scenario it plays is valid.
#[test]
fn the_nightly_suite_names_valid_scenarios() {
    let plays = chaos::suite::plays(&repo().join("suites/nightly.yaml"), None).unwrap();
    assert!(plays.len() >= 12, "{} plays", plays.len());
    let paths: Vec<PathBuf> = plays.into_iter().map(|p| p.scenario).collect();
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
        (
            "workload-the-system-lacks.yaml",
            "5:9: workload.kind: system `etcd` has no lease workload (it has: register, create)",
        ),
        (
            "resend-after-without-retries.yaml",
            "5:9: workload.resend-after: resend-after applies to resends: set `retries` too",
        ),
        (
            "lease-on-create.yaml",
            "8:10: workload.lease: `lease:` applies to the lease workload only",
        ),
        (
            "clock-skew-on-go.yaml",
            "14:13: faults[0].target: node `etcd2` cannot take clock-skew: etcd is a Go program",
        ),
        (
            "bad-offset.yaml",
            "13:13: faults[0].offset: `ahead` is not a clock offset",
        ),
        (
            "armed-after-a-later-step.yaml",
            "13:18: faults[0].armed-after: `armed-after:` names an earlier step, and this is the first",
        ),
        (
            "s3-workload-without-s3.yaml",
            "2:9: s3: system `ozone` needs an `s3:` section for this workload",
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

/// docs/scenarios.md cannot drift: its example is a valid scenario, and every name the parser
/// accepts is documented there.
#[test]
fn the_scenario_reference_matches_the_code() {
    let doc = std::fs::read_to_string(repo().join("docs/scenarios.md")).unwrap();
    let examples: Vec<&str> = doc
        .split("```yaml\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .collect();
    assert!(
        examples.len() >= 2,
        "the reference and the object-store examples"
    );
    let dir = repo().join("target/doc-example");
    std::fs::create_dir_all(&dir).unwrap();
    // Every example is a valid scenario (they sit in target/, the compose file is found above).
    for (i, example) in examples.iter().enumerate() {
        let path = dir.join(format!("example-{i}.yaml"));
        std::fs::write(&path, example).unwrap();
        let (code, out) = lint(&[path]);
        assert_eq!(code, 0, "example {i} of docs/scenarios.md: {out}");
    }

    // A name counts when it stands as a whole word (letters, digits and '-' around it do not).
    let documented = |name: &str| {
        doc.match_indices(name).any(|(i, _)| {
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-');
            !word(doc[..i].chars().next_back()) && !word(doc[i + name.len()..].chars().next())
        })
    };
    let names = |values: Vec<serde_json::Value>| -> Vec<String> {
        values
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    use chaos::scenario::*;
    let mut all = names(
        Action::ALL
            .iter()
            .map(|a| serde_json::to_value(a).unwrap())
            .collect(),
    );
    all.extend(names(
        WORKLOAD_KINDS
            .iter()
            .map(|a| serde_json::to_value(a).unwrap())
            .collect(),
    ));
    all.extend(names(
        PARTITION_MODES
            .iter()
            .map(|a| serde_json::to_value(a).unwrap())
            .collect(),
    ));
    all.extend(names(
        PICKS
            .iter()
            .map(|a| serde_json::to_value(a).unwrap())
            .collect(),
    ));
    all.extend(names(
        ROLES
            .iter()
            .map(|a| serde_json::to_value(a).unwrap())
            .collect(),
    ));
    all.extend(CHECK_NAMES.iter().map(|c| c.to_string()));
    all.extend(chaos::systems::names().iter().map(|s| s.to_string()));
    let missing: Vec<&String> = all.iter().filter(|n| !documented(n)).collect();
    assert!(missing.is_empty(), "not in docs/scenarios.md: {missing:?}");
}
