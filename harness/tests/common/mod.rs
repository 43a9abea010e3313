//! What the end-to-end tests of object stores share: playing a scenario into a fresh folder and
//! reading what the run folder holds.
#![allow(dead_code)] // each test file uses its own share

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// `chaos ARGS` in the repository: (exit code, stdout, stderr).
pub fn chaos(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("chaos runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Plays a scenario into target/e2e-runs/<label>-<scenario>-<pid>, printing what chaos said;
/// returns its output and the run folder.
pub fn play(label: &str, scenario: &str, extra: &[&str]) -> (Output, PathBuf) {
    let out = out_dir(label, scenario);
    let output = chaos_run(scenario, extra, &out)
        .output()
        .expect("chaos runs");
    eprintln!(
        "chaos run {scenario}\n--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, run_folder(&out))
}

/// A fresh target/e2e-runs/<label>-<scenario>-<pid>.
pub fn out_dir(label: &str, scenario: &str) -> PathBuf {
    let name = Path::new(scenario).file_stem().unwrap().to_string_lossy();
    let out = repo()
        .join("target/e2e-runs")
        .join(format!("{label}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    out
}

/// `chaos run SCENARIO EXTRA --out OUT` from the repository, not started yet.
pub fn chaos_run(scenario: &str, extra: &[&str], out: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chaos"));
    command
        .current_dir(repo())
        .args(["run", scenario])
        .args(extra)
        .arg("--out")
        .arg(out);
    command
}

/// The one run folder under OUT (OUT/<scenario name>/<run>).
pub fn run_folder(out: &Path) -> PathBuf {
    let scenario_dir = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("no run folder in {}: {e}", out.display()))
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_dir(&scenario_dir)
        .unwrap()
        .flatten()
        .find(|e| !e.file_type().unwrap().is_symlink())
        .unwrap()
        .path()
}

pub fn json(run: &Path, file: &str) -> Value {
    let path = run.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

pub fn result(run: &Path) -> Value {
    json(run, "result.json")
}

/// A JSON-lines file of the run folder.
pub fn lines(run: &Path, file: &str) -> Vec<Value> {
    let path = run.join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// No file of the run folder (logs included) holds the secret key, there are at least
/// `min_files` of them, and the scenario copy shows both keys redacted.
pub fn assert_no_secret(run: &Path, secret: &str, min_files: usize) {
    let mut stack = vec![run.to_path_buf()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files += 1;
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                assert!(
                    !text.contains(secret),
                    "{} holds the secret key",
                    path.display()
                );
            }
        }
    }
    assert!(files >= min_files, "{files} files in the run folder");
    let scenario = std::fs::read_to_string(run.join("scenario.yaml")).unwrap();
    for key in ["secret-key", "access-key"] {
        assert!(
            scenario.contains(&format!("{key}: \"[redacted]\"")),
            "{scenario}"
        );
    }
}

/// A fencing run's checks: the probe first, then the three fencing properties in order, then
/// (when the scenario has fault steps) whether every fault step applied, which must hold.
pub fn fencing_checks(result: &Value) -> &[Value] {
    let checks = result["checks"].as_array().unwrap();
    assert_eq!(checks[0]["check"], "conditional-writes", "{result}");
    let names: Vec<&str> = checks[1..4]
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
    for rest in &checks[4..] {
        assert_eq!(rest["check"], "faults", "{rest}");
        assert_eq!(rest["verdict"], "ok", "{}", rest["summary"]);
    }
    &checks[..4]
}

/// OneWriterPerTerm (the fourth of [`fencing_checks`]) failed: two writers completed a
/// takeover of the same term, which its summary says ("... while term ...").
pub fn assert_two_writers_took_one_term(checks: &[Value]) {
    let one_writer = &checks[3];
    assert_eq!(
        one_writer["verdict"], "illegal",
        "{}",
        one_writer["summary"]
    );
    assert!(one_writer["summary"]
        .as_str()
        .unwrap()
        .contains("while term"));
}
