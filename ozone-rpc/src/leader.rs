//! Reading the suggested leader out of an OMNotLeaderException message.
//!
//! The message format changed across Ozone versions (all from
//! `apache/ozone` `hadoop-ozone/common/src/main/java/org/apache/hadoop/ozone/om/exceptions/OMNotLeaderException.java`
//! at different commits):
//! - `OM:om1 is not the leader. Suggested leader is OM:om2.` (early)
//! - `OM:om1 is not the leader. Suggested leader is OM:om2[om2:9872].`
//! - `OM:om1 is not the leader. Suggested leader is OM:om2/om2:9862.`
//! - `OM:om1 is not the leader. Suggested leader is OM:om2 at om2.example:9862 (ip=10.0.0.5).`
//!   (newest; the address is the leader's RPC host:port)
//! - `OM:om1 is not the leader. Could not determine the leader node.` (no suggestion)
//!
//! Over Hadoop RPC the message arrives in RpcResponseHeaderProto.errorMsg followed by the
//! server's stack trace (`Server.populateResponseParamsOnError` strips the class name prefix).

/// The leader an OMNotLeaderException suggests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuggestedLeader {
    /// The Ratis peer id of the suggested leader (the OM node id, e.g. `om2`).
    pub node_id: String,
    /// `host:port` when the message carries one.
    pub address: Option<String>,
    /// The resolved IP when the message carries one (`ip=unresolved` gives `None`).
    pub ip: Option<String>,
}

const MARKER: &str = "Suggested leader is OM:";

/// Parses the suggested leader; `None` when the message names none.
pub fn parse_suggested_leader(msg: &str) -> Option<SuggestedLeader> {
    let start = msg.find(MARKER)? + MARKER.len();
    let rest = &msg[start..];
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '/' || c == '[')
        .unwrap_or(rest.len());
    let raw_id = &rest[..end];
    let node_id = raw_id.strip_suffix('.').unwrap_or(raw_id);
    if node_id.is_empty() {
        return None;
    }
    let after = &rest[end..];
    let (mut address, mut ip) = (None, None);
    if let Some(a) = after.strip_prefix('/') {
        let tok = first_token(a);
        let tok = tok.strip_suffix('.').unwrap_or(tok);
        if !tok.is_empty() && tok != "null" {
            address = Some(tok.to_owned());
        }
    } else if let Some(a) = after.strip_prefix('[') {
        // The address may itself be an IPv6 literal in brackets in newer messages; older ones
        // only ever held host:port here.
        if let Some(close) = a.find(']') {
            let tok = &a[..close];
            if !tok.is_empty() && tok != "null" {
                address = Some(tok.to_owned());
            }
        }
    } else if let Some(a) = after.strip_prefix(" at ") {
        let tok = first_token(a);
        if !tok.is_empty() {
            address = Some(tok.to_owned());
        }
        let a = &a[tok.len()..];
        if let Some(i) = a.strip_prefix(" (ip=") {
            if let Some(close) = i.find(')') {
                let v = &i[..close];
                if v != "unresolved" && !v.is_empty() {
                    ip = Some(v.to_owned());
                }
            }
        }
    }
    Some(SuggestedLeader {
        node_id: node_id.to_owned(),
        address,
        ip,
    })
}

fn first_token(s: &str) -> &str {
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sl(id: &str, addr: Option<&str>, ip: Option<&str>) -> Option<SuggestedLeader> {
        Some(SuggestedLeader {
            node_id: id.into(),
            address: addr.map(Into::into),
            ip: ip.map(Into::into),
        })
    }

    #[test]
    fn every_known_format() {
        assert_eq!(
            parse_suggested_leader("OM:om1 is not the leader. Suggested leader is OM:om2."),
            sl("om2", None, None)
        );
        assert_eq!(
            parse_suggested_leader(
                "OM:om1 is not the leader. Suggested leader is OM:om2[om2:9872].\n\tat x.y(Z.java:1)"
            ),
            sl("om2", Some("om2:9872"), None)
        );
        assert_eq!(
            parse_suggested_leader(
                "OM:om1 is not the leader. Suggested leader is OM:om2/10.0.0.2:9862."
            ),
            sl("om2", Some("10.0.0.2:9862"), None)
        );
        assert_eq!(
            parse_suggested_leader(
                "OM:om2 is not the leader. Suggested leader is OM:om1 at om1.cluster.local:9862 (ip=10.0.0.5).\n\tat a"
            ),
            sl("om1", Some("om1.cluster.local:9862"), Some("10.0.0.5"))
        );
        assert_eq!(
            parse_suggested_leader(
                "OM:om2 is not the leader. Suggested leader is OM:om1 at [fe80::1]:9862 (ip=unresolved)."
            ),
            sl("om1", Some("[fe80::1]:9862"), None)
        );
        assert_eq!(
            parse_suggested_leader(
                "OM:om1 is not the leader. Could not determine the leader node."
            ),
            None
        );
        assert_eq!(parse_suggested_leader("Suggested leader is OM:."), None);
        assert_eq!(parse_suggested_leader(""), None);
    }
}
