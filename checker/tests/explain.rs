//! The explanation of a known violation has the promised shape: on the histories the
//! repository carries (tests/histories), and on Porcupine's etcd_000 when its corpus is there
//! (tests/shared).

mod shared;

use checker::linearizable::{check, Budget};
use checker::{read_history, Format, ModelKind, Verdict};
use std::path::PathBuf;

fn carried(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/histories")
        .join(file)
}

/// The hand-made stale read: write 1 (acknowledged on line 2), write 2 (acknowledged on
/// line 4), then a read (invoked on line 5, answered on line 6) returns 1.
#[test]
fn a_stale_read_is_named_with_the_write_it_missed() {
    let h = read_history(&carried("hard/stale-read.jsonl"), Format::Auto).unwrap();
    let r = check(&h, ModelKind::Register, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Illegal);
    let e = r.explanation().expect("an explanation");
    assert_eq!(e.op.f, "read");
    assert_eq!(e.op.output, serde_json::json!(1));
    assert_eq!(e.op.line, 5);
    assert_eq!(e.op.complete, Some(5));
    assert_eq!(e.needs, "value 1");
    assert_eq!(e.states, vec!["2".to_string()]);
    let after = e.after.as_ref().expect("the write that overwrote it");
    assert_eq!(
        (after.f.as_str(), after.value.clone()),
        ("write", serde_json::json!(2))
    );
    assert!(e.prefix_confirmed);
    assert_eq!(Some(e.prefix_end_event), e.op.complete);
}

/// The recorded etcd run with serializable reads: the read named is one whose value had been
/// overwritten by an acknowledged write before it began, and its line in the file is that read.
#[test]
fn the_recorded_etcd_stale_read_is_explained_by_its_own_lines() {
    let path = carried("runs/etcd-stale-reads-s1.jsonl");
    let h = read_history(&path, Format::Auto).unwrap();
    let r = check(&h, ModelKind::CasRegister, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Illegal);
    let e = r.explanation().expect("an explanation");
    assert_eq!(e.op.f, "read");
    // The line named is the read's invocation in the file; its completion returned the value.
    let text = std::fs::read_to_string(&path).unwrap();
    let line = |n: usize| -> serde_json::Value {
        serde_json::from_str(text.lines().nth(n).unwrap()).unwrap()
    };
    let complete = e.op.complete.expect("the read completed");
    assert_eq!(
        (
            line(e.op.line - 1)["f"].clone(),
            line(e.op.line - 1)["type"].clone()
        ),
        (serde_json::json!("read"), serde_json::json!("invoke"))
    );
    assert_eq!(line(complete)["type"], "ok");
    assert_eq!(line(complete)["value"], e.op.output);
    assert!(!e.states.contains(&e.op.output.to_string()));
    assert!(e.prefix_confirmed);
    // Cut just after the shortest illegal prefix, the history is still illegal; cut before
    // the read's completion, it is not.
    let keep = |n: usize| text.lines().take(n).collect::<Vec<_>>().join("\n");
    let at = |n: usize| {
        let h = checker::parse_str(&keep(n), Format::Jsonl).unwrap();
        check(&h, ModelKind::CasRegister, &Budget::default())
            .unwrap()
            .verdict
    };
    assert_eq!(at(e.prefix_end_event + 1), Verdict::Illegal);
    assert_eq!(at(complete), Verdict::Ok);
}

#[test]
fn etcd_000_names_the_operation_and_the_longest_linearization() {
    let Some(dir) = shared::porcupine_corpus() else {
        return;
    };
    let h = read_history(&dir.join("jepsen/etcd_000.log"), Format::Auto).unwrap();
    let r = check(&h, ModelKind::CasRegister, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Illegal);
    let e = r.explanation().expect("an explanation");
    let json = serde_json::to_value(&r).unwrap();
    if std::env::var_os("SHOW").is_some() {
        println!(
            "{}",
            serde_json::to_string_pretty(&json["partitions"][0]["explanation"]).unwrap()
        );
    }
    // The stale read is named, with what it needed and what ruled it out.
    assert_eq!(e.op.f, "read");
    assert_eq!(e.op.output, serde_json::json!(2));
    assert_eq!(e.op.line, 85);
    assert_eq!(e.needs, "value 2");
    assert_eq!(e.states, vec!["1".to_string()]);
    let after = e.after.as_ref().expect("the write that overwrote it");
    assert_eq!(
        (after.f.as_str(), after.value.clone()),
        ("write", serde_json::json!(1))
    );
    // The longest partial linearization is there, in order, with states.
    assert!(
        e.longest_linearization.len() >= 20,
        "{}",
        e.longest_linearization.len()
    );
    assert_eq!(e.longest_linearization[0].op.f, "read");
    assert_eq!(e.longest_linearization[0].state, "nil");
    // The shortest illegal prefix ends with the read's completion.
    assert!(e.prefix_confirmed);
    assert_eq!(Some(e.prefix_end_event), e.op.complete);
    assert!(
        e.message.contains("read -> 2") && e.message.contains("line 85"),
        "{}",
        e.message
    );
    // The JSON a report draws.
    let ex = &json["partitions"][0]["explanation"];
    for field in [
        "message",
        "op",
        "needs",
        "states",
        "after",
        "prefix_end_event",
        "longest_linearization",
    ] {
        assert!(!ex[field].is_null(), "missing {field}");
    }
    assert_eq!(json["verdict"], "illegal");
    assert_eq!(json["model"], "cas-register");
}
