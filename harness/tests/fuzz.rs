//! Fuzz targets: every reader of user input, fed mutated copies of real inputs, must answer
//! with a value or an error, never a panic. proptest drives the mutations (cargo-fuzz needs a
//! nightly toolchain a fresh machine may lack); a failing input is shrunk and kept by proptest
//! in proptest-regressions/fuzz.txt, and the inputs that crashed chaos before are replayed by
//! `inputs_that_once_crashed`.
//!
//! `FUZZ_CASES` sets the inputs per target: 1,000 by default (`scripts/test`, CI), 100,000 in
//! the nightly suite (`FUZZ_CASES=100000 cargo test --release -p chaos --test fuzz`).
//!
//! Targets: the scenario loader with its compose file (the shipped scenarios' `reached:` and
//! `lasts-past` included), the compose reader, the command line's value parsers (durations,
//! rates, offsets, ranges, seeds, shards), the suite reader, the history readers, and the
//! run-folder readers of check, report, replay and shrink.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;

#[path = "../../checker/tests/shared/mod.rs"]
mod shared;

use chaos::cluster::compose::ComposeFile;
use chaos::load::LoadOptions;
use chaos::scenario;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // Shrinking a panic can take long on big inputs; a few hundred steps find the point.
        max_shrink_iters: 512,
        ..ProptestConfig::default()
    }
}

/// Every shipped scenario, every broken one of the lint tests and every input that once
/// crashed, with its path (a mutated scenario is loaded as if it were that file, so its compose
/// file is found the same way).
fn scenario_corpus() -> &'static [(PathBuf, String)] {
    static CORPUS: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut out = Vec::new();
        let mut dirs = vec![
            repo().join("harness/tests/bad-scenarios"),
            repo().join("harness/tests/fuzz-regressions"),
        ];
        for system in std::fs::read_dir(repo().join("scenarios"))
            .unwrap()
            .flatten()
        {
            dirs.push(system.path());
        }
        for dir in dirs {
            for file in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = file.path();
                if path.extension().is_some_and(|e| e == "yaml") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    out.push((path, text));
                }
            }
        }
        out.sort();
        assert!(out.len() > 30, "the corpus has {} scenarios", out.len());
        out
    })
}

/// Strings that broke parsers somewhere, or are at the edge of what one accepts.
const TOKENS: &[&str] = &[
    "",
    "0",
    "-1",
    "1e309",
    "NaN",
    ".nan",
    "inf",
    "-inf",
    "18446744073709551616",
    "20000000000000000000s",
    "-9999999999999999h",
    "0s",
    "0s..0s",
    "5s..2s",
    "1e-300/s",
    "0/s",
    "~",
    "null",
    "[]",
    "{}",
    "[",
    "{",
    ":",
    ": ",
    "- ",
    "-",
    "\n",
    "\n  ",
    "\t",
    "'",
    "\"",
    "&a ",
    "*a",
    "<<: *a",
    "---\n",
    "...",
    "!!binary ",
    "\u{0}",
    "\u{feff}",
    "é",
    "(",
    "*",
    "[a-",
    "etcd9",
    "leader",
    "ozone",
    "at: 1s",
    "do: pause",
    "for: 0s",
    "every: 0s",
    "fraction: 7",
    "errno: EBOGUS",
    "${X}",
    "${X:-y}",
    "$$",
];

/// Words of the parser and serde that a scenario's author must never read (issue 25).
const LIBRARY_WORDS: &[&str] = &[
    "Option<",
    "DuplicateKeyPolicy",
    "from_str_multiple",
    "budget breached",
    "externally tagged",
    "did not match any variant",
    "invalid type:",
    "invalid enum variant",
    "invalid floating point",
    "enum variant value",
];

