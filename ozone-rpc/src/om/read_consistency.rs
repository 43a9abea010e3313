//! OMRequest field 7, `ReadConsistencyHint`: how a client asks an OM to serve a read, a
//! follower included (Ozone 2.2.0).
//!
//! From `apache/ozone` `hadoop-ozone/interface-client/src/main/proto/OmClientProtocol.proto` as
//! the 2.2.0 jar `ozone-interface-client-2.2.0-sources.jar` ships it:
//!
//! ```text
//! enum ReadConsistencyProto {
//!   READ_CONSISTENCY_UNSPECIFIED = 0; DEFAULT = 1; LINEARIZABLE_LEADER_ONLY = 2;
//!   LINEARIZABLE_ALLOW_FOLLOWER = 3; LOCAL_LEASE = 4; }
//! message ReadConsistencyHint {
//!   message LocalLeaseContext { optional uint64 logLimit = 1; optional uint64 leaseTimeMs = 2; }
//!   optional ReadConsistencyProto readConsistency = 1;
//!   optional LocalLeaseContext localLeaseContext = 2; }
//! ```
//!
//! What the OM does with each (`OzoneManagerProtocolServerSideTranslatorPB.submitReadRequestToOM`
//! in ozone-manager 2.2.0): DEFAULT is served by the leader from its state, no leadership check;
//! LINEARIZABLE_LEADER_ONLY by the leader through Ratis (a ReadIndex, or the leader lease) when
//! `ozone.om.ha.raft.server.read.option` is LINEARIZABLE; LINEARIZABLE_ALLOW_FOLLOWER by any OM
//! through Ratis's ReadIndex when that option is LINEARIZABLE (a follower refuses it
//! otherwise); LOCAL_LEASE by a follower from its own state when
//! `ozone.om.follower.read.local.lease.enabled` and the follower heard from the leader within
//! the lease time and has applied to within the log limit of the leader's commit index it knows
//! (the context's values override the OM's `...local.lease.time.ms` and `...log.limit`; -1
//! lifts either bound).

use crate::pb::{DecodeError, Reader, Writer};

/// `enum ReadConsistencyProto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadConsistency {
    /// 0: the OM decides (its Raft server's read option).
    Unspecified,
    /// 1: the leader answers from its state at once (stale if it was deposed and does not know).
    Default,
    /// 2: the leader answers after a leadership check (ReadIndex or lease).
    LinearizableLeaderOnly,
    /// 3: any OM answers after Ratis's ReadIndex.
    LinearizableAllowFollower,
    /// 4: a follower answers from its state if its lease (time, log lag) holds.
    LocalLease,
}

impl ReadConsistency {
    pub fn number(self) -> i32 {
        match self {
            Self::Unspecified => 0,
            Self::Default => 1,
            Self::LinearizableLeaderOnly => 2,
            Self::LinearizableAllowFollower => 3,
            Self::LocalLease => 4,
        }
    }

    pub fn from_number(n: i32) -> Option<Self> {
        Some(match n {
            0 => Self::Unspecified,
            1 => Self::Default,
            2 => Self::LinearizableLeaderOnly,
            3 => Self::LinearizableAllowFollower,
            4 => Self::LocalLease,
            _ => return None,
        })
    }

    /// The enum's name, as Ozone's configuration keys take it
    /// (`ozone.client.follower.read.default.consistency`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Unspecified => "READ_CONSISTENCY_UNSPECIFIED",
            Self::Default => "DEFAULT",
            Self::LinearizableLeaderOnly => "LINEARIZABLE_LEADER_ONLY",
            Self::LinearizableAllowFollower => "LINEARIZABLE_ALLOW_FOLLOWER",
            Self::LocalLease => "LOCAL_LEASE",
        }
    }

    /// Parses the enum's name (any case, `-` for `_`).
    pub fn from_name(name: &str) -> Option<Self> {
        let upper = name.trim().to_ascii_uppercase().replace('-', "_");
        [
            Self::Unspecified,
            Self::Default,
            Self::LinearizableLeaderOnly,
            Self::LinearizableAllowFollower,
            Self::LocalLease,
        ]
        .into_iter()
        .find(|c| c.name() == upper)
    }

    /// Whether a follower may serve it (`ReadConsistency.allowFollowerRead` in ozone-common).
    pub fn allows_follower(self) -> bool {
        matches!(self, Self::LinearizableAllowFollower | Self::LocalLease)
    }
}

