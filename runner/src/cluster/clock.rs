//! Clock skew: libfaketime loaded into the nodes that can take it, and the offset file a fault
//! rewrites while they run.

use super::Cluster;
use crate::error::{HarnessError, Result};

/// Debian's libfaketime, as the images that can take clock skew install it.
pub const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
/// The file libfaketime reads its offset from (`+70.000`); rewritten while the node runs.
const FAKETIME_FILE: &str = "/.chaos-faketime";

impl Cluster {
    /// Moves the node's wall clock `offset_ms` from true time (0 restores it): rewrites the file
    /// libfaketime reads, which its processes pick up within a second, without a restart.
    /// Returns the node's processes that have libfaketime loaded; none is an error, since then
    /// the offset reaches nothing (an image without libfaketime, or a static program).
    pub async fn set_clock(&self, node: &str, offset_ms: i64) -> Result<Vec<String>> {
        let script = format!(
            "[ -r {LIBFAKETIME} ] || {{ echo 'this image has no {LIBFAKETIME} (Debian package libfaketime)'; exit 3; }}\n\
             printf '%s\\n' \"$1\" > {FAKETIME_FILE}.new && mv {FAKETIME_FILE}.new {FAKETIME_FILE}\n\
             for p in /proc/[0-9]*; do\n\
               [ \"${{p#/proc/}}\" = \"$$\" ] && continue\n\
               grep -q libfaketime \"$p/maps\" 2>/dev/null && echo \"${{p#/proc/}} $(cat \"$p/comm\" 2>/dev/null)\"\n\
             done\n\
             exit 0\n"
        );
        let value = format!("{:+.3}", offset_ms as f64 / 1000.0);
        let out = self
            .exec(
                node,
                vec![
                    "sh".into(),
                    "-c".into(),
                    script,
                    "chaos-clock".into(),
                    value,
                ],
            )
            .await?;
        self.skewed
            .lock()
            .expect("clock map")
            .insert(node.to_string(), offset_ms);
        let processes: Vec<String> = out
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        if processes.is_empty() {
            return Err(HarnessError::infra(format!(
                "no process of {node} has libfaketime loaded, so its clock cannot move (is the \
                 node's program static, or was the scenario's clock-skew not known at start?)"
            )));
        }
        Ok(processes)
    }
}

/// What loads libfaketime into every process of a node and points it at the offset file. With
/// no file yet the clock is true. The offset file is read again after a second (the default
/// cache is 10 s); monotonic clocks are left alone, so timeouts and sleeps keep real time.
/// FAKETIME_FORCE_MONOTONIC_FIX=0: with it on (0.9.10's default) and monotonic left alone, a
/// JVM's timed waits break (measured in chaos-ozone: LockSupport.parkNanos and Object.wait of
/// 2 s return at once, Thread.sleep(2000) takes 2.6 s), and Ratis then never elects a leader.
pub(super) fn faketime_environment(preload_first: &[String]) -> Vec<String> {
    let mut preload = preload_first.to_vec();
    preload.push(LIBFAKETIME.to_string());
    vec![
        format!("LD_PRELOAD={}", preload.join(" ")),
        format!("FAKETIME_TIMESTAMP_FILE={FAKETIME_FILE}"),
        "FAKETIME_CACHE_DURATION=1".into(),
        "FAKETIME_DONT_FAKE_MONOTONIC=1".into(),
        "FAKETIME_FORCE_MONOTONIC_FIX=0".into(),
        // The name libfaketime before 0.9.8 reads.
        "DONT_FAKE_MONOTONIC=1".into(),
    ]
}
