//! Names and metadata: making, linking, removing and renaming entries, changing attributes,
//! and listing a directory. A file's held data goes when its last name and handle do.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::DirEntryExt;
use std::path::Path;
use std::time::UNIX_EPOCH;

use fuser::{Errno, FileAttr, FileType, RenameFlags, Request, TimeOrNow};

use super::inodes::DirEntry;
use super::sys::{
    check, chown_new, cname, fstat, fstatat, io_errno, key_of, kind_of, open_backing, proc_path,
};
use super::Inner;
use crate::control::lock;

/// What a setattr request changes (None: leave as is).
pub(super) struct AttrChanges {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime: Option<TimeOrNow>,
    pub mtime: Option<TimeOrNow>,
}

fn timespec(t: Option<TimeOrNow>) -> libc::timespec {
    match t {
        None => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        Some(TimeOrNow::Now) => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
        Some(TimeOrNow::SpecificTime(t)) => {
            let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
            libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            }
        }
    }
}

impl Inner {
    /// Apply `ch` in order (mode, owner, size, times); returns the attributes after.
    pub(super) fn set_attr(&self, ino: u64, ch: AttrChanges) -> Result<FileAttr, Errno> {
        let (fd, key) = self.inode(ino)?;
        let raw = fd.as_raw_fd();
        let st = fstat(raw)?;
        let is_link = kind_of(st.st_mode) == FileType::Symlink;
        let p = proc_path(raw);
        if let Some(m) = ch.mode {
            if !is_link {
                // SAFETY: NUL-terminated path.
                check(unsafe { libc::chmod(p.as_ptr(), m & 0o7777) })?;
            }
        }
        if ch.uid.is_some() || ch.gid.is_some() {
            let u = ch.uid.unwrap_or(u32::MAX);
            let g = ch.gid.unwrap_or(u32::MAX);
            // SAFETY: valid fd, empty NUL-terminated path.
            check(unsafe {
                libc::fchownat(
                    raw,
                    c"".as_ptr(),
                    u,
                    g,
                    libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW,
                )
            })?;
        }
        if let Some(s) = ch.size {
            self.truncate(&fd, key, s)?;
        }
        if (ch.atime.is_some() || ch.mtime.is_some()) && !is_link {
            let times = [timespec(ch.atime), timespec(ch.mtime)];
            // SAFETY: NUL-terminated path, two timespecs.
            check(unsafe { libc::utimensat(libc::AT_FDCWD, p.as_ptr(), times.as_ptr(), 0) })?;
        }
        let st = fstat(raw)?;
        Ok(self.attr_of(ino, &st))
    }

    pub(super) fn mknod(
        &self,
        req: &Request,
        parent: u64,
        name: &OsStr,
        mode: u32,
        rdev: u32,
    ) -> Result<FileAttr, Errno> {
        let (pfd, _) = self.inode(parent)?;
        let c = cname(name)?;
        let pr = pfd.as_raw_fd();
        // SAFETY: valid fd and NUL-terminated name.
        check(unsafe { libc::mknodat(pr, c.as_ptr(), mode, rdev as libc::dev_t) })?;
        chown_new(pr, &c, req);
        if let Ok(st) = fstatat(pr, &c) {
            lock(&self.ctl.overlays).remove(&key_of(&st));
        }
        self.entry(pr, &c)
    }

    pub(super) fn mkdir(
        &self,
        req: &Request,
        parent: u64,
        name: &OsStr,
        mode: u32,
    ) -> Result<FileAttr, Errno> {
        let (pfd, _) = self.inode(parent)?;
        let c = cname(name)?;
        let pr = pfd.as_raw_fd();
        // SAFETY: valid fd and NUL-terminated name.
        check(unsafe { libc::mkdirat(pr, c.as_ptr(), mode) })?;
        chown_new(pr, &c, req);
        self.entry(pr, &c)
    }

    pub(super) fn unlink(&self, parent: u64, name: &OsStr) -> Result<(), Errno> {
        let (pfd, _) = self.inode(parent)?;
        let c = cname(name)?;
        let pr = pfd.as_raw_fd();
        let before = fstatat(pr, &c).ok();
        // SAFETY: valid fd and NUL-terminated name.
        check(unsafe { libc::unlinkat(pr, c.as_ptr(), 0) })?;
        if let Some(st) = before {
            if kind_of(st.st_mode) == FileType::RegularFile {
                self.drop_overlay_if_gone(&key_of(&st), st.st_nlink.saturating_sub(1));
            }
        }
        Ok(())
    }

