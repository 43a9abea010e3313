//! Async reading of the framing, shared by the client and by test servers.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::rpc::MAX_FRAME;

/// Reads one frame: a 4-byte big-endian length, then that many bytes (returned without the
/// length). A length above [`MAX_FRAME`] is `InvalidData`, before anything is allocated.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let len = u32::from_be_bytes(len);
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes is larger than the {MAX_FRAME} accepted"),
        ));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body).await?;
    Ok(body)
}

/// Reads the 7-byte connection preamble (server side).
pub async fn read_preamble<R: AsyncRead + Unpin>(r: &mut R) -> io::Result<[u8; 7]> {
    let mut p = [0u8; 7];
    r.read_exact(&mut p).await?;
    Ok(p)
}
