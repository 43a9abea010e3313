//! The kernel's requests: each one parks its reply once the filesystem is frozen (a crashed
//! machine answers nothing), else does the work through `Inner` and replies. Delayed writes and
//! fsyncs reply from their own thread so that one slow request blocks nobody else.

use std::ffi::OsStr;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, SystemTime};

use fuser::{
    AccessFlags, Errno, FileHandle, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};

use super::namespace::AttrChanges;
use super::sys::{check, cname, fstat, io_errno, last_errno};
use super::{ChaosFs, ROOT};

const TTL: Duration = Duration::from_secs(1);

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
        self.0.forget(ino.0, nlookup);
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
        let changes = AttrChanges {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
        };
        let attr = tryr!(reply, self.0.set_attr(ino.0, changes));
        reply.attr(&TTL, &attr);
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
        let attr = tryr!(reply, self.0.mknod(req, parent.0, name, mode, rdev));
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
        let attr = tryr!(reply, self.0.mkdir(req, parent.0, name, mode));
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        frozen_check!(self, reply);
        tryr!(reply, self.0.unlink(parent.0, name));
        reply.ok();
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        frozen_check!(self, reply);
        tryr!(reply, self.0.rmdir(parent.0, name));
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
        let attr = tryr!(reply, self.0.symlink(req, parent.0, link_name, target));
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
        tryr!(
            reply,
            self.0.rename(parent.0, name, newparent.0, newname, flags)
        );
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
        let attr = tryr!(reply, self.0.link(ino.0, newparent.0, newname));
        reply.entry(&TTL, &attr, Generation(0));
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        frozen_check!(self, reply);
        let fh = tryr!(reply, self.0.open(ino.0, flags.0));
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
        let data = tryr!(reply, self.0.read(fh.0, offset, size));
        reply.data(&data);
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
        self.0.release(fh.0);
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
        let fh = tryr!(reply, self.0.open_dir(ino.0));
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
        let Some(entries) = self.0.dir_entries(fh.0) else {
            reply.error(Errno::EBADF);
            return;
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
        self.0.release_dir(fh.0);
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
        let Some(file) = self.0.dir_file(fh.0) else {
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
        let (attr, fh) = tryr!(reply, self.0.create(req, parent.0, name, mode, flags));
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
        tryr!(reply, self.0.fallocate(ino.0, fh.0, offset, length, mode));
        reply.ok();
    }
}
