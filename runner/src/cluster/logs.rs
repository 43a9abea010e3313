//! Node output: each node's log followed into logs/<node>.log and broadcast to log triggers,
//! and the tail of a log that errors quote.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bollard::query_parameters::{InspectContainerOptions, LogsOptionsBuilder};
use bollard::Docker;
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::Cluster;

/// A line a node printed, as the harness received it.
#[derive(Debug, Clone)]
pub struct LogLine {
    pub node: String,
    pub text: String,
    pub received: Instant,
    /// Docker's timestamp of the line (when the engine got it from the node).
    pub stamp: Option<time::OffsetDateTime>,
}

impl Cluster {
    pub fn subscribe_logs(&self) -> broadcast::Receiver<LogLine> {
        self.logs.subscribe()
    }
}

/// How many lines of a node's log an error about that node quotes.
pub(super) const LOG_TAIL_LINES: usize = 12;

/// The last `lines` lines of a node's output (Java stack frames left out: the message above
/// them says more in less room).
pub(super) async fn log_tail(docker: &Docker, container: &str, lines: usize) -> String {
    let options = LogsOptionsBuilder::new()
        .stdout(true)
        .stderr(true)
        .tail(&(lines * 4).to_string())
        .build();
    let mut stream = docker.logs(container, Some(options));
    let mut out = String::new();
    while let Some(Ok(chunk)) = stream.next().await {
        out.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
    }
    let kept: Vec<&str> = out
        .lines()
        .filter(|l| !l.trim_start().starts_with("at ") && !l.trim().is_empty())
        .collect();
    let tail = kept[kept.len().saturating_sub(lines)..].join("\n");
    if tail.is_empty() {
        "(nothing)".into()
    } else {
        tail
    }
}

/// Which lines a log stream opened again after a container stop has shown already. Docker
/// answers `since` in whole seconds, so a new stream starts with lines of the old one; those
/// are the ones stamped no later than the newest line seen before it opened. Only the replay is
/// compared with that mark: within one stream Docker merges stdout and stderr, each in its own
/// order, so a stdout line (Byteman's CHAOS-JVM lines) may carry an earlier stamp than the
/// stderr line before it (log4j's), and is still new.
#[derive(Debug)]
struct SeenUpTo {
    newest: Option<time::OffsetDateTime>,
}

impl SeenUpTo {
    /// `from`: lines stamped up to it are left out of the first stream too.
    fn new(from: Option<time::OffsetDateTime>) -> Self {
        SeenUpTo { newest: from }
    }

    /// The mark for a stream opening now: lines stamped up to it were shown already.
    fn reconnect(&self) -> Option<time::OffsetDateTime> {
        self.newest
    }

    /// Whether a line of the stream opened with mark `replayed` was shown already; a new line's
    /// stamp moves the mark of the next stream.
    fn replayed(
        &mut self,
        stamp: Option<time::OffsetDateTime>,
        replayed: Option<time::OffsetDateTime>,
    ) -> bool {
        if let (Some(stamp), Some(mark)) = (stamp, replayed) {
            if stamp <= mark {
                return true;
            }
        }
        self.newest = self.newest.max(stamp);
        false
    }
}

