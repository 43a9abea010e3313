//! Thin wrappers over the syscalls the passthrough makes (descriptor-relative, never by path
//! from the root), and the conversion of a backing file's stat into what FUSE answers.

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{Errno, FileAttr, FileType, INodeNo, Request};

pub(super) use crate::backing::{open_backing, proc_path};
use crate::control::Key;

pub(super) fn last_errno() -> Errno {
    Errno::from(std::io::Error::last_os_error())
}

pub(super) fn io_errno(e: &std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

pub(super) fn cname(name: &OsStr) -> Result<CString, Errno> {
    CString::new(name.as_bytes()).map_err(|_| Errno::EINVAL)
}

pub(super) fn fstat(fd: RawFd) -> Result<libc::stat, Errno> {
    // SAFETY: an all-zero stat is a valid value; fstatat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd, NUL-terminated empty path, valid out pointer.
    let r = unsafe {
        libc::fstatat(
            fd,
            c"".as_ptr(),
            &mut st,
            libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(st)
    }
}

pub(super) fn fstatat(dir: RawFd, name: &CStr) -> Result<libc::stat, Errno> {
    // SAFETY: as above.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and NUL-terminated name.
    let r = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(st)
    }
}

pub(super) fn openat(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> Result<OwnedFd, Errno> {
    // SAFETY: valid fd and NUL-terminated name; the result is a fresh fd we own.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        Err(last_errno())
    } else {
        // SAFETY: fd was just returned by openat.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

pub(super) fn check(r: libc::c_int) -> Result<(), Errno> {
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(())
    }
}

/// Give a new file to the caller's uid/gid (chaosfs runs as root).
pub(super) fn chown_new(dir: RawFd, name: &CStr, req: &Request) {
    if req.uid() != 0 || req.gid() != 0 {
        // SAFETY: valid fd and NUL-terminated name.
        unsafe {
            libc::fchownat(
                dir,
                name.as_ptr(),
                req.uid(),
                req.gid(),
                libc::AT_SYMLINK_NOFOLLOW,
            );
        }
    }
}

/// Flags for opening the backing file: the kernel already handles append offsets, creation,
/// truncation (as setattr) and O_SYNC (as fsync requests), so none of those reach the backing file.
pub(super) fn backing_flags(flags: i32) -> i32 {
    let mut f = flags
        & !(libc::O_CREAT
            | libc::O_EXCL
            | libc::O_NOCTTY
            | libc::O_TRUNC
            | libc::O_APPEND
            | libc::O_DIRECT
            | libc::O_SYNC
            | libc::O_DSYNC
            | libc::O_NOFOLLOW
            | libc::O_PATH);
    if f & libc::O_ACCMODE == libc::O_WRONLY {
        f = (f & !libc::O_ACCMODE) | libc::O_RDWR;
    }
    f
}

fn systime(sec: i64, nsec: i64) -> SystemTime {
    let ns = Duration::from_nanos(nsec.clamp(0, 999_999_999) as u64);
    if sec >= 0 {
        UNIX_EPOCH
            .checked_add(Duration::from_secs(sec as u64) + ns)
            .unwrap_or(UNIX_EPOCH)
    } else {
        UNIX_EPOCH
            .checked_sub(Duration::from_secs(sec.unsigned_abs()))
            .and_then(|t| t.checked_add(ns))
            .unwrap_or(UNIX_EPOCH)
    }
}

pub(super) fn kind_of(mode: u32) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFBLK => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

pub(super) fn to_attr(ino: u64, st: &libc::stat, size: Option<u64>) -> FileAttr {
    FileAttr {
        ino: INodeNo(ino),
        size: size.unwrap_or(st.st_size as u64),
        blocks: st.st_blocks as u64,
        atime: systime(st.st_atime, st.st_atime_nsec),
        mtime: systime(st.st_mtime, st.st_mtime_nsec),
        ctime: systime(st.st_ctime, st.st_ctime_nsec),
        crtime: systime(st.st_ctime, st.st_ctime_nsec),
        kind: kind_of(st.st_mode),
        perm: (st.st_mode & 0o7777) as u16,
        nlink: st.st_nlink as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        rdev: st.st_rdev as u32,
        blksize: st.st_blksize as u32,
        flags: 0,
    }
}

pub(super) fn key_of(st: &libc::stat) -> Key {
    (st.st_dev, st.st_ino)
}
