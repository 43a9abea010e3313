//! KeyInfo, as LookupKey, CreateKey and RecoverLease answer it, and the metadata keys that
//! tell an hsync'd, still open file.

use crate::pb::{DecodeError, Reader, Writer};

use super::replication_type;

/// OzoneConsts.HSYNC_CLIENT_ID: the metadata key an hsync'd, still open file carries.
pub const HSYNC_CLIENT_ID: &str = "hsyncClientId";
/// OzoneConsts.LEASE_RECOVERY: set on an open key whose lease recovery has begun.
pub const LEASE_RECOVERY: &str = "leaseRecovery";

fn decode_key_value(buf: &[u8]) -> Result<(String, String), DecodeError> {
    let (mut key, mut value) = (None, String::new());
    let mut r = Reader::new(buf);
    while let Some(f) = r.next_field()? {
        match f.number {
            1 => key = Some(f.as_string()?),
            2 => value = f.as_string()?,
            _ => {}
        }
    }
    Ok((key.ok_or(DecodeError::Missing("KeyValue.key"))?, value))
}

/// The KeyInfo fields a checker needs (message `KeyInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyInfo {
    /// field 1
    pub volume: String,
    /// field 2
    pub bucket: String,
    /// field 3
    pub key: String,
    /// field 4, required uint64 dataSize: the key's length
    pub data_size: u64,
    /// field 8
    pub creation_time: u64,
    /// field 9
    pub modification_time: u64,
    /// field 10
    pub latest_version: Option<u64>,
    /// field 11, repeated hadoop.hdds.KeyValue metadata (KeyValue { key = 1, value = 2 }).
    pub metadata: Vec<(String, String)>,
    /// field 14
    pub object_id: Option<u64>,
    /// field 15
    pub update_id: Option<u64>,
}

impl KeyInfo {
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut k = Self::default();
        let mut r = Reader::new(buf);
        while let Some(f) = r.next_field()? {
            match f.number {
                1 => k.volume = f.as_string()?,
                2 => k.bucket = f.as_string()?,
                3 => k.key = f.as_string()?,
                4 => k.data_size = f.as_u64()?,
                8 => k.creation_time = f.as_u64()?,
                9 => k.modification_time = f.as_u64()?,
                10 => k.latest_version = Some(f.as_u64()?),
                11 => k.metadata.push(decode_key_value(f.as_bytes()?)?),
                14 => k.object_id = Some(f.as_u64()?),
                15 => k.update_id = Some(f.as_u64()?),
                _ => {}
            }
        }
        Ok(k)
    }

    /// A metadata value (OzoneConsts names the keys: `hsyncClientId`, `leaseRecovery`, ...).
    pub fn metadata_value(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the key is an hsync'd file still open: its KeyInfo carries the writer's id
    /// (`hsyncClientId`), which the OM removes when the file is closed or recovered.
    pub fn is_open(&self) -> bool {
        self.metadata_value(HSYNC_CLIENT_ID).is_some()
    }

    /// Encodes the fields above plus `type` (5, required; RATIS) so that a test server can answer
    /// with a KeyInfo that protobuf-java would also accept.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.string(1, &self.volume)
            .string(2, &self.bucket)
            .string(3, &self.key)
            .uint(4, self.data_size)
            .int(5, i64::from(replication_type::RATIS))
            .uint(8, self.creation_time)
            .uint(9, self.modification_time);
        if let Some(v) = self.latest_version {
            w.uint(10, v);
        }
        for (key, value) in &self.metadata {
            let mut kv = Writer::new();
            kv.string(1, key).string(2, value);
            w.message(11, &kv);
        }
        if let Some(v) = self.object_id {
            w.uint(14, v);
        }
        if let Some(v) = self.update_id {
            w.uint(15, v);
        }
        w.finish()
    }
}
