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
mod status;

pub use enums::{replication_factor, replication_type, BucketLayout, CmdType};
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

/// The KeyArgs fields this client sets (message `KeyArgs`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyArgs {
    /// field 1, required string volumeName
    pub volume: String,
    /// field 2, required string bucketName
    pub bucket: String,
    /// field 3, required string keyName
    pub key: String,
    /// field 4, optional uint64 dataSize
    pub data_size: Option<u64>,
    /// field 5, optional hadoop.hdds.ReplicationType type
    pub replication_type: Option<i32>,
    /// field 6, optional hadoop.hdds.ReplicationFactor factor
    pub replication_factor: Option<i32>,
}

impl KeyArgs {
    pub fn new(volume: &str, bucket: &str, key: &str) -> Self {
        Self {
            volume: volume.into(),
            bucket: bucket.into(),
            key: key.into(),
            ..Self::default()
        }
    }

    fn encode(&self) -> Writer {
        let mut w = Writer::new();
        w.string(1, &self.volume)
            .string(2, &self.bucket)
            .string(3, &self.key);
        if let Some(s) = self.data_size {
            w.uint(4, s);
        }
        if let Some(t) = self.replication_type {
            w.int(5, i64::from(t));
        }
        if let Some(f) = self.replication_factor {
            w.int(6, i64::from(f));
        }
        w
    }

    fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut a = Self::default();
        let mut r = Reader::new(buf);
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => a.volume = f.as_string()?,
                2 => a.bucket = f.as_string()?,
                3 => a.key = f.as_string()?,
                4 => a.data_size = Some(f.as_u64()?),
                5 => a.replication_type = Some(f.as_i32()?),
                6 => a.replication_factor = Some(f.as_i32()?),
                _ => {}
            }
        }
        Ok(a)
    }
}

/// The per-command request (one of OMRequest's optional sub-messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OmRequestBody {
    /// OMRequest field 11, CreateVolumeRequest { required VolumeInfo volumeInfo = 1 };
    /// VolumeInfo { adminName = 1, ownerName = 2, volume = 3, quotaInBytes = 4 }.
    CreateVolume {
        volume: String,
        admin: String,
        owner: String,
        quota_in_bytes: Option<u64>,
    },
    /// OMRequest field 21, CreateBucketRequest { required BucketInfo bucketInfo = 1 };
    /// BucketInfo { volumeName = 1, bucketName = 2, isVersionEnabled = 4, storageType = 5,
    /// bucketLayout = 18 }.
    CreateBucket {
        volume: String,
        bucket: String,
        versioning: bool,
        layout: Option<BucketLayout>,
    },
    /// OMRequest field 31, CreateKeyRequest { required KeyArgs keyArgs = 1 }.
    CreateKey { args: KeyArgs },
    /// OMRequest field 36, CommitKeyRequest { keyArgs = 1, required uint64 clientID = 2,
    /// hsync = 3 }: with `hsync` the key is committed and stays open (an hsync'd file).
    CommitKey {
        args: KeyArgs,
        open_key_id: u64,
        hsync: bool,
    },
    /// OMRequest field 33, RenameKeyRequest { keyArgs = 1, required string toKeyName = 2 }.
    RenameKey { args: KeyArgs, to_key: String },
    /// OMRequest field 32, LookupKeyRequest { required KeyArgs keyArgs = 1 }.
    LookupKey { args: KeyArgs },
    /// OMRequest field 119, RecoverLeaseRequest { volumeName = 1, bucketName = 2, keyName = 3,
    /// force = 4 }.
    RecoverLease {
        volume: String,
        bucket: String,
        key: String,
        force: bool,
    },
}

impl OmRequestBody {
    pub fn cmd_type(&self) -> CmdType {
        match self {
            Self::CreateVolume { .. } => CmdType::CREATE_VOLUME,
            Self::CreateBucket { .. } => CmdType::CREATE_BUCKET,
            Self::CreateKey { .. } => CmdType::CREATE_KEY,
            Self::CommitKey { .. } => CmdType::COMMIT_KEY,
            Self::RenameKey { .. } => CmdType::RENAME_KEY,
            Self::LookupKey { .. } => CmdType::LOOKUP_KEY,
            Self::RecoverLease { .. } => CmdType::RECOVER_LEASE,
        }
    }

