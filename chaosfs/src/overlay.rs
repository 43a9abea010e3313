//! The un-fsynced data of one file while `lose-unsynced` is on: what the page cache would hold.
//!
//! The logical content of the file is: the backing file's bytes below `cut` (bytes of the backing
//! file at or after `cut` were truncated away since the last fsync and read as zeros), overlaid
//! with the dirty `extents`, and the whole limited to `size`. An fsync writes this back
//! (`write_back`); a crash drops the `Overlay` and the backing file is what was fsynced.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

#[derive(Debug, Clone, Default)]
pub struct Overlay {
    /// Logical size of the file.
    pub size: u64,
    /// Backing bytes at offsets >= cut are gone (a truncation since the last fsync).
    pub cut: u64,
    /// Dirty data, keyed by offset; extents never overlap.
    pub extents: BTreeMap<u64, Vec<u8>>,
}

impl Overlay {
    /// An overlay over a backing file of `backing_size` bytes, with nothing dirty yet.
    pub fn new(backing_size: u64) -> Self {
        Overlay {
            size: backing_size,
            cut: backing_size,
            extents: BTreeMap::new(),
        }
    }

    /// Bytes held back (dirty data) in this overlay.
    pub fn dirty_bytes(&self) -> u64 {
        self.extents.values().map(|v| v.len() as u64).sum()
    }

    pub fn write(&mut self, off: u64, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        let end = off.saturating_add(data.len() as u64);
        // Extents that overlap or touch [off, end], latest first.
        let touching: Vec<u64> = self
            .extents
            .range(..=end)
            .rev()
            .take_while(|(k, v)| **k + v.len() as u64 >= off)
            .map(|(k, _)| *k)
            .collect();
        // Fast path (appends and rewrites inside one extent): extend it in place.
        if touching.len() == 1 && touching[0] <= off {
            let k = touching[0];
            if let Some(v) = self.extents.get_mut(&k) {
                let rel = (off - k) as usize;
                let need = rel + data.len();
                if v.len() < need {
                    v.resize(need, 0);
                }
                v[rel..need].copy_from_slice(data);
            }
        } else {
            let start = touching.iter().copied().min().unwrap_or(off).min(off);
            let mut stop = end;
            for k in &touching {
                if let Some(v) = self.extents.get(k) {
                    stop = stop.max(k + v.len() as u64);
                }
            }
            let mut buf = vec![0u8; (stop - start) as usize];
            for k in &touching {
                if let Some(v) = self.extents.remove(k) {
                    let rel = (k - start) as usize;
                    buf[rel..rel + v.len()].copy_from_slice(&v);
                }
            }
            let rel = (off - start) as usize;
            buf[rel..rel + data.len()].copy_from_slice(data);
            self.extents.insert(start, buf);
        }
        self.size = self.size.max(end);
    }

    pub fn truncate(&mut self, n: u64) {
        self.cut = self.cut.min(n);
        self.size = n;
        let beyond: Vec<u64> = self.extents.range(n..).map(|(k, _)| *k).collect();
        for k in beyond {
            self.extents.remove(&k);
        }
        if let Some((k, v)) = self.extents.range_mut(..n).next_back() {
            let keep = (n - k) as usize;
            if v.len() > keep {
                v.truncate(keep);
            }
        }
    }

    /// Grow the logical size (fallocate without KEEP_SIZE); never shrinks.
    pub fn extend(&mut self, n: u64) {
        self.size = self.size.max(n);
    }

    /// Read `len` bytes at `off` of the logical content; `backing` fills a buffer from the
    /// backing file at an offset (short reads leave zeros).
    pub fn read(
        &self,
        off: u64,
        len: u64,
        backing: impl FnOnce(u64, &mut [u8]) -> std::io::Result<()>,
    ) -> std::io::Result<Vec<u8>> {
        let end = off.saturating_add(len).min(self.size);
        if off >= end {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; (end - off) as usize];
        let b_end = end.min(self.cut);
        if off < b_end {
            backing(off, &mut buf[..(b_end - off) as usize])?;
        }
        // Extents that may overlap [off, end): the one starting before off, and those inside.
        let first = self
            .extents
            .range(..=off)
            .next_back()
            .map(|(k, _)| *k)
            .unwrap_or(off);
        for (k, v) in self.extents.range(first..end) {
            let (k, vend) = (*k, *k + v.len() as u64);
            let s = k.max(off);
            let e = vend.min(end);
            if s < e {
                buf[(s - off) as usize..(e - off) as usize]
                    .copy_from_slice(&v[(s - k) as usize..(e - k) as usize]);
            }
        }
        Ok(buf)
    }

