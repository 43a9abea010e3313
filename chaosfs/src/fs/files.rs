//! Open files and their data. While lose-unsynced is on, writes, truncations and size changes
//! are held in the file's overlay (in `Control::overlays`) until an fsync writes them back, so a
//! crash can drop them; with it off, they go straight to the backing file.

use std::collections::hash_map::{Entry, HashMap};
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use fuser::{Errno, FileAttr, Request};

use super::sys::{
    backing_flags, check, chown_new, cname, fstat, io_errno, open_backing, openat, proc_path,
};
use super::Inner;
use crate::control::{lock, Dirty, Key};
use crate::overlay::{pread_full, Overlay};

impl Inner {
    /// Open an existing file; returns its new file handle.
    pub(super) fn open(&self, ino: u64, flags: i32) -> Result<u64, Errno> {
        let (fd, key) = self.inode(ino)?;
        let file = open_backing(&fd, backing_flags(flags)).map_err(|e| io_errno(&e))?;
        if flags & libc::O_TRUNC != 0 && flags & libc::O_ACCMODE != libc::O_RDONLY {
            self.truncate(&fd, key, 0)?;
        }
        Ok(self.add_file(file, ino, key))
    }

    /// Create (or, without O_EXCL, open) `name` in `parent`; returns its attributes and its new
    /// file handle.
    pub(super) fn create(
        &self,
        req: &Request,
        parent: u64,
        name: &OsStr,
        mode: u32,
        flags: i32,
    ) -> Result<(FileAttr, u64), Errno> {
        let (pfd, _) = self.inode(parent)?;
        let c = cname(name)?;
        let pr = pfd.as_raw_fd();
        let bflags = backing_flags(flags);
        // Create exclusively so we know whether the file is new (and has no stale held data).
        let (fd, created) = match openat(pr, &c, bflags | libc::O_CREAT | libc::O_EXCL, mode) {
            Ok(fd) => (fd, true),
            Err(e) if e.code() == libc::EEXIST && flags & libc::O_EXCL == 0 => {
                (openat(pr, &c, bflags, 0)?, false)
            }
            Err(e) => return Err(e),
        };
        if created {
            chown_new(pr, &c, req);
        }
        let file = File::from(fd);
        let attr = self.entry(pr, &c)?;
        let (ifd, key) = self.inode(attr.ino.0)?;
        if created {
            lock(&self.ctl.overlays).remove(&key);
        } else if flags & libc::O_TRUNC != 0 {
            self.truncate(&ifd, key, 0)?;
        }
        let fh = self.add_file(file, attr.ino.0, key);
        let st = fstat(ifd.as_raw_fd())?;
        Ok((self.attr_of(attr.ino.0, &st), fh))
    }