/// One edit of a text.
#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, String),
    Delete(usize, usize),
    Replace(usize, usize, String),
    DuplicateLine(usize),
    DropLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(TOKENS).prop_map(str::to_string),
        1 => "[ -~]{0,12}",
        1 => proptest::collection::vec(any::<u8>(), 0..6)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<usize>();
    prop_oneof![
        3 => (at, token()).prop_map(|(a, t)| Edit::Insert(a, t)),
        2 => (at, 1usize..20).prop_map(|(a, n)| Edit::Delete(a, n)),
        4 => (at, 1usize..12, token()).prop_map(|(a, n, t)| Edit::Replace(a, n, t)),
        1 => at.prop_map(Edit::DuplicateLine),
        1 => at.prop_map(Edit::DropLine),
        1 => (at, at).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        1 => at.prop_map(Edit::Truncate),
    ]
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec(edit(), 1..6)
}

/// The char boundary at or before `at % (len + 1)`.
fn boundary(text: &str, at: usize) -> usize {
    let mut i = at % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut text = text.to_string();
    for e in edits {
        let lines = |t: &str| {
            t.split_inclusive('\n')
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        match e {
            Edit::Insert(at, t) => {
                let i = boundary(&text, *at);
                text.insert_str(i, t);
            }
            Edit::Delete(at, n) | Edit::Replace(at, n, _) => {
                let i = boundary(&text, *at);
                let j = boundary(&text, i + n);
                let j = j.max(i);
                let with = match e {
                    Edit::Replace(_, _, t) => t.as_str(),
                    _ => "",
                };
                text.replace_range(i..j, with);
            }
            Edit::DuplicateLine(at) | Edit::DropLine(at) => {
                let mut l = lines(&text);
                if !l.is_empty() {
                    let i = at % l.len();
                    if matches!(e, Edit::DuplicateLine(_)) {
                        l.insert(i, l[i].clone());
                    } else {
                        l.remove(i);
                    }
                }
                text = l.concat();
            }
            Edit::SwapLines(a, b) => {
                let mut l = lines(&text);
                if !l.is_empty() {
                    let n = l.len();
                    l.swap(a % n, b % n);
                }
                text = l.concat();
            }
            Edit::Truncate(at) => {
                let i = boundary(&text, *at);
                text.truncate(i);
            }
        }
    }
    text
}

proptest! {
    #![proptest_config(config())]

    /// A mutated scenario loads or is refused with a located error; one that loads also gets
    /// its plan drawn and written as plan.json is.
    #[test]
    fn scenario_loader(pick in any::<usize>(), edits in edits(), scm_ha in any::<bool>(), seed in any::<u64>()) {
        let corpus = scenario_corpus();
        let (path, text) = &corpus[pick % corpus.len()];
        let mutated = apply(text, &edits);
        match chaos::load::load_text(path, mutated, LoadOptions { scm_ha }) {
            Ok(loaded) => {
                let plan = scenario::plan::make_plan(&loaded.spec, seed);
                serde_json::to_string(&plan).unwrap();
                let _ = loaded.resolved_text(seed);
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                for e in errors {
                    prop_assert!(!e.message.is_empty(), "{e}");
                    // The user's key path, in the user's words (issue 25).
                    prop_assert!(
                        !e.path.split('.').any(|s| s == "value" || s.starts_with("value[") || s == "?"),
                        "{e}"
                    );
                    for words in LIBRARY_WORDS {
                        prop_assert!(!e.message.contains(words), "{e}");
                    }
                }
            }
        }
    }

    /// A mutated docker-compose.yml parses or is refused; one that parses gives its profiles.
    #[test]
    fn compose_reader(edits in edits()) {
        static TEXT: OnceLock<String> = OnceLock::new();
        let path = repo().join("docker-compose.yml");
        let text = TEXT.get_or_init(|| std::fs::read_to_string(&path).unwrap());
        if let Ok(file) = ComposeFile::parse(&path, &apply(text, &edits)) {
            for profile in file.profiles() {
                let nodes = file.profile_services(&profile);
                let _ = chaos::cluster::images::images_for(&file, &nodes);
            }
        }
    }

    /// The value parsers of scenarios and the command line, on arbitrary text.
    #[test]
    fn value_parsers(text in prop_oneof![token(), "[ -~]{0,30}", (token(), token()).prop_map(|(a, b)| format!("{a}{b}"))]) {
        use chaos::scenario::units;
        let _ = units::parse_duration(&text);
        let _ = units::parse_offset(&text);
        let _ = units::Rate::parse(&text);
        let quoted = serde_json::to_string(&text).unwrap();
        let _ = serde_json::from_str::<scenario::DurRange>(&quoted);
        let _ = serde_json::from_str::<scenario::OffsetRange>(&quoted);
        let _ = text.parse::<chaos::suite::Shard>();
        let _ = text.parse::<chaos::suite::SeedRange>();
        let _ = text.parse::<checker::Format>();
        let _ = text.parse::<checker::ModelKind>();
        let _ = chaos::suite::parse(&text);
    }

    /// History files in every format the checker reads, and the check of what reads.
    #[test]
    fn history_readers(pick in any::<usize>(), edits in edits(), format in 0usize..4) {
        let histories = history_corpus();
        let text = apply(&histories[pick % histories.len()], &edits);
        let format = [checker::Format::Auto, checker::Format::Jsonl, checker::Format::Edn, checker::Format::JepsenLog][format];
        if let Ok(history) = checker::parse_str(&text, format) {
            let budget = checker::Budget::with_timeout(std::time::Duration::from_millis(200));
            for model in ["cas-register", "kv", "set", "s3-object"] {
                let _ = checker::linearizable::check(&history, model.parse().unwrap(), &budget);
            }
            let _ = checker::durable::check(&history);
            let _ = checker::retry::check(&history);
        }
    }

    /// A run folder with one file mutated: `chaos check`, `chaos report`, and the reading that
    /// `chaos run --replay` and `chaos shrink` start from (the schedule and the scenario it
    /// writes) answer or refuse, and never read outside the folder.
    #[test]
    fn run_folder_readers(pick in any::<usize>(), file in 0usize..6, edits in edits()) {
        let runs = run_corpus();
        let base = &runs[pick % runs.len()];
        let dir = scratch_copy(base);
        let name = ["history.jsonl", "faults.jsonl", "plan.json", "result.json", "scenario.yaml", "report.json"][file];
        let original = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        std::fs::write(dir.join(name), apply(&original, &edits)).unwrap();
        let _ = chaos::checks::check_path(&dir, None, "auto", Some(std::time::Duration::from_millis(200)), false);
        let _ = chaos::report::render(&dir);
        if let Ok(recorded) = chaos::replay::RecordedRun::read(&dir) {
            let text = recorded.scenario_text(&recorded.schedule, "# fuzz\n");
            let _ = chaos::load::load_text(&recorded.scenario_path, text, LoadOptions::default());
        }
        // Only a case that panicked keeps its folder (100,000 copies would fill the disk).
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A mutated suite file parses or is refused; one that parses expands into its plays and
    /// comparisons, and splits into shards.
    #[test]
    fn suite_reader(edits in edits(), shard in 1usize..4) {
        static TEXT: OnceLock<String> = OnceLock::new();
        let text = TEXT.get_or_init(|| std::fs::read_to_string(repo().join("suites/nightly.yaml")).unwrap());
        if let Ok(suite) = chaos::suite::parse(&apply(text, &edits)) {
            let base = repo().join("suites");
            let work = chaos::suite::Work {
                plays: chaos::suite::expand(&suite, &base),
                comparisons: chaos::suite::comparisons(&suite, &base),
            };
            let shard: chaos::suite::Shard = format!("{shard}/3").parse().unwrap();
            let _ = work.shard(shard);
        }
    }
}

/// Small histories of each format: the head of the recorded runs' history.jsonl, the
/// hand-made reference histories (checker/tests/histories/hard), and Porcupine's reference
/// histories when its corpus is there (`CHAOS_SHARED_DIR` or ../shared; a
/// `CHAOS_SHARED_DIR` without it, or `CHAOS_REQUIRE_SHARED=1` and none, fails).
fn history_corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut out: Vec<String> = run_corpus()
            .iter()
            .map(|d| std::fs::read_to_string(d.join("history.jsonl")).unwrap())
            .collect();
        let head = |path: &Path| {
            let text =
                std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            text.lines().take(200).collect::<Vec<_>>().join("\n")
        };
        // The hand-made reference histories the repository carries (EDN among them).
        let carried = repo().join("checker/tests/histories/hard");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&carried)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        out.extend(files.iter().map(|f| head(f)));
        if let Some(porcupine) = shared::porcupine_corpus() {
            for rel in [
                "kv/c01-bad.txt",
                "kv/c01-ok.txt",
                "jepsen/etcd_000.log",
                "jepsen/etcd_001.log",
            ] {
                out.push(head(&porcupine.join(rel)));
            }
        }
        out
    })
}

