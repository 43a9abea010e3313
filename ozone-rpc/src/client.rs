//! The OM client: connections, calls, failover, resend.

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::io::read_frame;
use crate::leader::{parse_suggested_leader, SuggestedLeader};
use crate::om::{
    CmdType, OmRequest, OmResponse, Status, OM_LEADER_NOT_READY_EXCEPTION, OM_NOT_LEADER_EXCEPTION,
    OM_PROTOCOL, OM_PROTOCOL_VERSION, SUBMIT_REQUEST,
};
use crate::rpc::{self, error_code, RequestHeader, RpcRequestHeader, RpcStatus};

/// How an operation goes into the history (history.jsonl: ok, fail, info).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Took effect (the OM answered OK).
    Ok,
    /// Certainly did not take effect.
    Fail,
    /// Unknown: it may take effect at any time, or never.
    Info,
}

impl Outcome {
    /// The history's `type` word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Fail => "fail",
            Self::Info => "info",
        }
    }
}

impl OmResponse {
    /// OK is `ok`. A definite OM answer that the request failed (KEY_ALREADY_EXISTS,
    /// KEY_NOT_FOUND, ...) is `fail`, except the statuses that do not say whether the write was
    /// applied (INTERNAL_ERROR, METADATA_ERROR, TIMEOUT, RATIS_ERROR), which are `info`.
    pub fn outcome(&self) -> Outcome {
        match self.status {
            Status::OK => Outcome::Ok,
            Status::INTERNAL_ERROR
            | Status::METADATA_ERROR
            | Status::TIMEOUT
            | Status::RATIS_ERROR => Outcome::Info,
            _ => Outcome::Fail,
        }
    }
}

/// Why a call did not get an OMResponse.
#[derive(Debug, Error)]
pub enum OmError {
    #[error("no Ozone Manager address was given")]
    NoNodes,
    #[error("connecting to {addr} failed: {source}")]
    Connect { addr: SocketAddr, source: io::Error },
    #[error("connecting to {addr} took longer than {after:?}")]
    ConnectTimeout { addr: SocketAddr, after: Duration },
    #[error("no answer from {addr} within {after:?} of sending the call")]
    Timeout { addr: SocketAddr, after: Duration },
    #[error("the connection to {addr} failed after the call was sent: {source}")]
    Io { addr: SocketAddr, source: io::Error },
    #[error("{addr} answered with something that is not a response to this call: {reason}")]
    Malformed { addr: SocketAddr, reason: String },
    #[error("{addr} is not the leader: {message}")]
    NotLeader {
        addr: SocketAddr,
        message: String,
        suggested: Option<Box<SuggestedLeader>>,
    },
    #[error("{addr} is the leader but not ready: {message}")]
    LeaderNotReady { addr: SocketAddr, message: String },
    #[error("{addr} answered {class}: {message}")]
    Remote {
        addr: SocketAddr,
        class: String,
        message: String,
        /// RpcResponseHeaderProto.errorDetail.
        detail: Option<i32>,
        /// The status was FATAL (the server closed the connection).
        fatal: bool,
    },
    #[error("gave up after {attempts} attempts; the last: {last}")]
    GaveUp { attempts: u32, last: Box<OmError> },
}

