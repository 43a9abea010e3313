//! durable, retry-consistent and counts on small hand-made histories, plus the
//! API the harness relies on.

use checker::history::{Event, EventType, History};
use checker::{counts, durable, retry, ModelKind, Verdict};
use serde_json::{json, Value};

fn ev(p: u64, t: EventType, f: &str, key: Option<&str>, v: Value) -> Event {
    Event::new(p, t, f, key, v)
}

#[test]
fn durable_lists_lost_and_unexpected() {
    use EventType::*;
    let h = History::from_events(vec![
        ev(0, Invoke, "add", Some("s"), json!(1)),
        ev(0, Ok, "add", Some("s"), json!(1)),
        ev(0, Invoke, "add", Some("s"), json!(2)),
        ev(0, Ok, "add", Some("s"), json!(2)),
        ev(1, Invoke, "add", Some("s"), json!(3)),
        ev(1, Info, "add", Some("s"), Value::Null),
        ev(2, Invoke, "final-read", Some("s"), Value::Null),
        ev(2, Ok, "final-read", Some("s"), json!([1, 3, 9])),
    ])
    .unwrap();
    let r = durable::check(&h);
    assert_eq!(r.verdict, Verdict::Illegal);
    assert_eq!(r.acknowledged, 2);
    assert_eq!(r.recovered, 1);
    assert_eq!(r.lost.len(), 1);
    assert_eq!(r.lost[0].value, json!(2));
    assert_eq!(r.unexpected.len(), 1);
    assert_eq!(r.unexpected[0].value, json!(9));
    assert!(
        r.text().contains("1 of 2 acknowledged writes lost"),
        "{}",
        r.text()
    );
}

/// The lease workload's files: an acknowledged close at a length must be in the final read;
/// hsync and recover-lease are not writes; a file still open reads as nothing closed.
#[test]
fn durable_checks_acknowledged_closes() {
    use EventType::*;
    let h = History::from_events(vec![
        ev(0, Invoke, "hsync", Some("f0"), json!(1024)),
        ev(0, Ok, "hsync", Some("f0"), json!(1024)),
        ev(1, Invoke, "recover-lease", Some("f0"), Value::Null),
        ev(1, Fail, "recover-lease", Some("f0"), Value::Null),
        ev(0, Invoke, "close", Some("f0"), json!(2048)),
        ev(0, Ok, "close", Some("f0"), json!(2048)),
        ev(2, Invoke, "hsync", Some("f1"), json!(1024)),
        ev(2, Ok, "hsync", Some("f1"), json!(1024)),
        ev(2, Invoke, "close", Some("f1"), json!(2048)),
        ev(2, Fail, "close", Some("f1"), json!(2048)),
        ev(4, Invoke, "final-read", Some("f0"), Value::Null),
        ev(4, Ok, "final-read", Some("f0"), json!([])),
        ev(5, Invoke, "final-read", Some("f1"), Value::Null),
        ev(5, Ok, "final-read", Some("f1"), json!([])),
    ])
    .unwrap();
    let r = durable::check(&h);
    assert_eq!(r.verdict, Verdict::Illegal);
    assert_eq!(r.acknowledged, 1);
    assert_eq!(r.lost.len(), 1);
    assert_eq!(r.lost[0].key.as_deref(), Some("f0"));
    assert_eq!(r.lost[0].value, json!(2048));
    assert!(r.unexpected.is_empty());
}

#[test]
fn durable_without_final_reads_is_unknown() {
    use EventType::*;
    let h = History::from_events(vec![
        ev(0, Invoke, "write", None, json!(1)),
        ev(0, Ok, "write", None, json!(1)),
    ])
    .unwrap();
    assert_eq!(durable::check(&h).verdict, Verdict::Unknown);
}

