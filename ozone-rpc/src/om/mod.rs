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
mod key_info;
mod read_consistency;
mod request;
mod request_body;
mod response;
mod status;

pub use enums::{replication_factor, replication_type, BucketLayout, CmdType};
pub use key_info::{KeyInfo, HSYNC_CLIENT_ID, LEASE_RECOVERY};
pub use read_consistency::{ReadConsistency, ReadConsistencyHint};
pub use request::OmRequest;
pub use request_body::{KeyArgs, OmRequestBody};
pub use response::OmResponse;
pub use status::Status;

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
