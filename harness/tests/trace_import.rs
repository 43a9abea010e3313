//! `chaos trace import`: the shipped traces import onto their clusters as blessed
//! (harness/tests/fixtures/traces/, re-recorded with `CHAOS_BLESS_TRACES=1` when a change is
//! meant), the imports lint, and bad input is one located line each, exit 254, nothing
//! written. No Docker needed.

mod common;

use common::chaos;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

const SHIPPED: &[(&str, &str)] = &[
    ("hdds-16743", "counterexample.itf.json"),
    ("hdds-16767", "counterexample.tlc.json"),
    ("etcd-leader-kill", "counterexample.itf.json"),
];

#[test]
fn shipped_traces_import_as_blessed_and_lint() {
    let bless = std::env::var_os("CHAOS_BLESS_TRACES").is_some();
    let mut golden_paths = Vec::new();
    for (folder, trace) in SHIPPED {
        let trace = format!("traces/{folder}/{trace}");
        let map = format!("traces/{folder}/mapping.yaml");
        let (code, imported, errors) = chaos(&["trace", "import", &trace, "--map", &map]);
        assert_eq!(code, 0, "{folder}: {errors}");
        let golden = repo().join(format!("harness/tests/fixtures/traces/{folder}.yaml"));
        if bless {
            std::fs::write(&golden, &imported).unwrap();
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_default();
        assert_eq!(
            imported, expected,
            "{folder}: the import moved (CHAOS_BLESS_TRACES=1 if on purpose)"
        );
        golden_paths.push(golden.display().to_string());
    }
    let mut args = vec!["lint"];
    args.extend(golden_paths.iter().map(String::as_str));
    let (code, oks, errors) = chaos(&args);
    assert_eq!(code, 0, "{errors}");
    assert_eq!(oks.lines().count(), SHIPPED.len(), "{oks}");
}

/// `--out FILE` writes what stdout shows; the file lints where it was written.
#[test]
fn out_writes_the_scenario_and_it_lints_there() {
    let out = repo().join("target/trace-import-test/etcd.yaml");
    let _ = std::fs::remove_file(&out);
    let (code, _, errors) = chaos(&[
        "trace",
        "import",
        "traces/etcd-leader-kill/counterexample.itf.json",
        "--map",
        "traces/etcd-leader-kill/mapping.yaml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{errors}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        written,
        std::fs::read_to_string(repo().join("harness/tests/fixtures/traces/etcd-leader-kill.yaml"))
            .unwrap()
    );
    let (code, _, errors) = chaos(&["lint", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{errors}");
}

/// A folder of its own for one case's files.
fn scratch(case: &str) -> PathBuf {
    let dir = repo().join("target/trace-import-test").join(case);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The etcd mapping with `edit` applied, written into `dir` with its base found from there.
fn etcd_mapping(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("traces/etcd-leader-kill/mapping.yaml"))
        .unwrap()
        .replace(
            "base: ../../scenarios/etcd/register-faults.yaml",
            &format!(
                "base: {}",
                repo().join("scenarios/etcd/register-faults.yaml").display()
            ),
        );
    let path = dir.join("mapping.yaml");
    std::fs::write(&path, edit(text)).unwrap();
    path
}

/// Imports the etcd trace (or `trace`) with `map` into `dir/out.yaml`: the one line of stderr
/// it refused with, after checking that nothing was written.
fn refused(dir: &Path, trace: Option<&Path>, map: &Path) -> String {
    let out = dir.join("out.yaml");
    let etcd = repo().join("traces/etcd-leader-kill/counterexample.itf.json");
    let trace = trace.unwrap_or(&etcd);
    let (code, stdout, stderr) = chaos(&[
        "trace",
        "import",
        trace.to_str().unwrap(),
        "--map",
        map.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 254, "{stdout}{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(!out.exists(), "nothing is written");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
        .trim_end()
        .strip_prefix("error: ")
        .unwrap_or(stderr.trim_end())
        .to_string()
}

#[test]
fn an_action_the_mapping_does_not_map_is_named_with_its_step() {
    let dir = scratch("unmapped");
    let map = etcd_mapping(&dir, |t| t.replace("  elect:", "  elected:"));
    assert_eq!(
        refused(&dir, None, &map),
        format!(
            "{}:12:3: actions: step 3 of the trace takes action `elect`, which the mapping does \
             not map (it maps write, killLeader, elected, read)",
            map.display()
        )
    );
}

#[test]
fn parameters_no_case_covers_are_named() {
    let dir = scratch("uncovered");
    let map = etcd_mapping(&dir, |t| {
        t.replace(
            "    - params: { node: \"/n[123]/\" }\n      observed",
            "    - observed",
        )
    });
    assert_eq!(
        refused(&dir, None, &map),
        format!(
            "{}:22:5: actions.elect: step 3 of the trace, elect(node: n2): the mapping does not \
             cover its parameter node: no case names it in `params:`",
            map.display()
        )
    );
    let dir = scratch("unmatched");
    let map = etcd_mapping(&dir, |t| {
        t.replace(
            "params: { node: \"/n[123]/\" }\n      observed",
            "params: { node: n1 }\n      observed",
        )
    });
    assert_eq!(
        refused(&dir, None, &map),
        format!(
            "{}:22:5: actions.elect: step 3 of the trace, elect(node: n2): no case covers its \
             parameters (the cases: {{ node: n1 }})",
            map.display()
        )
    );
}

#[test]
fn a_trace_of_the_wrong_shape_says_where() {
    let dir = scratch("shape");
    let trace = dir.join("t.json");
    std::fs::write(&trace, "\n  {\"steps\": []}").unwrap();
    let map = etcd_mapping(&dir, |t| t);
    assert_eq!(
        refused(&dir, Some(&trace), &map),
        format!(
            "{}:2:3: expected a trace: TLC's -dumpTrace json ({{\"counterexample\": \
             {{\"action\", \"state\"}}, \"vars\"}}, or {{\"action\", \"state\"}} before 2026) or \
             ITF ({{\"vars\", \"states\"}}); found an object with key `steps`",
            trace.display()
        )
    );
}

#[test]
fn a_node_the_cluster_does_not_have_is_refused() {
    let dir = scratch("node");
    let map = etcd_mapping(&dir, |t| t.replace("n1: etcd1", "n1: etcd9"));
    assert_eq!(
        refused(&dir, None, &map),
        format!(
            "{}:10:14: nodes.n1: `etcd9` is not a node of the base's cluster (profile `etcd` of \
             {}: etcd1, etcd2, etcd3)",
            map.display(),
            repo().join("docker-compose.yml").display()
        )
    );
    // A fault step's target is validated as a scenario's, and said at the mapping's fragment.
    let dir = scratch("target");
    let map = etcd_mapping(&dir, |t| {
        t.replace("target: { role: leader }", "target: etcd9")
    });
    let line = refused(&dir, None, &map);
    assert!(
        line.starts_with(&format!(
            "{}:20:14: actions.killLeader[0].fault.target: fault step 0 (trace step 2, \
             killLeader(node: n1)): ",
            map.display()
        )),
        "{line}"
    );
    assert!(line.contains("etcd9"), "{line}");
}

#[test]
fn a_fault_step_nothing_can_trigger_says_what_to_give() {
    let dir = scratch("trigger");
    let map = etcd_mapping(&dir, |t| t.replace("{ at: 8s, do: kill", "{ do: kill"));
    assert_eq!(
        refused(&dir, None, &map),
        format!(
            "{}:20:14: actions.killLeader[0].fault: step 2, killLeader(node: n1): the fault step \
             has no trigger, and step 1 before it (write(key: k)) is observed by a predicate no \
             trigger can watch (only a log line, a JVM rule or a role can): give it `at:` or \
             another trigger",
            map.display()
        )
    );
}