#[test]
fn retry_lists_duplicates_and_disagreements() {
    use EventType::*;
    let with = |mut e: Event, client: &str, call: &str| {
        e.client = Some(client.into());
        e.call = Some(call.into());
        e
    };
    let h = History::from_events(vec![
        with(ev(0, Invoke, "create", Some("k"), json!("a")), "c1", "7"),
        with(ev(0, Info, "create", Some("k"), Value::Null), "c1", "7"),
        with(ev(1, Invoke, "create", Some("k"), json!("a")), "c1", "7"),
        with(ev(1, Ok, "create", Some("k"), json!("created")), "c1", "7"),
        with(ev(2, Invoke, "create", Some("k"), json!("a")), "c1", "7"),
        with(ev(2, Fail, "create", Some("k"), json!("exists")), "c1", "7"),
        with(ev(3, Invoke, "create", Some("j"), json!("b")), "c2", "1"),
        with(ev(3, Ok, "create", Some("j"), json!("created")), "c2", "1"),
        with(ev(4, Invoke, "create", Some("j"), json!("b")), "c2", "1"),
        with(ev(4, Ok, "create", Some("j"), json!("created")), "c2", "1"),
    ])
    .unwrap();
    let r = retry::check(&h);
    assert_eq!(r.verdict, Verdict::Illegal);
    assert_eq!(r.duplicates.len(), 2);
    assert_eq!(r.inconsistent, 1);
    assert!(r.text().contains("client c1 call 7"), "{}", r.text());
}

/// Ozone's create learns its rename's call id while it runs: the identity comes on the
/// completion. A later resend of the answered call (f `resend`) answered differently is a
/// disagreement; the linearizability models leave resends out.
#[test]
fn retry_identity_on_the_completion_and_resends() {
    use EventType::*;
    let with = |mut e: Event, client: &str, call: &str| {
        e.client = Some(client.into());
        e.call = Some(call.into());
        e
    };
    let h = History::from_events(vec![
        ev(0, Invoke, "cas", Some("c1"), json!([null, 1])),
        with(ev(0, Ok, "cas", Some("c1"), json!([null, 1])), "cl", "2"),
        ev(0, Invoke, "resend", Some("c1"), json!([null, 1])),
        with(
            ev(0, Fail, "resend", Some("c1"), json!([null, 1])),
            "cl",
            "2",
        ),
        ev(1, Invoke, "read", Some("c1"), Value::Null),
        ev(1, Ok, "read", Some("c1"), json!(1)),
    ])
    .unwrap();
    assert_eq!(h.ops[0].client.as_deref(), Some("cl"));
    assert_eq!(h.ops[0].call.as_deref(), Some("2"));
    let r = retry::check(&h);
    assert_eq!(r.verdict, Verdict::Illegal);
    assert_eq!(r.inconsistent, 1);
    let lin = checker::linearizable::check(
        &h,
        ModelKind::CasRegister,
        &checker::linearizable::Budget::default(),
    )
    .unwrap();
    assert_eq!(lin.verdict, Verdict::Ok);
}

#[test]
fn counts_per_kind() {
    use EventType::*;
    let h = History::from_events(vec![
        ev(0, Invoke, "read", None, Value::Null),
        ev(0, Ok, "read", None, json!(1)),
        ev(1, Invoke, "write", None, json!(2)),
        ev(1, Info, "write", None, Value::Null),
        ev(2, Invoke, "write", None, json!(3)),
        ev(2, Fail, "write", None, json!(3)),
        ev(3, Invoke, "write", None, json!(4)),
    ])
    .unwrap();
    let c = counts::summarize(&h);
    assert_eq!(c.operations, 4);
    assert_eq!((c.all.ok, c.all.fail, c.all.info), (1, 1, 2));
    assert_eq!(c.pending, 1);
    assert_eq!(c.by_f["write"].info, 2);
    assert!(c.text().contains("read 1/0/0"), "{}", c.text());
}

#[test]
fn model_names_round_trip_and_unknown_names_list_the_valid_ones() {
    for name in ModelKind::NAMES {
        let m: ModelKind = name.parse().unwrap();
        assert_eq!(m.name(), *name);
    }
    let e = "regster".parse::<ModelKind>().unwrap_err();
    for name in ModelKind::NAMES {
        assert!(e.contains(name), "{e}");
    }
}

#[test]
fn exit_codes() {
    assert_eq!(Verdict::Ok.exit_code(), 0);
    assert_eq!(Verdict::Illegal.exit_code(), 1);
    assert_eq!(Verdict::Unknown.exit_code(), 2);
}

