//! The two questions a harness asks an SCM while it waits for a cluster: is it out of safe mode,
//! and which pipelines are open. `submitRequest` of StorageContainerLocationProtocol with
//! InSafeMode and ListPipelines, over the same Hadoop RPC as the OM client, so that waiting
//! costs a TCP round trip instead of an `ozone admin` JVM (seconds of CPU on a 2-core machine).
//!
//! Field numbers and enum values are from Ozone 2.2.0's `ScmAdminProtocol.proto`
//! (hdds-interface-admin jar: ScmContainerLocationRequest `cmdType = 1`, `version = 3`,
//! `listPipelineRequest = 14`, `inSafeModeRequest = 19`; the response's `status = 5` with
//! `OK = 1`, `listPipelineResponse = 14`, `inSafeModeResponse = 19`; `enum Type` ListPipelines
//! = 9, InSafeMode = 14) and `hdds.proto` (hdds-interface-client jar: Pipeline `state = 2`,
//! `type = 3`, `factor = 4`; PipelineState, ReplicationType, ReplicationFactor). The protocol
//! name is `@ProtocolInfo` of StorageContainerLocationProtocolPB (hdds-server-framework jar).
//!
//! A follower SCM of an HA group refuses both with SCM's NotLeaderException (the server-side
//! translator's `checkLeader`): ask each SCM and take the answer of the one that leads.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::client::{decode_rpc_payload, random_client_id, OmError};
use crate::io::read_frame;
use crate::om::{CLIENT_VERSION, SUBMIT_REQUEST};
use crate::pb::{Reader, Writer};
use crate::rpc::{self, RequestHeader, RpcRequestHeader};

/// `@ProtocolInfo(protocolName = ...)` of StorageContainerLocationProtocolPB.
pub const SCM_PROTOCOL: &str =
    "org.apache.hadoop.hdds.scm.protocol.StorageContainerLocationProtocol";
/// `@ProtocolInfo(protocolVersion = 1)`.
pub const SCM_PROTOCOL_VERSION: u64 = 1;

/// ScmContainerLocationRequest's `enum Type`.
const LIST_PIPELINES: u64 = 9;
const IN_SAFE_MODE: u64 = 14;
/// ScmContainerLocationResponse.Status.OK.
const STATUS_OK: u64 = 1;

/// hdds.proto's PipelineState.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipelineState {
    Allocated,
    Open,
    Dormant,
    Closed,
    Unknown(u64),
}

impl PipelineState {
    fn from_proto(v: u64) -> Self {
        match v {
            1 => Self::Allocated,
            2 => Self::Open,
            3 => Self::Dormant,
            4 => Self::Closed,
            other => Self::Unknown(other),
        }
    }
}

/// What a harness needs of one pipeline: its state and how it replicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineSummary {
    pub state: PipelineState,
    /// ReplicationType: RATIS = 1, STAND_ALONE = 2, EC = 4.
    pub replication_type: u64,
    /// ReplicationFactor: ONE = 1, THREE = 3.
    pub factor: u64,
}

impl PipelineSummary {
    /// An open Ratis pipeline over three datanodes: what a key of replication three is written
    /// through, and what `ozone admin pipeline list` shows as `RATIS/THREE ... OPEN`.
    pub fn is_open_ratis_three(&self) -> bool {
        self.state == PipelineState::Open && self.replication_type == 1 && self.factor == 3
    }

    /// Decodes an hdds.proto Pipeline message, keeping fields 2-4 (proto2 defaults when absent:
    /// PIPELINE_ALLOCATED, STAND_ALONE, ONE).
    fn decode(buf: &[u8]) -> Result<Self, String> {
        let mut out = PipelineSummary {
            state: PipelineState::Allocated,
            replication_type: 2,
            factor: 1,
        };
        let mut r = Reader::new(buf);
        while let Some(f) = r.next_field().map_err(|e| e.to_string())? {
            let v = || f.as_u64().map_err(|e| e.to_string());
            match f.number {
                2 => out.state = PipelineState::from_proto(v()?),
                3 => out.replication_type = v()?,
                4 => out.factor = v()?,
                _ => {}
            }
        }
        Ok(out)
    }
}

/// One SCM, asked over a connection of its own per question.
#[derive(Debug, Clone)]
pub struct ScmClient {
    pub addr: SocketAddr,
    pub user: String,
    /// For connecting, and again for the answer.
    pub timeout: Duration,
}

impl ScmClient {
    pub fn new(addr: SocketAddr, user: &str, timeout: Duration) -> Self {
        ScmClient {
            addr,
            user: user.to_owned(),
            timeout,
        }
    }

    /// InSafeModeResponseProto.inSafeMode.
    pub async fn in_safe_mode(&self) -> Result<bool, OmError> {
        let answer = self.ask(IN_SAFE_MODE, 19).await?;
        let mut r = Reader::new(&answer);
        while let Some(f) = r.next_field().map_err(|e| self.malformed(e.to_string()))? {
            if f.number == 1 {
                return f.as_bool().map_err(|e| self.malformed(e.to_string()));
            }
        }
        Err(self.malformed("InSafeModeResponseProto without inSafeMode".into()))
    }

