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

/// `chaos lint SUITE`: the shipped nightly suite, every scenario it plays and every
/// comparison's builds (their patches found from the suite's folder) are valid; nothing is
/// played or built.
#[test]
fn the_nightly_suite_lints() {
    let suite = repo().join("suites/nightly.yaml");
    let work = chaos::suite::load_work(&suite, None).unwrap();
    assert!(work.plays.len() >= 12, "{} plays", work.plays.len());
    assert!(!work.comparisons.is_empty());
    let (code, out) = lint(std::slice::from_ref(&suite));
    assert_eq!(code, 0, "{out}");
    let scenarios = work.plays.iter().map(|p| &p.scenario);
    for scenario in scenarios.chain(work.comparisons.iter().map(|c| &c.scenario)) {
        assert!(
            out.contains(&format!("{}: ok\n", scenario.display())),
            "{}: {out}",
            scenario.display()
        );
    }
    assert!(
        out.ends_with(&format!("{}: ok\n", suite.display())),
        "{out}"
    );
}

/// `chaos lint` of the master suite (suites/ozone-master.yaml): its comparisons name a source
/// tree at ../ozone, which a plain clone lacks, so lint says so at the entry's `builds:`;
/// beside a folder shaped as an Ozone source tree (what the nightly job checks out), the
/// suite, its scenarios and its fix lint through.
#[test]
fn the_master_suite_lints_beside_a_source_tree() {
    let (code, out) = lint(&[repo().join("suites/ozone-master.yaml")]);
    if !repo().join("ozone/pom.xml").exists() {
        assert_eq!(code, 254, "{out}");
        assert!(
            out.contains("ozone-master.yaml:16:13: scenarios[1].builds: "),
            "{out}"
        );
        assert!(
            out.contains("/../ozone: no such folder (an Ozone source tree"),
            "{out}"
        );
    }
    // A copy of the suite in a folder that has what the clone has beside it (scenarios, fixes,
    // the compose file) and a source tree's skeleton at ../ozone.
    let root = repo().join("target/lint-master");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("suites")).unwrap();
    for part in ["scenarios", "fixes", "docker-compose.yml"] {
        std::os::unix::fs::symlink(repo().join(part).canonicalize().unwrap(), root.join(part))
            .unwrap();
    }
    for module in ["", "hadoop-ozone/", "hadoop-ozone/dist/", "hadoop-hdds/"] {
        std::fs::create_dir_all(root.join("ozone").join(module)).unwrap();
        std::fs::write(
            root.join("ozone").join(module).join("pom.xml"),
            "<project><artifactId>ozone-main</artifactId><version>2.3.0-SNAPSHOT</version></project>",
        )
        .unwrap();
    }
    let suite = root.join("suites/ozone-master.yaml");
    std::fs::copy(repo().join("suites/ozone-master.yaml"), &suite).unwrap();
    let work = chaos::suite::load_work(&suite, None).unwrap();
    assert!(!work.plays.is_empty() && !work.comparisons.is_empty());
    let (code, out) = lint(std::slice::from_ref(&suite));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.ends_with(&format!("{}: ok\n", suite.display())),
        "{out}"
    );
}

