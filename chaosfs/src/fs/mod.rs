//! The FUSE passthrough: every inode is an O_PATH descriptor of the backing file, so renames and
//! hard links need no path bookkeeping; file data goes through `Control` for the faults.
//!
//! `requests` answers the kernel (and parks every answer once the filesystem is frozen); the
//! work is in `inodes` (inode and handle tables), `namespace` (names, attributes, listings),
//! `files` (file data, held back while lose-unsynced is on) and `sys` (the syscalls).

mod files;
mod inodes;
mod namespace;
mod requests;
mod sys;

use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::control::Control;
use inodes::Tables;
use sys::{fstat, openat};

const ROOT: u64 = 1;

pub struct Inner {
    ctl: Arc<Control>,
    /// The directory applications see (the mount point).
    mount: PathBuf,
    /// The backing directory (bind mount of the original directory).
    backing: PathBuf,
    t: Mutex<Tables>,
}

pub struct ChaosFs(Arc<Inner>);

impl ChaosFs {
    pub fn new(ctl: Arc<Control>, mount: &Path, backing: &Path) -> std::io::Result<ChaosFs> {
        let c = CString::new(backing.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("backing path contains NUL"))?;
        let fd = openat(libc::AT_FDCWD, &c, libc::O_PATH | libc::O_DIRECTORY, 0)
            .map_err(|e| std::io::Error::from_raw_os_error(e.code()))?;
        let st = fstat(fd.as_raw_fd()).map_err(|e| std::io::Error::from_raw_os_error(e.code()))?;
        Ok(ChaosFs(Arc::new(Inner {
            ctl,
            mount: mount.to_path_buf(),
            backing: backing.to_path_buf(),
            t: Mutex::new(Tables::with_root(fd, &st)),
        })))
    }
}
