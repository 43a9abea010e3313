//! The reference histories the repository carries (tests/histories, EXPECTED.tsv; how each was
//! made: tests/histories/README.md) get their expected verdicts: recorded runs of real etcd,
//! Redis and Ozone, the generator's histories (whose verdicts hold by construction), and cases
//! made by hand. A plain clone runs these; Porcupine's corpus is tests/porcupine.rs.

#[path = "../examples/reference_histories.rs"]
mod reference_histories;

use checker::linearizable::{check, Budget};
use checker::{read_history, Format, ModelKind, Verdict};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/histories")
}

/// EXPECTED.tsv's rows: file, model, expected verdict.
fn table() -> Vec<(String, ModelKind, Verdict)> {
    let text = std::fs::read_to_string(dir().join("EXPECTED.tsv")).unwrap();
    text.lines()
        .skip(1)
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 4, "EXPECTED.tsv: {line}");
            let expected = match cols[2] {
                "ok" => Verdict::Ok,
                "illegal" => Verdict::Illegal,
                other => panic!("{}: unknown expected verdict {other}", cols[0]),
            };
            (cols[0].to_string(), cols[1].parse().unwrap(), expected)
        })
        .collect()
}

#[test]
fn every_carried_history_gets_its_expected_verdict() {
    let mut wrong = Vec::new();
    let rows = table();
    for (file, model, expected) in &rows {
        let history =
            read_history(&dir().join(file), Format::Auto).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!history.ops.is_empty(), "{file}: no operation");
        let budget = Budget::with_timeout(Duration::from_secs(120));
        let result = check(&history, *model, &budget).unwrap_or_else(|e| panic!("{file}: {e}"));
        if result.verdict != *expected {
            wrong.push(format!(
                "{file}: expected {expected}, got {}",
                result.verdict
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Each kind is there, both verdicts of each.
    for kind in ["runs/", "generated/", "hard/"] {
        for verdict in [Verdict::Ok, Verdict::Illegal] {
            assert!(
                rows.iter()
                    .any(|(f, _, v)| f.starts_with(kind) && *v == verdict),
                "no {verdict} history in {kind}"
            );
        }
    }
    for system in ["etcd", "redis", "ozone"] {
        assert!(
            rows.iter()
                .any(|(f, _, _)| f.starts_with(&format!("runs/{system}-"))),
            "no recorded {system} run"
        );
    }
}

/// Every file of the folder is in EXPECTED.tsv (none checked by nobody), and the folder stays
/// small.
#[test]
fn every_file_is_listed_and_the_folder_is_small() {
    let listed: BTreeSet<String> = table().into_iter().map(|(f, _, _)| f).collect();
    let mut found = BTreeSet::new();
    let mut bytes = 0;
    for sub in ["runs", "generated", "hard"] {
        for e in std::fs::read_dir(dir().join(sub)).unwrap().flatten() {
            bytes += e.metadata().unwrap().len();
            found.insert(format!("{sub}/{}", e.file_name().to_string_lossy()));
        }
    }
    assert_eq!(found, listed);
    assert!(bytes < 4 << 20, "{bytes} bytes");
}

/// The generated histories are the generator's output, byte for byte, and their expected
/// verdict is the one the generator built in.
#[test]
fn generated_histories_are_the_generators() {
    let rows = table();
    let specs = reference_histories::specs();
    assert_eq!(
        specs.len(),
        rows.iter()
            .filter(|(f, _, _)| f.starts_with("generated/"))
            .count()
    );
    for (file, spec) in specs {
        let (text, expected) = reference_histories::jsonl(&spec);
        let rel = format!("generated/{file}");
        let on_disk = std::fs::read_to_string(dir().join(&rel)).unwrap();
        assert!(
            on_disk == text,
            "{rel} differs from the generator's (cargo run --release -p checker --example reference_histories -- {})",
            Path::new("checker/tests/histories/generated").display()
        );
        let row = rows.iter().find(|(f, _, _)| *f == rel).expect("listed");
        assert_eq!((row.1, row.2), (spec.model, expected), "{rel}");
    }
}