#[test]
fn stale_read_on_a_key_names_the_key_and_the_read() {
    use checker::linearizable::{check, Budget};
    use EventType::*;
    let h = History::from_events(vec![
        ev(0, Invoke, "write", Some("k3"), json!(17)),
        ev(0, Ok, "write", Some("k3"), json!(17)),
        ev(0, Invoke, "write", Some("k3"), json!(23)),
        ev(0, Ok, "write", Some("k3"), json!(23)),
        ev(4, Invoke, "read", Some("k3"), Value::Null),
        ev(4, Ok, "read", Some("k3"), json!(17)),
        ev(1, Invoke, "read", Some("k1"), Value::Null),
        ev(1, Ok, "read", Some("k1"), Value::Null),
    ])
    .unwrap();
    let r = check(&h, ModelKind::CasRegister, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Illegal);
    let e = r.explanation().unwrap();
    assert_eq!(e.key.as_deref(), Some("k3"));
    assert_eq!(e.op.process, 4);
    assert_eq!(e.op.output, json!(17));
    let text = checker::render(&r);
    assert!(text.contains("key k3: read -> 17"), "{text}");
    assert!(text.contains("write 23"), "{text}");
}

#[test]
fn bad_operations_are_errors_not_verdicts() {
    use checker::linearizable::{check, Budget};
    use EventType::*;
    let h = History::from_events(vec![
        ev(0, Invoke, "cas", None, json!(3)),
        ev(0, Ok, "cas", None, json!(3)),
    ])
    .unwrap();
    let e = check(&h, ModelKind::CasRegister, &Budget::default()).unwrap_err();
    assert!(e.to_string().contains("cas needs [expected new]"), "{e}");
    let e = check(&h, ModelKind::Register, &Budget::default()).unwrap_err();
    assert!(e.to_string().contains("valid: read, write"), "{e}");
}

#[test]
fn budget_exhaustion_is_unknown_and_names_the_partition() {
    use checker::linearizable::{check, Budget};
    use std::time::Duration;
    // The budget is first looked at on the first step: a zero timeout answers
    // unknown, naming the key, without searching.
    let mut evs = Vec::new();
    for p in 0..4u64 {
        evs.push(ev(p, EventType::Invoke, "write", Some("x"), json!(p)));
    }
    for p in 0..4u64 {
        evs.push(ev(p, EventType::Ok, "write", Some("x"), json!(p)));
    }
    let h = History::from_events(evs).unwrap();
    let budget = Budget {
        timeout: Duration::ZERO,
        ..Budget::default()
    };
    let r = check(&h, ModelKind::CasRegister, &budget).unwrap();
    assert_eq!(r.verdict, Verdict::Unknown);
    assert_eq!(r.partitions[0].key.as_deref(), Some("x"));
    let u = r.partitions[0].unknown.as_ref().unwrap();
    assert!(u.reason.contains("time"), "{}", u.reason);
    assert!(
        checker::render(&r).contains("key x"),
        "{}",
        checker::render(&r)
    );
    // The search's visited-state cache is capped; the reads-from procedure (these writes are
    // unique) keeps no cache and decides.
    let budget = Budget {
        max_memory: 0,
        route: checker::Route::Search,
        ..Budget::default()
    };
    let r = check(&h, ModelKind::CasRegister, &budget).unwrap();
    assert_eq!(r.verdict, Verdict::Unknown);
    let budget = Budget {
        max_memory: 0,
        ..Budget::default()
    };
    let r = check(&h, ModelKind::CasRegister, &budget).unwrap();
    assert_eq!(r.verdict, Verdict::Ok);
    assert_eq!(r.partitions[0].procedure, checker::Procedure::ReadsFrom);
}

