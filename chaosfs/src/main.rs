//! chaosfs: a fault-injecting FUSE passthrough filesystem for the chaos testbed.
//! See chaosfs/README.md for the interface.

mod backing;
mod control;
mod fs;
mod overlay;
mod run;
mod selftest;

use std::ffi::OsString;
use std::path::PathBuf;

const USAGE: &str = "\
chaosfs: fault-injecting FUSE passthrough filesystem

usage:
  chaosfs run --dir DIR [--dir DIR ...] [options] -- CMD [ARGS...]
  chaosfs ctl [--socket PATH] COMMAND ...
  chaosfs help | version

`chaosfs run --help` and `chaosfs ctl --help` give details.";

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let sub = args.first().map(|s| s.to_string_lossy().to_string());
    let code = match sub.as_deref() {
        Some("run") => {
            let rest = &args[1..];
            if rest.first().is_some_and(|a| a == "--help" || a == "-h") {
                println!("{}", run::RUN_USAGE);
                0
            } else {
                match run::parse_run(rest) {
                    Ok(a) => run::run(a),
                    Err(e) => {
                        eprintln!("chaosfs run: {e}\n\n{}", run::RUN_USAGE);
                        2
                    }
                }
            }
        }
        Some("ctl") => ctl(&args[1..]),
        Some("selftest") => selftest::main(&args[1..]),
        Some("version") | Some("--version") | Some("-V") => {
            println!("chaosfs {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Some("help") | Some("--help") | Some("-h") => {
            println!("{USAGE}");
            0
        }
        _ => {
            eprintln!("{USAGE}");
            2
        }
    };
    std::process::exit(code);
}

fn ctl(args: &[OsString]) -> i32 {
    let mut words: Vec<String> = Vec::new();
    for a in args {
        match a.to_str() {
            Some(s) => words.push(s.to_string()),
            None => {
                eprintln!("chaosfs ctl: arguments must be UTF-8");
                return 2;
            }
        }
    }
    let mut socket = std::env::var_os("CHAOSFS_SOCKET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(control::DEFAULT_STATE_DIR).join(control::SOCKET_NAME));
    if words.first().map(|s| s.as_str()) == Some("--socket") {
        let Some(p) = words.get(1) else {
            eprintln!("chaosfs ctl: --socket needs a value");
            return 2;
        };
        socket = PathBuf::from(p);
        words.drain(..2);
    }
    if words.is_empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help" {
        println!("{}", control::CTL_USAGE);
        return if words.is_empty() { 2 } else { 0 };
    }
    control::client(&socket, &words)
}
