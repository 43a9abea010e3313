//! The Hadoop IPC wire format, protobuf engine, SIMPLE authentication.
//!
//! Sources of the facts (field numbers and constants), all Apache Hadoop:
//! - `apache/hadoop` `hadoop-common-project/hadoop-common/src/main/proto/RpcHeader.proto`
//!   (RpcKindProto, RpcRequestHeaderProto with `sint32 callId = 3`, RpcResponseHeaderProto);
//! - `apache/hadoop` `hadoop-common-project/hadoop-common/src/main/proto/IpcConnectionContext.proto`
//!   (IpcConnectionContextProto, UserInformationProto);
//! - `apache/hadoop` `hadoop-common-project/hadoop-common/src/main/proto/ProtobufRpcEngine.proto`
//!   (RequestHeaderProto);
//! - the connection header ("hrpc", version 9, service class, auth protocol) and the
//!   connection-context call id -3 are `RpcConstants` / `Client.Connection.writeConnectionHeader`
//!   in hadoop-common's `org.apache.hadoop.ipc`; the same bytes are written by
//!   `apache/ozone-go` `api/hadoop/ipc/client/client.go` (writeConnectionHeader,
//!   writeConnectionContext, sendRequest), which was read as a cross-check.
//!
//! Connection: `hrpc` `09` `<service class>` `<auth protocol>`, then frames. Every frame is a
//! 4-byte big-endian length of what follows, then varint-delimited protobuf messages:
//! - connection context: RpcRequestHeaderProto (callId -3), IpcConnectionContextProto;
//! - a call: RpcRequestHeaderProto, RequestHeaderProto, the request message;
//! - a response: RpcResponseHeaderProto, then (status SUCCESS) the response message.

use crate::pb::{self, DecodeError, Reader, Writer};

/// `RpcConstants.HEADER`: the 4 magic bytes every connection starts with.
pub const MAGIC: [u8; 4] = *b"hrpc";
/// `RpcConstants.CURRENT_VERSION`.
pub const IPC_VERSION: u8 = 9;
/// `RPC.RPC_SERVICE_CLASS_DEFAULT`: the service class byte a plain client sends.
pub const SERVICE_CLASS_DEFAULT: u8 = 0;
/// `AuthProtocol.NONE` (SIMPLE authentication, no SASL). SASL would be -33 (0xDF).
pub const AUTH_PROTOCOL_NONE: u8 = 0;
/// `RpcConstants.CONNECTION_CONTEXT_CALL_ID`.
pub const CONNECTION_CONTEXT_CALL_ID: i32 = -3;
/// `RpcConstants.INVALID_RETRY_COUNT`, used for the connection context.
pub const INVALID_RETRY_COUNT: i32 = -1;
/// Largest response frame accepted (Hadoop's default `ipc.maximum.response.length` is 128 MiB).
pub const MAX_FRAME: u32 = 128 << 20;

/// RpcKindProto (RpcHeader.proto): RPC_BUILTIN = 0, RPC_WRITABLE = 1, RPC_PROTOCOL_BUFFER = 2.
pub const RPC_PROTOCOL_BUFFER: u64 = 2;
/// RpcRequestHeaderProto.OperationProto: RPC_FINAL_PACKET = 0.
pub const RPC_FINAL_PACKET: u64 = 0;

/// The 7-byte connection preamble: magic, version, service class, auth protocol.
pub fn preamble() -> [u8; 7] {
    [
        MAGIC[0],
        MAGIC[1],
        MAGIC[2],
        MAGIC[3],
        IPC_VERSION,
        SERVICE_CLASS_DEFAULT,
        AUTH_PROTOCOL_NONE,
    ]
}

/// RpcRequestHeaderProto (RpcHeader.proto).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcRequestHeader {
    /// field 3, `required sint32 callId`.
    pub call_id: i32,
    /// field 4, `required bytes clientId` (16 bytes: a UUID).
    pub client_id: Vec<u8>,
    /// field 5, `optional sint32 retryCount [default = -1]`.
    pub retry_count: i32,
}