    /// The OMRequest field number that carries this body (equal to the Type value for these
    /// seven commands).
    fn field(&self) -> u32 {
        self.cmd_type().0 as u32
    }

    fn encode(&self) -> Writer {
        let mut w = Writer::new();
        match self {
            Self::CreateVolume {
                volume,
                admin,
                owner,
                quota_in_bytes,
            } => {
                let mut vi = Writer::new();
                vi.string(1, admin).string(2, owner).string(3, volume);
                if let Some(q) = quota_in_bytes {
                    vi.uint(4, *q);
                }
                w.message(1, &vi);
            }
            Self::CreateBucket {
                volume,
                bucket,
                versioning,
                layout,
            } => {
                let mut bi = Writer::new();
                bi.string(1, volume)
                    .string(2, bucket)
                    .bool(4, *versioning)
                    .int(5, 1); // StorageTypeProto DISK = 1 (required)
                if let Some(l) = layout {
                    bi.int(18, i64::from(l.to_i32()));
                }
                w.message(1, &bi);
            }
            Self::CreateKey { args } | Self::LookupKey { args } => {
                w.message(1, &args.encode());
            }
            Self::CommitKey {
                args,
                open_key_id,
                hsync,
            } => {
                w.message(1, &args.encode()).uint(2, *open_key_id);
                if *hsync {
                    w.bool(3, true);
                }
            }
            Self::RenameKey { args, to_key } => {
                w.message(1, &args.encode()).string(2, to_key);
            }
            Self::RecoverLease {
                volume,
                bucket,
                key,
                force,
            } => {
                w.string(1, volume).string(2, bucket).string(3, key);
                if *force {
                    w.bool(4, true);
                }
            }
        }
        w
    }

    fn decode(cmd: CmdType, buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        match cmd {
            CmdType::CREATE_VOLUME => {
                let (mut volume, mut admin, mut owner, mut quota) =
                    (String::new(), String::new(), String::new(), None);
                while let Some(f) = r.next_field()? {
                    if f.number == 1 {
                        let mut v = Reader::new(f.as_bytes()?);
                        while let Some(g) = v.next_field()? {
                            match g.number {
                                1 => admin = g.as_string()?,
                                2 => owner = g.as_string()?,
                                3 => volume = g.as_string()?,
                                4 => quota = Some(g.as_u64()?),
                                _ => {}
                            }
                        }
                    }
                }
                Ok(Self::CreateVolume {
                    volume,
                    admin,
                    owner,
                    quota_in_bytes: quota,
                })
            }
            CmdType::CREATE_BUCKET => {
                let (mut volume, mut bucket, mut versioning, mut layout) =
                    (String::new(), String::new(), false, None);
                while let Some(f) = r.next_field()? {
                    if f.number == 1 {
                        let mut b = Reader::new(f.as_bytes()?);
                        while let Some(g) = b.next_field()? {
                            match g.number {
                                1 => volume = g.as_string()?,
                                2 => bucket = g.as_string()?,
                                4 => versioning = g.as_bool()?,
                                18 => layout = BucketLayout::from_i32(g.as_i32()?),
                                _ => {}
                            }
                        }
                    }
                }
                Ok(Self::CreateBucket {
                    volume,
                    bucket,
                    versioning,
                    layout,
                })
            }
            CmdType::CREATE_KEY
            | CmdType::LOOKUP_KEY
            | CmdType::COMMIT_KEY
            | CmdType::RENAME_KEY => {
                let (mut args, mut id, mut to, mut hsync) = (None, None, None, false);
                while let Some(f) = r.next_field()? {
                    match f.number {
                        1 => args = Some(KeyArgs::decode(f.as_bytes()?)?),
                        2 if cmd == CmdType::COMMIT_KEY => id = Some(f.as_u64()?),
                        3 if cmd == CmdType::COMMIT_KEY => hsync = f.as_bool()?,
                        2 if cmd == CmdType::RENAME_KEY => to = Some(f.as_string()?),
                        _ => {}
                    }
                }
                let args = args.ok_or(DecodeError::Missing("keyArgs"))?;
                Ok(match cmd {
                    CmdType::CREATE_KEY => Self::CreateKey { args },
                    CmdType::LOOKUP_KEY => Self::LookupKey { args },
                    CmdType::COMMIT_KEY => Self::CommitKey {
                        args,
                        open_key_id: id.ok_or(DecodeError::Missing("CommitKeyRequest.clientID"))?,
                        hsync,
                    },
                    _ => Self::RenameKey {
                        args,
                        to_key: to.ok_or(DecodeError::Missing("RenameKeyRequest.toKeyName"))?,
                    },
                })
            }
            CmdType::RECOVER_LEASE => {
                let (mut volume, mut bucket, mut key, mut force) =
                    (String::new(), String::new(), String::new(), false);
                while let Some(f) = r.next_field()? {
                    match f.number {
                        1 => volume = f.as_string()?,
                        2 => bucket = f.as_string()?,
                        3 => key = f.as_string()?,
                        4 => force = f.as_bool()?,
                        _ => {}
                    }
                }
                Ok(Self::RecoverLease {
                    volume,
                    bucket,
                    key,
                    force,
                })
            }
            other => Err(DecodeError::Invalid(format!(
                "this client does not know command {}",
                other.name()
            ))),
        }
    }
}