impl OmError {
    /// `fail` when nothing can have been applied: refused or timed out before the call was sent,
    /// an OM that is not the leader or not ready, an RPC-layer rejection (no such method or
    /// protocol, bad header, version mismatch, unauthorized, StandbyException). `info`
    /// otherwise: a timeout or reset after sending, a malformed answer, an application exception
    /// the client cannot interpret.
    pub fn outcome(&self) -> Outcome {
        match self {
            Self::NoNodes | Self::Connect { .. } | Self::ConnectTimeout { .. } => Outcome::Fail,
            Self::NotLeader { .. } | Self::LeaderNotReady { .. } => Outcome::Fail,
            Self::Timeout { .. } | Self::Io { .. } | Self::Malformed { .. } => Outcome::Info,
            Self::Remote { class, detail, .. } => {
                let rejected = matches!(
                    *detail,
                    Some(
                        error_code::ERROR_NO_SUCH_METHOD
                            | error_code::ERROR_NO_SUCH_PROTOCOL
                            | error_code::ERROR_RPC_VERSION_MISMATCH
                            | error_code::FATAL_UNSUPPORTED_SERIALIZATION
                            | error_code::FATAL_INVALID_RPC_HEADER
                            | error_code::FATAL_DESERIALIZING_REQUEST
                            | error_code::FATAL_VERSION_MISMATCH
                            | error_code::FATAL_UNAUTHORIZED
                    )
                );
                if rejected || class == "org.apache.hadoop.ipc.StandbyException" {
                    Outcome::Fail
                } else {
                    Outcome::Info
                }
            }
            Self::GaveUp { last, .. } => last.outcome(),
        }
    }

    /// The last error behind a [`OmError::GaveUp`], or this one.
    pub fn last(&self) -> &OmError {
        match self {
            Self::GaveUp { last, .. } => last.last(),
            e => e,
        }
    }
}

/// Bounds on the client's waiting and retrying.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// For one TCP connect.
    pub connect_timeout: Duration,
    /// From writing a call to reading its response.
    pub call_timeout: Duration,
    /// Attempts of one `call` (the first one included), across failovers.
    pub max_attempts: u32,
    /// Pause before retrying an OM that answered OMLeaderNotReadyException.
    pub not_ready_backoff: Duration,
    /// Sent in the connection context and every RequestHeaderProto.
    pub protocol: String,
    pub protocol_version: u64,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(2),
            call_timeout: Duration::from_secs(10),
            max_attempts: 6,
            not_ready_backoff: Duration::from_millis(500),
            protocol: OM_PROTOCOL.to_owned(),
            protocol_version: OM_PROTOCOL_VERSION,
        }
    }
}

/// One OM: its address and, if known, its node id (the Ratis peer id, as `ozone.om.nodes.*`
/// names it), used to follow a suggested leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmNode {
    pub id: Option<String>,
    pub addr: SocketAddr,
}

/// One call as it went on the wire: enough to resend it byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// RpcRequestHeaderProto.clientId.
    pub client_id: [u8; 16],
    /// RpcRequestHeaderProto.callId.
    pub call_id: i32,
    /// RpcRequestHeaderProto.retryCount of the last frame sent.
    pub retry_count: i32,
    pub cmd_type: CmdType,
    /// The encoded OMRequest.
    pub payload: Vec<u8>,
    /// The last frame sent (length prefix included).
    pub frame: Vec<u8>,
    /// Where the frame was written, in order (one entry per attempt that got as far as sending).
    pub sent_to: Vec<SocketAddr>,
    /// The protocol the frame names (for the connection context of a resend).
    pub protocol: String,
}

impl CallRecord {
    /// The record of `req` sent as `submitRequest` of OzoneManagerProtocol version 1 with these
    /// ids (what [`OmClient::call`] builds; useful to craft a resend by hand). An empty
    /// OMRequest.clientId is filled with the UUID string of `client_id`.
    pub fn new(client_id: [u8; 16], call_id: i32, retry_count: i32, req: &OmRequest) -> CallRecord {
        let mut req = req.clone();
        if req.client_id.is_empty() {
            req.client_id = uuid_string(&client_id);
        }
        let payload = req.encode();
        let frame = build_frame(
            &client_id,
            call_id,
            retry_count,
            OM_PROTOCOL,
            OM_PROTOCOL_VERSION,
            &payload,
        );
        CallRecord {
            client_id,
            call_id,
            retry_count,
            cmd_type: req.cmd_type(),
            payload,
            frame,
            sent_to: Vec::new(),
            protocol: OM_PROTOCOL.to_owned(),
        }
    }

