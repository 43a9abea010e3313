//! The per-command sub-messages of OMRequest (and the KeyArgs they share): how each is
//! written and read on the wire.

use crate::pb::{DecodeError, Reader, Writer};

use super::{BucketLayout, CmdType};

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
    /// field 23, optional uint64 expectedDataGeneration: an atomic rewrite's condition (the
    /// key's updateID when it was read).
    pub expected_data_generation: Option<u64>,
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
        if let Some(g) = self.expected_data_generation {
            w.uint(23, g);
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
                23 => a.expected_data_generation = Some(f.as_u64()?),
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
    /// OMRequest field 117, hdds.TransferLeadershipRequestProto { required string newLeaderId
    /// = 1 }: what `ozone admin om transfer -n ID` sends. A read to the OM (no Raft log entry):
    /// it asks its Ratis group to move leadership to that peer.
    TransferLeadership { new_leader_id: String },
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
            Self::TransferLeadership { .. } => CmdType::TRANSFER_LEADERSHIP,
        }
    }

    /// The OMRequest field number that carries this body (equal to the Type value for these
    /// eight commands).
    pub(super) fn field(&self) -> u32 {
        self.cmd_type().0 as u32
    }

    pub(super) fn encode(&self) -> Writer {
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
            Self::TransferLeadership { new_leader_id } => {
                w.string(1, new_leader_id);
            }
        }
        w
    }

    /// Reads the sub-message of command `cmd`; each command has its own reader below.
    pub(super) fn decode(cmd: CmdType, buf: &[u8]) -> Result<Self, DecodeError> {
        match cmd {
            CmdType::CREATE_VOLUME => Self::decode_create_volume(buf),
            CmdType::CREATE_BUCKET => Self::decode_create_bucket(buf),
            CmdType::CREATE_KEY
            | CmdType::LOOKUP_KEY
            | CmdType::COMMIT_KEY
            | CmdType::RENAME_KEY => Self::decode_key_request(cmd, buf),
            CmdType::RECOVER_LEASE => Self::decode_recover_lease(buf),
            CmdType::TRANSFER_LEADERSHIP => Self::decode_transfer_leadership(buf),
            other => Err(DecodeError::Invalid(format!(
                "this client does not know command {}",
                other.name()
            ))),
        }
    }

    /// CreateVolumeRequest: the VolumeInfo in field 1.
    fn decode_create_volume(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
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

    /// CreateBucketRequest: the BucketInfo in field 1.
    fn decode_create_bucket(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
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

    /// The four requests built on KeyArgs (field 1); CommitKey and RenameKey add fields 2 and 3.
    fn decode_key_request(cmd: CmdType, buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
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

    /// RecoverLeaseRequest: volume, bucket and key as plain strings, not KeyArgs.
    fn decode_recover_lease(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
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

    /// TransferLeadershipRequestProto: the new leader's peer id in field 1.
    fn decode_transfer_leadership(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let mut new_leader_id = None;
        while let Some(f) = r.next_field()? {
            if f.number == 1 {
                new_leader_id = Some(f.as_string()?);
            }
        }
        Ok(Self::TransferLeadership {
            new_leader_id: new_leader_id.ok_or(DecodeError::Missing(
                "TransferLeadershipRequestProto.newLeaderId",
            ))?,
        })
    }
}
