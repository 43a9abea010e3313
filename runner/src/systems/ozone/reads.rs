//! Where the native client sends a read, and with which consistency hint: Ozone 2.2.0's own
//! client keys, read from the scenario's `cluster.environment` (where they also reach every
//! node's ozone-site.xml), so a scenario configures the harness's client as it would Ozone's.
//!
//! The keys and their defaults are the 2.2.0 jars' ozone-default.xml (hdds-common):
//! `ozone.client.follower.read.enabled` (false), `ozone.client.follower.read.default.consistency`
//! (LINEARIZABLE_ALLOW_FOLLOWER; "the supported follower read consistency are
//! LINEARIZABLE_ALLOW_FOLLOWER and LOCAL_LEASE") and `ozone.client.leader.read.default.consistency`
//! (DEFAULT; "DEFAULT and LINEARIZABLE_LEADER_ONLY"). Java's client (Hadoop3OmTransport, and
//! HadoopRpcOMFollowerReadFailoverProxyProvider in ozone-common 2.2.0) puts the follower hint on
//! every read when follower reads are enabled and the leader hint otherwise, and refuses a
//! follower consistency that does not allow followers (and the reverse) at start.
//!
//! Where this client differs, on purpose: with follower reads enabled, each process reads from
//! its own OM (the process's node) and only from it, so the history says which OM answered each
//! read; a refusal (not the leader, no lease, a failed ReadIndex) is a failed read. Java's client
//! goes round the OMs instead, and after one OMNotLeaderException stops reading from followers
//! for good.

use ozone_rpc::{ReadConsistency, ReadConsistencyHint};

const PREFIX: &str = "OZONE-SITE.XML_";
pub const FOLLOWER_READ_ENABLED: &str = "ozone.client.follower.read.enabled";
pub const FOLLOWER_READ_CONSISTENCY: &str = "ozone.client.follower.read.default.consistency";
pub const LEADER_READ_CONSISTENCY: &str = "ozone.client.leader.read.default.consistency";

/// How the process's reads go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadRoute {
    /// Through the failover client, to the leader, with this hint (None: no hint, as before
    /// the scenario named any client key).
    Leader(Option<ReadConsistencyHint>),
    /// To the process's own OM only, with this hint.
    OwnOm(ReadConsistencyHint),
}

impl ReadRoute {
    /// From the scenario's `cluster.environment`; an unknown value, or a consistency on the
    /// wrong side, is refused as Java's client refuses it.
    pub fn from_environment(environment: &[(String, String)]) -> Result<ReadRoute, String> {
        let get = |key: &str| {
            environment
                .iter()
                .find(|(k, _)| k.strip_prefix(PREFIX) == Some(key))
                .map(|(_, v)| v.trim().to_string())
        };
        let (enabled, follower, leader) = (
            get(FOLLOWER_READ_ENABLED),
            get(FOLLOWER_READ_CONSISTENCY),
            get(LEADER_READ_CONSISTENCY),
        );
        if enabled.is_none() && follower.is_none() && leader.is_none() {
            return Ok(ReadRoute::Leader(None));
        }
        let on = match enabled.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(format!(
                    "{FOLLOWER_READ_ENABLED} is true or false (found `{other}`)"
                ))
            }
        };
        let parse = |key: &str, value: Option<String>, default: ReadConsistency| {
            value.map_or(Ok(default), |v| {
                ReadConsistency::from_name(&v)
                    .ok_or_else(|| format!("{key}: `{v}` is no read consistency of Ozone's"))
            })
        };
        let follower = parse(
            FOLLOWER_READ_CONSISTENCY,
            follower,
            ReadConsistency::LinearizableAllowFollower,
        )?;
        let leader = parse(LEADER_READ_CONSISTENCY, leader, ReadConsistency::Default)?;
        if !follower.allows_follower() {
            return Err(format!(
                "{FOLLOWER_READ_CONSISTENCY}: {} does not allow follower reads \
                 (LINEARIZABLE_ALLOW_FOLLOWER or LOCAL_LEASE)",
                follower.name()
            ));
        }
        if leader.allows_follower() {
            return Err(format!(
                "{LEADER_READ_CONSISTENCY}: {} allows follower reads (DEFAULT or \
                 LINEARIZABLE_LEADER_ONLY)",
                leader.name()
            ));
        }
        Ok(if on {
            ReadRoute::OwnOm(ReadConsistencyHint::new(follower))
        } else {
            ReadRoute::Leader(Some(ReadConsistencyHint::new(leader)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (format!("{PREFIX}{k}"), v.to_string()))
            .collect()
    }

    #[test]
    fn no_client_key_keeps_reads_on_the_leader_without_a_hint() {
        let other = env(&[("ozone.om.ha.raft.server.read.option", "LINEARIZABLE")]);
        assert_eq!(
            ReadRoute::from_environment(&other),
            Ok(ReadRoute::Leader(None))
        );
    }

    #[test]
    fn follower_reads_take_the_follower_hint_and_the_own_om() {
        let on = env(&[(FOLLOWER_READ_ENABLED, "true")]);
        assert_eq!(
            ReadRoute::from_environment(&on),
            Ok(ReadRoute::OwnOm(ReadConsistencyHint::new(
                ReadConsistency::LinearizableAllowFollower
            )))
        );
        let lease = env(&[
            (FOLLOWER_READ_ENABLED, "TRUE"),
            (FOLLOWER_READ_CONSISTENCY, "LOCAL_LEASE"),
        ]);
        assert_eq!(
            ReadRoute::from_environment(&lease),
            Ok(ReadRoute::OwnOm(ReadConsistencyHint::new(
                ReadConsistency::LocalLease
            )))
        );
    }

    #[test]
    fn disabled_follower_reads_send_the_leader_hint() {
        let off = env(&[(FOLLOWER_READ_ENABLED, "false")]);
        assert_eq!(
            ReadRoute::from_environment(&off),
            Ok(ReadRoute::Leader(Some(ReadConsistencyHint::new(
                ReadConsistency::Default
            ))))
        );
        let strict = env(&[(LEADER_READ_CONSISTENCY, "LINEARIZABLE_LEADER_ONLY")]);
        assert_eq!(
            ReadRoute::from_environment(&strict),
            Ok(ReadRoute::Leader(Some(ReadConsistencyHint::new(
                ReadConsistency::LinearizableLeaderOnly
            ))))
        );
    }

    #[test]
    fn consistencies_on_the_wrong_side_and_unknown_values_are_refused() {
        for bad in [
            env(&[(FOLLOWER_READ_ENABLED, "yes")]),
            env(&[(FOLLOWER_READ_CONSISTENCY, "DEFAULT")]),
            env(&[(LEADER_READ_CONSISTENCY, "LOCAL_LEASE")]),
            env(&[(FOLLOWER_READ_CONSISTENCY, "BOUNDED")]),
        ] {
            assert!(ReadRoute::from_environment(&bad).is_err(), "{bad:?}");
        }
    }
}
