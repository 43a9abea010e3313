//! Failover, bounded retries, outcome classification and resend, against fake OMs on loopback
//! that speak the Hadoop RPC framing (tests/common).

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{always, always_ok, closed_port, spawn_om, Reply};
use ozone_rpc::{
    ClientConfig, OmClient, OmError, OmRequest, OmRequestBody, OmResponse, Outcome, Status,
};

fn quick() -> ClientConfig {
    ClientConfig {
        connect_timeout: Duration::from_secs(2),
        call_timeout: Duration::from_secs(5),
        max_attempts: 6,
        not_ready_backoff: Duration::from_millis(20),
        ..ClientConfig::default()
    }
}

fn rename() -> OmRequest {
    OmRequest::rename_key("vol", "bkt", "a", "b")
}

#[tokio::test]
async fn not_leader_naming_the_second_om_fails_over_to_it() {
    let om1 = spawn_om(always(Reply::not_leader(
        "OM:om1 is not the leader. Suggested leader is OM:om2[om2:9862].",
    )))
    .await;
    let om2 = spawn_om(always_ok()).await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr], "chaos")
        .with_node_ids(&["om1", "om2"])
        .with_config(quick());
    let resp = c.call(rename()).await.unwrap();
    assert_eq!(resp.status, Status::OK);
    assert_eq!(c.current(), om2.addr);
    let (a, b) = (om1.calls(), om2.calls());
    assert_eq!((a.len(), b.len()), (1, 1));
    // One call: the same client id and call id, retryCount counting up as Hadoop's
    // RetryInvocationHandler does.
    assert_eq!(a[0].header.client_id, b[0].header.client_id);
    assert_eq!(a[0].header.call_id, b[0].header.call_id);
    assert_eq!((a[0].header.retry_count, b[0].header.retry_count), (0, 1));
    assert_eq!(a[0].request, b[0].request);
    assert_eq!(b[0].user.as_deref(), Some("chaos"));
    assert_eq!(
        b[0].protocol.as_deref(),
        Some("org.apache.hadoop.ozone.om.protocol.OzoneManagerProtocol")
    );
    // The record names both OMs and holds the last frame.
    let rec = c.last_call().unwrap();
    assert_eq!(rec.sent_to, vec![om1.addr, om2.addr]);
    assert_eq!(rec.frame, b[0].frame);
    // The next call goes straight to om2 on the same connection.
    c.call(rename()).await.unwrap();
    assert_eq!(om1.calls().len(), 1);
    assert_eq!(om2.calls().len(), 2);
    assert_eq!(om2.connection_count(), 1);
    assert_eq!(om2.calls()[1].header.call_id, b[0].header.call_id + 1);
}

#[tokio::test]
async fn the_suggested_leader_is_followed_not_the_next_om() {
    let om1 = spawn_om(always(Reply::not_leader(
        "OM:om1 is not the leader. Suggested leader is OM:om3.",
    )))
    .await;
    let om2 = spawn_om(always_ok()).await;
    let om3 = spawn_om(always_ok()).await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr, om3.addr], "chaos")
        .with_node_ids(&["om1", "om2", "om3"])
        .with_config(quick());
    c.call(rename()).await.unwrap();
    assert_eq!(om2.calls().len(), 0);
    assert_eq!(om3.calls().len(), 1);
}

#[tokio::test]
async fn a_suggested_address_is_matched_without_node_ids() {
    let om3 = spawn_om(always_ok()).await;
    let msg = format!(
        "OM:om1 is not the leader. Suggested leader is OM:om3 at om3.cluster.local:{} (ip=127.0.0.1).",
        om3.addr.port()
    );
    let om1 = spawn_om(always(Reply::not_leader(&msg))).await;
    let om2 = spawn_om(always_ok()).await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr, om3.addr], "chaos").with_config(quick());
    c.call(rename()).await.unwrap();
    assert_eq!(om2.calls().len(), 0);
    assert_eq!(om3.calls().len(), 1);
}

#[tokio::test]
async fn not_leader_without_a_suggestion_tries_the_next_om() {
    let om1 = spawn_om(always(Reply::not_leader(
        "OM:om1 is not the leader. Could not determine the leader node.",
    )))
    .await;
    let om2 = spawn_om(always_ok()).await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr], "chaos").with_config(quick());
    c.call(rename()).await.unwrap();
    assert_eq!(om2.calls().len(), 1);
}