    /// Every pipeline the SCM knows (ListPipelineResponseProto.pipelines).
    pub async fn pipelines(&self) -> Result<Vec<PipelineSummary>, OmError> {
        let answer = self.ask(LIST_PIPELINES, 14).await?;
        let mut out = Vec::new();
        let mut r = Reader::new(&answer);
        while let Some(f) = r.next_field().map_err(|e| self.malformed(e.to_string()))? {
            if f.number == 1 {
                let bytes = f.as_bytes().map_err(|e| self.malformed(e.to_string()))?;
                out.push(PipelineSummary::decode(bytes).map_err(|e| self.malformed(e))?);
            }
        }
        Ok(out)
    }

    /// Sends a request of `cmd_type` with its (empty) request message in field `field`, checks
    /// the response's status, and returns the response message in the same field number (each
    /// command's request and response share one).
    async fn ask(&self, cmd_type: u64, field: u32) -> Result<Vec<u8>, OmError> {
        let (addr, after) = (self.addr, self.timeout);
        let client_id = random_client_id();
        let mut request = Writer::new();
        request.uint(1, cmd_type);
        request.uint(3, u64::from(CLIENT_VERSION));
        request.message(field, &Writer::new());
        let mut bytes = rpc::preamble().to_vec();
        bytes.extend_from_slice(&rpc::connection_context_frame(
            &client_id,
            &self.user,
            SCM_PROTOCOL,
        ));
        bytes.extend_from_slice(&request_frame(&client_id, &request.finish()));
        let mut stream = match timeout(after, TcpStream::connect(addr)).await {
            Err(_) => return Err(OmError::ConnectTimeout { addr, after }),
            Ok(Err(source)) => return Err(OmError::Connect { addr, source }),
            Ok(Ok(s)) => s,
        };
        let _ = stream.set_nodelay(true);
        let exchange = async {
            stream.write_all(&bytes).await?;
            read_frame(&mut stream).await
        };
        let body = match timeout(after, exchange).await {
            Err(_) => return Err(OmError::Timeout { addr, after }),
            Ok(Err(source)) => return Err(OmError::Io { addr, source }),
            Ok(Ok(b)) => b,
        };
        let response = decode_rpc_payload(addr, CALL_ID, &client_id, &body)?;
        let (mut status, mut message, mut answer) = (None, String::new(), None);
        let mut r = Reader::new(&response);
        while let Some(f) = r.next_field().map_err(|e| self.malformed(e.to_string()))? {
            match f.number {
                4 => message = f.as_string().unwrap_or_default(),
                5 => status = f.as_u64().ok(),
                n if n == field => answer = f.as_bytes().ok().map(<[u8]>::to_vec),
                _ => {}
            }
        }
        match status {
            Some(STATUS_OK) => answer
                .ok_or_else(|| self.malformed(format!("no response message in field {field}"))),
            other => Err(OmError::Remote {
                addr,
                class: format!("ScmContainerLocationResponse status {other:?}"),
                message,
                detail: None,
                fatal: false,
            }),
        }
    }

    fn malformed(&self, reason: String) -> OmError {
        OmError::Malformed {
            addr: self.addr,
            reason,
        }
    }
}

/// One call a connection: its id can be any; 0 is what Hadoop's client gives the first.
const CALL_ID: i32 = 0;

fn request_frame(client_id: &[u8; 16], request: &[u8]) -> Vec<u8> {
    rpc::call_frame(
        &RpcRequestHeader {
            call_id: CALL_ID,
            client_id: client_id.to_vec(),
            retry_count: 0,
        },
        &RequestHeader {
            method_name: SUBMIT_REQUEST.to_owned(),
            protocol: SCM_PROTOCOL.to_owned(),
            protocol_version: SCM_PROTOCOL_VERSION,
        },
        request,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Pipeline message as protobuf-java writes one (members and id left out: not read).
    fn pipeline(state: u64, kind: u64, factor: u64) -> Vec<u8> {
        let mut w = Writer::new();
        w.uint(2, state).uint(3, kind).uint(4, factor);
        w.finish()
    }

    #[test]
    fn an_open_ratis_three_pipeline_is_told_from_the_others() {
        let open_three = PipelineSummary::decode(&pipeline(2, 1, 3)).unwrap();
        assert!(open_three.is_open_ratis_three());
        for (state, kind, factor) in [(1, 1, 3), (2, 1, 1), (4, 1, 3), (2, 4, 3)] {
            let p = PipelineSummary::decode(&pipeline(state, kind, factor)).unwrap();
            assert!(!p.is_open_ratis_three(), "{p:?}");
        }
        // Every field absent: proto2's defaults, an allocated STAND_ALONE/ONE pipeline.
        let empty = PipelineSummary::decode(&[]).unwrap();
        assert_eq!(empty.state, PipelineState::Allocated);
        assert_eq!((empty.replication_type, empty.factor), (2, 1));
    }
}
