//! The tables behind inode numbers and file handles: each inode is an O_PATH descriptor of its
//! backing file, found again by (st_dev, st_ino) so that hard links share one inode number.

use std::collections::HashMap;
use std::ffi::{CStr, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;

use fuser::{Errno, FileAttr, FileType};

use super::sys::{fstat, key_of, kind_of, openat, to_attr};
use super::{Inner, ROOT};
use crate::control::{lock, Key};

struct Inode {
    fd: Arc<OwnedFd>,
    key: Key,
    nlookup: u64,
}

struct OpenFile {
    file: Arc<File>,
    ino: u64,
    key: Key,
}

struct OpenDir {
    file: Arc<File>,
    entries: Arc<Vec<DirEntry>>,
}

/// One entry of a directory listing: inode number, kind, name.
pub(super) type DirEntry = (u64, FileType, OsString);

#[derive(Default)]
pub(super) struct Tables {
    inodes: HashMap<u64, Inode>,
    by_key: HashMap<Key, u64>,
    next_ino: u64,
    files: HashMap<u64, OpenFile>,
    dirs: HashMap<u64, OpenDir>,
    next_fh: u64,
}

impl Tables {
    /// The tables of a fresh mount: only the root, which is never forgotten.
    pub(super) fn with_root(fd: OwnedFd, st: &libc::stat) -> Tables {
        let mut t = Tables {
            next_ino: ROOT + 1,
            next_fh: 1,
            ..Default::default()
        };
        t.by_key.insert(key_of(st), ROOT);
        t.inodes.insert(
            ROOT,
            Inode {
                fd: Arc::new(fd),
                key: key_of(st),
                nlookup: u64::MAX / 2,
            },
        );
        t
    }
}

impl Inner {
    pub(super) fn inode(&self, ino: u64) -> Result<(Arc<OwnedFd>, Key), Errno> {
        let t = lock(&self.t);
        t.inodes
            .get(&ino)
            .map(|i| (i.fd.clone(), i.key))
            .ok_or(Errno::ENOENT)
    }

    pub(super) fn file(&self, fh: u64) -> Result<(Arc<File>, u64, Key), Errno> {
        let t = lock(&self.t);
        t.files
            .get(&fh)
            .map(|f| (f.file.clone(), f.ino, f.key))
            .ok_or(Errno::EBADF)
    }

    /// The path of an inode as the application sees it (for logs and --paths).
    pub(super) fn app_path(&self, fd: &OwnedFd) -> String {
        let p = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .unwrap_or_else(|_| PathBuf::from("?"));
        match p.strip_prefix(&self.backing) {
            Ok(rel) if rel.as_os_str().is_empty() => self.mount.display().to_string(),
            Ok(rel) => self.mount.join(rel).display().to_string(),
            Err(_) => p.display().to_string(),
        }
    }

    pub(super) fn overlay_size(&self, key: &Key) -> Option<u64> {
        lock(&self.ctl.overlays).get(key).map(|d| d.overlay.size)
    }

    /// The attributes of an inode, with the size of its held-back data if it has any.
    pub(super) fn attr_of(&self, ino: u64, st: &libc::stat) -> FileAttr {
        let size = if kind_of(st.st_mode) == FileType::RegularFile {
            self.overlay_size(&key_of(st))
        } else {
            None
        };
        to_attr(ino, st, size)
    }

    /// Register (or find) the inode for `name` in `dir` and count one lookup.
    pub(super) fn entry(&self, dir: RawFd, name: &CStr) -> Result<FileAttr, Errno> {
        let fd = openat(dir, name, libc::O_PATH | libc::O_NOFOLLOW, 0)?;
        let st = fstat(fd.as_raw_fd())?;
        let key = key_of(&st);
        let ino = {
            let mut t = lock(&self.t);
            if let Some(&ino) = t.by_key.get(&key) {
                if let Some(i) = t.inodes.get_mut(&ino) {
                    i.nlookup += 1;
                }
                ino
            } else {
                let ino = t.next_ino;
                t.next_ino += 1;
                t.by_key.insert(key, ino);
                t.inodes.insert(
                    ino,
                    Inode {
                        fd: Arc::new(fd),
                        key,
                        nlookup: 1,
                    },
                );
                ino
            }
        };
        Ok(self.attr_of(ino, &st))
    }

    /// The kernel forgets `nlookup` lookups; at zero the inode goes (the root never does).
    pub(super) fn forget(&self, ino: u64, nlookup: u64) {
        if ino == ROOT {
            return;
        }
        let gone = {
            let mut t = lock(&self.t);
            let Some(i) = t.inodes.get_mut(&ino) else {
                return;
            };
            i.nlookup = i.nlookup.saturating_sub(nlookup);
            if i.nlookup > 0 {
                return;
            }
            let key = i.key;
            let i = t.inodes.remove(&ino);
            t.by_key.remove(&key);
            i
        };
        if let Some(i) = gone {
            if let Ok(st) = fstat(i.fd.as_raw_fd()) {
                self.drop_overlay_if_gone(&i.key, st.st_nlink);
            }
        }
    }

    /// A new file handle for an opened backing file.
    pub(super) fn add_file(&self, file: File, ino: u64, key: Key) -> u64 {
        let mut t = lock(&self.t);
        let fh = t.next_fh;
        t.next_fh += 1;
        t.files.insert(
            fh,
            OpenFile {
                file: Arc::new(file),
                ino,
                key,
            },
        );
        fh
    }

    /// Close a file handle; its held data goes if the file no longer exists anywhere.
    pub(super) fn release(&self, fh: u64) {
        let f = lock(&self.t).files.remove(&fh);
        if let Some(f) = f {
            if let Ok(m) = f.file.metadata() {
                use std::os::unix::fs::MetadataExt;
                self.drop_overlay_if_gone(&f.key, m.nlink());
            }
        }
    }

    /// A new directory handle, with the listing taken at open.
    pub(super) fn add_dir(&self, file: File, entries: Vec<DirEntry>) -> u64 {
        let mut t = lock(&self.t);
        let fh = t.next_fh;
        t.next_fh += 1;
        t.dirs.insert(
            fh,
            OpenDir {
                file: Arc::new(file),
                entries: Arc::new(entries),
            },
        );
        fh
    }

    pub(super) fn dir_entries(&self, fh: u64) -> Option<Arc<Vec<DirEntry>>> {
        lock(&self.t).dirs.get(&fh).map(|d| d.entries.clone())
    }

    pub(super) fn dir_file(&self, fh: u64) -> Option<Arc<File>> {
        lock(&self.t).dirs.get(&fh).map(|d| d.file.clone())
    }

    pub(super) fn release_dir(&self, fh: u64) {
        lock(&self.t).dirs.remove(&fh);
    }

    fn has_open_files(&self, key: &Key) -> bool {
        lock(&self.t).files.values().any(|f| &f.key == key)
    }

    /// Forget held-back data of a file that no longer exists anywhere.
    pub(super) fn drop_overlay_if_gone(&self, key: &Key, nlink: u64) {
        if nlink == 0 && !self.has_open_files(key) {
            lock(&self.ctl.overlays).remove(key);
        }
    }
}
