//! `chaos compare` end to end on real Redis containers (issue 24): the lose-unsynced control
//! played on two builds that differ by one setting, `appendfsync no` (acknowledged writes lost
//! in a crash that drops un-fsynced data) against `appendfsync always` (nothing lost), over the
//! same seeds. The comparison must find the bug on the first and not on the second, say so in
//! its conclusion, exit 0, and leave compare.json and a page linking each run's report. Then the
//! same pair as a suite's comparison, held to `expect: fix-confirmed` by `chaos run --suite`.

mod common;

use std::process::Command;
use std::sync::Mutex;

use common::repo;
use serde_json::Value;

/// Each test starts Redis clusters: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn redis_appendfsync_no_against_always() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

/// A suite with one comparison (the same Redis pair, one seed per side): `chaos run --suite`
/// plays it through `chaos compare`'s own code into the run's --out, on the one shard it lands
/// in, and holds it to its `expect:` in the closing table.
#[test]
fn a_suite_holds_a_comparison_to_its_conclusion() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = repo()
        .join("target/e2e-runs")
        .join(format!("suite-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // The scenario's path is relative to the suite file, as in suites/nightly.yaml.
    let suite = out.join("suite.yaml");
    std::fs::write(
        &suite,
        "name: compare-in-a-suite\nscenarios:\n  - compare: ../../../scenarios/redis/lose-unsynced.yaml\n    builds: [set:APPENDFSYNC=no, set:APPENDFSYNC=always]\n    seeds: 1\n    first_seed: 1\n    expect: fix-confirmed\n",
    )
    .unwrap();
    let play = |shard: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_chaos"))
            .current_dir(repo())
            .args(["run", "--suite"])
            .arg(&suite)
            .args(["--shard", shard, "--out"])
            .arg(&out)
            .output()
            .expect("chaos runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        eprintln!(
            "--- {shard}: stdout\n{stdout}--- stderr\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code(), stdout)
    };
    // No play precedes it, so the comparison lands on the first shard; the second plays nothing.
    let (code, _) = play("2/2");
    assert_eq!(code, Some(0));
    assert!(!out.join("compare").exists(), "shard 2/2 compared nothing");

    let (code, stdout) = play("1/2");
    let dir = std::fs::read_dir(out.join("compare/redis-lose-unsynced"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("compare.json")).unwrap()).unwrap();
    let conclusion = record["conclusion"].as_str().unwrap();
    assert!(
        stdout.contains(conclusion),
        "the table shows the conclusion"
    );
    if record["confirmed"] == true {
        assert_eq!(code, Some(0), "fix confirmed, as expected: exit 0");
        assert!(stdout.contains("  as expected fix-confirmed "), "{stdout}");
        assert!(
            stdout.contains("1 of 1 comparisons as expected"),
            "{stdout}"
        );
    } else {
        // A seed that did not reach its preconditions is no evidence: compare says not
        // confirmed, and the suite says the comparison differs from its expectation (exit 1).
        assert_eq!(code, Some(1), "{conclusion}");
        assert!(conclusion.contains("not reached"), "{conclusion}");
        assert!(stdout.contains("  DIFFERS     fix-confirmed "), "{stdout}");
    }
    // compare's own folder: compare.json, the page, a run folder per build.
    assert!(dir.join("index.html").is_file());
    for folder in ["set_APPENDFSYNC=no", "set_APPENDFSYNC=always"] {
        let run = dir.join(folder).join("s1");
        assert!(run.join("result.json").is_file(), "{}", run.display());
    }
}

/// `chaos compare` of lose-unsynced on the two builds, without seeds.
const THE_PAIR: [&str; 6] = [
    "compare",
    "scenarios/redis/lose-unsynced.yaml",
    "--build",
    "set:APPENDFSYNC=no",
    "--build",
    "set:APPENDFSYNC=always",
];

/// The same Redis pair spread over two machines' worth of shares (`--shard 1/2`, `--shard
/// 2/2`, each into its own folder as on its own machine), joined by `--merge` into one
/// comparison: every run once, in seed order, its folder and report copied in, and the
/// conclusion a single machine gives for those runs. Then the merges that must be refused.
#[test]
fn shares_of_a_comparison_merge_into_one() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = repo()
        .join("target/e2e-runs")
        .join(format!("shares-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let chaos = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_chaos"));
        c.current_dir(repo());
        c
    };
    let folder_of = |out: &std::path::Path| {
        let scenario_dir = out.join("compare/redis-lose-unsynced");
        std::fs::read_dir(&scenario_dir)
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path()
    };
    let mut shares = Vec::new();
    for shard in ["1/2", "2/2"] {
        let share_out = out.join(format!("machine-{}", &shard[..1]));
        let output = chaos()
            .args(THE_PAIR)
            .args(["--seeds", "1..2", "--shard", shard, "--out"])
            .arg(&share_out)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        eprintln!(
            "--- share {shard}\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(0), "a share that played: exit 0");
        assert!(stdout.contains(&format!("share {shard} of the comparison: 2 runs played")));
        shares.push(folder_of(&share_out));
    }
    // Two shares of two builds: each share is one build.
    for (share, played) in shares
        .iter()
        .zip(["set_APPENDFSYNC=no", "set_APPENDFSYNC=always"])
    {
        let record: Value =
            serde_json::from_str(&std::fs::read_to_string(share.join("compare.json")).unwrap())
                .unwrap();
        for build in record["builds"].as_array().unwrap() {
            let runs = build["runs"].as_array().unwrap().len();
            assert_eq!(runs, if build["folder"] == played { 2 } else { 0 });
        }
    }

    let merged_out = out.join("merged");
    let output = chaos()
        .args(["compare", "--merge"])
        .args(&shares)
        .arg("--out")
        .arg(&merged_out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    eprintln!(
        "--- merge\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let merged = folder_of(&merged_out);
    let record: chaos::run_folder::Comparison =
        chaos::run_folder::Comparison::read(&merged).unwrap();
    assert_eq!(record.shard, None);
    assert_eq!(record.seeds, [1, 2]);
    // The conclusion a single machine's comparison gives for these runs, read from the runs'
    // own result.json files.
    let tallies: Vec<(String, chaos::rates::Tally)> = record
        .builds
        .iter()
        .map(|b| {
            let mut t = chaos::rates::Tally::default();
            for (run, seed) in b.runs.iter().zip([1, 2]) {
                assert_eq!(run.seed, seed, "seed order");
                let folder = merged.join(&run.folder);
                assert!(folder.join("index.html").is_file(), "{}", folder.display());
                t.add(chaos::rates::Class::of_run(&folder), 0.0);
            }
            (b.build.clone(), t)
        })
        .collect();
    let (confirmed, conclusion) = chaos::compare::conclude(
        (&tallies[0].0, &tallies[0].1),
        (&tallies[1].0, &tallies[1].1),
        record.preconditions,
    );
    assert_eq!(record.conclusion, conclusion);
    assert_eq!(record.confirmed, confirmed);
    assert_eq!(output.status.code(), Some(if confirmed { 0 } else { 1 }));
    assert!(stdout.contains(&conclusion));
    let page = std::fs::read_to_string(merged.join("index.html")).unwrap();
    assert!(page.contains(&conclusion));
    for folder in ["set_APPENDFSYNC=no", "set_APPENDFSYNC=always"] {
        assert!(
            page.contains(&format!("{folder}/s2/index.html")),
            "links {folder}"
        );
    }

    // Merges that are not one comparison: one line each, exit 254, nothing merged.
    let other = out.join("other/compare.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    let mut changed: Value =
        serde_json::from_str(&std::fs::read_to_string(shares[1].join("compare.json")).unwrap())
            .unwrap();
    changed["seeds"] = serde_json::json!([1, 2, 3]);
    std::fs::write(&other, changed.to_string()).unwrap();
    for (dirs, words) in [
        (vec![shares[0].clone()], "share 2/2 missing"),
        (
            vec![shares[0].clone(), other.parent().unwrap().to_path_buf()],
            "a share of another comparison",
        ),
        (vec![merged.clone()], "a whole comparison, not a share"),
    ] {
        let output = chaos()
            .args(["compare", "--merge"])
            .args(&dirs)
            .arg("--out")
            .arg(out.join("refused"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(254), "{dirs:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(words), "{stderr}");
        assert!(!out.join("refused/compare").exists(), "nothing merged");
    }
    // A share out of range.
    let output = chaos()
        .args(THE_PAIR)
        .args(["--seeds", "1", "--shard", "3/3"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(254), "{stderr}");
    assert!(
        stderr.contains("--shard 3/3: the comparison has 2 (seed, build) pairs"),
        "{stderr}"
    );
}
