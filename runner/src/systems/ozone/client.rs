//! The native OM client of the create and lease workloads ([`OzoneClient`]): its operations,
//! resends of a recorded call, and how OM answers become outcomes.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use async_trait::async_trait;
use ozone_rpc::{
    CallRecord, OmClient, OmError, OmRequest, OmResponse, ReadConsistencyHint, Status,
};
use serde_json::{json, Value};

use super::{BUCKET, FILES, VOLUME};
use crate::systems::{Operation, Outcome, Resends, SystemClient, CREATE};

/// One process's native OM client.
pub(super) struct OzoneClient {
    om: OmClient,
    retries: u32,
    /// Wait before each resend (the scenario changes the cluster meanwhile).
    pub(super) resend_after: Duration,
    /// Lease workload: the open key id (the writer's client id) of each file this process
    /// hsync'd and has not closed.
    open: HashMap<String, u64>,
    /// Each created key's rename, answered OK: what a `resend` sends again (kept only when
    /// the workload sends duplicates).
    answered: HashMap<String, CallRecord>,
    pub(super) keep_answered: bool,
    /// The retry identity of the call that decided the last operation.
    last: Option<(String, String)>,
    /// Register reads (`read`): the hint they carry, and, with follower reads, the client of
    /// the process's own OM they go to (see reads.rs); writes always go to the leader.
    pub(super) read_hint: Option<ReadConsistencyHint>,
    pub(super) own_om: Option<OmClient>,
}

/// A call's retry identity as the history records it: the RPC client id (a UUID) and call id.
fn identity(record: &CallRecord) -> (String, String) {
    (
        ozone_rpc::uuid_string(&record.client_id),
        record.call_id.to_string(),
    )
}

/// A lookup's answer as the converge check compares it.
pub(super) fn lookup_answer(result: &Result<OmResponse, OmError>) -> Value {
    match looked_up(result) {
        Ok(Some(r)) => match &r.key_info {
            Some(k) => json!({ "length": k.data_size, "open": k.is_open() }),
            None => json!({ "error": "OK without a KeyInfo" }),
        },
        Ok(None) => json!("absent"),
        Err(why) => json!({ "error": why }),
    }
}

// How OM answers become outcomes: ozone-rpc classifies them (`OmResponse::outcome`,
// `OmError::outcome`, the one place for the OM's protocol); `om_class` reads that for a call's
// result and `om_outcome` turns it into the history's outcome.

/// ozone-rpc's class of a call's result.
fn om_class(result: &Result<OmResponse, OmError>) -> ozone_rpc::Outcome {
    match result {
        Ok(r) => r.outcome(),
        Err(e) => e.outcome(),
    }
}

/// The outcome of a call that changes state, as ozone-rpc classifies its result: OK is `ok`
/// (with the value `ok`), a refusal `fail`, an answer that may still take effect (or none)
/// `info`; the reason is the OM's status and message, or the client's error.
fn om_outcome(result: Result<OmResponse, OmError>, ok: Value) -> Outcome {
    let reason = match &result {
        Ok(r) => describe(r),
        Err(e) => e.to_string(),
    };
    match om_class(&result) {
        ozone_rpc::Outcome::Ok => Outcome::Ok(ok),
        ozone_rpc::Outcome::Fail => Outcome::Fail(reason),
        ozone_rpc::Outcome::Info => Outcome::Info(reason),
    }
}

/// A lookup's result: the answer when the key exists, `None` when the OM says it does not, or
/// why there is no answer (a lookup changes nothing: callers record that as fail).
fn looked_up(result: &Result<OmResponse, OmError>) -> Result<Option<&OmResponse>, String> {
    match result {
        Ok(r) if r.is_ok() => Ok(Some(r)),
        Ok(r) if r.status == Status::KEY_NOT_FOUND => Ok(None),
        Ok(r) => Err(describe(r)),
        Err(e) => Err(e.to_string()),
    }
}

