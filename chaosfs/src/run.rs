//! `chaosfs run`: bind each data directory to a hidden backing path, mount the FUSE passthrough
//! over it, serve the control socket, run the command as a child, forward signals, reap zombies
//! (we are PID 1 in the container) and exit with the command's status.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command as Proc;
use std::sync::Arc;

use serde_json::json;

use crate::control::{self, lock, Control, Mounted};
use crate::fs::ChaosFs;

pub const RUN_USAGE: &str = "\
chaosfs run --dir DIR [--dir DIR ...] [--state-dir PATH] [--socket PATH] [--threads N]
            [--init 'CTL WORDS' ...] -- CMD [ARGS...]
  Mounts the fault-injecting passthrough over each DIR (its content is kept: the original
  directory is bind-mounted to STATE/backing/<n> and serves as the backing store), serves the
  control socket (default STATE/ctl.sock), runs CMD as a child with every signal forwarded, and
  exits with CMD's exit code (128+N if CMD was killed by signal N).
  --state-dir  default /.chaosfs (the fault log is STATE/faults.jsonl)
  --init       a ctl command applied before CMD starts, e.g. --init 'lose-unsynced on'
Exit codes: CMD's code; 125 chaosfs failed (mount, socket); 126 CMD not executable;
127 CMD not found; 2 bad arguments.";

pub struct RunArgs {
    pub dirs: Vec<PathBuf>,
    pub state_dir: PathBuf,
    pub socket: Option<PathBuf>,
    pub threads: usize,
    pub init: Vec<Vec<String>>,
    pub cmd: Vec<OsString>,
}

pub fn parse_run(args: &[OsString]) -> Result<RunArgs, String> {
    let mut r = RunArgs {
        dirs: Vec::new(),
        state_dir: PathBuf::from(control::DEFAULT_STATE_DIR),
        socket: None,
        threads: 4,
        init: Vec::new(),
        cmd: Vec::new(),
    };
    let mut i = 0;
    let value = |i: &mut usize, flag: &str| -> Result<OsString, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))
    };
    while i < args.len() {
        let a = args[i].to_string_lossy().to_string();
        match a.as_str() {
            "--" => {
                r.cmd = args[i + 1..].to_vec();
                break;
            }
            "--dir" => r.dirs.push(PathBuf::from(value(&mut i, "--dir")?)),
            "--state-dir" => r.state_dir = PathBuf::from(value(&mut i, "--state-dir")?),
            "--socket" => r.socket = Some(PathBuf::from(value(&mut i, "--socket")?)),
            "--threads" => {
                let v = value(&mut i, "--threads")?;
                r.threads = v
                    .to_string_lossy()
                    .parse()
                    .ok()
                    .filter(|n| (1..=64).contains(n))
                    .ok_or_else(|| format!("bad --threads {v:?} (1 to 64)"))?;
            }
            "--init" => {
                let v = value(&mut i, "--init")?.to_string_lossy().to_string();
                let words: Vec<String> = v.split_whitespace().map(String::from).collect();
                control::parse_command(&words).map_err(|e| format!("--init {v:?}: {e}"))?;
                r.init.push(words);
            }
            other => {
                return Err(format!(
                    "unknown option {other:?} (the command goes after --)"
                ))
            }
        }
        i += 1;
    }
    if r.dirs.is_empty() {
        return Err("at least one --dir is needed".into());
    }
    if r.cmd.is_empty() {
        return Err("no command given after --".into());
    }
    for d in &r.dirs {
        if !d.is_absolute() {
            return Err(format!("--dir {} must be an absolute path", d.display()));
        }
    }
    Ok(r)
}

/// mkdir -p with mode 0755 (chaosfs runs with umask 0 so that files keep the modes asked for).
fn mkdirs(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(p)
}

fn block_all_signals() {
    // SAFETY: plain libc calls on a local sigset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

fn raise_nofile_limit() {
    // SAFETY: plain libc calls with valid pointers.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max.min(1 << 20),
                rlim_max: r.rlim_max,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &want);
        }
    }
}

