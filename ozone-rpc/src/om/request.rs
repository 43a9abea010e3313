//! OMRequest: the builders the harness calls (one per command) and the message's encoding.

use crate::pb::{DecodeError, Reader, Writer};

use super::{BucketLayout, CmdType, KeyArgs, OmRequestBody, ReadConsistencyHint, CLIENT_VERSION};

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
    /// field 7, optional ReadConsistencyHint readConsistencyHint: how a read may be served
    /// (a follower included); see [`ReadConsistencyHint`].
    pub read_consistency: Option<ReadConsistencyHint>,
    /// fields 11.., the per-command request; field 1 (cmdType) follows from it.
    pub body: OmRequestBody,
}

impl OmRequest {
    fn with_body(body: OmRequestBody) -> Self {
        Self {
            trace_id: None,
            client_id: String::new(),
            version: Some(CLIENT_VERSION),
            read_consistency: None,
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
    /// ([`OmResponse::open_key_id`](super::OmResponse::open_key_id)).
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

    /// Opens a key that replaces `key` only if `key` still has the generation (its KeyInfo's
    /// updateID) `generation` when the key is committed: Ozone's atomic rewrite (KeyArgs
    /// expectedDataGeneration = 23). The OM refuses the open with KEY_NOT_FOUND when the key is
    /// absent or at another generation, and the commit with ATOMIC_WRITE_CONFLICT when it
    /// changed in between (OMKeyRequest.validateAtomicRewrite, OMKeyCommitRequest).
    pub fn rewrite_key(
        volume: &str,
        bucket: &str,
        key: &str,
        data_size: u64,
        generation: u64,
    ) -> Self {
        let mut request = Self::create_key(volume, bucket, key, data_size);
        if let OmRequestBody::CreateKey { args } = &mut request.body {
            args.expected_data_generation = Some(generation);
        }
        request
    }

    pub fn recover_lease(volume: &str, bucket: &str, key: &str, force: bool) -> Self {
        Self::with_body(OmRequestBody::RecoverLease {
            volume: volume.into(),
            bucket: bucket.into(),
            key: key.into(),
            force,
        })
    }

    /// Asks the OMs' Ratis group to make the OM with peer id `om` (its node id, as
    /// `ozone.om.nodes.*` names it) the leader, as `ozone admin om transfer -n om` does.
    pub fn transfer_leadership(om: &str) -> Self {
        Self::with_body(OmRequestBody::TransferLeadership {
            new_leader_id: om.into(),
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

    /// Sets OMRequest.readConsistencyHint (a read's: which OM may serve it and how).
    pub fn with_read_consistency(mut self, hint: ReadConsistencyHint) -> Self {
        self.read_consistency = Some(hint);
        self
    }

    pub fn with_trace_id(mut self, trace: &str) -> Self {
        self.trace_id = Some(trace.into());
        self
    }

    pub fn cmd_type(&self) -> CmdType {
        self.body.cmd_type()
    }

    /// Encodes in field-number order: cmdType 1, traceID 2, clientId 3, version 5,
    /// readConsistencyHint 7, body.
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
        if let Some(hint) = &self.read_consistency {
            w.message(7, &hint.encode());
        }
        w.message(self.body.field(), &self.body.encode());
        w.finish()
    }

    /// Decodes an OMRequest of one of the eight commands (what a test server needs).
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let (mut cmd, mut trace_id, mut client_id, mut version) = (None, None, None, None);
        let mut read_consistency = None;
        let mut bodies: Vec<(u32, &[u8])> = Vec::new();
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => cmd = Some(CmdType(f.as_i32()?)),
                2 => trace_id = Some(f.as_string()?),
                3 => client_id = Some(f.as_string()?),
                5 => version = Some(f.as_u32()?),
                7 => read_consistency = Some(ReadConsistencyHint::decode(f.as_bytes()?)?),
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
            read_consistency,
            body: OmRequestBody::decode(cmd, body)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::om::{replication_factor, replication_type};

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
            OmRequest::rewrite_key("v", "b", "k", 9, 1234),
            OmRequest::lookup_key("v", "b", "k").with_read_consistency(ReadConsistencyHint {
                consistency: crate::om::ReadConsistency::LocalLease,
                log_limit: Some(0),
                lease_time_ms: None,
            }),
        ];
        for r in &mut reqs {
            r.client_id = "cid".into();
            assert_eq!(OmRequest::decode(&r.encode()).as_ref(), Ok(&*r));
        }
    }
}