/// The recorded run folders of the report tests, cut to their first 300 history lines (a
/// check of a short history is fast, and the readers meet the same shapes), in a scratch copy.
fn run_corpus() -> &'static [PathBuf] {
    static CORPUS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let fixtures = repo().join("harness/tests/fixtures/runs");
        let root = scratch_root().join("corpus");
        let mut out = Vec::new();
        for scenario in std::fs::read_dir(&fixtures).unwrap().flatten() {
            for run in std::fs::read_dir(scenario.path()).unwrap().flatten() {
                let to = root.join(scenario.file_name()).join(run.file_name());
                copy_dir(&run.path(), &to);
                let history = std::fs::read_to_string(to.join("history.jsonl")).unwrap();
                let head: String = history.split_inclusive('\n').take(300).collect();
                std::fs::write(to.join("history.jsonl"), head).unwrap();
                out.push(to);
            }
        }
        out.sort();
        out
    })
}

fn scratch_root() -> PathBuf {
    let dir = repo()
        .join("target/tmp")
        .join(format!("fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fresh copy of a corpus run folder for one input (the report writes into it).
fn scratch_copy(base: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = scratch_root()
        .join("cases")
        .join(N.fetch_add(1, Ordering::Relaxed).to_string());
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(base, &dir);
    // A link that leads out of the folder must never be followed.
    let _ = std::os::unix::fs::symlink("/etc/passwd", dir.join("logs/outside.log"));
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The inputs that crashed chaos before (harness/tests/fuzz-regressions/), each still an
/// error with its position, not a panic.
#[test]
fn inputs_that_once_crashed() {
    let dir = repo().join("harness/tests/fuzz-regressions");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = e.path();
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with(".suite.yaml") {
            // A suite file: refused with the limit it passed.
            let e = chaos::suite::parse(&text).expect_err("refused");
            assert!(
                e.line > 0 && (e.message.contains("at most") || e.message.contains("largest")),
                "{name}: {e}"
            );
            seen += 1;
            continue;
        }
        match ext {
            "yaml" => {
                let errors = chaos::load::load_text(&path, text, LoadOptions::default())
                    .expect_err("refused");
                assert!(errors.iter().all(|e| e.line > 0), "{errors:?}");
            }
            "txt" => {
                // One value per line, as a flag would take it: every one is refused.
                for line in text.lines().filter(|l| !l.starts_with('#')) {
                    assert!(scenario::units::parse_duration(line).is_err(), "{line}");
                    assert!(scenario::units::parse_offset(line).is_err(), "{line}");
                }
            }
            _ => continue,
        }
        seen += 1;
    }
    assert!(seen >= 3, "only {seen} regression inputs");
}