#[tokio::test]
async fn leader_not_ready_waits_and_retries_the_same_om() {
    let n = Arc::new(Mutex::new(0));
    let n2 = n.clone();
    let om1 = spawn_om(Arc::new(move |req: &OmRequest, _: &_| {
        let mut n = n2.lock().unwrap();
        *n += 1;
        if *n < 3 {
            Reply::not_ready("om1 is Leader but not ready to process request yet.")
        } else {
            Reply::ok(OmResponse::new(req.cmd_type(), Status::OK))
        }
    }))
    .await;
    let om2 = spawn_om(always_ok()).await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr], "chaos").with_config(quick());
    c.call(rename()).await.unwrap();
    let calls = om1.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls
            .iter()
            .map(|r| r.header.retry_count)
            .collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(calls
        .iter()
        .all(|r| r.header.call_id == calls[0].header.call_id));
    assert_eq!(om1.connection_count(), 1);
    assert_eq!(om2.calls().len(), 0);
}

#[tokio::test]
async fn a_refused_om_is_skipped() {
    let dead = closed_port().await;
    let om2 = spawn_om(always_ok()).await;
    let mut c = OmClient::connect(vec![dead, om2.addr], "chaos").with_config(quick());
    c.call(rename()).await.unwrap();
    assert_eq!(c.last_call().unwrap().sent_to, vec![om2.addr]);
}

#[tokio::test]
async fn attempts_are_bounded_and_the_outcome_is_fail() {
    let om1 = spawn_om(always(Reply::not_leader(
        "OM:om1 is not the leader. Suggested leader is OM:om2.",
    )))
    .await;
    let om2 = spawn_om(always(Reply::not_leader(
        "OM:om2 is not the leader. Suggested leader is OM:om1.",
    )))
    .await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr], "chaos")
        .with_node_ids(&["om1", "om2"])
        .with_config(ClientConfig {
            max_attempts: 5,
            ..quick()
        });
    let err = c.call(rename()).await.unwrap_err();
    assert!(matches!(err, OmError::GaveUp { attempts: 5, .. }), "{err}");
    assert!(matches!(err.last(), OmError::NotLeader { .. }));
    assert_eq!(err.outcome(), Outcome::Fail);
    assert_eq!(om1.calls().len() + om2.calls().len(), 5);
}

#[tokio::test]
async fn every_om_refusing_is_fail() {
    let (a, b) = (closed_port().await, closed_port().await);
    let mut c = OmClient::connect(vec![a, b], "chaos").with_config(ClientConfig {
        max_attempts: 3,
        ..quick()
    });
    let err = c.call(rename()).await.unwrap_err();
    assert!(matches!(err.last(), OmError::Connect { .. }), "{err}");
    assert_eq!(err.outcome(), Outcome::Fail);
    assert!(c.last_call().unwrap().sent_to.is_empty());
}

#[tokio::test]
async fn a_timeout_after_sending_is_info_and_not_retried() {
    let om1 = spawn_om(always(Reply::Silent)).await;
    let om2 = spawn_om(always_ok()).await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr], "chaos").with_config(ClientConfig {
        call_timeout: Duration::from_millis(200),
        ..quick()
    });
    let err = c.call(rename()).await.unwrap_err();
    assert!(matches!(err, OmError::Timeout { .. }), "{err}");
    assert_eq!(err.outcome(), Outcome::Info);
    assert_eq!(om2.calls().len(), 0);
}

#[tokio::test]
async fn a_reset_after_sending_is_info() {
    let om1 = spawn_om(always(Reply::Drop)).await;
    let mut c = OmClient::connect(vec![om1.addr], "chaos").with_config(quick());
    let err = c.call(rename()).await.unwrap_err();
    assert!(matches!(err, OmError::Io { .. }), "{err}");
    assert_eq!(err.outcome(), Outcome::Info);
    // The next call dials a new connection.
    let _ = c.call(rename()).await;
    assert_eq!(om1.connection_count(), 2);
}

#[tokio::test]
async fn a_closed_pooled_connection_is_redialled_before_sending() {
    let om1 = spawn_om(always_ok()).await;
    let addr = om1.addr;
    let mut c = OmClient::connect(vec![addr], "chaos").with_config(quick());
    c.call(rename()).await.unwrap();
    // Kill the OM (its connections close) and start another on the same port.
    om1.stop();
    drop(om1);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let listener = tokio::net::TcpListener::bind(addr).await;
    let Ok(listener) = listener else {
        return; // the port was taken meanwhile: nothing to check
    };
    drop(listener);
    let om1b = common::spawn_om_at(addr, always_ok()).await;
    let resp = c.call(rename()).await.unwrap();
    assert!(resp.is_ok());
    assert_eq!(om1b.calls().len(), 1);
}

/// A fake OM with Ozone's retry cache: (client id, call id) -> the first answer. Restarting it
/// loses the cache, as a restart of every OM does in the scenario the resend exists for.
struct RetryCacheOm {
    keys: Mutex<HashSet<String>>,
    cache: Mutex<HashMap<(Vec<u8>, i32), Status>>,
}