/// `message ReadConsistencyHint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadConsistencyHint {
    /// field 1
    pub consistency: ReadConsistency,
    /// field 2, LocalLeaseContext { logLimit = 1, leaseTimeMs = 2 }: sent when either is set.
    pub log_limit: Option<u64>,
    pub lease_time_ms: Option<u64>,
}

impl ReadConsistencyHint {
    pub fn new(consistency: ReadConsistency) -> Self {
        Self {
            consistency,
            log_limit: None,
            lease_time_ms: None,
        }
    }

    pub(super) fn encode(&self) -> Writer {
        let mut w = Writer::new();
        w.int(1, i64::from(self.consistency.number()));
        if self.log_limit.is_some() || self.lease_time_ms.is_some() {
            let mut ctx = Writer::new();
            if let Some(l) = self.log_limit {
                ctx.uint(1, l);
            }
            if let Some(t) = self.lease_time_ms {
                ctx.uint(2, t);
            }
            w.message(2, &ctx);
        }
        w
    }

    pub(super) fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut hint = Self::new(ReadConsistency::Unspecified);
        let mut r = Reader::new(buf);
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => {
                    hint.consistency = ReadConsistency::from_number(f.as_i32()?)
                        .ok_or(DecodeError::Missing("a known ReadConsistencyProto"))?
                }
                2 => {
                    let mut ctx = Reader::new(f.as_bytes()?);
                    while let Some(c) = ctx.next_field()? {
                        match c.number {
                            1 => hint.log_limit = Some(c.as_u64()?),
                            2 => hint.lease_time_ms = Some(c.as_u64()?),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_are_ozones() {
        for (n, name) in [
            (0, "READ_CONSISTENCY_UNSPECIFIED"),
            (1, "DEFAULT"),
            (2, "LINEARIZABLE_LEADER_ONLY"),
            (3, "LINEARIZABLE_ALLOW_FOLLOWER"),
            (4, "LOCAL_LEASE"),
        ] {
            let c = ReadConsistency::from_number(n).unwrap();
            assert_eq!((c.number(), c.name()), (n, name));
            assert_eq!(ReadConsistency::from_name(name), Some(c));
        }
        assert_eq!(
            ReadConsistency::from_name(" local-lease "),
            Some(ReadConsistency::LocalLease)
        );
        assert_eq!(ReadConsistency::from_name("STRONG"), None);
        assert_eq!(ReadConsistency::from_number(5), None);
        assert!(ReadConsistency::LocalLease.allows_follower());
        assert!(ReadConsistency::LinearizableAllowFollower.allows_follower());
        assert!(!ReadConsistency::LinearizableLeaderOnly.allows_follower());
        assert!(!ReadConsistency::Default.allows_follower());
    }

    /// The bytes, field by field: readConsistency = 4 (tag 0x08), then LocalLeaseContext
    /// (tag 0x12, length 5) with logLimit = 0 (0x08 0x00) and leaseTimeMs = 300 (0x10 0xac 0x02).
    #[test]
    fn a_local_lease_hint_on_the_wire() {
        let hint = ReadConsistencyHint {
            consistency: ReadConsistency::LocalLease,
            log_limit: Some(0),
            lease_time_ms: Some(300),
        };
        let bytes = hint.encode().finish();
        assert_eq!(
            bytes,
            [0x08, 0x04, 0x12, 0x05, 0x08, 0x00, 0x10, 0xac, 0x02]
        );
        assert_eq!(ReadConsistencyHint::decode(&bytes), Ok(hint));
        let plain = ReadConsistencyHint::new(ReadConsistency::LinearizableAllowFollower);
        assert_eq!(plain.encode().finish(), [0x08, 0x03]);
        assert!(ReadConsistencyHint::decode(&[0x08, 0x09]).is_err());
    }
}