pub(super) fn describe(r: &OmResponse) -> String {
    match &r.message {
        Some(m) if !m.is_empty() => format!("{}: {m}", r.status.name()),
        _ => r.status.name(),
    }
}

#[async_trait]
impl SystemClient for OzoneClient {
    fn last_call(&self) -> Option<(String, String)> {
        self.last.clone()
    }

    async fn invoke(&mut self, op: &Operation) -> Outcome {
        self.last = None;
        match op.f {
            "read" => {
                let mut lookup = OmRequest::lookup_key(VOLUME, BUCKET, &op.key);
                if let Some(hint) = self.read_hint {
                    lookup = lookup.with_read_consistency(hint);
                }
                let om = self.own_om.as_mut().unwrap_or(&mut self.om);
                match looked_up(&om.call(lookup).await) {
                    Ok(Some(r)) => Outcome::Ok(r.key_length().map_or(Value::Null, Value::from)),
                    Ok(None) => Outcome::Ok(Value::Null),
                    // A lookup changes nothing: any failure is a definite no-op.
                    Err(why) => Outcome::Fail(why),
                }
            }
            // register: a blind write of length v (open, then commit: the commit replaces
            // the key).
            "write" => {
                let Some(size) = op.value.as_u64() else {
                    return Outcome::Fail("ozone write needs a number".into());
                };
                self.write(&op.key, size, None, &op.value).await
            }
            // register: cas [expected, v] as Ozone's atomic rewrite (see `cas`). A cas from
            // nothing ([null, v]) is the create workload's create, below.
            "cas" if op.value.get(0).is_some_and(|e| !e.is_null()) => {
                let Some(size) = op.value.get(1).and_then(Value::as_u64) else {
                    return Outcome::Fail("ozone cas needs [expected, n]".into());
                };
                let expected = op.value.get(0).cloned().unwrap_or(Value::Null);
                self.cas(&op.key, &expected, size, &op.value).await
            }
            // A create (cas [null, v]): make key hold a value of length v unless it exists.
            CREATE => {
                let Some(size) = op.value.get(1).and_then(Value::as_u64) else {
                    return Outcome::Fail("ozone cas needs [null, n]".into());
                };
                self.create(&op.key, size, &op.value).await
            }
            // The rename that created the key, sent again byte for byte (duplicate-after): the
            // OM must answer it from its retry cache as it did the first time.
            "resend" => {
                let Some(record) = self.answered.remove(&op.key) else {
                    return Outcome::Fail(format!("no answered call created {}", op.key));
                };
                self.last = Some(identity(&record));
                match self.resend(&record).await {
                    Ok(r) if r.status == Status::KEY_ALREADY_EXISTS => Outcome::Fail(format!(
                        "already exists (call {} sent again)",
                        record.call_id
                    )),
                    result => om_outcome(result, op.value.clone()),
                }
            }
            "hsync" | "close" => {
                let Some(length) = op.value.as_u64() else {
                    return Outcome::Fail(format!("ozone {} needs a length", op.f));
                };
                if op.f == "hsync" {
                    self.hsync(&op.key, length).await
                } else {
                    self.close(&op.key, length).await
                }
            }
            "recover-lease" => {
                let result = self
                    .om
                    .call(OmRequest::recover_lease(VOLUME, FILES, &op.key, false))
                    .await;
                om_outcome(result, json!("recovery started"))
            }
            // A file's final state for the durable check: [length] once closed; [] while it is
            // open or absent (nothing closed is there; an acknowledged close is then lost).
            "final-read" => {
                let lookup = OmRequest::lookup_key(VOLUME, FILES, &op.key);
                match looked_up(&self.om.call(lookup).await) {
                    Ok(Some(r)) => match &r.key_info {
                        Some(k) if !k.is_open() => Outcome::Ok(json!([k.data_size])),
                        _ => Outcome::Ok(json!([])),
                    },
                    Ok(None) => Outcome::Ok(json!([])),
                    Err(why) => Outcome::Fail(why),
                }
            }
            other => Outcome::Fail(format!("ozone has no operation {other}")),
        }
    }
}

