//! A small protocol-buffers (proto2) wire codec: varints, zigzag, tags and length-delimited fields.
//!
//! Only what the Hadoop RPC and OM messages need. Encoding writes fields in the order the caller
//! gives (callers follow field-number order, as protobuf-java does). Decoding never panics: every
//! read is bounds-checked and a malformed input is a [`DecodeError`].

use thiserror::Error;

/// Wire types (protobuf encoding spec).
pub const WT_VARINT: u8 = 0;
pub const WT_I64: u8 = 1;
pub const WT_LEN: u8 = 2;
pub const WT_I32: u8 = 5;

/// Why a byte string is not the message expected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("truncated input: {0}")]
    Truncated(&'static str),
    #[error("varint longer than 10 bytes")]
    VarintTooLong,
    #[error("field number 0 or above 2^29-1")]
    BadFieldNumber,
    #[error("unsupported wire type {0} (groups are not used by these messages)")]
    BadWireType(u8),
    #[error("field {field}: expected wire type {expected}, got {got}")]
    WrongWireType { field: u32, expected: u8, got: u8 },
    #[error("field {0}: not valid UTF-8")]
    Utf8(u32),
    #[error("required field {0} missing")]
    Missing(&'static str),
    #[error("{0}")]
    Invalid(String),
}

/// Appends `v` as a base-128 varint.
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Number of bytes `v` takes as a varint.
pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Reads a varint at `*pos`, advancing it.
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Result<u64, DecodeError> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = *buf.get(*pos).ok_or(DecodeError::Truncated("varint"))?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DecodeError::VarintTooLong)
}

/// ZigZag encoding of `sint32` (protobuf spec): 0→0, -1→1, 1→2, -2→3, ...
pub fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

pub fn unzigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// Builds one message.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }

    fn tag(&mut self, field: u32, wt: u8) {
        put_varint(&mut self.buf, (u64::from(field) << 3) | u64::from(wt));
    }

    /// `uint32`, `uint64`, enum (non-negative) and `bool` fields.
    pub fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        self.tag(field, WT_VARINT);
        put_varint(&mut self.buf, v);
        self
    }

    /// `int32`, `int64` and enum fields: negative values are sign-extended to 10 bytes.
    pub fn int(&mut self, field: u32, v: i64) -> &mut Self {
        self.uint(field, v as u64)
    }

    pub fn bool(&mut self, field: u32, v: bool) -> &mut Self {
        self.uint(field, u64::from(v))
    }

    /// `sint32` fields (ZigZag).
    pub fn sint32(&mut self, field: u32, v: i32) -> &mut Self {
        self.uint(field, u64::from(zigzag32(v)))
    }

    pub fn bytes(&mut self, field: u32, v: &[u8]) -> &mut Self {
        self.tag(field, WT_LEN);
        put_varint(&mut self.buf, v.len() as u64);
        self.buf.extend_from_slice(v);
        self
    }

    pub fn string(&mut self, field: u32, v: &str) -> &mut Self {
        self.bytes(field, v.as_bytes())
    }

    /// An embedded message (already encoded).
    pub fn message(&mut self, field: u32, m: &Writer) -> &mut Self {
        self.bytes(field, &m.buf)
    }

    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// One decoded field value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'a [u8]),
}

/// A decoded field: number and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    pub number: u32,
    pub value: Value<'a>,
}

impl<'a> Field<'a> {
    fn wt(&self) -> u8 {
        match self.value {
            Value::Varint(_) => WT_VARINT,
            Value::Fixed64(_) => WT_I64,
            Value::Fixed32(_) => WT_I32,
            Value::Len(_) => WT_LEN,
        }
    }

    fn wrong(&self, expected: u8) -> DecodeError {
        DecodeError::WrongWireType {
            field: self.number,
            expected,
            got: self.wt(),
        }
    }

    pub fn as_u64(&self) -> Result<u64, DecodeError> {
        match self.value {
            Value::Varint(v) => Ok(v),
            _ => Err(self.wrong(WT_VARINT)),
        }
    }

    /// `uint32`: protobuf-java writes a negative Java int as its 32-bit two's complement.
    pub fn as_u32(&self) -> Result<u32, DecodeError> {
        Ok(self.as_u64()? as u32)
    }

    /// `int32` and enums: the low 32 bits of the (possibly sign-extended) varint.
    pub fn as_i32(&self) -> Result<i32, DecodeError> {
        Ok(self.as_u64()? as u32 as i32)
    }

    pub fn as_i64(&self) -> Result<i64, DecodeError> {
        Ok(self.as_u64()? as i64)
    }

    pub fn as_sint32(&self) -> Result<i32, DecodeError> {
        Ok(unzigzag32(self.as_u64()? as u32))
    }