impl RpcRequestHeader {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.uint(1, RPC_PROTOCOL_BUFFER) // optional RpcKindProto rpcKind = 1
            .uint(2, RPC_FINAL_PACKET) // optional OperationProto rpcOp = 2
            .sint32(3, self.call_id) // required sint32 callId = 3
            .bytes(4, &self.client_id) // required bytes clientId = 4
            .sint32(5, self.retry_count); // optional sint32 retryCount = 5
        w.finish()
    }

    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let (mut call_id, mut client_id, mut retry_count) = (None, None, INVALID_RETRY_COUNT);
        while let Some(f) = r.next_field()? {
            match f.number {
                3 => call_id = Some(f.as_sint32()?),
                4 => client_id = Some(f.as_bytes()?.to_vec()),
                5 => retry_count = f.as_sint32()?,
                _ => {}
            }
        }
        Ok(Self {
            call_id: call_id.ok_or(DecodeError::Missing("RpcRequestHeaderProto.callId"))?,
            client_id: client_id.ok_or(DecodeError::Missing("RpcRequestHeaderProto.clientId"))?,
            retry_count,
        })
    }
}

/// IpcConnectionContextProto (IpcConnectionContext.proto) for SIMPLE auth: the user is sent as
/// `userInfo.effectiveUser`, no real user (what `ProtoUtil.makeIpcConnectionContext` does for a
/// plain, non-proxy user).
pub fn encode_connection_context(user: &str, protocol: &str) -> Vec<u8> {
    let mut user_info = Writer::new();
    user_info.string(1, user); // UserInformationProto: optional string effectiveUser = 1
    let mut w = Writer::new();
    w.message(2, &user_info) // optional UserInformationProto userInfo = 2
        .string(3, protocol); // optional string protocol = 3
    w.finish()
}

/// Decodes an IpcConnectionContextProto into (effective user, protocol).
pub fn decode_connection_context(
    buf: &[u8],
) -> Result<(Option<String>, Option<String>), DecodeError> {
    let mut r = Reader::new(buf);
    let (mut user, mut protocol) = (None, None);
    while let Some(f) = r.next_field()? {
        match f.number {
            2 => {
                let mut u = Reader::new(f.as_bytes()?);
                while let Some(g) = u.next_field()? {
                    if g.number == 1 {
                        user = Some(g.as_string()?);
                    }
                }
            }
            3 => protocol = Some(f.as_string()?),
            _ => {}
        }
    }
    Ok((user, protocol))
}

/// RequestHeaderProto (ProtobufRpcEngine.proto).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeader {
    /// field 1, `required string methodName`.
    pub method_name: String,
    /// field 2, `required string declaringClassProtocolName`.
    pub protocol: String,
    /// field 3, `required uint64 clientProtocolVersion`.
    pub protocol_version: u64,
}

impl RequestHeader {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.string(1, &self.method_name)
            .string(2, &self.protocol)
            .uint(3, self.protocol_version);
        w.finish()
    }

    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let (mut m, mut p, mut v) = (None, None, None);
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => m = Some(f.as_string()?),
                2 => p = Some(f.as_string()?),
                3 => v = Some(f.as_u64()?),
                _ => {}
            }
        }
        Ok(Self {
            method_name: m.ok_or(DecodeError::Missing("RequestHeaderProto.methodName"))?,
            protocol: p.ok_or(DecodeError::Missing(
                "RequestHeaderProto.declaringClassProtocolName",
            ))?,
            protocol_version: v.ok_or(DecodeError::Missing(
                "RequestHeaderProto.clientProtocolVersion",
            ))?,
        })
    }
}

/// RpcResponseHeaderProto.RpcStatusProto: SUCCESS = 0, ERROR = 1, FATAL = 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcStatus {
    Success,
    /// The call failed; the connection stays open.
    Error,
    /// The call failed and the server closes the connection.
    Fatal,
    /// A value this client does not know.
    Other(i32),
}

impl RpcStatus {
    pub fn from_i32(v: i32) -> Self {
        match v {
            0 => Self::Success,
            1 => Self::Error,
            2 => Self::Fatal,
            o => Self::Other(o),
        }
    }

    pub fn to_i32(self) -> i32 {
        match self {
            Self::Success => 0,
            Self::Error => 1,
            Self::Fatal => 2,
            Self::Other(o) => o,
        }
    }
}

/// RpcResponseHeaderProto.RpcErrorCodeProto values (RpcHeader.proto).
pub mod error_code {
    pub const ERROR_APPLICATION: i32 = 1;
    pub const ERROR_NO_SUCH_METHOD: i32 = 2;
    pub const ERROR_NO_SUCH_PROTOCOL: i32 = 3;
    pub const ERROR_RPC_SERVER: i32 = 4;
    pub const ERROR_SERIALIZING_RESPONSE: i32 = 5;
    pub const ERROR_RPC_VERSION_MISMATCH: i32 = 6;
    pub const FATAL_UNKNOWN: i32 = 10;
    pub const FATAL_UNSUPPORTED_SERIALIZATION: i32 = 11;
    pub const FATAL_INVALID_RPC_HEADER: i32 = 12;
    pub const FATAL_DESERIALIZING_REQUEST: i32 = 13;
    pub const FATAL_VERSION_MISMATCH: i32 = 14;
    pub const FATAL_UNAUTHORIZED: i32 = 15;
}

