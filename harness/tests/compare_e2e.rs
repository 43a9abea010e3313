//! `chaos compare` end to end on real Redis containers (issue 24): the lose-unsynced control
//! played on two builds that differ by one setting, `appendfsync no` (acknowledged writes lost
//! in a crash that drops un-fsynced data) against `appendfsync always` (nothing lost), over the
//! same seeds. The comparison must find the bug on the first and not on the second, say so in
//! its conclusion, exit 0, and leave compare.json and a page linking each run's report.

mod common;

use std::process::Command;

use common::repo;
use serde_json::Value;

#[test]
fn redis_appendfsync_no_against_always() {
    let out = repo()
        .join("target/e2e-runs")
        .join(format!("compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .current_dir(repo())
        .args([
            "compare",
            "scenarios/redis/lose-unsynced.yaml",
            "--build",
            "set:APPENDFSYNC=no",
            "--build",
            "set:APPENDFSYNC=always",
            "--seeds",
            "1..2",
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("chaos runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    eprintln!(
        "--- stdout\n{stdout}--- stderr\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let conclusion = stdout
        .lines()
        .find(|l| l.starts_with("fix confirmed:") || l.starts_with("not confirmed:"))
        .expect("a conclusion line");
    // With preconditions (`reached:`) the words are confirmed / held, without violated / passed.
    let expected = [
        "fix confirmed: confirmed on set:APPENDFSYNC=no in 2 of 2 seeds, held on set:APPENDFSYNC=always in 2 of 2",
        "fix confirmed: violated on set:APPENDFSYNC=no in 2 of 2 seeds, passed on set:APPENDFSYNC=always in 2 of 2",
    ];
    if expected.contains(&conclusion) {
        assert_eq!(output.status.code(), Some(0), "fix confirmed: exit 0");
    } else {
        // A run whose precondition was not reached is no evidence either way: the comparison
        // must then say so (exit 1), and the lost writes must still be on `no` alone.
        assert_eq!(output.status.code(), Some(1), "not confirmed: exit 1");
        assert!(
            !conclusion.contains("always confirmed") && !conclusion.contains("always violated"),
            "{conclusion}"
        );
    }
    assert!(stdout.contains("wall time "), "the wall time is printed");

    // One comparison folder: compare.json, the page, a run folder per build and seed.
    let scenario_dir = out.join("compare/redis-lose-unsynced");
    let dir = std::fs::read_dir(&scenario_dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("compare.json")).unwrap()).unwrap();
    assert_eq!(record["confirmed"], expected.contains(&conclusion));
    let builds = record["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 2);
    // Whatever the preconditions say: every seed lost acknowledged writes with `no`, none with
    // `always` (the durable check's verdict in each run's result.json).
    for (build, verdict) in builds.iter().zip(["illegal", "ok"]) {
        for run in build["runs"].as_array().unwrap() {
            let folder = dir.join(run["folder"].as_str().unwrap());
            let result: Value =
                serde_json::from_str(&std::fs::read_to_string(folder.join("result.json")).unwrap())
                    .unwrap();
            assert_eq!(result["verdict"], verdict, "{}", folder.display());
        }
    }
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(page.contains(conclusion), "the page says the conclusion");
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "self-contained"
    );
    for (folder, value) in [
        ("set_APPENDFSYNC=no", "no"),
        ("set_APPENDFSYNC=always", "always"),
    ] {
        for seed in [1, 2] {
            let run = dir.join(folder).join(format!("s{seed}"));
            assert!(run.join("result.json").is_file(), "{}", run.display());
            assert!(
                page.contains(&format!("{folder}/s{seed}/index.html")),
                "the page links {folder}/s{seed}"
            );
            // The run folder's scenario plays the build: the setting is in its text.
            let text = std::fs::read_to_string(run.join("scenario.yaml")).unwrap();
            assert!(text.contains("APPENDFSYNC"), "{text}");
            let build: Value =
                serde_json::from_str(&std::fs::read_to_string(run.join("build.json")).unwrap())
                    .unwrap();
            assert_eq!(build["build"], format!("set:APPENDFSYNC={value}"));
        }
    }
    // The index of runs lists the comparison.
    let index = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .current_dir(repo())
        .args(["report", "--index"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(index.status.success());
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("Comparisons") && html.contains(conclusion));

    // Bad arguments: one line, exit 254, nothing played.
    for (args, words) in [
        (
            vec![
                "--build",
                "set:APPENDFSYNC=no",
                "--build",
                "set:APPENDFSYNC=no",
            ],
            "the same build",
        ),
        (vec!["--build", "set:APPENDFSYNC=no"], "two builds"),
        (
            vec!["--build", "2.2.0", "--build", "set:APPENDFSYNC=no"],
            "Ozone build",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_chaos"))
            .current_dir(repo())
            .args([
                "compare",
                "scenarios/redis/lose-unsynced.yaml",
                "--seeds",
                "1",
            ])
            .args(&args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(254), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(words), "{stderr}");
    }
}
