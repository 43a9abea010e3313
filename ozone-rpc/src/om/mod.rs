//! OMRequest / OMResponse, written by hand from Ozone's .proto files.
//!
//! Field numbers and enum values are from
//! `apache/ozone` `hadoop-ozone/interface-client/src/main/proto/OmClientProtocol.proto`
//! (read at commit 0042baf76184950b70ee1875d375a43a32ef3d1f, the 2.x line: it has RecoverLease,
//! GetObjectTagging and KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD), except `ReplicationType` and
//! `ReplicationFactor`, which are from
//! `apache/ozone` `hadoop-hdds/interface-client/src/main/proto/hdds.proto`.
//! The protocol name and version are from `OzoneManagerProtocolPB`'s `@ProtocolInfo`
//! (`apache/ozone` `hadoop-ozone/common/src/main/java/org/apache/hadoop/ozone/om/protocolPB/OzoneManagerProtocolPB.java`),
//! the service method from `service OzoneManagerService { rpc submitRequest(OMRequest) ... }`
//! at the end of OmClientProtocol.proto, and the client version from
//! `apache/ozone` `hadoop-hdds/common/src/main/java/org/apache/hadoop/ozone/ClientVersion.java`
//! (`CURRENT_VERSION` = BUCKET_LAYOUT_SUPPORT = 3).
//!
//! One submodule per concern; every item is re-exported here, so `ozone_rpc::om::X` paths
//! stay as they were.

mod enums;
mod request;
mod request_body;
mod status;

pub use enums::{replication_factor, replication_type, BucketLayout, CmdType};
pub use request::OmRequest;
pub use request_body::{KeyArgs, OmRequestBody};
pub use status::Status;

use crate::pb::{DecodeError, Reader, Writer};

/// `@ProtocolInfo(protocolName = ...)` of OzoneManagerProtocolPB: sent in the connection
/// context and as RequestHeaderProto.declaringClassProtocolName.
pub const OM_PROTOCOL: &str = "org.apache.hadoop.ozone.om.protocol.OzoneManagerProtocol";
/// `@ProtocolInfo(protocolVersion = 1)` of OzoneManagerProtocolPB.
pub const OM_PROTOCOL_VERSION: u64 = 1;
/// The one method of `service OzoneManagerService`.
pub const SUBMIT_REQUEST: &str = "submitRequest";
/// `ClientVersion.CURRENT_VERSION` (BUCKET_LAYOUT_SUPPORT), sent as OMRequest.version.
pub const CLIENT_VERSION: u32 = 3;

/// Exception classes the failover logic knows (package `org.apache.hadoop.ozone.om.exceptions`).
pub const OM_NOT_LEADER_EXCEPTION: &str =
    "org.apache.hadoop.ozone.om.exceptions.OMNotLeaderException";
pub const OM_LEADER_NOT_READY_EXCEPTION: &str =
    "org.apache.hadoop.ozone.om.exceptions.OMLeaderNotReadyException";

/// OzoneConsts.HSYNC_CLIENT_ID: the metadata key an hsync'd, still open file carries.
pub const HSYNC_CLIENT_ID: &str = "hsyncClientId";
/// OzoneConsts.LEASE_RECOVERY: set on an open key whose lease recovery has begun.
pub const LEASE_RECOVERY: &str = "leaseRecovery";

fn decode_key_value(buf: &[u8]) -> Result<(String, String), DecodeError> {
    let (mut key, mut value) = (None, String::new());
    let mut r = Reader::new(buf);
    while let Some(f) = r.next_field()? {
        match f.number {
            1 => key = Some(f.as_string()?),
            2 => value = f.as_string()?,
            _ => {}
        }
    }
    Ok((key.ok_or(DecodeError::Missing("KeyValue.key"))?, value))
}

/// The KeyInfo fields a checker needs (message `KeyInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyInfo {
    /// field 1
    pub volume: String,
    /// field 2
    pub bucket: String,
    /// field 3
    pub key: String,
    /// field 4, required uint64 dataSize: the key's length
    pub data_size: u64,
    /// field 8
    pub creation_time: u64,
    /// field 9
    pub modification_time: u64,
    /// field 10
    pub latest_version: Option<u64>,
    /// field 11, repeated hadoop.hdds.KeyValue metadata (KeyValue { key = 1, value = 2 }).
    pub metadata: Vec<(String, String)>,
    /// field 14
    pub object_id: Option<u64>,
    /// field 15
    pub update_id: Option<u64>,
}

impl KeyInfo {
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut k = Self::default();
        let mut r = Reader::new(buf);
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => k.volume = f.as_string()?,
                2 => k.bucket = f.as_string()?,
                3 => k.key = f.as_string()?,
                4 => k.data_size = f.as_u64()?,
                8 => k.creation_time = f.as_u64()?,
                9 => k.modification_time = f.as_u64()?,
                10 => k.latest_version = Some(f.as_u64()?),
                11 => k.metadata.push(decode_key_value(f.as_bytes()?)?),
                14 => k.object_id = Some(f.as_u64()?),
                15 => k.update_id = Some(f.as_u64()?),
                _ => {}
            }
        }
        Ok(k)
    }

    /// A metadata value (OzoneConsts names the keys: `hsyncClientId`, `leaseRecovery`, ...).
    pub fn metadata_value(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the key is an hsync'd file still open: its KeyInfo carries the writer's id
    /// (`hsyncClientId`), which the OM removes when the file is closed or recovered.
    pub fn is_open(&self) -> bool {
        self.metadata_value(HSYNC_CLIENT_ID).is_some()
    }

    /// Encodes the fields above plus `type` (5, required; RATIS) so that a test server can answer
    /// with a KeyInfo that protobuf-java would also accept.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.string(1, &self.volume)
            .string(2, &self.bucket)
            .string(3, &self.key)
            .uint(4, self.data_size)
            .int(5, i64::from(replication_type::RATIS))
            .uint(8, self.creation_time)
            .uint(9, self.modification_time);
        if let Some(v) = self.latest_version {
            w.uint(10, v);
        }
        for (key, value) in &self.metadata {
            let mut kv = Writer::new();
            kv.string(1, key).string(2, value);
            w.message(11, &kv);
        }
        if let Some(v) = self.object_id {
            w.uint(14, v);
        }
        if let Some(v) = self.update_id {
            w.uint(15, v);
        }
        w.finish()
    }
}

