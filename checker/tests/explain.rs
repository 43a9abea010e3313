//! The explanation of a known violation has the promised shape.

use checker::linearizable::{check, Budget};
use checker::{read_history, Format, ModelKind, Verdict};
use std::path::PathBuf;

fn porcupine(file: &str) -> PathBuf {
    let dir = match std::env::var_os("CHAOS_SHARED_DIR") {
        Some(d) => PathBuf::from(d).join("histories/porcupine"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories/porcupine"),
    };
    let p = dir.join(file);
    assert!(p.is_file(), "missing shared history {}", p.display());
    p
}

#[test]
fn etcd_000_names_the_operation_and_the_longest_linearization() {
    let h = read_history(&porcupine("jepsen/etcd_000.log"), Format::Auto).unwrap();
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
