//! Every history in Porcupine's corpus (its EXPECTED.tsv) gets the verdict Porcupine's own
//! test suite asserts. The corpus is not in the repository: these tests run when
//! `CHAOS_SHARED_DIR` names it or `../shared` holds it (tests/shared), and do nothing otherwise
//! (scripts/test says so; `CHAOS_REQUIRE_SHARED=1` makes that a failure). The histories the
//! repository carries are checked by tests/reference.rs.

mod shared;

use checker::linearizable::{check, Budget};
use checker::{read_history, Format, ModelKind, Verdict};
use std::time::Duration;

#[test]
fn expected_verdicts() {
    let Some(dir) = shared::porcupine_corpus() else {
        return;
    };
    let table = std::fs::read_to_string(dir.join("EXPECTED.tsv")).unwrap();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, model, expected) = (cols[0], cols[1], cols[3]);
        let model: ModelKind = model.parse().unwrap();
        let history =
            read_history(&dir.join(file), Format::Auto).unwrap_or_else(|e| panic!("{file}: {e}"));
        let budget = Budget::with_timeout(Duration::from_secs(120));
        let result = check(&history, model, &budget).unwrap_or_else(|e| panic!("{file}: {e}"));
        let expected = match expected {
            "ok" => Verdict::Ok,
            "illegal" => Verdict::Illegal,
            other => panic!("{file}: unknown expected verdict {other}"),
        };
        if result.verdict != expected {
            wrong.push(format!(
                "{file}: expected {expected}, got {}",
                result.verdict
            ));
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(checked, 108);
}

#[test]
fn empty_history_is_ok() {
    let Some(dir) = shared::porcupine_corpus() else {
        return;
    };
    let h = read_history(&dir.join("jepsen/etcd_095.log"), Format::Auto).unwrap();
    let r = check(&h, ModelKind::CasRegister, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Ok);
}