fn setup_mount(
    ctl: &Arc<Control>,
    n: usize,
    dir: &Path,
    state: &Path,
    threads: usize,
) -> Result<(), String> {
    mkdirs(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("resolving {}: {e}", dir.display()))?;
    let backing = state.join("backing").join(n.to_string());
    mkdirs(&backing).map_err(|e| format!("creating {}: {e}", backing.display()))?;
    nix::mount::mount(
        Some(&dir),
        &backing,
        None::<&str>,
        nix::mount::MsFlags::MS_BIND,
        None::<&str>,
    )
    .map_err(|e| {
        format!(
            "bind-mounting {} on {}: {e} (the container needs --cap-add SYS_ADMIN)",
            dir.display(),
            backing.display()
        )
    })?;
    let fs = ChaosFs::new(ctl.clone(), &dir, &backing)
        .map_err(|e| format!("opening {}: {e}", backing.display()))?;
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        fuser::MountOption::FSName("chaosfs".into()),
        fuser::MountOption::Subtype("chaosfs".into()),
        fuser::MountOption::DefaultPermissions,
        fuser::MountOption::Dev,
        fuser::MountOption::Suid,
    ];
    config.acl = fuser::SessionACL::All;
    config.n_threads = Some(threads);
    let session = fuser::Session::new(fs, &dir, &config).map_err(|e| {
        format!(
            "mounting FUSE on {}: {e} (the container needs --device /dev/fuse --cap-add SYS_ADMIN)",
            dir.display()
        )
    })?;
    let bg = session
        .spawn()
        .map_err(|e| format!("starting the FUSE session: {e}"))?;
    // The session lives until the process exits; unmounting is done by path at exit.
    std::mem::forget(bg);
    ctl.log_event(
        "mount",
        None,
        Some(&dir.display().to_string()),
        json!({"backing": backing}),
    );
    lock(&ctl.mounts).push(Mounted { dir, backing });
    Ok(())
}

fn unmount_all(ctl: &Control) {
    for m in lock(&ctl.mounts).iter().rev() {
        if nix::mount::umount(&m.dir).is_err() {
            let _ = nix::mount::umount2(&m.dir, nix::mount::MntFlags::MNT_DETACH);
        }
        let _ = nix::mount::umount2(&m.backing, nix::mount::MntFlags::MNT_DETACH);
    }
}

pub fn run(a: RunArgs) -> i32 {
    // Before any thread exists: every thread inherits the blocked mask, and the main thread
    // takes signals with sigwait (PID 1 gets no default actions anyway).
    block_all_signals();
    raise_nofile_limit();
    // SAFETY: umask is always safe.
    let old_umask = unsafe { libc::umask(0) };

    if let Err(e) = mkdirs(&a.state_dir) {
        eprintln!("chaosfs: creating {}: {e}", a.state_dir.display());
        return 125;
    }
    let ctl = match Control::new(Some(a.state_dir.join(control::LOG_NAME))) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("chaosfs: opening the fault log: {e}");
            return 125;
        }
    };
    for words in &a.init {
        if let Ok(cmd) = control::parse_command(words) {
            ctl.apply(cmd, words);
        }
    }
    for (n, dir) in a.dirs.iter().enumerate() {
        if let Err(e) = setup_mount(&ctl, n, dir, &a.state_dir, a.threads) {
            eprintln!("chaosfs: {e}");
            unmount_all(&ctl);
            return 125;
        }
    }
    let socket = a
        .socket
        .clone()
        .unwrap_or_else(|| a.state_dir.join(control::SOCKET_NAME));
    if let Err(e) = control::serve(ctl.clone(), &socket) {
        eprintln!("chaosfs: control socket {}: {e}", socket.display());
        unmount_all(&ctl);
        return 125;
    }

    let mut cmd = Proc::new(&a.cmd[0]);
    cmd.args(&a.cmd[1..]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(old_umask);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("chaosfs: cannot run {:?}: {e}", a.cmd[0]);
            unmount_all(&ctl);
            return match e.kind() {
                std::io::ErrorKind::NotFound => 127,
                _ => 126,
            };
        }
    };
    let pid = child.id() as libc::pid_t;
    ctl.log_event(
        "start",
        None,
        None,
        json!({"pid": pid, "command": a.cmd.iter().map(|s| s.to_string_lossy()).collect::<Vec<_>>(),
               "socket": socket}),
    );
    let code = supervise(pid);
    ctl.log_event("exit", None, None, json!({"pid": pid, "code": code}));
    unmount_all(&ctl);
    code
}

/// Forward signals to `pid` and reap every child until `pid` exits; returns its exit code.
fn supervise(pid: libc::pid_t) -> i32 {
    // SAFETY: plain libc calls on local values.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        loop {
            // Reap first: the child may have exited before we started waiting.
            loop {
                let mut status = 0;
                let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if r <= 0 {
                    break;
                }
                if r == pid {
                    if libc::WIFEXITED(status) {
                        return libc::WEXITSTATUS(status);
                    }
                    if libc::WIFSIGNALED(status) {
                        return 128 + libc::WTERMSIG(status);
                    }
                }
            }
            let mut sig = 0;
            if libc::sigwait(&set, &mut sig) != 0 {
                continue;
            }
            if sig != libc::SIGCHLD {
                libc::kill(pid, sig);
            }
        }
    }
}