    /// The same call with another retryCount (everything else byte-identical), as Hadoop's
    /// RetryInvocationHandler would send it on its next retry.
    pub fn with_retry_count(&self, retry_count: i32, protocol_version: u64) -> CallRecord {
        let mut c = self.clone();
        c.retry_count = retry_count;
        c.frame = build_frame(
            &self.client_id,
            self.call_id,
            retry_count,
            &self.protocol,
            protocol_version,
            &self.payload,
        );
        c
    }
}

fn build_frame(
    client_id: &[u8; 16],
    call_id: i32,
    retry_count: i32,
    protocol: &str,
    protocol_version: u64,
    payload: &[u8],
) -> Vec<u8> {
    rpc::call_frame(
        &RpcRequestHeader {
            call_id,
            client_id: client_id.to_vec(),
            retry_count,
        },
        &RequestHeader {
            method_name: SUBMIT_REQUEST.to_owned(),
            protocol: protocol.to_owned(),
            protocol_version,
        },
        payload,
    )
}

/// A random 16-byte client id with UUID version 4 bits (what Hadoop's `ClientId.getClientId()`
/// makes from `UUID.randomUUID()`), from std's randomly keyed hasher: no `rand` dependency.
pub fn random_client_id() -> [u8; 16] {
    let mut out = [0u8; 16];
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(t);
        h.write_u32(std::process::id());
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    out[6] = (out[6] & 0x0f) | 0x40;
    out[8] = (out[8] & 0x3f) | 0x80;
    out
}