    /// Write the logical content back to the backing file (not fsynced: the caller does it).
    pub fn write_back(&self, file: &File) -> std::io::Result<()> {
        let len = file.metadata()?.len();
        let mut cur = len;
        if len > self.cut {
            file.set_len(self.cut)?;
            cur = self.cut;
        }
        for (k, v) in &self.extents {
            file.write_all_at(v, *k)?;
            cur = cur.max(k + v.len() as u64);
        }
        if cur != self.size {
            file.set_len(self.size)?;
        }
        Ok(())
    }
}

/// Read from a positioned file until `buf` is full or end of file (the rest stays zero).
pub fn pread_full(file: &File, mut off: u64, mut buf: &mut [u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        match file.read_at(buf, off) {
            Ok(0) => break,
            Ok(n) => {
                off += n as u64;
                buf = &mut buf[n..];
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(o: &Overlay, backing: &[u8]) -> Vec<u8> {
        o.read(0, u64::MAX / 2, |off, buf| {
            let off = off as usize;
            let n = buf.len().min(backing.len().saturating_sub(off));
            buf[..n].copy_from_slice(&backing[off..off + n]);
            Ok(())
        })
        .unwrap()
    }

    /// Apply the overlay to an in-memory "file" the way write_back does.
    fn applied(o: &Overlay, backing: &[u8]) -> Vec<u8> {
        let mut f = backing.to_vec();
        f.truncate(o.cut as usize);
        for (k, v) in &o.extents {
            let k = *k as usize;
            if f.len() < k + v.len() {
                f.resize(k + v.len(), 0);
            }
            f[k..k + v.len()].copy_from_slice(v);
        }
        f.resize(o.size as usize, 0);
        f
    }

    #[test]
    fn appends_and_reads() {
        let backing = b"hello".to_vec();
        let mut o = Overlay::new(5);
        o.write(5, b" world");
        o.write(11, b"!");
        assert_eq!(content(&o, &backing), b"hello world!");
        assert_eq!(o.extents.len(), 1);
        assert_eq!(applied(&o, &backing), b"hello world!");
        assert_eq!(o.dirty_bytes(), 7);
    }

    #[test]
    fn overwrite_merges_extents() {
        let backing = vec![b'.'; 20];
        let mut o = Overlay::new(20);
        o.write(2, b"aa");
        o.write(8, b"bb");
        o.write(3, b"XXXXXX");
        assert_eq!(content(&o, &backing), b"..aXXXXXXb..........");
        assert_eq!(o.extents.len(), 1);
        o.write(0, b"Z");
        assert_eq!(content(&o, &backing), b"Z.aXXXXXXb..........");
        assert_eq!(applied(&o, &backing), content(&o, &backing));
    }

    #[test]
    fn truncate_then_extend_reads_zeros() {
        let backing = b"abcdefgh".to_vec();
        let mut o = Overlay::new(8);
        o.write(6, b"XY");
        o.truncate(3);
        assert_eq!(content(&o, &backing), b"abc");
        o.truncate(6);
        assert_eq!(content(&o, &backing), b"abc\0\0\0");
        o.write(7, b"Q");
        assert_eq!(content(&o, &backing), b"abc\0\0\0\0Q");
        assert_eq!(applied(&o, &backing), content(&o, &backing));
        o.extend(10);
        assert_eq!(applied(&o, &backing), b"abc\0\0\0\0Q\0\0");
    }

    #[test]
    fn partial_reads() {
        let backing = b"0123456789".to_vec();
        let mut o = Overlay::new(10);
        o.write(4, b"ab");
        let r = o
            .read(3, 4, |off, buf| {
                let off = off as usize;
                buf.copy_from_slice(&backing[off..off + buf.len()]);
                Ok(())
            })
            .unwrap();
        assert_eq!(r, b"3ab6");
        assert!(o.read(10, 4, |_, _| Ok(())).unwrap().is_empty());
    }

    #[test]
    fn write_back_to_a_real_file() {
        let dir = std::env::temp_dir().join(format!("chaosfs-ov-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, b"AAAAAAAA").unwrap();
        let mut o = Overlay::new(8);
        o.truncate(4);
        o.write(6, b"BB");
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        o.write_back(&f).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"AAAA\0\0BB");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