    pub(super) fn rmdir(&self, parent: u64, name: &OsStr) -> Result<(), Errno> {
        let (pfd, _) = self.inode(parent)?;
        let c = cname(name)?;
        // SAFETY: valid fd and NUL-terminated name.
        check(unsafe { libc::unlinkat(pfd.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
    }

    pub(super) fn symlink(
        &self,
        req: &Request,
        parent: u64,
        link_name: &OsStr,
        target: &Path,
    ) -> Result<FileAttr, Errno> {
        let (pfd, _) = self.inode(parent)?;
        let c = cname(link_name)?;
        let t = cname(target.as_os_str())?;
        let pr = pfd.as_raw_fd();
        // SAFETY: NUL-terminated strings, valid fd.
        check(unsafe { libc::symlinkat(t.as_ptr(), pr, c.as_ptr()) })?;
        chown_new(pr, &c, req);
        self.entry(pr, &c)
    }

    pub(super) fn rename(
        &self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: RenameFlags,
    ) -> Result<(), Errno> {
        let (pfd, _) = self.inode(parent)?;
        let (npfd, _) = self.inode(newparent)?;
        let c = cname(name)?;
        let nc = cname(newname)?;
        let replaced = fstatat(npfd.as_raw_fd(), &nc).ok();
        // SAFETY: valid fds and NUL-terminated names.
        check(unsafe {
            libc::renameat2(
                pfd.as_raw_fd(),
                c.as_ptr(),
                npfd.as_raw_fd(),
                nc.as_ptr(),
                flags.bits(),
            )
        })?;
        if let Some(st) = replaced {
            if kind_of(st.st_mode) == FileType::RegularFile
                && flags.bits() & libc::RENAME_EXCHANGE == 0
            {
                self.drop_overlay_if_gone(&key_of(&st), st.st_nlink.saturating_sub(1));
            }
        }
        Ok(())
    }

    pub(super) fn link(
        &self,
        ino: u64,
        newparent: u64,
        newname: &OsStr,
    ) -> Result<FileAttr, Errno> {
        let (fd, _) = self.inode(ino)?;
        let (npfd, _) = self.inode(newparent)?;
        let nc = cname(newname)?;
        let p = proc_path(fd.as_raw_fd());
        // SAFETY: NUL-terminated strings, valid fds.
        check(unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                p.as_ptr(),
                npfd.as_raw_fd(),
                nc.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        })?;
        self.entry(npfd.as_raw_fd(), &nc)
    }

    /// Open a directory and list it once (readdir serves offsets from this listing); returns
    /// its new directory handle.
    pub(super) fn open_dir(&self, ino: u64) -> Result<u64, Errno> {
        let (fd, _) = self.inode(ino)?;
        let file: File =
            open_backing(&fd, libc::O_RDONLY | libc::O_DIRECTORY).map_err(|e| io_errno(&e))?;
        let mut entries: Vec<DirEntry> = vec![
            (ino, FileType::Directory, OsString::from(".")),
            (ino, FileType::Directory, OsString::from("..")),
        ];
        let rd = std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(|e| io_errno(&e))?;
        for e in rd.flatten() {
            let kind = match e.file_type() {
                Ok(t) if t.is_dir() => FileType::Directory,
                Ok(t) if t.is_symlink() => FileType::Symlink,
                Ok(t) if t.is_file() => FileType::RegularFile,
                Ok(t) => {
                    use std::os::unix::fs::FileTypeExt;
                    if t.is_fifo() {
                        FileType::NamedPipe
                    } else if t.is_socket() {
                        FileType::Socket
                    } else if t.is_char_device() {
                        FileType::CharDevice
                    } else {
                        FileType::BlockDevice
                    }
                }
                Err(_) => FileType::RegularFile,
            };
            entries.push((e.ino().max(2), kind, e.file_name()));
        }
        Ok(self.add_dir(file, entries))
    }
}
