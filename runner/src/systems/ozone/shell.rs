//! The stream workload's client: Ozone's own shell run in a node's container, its scripts, and
//! how a final read's output becomes a value.

use async_trait::async_trait;
use bollard::Docker;
use serde_json::{json, Value};

use crate::cluster::docker::{exec, ExecError, ExecOutput};
use crate::systems::{Operation, Outcome, SystemClient};

/// The stream workload's client: Ozone's own shell (`ozone sh`) run in a node's container, so
/// the data goes through Ozone's streaming client to the datanodes. Each key's bytes are its
/// name repeated (`yes KEY | head -c LENGTH`), so a read can tell whole from short or corrupt.
pub(super) struct ShellClient {
    pub(super) docker: Docker,
    pub(super) container: String,
}

/// `ozone sh key put --stream` of LENGTH pattern bytes at KEY ($1 = key, $2 = length).
const STREAM_PUT: &str = r#"set -e
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
head -c "$2" < <(yes "$1") > "$d/data"  # not a pipeline: yes ends on SIGPIPE
ozone sh key put --stream "o3://omservice/chaos/stream/$1" "$d/data""#;

/// Reads KEY back whole ($1 = key) and prints `absent`, its length when the bytes are the
/// pattern, or `LENGTH corrupt`.
const STREAM_READ: &str = r#"d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
if ! ozone sh key get "o3://omservice/chaos/stream/$1" "$d/data" > "$d/err" 2>&1; then
  if grep -q KEY_NOT_FOUND "$d/err"; then echo absent; exit 0; fi
  tail -n 3 "$d/err" >&2; exit 1
fi
n=$(stat -c %s "$d/data")
# coreutils only (the image may lack cmp): compare digests.
want=$(head -c "$n" < <(yes "$1") | sha256sum)
if [ "$(sha256sum < "$d/data")" = "$want" ]; then echo "$n"; else echo "$n corrupt"; fi"#;

/// A final read's answer from STREAM_READ's output: `[]` (absent), `[length]` (the pattern),
/// `["N bytes, not the pattern"]` (corrupt: a value no put wrote).
pub fn stream_read_value(stdout: &str) -> Option<Value> {
    let line = stdout.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    if line == "absent" {
        return Some(json!([]));
    }
    match line.split_once(' ') {
        None => line.parse::<u64>().ok().map(|n| json!([n])),
        Some((n, "corrupt")) => n
            .parse::<u64>()
            .ok()
            .map(|n| json!([format!("{n} bytes, not the pattern")])),
        Some(_) => None,
    }
}

impl ShellClient {
    async fn script(&self, script: &str, args: &[&str]) -> Result<ExecOutput, ExecError> {
        let mut cmd = vec![
            "bash".to_string(),
            "-c".into(),
            script.into(),
            "chaos".into(),
        ];
        cmd.extend(args.iter().map(|a| a.to_string()));
        exec(&self.docker, &self.container, &cmd, None).await
    }
}

/// The last lines of what a command printed, for an outcome's reason.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(2)..].join(" | ")
}

#[async_trait]
impl SystemClient for ShellClient {
    async fn invoke(&mut self, op: &Operation) -> Outcome {
        match op.f {
            "put" => {
                let Some(length) = op.value.as_u64() else {
                    return Outcome::Fail("ozone stream put needs a length".into());
                };
                match self
                    .script(STREAM_PUT, &[&op.key, &length.to_string()])
                    .await
                {
                    Ok(_) => Outcome::Ok(Value::from(length)),
                    // The shell failed somewhere between the OM and the close: the key may
                    // still have been committed.
                    Err(ExecError::Exit(out)) => {
                        Outcome::Info(format!("exit {}: {}", out.code, tail(&out.all)))
                    }
                    Err(e) => Outcome::Fail(format!("exec: {e}")),
                }
            }
            "final-read" => match self.script(STREAM_READ, &[&op.key]).await {
                Ok(out) => match stream_read_value(&out.stdout) {
                    Some(v) => Outcome::Ok(v),
                    None => Outcome::Fail(format!("unreadable answer: {}", tail(&out.stdout))),
                },
                Err(ExecError::Exit(out)) => {
                    Outcome::Fail(format!("exit {}: {}", out.code, tail(&out.all)))
                }
                Err(e) => Outcome::Fail(format!("exec: {e}")),
            },
            other => Outcome::Fail(format!("the ozone shell has no operation {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_reads_become_durable_values() {
        assert_eq!(stream_read_value("absent\n"), Some(json!([])));
        assert_eq!(
            stream_read_value("log line\n8388608\n"),
            Some(json!([8388608]))
        );
        assert_eq!(
            stream_read_value("4096 corrupt\n"),
            Some(json!(["4096 bytes, not the pattern"]))
        );
        assert_eq!(stream_read_value(""), None);
        assert_eq!(stream_read_value("Exception in thread main"), None);
    }

    /// The stream workload's shell scripts, run by bash with a stand-in `ozone` on PATH that
    /// keeps keys as files (this tests the scripts' pattern, comparison and answers, not Ozone).
    #[test]
    fn the_stream_scripts_tell_whole_short_corrupt_and_absent() {
        let dir = std::env::temp_dir().join(format!("chaos-stream-{}", std::process::id()));
        let (bin, store) = (dir.join("bin"), dir.join("store"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&store).unwrap();
        let fake = bin.join("ozone");
        std::fs::write(
            &fake,
            "#!/bin/bash\n\
             # ozone sh key put --stream URI FILE | ozone sh key get URI FILE\n\
             case \"$3\" in\n\
               put) cp \"$6\" \"$FAKE_STORE/${5##*/}\" ;;\n\
               get) [ -f \"$FAKE_STORE/${4##*/}\" ] || { echo 'KEY_NOT_FOUND Key not found' >&2; exit 1; }\n\
                    cp \"$FAKE_STORE/${4##*/}\" \"$5\" ;;\n\
             esac\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = |script: &str, args: &[&str]| {
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(script)
                .arg("chaos")
                .args(args)
                .env(
                    "PATH",
                    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
                )
                .env("FAKE_STORE", &store)
                .output()
                .unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).to_string(),
            )
        };
        assert_eq!(run(STREAM_PUT, &["s1", "1000"]).0, Some(0));
        let written = std::fs::read(store.join("s1")).unwrap();
        assert_eq!(written.len(), 1000);
        assert!(written.starts_with(b"s1\ns1\n"));
        let read = |key: &str| stream_read_value(&run(STREAM_READ, &[key]).1);
        assert_eq!(read("s1"), Some(json!([1000])));
        assert_eq!(read("s2"), Some(json!([])));
        // A key that reads back short shows its length; one with other bytes is corrupt.
        std::fs::write(store.join("s1"), &written[..600]).unwrap();
        assert_eq!(read("s1"), Some(json!([600])));
        std::fs::write(store.join("s1"), vec![0u8; 1000]).unwrap();
        assert_eq!(read("s1"), Some(json!(["1000 bytes, not the pattern"])));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