/// RpcResponseHeaderProto (RpcHeader.proto).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcResponseHeader {
    /// field 1, `required uint32 callId` (a Java int: -3 etc. arrive as 2^32-3).
    pub call_id: i32,
    /// field 2, `required RpcStatusProto status`.
    pub status: RpcStatus,
    /// field 3, `optional uint32 serverIpcVersionNum`.
    pub server_ipc_version: Option<u32>,
    /// field 4, `optional string exceptionClassName`.
    pub exception_class: Option<String>,
    /// field 5, `optional string errorMsg` (message, then the server's stack trace).
    pub error_msg: Option<String>,
    /// field 6, `optional RpcErrorCodeProto errorDetail`.
    pub error_detail: Option<i32>,
    /// field 7, `optional bytes clientId`.
    pub client_id: Option<Vec<u8>>,
    /// field 8, `optional sint32 retryCount [default = -1]`.
    pub retry_count: i32,
}

impl RpcResponseHeader {
    /// A SUCCESS header as Hadoop's `Server.setupResponse` writes it.
    pub fn success(call_id: i32, client_id: &[u8], retry_count: i32) -> Self {
        Self {
            call_id,
            status: RpcStatus::Success,
            server_ipc_version: Some(u32::from(IPC_VERSION)),
            exception_class: None,
            error_msg: None,
            error_detail: None,
            client_id: Some(client_id.to_vec()),
            retry_count,
        }
    }

    /// An ERROR header carrying an application exception (ERROR_APPLICATION).
    pub fn error(call_id: i32, client_id: &[u8], retry_count: i32, class: &str, msg: &str) -> Self {
        Self {
            call_id,
            status: RpcStatus::Error,
            server_ipc_version: Some(u32::from(IPC_VERSION)),
            exception_class: Some(class.to_owned()),
            error_msg: Some(msg.to_owned()),
            error_detail: Some(error_code::ERROR_APPLICATION),
            client_id: Some(client_id.to_vec()),
            retry_count,
        }
    }

    /// Encodes in field-number order, as protobuf-java does (used by test servers).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.uint(1, u64::from(self.call_id as u32));
        w.int(2, i64::from(self.status.to_i32()));
        if let Some(v) = self.server_ipc_version {
            w.uint(3, u64::from(v));
        }
        if let Some(c) = &self.exception_class {
            w.string(4, c);
        }
        if let Some(m) = &self.error_msg {
            w.string(5, m);
        }
        if let Some(d) = self.error_detail {
            w.int(6, i64::from(d));
        }
        if let Some(c) = &self.client_id {
            w.bytes(7, c);
        }
        w.sint32(8, self.retry_count);
        w.finish()
    }

    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let mut h = Self {
            call_id: 0,
            status: RpcStatus::Success,
            server_ipc_version: None,
            exception_class: None,
            error_msg: None,
            error_detail: None,
            client_id: None,
            retry_count: INVALID_RETRY_COUNT,
        };
        let (mut has_call, mut has_status) = (false, false);
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => {
                    h.call_id = f.as_u32()? as i32;
                    has_call = true;
                }
                2 => {
                    h.status = RpcStatus::from_i32(f.as_i32()?);
                    has_status = true;
                }
                3 => h.server_ipc_version = Some(f.as_u32()?),
                4 => h.exception_class = Some(f.as_string()?),
                5 => h.error_msg = Some(f.as_string()?),
                6 => h.error_detail = Some(f.as_i32()?),
                7 => h.client_id = Some(f.as_bytes()?.to_vec()),
                8 => h.retry_count = f.as_sint32()?,
                _ => {} // 9 stateId, 10 routerFederatedState: not needed here
            }
        }
        if !has_call {
            return Err(DecodeError::Missing("RpcResponseHeaderProto.callId"));
        }
        if !has_status {
            return Err(DecodeError::Missing("RpcResponseHeaderProto.status"));
        }
        Ok(h)
    }
}