/// A broken suite is located in the suite's words (`SUITE:line:column: scenarios[i].key: ...`);
/// a valid one is linted through: every scenario it plays and every comparison, each problem
/// said, exit 254, and no `ok` for the suite.
#[test]
fn a_broken_suite_is_located_and_rejected() {
    let dir = repo().join("target/lint-suites");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).unwrap();
        dir.join(name)
    };
    let stale = "../../scenarios/etcd/stale-reads.yaml";
    let ozone = "../../scenarios/ozone/recover-lease-divergence.yaml";
    for (suite, expected) in [
        (
            write(
                "bad-build.yaml",
                &format!("scenarios:\n  - scenario: {stale}\n    seeds: 1\n  - compare: {ozone}\n    builds: [2.2.0, master]\n    seeds: 1\n"),
            ),
            "bad-build.yaml:5:13: scenarios[1].builds: `master`: not a build (a release like 2.2.0",
        ),
        (
            write(
                "unknown-key.yaml",
                "scenarios:\n  - scenario: a.yaml\n    seeds: 1\n    colour: red\n",
            ),
            "unknown-key.yaml:4:5: scenarios[0].colour: unknown field `colour`, expected one of scenario, compare, builds, seeds, first_seed, expect, rate",
        ),
        (
            write(
                "bad-seeds.yaml",
                "scenarios:\n  - scenario: a.yaml\n    seeds: [1]\n  - scenario: b.yaml\n    seeds: 0\n",
            ),
            "bad-seeds.yaml:5:12: scenarios[1].seeds: must be at least 1",
        ),
    ] {
        let (code, out) = lint(std::slice::from_ref(&suite));
        assert_eq!(code, 254, "{out}");
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(
            out.starts_with(&format!("{}", dir.join(expected).display())),
            "{out}"
        );
    }
    // A suite that reads: each scenario linted once, the comparison's patch looked for.
    let suite = write(
        "contents.yaml",
        &format!(
            "scenarios:\n  - scenario: ../../harness/tests/bad-scenarios/unknown-key.yaml\n    seeds: 2\n  - scenario: {stale}\n    seeds: [1, 2]\n  - scenario: ../../harness/tests/bad-scenarios/unknown-key.yaml\n    seeds: 1\n  - compare: {ozone}\n    builds: [2.2.0, \"2.2.0+no-such.patch\"]\n    seeds: 1\n"
        ),
    );
    let (code, out) = lint(std::slice::from_ref(&suite));
    assert_eq!(code, 254, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].ends_with("stale-reads.yaml: ok"), "{out}");
    assert!(
        lines[1].ends_with("unknown-key.yaml:8:3: workload.colour: unknown field `colour`, expected one of kind, keys, processes, rate, duration, timeout, read, nodes, retries, resend-after, duplicate-after, lasts-past, mix, burst, fencing, lease, stream"),
        "{out}"
    );
    assert_eq!(
        lines[2],
        format!(
            "{}:9:13: scenarios[3].builds: patch {}: no such file",
            suite.display(),
            dir.join("no-such.patch").display()
        )
    );
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
            "unknown-node-among.yaml",
            "13:13: faults[0].target.among: unknown node `etcd9`",
        ),
        (
            "unknown-via.yaml",
            "13:10: faults[0].via: `ratis` is not one of: service, raft",
        ),
        (
            "via-on-pause.yaml",
            "11:5: faults[0].via: `via:` applies to transfer-leader only",
        ),
        (
            "empty-among.yaml",
            "13:13: faults[0].target: `among` names no node: leave it out to pick among every node",
        ),
        (
            "unknown-model.yaml",
            "9:28: checks[0].linearizable.model: `snapshot-isolation` is not a linearizability model; one of: register, cas-register, kv, set, s3-object",
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
        // Values that can never be right (issue 43).
        (
            "offset-zero.yaml",
            "13:13: faults[0].offset: `0s`: a clock offset of 0 s leaves the clock as it is, so the step does nothing; give one (like +70s)",
        ),
        (
            "duration-zero.yaml",
            "5:9: workload.duration: a workload of 0 s plays no operation: give it a length (like 30s)",
        ),
        (
            "timeout-zero.yaml",
            "5:9: workload.timeout: a timeout of 0 s gives up on every operation before its answer can come",
        ),
        (
            "bucket-empty.yaml",
            "4:5: s3.bucket: `bucket: \"\"` names no bucket (an S3 bucket's name is 3 to 63 characters)",
        ),
        (
            "environment-key-with-equals.yaml",
            "6:5: cluster.environment: `A=B`: `=` ends an environment variable's name, so the node would get another variable",
        ),
        (
            "environment-key-empty.yaml",
            "6:5: cluster.environment: ``: an environment variable needs a name",
        ),
        (
            "armed-after-a-later-step.yaml",
            "13:18: faults[0].armed-after: `armed-after:` names an earlier step, and this is the first",
        ),
        // `on: { jvm }` names a step that loads a rule chaos wrote; `on:` is one trigger.
        (
            "on-jvm-of-a-pause.yaml",
            "16:24: faults[1].on.jvm.step: step 0 is not an earlier step that loads a jvm-delay, jvm-throw, jvm-hold or jvm-trace rule",
        ),
        (
            "on-log-and-jvm.yaml",
            "16:5: faults[1].on: `on:` needs one of `log:` and `jvm:`",
        ),
        (
            "s3-workload-without-s3.yaml",
            "2:9: s3: system `ozone` needs an `s3:` section for this workload",
        ),
        // What the mutation fuzzer of issue 25 found: every case located, in our words.
        (
            "no-processes.yaml",
            "6:14: workload.processes: needs at least 1 (found 0)",
        ),
        (
            "nan-rate.yaml",
            "6:9: workload.rate: `NaN/s` is not a rate",
        ),
        (
            "huge-duration.yaml",
            "7:13: workload.duration: `2000000000000000000000s` is longer than the longest duration allowed, 30 days",
        ),
        (
            "at-after-the-end.yaml",
            "11:5: faults[0].at: `at: 9s` comes after the workload ends (5s)",
        ),
        (
            "every-zero.yaml",
            "11:5: faults[0].every: `every:` needs a period above 0",
        ),
        (
            "for-zero.yaml",
            "11:5: faults[0].for: `for:` needs a length above 0",
        ),
        (
            "bad-header-regex.yaml",
            "15:22: faults[0].match.header.x-chaos-call: invalid regex `[a-`: unclosed character class",
        ),
        (
            "fail-fsync-fraction.yaml",
            "14:15: faults[0].fraction: `fraction:` is the share of fsyncs that fail: above 0 and at most 1 (found 7)",
        ),
        (
            "duplicate-key.yaml",
            "10:1: name: `name` is given twice in one mapping",
        ),
        (
            "duplicate-nested-key.yaml",
            "13:5: faults[0].do: `do` is given twice in one mapping",
        ),
        (
            "every-too-often.yaml",
            "11:5: faults[0].every: `every: 1ms` fires up to 2592000000 times in the workload's 2592000s; a scenario's `every:` steps may fire at most 100000 times in all",
        ),
        (
            "name-as-list.yaml",
            "5:9: workload.kind: expected a name, or a mapping { name: settings }",
        ),
        (
            "target-as-number.yaml",
            "13:5: faults[0].target: found integer `5`, expected a node name",
        ),
        (
            "tiny-rate.yaml",
            "6:9: workload.rate: `1e-300/s` is not a rate; expected a plain number per s, m or h, from 1/h to 1000000/s",
        ),
        (
            "two-documents.yaml",
            "11:1: a scenario is one YAML document, and a second one starts here (`---`)",
        ),
        // What the verification of issue 25 found: located at the value, in our words.
        (
            "too-many-processes.yaml",
            "6:14: workload.processes: at most 10000 (found 100000)",
        ),
        (
            "keys-past-the-number-type.yaml",
            "6:9: workload.keys: at most 100000 (found 4294967296)",
        ),
        (
            "nodes-nested-list.yaml",
            "6:11: workload.nodes[0]: expected text (one value)",
        ),
        (
            "two-checks-in-one-item.yaml",
            "10:5: checks[0].linearizable: a mapping { name: settings } holds one name",
        ),
        (
            "unknown-anchor.yaml",
            "10:16: final: `*name` refers to no anchor `&name` defined before it",
        ),
        (
            "tagged-mode.yaml",
            "13:20: faults[0].mode: expected a name (plain text)",
        ),
        (
            "infinite-fraction.yaml",
            "14:15: faults[0].fraction: expected a finite number (like 0.5)",
        ),
        (
            "two-headers.yaml",
            "15:22: faults[0].match.header: `match.header:` takes one header and a regex for its value (found 2)",
        ),
        (
            "header-name-with-space.yaml",
            "15:22: faults[0].match.header: `x chaos` is not an HTTP header name",
        ),
        // A name that is none of the key's: the names there are, from the registries (issue 43).
        (
            "unknown-workload-kind.yaml",
            "5:9: workload.kind: `custom` is not a workload kind; one of: register, set, create, s3-object, fencing, lease, stream",
        ),
        (
            "tagged-workload-kind.yaml",
            "5:17: workload.kind: `!custom` (a YAML tag) is not a workload kind; one of: register, set, create, s3-object, fencing, lease, stream (written plain, without `!`)",
        ),
        (
            "unknown-action.yaml",
            "12:5: faults[0].do: `frobnicate` is not a fault action; one of: pause, unpause, kill, stop, start, restart, partition, heal,",
        ),
        (
            "unknown-action-in-list.yaml",
            "12:17: faults[0].do[1]: `frob` is not a fault action; one of: pause, unpause,",
        ),
        (
            "unknown-check.yaml",
            "9:5: checks[0]: `frob` is not a check; one of: linearizable, durable, retry-consistent, staleness, converge, fencing, conditional-writes, stays-up",
        ),
        (
            "unknown-partition-mode.yaml",
            "13:11: faults[0].mode: `quarters` is not a partition mode; one of: isolate, halves, majority-ring, bridge",
        ),
        (
            "unknown-system.yaml",
            "2:9: system: `cassandra` is not a system; one of: etcd, redis, s3, garage, ozone",
        ),
        // The parser's limits with their numbers, and a message through an alias never cut short.
        (
            "alias-used-too-often.yaml",
            "16:1: the YAML is too large or too complex for a scenario: 120 aliases (*name) of 1 anchor(s) (&name): once there are 100 aliases, at most 10 per anchor",
        ),
        (
            "alias-of-a-list.yaml",
            "9:9: workload.read: expected a name, or a mapping { name: settings }",
        ),
        (
            "history-f-as-mapping.yaml",
            "16:27: reached.paused.history.f: found a mapping, expected an operation kind (like read) or a list of them",
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
        for words in LIBRARY_WORDS {
            assert!(!out.contains(words), "{file}: {out}");
        }
    }
}