/// An OMRequest (message `OMRequest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmRequest {
    /// field 2, optional string traceID.
    pub trace_id: Option<String>,
    /// field 3, required string clientId. Left empty by the builders; [`crate::OmClient`] fills
    /// in its own id (the hyphenated UUID of its 16-byte RPC client id).
    pub client_id: String,
    /// field 5, optional uint32 version (the Java client sends `ClientVersion.CURRENT_VERSION`).
    pub version: Option<u32>,
    /// fields 11.., the per-command request; field 1 (cmdType) follows from it.
    pub body: OmRequestBody,
}

impl OmRequest {
    fn with_body(body: OmRequestBody) -> Self {
        Self {
            trace_id: None,
            client_id: String::new(),
            version: Some(CLIENT_VERSION),
            body,
        }
    }

    pub fn create_volume(volume: &str, admin: &str, owner: &str) -> Self {
        Self::with_body(OmRequestBody::CreateVolume {
            volume: volume.into(),
            admin: admin.into(),
            owner: owner.into(),
            quota_in_bytes: None,
        })
    }

    pub fn create_bucket(volume: &str, bucket: &str, layout: Option<BucketLayout>) -> Self {
        Self::with_body(OmRequestBody::CreateBucket {
            volume: volume.into(),
            bucket: bucket.into(),
            versioning: false,
            layout,
        })
    }

    /// Opens a key of `data_size` bytes (0: no block is allocated, so no datanode is needed).
    pub fn create_key(volume: &str, bucket: &str, key: &str, data_size: u64) -> Self {
        let mut args = KeyArgs::new(volume, bucket, key);
        args.data_size = Some(data_size);
        Self::with_body(OmRequestBody::CreateKey { args })
    }

    /// Commits the key opened by a CreateKey whose response carried `open_key_id`
    /// ([`OmResponse::open_key_id`]).
    pub fn commit_key(
        volume: &str,
        bucket: &str,
        key: &str,
        data_size: u64,
        open_key_id: u64,
    ) -> Self {
        let mut args = KeyArgs::new(volume, bucket, key);
        args.data_size = Some(data_size);
        Self::with_body(OmRequestBody::CommitKey {
            args,
            open_key_id,
            hsync: false,
        })
    }

    /// What a client's hsync sends: CommitKey with `hsync` set, after which the key is visible
    /// at `data_size` and stays open (its KeyInfo carries the writer's `hsyncClientId`). The
    /// OMs need `ozone.hbase.enhancements.allowed` and `ozone.fs.hsync.enabled`.
    pub fn hsync_key(
        volume: &str,
        bucket: &str,
        key: &str,
        data_size: u64,
        open_key_id: u64,
    ) -> Self {
        let mut request = Self::commit_key(volume, bucket, key, data_size, open_key_id);
        if let OmRequestBody::CommitKey { hsync, .. } = &mut request.body {
            *hsync = true;
        }
        request
    }

