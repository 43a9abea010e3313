//! The objects of the protocol: fence keys (inverted terms, so the highest sorts first), data
//! keys (one immutable object per upload) and what a fence object holds.

use serde::{Deserialize, Serialize};

pub const FENCE_PREFIX: &str = "fence__";
pub const DATA_PREFIX: &str = "data/";

/// The fence object's key for a term: inverted so that the highest term sorts first.
pub fn fence_key(term: u64) -> String {
    format!("{FENCE_PREFIX}{:020}", u64::MAX - term)
}

/// The term of a fence key, if it is one.
pub fn parse_fence_key(key: &str) -> Option<u64> {
    let digits = key.strip_prefix(FENCE_PREFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let inv: u64 = digits.parse().ok()?;
    Some(u64::MAX - inv)
}

/// One upload: who wrote it, in which term, with which sequence number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct UploadId {
    pub term: u64,
    pub owner: String,
    pub seq: u64,
}

impl std::fmt::Display for UploadId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@term{}#{}", self.owner, self.term, self.seq)
    }
}

pub fn data_key(id: &UploadId) -> String {
    format!("{DATA_PREFIX}{:020}/{}/{:020}", id.term, id.owner, id.seq)
}

pub fn parse_data_key(key: &str) -> Option<UploadId> {
    let rest = key.strip_prefix(DATA_PREFIX)?;
    let mut parts = rest.splitn(3, '/');
    let term = parts.next()?.parse().ok()?;
    let owner = parts.next()?.to_string();
    let seq = parts.next()?.parse().ok()?;
    Some(UploadId { term, owner, seq })
}

/// What a fence object holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FenceRecord {
    pub term: u64,
    pub owner: String,
    pub seq: u64,
}

pub(super) fn record_of(body: &[u8]) -> Option<FenceRecord> {
    serde_json::from_slice(body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_keys_sort_highest_term_first() {
        let mut keys = [fence_key(1), fence_key(10), fence_key(2), fence_key(0)];
        keys.sort();
        let terms: Vec<u64> = keys.iter().map(|k| parse_fence_key(k).unwrap()).collect();
        assert_eq!(terms, vec![10, 2, 1, 0]);
        assert_eq!(parse_fence_key("fence__12"), None);
        assert_eq!(parse_fence_key("fence__abcdefghijabcdefghij"), None);
        assert_eq!(parse_fence_key("other"), None);
        let id = UploadId {
            term: 3,
            owner: "w3a".into(),
            seq: 7,
        };
        assert_eq!(parse_data_key(&data_key(&id)), Some(id));
        assert_eq!(parse_data_key("data/x/y/z"), None);
    }
}