impl OzoneClient {
    pub(super) fn new(om: OmClient, retries: u32) -> Self {
        OzoneClient {
            om,
            retries,
            resend_after: Duration::ZERO,
            open: HashMap::new(),
            answered: HashMap::new(),
            keep_answered: false,
            last: None,
            read_hint: None,
            own_om: None,
        }
    }

    /// Opens `key` at length `size` (an atomic rewrite of generation `generation` when given)
    /// and commits it. Only the commit touches the key: a refused or lost open is `fail`.
    async fn write(
        &mut self,
        key: &str,
        size: u64,
        generation: Option<u64>,
        value: &Value,
    ) -> Outcome {
        let open = match generation {
            Some(g) => OmRequest::rewrite_key(VOLUME, BUCKET, key, size, g),
            None => OmRequest::create_key(VOLUME, BUCKET, key, size),
        };
        let open = match self.om.call(open).await {
            Ok(r) if r.is_ok() => r,
            Ok(r) => return Outcome::Fail(format!("open: {}", describe(&r))),
            Err(e) => return Outcome::Fail(format!("open: {e}")),
        };
        let Some(id) = open.open_key_id else {
            return Outcome::Fail("open: no open key id".into());
        };
        let result = self
            .om
            .call(OmRequest::commit_key(VOLUME, BUCKET, key, size, id))
            .await;
        om_outcome(result, value.clone())
    }

    /// cas [expected, v]: the key's generation from the leader, then an atomic rewrite at that
    /// generation (`expected` null: create only if absent, generation 0), so the commit
    /// succeeds only if nothing replaced the key in between. Values are unique, so the
    /// generation read with length `expected` names that value. A lookup that finds another
    /// value is a failed cas (nothing was written).
    async fn cas(&mut self, key: &str, expected: &Value, size: u64, value: &Value) -> Outcome {
        let lookup = self
            .om
            .call(OmRequest::lookup_key(VOLUME, BUCKET, key))
            .await;
        let found = match looked_up(&lookup) {
            Ok(Some(r)) => r.key_info.as_ref().map(|k| (k.data_size, k.update_id)),
            Ok(None) => None,
            Err(why) => return Outcome::Fail(format!("cas lookup: {why}")),
        };
        let generation = match (expected.as_u64(), found) {
            (None, None) if expected.is_null() => 0,
            (Some(want), Some((have, Some(generation)))) if want == have => generation,
            (_, Some((_, None))) => return Outcome::Fail("cas lookup: no updateID".into()),
            (_, found) => {
                let found = found.map_or("absent".to_string(), |(n, _)| n.to_string());
                return Outcome::Fail(format!("cas: expected {expected}, found {found}"));
            }
        };
        self.write(key, size, Some(generation), value).await
    }

    /// Opens `file` in the FSO bucket and hsyncs `length` bytes (CommitKey with hsync: the file
    /// is visible at that length and stays open for this writer).
    async fn hsync(&mut self, file: &str, length: u64) -> Outcome {
        let open = match self
            .om
            .call(OmRequest::create_key(VOLUME, FILES, file, length))
            .await
        {
            Ok(r) if r.is_ok() => r,
            // Nothing is visible before the commit: a refused open changed nothing.
            Ok(r) => return Outcome::Fail(format!("create: {}", describe(&r))),
            Err(e) => return om_outcome(Err(e), Value::Null),
        };
        let Some(id) = open.open_key_id else {
            return Outcome::Fail("create: no open key id".into());
        };
        self.open.insert(file.to_owned(), id);
        let result = self
            .om
            .call(OmRequest::hsync_key(VOLUME, FILES, file, length, id))
            .await;
        om_outcome(result, Value::from(length))
    }

    /// Closes a file this process hsync'd, at `length` (CommitKey without hsync).
    async fn close(&mut self, file: &str, length: u64) -> Outcome {
        let Some(&id) = self.open.get(file) else {
            return Outcome::Fail(format!("{file} is not open in this process"));
        };
        let result = self
            .om
            .call(OmRequest::commit_key(VOLUME, FILES, file, length, id))
            .await;
        let outcome = om_outcome(result, Value::from(length));
        if matches!(outcome, Outcome::Ok(_)) {
            self.open.remove(file);
        }
        outcome
    }