impl RetryCacheOm {
    fn handle(&self, req: &OmRequest, h: &ozone_rpc::rpc::RpcRequestHeader) -> Reply {
        let id = (h.client_id.clone(), h.call_id);
        if let Some(s) = self.cache.lock().unwrap().get(&id) {
            return Reply::ok(OmResponse::new(req.cmd_type(), *s));
        }
        let status = match &req.body {
            OmRequestBody::RenameKey { args, to_key } => {
                let mut keys = self.keys.lock().unwrap();
                if keys.contains(to_key) {
                    Status::KEY_ALREADY_EXISTS
                } else if !keys.remove(&args.key) {
                    Status::KEY_NOT_FOUND
                } else {
                    keys.insert(to_key.clone());
                    Status::OK
                }
            }
            _ => Status::OK,
        };
        self.cache.lock().unwrap().insert(id, status);
        Reply::ok(OmResponse::new(req.cmd_type(), status))
    }
}

#[tokio::test]
async fn resend_repeats_the_exact_call_on_a_new_connection() {
    let state = Arc::new(RetryCacheOm {
        keys: Mutex::new(HashSet::from(["a".to_owned()])),
        cache: Mutex::new(HashMap::new()),
    });
    // rename a -> c
    let s = state.clone();
    let om1 = spawn_om(Arc::new(move |r: &OmRequest, h: &_| s.handle(r, h))).await;
    let s = state.clone();
    let om2 = spawn_om(Arc::new(move |r: &OmRequest, h: &_| s.handle(r, h))).await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr], "chaos").with_config(quick());
    let first = c
        .call(OmRequest::rename_key("vol", "bkt", "a", "c"))
        .await
        .unwrap();
    assert_eq!(first.status, Status::OK);
    let record = c.last_call().unwrap().clone();

    // Resend to the other OM while the retry cache holds the call: it answers OK again.
    let again = c.resend(&record, om2.addr).await.unwrap();
    assert_eq!(again.status, Status::OK);
    let (a, b) = (om1.calls(), om2.calls());
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].frame, a[0].frame, "the resent frame is byte-identical");
    assert_eq!(b[0].header.client_id, a[0].header.client_id);
    assert_eq!(b[0].header.call_id, a[0].header.call_id);
    assert_eq!(b[0].conn, 0, "a new connection to om2");

    // "Restart every OM": the cache is gone. The same bytes are now applied again and the
    // answer differs: what the retry check reports as a violation.
    state.cache.lock().unwrap().clear();
    let after_restart = c.resend(&record, om1.addr).await.unwrap();
    // The fake checks the target first, as the scenario's bug report has it.
    assert_eq!(after_restart.status, Status::KEY_ALREADY_EXISTS);
    let a = om1.calls();
    assert_eq!(a.len(), 2);
    assert_eq!(a[1].frame, a[0].frame);
    assert_eq!(
        a[1].conn, 1,
        "resend dials a new connection even to the same OM"
    );
}

#[tokio::test]
async fn resend_to_a_follower_reports_not_leader() {
    let om1 = spawn_om(always_ok()).await;
    let om2 = spawn_om(always(Reply::not_leader(
        "OM:om2 is not the leader. Suggested leader is OM:om1.",
    )))
    .await;
    let mut c = OmClient::connect(vec![om1.addr, om2.addr], "chaos").with_config(quick());
    c.call(rename()).await.unwrap();
    let rec = c.last_call().unwrap().clone();
    let err = c.resend(&rec, om2.addr).await.unwrap_err();
    assert!(matches!(err, OmError::NotLeader { .. }));
    assert_eq!(om1.calls().len(), 1, "resend does not fail over");
}

#[tokio::test]
async fn create_then_commit_uses_the_open_key_id() {
    let om = spawn_om(Arc::new(|req: &OmRequest, _: &_| {
        let mut r = OmResponse::new(req.cmd_type(), Status::OK);
        match &req.body {
            OmRequestBody::CreateKey { .. } => r.open_key_id = Some(4242),
            OmRequestBody::CommitKey { open_key_id, .. } if *open_key_id != 4242 => {
                r = OmResponse::new(req.cmd_type(), Status::KEY_NOT_FOUND)
            }
            _ => {}
        }
        Reply::ok(r)
    }))
    .await;
    let mut c = OmClient::connect(vec![om.addr], "chaos").with_config(quick());
    let created = c
        .call(OmRequest::create_key("vol", "bkt", "k", 0))
        .await
        .unwrap();
    let id = created.open_key_id.unwrap();
    let committed = c
        .call(OmRequest::commit_key("vol", "bkt", "k", 0, id))
        .await
        .unwrap();
    assert_eq!(committed.status, Status::OK);
    let calls = om.calls();
    assert_eq!(calls[0].header.call_id + 1, calls[1].header.call_id);
    // OMRequest.clientId is the UUID string of the RPC client id.
    assert_eq!(
        calls[0].request.client_id,
        ozone_rpc::uuid_string(&c.client_id())
    );
}