/// The parser's and serde's words, and the internal `.value` of a key path, that a scenario's
/// author must never read.
const LIBRARY_WORDS: &[&str] = &[
    "Option<",
    "DuplicateKeyPolicy",
    "from_str_multiple",
    "budget breached",
    "externally tagged",
    "invalid type",
    ".value",
    ": ?",
    "enum",
    "variant",
    "invalid u",
    "invalid floating point",
    "invalid boolean",
    "found map",
    "OneOrMany",
    "reference to unknown value",
    "(defined",
];

/// The errnos lint accepts are the ones chaosfs injects (its parse_errno's names), so a scenario
/// that lints is never refused by chaosfs mid-run.
#[test]
fn fsync_errnos_are_the_ones_chaosfs_knows() {
    let source = std::fs::read_to_string(repo().join("chaosfs/src/control/command.rs")).unwrap();
    let body = source.split("pub fn parse_errno").nth(1).unwrap();
    let body = body.split("\n}\n").next().unwrap();
    let chaosfs: Vec<&str> = body
        .lines()
        .filter(|l| l.contains("=> libc::"))
        .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next())
        .collect();
    assert_eq!(chaosfs, chaos::load::FSYNC_ERRNOS);
}

/// Library words never reach a user, and files that are not scenarios get one line each.
#[test]
fn inputs_that_are_no_scenario_get_one_line() {
    let dir = repo().join("target/lint-inputs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("null-name.yaml"), "name: ~\n").unwrap();
    std::fs::write(dir.join("utf8.yaml"), b"name: t\n\xff\n").unwrap();
    // A regular file past the limit is refused unread, with the limit's number.
    let big = "# a comment\n".repeat(400_000);
    std::fs::write(dir.join("big.yaml"), big).unwrap();
    // A value echoed in a message: its control characters escaped (U+0085 once split the line),
    // cut with its length when long (one message was 70 KB).
    let scenario =
        std::fs::read_to_string(repo().join("harness/tests/bad-scenarios/tagged-mode.yaml"))
            .unwrap()
            .replace("mode: !!binary isolate", "mode: isolate");
    let node = |name: &str| scenario.replace("target: etcd1", &format!("target: {name}"));
    std::fs::write(dir.join("control.yaml"), node("\"etcd\\u0085\\u0007x\"")).unwrap();
    std::fs::write(dir.join("long.yaml"), node(&"x".repeat(70_000))).unwrap();
    let cases: [(PathBuf, &str); 7] = [
        (
            dir.join("control.yaml"),
            "control.yaml:14:13: faults[0].target: unknown node `etcd\\u{85}\\u{7}x` (nodes of profile: etcd1, etcd2, etcd3)",
        ),
        (
            dir.join("long.yaml"),
            "long.yaml:14:13: faults[0].target: unknown node `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx` (cut: the first 80 of 70000 characters) (nodes of profile: etcd1, etcd2, etcd3)",
        ),
        (
            dir.join("big.yaml"),
            "big.yaml: cannot read: 4800000 bytes, more than the 4194304 bytes (4 MiB) this file may be",
        ),
        (
            dir.join("null-name.yaml"),
            "null-name.yaml:1:7: name: needs a value here, found none (null)",
        ),
        (
            dir.join("utf8.yaml"),
            "utf8.yaml:2:1: not valid UTF-8 (a scenario is UTF-8 text)",
        ),
        (
            PathBuf::from("/dev/zero"),
            "/dev/zero: cannot read: not a regular file",
        ),
        (dir.clone(), "lint-inputs: cannot read: not a regular file"),
    ];
    for (path, expected) in cases {
        let (code, out) = lint(std::slice::from_ref(&path));
        assert_eq!(code, 254, "{}: {out}", path.display());
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(
            out.trim_end().ends_with(expected),
            "{}: got `{out}`",
            path.display()
        );
        for words in LIBRARY_WORDS {
            assert!(!out.contains(words), "{out}");
        }
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
        Action::all()
            .map(|a| serde_json::to_value(a).unwrap())
            .collect(),
    );
    all.extend(names(
        chaos::workloads::REGISTRY
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
    all.extend(CheckSpec::names().iter().map(|c| c.to_string()));
    all.extend(chaos::systems::names().iter().map(|s| s.to_string()));
    let missing: Vec<&String> = all.iter().filter(|n| !documented(n)).collect();
    assert!(missing.is_empty(), "not in docs/scenarios.md: {missing:?}");
}

/// A `reached:` predicate that names what does not exist, or that the system cannot observe, is
/// refused before anything starts, located, with its key path.
#[test]
fn broken_preconditions_are_located_and_rejected() {
    let dir = repo().join("harness/tests/bad-scenarios");
    let cases = [
        (
            "reached-unknown-step.yaml",
            "16:9: reached.gone: names fault step 3; the steps are 0 to 0 (steps count from 0)",
        ),
        (
            "reached-unknown-node.yaml",
            "16:10: reached.lines.log.node: unknown node `etcd9` (nodes of profile: etcd1, etcd2, etcd3)",
        ),
        (
            "reached-bad-regex.yaml",
            "16:10: reached.lines.log.regex: invalid regex `[a-`: unclosed character class",
        ),
        (
            "reached-metric-on-etcd.yaml",
            "16:8: reached.hot.probe: system `etcd` has no metrics page (/prom) the harness reads",
        ),
        (
            "reached-two-kinds.yaml",
            "16:9: reached.both: a precondition is one of step, log, probe, history, resent, converge, config, jvm (found 2)",
        ),
        (
            "reached-ready-without-restart.yaml",
            "16:9: reached.back.ready: `ready:` waits for nodes a step starts again",
        ),
        // Entries that can never match (issue 43).
        (
            "reached-unknown-f.yaml",
            "16:9: reached.frob.history.f: `frobnicate` is not an operation kind of the register workload, so no operation can match (its kinds: read, write, cas)",
        ),
        (
            "reached-empty-f.yaml",
            "16:9: reached.none.history.f: `f: []` names no operation kind, so no operation can match",
        ),
        (
            "reached-empty-outcome.yaml",
            "16:36: reached.any.resent.first.outcome: `outcome:` is empty: give ok, fail, info or definite, or leave it out to count every outcome",
        ),
        // `node: { of-step: N }` names a step that exists (issue 43); resent's nodes exist too.
        (
            "reached-of-step-unknown.yaml",
            "16:13: reached.answered.history.node.of-step: names fault step 7; the steps are 0 to 0 (steps count from 0)",
        ),
        (
            "reached-probe-of-step-unknown.yaml",
            "16:11: reached.behind.probe.node.of-step: names fault step 7; the steps are 0 to 0 (steps count from 0)",
        ),
        (
            "reached-of-step-misspelt.yaml",
            "16:42: reached.answered.resent.again.node.step: unknown field `step`, expected one of of-step",
        ),
        (
            "reached-resent-unknown-node.yaml",
            "16:13: reached.answered.resent.first.node: unknown node `etcd9` (nodes of profile: etcd1, etcd2, etcd3)",
        ),
        (
            "reached-empty.yaml",
            "15:10: reached: `reached: {}` names no precondition, so it would vouch for any run",
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
