//! The FUSE passthrough: every inode is an O_PATH descriptor of the backing file, so renames and
//! hard links need no path bookkeeping; file data goes through `Control` for the faults.

use std::collections::HashMap;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirEntryExt, FileExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    AccessFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow,
    WriteFlags,
};

use crate::control::{lock, Control, Dirty, Key};
use crate::overlay::{pread_full, Overlay};

const TTL: Duration = Duration::from_secs(1);
const ROOT: u64 = 1;

fn last_errno() -> Errno {
    Errno::from(std::io::Error::last_os_error())
}

fn io_errno(e: &std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

fn cname(name: &OsStr) -> Result<CString, Errno> {
    CString::new(name.as_bytes()).map_err(|_| Errno::EINVAL)
}

fn proc_path(fd: RawFd) -> CString {
    CString::new(format!("/proc/self/fd/{fd}")).unwrap_or_default()
}

fn fstat(fd: RawFd) -> Result<libc::stat, Errno> {
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

fn fstatat(dir: RawFd, name: &CStr) -> Result<libc::stat, Errno> {
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

fn openat(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> Result<OwnedFd, Errno> {
    // SAFETY: valid fd and NUL-terminated name; the result is a fresh fd we own.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        Err(last_errno())
    } else {
        // SAFETY: fd was just returned by openat.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
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

fn check(r: libc::c_int) -> Result<(), Errno> {
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(())
    }
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

fn kind_of(mode: u32) -> FileType {
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

fn to_attr(ino: u64, st: &libc::stat, size: Option<u64>) -> FileAttr {
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

fn key_of(st: &libc::stat) -> Key {
    (st.st_dev, st.st_ino)
}

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
    entries: Arc<Vec<(u64, FileType, OsString)>>,
}

#[derive(Default)]
struct Tables {
    inodes: HashMap<u64, Inode>,
    by_key: HashMap<Key, u64>,
    next_ino: u64,
    files: HashMap<u64, OpenFile>,
    dirs: HashMap<u64, OpenDir>,
    next_fh: u64,
}

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
        let mut t = Tables {
            next_ino: ROOT + 1,
            next_fh: 1,
            ..Default::default()
        };
        t.by_key.insert(key_of(&st), ROOT);
        t.inodes.insert(
            ROOT,
            Inode {
                fd: Arc::new(fd),
                key: key_of(&st),
                nlookup: u64::MAX / 2,
            },
        );
        Ok(ChaosFs(Arc::new(Inner {
            ctl,
            mount: mount.to_path_buf(),
            backing: backing.to_path_buf(),
            t: Mutex::new(t),
        })))
    }
}

impl Inner {
    fn inode(&self, ino: u64) -> Result<(Arc<OwnedFd>, Key), Errno> {
        let t = lock(&self.t);
        t.inodes
            .get(&ino)
            .map(|i| (i.fd.clone(), i.key))
            .ok_or(Errno::ENOENT)
    }

    fn file(&self, fh: u64) -> Result<(Arc<File>, u64, Key), Errno> {
        let t = lock(&self.t);
        t.files
            .get(&fh)
            .map(|f| (f.file.clone(), f.ino, f.key))
            .ok_or(Errno::EBADF)
    }

    /// The path of an inode as the application sees it (for logs and --paths).
    fn app_path(&self, fd: &OwnedFd) -> String {
        let p = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .unwrap_or_else(|_| PathBuf::from("?"));
        match p.strip_prefix(&self.backing) {
            Ok(rel) if rel.as_os_str().is_empty() => self.mount.display().to_string(),
            Ok(rel) => self.mount.join(rel).display().to_string(),
            Err(_) => p.display().to_string(),
        }
    }

    fn overlay_size(&self, key: &Key) -> Option<u64> {
        lock(&self.ctl.overlays).get(key).map(|d| d.overlay.size)
    }

    fn attr_of(&self, ino: u64, st: &libc::stat) -> FileAttr {
        let size = if kind_of(st.st_mode) == FileType::RegularFile {
            self.overlay_size(&key_of(st))
        } else {
            None
        };
        to_attr(ino, st, size)
    }

    /// Register (or find) the inode for `name` in `dir` and count one lookup.
    fn entry(&self, dir: RawFd, name: &CStr) -> Result<FileAttr, Errno> {
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

    fn has_open_files(&self, key: &Key) -> bool {
        lock(&self.t).files.values().any(|f| &f.key == key)
    }

    /// Forget held-back data of a file that no longer exists anywhere.
    fn drop_overlay_if_gone(&self, key: &Key, nlink: u64) {
        if nlink == 0 && !self.has_open_files(key) {
            lock(&self.ctl.overlays).remove(key);
        }
    }

    fn truncate(&self, fd: &Arc<OwnedFd>, key: Key, size: u64) -> Result<(), Errno> {
        if self.ctl.lose_unsynced.load(Ordering::SeqCst) {
            let backing = fstat(fd.as_raw_fd())?.st_size as u64;
            let mut ovs = lock(&self.ctl.overlays);
            if self.ctl.lose_unsynced.load(Ordering::SeqCst) {
                let path = if ovs.contains_key(&key) {
                    String::new()
                } else {
                    self.app_path(fd)
                };
                ovs.entry(key)
                    .or_insert_with(|| Dirty {
                        overlay: Overlay::new(backing),
                        fd: fd.clone(),
                        path,
                    })
                    .overlay
                    .truncate(size);
                return Ok(());
            }
        }
        let p = proc_path(fd.as_raw_fd());
        // SAFETY: NUL-terminated path.
        check(unsafe { libc::truncate(p.as_ptr(), size as libc::off_t) })
    }

    fn do_write(
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
                let d = match ovs.entry(key) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        let backing = file.metadata().map_err(|e| io_errno(&e))?.len();
                        e.insert(Dirty {
                            overlay: Overlay::new(backing),
                            fd: fd.clone(),
                            path: self.app_path(fd),
                        })
                    }
                };
                d.overlay.write(off, data);
                return Ok(data.len() as u32);
            }
        }
        file.write_all_at(data, off).map_err(|e| io_errno(&e))?;
        Ok(data.len() as u32)
    }

    /// fsync / fdatasync: write back held data, then sync the backing file for real.
    fn do_fsync(&self, file: &File, key: Key, datasync: bool) -> Result<(), Errno> {
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
}

/// Run `f` now, or on its own thread after `delay` (so one slow fsync blocks nobody else).
fn after(delay: Option<Duration>, f: impl FnOnce() + Send + 'static) {
    match delay {
        Some(d) if !d.is_zero() => {
            let _ = std::thread::Builder::new()
                .name("chaosfs-delay".into())
                .spawn(move || {
                    std::thread::sleep(d);
                    f()
                });
        }
        _ => f(),
    }
}

/// Flags for opening the backing file: the kernel already handles append offsets, creation,
/// truncation (as setattr) and O_SYNC (as fsync requests), so none of those reach the backing file.
fn backing_flags(flags: i32) -> i32 {
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

macro_rules! frozen_check {
    ($self:ident, $reply:ident) => {
        if $self.0.ctl.frozen() {
            $self.0.ctl.park($reply);
            return;
        }
    };
}

macro_rules! tryr {
    ($reply:ident, $e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => {
                $reply.error(e);
                return;
            }
        }
    };
}

impl Filesystem for ChaosFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let c = tryr!(reply, cname(name));
        let attr = tryr!(reply, self.0.entry(pfd.as_raw_fd(), &c));
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        if ino.0 == ROOT {
            return;
        }
        let gone = {
            let mut t = lock(&self.0.t);
            let Some(i) = t.inodes.get_mut(&ino.0) else {
                return;
            };
            i.nlookup = i.nlookup.saturating_sub(nlookup);
            if i.nlookup > 0 {
                return;
            }
            let key = i.key;
            let i = t.inodes.remove(&ino.0);
            t.by_key.remove(&key);
            i
        };
        if let Some(i) = gone {
            if let Ok(st) = fstat(i.fd.as_raw_fd()) {
                self.0.drop_overlay_if_gone(&i.key, st.st_nlink);
            }
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        frozen_check!(self, reply);
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let st = tryr!(reply, fstat(fd.as_raw_fd()));
        reply.attr(&TTL, &self.0.attr_of(ino.0, &st));
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        frozen_check!(self, reply);
        let (fd, key) = tryr!(reply, self.0.inode(ino.0));
        let raw = fd.as_raw_fd();
        let st = tryr!(reply, fstat(raw));
        let is_link = kind_of(st.st_mode) == FileType::Symlink;
        let p = proc_path(raw);
        if let Some(m) = mode {
            if !is_link {
                // SAFETY: NUL-terminated path.
                tryr!(reply, check(unsafe { libc::chmod(p.as_ptr(), m & 0o7777) }));
            }
        }
        if uid.is_some() || gid.is_some() {
            let u = uid.unwrap_or(u32::MAX);
            let g = gid.unwrap_or(u32::MAX);
            // SAFETY: valid fd, empty NUL-terminated path.
            tryr!(
                reply,
                check(unsafe {
                    libc::fchownat(
                        raw,
                        c"".as_ptr(),
                        u,
                        g,
                        libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW,
                    )
                })
            );
        }
        if let Some(s) = size {
            tryr!(reply, self.0.truncate(&fd, key, s));
        }
        if (atime.is_some() || mtime.is_some()) && !is_link {
            let ts = |t: Option<TimeOrNow>| match t {
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
            };
            let times = [ts(atime), ts(mtime)];
            // SAFETY: NUL-terminated path, two timespecs.
            tryr!(
                reply,
                check(unsafe { libc::utimensat(libc::AT_FDCWD, p.as_ptr(), times.as_ptr(), 0) })
            );
        }
        let st = tryr!(reply, fstat(raw));
        reply.attr(&TTL, &self.0.attr_of(ino.0, &st));
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        frozen_check!(self, reply);
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let mut buf = vec![0u8; libc::PATH_MAX as usize];
        // SAFETY: valid fd, empty path, buffer of the given length.
        let n = unsafe {
            libc::readlinkat(
                fd.as_raw_fd(),
                c"".as_ptr(),
                buf.as_mut_ptr() as *mut libc::c_char,
                buf.len(),
            )
        };
        if n < 0 {
            reply.error(last_errno());
        } else {
            reply.data(&buf[..n as usize]);
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let c = tryr!(reply, cname(name));
        let pr = pfd.as_raw_fd();
        // SAFETY: valid fd and NUL-terminated name.
        tryr!(
            reply,
            check(unsafe { libc::mknodat(pr, c.as_ptr(), mode, rdev as libc::dev_t) })
        );
        chown_new(pr, &c, req);
        if let Ok(st) = fstatat(pr, &c) {
            lock(&self.0.ctl.overlays).remove(&key_of(&st));
        }
        let attr = tryr!(reply, self.0.entry(pr, &c));
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let c = tryr!(reply, cname(name));
        let pr = pfd.as_raw_fd();
        // SAFETY: valid fd and NUL-terminated name.
        tryr!(reply, check(unsafe { libc::mkdirat(pr, c.as_ptr(), mode) }));
        chown_new(pr, &c, req);
        let attr = tryr!(reply, self.0.entry(pr, &c));
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let c = tryr!(reply, cname(name));
        let pr = pfd.as_raw_fd();
        let before = fstatat(pr, &c).ok();
        // SAFETY: valid fd and NUL-terminated name.
        tryr!(reply, check(unsafe { libc::unlinkat(pr, c.as_ptr(), 0) }));
        if let Some(st) = before {
            if kind_of(st.st_mode) == FileType::RegularFile {
                self.0
                    .drop_overlay_if_gone(&key_of(&st), st.st_nlink.saturating_sub(1));
            }
        }
        reply.ok();
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let c = tryr!(reply, cname(name));
        // SAFETY: valid fd and NUL-terminated name.
        tryr!(
            reply,
            check(unsafe { libc::unlinkat(pfd.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
        );
        reply.ok();
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let c = tryr!(reply, cname(link_name));
        let t = tryr!(reply, cname(target.as_os_str()));
        let pr = pfd.as_raw_fd();
        // SAFETY: NUL-terminated strings, valid fd.
        tryr!(
            reply,
            check(unsafe { libc::symlinkat(t.as_ptr(), pr, c.as_ptr()) })
        );
        chown_new(pr, &c, req);
        let attr = tryr!(reply, self.0.entry(pr, &c));
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let (npfd, _) = tryr!(reply, self.0.inode(newparent.0));
        let c = tryr!(reply, cname(name));
        let nc = tryr!(reply, cname(newname));
        let replaced = fstatat(npfd.as_raw_fd(), &nc).ok();
        // SAFETY: valid fds and NUL-terminated names.
        tryr!(
            reply,
            check(unsafe {
                libc::renameat2(
                    pfd.as_raw_fd(),
                    c.as_ptr(),
                    npfd.as_raw_fd(),
                    nc.as_ptr(),
                    flags.bits(),
                )
            })
        );
        if let Some(st) = replaced {
            if kind_of(st.st_mode) == FileType::RegularFile
                && flags.bits() & libc::RENAME_EXCHANGE == 0
            {
                self.0
                    .drop_overlay_if_gone(&key_of(&st), st.st_nlink.saturating_sub(1));
            }
        }
        reply.ok();
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        frozen_check!(self, reply);
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let (npfd, _) = tryr!(reply, self.0.inode(newparent.0));
        let nc = tryr!(reply, cname(newname));
        let p = proc_path(fd.as_raw_fd());
        // SAFETY: NUL-terminated strings, valid fds.
        tryr!(
            reply,
            check(unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    p.as_ptr(),
                    npfd.as_raw_fd(),
                    nc.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            })
        );
        let attr = tryr!(reply, self.0.entry(npfd.as_raw_fd(), &nc));
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        frozen_check!(self, reply);
        let (fd, key) = tryr!(reply, self.0.inode(ino.0));
        let file = tryr!(
            reply,
            open_backing(&fd, backing_flags(flags.0)).map_err(|e| io_errno(&e))
        );
        if flags.0 & libc::O_TRUNC != 0 && flags.0 & libc::O_ACCMODE != libc::O_RDONLY {
            tryr!(reply, self.0.truncate(&fd, key, 0));
        }
        let fh = {
            let mut t = lock(&self.0.t);
            let fh = t.next_fh;
            t.next_fh += 1;
            t.files.insert(
                fh,
                OpenFile {
                    file: Arc::new(file),
                    ino: ino.0,
                    key,
                },
            );
            fh
        };
        reply.opened(FileHandle(fh), FopenFlags::empty());
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        frozen_check!(self, reply);
        let (file, _, key) = tryr!(reply, self.0.file(fh.0));
        {
            let ovs = lock(&self.0.ctl.overlays);
            if let Some(d) = ovs.get(&key) {
                let data = tryr!(
                    reply,
                    d.overlay
                        .read(offset, size as u64, |off, buf| pread_full(&file, off, buf))
                        .map_err(|e| io_errno(&e))
                );
                drop(ovs);
                reply.data(&data);
                return;
            }
        }
        let mut buf = vec![0u8; size as usize];
        let mut n = 0;
        while n < buf.len() {
            match file.read_at(&mut buf[n..], offset + n as u64) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    reply.error(io_errno(&e));
                    return;
                }
            }
        }
        reply.data(&buf[..n]);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        frozen_check!(self, reply);
        let (file, _, key) = tryr!(reply, self.0.file(fh.0));
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let delay = self.0.ctl.plan_write(data.len(), || self.0.app_path(&fd));
        match delay {
            None => {
                let n = tryr!(reply, self.0.do_write(&file, &fd, key, offset, data));
                reply.written(n);
            }
            Some(_) => {
                let inner = self.0.clone();
                let data = data.to_vec();
                after(delay, move || {
                    if inner.ctl.frozen() {
                        inner.ctl.park(reply);
                        return;
                    }
                    match inner.do_write(&file, &fd, key, offset, &data) {
                        Ok(n) => reply.written(n),
                        Err(e) => reply.error(e),
                    }
                });
            }
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        frozen_check!(self, reply);
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let f = lock(&self.0.t).files.remove(&fh.0);
        if let Some(f) = f {
            if let Ok(m) = f.file.metadata() {
                use std::os::unix::fs::MetadataExt;
                self.0.drop_overlay_if_gone(&f.key, m.nlink());
            }
        }
        frozen_check!(self, reply);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        frozen_check!(self, reply);
        let (file, _, key) = tryr!(reply, self.0.file(fh.0));
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let op = if datasync { "fdatasync" } else { "fsync" };
        let plan = self.0.ctl.plan_fsync(op, || self.0.app_path(&fd));
        let inner = self.0.clone();
        after(plan.delay, move || {
            if inner.ctl.frozen() {
                inner.ctl.park(reply);
                return;
            }
            if let Some(e) = plan.error {
                reply.error(Errno::from_i32(e));
                return;
            }
            match inner.do_fsync(&file, key, datasync) {
                Err(_) if inner.ctl.frozen() => inner.ctl.park(reply),
                Err(e) => reply.error(e),
                Ok(()) => reply.ok(),
            }
        });
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        frozen_check!(self, reply);
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let file = tryr!(
            reply,
            open_backing(&fd, libc::O_RDONLY | libc::O_DIRECTORY).map_err(|e| io_errno(&e))
        );
        let mut entries = vec![
            (ino.0, FileType::Directory, OsString::from(".")),
            (ino.0, FileType::Directory, OsString::from("..")),
        ];
        let rd = tryr!(
            reply,
            std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                .map_err(|e| io_errno(&e))
        );
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
        let fh = {
            let mut t = lock(&self.0.t);
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
        };
        reply.opened(FileHandle(fh), FopenFlags::empty());
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        frozen_check!(self, reply);
        let entries = {
            let t = lock(&self.0.t);
            match t.dirs.get(&fh.0) {
                Some(d) => d.entries.clone(),
                None => {
                    drop(t);
                    reply.error(Errno::EBADF);
                    return;
                }
            }
        };
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), i as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        lock(&self.0.t).dirs.remove(&fh.0);
        frozen_check!(self, reply);
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        frozen_check!(self, reply);
        let file = {
            let t = lock(&self.0.t);
            t.dirs.get(&fh.0).map(|d| d.file.clone())
        };
        let Some(file) = file else {
            reply.error(Errno::EBADF);
            return;
        };
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let plan = self.0.ctl.plan_fsync("fsyncdir", || self.0.app_path(&fd));
        let inner = self.0.clone();
        after(plan.delay, move || {
            if inner.ctl.frozen() {
                inner.ctl.park(reply);
                return;
            }
            if let Some(e) = plan.error {
                reply.error(Errno::from_i32(e));
                return;
            }
            let r = if datasync {
                file.sync_data()
            } else {
                file.sync_all()
            };
            match r {
                Ok(()) => reply.ok(),
                Err(e) => reply.error(io_errno(&e)),
            }
        });
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        frozen_check!(self, reply);
        let (fd, _) = tryr!(reply, self.0.inode(ROOT));
        // SAFETY: zeroed statvfs is valid; fstatvfs fills it.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: valid fd and out pointer.
        tryr!(
            reply,
            check(unsafe { libc::fstatvfs(fd.as_raw_fd(), &mut s) })
        );
        reply.statfs(
            s.f_blocks,
            s.f_bfree,
            s.f_bavail,
            s.f_files,
            s.f_ffree,
            s.f_bsize as u32,
            s.f_namemax as u32,
            s.f_frsize as u32,
        );
    }

    fn getxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _size: u32,
        reply: ReplyXattr,
    ) {
        reply.error(Errno::ENOSYS);
    }

    fn listxattr(&self, _req: &Request, _ino: INodeNo, _size: u32, reply: ReplyXattr) {
        reply.error(Errno::ENOSYS);
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        // default_permissions: the kernel checks permissions itself.
        reply.ok();
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        frozen_check!(self, reply);
        let (pfd, _) = tryr!(reply, self.0.inode(parent.0));
        let c = tryr!(reply, cname(name));
        let pr = pfd.as_raw_fd();
        let bflags = backing_flags(flags);
        // Create exclusively so we know whether the file is new (and has no stale held data).
        let (fd, created) = match openat(pr, &c, bflags | libc::O_CREAT | libc::O_EXCL, mode) {
            Ok(fd) => (fd, true),
            Err(e) if e.code() == libc::EEXIST && flags & libc::O_EXCL == 0 => {
                (tryr!(reply, openat(pr, &c, bflags, 0)), false)
            }
            Err(e) => {
                reply.error(e);
                return;
            }
        };
        if created {
            chown_new(pr, &c, req);
        }
        let file = File::from(fd);
        let attr = tryr!(reply, self.0.entry(pr, &c));
        let (ifd, key) = tryr!(reply, self.0.inode(attr.ino.0));
        if created {
            lock(&self.0.ctl.overlays).remove(&key);
        } else if flags & libc::O_TRUNC != 0 {
            tryr!(reply, self.0.truncate(&ifd, key, 0));
        }
        let fh = {
            let mut t = lock(&self.0.t);
            let fh = t.next_fh;
            t.next_fh += 1;
            t.files.insert(
                fh,
                OpenFile {
                    file: Arc::new(file),
                    ino: attr.ino.0,
                    key,
                },
            );
            fh
        };
        let st = tryr!(reply, fstat(ifd.as_raw_fd()));
        let attr = self.0.attr_of(attr.ino.0, &st);
        reply.created(
            &TTL,
            &attr,
            Generation(0),
            FileHandle(fh),
            FopenFlags::empty(),
        );
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        frozen_check!(self, reply);
        let (file, _, key) = tryr!(reply, self.0.file(fh.0));
        let (fd, _) = tryr!(reply, self.0.inode(ino.0));
        let end = offset.saturating_add(length);
        if self.0.ctl.lose_unsynced.load(Ordering::SeqCst) {
            // Held-back model: plain preallocation changes only the size (held until fsync);
            // KEEP_SIZE changes nothing visible; punching holes is not modelled.
            if mode & !libc::FALLOC_FL_KEEP_SIZE != 0 {
                reply.error(Errno::EOPNOTSUPP);
                return;
            }
            if mode & libc::FALLOC_FL_KEEP_SIZE == 0 {
                let cur = self
                    .0
                    .overlay_size(&key)
                    .or_else(|| file.metadata().ok().map(|m| m.len()))
                    .unwrap_or(0);
                if end > cur {
                    let mut ovs = lock(&self.0.ctl.overlays);
                    let path = if ovs.contains_key(&key) {
                        String::new()
                    } else {
                        self.0.app_path(&fd)
                    };
                    let backing = file.metadata().map(|m| m.len()).unwrap_or(0);
                    ovs.entry(key)
                        .or_insert_with(|| Dirty {
                            overlay: Overlay::new(backing),
                            fd: fd.clone(),
                            path,
                        })
                        .overlay
                        .extend(end);
                }
            }
            reply.ok();
            return;
        }
        // SAFETY: valid fd.
        tryr!(
            reply,
            check(unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    mode,
                    offset as libc::off_t,
                    length as libc::off_t,
                )
            })
        );
        reply.ok();
    }
}

/// Give a new file to the caller's uid/gid (chaosfs runs as root).
fn chown_new(dir: RawFd, name: &CStr, req: &Request) {
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