    pub fn rename_key(volume: &str, bucket: &str, from: &str, to: &str) -> Self {
        Self::with_body(OmRequestBody::RenameKey {
            args: KeyArgs::new(volume, bucket, from),
            to_key: to.into(),
        })
    }

    pub fn lookup_key(volume: &str, bucket: &str, key: &str) -> Self {
        Self::with_body(OmRequestBody::LookupKey {
            args: KeyArgs::new(volume, bucket, key),
        })
    }

    pub fn recover_lease(volume: &str, bucket: &str, key: &str, force: bool) -> Self {
        Self::with_body(OmRequestBody::RecoverLease {
            volume: volume.into(),
            bucket: bucket.into(),
            key: key.into(),
            force,
        })
    }

    /// Sets the replication of a CreateKey / CommitKey (KeyArgs type and factor); without it the
    /// OM uses the bucket's or the cluster's default.
    pub fn with_replication(mut self, rtype: i32, factor: i32) -> Self {
        if let OmRequestBody::CreateKey { args } | OmRequestBody::CommitKey { args, .. } =
            &mut self.body
        {
            args.replication_type = Some(rtype);
            args.replication_factor = Some(factor);
        }
        self
    }

    pub fn with_trace_id(mut self, trace: &str) -> Self {
        self.trace_id = Some(trace.into());
        self
    }

    pub fn cmd_type(&self) -> CmdType {
        self.body.cmd_type()
    }

    /// Encodes in field-number order: cmdType 1, traceID 2, clientId 3, version 5, body.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.int(1, i64::from(self.cmd_type().0));
        if let Some(t) = &self.trace_id {
            w.string(2, t);
        }
        w.string(3, &self.client_id);
        if let Some(v) = self.version {
            w.uint(5, u64::from(v));
        }
        w.message(self.body.field(), &self.body.encode());
        w.finish()
    }

    /// Decodes an OMRequest of one of the seven commands (what a test server needs).
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let (mut cmd, mut trace_id, mut client_id, mut version) = (None, None, None, None);
        let mut bodies: Vec<(u32, &[u8])> = Vec::new();
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => cmd = Some(CmdType(f.as_i32()?)),
                2 => trace_id = Some(f.as_string()?),
                3 => client_id = Some(f.as_string()?),
                5 => version = Some(f.as_u32()?),
                4 | 6 => {}
                n => bodies.push((n, f.as_bytes().unwrap_or(&[]))),
            }
        }
        let cmd = cmd.ok_or(DecodeError::Missing("OMRequest.cmdType"))?;
        let body = bodies
            .iter()
            .rev()
            .find(|(n, _)| *n as i32 == cmd.0)
            .map(|(_, b)| *b)
            .ok_or(DecodeError::Missing("the request of OMRequest.cmdType"))?;
        Ok(Self {
            trace_id,
            client_id: client_id.ok_or(DecodeError::Missing("OMRequest.clientId"))?,
            version,
            body: OmRequestBody::decode(cmd, body)?,
        })
    }
}

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
    fn every_request_round_trips() {
        let mut reqs = vec![
            OmRequest::create_volume("v", "admin", "owner"),
            OmRequest::create_bucket("v", "b", Some(BucketLayout::ObjectStore)),
            OmRequest::create_key("v", "b", "k", 0)
                .with_replication(replication_type::RATIS, replication_factor::ONE),
            OmRequest::commit_key("v", "b", "k", 0, 77),
            OmRequest::rename_key("v", "b", "k", "k2"),
            OmRequest::lookup_key("v", "b", "k"),
            OmRequest::recover_lease("v", "b", "k", true).with_trace_id("t"),
        ];
        for r in &mut reqs {
            r.client_id = "cid".into();
            assert_eq!(OmRequest::decode(&r.encode()).as_ref(), Ok(&*r));
        }
    }

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
