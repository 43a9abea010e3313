//! The .proto enums this client names besides Status: the command type, replication
//! type and factor (hdds.proto) and the bucket layout.

/// `enum Type` of OmClientProtocol.proto (only the values this client sends are named).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmdType(pub i32);

impl CmdType {
    pub const CREATE_VOLUME: Self = Self(11);
    pub const CREATE_BUCKET: Self = Self(21);
    pub const CREATE_KEY: Self = Self(31);
    pub const LOOKUP_KEY: Self = Self(32);
    pub const RENAME_KEY: Self = Self(33);
    pub const COMMIT_KEY: Self = Self(36);
    pub const TRANSFER_LEADERSHIP: Self = Self(117);
    pub const RECOVER_LEASE: Self = Self(119);

    /// The enum value's name in the .proto, or `Type(<n>)`.
    pub fn name(self) -> String {
        match self.0 {
            11 => "CreateVolume".into(),
            21 => "CreateBucket".into(),
            31 => "CreateKey".into(),
            32 => "LookupKey".into(),
            33 => "RenameKey".into(),
            36 => "CommitKey".into(),
            117 => "TransferLeadership".into(),
            119 => "RecoverLease".into(),
            n => format!("Type({n})"),
        }
    }
}

/// hdds.proto `enum ReplicationType`: RATIS = 1, STAND_ALONE = 2, CHAINED = 3, EC = 4.
pub mod replication_type {
    pub const RATIS: i32 = 1;
    pub const STAND_ALONE: i32 = 2;
}

/// hdds.proto `enum ReplicationFactor`: ONE = 1, THREE = 3.
pub mod replication_factor {
    pub const ONE: i32 = 1;
    pub const THREE: i32 = 3;
}

/// OmClientProtocol.proto `enum BucketLayoutProto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketLayout {
    /// LEGACY = 1
    Legacy,
    /// FILE_SYSTEM_OPTIMIZED = 2 (needed for RecoverLease)
    FileSystemOptimized,
    /// OBJECT_STORE = 3
    ObjectStore,
}

impl BucketLayout {
    pub(super) fn to_i32(self) -> i32 {
        match self {
            Self::Legacy => 1,
            Self::FileSystemOptimized => 2,
            Self::ObjectStore => 3,
        }
    }

    pub(super) fn from_i32(v: i32) -> Option<Self> {
        match v {
            1 => Some(Self::Legacy),
            2 => Some(Self::FileSystemOptimized),
            3 => Some(Self::ObjectStore),
            _ => None,
        }
    }
}