/// Streams a node's output into logs/<node>.log and to log triggers. A container that stops
/// ends the stream; the follower waits for it to run again and resumes where it left off.
pub(super) async fn follow_logs(
    docker: Docker,
    node: String,
    container: String,
    // The log file, and the secrets scrubbed from what goes into it.
    (path, secrets): (PathBuf, std::sync::Arc<Vec<String>>),
    sink: broadcast::Sender<LogLine>,
    stop: CancellationToken,
    // The run's start, and the time before which lines are left out (None: from the
    // container's first line).
    (run_start, from): (Instant, Option<time::OffsetDateTime>),
) {
    let Ok(mut file) = tokio::fs::File::create(&path).await else {
        tracing::warn!("cannot write {}", path.display());
        return;
    };
    let mut seen = SeenUpTo::new(from);
    let mut partial = String::new();
    loop {
        let replayed = seen.reconnect();
        let since = replayed.map(|t| t.unix_timestamp() as i32).unwrap_or(0);
        let options = LogsOptionsBuilder::new()
            .follow(true)
            .stdout(true)
            .stderr(true)
            .timestamps(true)
            .since(since)
            .build();
        let mut stream = docker.logs(&container, Some(options));
        loop {
            let chunk = tokio::select! {
                _ = stop.cancelled() => None,
                chunk = stream.next() => chunk,
            };
            let Some(Ok(chunk)) = chunk else { break };
            partial.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
            while let Some(end) = partial.find('\n') {
                let line: String = partial.drain(..=end).collect();
                let line = line.trim_end_matches(['\n', '\r']);
                let (stamp, text) = line.split_once(' ').unwrap_or(("", line));
                let stamp = time::OffsetDateTime::parse(
                    stamp,
                    &time::format_description::well_known::Rfc3339,
                )
                .ok();
                if seen.replayed(stamp, replayed) {
                    continue;
                }
                let received = Instant::now();
                let elapsed = received.duration_since(run_start).as_secs_f64();
                let mut shown = std::borrow::Cow::Borrowed(text);
                for secret in secrets.iter().filter(|s| !s.is_empty()) {
                    if shown.contains(secret.as_str()) {
                        shown =
                            std::borrow::Cow::Owned(shown.replace(secret.as_str(), "[redacted]"));
                    }
                }
                // What the report would redact anyway (Authorization headers, key=value
                // credentials) never reaches the file either.
                let redacted = crate::redact::redact(&shown);
                let _ = file
                    .write_all(format!("[{elapsed:>12.6}] {redacted}\n").as_bytes())
                    .await;
                // Triggers see the line without the secrets too (a fired trigger's line goes
                // into faults.jsonl).
                let _ = sink.send(LogLine {
                    node: node.clone(),
                    text: shown.into_owned(),
                    received,
                    stamp,
                });
            }
        }
        let _ = file.flush().await;
        // The container stopped (or we are done): wait until it runs again.
        loop {
            if stop.is_cancelled() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            match docker
                .inspect_container(&container, None::<InspectContainerOptions>)
                .await
            {
                Ok(info) if info.state.as_ref().and_then(|s| s.running) == Some(true) => break,
                Ok(_) => {}
                Err(_) => return, // removed
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SeenUpTo;

    fn at(s: i64) -> Option<time::OffsetDateTime> {
        Some(time::OffsetDateTime::from_unix_timestamp(s).unwrap())
    }

    #[test]
    fn a_line_stamped_before_the_one_above_it_is_kept() {
        let mut seen = SeenUpTo::new(None);
        let mark = seen.reconnect();
        // stderr at 10 s, then a stdout line Docker stamped at 9 s: both new.
        assert!(!seen.replayed(at(10), mark));
        assert!(!seen.replayed(at(9), mark));
        assert!(!seen.replayed(None, mark));
    }

    #[test]
    fn a_stream_opened_again_skips_what_the_last_one_showed() {
        let mut seen = SeenUpTo::new(None);
        let first = seen.reconnect();
        assert!(!seen.replayed(at(9), first));
        assert!(!seen.replayed(at(10), first));
        // The container stopped and ran again: `since` replays from second 10.
        let second = seen.reconnect();
        assert!(seen.replayed(at(10), second));
        assert!(seen.replayed(at(9), second));
        assert!(!seen.replayed(at(11), second));
        // Out of order within the new stream, but after the mark: new.
        assert!(!seen.replayed(
            at(10).map(|t| t + time::Duration::milliseconds(500)),
            second
        ));
    }

    #[test]
    fn lines_before_from_are_left_out() {
        let mut seen = SeenUpTo::new(at(5));
        let mark = seen.reconnect();
        assert!(seen.replayed(at(4), mark));
        assert!(!seen.replayed(at(6), mark));
    }
}