    /// Staging key of length `size` (no data: the OM records the length it is told), then one
    /// rename onto `key`: the only step that touches `key`, so only its outcome can be info.
    async fn create(&mut self, key: &str, size: u64, value: &Value) -> Outcome {
        let staging = format!("staging/{key}-{size}");
        let open = match self
            .om
            .call(OmRequest::create_key(VOLUME, BUCKET, &staging, size))
            .await
        {
            Ok(r) if r.is_ok() => r,
            Ok(r) => return Outcome::Fail(format!("staging create: {}", describe(&r))),
            Err(e) => return Outcome::Fail(format!("staging create: {e}")),
        };
        let Some(id) = open.open_key_id else {
            return Outcome::Fail("staging create: no open key id".into());
        };
        match self
            .om
            .call(OmRequest::commit_key(VOLUME, BUCKET, &staging, size, id))
            .await
        {
            Ok(r) if r.is_ok() => {}
            // key itself is untouched whatever happened to the staging key.
            Ok(r) => return Outcome::Fail(format!("staging commit: {}", describe(&r))),
            Err(e) => return Outcome::Fail(format!("staging commit: {e}")),
        }
        let (record, mut result) = self
            .om
            .call_recorded(OmRequest::rename_key(VOLUME, BUCKET, &staging, key))
            .await;
        let mut resends = Resends::new(self.retries);
        while resends.again(om_class(&result) == ozone_rpc::Outcome::Info) {
            // Sent, and the answer never came: resend the very same call (client id, call id).
            tokio::time::sleep(self.resend_after).await;
            result = self.resend(&record).await;
        }
        let note = resends.note(record.call_id);
        self.last = Some(identity(&record));
        match result {
            Ok(r) if r.status == Status::KEY_ALREADY_EXISTS => {
                Outcome::Fail(format!("already exists{note}"))
            }
            // The OM's refusal says which attempt it answered.
            Ok(r) if r.outcome() == ozone_rpc::Outcome::Fail => {
                Outcome::Fail(format!("{}{note}", describe(&r)))
            }
            result => {
                let outcome = om_outcome(result, value.clone());
                if matches!(outcome, Outcome::Ok(_)) && self.keep_answered {
                    self.answered.insert(key.to_owned(), record);
                }
                outcome
            }
        }
    }
}

/// How long one resend keeps looking for an OM that answers (the OMs may all be restarting).
const RESEND_PATIENCE: Duration = Duration::from_secs(120);

