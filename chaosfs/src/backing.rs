//! The backing file behind an O_PATH descriptor, opened again for I/O through
//! `/proc/self/fd/N`: the passthrough (`fs/`) does it for each request, and the fault state
//! (`control/`) when it writes held-back data back, so it sits below both.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub fn proc_path(fd: RawFd) -> CString {
    CString::new(format!("/proc/self/fd/{fd}")).unwrap_or_default()
}

/// Open the file behind an O_PATH descriptor for I/O (`/proc/self/fd/N`).
pub fn open_backing(fd: &OwnedFd, flags: i32) -> std::io::Result<File> {
    let p = proc_path(fd.as_raw_fd());
    // SAFETY: NUL-terminated path.
    let r = unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        // SAFETY: r is a fresh fd.
        Ok(unsafe { File::from_raw_fd(r) })
    }
}
