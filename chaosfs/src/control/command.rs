//! The `ctl` command grammar: the words after `chaosfs ctl` (also `chaosfs run --init` and the
//! control socket's requests) parsed into a `Command`, with its durations and errno names.

use std::time::Duration;

use regex::Regex;

#[derive(Debug, Clone)]
pub struct Delay {
    pub delay: Duration,
    pub jitter: Duration,
    pub paths: Option<Regex>,
}

#[derive(Debug, Clone)]
pub struct FsyncError {
    /// Fail the next `count` matching fsyncs (None: use `fraction`).
    pub count: Option<u64>,
    pub fraction: Option<f64>,
    pub errno: i32,
    pub paths: Option<Regex>,
}

/// One parsed `ctl` command.
#[derive(Debug, Clone)]
pub enum Command {
    FsyncDelay(Option<Delay>),
    FsyncError(Option<FsyncError>),
    WriteDelay(Option<Delay>),
    LoseUnsynced(bool),
    Crash,
    Clear,
    Status,
}

pub const CTL_USAGE: &str = "\
chaosfs ctl [--socket PATH] COMMAND
  fsync-delay DURATION [--jitter DURATION] [--paths REGEX]   every fsync/fdatasync/fsyncdir waits
  fsync-delay off
  fsync-error (--count N | --fraction F) [--errno NAME|NUMBER] [--paths REGEX]
  fsync-error off
  write-delay DURATION [--jitter DURATION] [--paths REGEX]
  write-delay off
  lose-unsynced on|off      hold written data in memory until the file is fsynced
  crash                     drop all un-fsynced data and freeze the filesystem
  clear                     remove every fault (lose-unsynced off writes held data back)
  status                    print the state as JSON
DURATION: 200ms, 1.5s, 500us, 0 (a number alone means milliseconds)";

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = s.strip_suffix("ns") {
        (n, 1e-9)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1e-3)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("bad duration {s:?} (expected e.g. 200ms, 1.5s, 500us)"))?;
    let secs = v * mult;
    if !secs.is_finite() || !(0.0..=86400.0).contains(&secs) {
        return Err(format!("duration {s:?} out of range (0 to 24h)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

pub fn parse_errno(s: &str) -> Result<i32, String> {
    if let Ok(n) = s.parse::<i32>() {
        if (1..4096).contains(&n) {
            return Ok(n);
        }
        return Err(format!("errno {n} out of range"));
    }
    let n = match s.to_ascii_uppercase().as_str() {
        "EIO" => libc::EIO,
        "ENOSPC" => libc::ENOSPC,
        "EDQUOT" => libc::EDQUOT,
        "EROFS" => libc::EROFS,
        "EBADF" => libc::EBADF,
        "EINVAL" => libc::EINVAL,
        "EPERM" => libc::EPERM,
        "EACCES" => libc::EACCES,
        "EINTR" => libc::EINTR,
        "EAGAIN" => libc::EAGAIN,
        "ENOMEM" => libc::ENOMEM,
        "EFBIG" => libc::EFBIG,
        "ETIMEDOUT" => libc::ETIMEDOUT,
        _ => {
            return Err(format!(
                "unknown errno {s:?} (use a name like EIO or a number)"
            ))
        }
    };
    Ok(n)
}

pub fn errno_name(n: i32) -> String {
    let names = [
        (libc::EIO, "EIO"),
        (libc::ENOSPC, "ENOSPC"),
        (libc::EDQUOT, "EDQUOT"),
        (libc::EROFS, "EROFS"),
        (libc::EBADF, "EBADF"),
        (libc::EINVAL, "EINVAL"),
        (libc::EPERM, "EPERM"),
        (libc::EACCES, "EACCES"),
        (libc::EINTR, "EINTR"),
        (libc::EAGAIN, "EAGAIN"),
        (libc::ENOMEM, "ENOMEM"),
        (libc::EFBIG, "EFBIG"),
        (libc::ETIMEDOUT, "ETIMEDOUT"),
    ];
    names
        .iter()
        .find(|(v, _)| *v == n)
        .map(|(_, s)| s.to_string())
        .unwrap_or_else(|| n.to_string())
}

fn take_value<'a>(args: &'a [String], i: &mut usize, flag: &str) -> Result<&'a str, String> {
    *i += 1;
    args.get(*i)
        .map(|s| s.as_str())
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| format!("bad --paths regex {s:?}: {e}"))
}

