//! OMResponse, decoded to what the harness and its checkers use (the outcome it maps to is
//! in client.rs, next to the errors that also map to one).

use crate::pb::{DecodeError, Reader, Writer};

use super::{CmdType, KeyInfo, Status};

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