impl OzoneClient {
    /// One resend of a recorded call, byte for byte, to the OMs in turn (the last one that
    /// answered first) until one answers it or [`RESEND_PATIENCE`] runs out: a refused connect,
    /// "not the leader", or a connection an OM still starting drops after the call was sent is
    /// no answer (sending the same call again is what a retry is: the retry cache must make it
    /// harmless), so the resend waits out restarts and elections, as a Java client's failover
    /// does, and the first OM that answers decides.
    async fn resend(&mut self, record: &CallRecord) -> Result<OmResponse, OmError> {
        let deadline = tokio::time::Instant::now() + RESEND_PATIENCE;
        let mut order: Vec<SocketAddr> = self.om.nodes().iter().map(|n| n.addr).collect();
        let current = self.om.current();
        order.sort_by_key(|a| *a != current);
        let mut last = Err(OmError::NoNodes);
        loop {
            for &to in &order {
                let result = self.om.resend(record, to).await;
                // Every transport error and every "not the leader" is no answer yet.
                let keep_looking = result.is_err();
                if !keep_looking {
                    return result;
                }
                last = result;
            }
            if tokio::time::Instant::now() >= deadline {
                return last;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A fake OM on loopback with keys, open keys and a retry cache keyed by (client id, call
    /// id), as Ozone's: it can apply the next rename and drop its answer (a lost reply), and
    /// "restart" (forget its retry cache), which is the bug retry-after-restart looks for.
    mod fake {
        use std::collections::HashMap;
        use std::net::SocketAddr;
        use std::sync::{Arc, Mutex};

        use ozone_rpc::io::{read_frame, read_preamble};
        use ozone_rpc::om::{KeyInfo, OmRequestBody};
        use ozone_rpc::rpc::{self, RpcResponseHeader};
        use ozone_rpc::{CmdType, OmRequest, OmResponse, Status};
        use tokio::io::AsyncWriteExt;

        #[derive(Default)]
        pub struct State {
            pub keys: HashMap<String, u64>,
            /// Files of the FSO bucket: length, the writer's id while open (hsync'd), and
            /// whether lease recovery began.
            pub files: HashMap<String, (u64, Option<u64>, bool)>,
            /// Whether the soft limit of every open file has passed (as an OM whose clock
            /// says so decides).
            pub past_soft_limit: bool,
            open: HashMap<u64, (String, u64)>,
            next_id: u64,
            cache: HashMap<(Vec<u8>, i32), OmResponse>,
            pub lose_next_rename_reply: bool,
            pub restart_after_lost_reply: bool,
            pub renames_applied: usize,
        }

        impl State {
            /// What a restart of every OM does to the retry cache: it is gone.
            pub fn restart(&mut self) {
                self.cache.clear();
            }
        }

        fn apply(st: &mut State, req: &OmRequest) -> OmResponse {
            let r = |cmd, status| OmResponse::new(cmd, status);
            match &req.body {
                OmRequestBody::CreateKey { args } => {
                    st.next_id += 1;
                    let id = st.next_id;
                    st.open
                        .insert(id, (args.key.clone(), args.data_size.unwrap_or(0)));
                    let mut resp = r(CmdType::CREATE_KEY, Status::OK);
                    resp.open_key_id = Some(id);
                    resp
                }
                OmRequestBody::CommitKey {
                    args,
                    open_key_id,
                    hsync,
                } if args.bucket == super::FILES => {
                    let len = args.data_size.unwrap_or(0);
                    if let Some((_, _, true)) = st.files.get(&args.key) {
                        return r(CmdType::COMMIT_KEY, Status::KEY_UNDER_LEASE_RECOVERY);
                    }
                    if !st.open.contains_key(open_key_id) {
                        return r(CmdType::COMMIT_KEY, Status::KEY_NOT_FOUND);
                    }
                    if !*hsync {
                        st.open.remove(open_key_id);
                    }
                    let writer = hsync.then_some(*open_key_id);
                    st.files.insert(args.key.clone(), (len, writer, false));
                    r(CmdType::COMMIT_KEY, Status::OK)
                }
                OmRequestBody::CommitKey {
                    args, open_key_id, ..
                } => match st.open.remove(open_key_id) {
                    Some((key, _)) => {
                        st.keys.insert(key, args.data_size.unwrap_or(0));
                        r(CmdType::COMMIT_KEY, Status::OK)
                    }
                    None => r(CmdType::COMMIT_KEY, Status::KEY_NOT_FOUND),
                },
                OmRequestBody::RecoverLease { key, .. } => {
                    let past = st.past_soft_limit;
                    match st.files.get_mut(key) {
                        None => r(CmdType::RECOVER_LEASE, Status::KEY_NOT_FOUND),
                        Some((_, None, _)) => r(CmdType::RECOVER_LEASE, Status::KEY_ALREADY_CLOSED),
                        Some(_) if !past => r(
                            CmdType::RECOVER_LEASE,
                            Status::KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD,
                        ),
                        Some((_, Some(_), recovering)) => {
                            *recovering = true;
                            r(CmdType::RECOVER_LEASE, Status::OK)
                        }
                    }
                }
                OmRequestBody::LookupKey { args } if args.bucket == super::FILES => {
                    match st.files.get(&args.key) {
                        Some((len, writer, _)) => {
                            let mut resp = r(CmdType::LOOKUP_KEY, Status::OK);
                            resp.key_info = Some(KeyInfo {
                                key: args.key.clone(),
                                data_size: *len,
                                metadata: writer
                                    .map(|w| (ozone_rpc::HSYNC_CLIENT_ID.into(), w.to_string()))
                                    .into_iter()
                                    .collect(),
                                ..Default::default()
                            });
                            resp
                        }
                        None => r(CmdType::LOOKUP_KEY, Status::KEY_NOT_FOUND),
                    }
                }
                OmRequestBody::RenameKey { args, to_key } => {
                    if st.keys.contains_key(to_key) {
                        return r(CmdType::RENAME_KEY, Status::KEY_ALREADY_EXISTS);
                    }
                    let Some(len) = st.keys.remove(&args.key) else {
                        return r(CmdType::RENAME_KEY, Status::KEY_NOT_FOUND);
                    };
                    st.keys.insert(to_key.clone(), len);
                    st.renames_applied += 1;
                    r(CmdType::RENAME_KEY, Status::OK)
                }
                OmRequestBody::LookupKey { args } => match st.keys.get(&args.key) {
                    Some(len) => {
                        let mut resp = r(CmdType::LOOKUP_KEY, Status::OK);
                        resp.key_info = Some(KeyInfo {
                            key: args.key.clone(),
                            data_size: *len,
                            ..Default::default()
                        });
                        resp
                    }
                    None => r(CmdType::LOOKUP_KEY, Status::KEY_NOT_FOUND),
                },
                _ => r(req.cmd_type(), Status::OK),
            }
        }

        pub async fn spawn(state: Arc<Mutex<State>>) -> SocketAddr {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                while let Ok((mut stream, _)) = listener.accept().await {
                    let state = state.clone();
                    tokio::spawn(async move {
                        if read_preamble(&mut stream).await.is_err()
                            || read_frame(&mut stream).await.is_err()
                        {
                            return;
                        }
                        while let Ok(body) = read_frame(&mut stream).await {
                            let call = rpc::decode_request(&body).unwrap();
                            let req = OmRequest::decode(&call.payload).unwrap();
                            let h = call.header.clone();
                            let (resp, lose) = {
                                let mut st = state.lock().unwrap();
                                let id = (h.client_id.clone(), h.call_id);
                                if let Some(cached) = st.cache.get(&id) {
                                    (cached.clone(), false)
                                } else {
                                    let resp = apply(&mut st, &req);
                                    st.cache.insert(id, resp.clone());
                                    let lose = req.cmd_type() == CmdType::RENAME_KEY
                                        && std::mem::take(&mut st.lose_next_rename_reply);
                                    if lose && st.restart_after_lost_reply {
                                        st.cache.clear();
                                    }
                                    (resp, lose)
                                }
                            };
                            if lose {
                                return; // applied, answer lost: the connection closes
                            }
                            let header =
                                RpcResponseHeader::success(h.call_id, &h.client_id, h.retry_count);
                            let frame = rpc::response_frame(&header, Some(&resp.encode()));
                            if stream.write_all(&frame).await.is_err() {
                                return;
                            }
                        }
                    });
                }
            });
            addr
        }
    }

    async fn client_of(state: &Arc<std::sync::Mutex<fake::State>>, retries: u32) -> OzoneClient {
        let addr = fake::spawn(state.clone()).await;
        OzoneClient::new(OmClient::connect(vec![addr], "hadoop"), retries)
    }

    fn cas(key: &str, v: u64) -> Operation {
        Operation {
            f: CREATE,
            key: key.into(),
            value: json!([null, v]),
        }
    }

    #[tokio::test]
    async fn create_is_a_rename_onto_the_key_and_reads_its_length() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut c = client_of(&state, 0).await;
        assert!(matches!(c.invoke(&cas("c1", 7)).await, Outcome::Ok(v) if v == json!([null, 7])));
        match c.invoke(&cas("c1", 8)).await {
            Outcome::Fail(why) => assert_eq!(why, "already exists"),
            other => panic!("{other:?}"),
        }
        let read = |key: &str| Operation {
            f: "read",
            key: key.into(),
            value: Value::Null,
        };
        assert!(matches!(c.invoke(&read("c1")).await, Outcome::Ok(v) if v == json!(7)));
        assert!(matches!(
            c.invoke(&read("c2")).await,
            Outcome::Ok(Value::Null)
        ));
        assert_eq!(state.lock().unwrap().keys.get("c1"), Some(&7));
    }

    /// A lost answer is resent byte for byte; an OM with its retry cache answers OK.
    #[tokio::test]
    async fn a_resend_after_a_lost_reply_is_answered_from_the_retry_cache() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        state.lock().unwrap().lose_next_rename_reply = true;
        let mut c = client_of(&state, 1).await;
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Ok(_)));
        assert_eq!(state.lock().unwrap().renames_applied, 1);
    }

    /// The bug: the retry cache is gone (every OM restarted), the resend is executed again and
    /// answers KEY_ALREADY_EXISTS for the rename its first attempt applied.
    #[tokio::test]
    async fn a_resend_after_a_restart_without_the_retry_cache_fails() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        {
            let mut st = state.lock().unwrap();
            st.lose_next_rename_reply = true;
            st.restart_after_lost_reply = true;
        }
        let mut c = client_of(&state, 1).await;
        match c.invoke(&cas("c1", 3)).await {
            Outcome::Fail(why) => {
                assert!(
                    why.starts_with("already exists (answer to attempt 2 of call"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
        // ...although the key holds the value: a read of 3 after a failed create of 3.
        assert_eq!(state.lock().unwrap().keys.get("c1"), Some(&3));
    }

    /// With resend-after, the resend comes that much later (a scenario restarts every OM in
    /// between); here the fake keeps its retry cache, so the late resend is answered OK.
    #[tokio::test]
    async fn a_resend_waits_resend_after() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        state.lock().unwrap().lose_next_rename_reply = true;
        let mut c = client_of(&state, 1).await;
        c.resend_after = Duration::from_millis(300);
        let start = std::time::Instant::now();
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Ok(_)));
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert_eq!(state.lock().unwrap().renames_applied, 1);
    }

    /// duplicate-after: the rename that created a key, answered OK, is sent again byte for
    /// byte; an OM with its retry cache answers it OK again, an OM that lost it (every OM
    /// restarted) executes it again: KEY_ALREADY_EXISTS. Both carry the rename's identity.
    #[tokio::test]
    async fn a_duplicate_of_an_answered_rename() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut c = client_of(&state, 0).await;
        c.keep_answered = true;
        let resend = |key: &str, v: u64| Operation {
            f: "resend",
            key: key.into(),
            value: json!([null, v]),
        };
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Ok(_)));
        let first = c.last_call().unwrap();
        assert!(matches!(c.invoke(&cas("c2", 4)).await, Outcome::Ok(_)));
        let second = c.last_call().unwrap();
        assert_eq!(first.0, second.0, "one client id");
        assert_ne!(first.1, second.1, "a call id each");
        // Answered from the retry cache: the same answer, the same identity.
        let again = c.invoke(&resend("c1", 3)).await;
        assert!(
            matches!(&again, Outcome::Ok(v) if *v == json!([null, 3])),
            "{again:?}"
        );
        assert_eq!(c.last_call(), Some(first));
        // After a restart of every OM the cache is gone: the rename runs again and fails.
        state.lock().unwrap().restart();
        match c.invoke(&resend("c2", 4)).await {
            Outcome::Fail(why) => assert!(why.starts_with("already exists (call "), "{why}"),
            o => panic!("{o:?}"),
        }
        assert_eq!(c.last_call(), Some(second));
        assert_eq!(state.lock().unwrap().renames_applied, 2);
        // A key this client did not create cannot be sent again; reads carry no identity.
        assert!(matches!(c.invoke(&resend("c9", 1)).await, Outcome::Fail(_)));
        let read = Operation {
            f: "read",
            key: "c1".into(),
            value: Value::Null,
        };
        c.invoke(&read).await;
        assert_eq!(c.last_call(), None);
    }

    /// Without retries, a lost answer is an unknown outcome.
    #[tokio::test]
    async fn a_lost_reply_without_retries_is_info() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        state.lock().unwrap().lose_next_rename_reply = true;
        let mut c = client_of(&state, 0).await;
        assert!(matches!(c.invoke(&cas("c1", 3)).await, Outcome::Info(_)));
    }

    fn file_op(f: &'static str, file: &str, value: Value) -> Operation {
        Operation {
            f,
            key: file.into(),
            value,
        }
    }

    /// The lease workload's steps on an OM that decides inside the soft limit: the
    /// recoverLease is refused, the close succeeds, the final read sees the closed length.
    #[tokio::test]
    async fn hsync_refused_recovery_then_close() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut writer = client_of(&state, 0).await;
        let mut other = client_of(&state, 0).await;
        let hsync = writer.invoke(&file_op("hsync", "f0", json!(1024))).await;
        assert!(
            matches!(&hsync, Outcome::Ok(v) if *v == json!(1024)),
            "{hsync:?}"
        );
        assert_eq!(state.lock().unwrap().files["f0"].0, 1024);
        // While open, the final state is "nothing closed".
        let read = other
            .invoke(&file_op("final-read", "f0", Value::Null))
            .await;
        assert!(
            matches!(&read, Outcome::Ok(v) if *v == json!([])),
            "{read:?}"
        );
        match other
            .invoke(&file_op("recover-lease", "f0", Value::Null))
            .await
        {
            Outcome::Fail(why) => assert!(
                why.starts_with("KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD"),
                "{why}"
            ),
            o => panic!("{o:?}"),
        }
        let close = writer.invoke(&file_op("close", "f0", json!(2048))).await;
        assert!(
            matches!(&close, Outcome::Ok(v) if *v == json!(2048)),
            "{close:?}"
        );
        let read = other
            .invoke(&file_op("final-read", "f0", Value::Null))
            .await;
        assert!(
            matches!(&read, Outcome::Ok(v) if *v == json!([2048])),
            "{read:?}"
        );
        // Only the writer holds the file open.
        assert!(matches!(
            other.invoke(&file_op("close", "f0", json!(1))).await,
            Outcome::Fail(_)
        ));
    }

    /// On an OM that applied the recoverLease past the soft limit (the late follower of
    /// recover-lease-divergence), recovery begins and the writer's close is refused: the file
    /// stays open at its hsync'd length.
    #[tokio::test]
    async fn recovery_past_the_soft_limit_refuses_the_close() {
        let state = Arc::new(std::sync::Mutex::new(fake::State::default()));
        let mut writer = client_of(&state, 0).await;
        let mut other = client_of(&state, 0).await;
        assert!(matches!(
            writer.invoke(&file_op("hsync", "f0", json!(1024))).await,
            Outcome::Ok(_)
        ));
        state.lock().unwrap().past_soft_limit = true;
        assert!(matches!(
            other
                .invoke(&file_op("recover-lease", "f0", Value::Null))
                .await,
            Outcome::Ok(_)
        ));
        match writer.invoke(&file_op("close", "f0", json!(2048))).await {
            Outcome::Fail(why) => assert!(why.starts_with("KEY_UNDER_LEASE_RECOVERY"), "{why}"),
            o => panic!("{o:?}"),
        }
        let mut om = OmClient::connect(vec![fake::spawn(state.clone()).await], "hadoop");
        let looked = om.call(OmRequest::lookup_key(VOLUME, FILES, "f0")).await;
        assert_eq!(
            lookup_answer(&looked),
            json!({"length": 1024, "open": true})
        );
        let absent = om.call(OmRequest::lookup_key(VOLUME, FILES, "f9")).await;
        assert_eq!(lookup_answer(&absent), json!("absent"));
    }
}