fn parse_delay(what: &str, args: &[String]) -> Result<Option<Delay>, String> {
    let first = args
        .first()
        .ok_or_else(|| format!("{what} needs a DURATION or off"))?;
    if first == "off" {
        if args.len() > 1 {
            return Err(format!("{what} off takes no options"));
        }
        return Ok(None);
    }
    let mut d = Delay {
        delay: parse_duration(first)?,
        jitter: Duration::ZERO,
        paths: None,
    };
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--jitter" => d.jitter = parse_duration(take_value(args, &mut i, "--jitter")?)?,
            "--paths" => d.paths = Some(parse_regex(take_value(args, &mut i, "--paths")?)?),
            other => return Err(format!("{what}: unknown option {other:?}")),
        }
        i += 1;
    }
    Ok(Some(d))
}

/// Parse the words after `chaosfs ctl` (without `--socket`).
pub fn parse_command(args: &[String]) -> Result<Command, String> {
    let Some(cmd) = args.first() else {
        return Err("no command given".into());
    };
    let rest = &args[1..];
    let no_args = |c: Command| {
        if rest.is_empty() {
            Ok(c)
        } else {
            Err(format!("{cmd} takes no arguments"))
        }
    };
    match cmd.as_str() {
        "fsync-delay" => Ok(Command::FsyncDelay(parse_delay(cmd, rest)?)),
        "write-delay" => Ok(Command::WriteDelay(parse_delay(cmd, rest)?)),
        "fsync-error" | "fail-fsync" => {
            if rest.len() == 1 && rest[0] == "off" {
                return Ok(Command::FsyncError(None));
            }
            let mut e = FsyncError {
                count: None,
                fraction: None,
                errno: libc::EIO,
                paths: None,
            };
            let mut i = 0;
            while i < rest.len() {
                match rest[i].as_str() {
                    "--count" => {
                        let v = take_value(rest, &mut i, "--count")?;
                        e.count = Some(v.parse().map_err(|_| format!("bad --count {v:?}"))?);
                    }
                    "--fraction" => {
                        let v = take_value(rest, &mut i, "--fraction")?;
                        let f: f64 = v.parse().map_err(|_| format!("bad --fraction {v:?}"))?;
                        if !(0.0..=1.0).contains(&f) {
                            return Err(format!("--fraction {v} is not between 0 and 1"));
                        }
                        e.fraction = Some(f);
                    }
                    "--errno" => e.errno = parse_errno(take_value(rest, &mut i, "--errno")?)?,
                    "--paths" => e.paths = Some(parse_regex(take_value(rest, &mut i, "--paths")?)?),
                    other => return Err(format!("fsync-error: unknown option {other:?}")),
                }
                i += 1;
            }
            match (e.count, e.fraction) {
                (None, None) => Err("fsync-error needs --count N or --fraction F".into()),
                (Some(_), Some(_)) => {
                    Err("fsync-error takes --count or --fraction, not both".into())
                }
                _ => Ok(Command::FsyncError(Some(e))),
            }
        }
        "lose-unsynced" => match rest {
            [v] if v == "on" => Ok(Command::LoseUnsynced(true)),
            [v] if v == "off" => Ok(Command::LoseUnsynced(false)),
            _ => Err("lose-unsynced needs on or off".into()),
        },
        "crash" => no_args(Command::Crash),
        "clear" => no_args(Command::Clear),
        "status" => no_args(Command::Status),
        other => Err(format!("unknown command {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("200ms").unwrap(), Duration::from_millis(200));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("50").unwrap(), Duration::from_millis(50));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("1e30s").is_err());
    }

    #[test]
    fn commands() {
        assert!(matches!(
            parse_command(&w("fsync-delay 200ms --jitter 50ms --paths wal")),
            Ok(Command::FsyncDelay(Some(_)))
        ));
        assert!(matches!(
            parse_command(&w("fsync-delay off")),
            Ok(Command::FsyncDelay(None))
        ));
        assert!(matches!(
            parse_command(&w("fsync-error --count 3 --errno ENOSPC")),
            Ok(Command::FsyncError(Some(FsyncError {
                count: Some(3),
                errno: 28,
                ..
            })))
        ));
        assert!(parse_command(&w("fsync-error")).is_err());
        assert!(parse_command(&w("fsync-error --fraction 2")).is_err());
        assert!(parse_command(&w("fsync-error --count 1 --fraction 0.5")).is_err());
        assert!(parse_command(&w("fsync-delay 1s --paths (")).is_err());
        assert!(parse_command(&w("lose-unsynced maybe")).is_err());
        assert!(parse_command(&w("crash now")).is_err());
        assert!(parse_command(&w("frobnicate")).is_err());
        assert!(parse_command(&[]).is_err());
        assert!(parse_command(&w("fsync-delay --jitter")).is_err());
    }
}