/// Wraps delimited messages into one frame: 4-byte big-endian length, then each message with
/// its varint length.
pub fn frame(messages: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    for m in messages {
        pb::put_delimited(&mut body, m);
    }
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// The connection-context frame sent right after the preamble.
pub fn connection_context_frame(client_id: &[u8], user: &str, protocol: &str) -> Vec<u8> {
    let header = RpcRequestHeader {
        call_id: CONNECTION_CONTEXT_CALL_ID,
        client_id: client_id.to_vec(),
        retry_count: INVALID_RETRY_COUNT,
    };
    frame(&[&header.encode(), &encode_connection_context(user, protocol)])
}

/// A call frame: RpcRequestHeaderProto, RequestHeaderProto, the request message.
pub fn call_frame(
    header: &RpcRequestHeader,
    request_header: &RequestHeader,
    payload: &[u8],
) -> Vec<u8> {
    frame(&[&header.encode(), &request_header.encode(), payload])
}

/// Splits a frame body (without its 4-byte length) into its delimited messages.
pub fn split_frame(mut body: &[u8]) -> Result<Vec<&[u8]>, DecodeError> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let (m, rest) = pb::split_delimited(body)?;
        out.push(m);
        body = rest;
    }
    Ok(out)
}

/// A decoded response frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseFrame {
    pub header: RpcResponseHeader,
    /// The response message (present when the status is SUCCESS).
    pub payload: Option<Vec<u8>>,
}

/// Decodes a response frame body (without its 4-byte length).
pub fn decode_response(body: &[u8]) -> Result<ResponseFrame, DecodeError> {
    let (h, rest) = pb::split_delimited(body)?;
    let header = RpcResponseHeader::decode(h)?;
    let payload = if header.status == RpcStatus::Success {
        let (p, _) = pb::split_delimited(rest)?;
        Some(p.to_vec())
    } else {
        None
    };
    Ok(ResponseFrame { header, payload })
}

/// A response frame (with its length), as a server sends it.
pub fn response_frame(header: &RpcResponseHeader, payload: Option<&[u8]>) -> Vec<u8> {
    let h = header.encode();
    match payload {
        Some(p) => frame(&[&h, p]),
        None => frame(&[&h]),
    }
}

/// A decoded request frame, as a server sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame {
    pub header: RpcRequestHeader,
    /// RequestHeaderProto; `None` for the connection context.
    pub request_header: Option<RequestHeader>,
    /// The request message or, for the connection context, the IpcConnectionContextProto.
    pub payload: Vec<u8>,
}

/// Decodes a request frame body (without its 4-byte length): the connection context (two
/// messages, callId -3) or a call (three messages).
pub fn decode_request(body: &[u8]) -> Result<RequestFrame, DecodeError> {
    let parts = split_frame(body)?;
    let header = RpcRequestHeader::decode(
        parts
            .first()
            .ok_or(DecodeError::Missing("RpcRequestHeaderProto"))?,
    )?;
    if header.call_id == CONNECTION_CONTEXT_CALL_ID {
        let ctx = parts
            .get(1)
            .ok_or(DecodeError::Missing("IpcConnectionContextProto"))?;
        return Ok(RequestFrame {
            header,
            request_header: None,
            payload: ctx.to_vec(),
        });
    }
    let rh = RequestHeader::decode(
        parts
            .get(1)
            .ok_or(DecodeError::Missing("RequestHeaderProto"))?,
    )?;
    let payload = parts
        .get(2)
        .ok_or(DecodeError::Missing("request message"))?;
    Ok(RequestFrame {
        header,
        request_header: Some(rh),
        payload: payload.to_vec(),
    })
}

/// Checks a 7-byte preamble; returns (version, service class, auth protocol).
pub fn check_preamble(p: &[u8]) -> Result<(u8, u8, u8), DecodeError> {
    if p.len() < 7 || p[..4] != MAGIC {
        return Err(DecodeError::Invalid("not an hrpc connection header".into()));
    }
    Ok((p[4], p[5], p[6]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_header_round_trip_with_negative_call_id() {
        let h = RpcResponseHeader::error(-3, &[1; 16], -1, "java.io.IOException", "boom");
        assert_eq!(RpcResponseHeader::decode(&h.encode()), Ok(h));
    }

    #[test]
    fn decode_response_needs_the_payload_on_success() {
        let h = RpcResponseHeader::success(1, &[0; 16], 0).encode();
        let f = frame(&[&h]);
        assert!(decode_response(&f[4..]).is_err());
    }
}