    pub fn as_bool(&self) -> Result<bool, DecodeError> {
        Ok(self.as_u64()? != 0)
    }

    pub fn as_bytes(&self) -> Result<&'a [u8], DecodeError> {
        match self.value {
            Value::Len(b) => Ok(b),
            _ => Err(self.wrong(WT_LEN)),
        }
    }

    pub fn as_str(&self) -> Result<&'a str, DecodeError> {
        std::str::from_utf8(self.as_bytes()?).map_err(|_| DecodeError::Utf8(self.number))
    }

    pub fn as_string(&self) -> Result<String, DecodeError> {
        self.as_str().map(str::to_owned)
    }
}

/// Iterates over the fields of one message. Unknown fields are returned like the others; the
/// caller ignores the numbers it does not know.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// The next field, `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<Field<'a>>, DecodeError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = get_varint(self.buf, &mut self.pos)?;
        let number = key >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return Err(DecodeError::BadFieldNumber);
        }
        let number = number as u32;
        let value = match (key & 7) as u8 {
            WT_VARINT => Value::Varint(get_varint(self.buf, &mut self.pos)?),
            WT_I64 => {
                let b = self.take(8, "fixed64")?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Value::Fixed64(u64::from_le_bytes(a))
            }
            WT_I32 => {
                let b = self.take(4, "fixed32")?;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                Value::Fixed32(u32::from_le_bytes(a))
            }
            WT_LEN => {
                let n = get_varint(self.buf, &mut self.pos)?;
                let n = usize::try_from(n).map_err(|_| DecodeError::Truncated("length"))?;
                Value::Len(self.take(n, "length-delimited field")?)
            }
            wt => return Err(DecodeError::BadWireType(wt)),
        };
        Ok(Some(Field { number, value }))
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or(DecodeError::Truncated(what))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
}

/// Splits one varint-length-delimited message (Java's `writeDelimitedTo`) off the front of `buf`:
/// returns the message bytes and the rest.
pub fn split_delimited(buf: &[u8]) -> Result<(&[u8], &[u8]), DecodeError> {
    let mut pos = 0;
    let n = get_varint(buf, &mut pos)?;
    let n = usize::try_from(n).map_err(|_| DecodeError::Truncated("delimited length"))?;
    let end = pos
        .checked_add(n)
        .filter(|e| *e <= buf.len())
        .ok_or(DecodeError::Truncated("delimited message"))?;
    Ok((&buf[pos..end], &buf[end..]))
}

/// Appends `msg` with its varint length in front (Java's `writeDelimitedTo`).
pub fn put_delimited(buf: &mut Vec<u8>, msg: &[u8]) {
    put_varint(buf, msg.len() as u64);
    buf.extend_from_slice(msg);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_from_the_spec() {
        // The encoding spec's examples: 1 -> 01, 150 -> 96 01, 300 -> ac 02.
        for (v, bytes) in [
            (1u64, vec![0x01]),
            (150, vec![0x96, 0x01]),
            (300, vec![0xac, 0x02]),
        ] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b, bytes);
            assert_eq!(varint_len(v), bytes.len());
            let mut p = 0;
            assert_eq!(get_varint(&b, &mut p), Ok(v));
        }
        let mut b = Vec::new();
        put_varint(&mut b, u64::MAX);
        assert_eq!(b.len(), 10);
    }

    #[test]
    fn zigzag_from_the_spec() {
        for (v, z) in [
            (0, 0),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (-3, 5),
            (i32::MAX, u32::MAX - 1),
        ] {
            assert_eq!(zigzag32(v), z);
            assert_eq!(unzigzag32(z), v);
        }
        assert_eq!(unzigzag32(u32::MAX), i32::MIN);
    }

    #[test]
    fn negative_int32_is_ten_bytes() {
        let mut w = Writer::new();
        w.int(1, -1);
        assert_eq!(w.buf.len(), 11);
        let mut r = Reader::new(&w.buf);
        assert_eq!(r.next_field().unwrap().unwrap().as_i32(), Ok(-1));
    }

    #[test]
    fn truncated_inputs_are_errors() {
        assert!(Reader::new(&[0x0a, 0x05, b'a']).next_field().is_err());
        assert!(Reader::new(&[0x80]).next_field().is_err());
        assert!(Reader::new(&[0x0b]).next_field().is_err()); // wire type 3 (group)
        assert!(Reader::new(&[0x00, 0x00]).next_field().is_err()); // field 0
        assert!(split_delimited(&[0x05, 1, 2]).is_err());
        assert!(split_delimited(&[0xff; 11]).is_err());
    }
}
