//! The control socket: `chaosfs run` serves it, `chaosfs ctl` is its client. One JSON array of
//! words per request line, one JSON answer per line.

use std::io::{BufRead, BufReader, Read as _, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::command::{parse_command, CTL_USAGE};
use super::Control;

/// Serve the control socket forever (one JSON array of words per line, one JSON answer per line).
pub fn serve(ctl: Arc<Control>, path: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    std::thread::Builder::new()
        .name("chaosfs-ctl".into())
        .spawn(move || {
            for conn in listener.incoming() {
                match conn {
                    Ok(s) => handle(&ctl, s),
                    Err(e) => eprintln!("chaosfs: control socket accept failed: {e}"),
                }
            }
        })?;
    Ok(())
}

fn handle(ctl: &Control, stream: UnixStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(&stream).take(1 << 16);
    let mut line = String::new();
    let answer = match reader.read_line(&mut line) {
        Err(e) => json!({"ok": false, "error": format!("bad request: {e}")}),
        Ok(_) => match serde_json::from_str::<Vec<String>>(&line) {
            Err(e) => {
                json!({"ok": false, "error": format!("bad request (expected a JSON array of words): {e}")})
            }
            Ok(words) => match parse_command(&words) {
                Err(e) => json!({"ok": false, "error": e}),
                Ok(cmd) => ctl.apply(cmd, &words),
            },
        },
    };
    let mut w = &stream;
    let _ = w.write_all(format!("{answer}\n").as_bytes());
}

/// `chaosfs ctl`: send the words, print the answer. Exit 0 ok, 1 refused, 2 usage, 3 unreachable.
pub fn client(socket: &Path, words: &[String]) -> i32 {
    if let Err(e) = parse_command(words) {
        eprintln!("chaosfs ctl: {e}\n\n{CTL_USAGE}");
        return 2;
    }
    let mut stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "chaosfs ctl: cannot connect to {}: {e} (is `chaosfs run` running in this container?)",
                socket.display()
            );
            return 3;
        }
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let req = match serde_json::to_string(words) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("chaosfs ctl: {e}");
            return 2;
        }
    };
    if let Err(e) = stream.write_all(format!("{req}\n").as_bytes()) {
        eprintln!("chaosfs ctl: sending to {}: {e}", socket.display());
        return 3;
    }
    let mut answer = String::new();
    if let Err(e) = stream.read_to_string(&mut answer) {
        eprintln!("chaosfs ctl: reading the answer: {e}");
        return 3;
    }
    let v: Value = serde_json::from_str(answer.trim()).unwrap_or(Value::Null);
    if v["ok"] == Value::Bool(true) {
        println!("{}", answer.trim());
        0
    } else {
        eprintln!(
            "chaosfs ctl: refused: {}",
            v["error"].as_str().unwrap_or(answer.trim())
        );
        1
    }
}
