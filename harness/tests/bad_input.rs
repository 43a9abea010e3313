//! Bad input on the command line, in history files and in run folders: one clear line in the
//! project's words, exit 254, never a panic, never a pass on nothing (no Docker needed).

#[path = "../../checker/tests/shared/mod.rs"]
mod shared;

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

fn code_and_stderr(out: &Output) -> (i32, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = repo()
        .join("target/tmp/bad-input")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of the recorded stale-reads run folder.
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

/// Usage errors are bad arguments: 254, as the README says (clap's own default is 2, which
/// means "could not decide"); help still exits 0.
#[test]
fn usage_errors_exit_254() {
    for args in [
        &["check", "x", "--timeout", "5"][..],
        &["check", "x", "--timeout", "20000000000000000000s"],
        &[
            "run",
            "scenarios/etcd/register-faults.yaml",
            "--ready-timeout",
            "-9999999999999999h",
        ],
        &["lint"],
        &["no-such-command"],
        &["run", "--no-such-flag"],
        &["run", "x.yaml", "--seeds", "9..1"],
        // Every duration flag, far past what a Duration holds: refused, never a panic.
        &["check", "x", "--timeout", "1e400s"],
        &["shrink", "x", "--ready-timeout", "20000000000000000000s"],
        &[
            "run",
            "--replay",
            "x",
            "--ready-timeout",
            "99999999999999999999999999h",
        ],
        // Playing nothing is no pass.
        &["run", "x.yaml", "--repeat", "0"],
        &["lint", ""],
    ] {
        let (code, err) = code_and_stderr(&chaos(args));
        assert_eq!(code, 254, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(chaos(&["--help"]).status.code(), Some(0));
    assert_eq!(chaos(&["--version"]).status.code(), Some(0));
}

/// A history file with no event chaos can read is an error naming the file and the format,
/// not "ok - linearizable: 0 operations"; `--format auto` says which format it took.
#[test]
fn a_history_with_nothing_to_check_is_an_error() {
    let dir = scratch("nothing");
    std::fs::write(dir.join("empty.txt"), "").unwrap();
    let jsonl = dir.join("history.jsonl");
    std::fs::write(
        &jsonl,
        "{\"index\":0,\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"key\":\"k\",\"value\":1}\n",
    )
    .unwrap();
    // EDN kv histories that are not Jepsen logs: the one the repository carries, and
    // Porcupine's c01-bad.txt when its corpus is there.
    let mut bad_kvs = vec![repo().join("checker/tests/histories/hard/kv-stale-get.edn")];
    bad_kvs.extend(shared::porcupine_corpus().map(|p| p.join("kv/c01-bad.txt")));
    let mut cases = vec![
        (
            dir.join("empty.txt"),
            "jepsen-log",
            "no history event could be read as jepsen-log",
        ),
        (
            jsonl.clone(),
            "jepsen-log",
            "no history event could be read as jepsen-log",
        ),
        (PathBuf::from("/dev/null"), "auto", "not a regular file"),
        (
            PathBuf::from("/dev/null"),
            "jepsen-log",
            "not a regular file (a history is read from a file); nothing read as jepsen-log",
        ),
    ];
    for bad_kv in &bad_kvs {
        cases.push((
            bad_kv.clone(),
            "jepsen-log",
            "no history event could be read as jepsen-log",
        ));
    }
    for (path, format, expected) in cases {
        let path_text = path.to_string_lossy().into_owned();
        let out = chaos(&["check", &path_text, "--model", "kv", "--format", format]);
        let (code, err) = code_and_stderr(&out);
        assert_eq!(code, 254, "{path_text}: {err}");
        assert!(
            err.contains(&path_text) && err.contains(expected),
            "{path_text}: {err}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("ok"),
            "{path_text}"
        );
    }
    for bad_kv in &bad_kvs {
        let out = chaos(&["check", &bad_kv.to_string_lossy(), "--model", "kv"]);
        let (code, err) = code_and_stderr(&out);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("read as edn (--format auto)"), "{err}");
    }
    // Every format, on what it cannot read: an error naming the file and the format tried
    // (auto says which it took), never a pass.
    let edn = dir.join("history.edn");
    std::fs::write(&edn, "{:process 0, :type :invoke, :f :read, :value nil}\n").unwrap();
    let empty = dir.join("empty.txt");
    for (path, format, expected) in [
        (&empty, "jsonl", "no history event could be read as jsonl"),
        (&empty, "edn", "no history event could be read as edn"),
        (
            &empty,
            "auto",
            "no history event could be read as jsonl (detected by --format auto)",
        ),
        (&edn, "jsonl", "line 1, column 2: not a history event"),
        (
            &jsonl,
            "edn",
            "line 1, column 40: not an EDN event: empty keyword",
        ),
    ] {
        let path_text = path.to_string_lossy().into_owned();
        let out = chaos(&["check", &path_text, "--model", "kv", "--format", format]);
        let (code, err) = code_and_stderr(&out);
        assert_eq!(code, 254, "{path_text} as {format}: {err}");
        assert!(
            err.contains(&format!("{path_text}: ")) && err.contains(expected),
            "{path_text} as {format}: {err}"
        );
        if format == "auto" {
            assert!(err.contains("read as jsonl (--format auto)"), "{err}");
        }
    }
    // A history of another model's operations: the message names the file.
    let (code, err) = code_and_stderr(&chaos(&[
        "check",
        &jsonl.to_string_lossy(),
        "--model",
        "set",
    ]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains(&format!(
            "{}: history does not fit model set",
            jsonl.display()
        )),
        "{err}"
    );
    // An unknown model is refused before the file is even opened.
    let (code, err) = code_and_stderr(&chaos(&["check", "/no/such/file", "--model", "nope"]));
    assert_eq!(code, 254);
    assert!(err.contains("unknown model \"nope\""), "{err}");
}

/// A run folder is read only inside itself: a history.jsonl that links out is refused by
/// `chaos check` as by `chaos report`.
#[test]
fn run_folders_are_read_only_inside_themselves() {
    let run = run_folder_copy("symlink");
    std::fs::remove_file(run.join("history.jsonl")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", run.join("history.jsonl")).unwrap();
    let (code, err) = code_and_stderr(&chaos(&["check", &run.to_string_lossy()]));
    assert_eq!(code, 254, "{err}");
    assert!(err.contains("leads out of the run folder"), "{err}");
    // The report does not read it either, and says so rather than show an empty history:
    // 254, as the verdict rests on it, unless --partial.
    let (code, err) = code_and_stderr(&chaos(&["report", &run.to_string_lossy()]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("history.jsonl: leads out of the run folder"),
        "{err}"
    );
    let page = std::fs::read_to_string(run.join("index.html")).unwrap();
    assert!(
        page.contains("Incomplete: "),
        "the page says it in its head"
    );
    let (code, err) = code_and_stderr(&chaos(&["report", &run.to_string_lossy(), "--partial"]));
    assert_eq!(code, 0, "{err}");
    assert!(!page.contains("root:x:0:0"), "nothing of /etc/passwd");
}

/// A plan.json that is there but broken is refused by `chaos check`, not skipped (the
/// "faults applied" check would vanish without a word).
#[test]
fn a_broken_plan_is_refused_by_check() {
    let run = run_folder_copy("plan");
    std::fs::write(run.join("plan.json"), "[]").unwrap();
    let (code, err) = code_and_stderr(&chaos(&["check", &run.to_string_lossy()]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("plan.json: expected a JSON object { ... }, found a list"),
        "{err}"
    );
}

/// A suite whose seeds cannot be played (2^64 of them, or past the largest seed) is refused
/// with its limit, before anything starts: it once panicked allocating them.
#[test]
fn a_suite_past_its_limits_is_refused() {
    let dir = scratch("suite");
    for (name, entry, expected) in [
        (
            "huge.yaml",
            "    seeds: 18446744073709551615\n",
            "18446744073709551615 seeds; an entry plays at most 10000 seeds",
        ),
        (
            "wrap.yaml",
            "    seeds: 3\n    first_seed: 18446744073709551615\n",
            "go past the largest seed",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("scenarios:\n  - scenario: no-such.yaml\n{entry}"),
        )
        .unwrap();
        let (code, err) = code_and_stderr(&chaos(&["run", "--suite", &path.to_string_lossy()]));
        assert_eq!(code, 254, "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
    }
}

/// `chaos run --seeds ... --rate` with a class or a share it cannot hold is refused in one
/// line, exit 254, before any scenario is read; `--rate` without `--seeds` (or with a suite,
/// which holds its own) and `--all-seeds` with nothing held to a rate are usage errors.
#[test]
fn a_rate_it_cannot_hold_is_refused() {
    for (rate, expected) in [
        (
            "confirmd=90%",
            "--rate `confirmd=90%`: `confirmd` is not a class of runs --rate counts; one of: confirmed,",
        ),
        (
            "confirmed=120%",
            "--rate `confirmed=120%`: `120%` is not a share from 0% to 100%; expected e.g. 80%",
        ),
        ("confirmed", "expected CLASS=SHARE"),
    ] {
        let args = ["run", "no-such.yaml", "--seeds", "1..3", "--rate", rate];
        let (code, err) = code_and_stderr(&chaos(&args));
        assert_eq!(code, 254, "{rate}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{rate}: {err}");
        assert!(err.contains(expected), "{rate}: {err}");
    }
    for args in [
        &["run", "x.yaml", "--rate", "held=50%"][..],
        &["run", "x.yaml", "--seeds", "1..3", "--all-seeds"],
        &["run", "--suite", "s.yaml", "--rate", "held=50%"],
    ] {
        let (code, err) = code_and_stderr(&chaos(args));
        assert_eq!(code, 254, "{args:?}: {err}");
    }
}

/// A comparison that cannot be played is refused in one line, exit 254, before any container
/// starts: one build, and a patch that is not there (found from the suite's folder), each at
/// the line and column of the entry's `builds:`, with its key path.
#[test]
fn a_suite_with_a_wrong_comparison_is_refused() {
    let dir = scratch("suite-compare");
    let scenario = repo().join("scenarios/ozone/recover-lease-divergence.yaml");
    for (name, builds, expected) in [
        (
            "one-build.yaml",
            "[2.2.0]",
            "one-build.yaml:3:13: scenarios[0].builds: names 1 build(s); a comparison needs two"
                .to_string(),
        ),
        (
            "no-patch.yaml",
            "[2.2.0, \"2.2.0+no-such.patch\"]",
            format!(
                "no-patch.yaml:3:13: scenarios[0].builds: patch {}: no such file",
                dir.join("no-such.patch").display()
            ),
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "scenarios:\n  - compare: {}\n    builds: {builds}\n    seeds: 1\n",
                scenario.display()
            ),
        )
        .unwrap();
        let (code, err) = code_and_stderr(&chaos(&["run", "--suite", &path.to_string_lossy()]));
        assert_eq!(code, 254, "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(&expected), "{name}: {err}");
    }
}

/// A history cut short by a harness that died mid-line is still checked and reported, and says
/// so; a bad line elsewhere names its line and column; the report names the lines it could not
/// read, and exits 254 for them unless `--partial`.
#[test]
fn a_cut_history_is_still_checkable() {
    let run = run_folder_copy("cut");
    let history = std::fs::read_to_string(run.join("history.jsonl")).unwrap();
    let lines = history.lines().count();
    let cut = &history[..history.len() - 20];
    std::fs::write(run.join("history.jsonl"), cut).unwrap();
    let out = chaos(&["check", &run.to_string_lossy()]);
    let (code, err) = code_and_stderr(&out);
    assert_eq!(code, 1, "the stale reads are still found: {err}");
    assert!(err.contains(&format!("line {lines} is cut short")), "{err}");
    let (code, err) = code_and_stderr(&chaos(&["report", &run.to_string_lossy()]));
    assert_eq!(code, 0, "a cut last line is no broken history: {err}");
    assert!(
        err.contains("could not be read") && !err.contains("incomplete"),
        "{err}"
    );
    // The same line in the middle is no crash of a writer: refused, with line and column.
    let mut middle: Vec<&str> = history.lines().collect();
    let broken = &middle[4][..30];
    middle[4] = broken;
    std::fs::write(run.join("history.jsonl"), middle.join("\n")).unwrap();
    let (code, err) = code_and_stderr(&chaos(&["check", &run.to_string_lossy()]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("line 5, column 30: the event is cut short"),
        "{err}"
    );
    // The report shows what reads, but cannot vouch for the verdict: 254 unless --partial.
    let out = chaos(&["report", &run.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(254));
    let (_, err) = code_and_stderr(&out);
    assert!(
        err.contains("error: incomplete: ") && err.contains("line 5, column 30"),
        "{err}"
    );
    let out = chaos(&["report", &run.to_string_lossy(), "--partial"]);
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(run.join("index.html")).unwrap();
    // Line 6 completes the operation whose invocation line 5 lost.
    assert!(page.contains("lines 5, 6 of history.jsonl could not be read"));
    // The terminal is told too, with the lines.
    let (_, err) = code_and_stderr(&out);
    assert!(
        err.contains("lines 5, 6 of history.jsonl could not be read"),
        "{err}"
    );
}

/// A result.json that is no object is refused, not rendered as "nil: nil".
#[test]
fn a_result_that_is_no_object_is_refused() {
    let run = run_folder_copy("result");
    std::fs::write(run.join("result.json"), "[1,2,3]").unwrap();
    let (code, err) = code_and_stderr(&chaos(&["report", &run.to_string_lossy()]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("result.json: expected a JSON object { ... }, found a list"),
        "{err}"
    );
}

/// A named pipe is no scenario and no history: refused at once, not waited on (opening one
/// blocks until something writes to it).
#[test]
fn a_named_pipe_is_refused_not_waited_on() {
    let dir = scratch("fifo");
    let fifo = dir.join("scenario.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let fifo_text = fifo.to_string_lossy().into_owned();
    for args in [
        vec!["lint", fifo_text.as_str()],
        vec!["check", fifo_text.as_str(), "--model", "kv"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chaos"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("chaos runs");
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{args:?}: still waiting on the pipe after 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(status.code(), Some(254), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
}

/// A result.json that names no scenario and no verdict is no run's: refused, not rendered as
/// "nil: nil"; a comparison folder's compare.json that is no object likewise.
#[test]
fn a_result_of_no_run_is_refused() {
    let run = run_folder_copy("empty-result");
    std::fs::write(run.join("result.json"), "{}").unwrap();
    let (code, err) = code_and_stderr(&chaos(&["report", &run.to_string_lossy()]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("result.json: no `scenario` (text): not the result.json of a chaos run"),
        "{err}"
    );
    let dir = scratch("compare");
    std::fs::write(dir.join("compare.json"), "[1,2,3]").unwrap();
    let (code, err) = code_and_stderr(&chaos(&["report", &dir.to_string_lossy(), "--summary"]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("compare.json: expected a JSON object { ... }, found a list"),
        "{err}"
    );
}

/// JSON that does not read is said in the project's words: no Rust type (`u64`, `struct
/// Event`), and a plan.json cut short is no "event" of a history.
#[test]
fn json_errors_are_in_our_words() {
    let dir = scratch("json-words");
    let history = dir.join("history.jsonl");
    for (line, expected) in [
        (
            r#"{"index":0,"time":1,"process":"5","type":"invoke","f":"read","key":"k","value":null}"#,
            r#"not a history event: found string "5", expected a whole number from 0 to 18446744073709551615"#,
        ),
        (
            r#"{"index":0,"time":1,"process":-1,"type":"invoke","f":"read","key":"k","value":null}"#,
            "found integer `-1`, expected a whole number from 0 to 18446744073709551615",
        ),
        (
            r#"{"index":0,"time":1,"process":0,"type":"invok","f":"read","key":"k","value":null}"#,
            "unknown value `invok`, expected one of `invoke`, `ok`, `fail`, `info`",
        ),
        ("null", "found null, expected a JSON object (one event)"),
    ] {
        std::fs::write(&history, format!("{line}\n")).unwrap();
        let (code, err) = code_and_stderr(&chaos(&[
            "check",
            &history.to_string_lossy(),
            "--model",
            "register",
            "--format",
            "jsonl",
        ]));
        assert_eq!(code, 254, "{line}: {err}");
        assert!(err.contains(expected), "{line}: {err}");
        for words in ["invalid type", "invalid value", "u64", "struct", "variant"] {
            assert!(!err.contains(words), "{line}: {err}");
        }
    }
    let run = run_folder_copy("cut-plan");
    let plan = std::fs::read_to_string(run.join("plan.json")).unwrap();
    std::fs::write(run.join("plan.json"), &plan[..plan.len() / 2]).unwrap();
    let (code, err) = code_and_stderr(&chaos(&["check", &run.to_string_lossy()]));
    assert_eq!(code, 254, "{err}");
    assert!(
        err.contains("plan.json: not JSON (the text ends inside a value (cut short))"),
        "{err}"
    );
    assert!(!err.contains("event"), "{err}");
}

/// An output folder chaos cannot write into: one line naming it, exit 254, before anything
/// starts, and nothing written there, for `chaos run` and `chaos compare`. A read-only
/// filesystem (a tmpfs mounted read-only, as root) or a folder without write permission
/// (otherwise), and a path under a regular file.
#[test]
fn an_output_folder_that_is_not_writable_is_refused() {
    let dir = scratch("unwritable-out");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let locked = dir.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mounted = root
        && Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs"])
            .arg(&locked)
            .status()
            .is_ok_and(|s| s.success());
    // Unmounted at the end, or when an assertion fails before it.
    struct Unmount(Option<PathBuf>);
    impl Drop for Unmount {
        fn drop(&mut self) {
            if let Some(p) = self.0.take() {
                let _ = Command::new("umount").arg(p).status();
            }
        }
    }
    let mut unmount = Unmount(mounted.then(|| locked.clone()));
    if !root {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    // As root without a mount, permissions do not stop a write: only the path under a file.
    let mut cases = vec![(file.join("reports"), "a-file is not a folder")];
    if mounted || !root {
        cases.push((locked.clone(), "cannot write in"));
        cases.push((locked.join("new/reports"), "cannot write in"));
    }
    for (out, expected) in &cases {
        let out_text = out.to_string_lossy().into_owned();
        for args in [
            vec!["run", "scenarios/etcd/stale-reads.yaml", "--out", &out_text],
            vec![
                "compare",
                "scenarios/redis/lose-unsynced.yaml",
                "--build",
                "set:APPENDFSYNC=no",
                "--build",
                "set:APPENDFSYNC=always",
                "--seeds",
                "1",
                "--out",
                &out_text,
            ],
        ] {
            let (code, err) = code_and_stderr(&chaos(&args));
            assert_eq!(code, 254, "{args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.contains(&format!("output folder {out_text}")) && err.contains(expected),
                "{args:?}: {err}"
            );
        }
    }
    // Nothing written: the file as it was, the locked folder empty.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert_eq!(std::fs::read_dir(&locked).unwrap().count(), 0);
    if let Some(p) = unmount.0.take() {
        assert!(Command::new("umount").arg(p).status().unwrap().success());
    }
    println!(
        "read-only tmpfs: {mounted}, root: {root}, cases: {}",
        cases.len()
    );
}

/// A folder that is not an Ozone source tree is refused before Docker is asked or Maven runs,
/// naming the file it lacks, by `images build ozone --source`, `compare --build src:` and
/// `OZONE_SOURCE`; nothing is left in the temporary folder.
#[test]
fn a_folder_that_is_not_an_ozone_source_tree_is_refused() {
    let dir = scratch("not-source");
    std::fs::write(dir.join("pom.xml"), "<project/>\n").unwrap();
    let shown = dir.display().to_string();
    let copies = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("chaos-ozone-source-")
            })
            .count()
    };
    let before = copies();
    let scenario = "scenarios/ozone/stream-close-closed-container.yaml";
    let spec = format!("src:{shown}+fixes/HDDS-16767.patch");
    let with_env = |args: &[&str], env: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_chaos"));
        command
            .args(args)
            .current_dir(repo())
            // No Docker engine: the refusal must come before one is asked.
            .env("DOCKER_HOST", "unix:///nonexistent/chaos-test.sock")
            .env_remove("OZONE_DIST");
        if let Some(v) = env {
            command.env("OZONE_SOURCE", v);
        }
        command.output().expect("chaos runs")
    };
    for (what, out) in [
        (
            "images build",
            with_env(&["images", "build", "ozone", "--source", &shown], None),
        ),
        (
            "compare",
            with_env(
                &[
                    "compare", scenario, "--build", "2.2.0", "--build", &spec, "--seeds", "1",
                ],
                None,
            ),
        ),
        ("OZONE_SOURCE", with_env(&["run", scenario], Some(&shown))),
    ] {
        let (code, err) = code_and_stderr(&out);
        assert_eq!(code, 254, "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
        assert!(
            err.contains(&format!(
                "{shown}: not an Ozone source tree: missing hadoop-ozone/pom.xml"
            )),
            "{what}: {err}"
        );
    }
    let (code, err) = code_and_stderr(&with_env(
        &[
            "images",
            "build",
            "ozone",
            "--source",
            &dir.join("none").to_string_lossy(),
        ],
        None,
    ));
    assert_eq!(code, 254, "{err}");
    assert!(err.contains("none: no such folder"), "{err}");
    assert_eq!(copies(), before, "a temporary copy was left behind");
    let _ = std::fs::remove_dir_all(&dir);
}