/// Recorded on Ceph RGW 16.2 (ceph/register-faults, 2026-12-02): a PUT If-Match the current
/// ETag and a DELETE of the key, run at once and both acknowledged, then a GET of the PUT's
/// body. In either order one of them could not have answered so, and the s3-object model says
/// so (the cut of key o0 around 46.5 s of that run, values as recorded).
#[test]
fn a_conditional_put_and_a_delete_that_both_succeed_leave_no_order() {
    use checker::linearizable::{check, Budget};
    use EventType::*;
    let put = |body: &str| json!({ "body": body });
    let h = History::from_events(vec![
        ev(2, Invoke, "put", Some("o0"), put("b365")),
        ev(2, Ok, "put", Some("o0"), json!({ "etag": "ddcde862" })),
        ev(
            2,
            Invoke,
            "put",
            Some("o0"),
            json!({ "body": "b373", "if_match": "ddcde862" }),
        ),
        ev(6, Invoke, "delete", Some("o0"), Value::Null),
        ev(2, Ok, "put", Some("o0"), json!({ "etag": "7c401d01" })),
        ev(6, Ok, "delete", Some("o0"), Value::Null),
        ev(2, Invoke, "get", Some("o0"), Value::Null),
        ev(
            2,
            Ok,
            "get",
            Some("o0"),
            json!({ "body": "b373", "etag": "7c401d01" }),
        ),
    ])
    .unwrap();
    let r = check(&h, ModelKind::S3Object, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Illegal, "{}", checker::render(&r));
    let text = checker::render(&r);
    assert!(text.contains("key o0"), "{text}");

    // Without the delete's acknowledgement (it may not have taken effect), it is legal.
    let mut events = h.events.clone();
    events[5] = ev(6, Info, "delete", Some("o0"), Value::Null);
    let h = History::from_events(events).unwrap();
    let r = check(&h, ModelKind::S3Object, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Ok, "{}", checker::render(&r));
}

/// Staleness against a bound: a follower's read of a value overwritten 7 s before the read
/// began is over a 5 s bound; one 1 s stale is within it; a read of the newest value, or one
/// concurrent with the overwrite, is not stale at all. Ages are measured from the earliest
/// acknowledged overwrite invoked after the value's write was acknowledged.
#[test]
fn staleness_measures_each_read_against_the_bound() {
    use checker::stale::staleness;
    use EventType::*;
    let s = 1_000_000_000u64;
    let at = |t: u64, node: &str, e: Event| Event {
        time: t,
        node: Some(node.to_string()),
        ..e
    };
    let h = History::from_events(vec![
        at(0, "om1", ev(0, Invoke, "write", Some("k"), json!(1))),
        at(s, "om1", ev(0, Ok, "write", Some("k"), json!(1))),
        at(2 * s, "om1", ev(0, Invoke, "write", Some("k"), json!(2))),
        at(3 * s, "om1", ev(0, Ok, "write", Some("k"), json!(2))),
        // om2: 1 s after 2 overwrote 1 (within 5 s).
        at(4 * s, "om2", ev(1, Invoke, "read", Some("k"), Value::Null)),
        at(4 * s + 1, "om2", ev(1, Ok, "read", Some("k"), json!(1))),
        // om3: 7 s after (over 5 s).
        at(10 * s, "om3", ev(2, Invoke, "read", Some("k"), Value::Null)),
        at(10 * s + 1, "om3", ev(2, Ok, "read", Some("k"), json!(1))),
        // om1: the newest value.
        at(11 * s, "om1", ev(3, Invoke, "read", Some("k"), Value::Null)),
        at(11 * s + 1, "om1", ev(3, Ok, "read", Some("k"), json!(2))),
    ])
    .unwrap();
    let r = staleness(&h, 5 * s);
    assert_eq!(r.verdict, Verdict::Illegal, "{}", r.text());
    assert_eq!((r.reads_checked, r.stale, r.over_bound), (3, 2, 1));
    assert_eq!(r.nodes["om3"].max_ns, 7 * s);
    assert_eq!(r.nodes["om2"].max_ns, s);
    assert_eq!(r.nodes["om1"].stale, 0);
    let stalest = r.stalest.as_ref().unwrap();
    assert!(
        stalest.message.contains("served by om3"),
        "{}",
        stalest.message
    );
    assert!(r.text().contains("2 of 3 reads stale"), "{}", r.text());
    assert_eq!(staleness(&h, 8 * s).verdict, Verdict::Ok);
    // No read to measure: not a pass.
    let writes_only = History::from_events(vec![
        ev(0, Invoke, "write", Some("k"), json!(1)),
        ev(0, Ok, "write", Some("k"), json!(1)),
    ])
    .unwrap();
    assert_eq!(staleness(&writes_only, s).verdict, Verdict::Unknown);
}
