//! A native Ozone Manager client in Rust: Hadoop RPC with SIMPLE authentication, the
//! `submitRequest` method of `OzoneManagerProtocol`, and hand-written OMRequest / OMResponse
//! messages for the commands the chaos harness needs (create volume, create bucket, create and
//! commit key, rename key, lookup key, recover lease).
//!
//! Run live against Ozone 2.2.0 by the harness; here the encoding is tested byte for byte against
//! bytes built by hand from the published .proto files, and the failover and resend logic against
//! a test server that speaks the same framing. See README.md. [`scm::ScmClient`] asks an SCM
//! whether it is in safe mode and which pipelines are open.
//!
//! ```no_run
//! # async fn f() -> Result<(), ozone_rpc::OmError> {
//! use ozone_rpc::{OmClient, OmRequest};
//! let addrs = vec!["127.0.0.1:9862".parse().unwrap(), "127.0.0.1:9863".parse().unwrap()];
//! let mut om = OmClient::connect(addrs, "hadoop").with_node_ids(&["om1", "om2"]);
//! let resp = om.call(OmRequest::rename_key("vol", "bucket", "a", "b")).await?;
//! let record = om.last_call().cloned().unwrap();
//! // ... restart every OM, then resend the very same bytes:
//! let again = om.resend(&record, om.current()).await?;
//! assert_eq!(resp.status, again.status);
//! # Ok(()) }
//! ```

pub mod client;
pub mod io;
pub mod leader;
pub mod om;
pub mod pb;
pub mod rpc;
pub mod scm;

pub use client::{
    decode_call_response, uuid_string, CallRecord, ClientConfig, OmClient, OmError, OmNode, Outcome,
};
pub use leader::{parse_suggested_leader, SuggestedLeader};
pub use om::{
    BucketLayout, CmdType, KeyArgs, KeyInfo, OmRequest, OmRequestBody, OmResponse, ReadConsistency,
    ReadConsistencyHint, Status, HSYNC_CLIENT_ID, LEASE_RECOVERY,
};
pub use scm::{PipelineState, PipelineSummary, ScmClient};