/// The canonical hyphenated lower-case form of 16 UUID bytes.
pub fn uuid_string(id: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in id.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

struct Conn {
    node: usize,
    stream: TcpStream,
}

/// A native Ozone Manager client: Hadoop RPC, SIMPLE auth, one call in flight.
pub struct OmClient {
    nodes: Vec<OmNode>,
    user: String,
    client_id: [u8; 16],
    next_call_id: i32,
    current: usize,
    conn: Option<Conn>,
    config: ClientConfig,
    last_call: Option<CallRecord>,
}

impl OmClient {
    /// A client for these OMs acting as `user`. Nothing is dialled until the first call, so a
    /// refused connection shows on that call (as a `fail`).
    pub fn connect(addrs: Vec<SocketAddr>, user: &str) -> OmClient {
        OmClient {
            nodes: addrs
                .into_iter()
                .map(|addr| OmNode { id: None, addr })
                .collect(),
            user: user.to_owned(),
            client_id: random_client_id(),
            next_call_id: 0,
            current: 0,
            conn: None,
            config: ClientConfig::default(),
            last_call: None,
        }
    }

    /// Names the OMs (same order as the addresses), so a suggested leader `OM:om2` is followed.
    pub fn with_node_ids<S: AsRef<str>>(mut self, ids: &[S]) -> Self {
        for (n, id) in self.nodes.iter_mut().zip(ids) {
            n.id = Some(id.as_ref().to_owned());
        }
        self
    }

    /// Sends the first call to the OM with this id (named by [`OmClient::with_node_ids`]), as a
    /// client that already found the leader would; an unknown id changes nothing.
    pub fn starting_at(mut self, id: &str) -> Self {
        if let Some(i) = self.nodes.iter().position(|n| n.id.as_deref() == Some(id)) {
            self.current = i;
        }
        self
    }

    pub fn with_config(mut self, config: ClientConfig) -> Self {
        self.config = config;
        self
    }

    /// Fixes the 16-byte RPC client id (tests; reproducing a recorded client).
    pub fn with_client_id(mut self, id: [u8; 16]) -> Self {
        self.client_id = id;
        self
    }

    /// The next call id to be used (calls count up from 0, as Hadoop's client does).
    pub fn with_next_call_id(mut self, call_id: i32) -> Self {
        self.next_call_id = call_id & i32::MAX;
        self
    }

    pub fn client_id(&self) -> [u8; 16] {
        self.client_id
    }

    pub fn nodes(&self) -> &[OmNode] {
        &self.nodes
    }

    /// The OM the next call goes to first (the last one that answered).
    pub fn current(&self) -> SocketAddr {
        self.nodes
            .get(self.current)
            .map(|n| n.addr)
            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// The record of the last call made with [`OmClient::call`].
    pub fn last_call(&self) -> Option<&CallRecord> {
        self.last_call.as_ref()
    }

    /// Drops the open connection, if any (the next call dials again).
    pub fn disconnect(&mut self) {
        self.conn = None;
    }

    /// Sends `req` and waits for its OMResponse, failing over as Ozone's own client does: on
    /// OMNotLeaderException to the suggested leader if it is one of the known OMs, else to the
    /// next one; on OMLeaderNotReadyException to the same OM after `not_ready_backoff`; on a
    /// refused or timed-out connect to the next OM. Retries keep the client id and call id and
    /// count retryCount up, so the OMs' retry cache sees one call. A timeout or reset after
    /// sending is returned at once (outcome `info`): the caller decides whether to resend.
    /// At most `max_attempts` attempts.
    pub async fn call(&mut self, req: OmRequest) -> Result<OmResponse, OmError> {
        let (record, result) = self.call_recorded(req).await;
        self.last_call = Some(record);
        result
    }

    /// Like [`OmClient::call`], and returns the call's record.
    pub async fn call_recorded(
        &mut self,
        mut req: OmRequest,
    ) -> (CallRecord, Result<OmResponse, OmError>) {
        if req.client_id.is_empty() {
            req.client_id = uuid_string(&self.client_id);
        }
        let payload = req.encode();
        let call_id = self.next_call_id;
        self.next_call_id = self.next_call_id.wrapping_add(1) & i32::MAX;
        let mut record = CallRecord {
            client_id: self.client_id,
            call_id,
            retry_count: 0,
            cmd_type: req.cmd_type(),
            payload,
            frame: Vec::new(),
            sent_to: Vec::new(),
            protocol: self.config.protocol.clone(),
        };
        if self.nodes.is_empty() {
            return (record, Err(OmError::NoNodes));
        }
        let mut target = self.current.min(self.nodes.len() - 1);
        let mut last = None;
        let attempts = self.config.max_attempts.max(1);
        for attempt in 0..attempts {
            record.retry_count = attempt as i32;
            record.frame = build_frame(
                &self.client_id,
                call_id,
                record.retry_count,
                &self.config.protocol,
                self.config.protocol_version,
                &record.payload,
            );
            let result = self.attempt(target, &mut record).await;
            let err = match result {
                Ok(resp) => {
                    self.current = target;
                    return (record, Ok(resp));
                }
                Err(e) => e,
            };
            match &err {
                OmError::NotLeader { suggested, .. } => {
                    target = self.after_not_leader(target, suggested.as_deref()).await;
                }
                OmError::LeaderNotReady { .. } => {
                    tokio::time::sleep(self.config.not_ready_backoff).await;
                }
                OmError::Connect { .. } | OmError::ConnectTimeout { .. } => {
                    target = (target + 1) % self.nodes.len();
                }
                _ => {
                    self.current = target;
                    return (record, Err(err));
                }
            }
            last = Some(err);
        }
        self.current = target;
        let last = last.unwrap_or(OmError::NoNodes);
        (
            record,
            Err(OmError::GaveUp {
                attempts,
                last: Box::new(last),
            }),
        )
    }

    /// Resends a recorded call, byte for byte (same client id, call id and retryCount), on a new
    /// connection to `to`, and waits for the answer. No failover: the answer of `to` is returned,
    /// an OMNotLeaderException included. This is the retry-cache probe: "rename a key, restart
    /// every OM, resend the same call: the retry must answer OK".
    pub async fn resend(
        &mut self,
        call: &CallRecord,
        to: SocketAddr,
    ) -> Result<OmResponse, OmError> {
        let mut stream = self.dial(to, &call.client_id, &call.protocol).await?;
        exchange(&mut stream, to, call, self.config.call_timeout).await
    }

    async fn attempt(
        &mut self,
        node: usize,
        record: &mut CallRecord,
    ) -> Result<OmResponse, OmError> {
        let addr = self.nodes[node].addr;
        let reuse = matches!(&self.conn, Some(c) if c.node == node && still_open(&c.stream));
        if !reuse {
            self.conn = None;
            let stream = self
                .dial(addr, &self.client_id.clone(), &self.config.protocol.clone())
                .await?;
            self.conn = Some(Conn { node, stream });
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(OmError::NoNodes);
        };
        record.sent_to.push(addr);
        let result = exchange(&mut conn.stream, addr, record, self.config.call_timeout).await;
        let keep = match &result {
            Ok(_) => true,
            Err(OmError::NotLeader { .. } | OmError::LeaderNotReady { .. }) => true,
            Err(OmError::Remote { fatal, .. }) => !fatal,
            Err(_) => false,
        };
        if !keep {
            self.conn = None;
        }
        result
    }

    /// Connects and writes the preamble and the connection context. Nothing of a call has been
    /// sent yet, so every error here is a `fail`.
    async fn dial(
        &self,
        addr: SocketAddr,
        client_id: &[u8; 16],
        protocol: &str,
    ) -> Result<TcpStream, OmError> {
        let after = self.config.connect_timeout;
        let mut stream = match timeout(after, TcpStream::connect(addr)).await {
            Err(_) => return Err(OmError::ConnectTimeout { addr, after }),
            Ok(Err(source)) => return Err(OmError::Connect { addr, source }),
            Ok(Ok(s)) => s,
        };
        let _ = stream.set_nodelay(true);
        let mut hello = rpc::preamble().to_vec();
        hello.extend_from_slice(&rpc::connection_context_frame(
            client_id, &self.user, protocol,
        ));
        match timeout(after, stream.write_all(&hello)).await {
            Err(_) => Err(OmError::ConnectTimeout { addr, after }),
            Ok(Err(source)) => Err(OmError::Connect { addr, source }),
            Ok(Ok(())) => Ok(stream),
        }
    }

    async fn after_not_leader(&self, from: usize, suggested: Option<&SuggestedLeader>) -> usize {
        let next = (from + 1) % self.nodes.len();
        let Some(s) = suggested else { return next };
        if let Some(i) = self
            .nodes
            .iter()
            .position(|n| n.id.as_deref() == Some(&s.node_id))
        {
            return if i == from { next } else { i };
        }
        let mut candidates: Vec<SocketAddr> = Vec::new();
        if let Some(a) = &s.address {
            if let Ok(sa) = a.parse::<SocketAddr>() {
                candidates.push(sa);
            }
            if let (Some(ip), Some(port)) = (
                &s.ip,
                a.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()),
            ) {
                if let Ok(ip) = ip.parse::<std::net::IpAddr>() {
                    candidates.push(SocketAddr::new(ip, port));
                }
            }
            if candidates.is_empty() {
                if let Ok(Ok(it)) = timeout(
                    self.config.connect_timeout,
                    tokio::net::lookup_host(a.as_str()),
                )
                .await
                {
                    candidates.extend(it);
                }
            }
        }
        match self.nodes.iter().position(|n| candidates.contains(&n.addr)) {
            Some(i) if i != from => i,
            _ => next,
        }
    }
}

/// Whether a pooled connection still looks usable: the peer has not closed it and nothing
/// unexpected is waiting to be read.
fn still_open(stream: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(stream.try_read(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// Writes the call's frame and reads its response. Every error here comes after the call may
/// have reached the server.
async fn exchange(
    stream: &mut TcpStream,
    addr: SocketAddr,
    call: &CallRecord,
    after: Duration,
) -> Result<OmResponse, OmError> {
    let io = async {
        stream.write_all(&call.frame).await?;
        read_frame(stream).await
    };
    let body = match timeout(after, io).await {
        Err(_) => return Err(OmError::Timeout { addr, after }),
        Ok(Err(source)) => return Err(OmError::Io { addr, source }),
        Ok(Ok(b)) => b,
    };
    decode_call_response(addr, call, &body)
}

/// Turns a response frame body (without its 4-byte length) into the result of `call`.
pub fn decode_call_response(
    addr: SocketAddr,
    call: &CallRecord,
    body: &[u8],
) -> Result<OmResponse, OmError> {
    let payload = decode_rpc_payload(addr, call.call_id, &call.client_id, body)?;
    OmResponse::decode(&payload).map_err(|e| OmError::Malformed {
        addr,
        reason: format!("OMResponse: {e}"),
    })
}

/// The response message in a response frame body (without its 4-byte length) to the call
/// `call_id` of `client_id`, or the error its RPC header carries: any protocol's answer, the
/// OM's or the SCM's.
pub(crate) fn decode_rpc_payload(
    addr: SocketAddr,
    call_id: i32,
    client_id: &[u8; 16],
    body: &[u8],
) -> Result<Vec<u8>, OmError> {
    let malformed = |reason: String| OmError::Malformed { addr, reason };
    let frame = rpc::decode_response(body).map_err(|e| malformed(e.to_string()))?;
    let h = frame.header;
    if h.call_id != call_id {
        return Err(malformed(format!(
            "response to call id {} while waiting for {}",
            h.call_id, call_id
        )));
    }
    if let Some(c) = &h.client_id {
        if !c.is_empty() && c.as_slice() != client_id {
            return Err(malformed("response carries another client id".into()));
        }
    }
    match h.status {
        RpcStatus::Success => Ok(frame.payload.unwrap_or_default()),
        status => {
            let class = h.exception_class.unwrap_or_default();
            let message = h.error_msg.unwrap_or_default();
            if class == OM_NOT_LEADER_EXCEPTION {
                let suggested = parse_suggested_leader(&message).map(Box::new);
                Err(OmError::NotLeader {
                    addr,
                    message: first_line(&message),
                    suggested,
                })
            } else if class == OM_LEADER_NOT_READY_EXCEPTION {
                Err(OmError::LeaderNotReady {
                    addr,
                    message: first_line(&message),
                })
            } else {
                Err(OmError::Remote {
                    addr,
                    class,
                    message: first_line(&message),
                    detail: h.error_detail,
                    fatal: status != RpcStatus::Error,
                })
            }
        }
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_strings() {
        let id: [u8; 16] = core::array::from_fn(|i| i as u8);
        assert_eq!(uuid_string(&id), "00010203-0405-0607-0809-0a0b0c0d0e0f");
        let r = random_client_id();
        assert_eq!(r[6] >> 4, 4);
        assert_ne!(random_client_id(), r);
    }

    #[test]
    fn the_first_call_goes_where_the_client_starts() {
        let addrs: Vec<SocketAddr> = ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let client = OmClient::connect(addrs.clone(), "u").with_node_ids(&["om1", "om2", "om3"]);
        assert_eq!(client.current(), addrs[0]);
        assert_eq!(client.starting_at("om2").current(), addrs[1]);
        let client = OmClient::connect(addrs.clone(), "u").with_node_ids(&["om1", "om2", "om3"]);
        assert_eq!(client.starting_at("om9").current(), addrs[0]);
    }

    #[test]
    fn outcomes() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let e = OmError::Timeout {
            addr,
            after: Duration::from_secs(1),
        };
        assert_eq!(e.outcome(), Outcome::Info);
        let g = OmError::GaveUp {
            attempts: 3,
            last: Box::new(OmError::LeaderNotReady {
                addr,
                message: String::new(),
            }),
        };
        assert_eq!(g.outcome(), Outcome::Fail);
        assert_eq!(
            OmResponse::new(CmdType::RENAME_KEY, Status::KEY_NOT_FOUND).outcome(),
            Outcome::Fail
        );
        assert_eq!(
            OmResponse::new(CmdType::RENAME_KEY, Status::RATIS_ERROR).outcome(),
            Outcome::Info
        );
    }
}
