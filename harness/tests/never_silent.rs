//! Issue 43: never a silent pass, never a write outside the output folder. Each case is a
//! command with the exit code and the message it must give (no Docker needed).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn chaos(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chaos"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("chaos runs")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = chaos(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = repo()
        .join("target/tmp/never-silent")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A Jepsen etcd log of our own, in Porcupine's format: process 1's read on line 9 returns 1
/// after process 2's write of 2 finished, so the whole log is illegal; without line 9 it
/// is legal (the read stays open). Kept here so a plain clone needs no shared corpus.
const STALE_READ_LOG: &str = "\
INFO  jepsen.util - 0\t:invoke\t:write\t1
INFO  jepsen.util - 0\t:ok\t:write\t1
INFO  jepsen.util - 2\t:invoke\t:write\t2
INFO  jepsen.util - 2\t:ok\t:write\t2
INFO  jepsen.util - 3\t:invoke\t:read\tnil
INFO  jepsen.util - 3\t:ok\t:read\t2
INFO  jepsen.util - 4\t:invoke\t:write\t3
INFO  jepsen.util - 1\t:invoke\t:read\tnil
INFO  jepsen.util - 1\t:ok\t:read\t1
INFO  jepsen.util - 4\t:ok\t:write\t3
INFO  jepsen.util - 3\t:invoke\t:read\tnil
INFO  jepsen.util - 3\t:ok\t:read\t3
";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `- 1` made `-1` on line 9 of a Jepsen log: an error naming the file and line, not "ok";
/// `--lenient` counts and names it and the verdict is unknown (exit 2), never ok.
#[test]
fn a_damaged_jepsen_log_line_is_an_error() {
    let text = STALE_READ_LOG;
    let dir = scratch("damaged");
    let whole = dir.join("whole.log");
    std::fs::write(&whole, text).unwrap();
    let (code, out, _) = run(&["check", "--model", "cas-register", s(&whole)]);
    assert_eq!(code, 1, "{out}");
    let damaged = dir.join("stale.log");
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 8 {
                l.replacen("- 1", "-1", 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&damaged, lines.join("\n") + "\n").unwrap();
    let (code, out, err) = run(&["check", "--model", "cas-register", s(&damaged)]);
    assert_eq!(code, 254, "{out}{err}");
    assert!(
        err.contains("stale.log: line 9: a jepsen.util line that is no event"),
        "{err}"
    );
    let (code, out, err) = run(&["check", "--model", "cas-register", "--lenient", s(&damaged)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("verdict: unknown"), "{out}");
    assert!(
        err.contains("1 unreadable line left out (--lenient): 9"),
        "{err}"
    );
    // The last line cut off in the middle.
    let cut = dir.join("cut.log");
    std::fs::write(&cut, &text[..text.len() - 3]).unwrap();
    let (code, _, err) = run(&["check", "--model", "cas-register", s(&cut)]);
    assert_eq!(code, 254, "{err}");
    let last = text.lines().count();
    assert!(
        err.contains(&format!("cut.log: line {last}: the event is cut short")),
        "{err}"
    );
    // What is read is still illegal: that stands, with the line left out named.
    let (code, out, err) = run(&["check", "--model", "cas-register", "--lenient", s(&cut)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("left out (--lenient): {last};")),
        "{err}"
    );
}

/// A damaged EDN line is an error naming the line, and `--lenient` never says ok.
#[test]
fn a_damaged_edn_line_is_an_error() {
    let dir = scratch("edn");
    let edn = dir.join("h.edn");
    std::fs::write(
        &edn,
        "{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0, :type :ok, :f :write, :value 1\n",
    )
    .unwrap();
    let (code, _, err) = run(&["check", "--model", "register", s(&edn)]);
    assert_eq!(code, 254, "{err}");
    assert!(err.contains("h.edn: line 2"), "{err}");
    let (code, out, err) = run(&["check", "--model", "register", "--lenient", s(&edn)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("1 unreadable line left out (--lenient): 2"),
        "{err}"
    );
}

/// A completion timed before its invocation and an index given twice are errors naming the
/// line; an operation that never completes stays indeterminate (ok, not an error).
#[test]
fn a_contradictory_history_is_an_error() {
    let dir = scratch("contradictory");
    let before = dir.join("before.jsonl");
    std::fs::write(
        &before,
        "{\"index\":0,\"time\":5,\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"value\":1}\n\
         {\"index\":1,\"time\":3,\"process\":0,\"type\":\"ok\",\"f\":\"write\",\"value\":1}\n",
    )
    .unwrap();
    let (code, _, err) = run(&["check", "--model", "register", s(&before)]);
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("before.jsonl: line 2: completion at time 3 is before its invocation at time 5 on line 1"),
        "{err}"
    );
    let twice = dir.join("twice.jsonl");
    std::fs::write(
        &twice,
        "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"value\":1}\n\
         {\"index\":0,\"time\":3,\"process\":0,\"type\":\"ok\",\"f\":\"write\",\"value\":1}\n",
    )
    .unwrap();
    let (code, _, err) = run(&["check", "--model", "register", s(&twice)]);
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("twice.jsonl: line 2: index 0 is given twice (also on line 1)"),
        "{err}"
    );
    let open = dir.join("open.jsonl");
    std::fs::write(
        &open,
        "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"value\":1}\n\
         {\"index\":1,\"time\":2,\"process\":1,\"type\":\"invoke\",\"f\":\"read\"}\n\
         {\"index\":2,\"time\":3,\"process\":1,\"type\":\"ok\",\"f\":\"read\",\"value\":1}\n",
    )
    .unwrap();
    let (code, out, err) = run(&["check", "--model", "register", s(&open)]);
    assert_eq!(code, 0, "{out}{err}");
}

/// A scenario's text with its `name:` replaced.
fn with_name(name: &str) -> String {
    let text =
        std::fs::read_to_string(repo().join("scenarios/etcd/crash-lose-unsynced.yaml")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("name:") {
            out.push_str(&format!("name: {name}\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Every file and folder under `dir`.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// `name:` is one safe path component of at most 100 characters: lint refuses every other
/// (exit 254, the key `name` located, the value escaped and cut), and run and compare, given
/// the same scenario, refuse it before writing anything, inside or outside their output folder.
#[test]
fn a_name_is_one_safe_path_component_and_nothing_is_written_outside() {
    let dir = scratch("names");
    let long = "x".repeat(100_000);
    let cases: &[(&str, &str)] = &[
        ("/tmp/abs-name", "has `/`"),
        ("../../../../tmp/chaos-issue-43-escape", "has `/`"),
        (".", "starts with `.`"),
        ("..", "starts with `.`"),
        ("\"\"", "the name is empty; a name is 1 to 100"),
        ("\"a\\0b\"", "`a\\u{0}b` has `\\u{0}`"),
        ("\"a\\Nb\"", "`a\\u{85}b` has `\\u{85}`"),
        (
            &long,
            "the name is 100000 characters long; a name is at most 100",
        ),
    ];
    for (i, (name, says)) in cases.iter().enumerate() {
        let file = dir.join(format!("n{i}.yaml"));
        std::fs::write(&file, with_name(name)).unwrap();
        let (code, _, err) = run(&["lint", s(&file)]);
        assert_eq!(code, 254, "{name}: {err}");
        assert!(err.contains(":1:7: name: "), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.len() < 400, "a long value is cut: {} bytes", err.len());
        let out = dir.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let before = tree(&dir);
        let (code, _, err) = run(&["run", s(&file), "--out", s(&out)]);
        assert_eq!(code, 254, "{name}: {err}");
        let (code, _, err) = run(&[
            "compare",
            s(&file),
            "--build",
            "set:A=1",
            "--build",
            "set:A=2",
            "--seeds",
            "1..2",
            "--out",
            s(&out),
        ]);
        assert_eq!(code, 254, "{name}: {err}");
        assert_eq!(tree(&dir), before, "{name}: nothing written");
    }
    assert!(!Path::new("/tmp/abs-name").exists());
    assert!(!Path::new("/tmp/chaos-issue-43-escape").exists());
    // A good name of exactly 100 characters is one.
    let file = dir.join("ok.yaml");
    std::fs::write(&file, with_name(&"y".repeat(100))).unwrap();
    let (code, _, err) = run(&["lint", s(&file)]);
    assert_eq!(code, 0, "{err}");
}

/// `--repeat` has a limit, the same as `--seeds` (10000), and so has a command's plays in all
/// (100000): past them the command is refused before any work, with the flag and the limit
/// named, exit 254 (`--repeat 4294967295` once aborted allocating 64 GiB); so is a `--seed`
/// whose consecutive seeds go past the largest one (it once overflowed).
#[test]
fn counts_past_their_limits_are_refused_with_the_limit_named() {
    let bad = "harness/tests/bad-scenarios/armed-after-a-later-step.yaml";
    let many: Vec<&str> = std::iter::repeat_n(bad, 11).collect();
    let mut eleven = vec!["run"];
    eleven.extend(&many);
    eleven.extend(["--seeds", "1..10000"]);
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", bad, "--repeat", "4294967295"],
            "'--repeat <REPEAT>': 4294967295 plays of each scenario; at most 10000",
        ),
        (
            &["run", bad, "--repeat", "10001"],
            "10001 plays of each scenario; at most 10000",
        ),
        (
            &["run", bad, "--repeat", "99999999999999999999999"],
            "expects a whole number of plays from 1 to 10000",
        ),
        (
            &["run", "--replay", "x", "--repeat", "10001"],
            "at most 10000",
        ),
        (
            &eleven,
            "11 scenarios, 10000 seeds each: 110000 plays; a command plays at most 100000",
        ),
        (
            &[
                "run",
                bad,
                "--seed",
                "18446744073709551615",
                "--repeat",
                "2",
            ],
            "--seed 18446744073709551615 with --repeat 2 goes past the largest seed",
        ),
    ];
    for (args, says) in cases {
        let started = std::time::Instant::now();
        let (code, _, err) = run(args);
        assert_eq!(code, 254, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(
            !err.contains("faults[0]"),
            "refused before validating: {err}"
        );
        assert!(
            started.elapsed().as_secs() < 10,
            "{args:?}: refused at once"
        );
    }
    // The limit itself is allowed (the bad scenario then refuses the run).
    let (code, _, err) = run(&["run", bad, "--repeat", "10000"]);
    assert_eq!(code, 254, "{err}");
    assert!(err.contains("faults[0].armed-after"), "{err}");
}

/// An invalid scenario is validated, and its error said, once per command: not once per seed
/// (`--seeds 1..10000` printed the same error 10000 times) nor once per time it is named.
#[test]
fn a_bad_scenario_is_validated_once_per_command() {
    let bad = "harness/tests/bad-scenarios/armed-after-a-later-step.yaml";
    for args in [
        &["run", bad, "--seeds", "1..10000"][..],
        &["run", bad, "--repeat", "10000"],
        &["run", bad, bad, "--repeat", "3"],
        &["run", bad, "--seed", "5", "--repeat", "10000"],
    ] {
        let started = std::time::Instant::now();
        let (code, out, err) = run(args);
        assert_eq!(code, 254, "{args:?}: {err}");
        assert_eq!(
            err.matches("faults[0].armed-after").count(),
            1,
            "{args:?}: said once: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: nothing played: {out}");
        assert!(started.elapsed().as_secs() < 10, "{args:?}: at once");
    }
}

/// A copy of the recorded stale-reads run folder (a violation).
fn run_folder_copy(name: &str) -> PathBuf {
    let from = repo().join("harness/tests/fixtures/runs/etcd-stale-reads/20261129T194844Z-s1");
    let to = scratch(name).join("run");
    std::fs::create_dir_all(to.join("logs")).unwrap();
    for file in [
        "history.jsonl",
        "faults.jsonl",
        "plan.json",
        "result.json",
        "scenario.yaml",
    ] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
    to
}

/// `chaos report` on a folder whose history is missing, or whose plan.json is broken, no longer
/// exits 0 with "0 ops" and a violation sentence: it names what it could not read on stderr
/// and in the page's head (and summary.md), and exits 254 unless `--partial`. A run that ended
/// before its checks (an error) needs no history.
#[test]
fn a_report_never_vouches_for_a_folder_it_could_not_read() {
    let missing = run_folder_copy("no-history");
    std::fs::remove_file(missing.join("history.jsonl")).unwrap();
    let broken_plan = run_folder_copy("broken-plan");
    std::fs::write(broken_plan.join("plan.json"), "{\"steps\": 3").unwrap();
    let cases = [
        (
            &missing,
            "history.jsonl: missing, and the run's verdict (illegal) was checked on it",
        ),
        (&broken_plan, "plan.json: "),
    ];
    for (dir, says) in cases {
        let (code, out, err) = run(&["report", s(dir)]);
        assert_eq!(code, 254, "{out}{err}");
        assert!(
            err.contains("error: incomplete: ") && err.contains(says),
            "{err}"
        );
        assert!(err.contains("--partial"), "{err}");
        assert!(
            out.contains("(incomplete: the folder could not be read in full)"),
            "{out}"
        );
        let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
        let head =
            &page[page.find("id=\"summary\"").unwrap()..page.find("id=\"verdict\"").unwrap()];
        assert!(head.contains("Incomplete: "), "{head}");
        assert!(head.contains(says), "{head}");
        assert!(head.contains("s-unknown"), "no violation border: {head}");
        let (code, out, err) = run(&["report", s(dir), "--summary"]);
        assert_eq!(code, 254, "{err}");
        assert!(
            out.contains("**Incomplete:**") && out.contains(says),
            "{out}"
        );
        let (code, _, err) = run(&["report", s(dir), "--partial"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("note: incomplete: ") && err.contains(says),
            "{err}"
        );
    }
    // An intact folder, and a run that failed before its workload, say nothing of the kind.
    let intact = run_folder_copy("intact");
    let (code, _, err) = run(&["report", s(&intact)]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("incomplete"), "{err}");
    let errored = run_folder_copy("errored");
    std::fs::remove_file(errored.join("history.jsonl")).unwrap();
    let result = std::fs::read_to_string(errored.join("result.json")).unwrap();
    let mut result: serde_json::Value = serde_json::from_str(&result).unwrap();
    result["verdict"] = "error".into();
    result["error"] = "etcd1 never became ready".into();
    std::fs::write(errored.join("result.json"), result.to_string()).unwrap();
    let (code, _, err) = run(&["report", s(&errored)]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("incomplete"), "{err}");
}

/// `chaos report --index` lists, on stderr and on the page, each folder it left out and why: a
/// run folder whose result.json is broken, a comparison whose compare.json is, and folders
/// more than 8 levels deep (it once dropped them without a word).
#[test]
fn the_index_lists_what_it_skipped_and_why() {
    let dir = scratch("index");
    let good = run_folder_copy("index-run");
    let copy = |to: &Path| {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(&good).unwrap().flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    };
    copy(&dir.join("etcd/ok"));
    copy(&dir.join("etcd/broken"));
    std::fs::write(dir.join("etcd/broken/result.json"), "{\"scenario\": 3").unwrap();
    copy(&dir.join("a/b/c/d/e/f/g/h/i/deep"));
    std::fs::create_dir_all(dir.join("cmp/x")).unwrap();
    std::fs::write(dir.join("cmp/x/compare.json"), "[]").unwrap();
    let (code, out, err) = run(&["report", "--index", s(&dir)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(1 runs, 3 folders skipped)"), "{out}");
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for says in [
        "`etcd/broken/result.json`: not JSON",
        "`cmp/x/compare.json`: expected a JSON object",
        "`a/b/c/d/e/f/g/h`: the folders inside are more than 8 levels deep; not searched",
    ] {
        assert!(err.contains(&format!("skipped: {says}")), "{says}: {err}");
        assert!(page.contains(says), "{says}: the page lists it");
    }
    assert!(page.contains("Skipped: 3 folders not listed"));
    // A folder with nothing wrong skips nothing.
    std::fs::remove_dir_all(dir.join("etcd/broken")).unwrap();
    std::fs::remove_dir_all(dir.join("cmp")).unwrap();
    std::fs::remove_dir_all(dir.join("a")).unwrap();
    let (code, out, err) = run(&["report", "--index", s(&dir)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("skipped") && !out.contains("skipped"),
        "{out}{err}"
    );
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(!page.contains("id=\"skipped\""));
}

/// A seed past 2^64 - 1 once showed as "seed nil", and `duration_s: -1e300` as a 300-digit
/// number: the report says "unreadable" and notes, on stderr and on the page, what result.json
/// holds there and why it cannot be shown.
#[test]
fn a_report_says_an_unreadable_seed_or_duration_in_words() {
    let cases = [
        (
            "seed-past-max",
            ("\"seed\": 1,", "\"seed\": 18446744073709551616,"),
            "seed unreadable",
            "result.json's `seed` is `1.8446744073709552e+19`, not a seed (a whole number from 0 to 18446744073709551615)",
        ),
        (
            "duration-negative",
            ("\"duration_s\":", "\"duration_s\": -1e300, \"was_duration_s\":"),
            "duration unreadable",
            "result.json's `duration_s` is `-1e+300`, not a run's duration (seconds, from 0 to 31536000, a year)",
        ),
    ];
    for (name, (from, to), line, note) in cases {
        let dir = run_folder_copy(name);
        let result = std::fs::read_to_string(dir.join("result.json")).unwrap();
        assert!(result.contains(from), "{result}");
        std::fs::write(dir.join("result.json"), result.replacen(from, to, 1)).unwrap();
        let (code, out, err) = run(&["report", s(&dir)]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(line), "{out}");
        assert!(!out.contains("nil"), "{out}");
        assert!(err.contains(&format!("note: {note}")), "{err}");
        let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
        assert!(page.contains(note), "the page notes it");
        assert!(!page.contains(&"0".repeat(100)), "no 300-digit number");
    }
}

/// A file past its size limit is refused unread with both sizes in bytes: a history one byte
/// over 2 GiB once read "2048 MiB, larger than the 2048 MiB". The files are sparse.
#[test]
fn a_file_past_its_limit_says_both_sizes_in_bytes() {
    let dir = scratch("sizes");
    let history = dir.join("big.jsonl");
    let file = std::fs::File::create(&history).unwrap();
    file.set_len((2 << 30) + 1).unwrap();
    let (code, _, err) = run(&["check", s(&history), "--model", "kv"]);
    assert_eq!(code, 254, "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "error: {}: 2147483649 bytes, more than the 2147483648 bytes (2 GiB) a history file may be",
            history.display()
        )
    );
    let folder = run_folder_copy("big-run");
    let file = std::fs::File::create(folder.join("history.jsonl")).unwrap();
    file.set_len((512 << 20) + 1).unwrap();
    let (code, _, err) = run(&["check", s(&folder)]);
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("history.jsonl: 536870913 bytes, more than the 536870912 bytes (512 MiB) a run folder's file may be"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(folder.parent().unwrap());
}

/// `node: { of-step: N }` names the node a step picked when it fired (`role: follower, pick:
/// one`): the recorded partition of step 0 cut etcd2 off, and reads it answered during the
/// partition are found. A step that acted on another node makes the run `not reached` (exit 2),
/// one that never applied too, with a reason saying so.
#[test]
fn a_predicate_names_the_node_a_step_acted_on() {
    let folder = run_folder_copy("of-step");
    let scenario = std::fs::read_to_string(folder.join("scenario.yaml")).unwrap();
    let scenario = scenario.replace("  - linearizable: { model: cas-register }\n", "");
    let scenario = scenario.replace("checks:\n", "checks: []\n");
    std::fs::write(
        folder.join("scenario.yaml"),
        format!("{scenario}reached:\n  cut-off-node-read: {{ history: {{ f: read, outcome: ok, node: {{ of-step: 0 }}, during: 0 }} }}\n"),
    )
    .unwrap();
    let (code, out, err) = run(&["check", s(&folder)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("precondition cut-off-node-read: reached at 5.6 s - 12 of at least 1 operations matched; step 0 acted on etcd2; the first: read k0"),
        "{out}"
    );
    assert!(out.contains("held: "), "{out}");
    // The step acted on a node no process read from.
    let faults = std::fs::read_to_string(folder.join("faults.jsonl")).unwrap();
    std::fs::write(
        folder.join("faults.jsonl"),
        faults.replacen("\"targets\":[\"etcd2\"]", "\"targets\":[\"etcd4\"]", 1),
    )
    .unwrap();
    let (code, out, err) = run(&["check", s(&folder)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("precondition cut-off-node-read: NOT reached - 0 of at least 1 operations matched; step 0 acted on etcd4"),
        "{out}"
    );
    // The step never applied.
    let unapplied: String = faults
        .lines()
        .filter(|l| !l.contains("\"phase\":\"apply\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(folder.join("faults.jsonl"), unapplied).unwrap();
    let (code, out, err) = run(&["check", s(&folder)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("precondition cut-off-node-read: NOT reached - step 0 never applied, so no node is the one it acted on (node: { of-step: 0 })"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(folder.parent().unwrap());
}