    /// Read through the overlay if the file has held data, else from the backing file.
    pub(super) fn read(&self, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, Errno> {
        let (file, _, key) = self.file(fh)?;
        {
            let ovs = lock(&self.ctl.overlays);
            if let Some(d) = ovs.get(&key) {
                return d
                    .overlay
                    .read(offset, size as u64, |off, buf| pread_full(&file, off, buf))
                    .map_err(|e| io_errno(&e));
            }
        }
        let mut buf = vec![0u8; size as usize];
        let mut n = 0;
        while n < buf.len() {
            match file.read_at(&mut buf[n..], offset + n as u64) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_errno(&e)),
            }
        }
        buf.truncate(n);
        Ok(buf)
    }

    pub(super) fn truncate(&self, fd: &Arc<OwnedFd>, key: Key, size: u64) -> Result<(), Errno> {
        if self.ctl.lose_unsynced.load(Ordering::SeqCst) {
            let mut ovs = lock(&self.ctl.overlays);
            if self.ctl.lose_unsynced.load(Ordering::SeqCst) {
                let backing = || Ok(fstat(fd.as_raw_fd())?.st_size as u64);
                self.held_back(&mut ovs, key, fd, backing)?.truncate(size);
                return Ok(());
            }
        }
        let p = proc_path(fd.as_raw_fd());
        // SAFETY: NUL-terminated path.
        check(unsafe { libc::truncate(p.as_ptr(), size as libc::off_t) })
    }

    /// The file's held-back data, started on its first held-back change from the backing
    /// file's size then (`backing`, asked only then) and the path the application sees.
    fn held_back<'a>(
        &self,
        ovs: &'a mut HashMap<Key, Dirty>,
        key: Key,
        fd: &Arc<OwnedFd>,
        backing: impl FnOnce() -> Result<u64, Errno>,
    ) -> Result<&'a mut Overlay, Errno> {
        let dirty = match ovs.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Dirty {
                overlay: Overlay::new(backing()?),
                fd: fd.clone(),
                path: self.app_path(fd),
            }),
        };
        Ok(&mut dirty.overlay)
    }

    pub(super) fn do_write(
        &self,
        file: &File,
        fd: &Arc<OwnedFd>,
        key: Key,
        off: u64,
        data: &[u8],
    ) -> Result<u32, Errno> {
        if self.ctl.lose_unsynced.load(Ordering::SeqCst) {
            let mut ovs = lock(&self.ctl.overlays);
            if self.ctl.lose_unsynced.load(Ordering::SeqCst) {
                let backing = || Ok(file.metadata().map_err(|e| io_errno(&e))?.len());
                self.held_back(&mut ovs, key, fd, backing)?.write(off, data);
                return Ok(data.len() as u32);
            }
        }
        file.write_all_at(data, off).map_err(|e| io_errno(&e))?;
        Ok(data.len() as u32)
    }

    /// fsync / fdatasync: write back held data, then sync the backing file for real.
    pub(super) fn do_fsync(&self, file: &File, key: Key, datasync: bool) -> Result<(), Errno> {
        {
            let mut ovs = lock(&self.ctl.overlays);
            if self.ctl.frozen() {
                return Err(Errno::EIO); // never seen: the caller parks the reply
            }
            if let Some(d) = ovs.remove(&key) {
                let res =
                    open_backing(&d.fd, libc::O_WRONLY).and_then(|f| d.overlay.write_back(&f));
                if let Err(e) = res {
                    ovs.insert(key, d);
                    return Err(io_errno(&e));
                }
            }
        }
        let r = if datasync {
            file.sync_data()
        } else {
            file.sync_all()
        };
        r.map_err(|e| io_errno(&e))
    }

    pub(super) fn fallocate(
        &self,
        ino: u64,
        fh: u64,
        offset: u64,
        length: u64,
        mode: i32,
    ) -> Result<(), Errno> {
        let (file, _, key) = self.file(fh)?;
        let (fd, _) = self.inode(ino)?;
        let end = offset.saturating_add(length);
        if self.ctl.lose_unsynced.load(Ordering::SeqCst) {
            // Held-back model: plain preallocation changes only the size (held until fsync);
            // KEEP_SIZE changes nothing visible; punching holes is not modelled.
            if mode & !libc::FALLOC_FL_KEEP_SIZE != 0 {
                return Err(Errno::EOPNOTSUPP);
            }
            if mode & libc::FALLOC_FL_KEEP_SIZE == 0 {
                let cur = self
                    .overlay_size(&key)
                    .or_else(|| file.metadata().ok().map(|m| m.len()))
                    .unwrap_or(0);
                if end > cur {
                    let mut ovs = lock(&self.ctl.overlays);
                    let backing = || Ok(file.metadata().map(|m| m.len()).unwrap_or(0));
                    self.held_back(&mut ovs, key, &fd, backing)?.extend(end);
                }
            }
            return Ok(());
        }
        // SAFETY: valid fd.
        check(unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                mode,
                offset as libc::off_t,
                length as libc::off_t,
            )
        })
    }
}