/// An OMResponse, decoded to what the harness and its checkers use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmResponse {
    /// field 1, required Type cmdType.
    pub cmd_type: CmdType,
    /// field 2, optional string traceID.
    pub trace_id: Option<String>,
    /// field 3, optional bool success [default = true].
    pub success: bool,
    /// field 4, optional string message (the error text when status is not OK).
    pub message: Option<String>,
    /// field 5, required Status status.
    pub status: Status,
    /// field 6, optional string leaderOMNodeId.
    pub leader_om_node_id: Option<String>,
    /// KeyInfo of LookupKeyResponse (32, field 2), CreateKeyResponse (31, field 2) or
    /// RecoverLeaseResponse (119, field 2).
    pub key_info: Option<KeyInfo>,
    /// RecoverLeaseResponse.openKeyInfo (field 3).
    pub open_key_info: Option<KeyInfo>,
    /// CreateKeyResponse.ID (field 3): the open key's id, to pass to CommitKey.
    pub open_key_id: Option<u64>,
    /// CreateKeyResponse / LookupKeyResponse openVersion (field 4).
    pub open_version: Option<u64>,
}

impl OmResponse {
    /// A response with only the common fields set.
    pub fn new(cmd_type: CmdType, status: Status) -> Self {
        Self {
            cmd_type,
            trace_id: None,
            success: status == Status::OK,
            message: None,
            status,
            leader_om_node_id: None,
            key_info: None,
            open_key_info: None,
            open_key_id: None,
            open_version: None,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.status == Status::OK
    }

    /// The length of the looked-up key, if this response carries a KeyInfo.
    pub fn key_length(&self) -> Option<u64> {
        self.key_info.as_ref().map(|k| k.data_size)
    }

    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let mut resp = Self::new(CmdType(0), Status(0));
        resp.success = true;
        let (mut has_cmd, mut has_status) = (false, false);
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => {
                    resp.cmd_type = CmdType(f.as_i32()?);
                    has_cmd = true;
                }
                2 => resp.trace_id = Some(f.as_string()?),
                3 => resp.success = f.as_bool()?,
                4 => resp.message = Some(f.as_string()?),
                5 => {
                    resp.status = Status(f.as_i32()?);
                    has_status = true;
                }
                6 => resp.leader_om_node_id = Some(f.as_string()?),
                31 | 32 | 119 => {
                    let mut s = Reader::new(f.as_bytes()?);
                    while let Some(g) = s.next_field()? {
                        match (f.number, g.number) {
                            (_, 2) => resp.key_info = Some(KeyInfo::decode(g.as_bytes()?)?),
                            (119, 3) => resp.open_key_info = Some(KeyInfo::decode(g.as_bytes()?)?),
                            (31, 3) => resp.open_key_id = Some(g.as_u64()?),
                            (31 | 32, 4) => resp.open_version = Some(g.as_u64()?),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if !has_cmd {
            return Err(DecodeError::Missing("OMResponse.cmdType"));
        }
        if !has_status {
            return Err(DecodeError::Missing("OMResponse.status"));
        }
        Ok(resp)
    }

    /// Encodes (for test servers): common fields in field-number order, then the sub-response of
    /// CreateKey, LookupKey or RecoverLease when it has something to carry, else an empty
    /// sub-response for the command (as the OM sends, e.g. `renameKeyResponse {}`).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.int(1, i64::from(self.cmd_type.0));
        if let Some(t) = &self.trace_id {
            w.string(2, t);
        }
        w.bool(3, self.success);
        if let Some(m) = &self.message {
            w.string(4, m);
        }
        w.int(5, i64::from(self.status.0));
        if let Some(l) = &self.leader_om_node_id {
            w.string(6, l);
        }
        if self.status == Status::OK {
            let mut sub = Writer::new();
            if let Some(k) = &self.key_info {
                sub.bytes(2, &k.encode());
            }
            match self.cmd_type {
                CmdType::CREATE_KEY => {
                    if let Some(id) = self.open_key_id {
                        sub.uint(3, id);
                    }
                    if let Some(v) = self.open_version {
                        sub.uint(4, v);
                    }
                }
                CmdType::LOOKUP_KEY => {
                    if let Some(v) = self.open_version {
                        sub.uint(4, v);
                    }
                }
                CmdType::RECOVER_LEASE => {
                    if let Some(k) = &self.open_key_info {
                        sub.bytes(3, &k.encode());
                    }
                }
                _ => {}
            }
            if self.cmd_type.0 > 0 {
                w.message(self.cmd_type.0 as u32, &sub);
            }
        }
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_round_trips() {
        let mut r = OmResponse::new(CmdType::CREATE_KEY, Status::OK);
        r.open_key_id = Some(5);
        r.open_version = Some(0);
        r.key_info = Some(KeyInfo {
            volume: "v".into(),
            bucket: "b".into(),
            key: "k".into(),
            data_size: 3,
            object_id: Some(9),
            ..KeyInfo::default()
        });
        assert_eq!(OmResponse::decode(&r.encode()), Ok(r));
    }
}
