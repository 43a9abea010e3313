//! The line that says how a run is going while it plays: elapsed of duration, operations ok /
//! fail / info, the faults active now and the next step. On a terminal it is one line redrawn
//! in place (indicatif); otherwise (CI logs) one plain line every 10 seconds. `Activity` does
//! the same for image builds and Maven downloads.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use tokio_util::sync::CancellationToken;

use crate::faults::FaultEngine;
use crate::recorder::Recorder;
use crate::scenario::plan::Plan;
use crate::scenario::units::format_seconds;

/// How often a plain line is printed when stderr is not a terminal.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// One step of the plan still to come, as the line shows it.
struct Upcoming {
    step: usize,
    at: Option<Duration>,
    text: String,
}

/// Shows progress until `stop` is cancelled, then clears the line.
pub async fn show(
    engine: Arc<FaultEngine>,
    recorder: Arc<Recorder>,
    plan: Plan,
    duration: Duration,
    workload_start: Instant,
    stop: CancellationToken,
) {
    let upcoming: Vec<Upcoming> = plan
        .steps
        .iter()
        .flat_map(|s| {
            s.firings.iter().map(move |f| Upcoming {
                step: s.step,
                at: f.at,
                text: match f.at {
                    Some(at) => format!("{} at {}", f.action.name(), format_seconds(at)),
                    None => format!("{} {}", f.action.name(), s.trigger),
                },
            })
        })
        .collect();
    let line = || {
        let elapsed = workload_start.elapsed();
        let (ok, fail, info) = recorder.tally();
        let active = engine.active_faults();
        let fired = engine.fired_steps();
        // The next time-triggered firing still ahead, else a step still waiting for its trigger.
        let next = upcoming
            .iter()
            .filter(|u| u.at.is_some_and(|at| at > elapsed))
            .min_by_key(|u| u.at)
            .or_else(|| {
                upcoming
                    .iter()
                    .find(|u| u.at.is_none() && !fired.contains(&u.step))
            })
            .map_or("none".to_string(), |u| u.text.clone());
        format!(
            "{}/{}  ok {ok} · fail {fail} · info {info}  | now: {}  | next: {next}",
            format_seconds(Duration::from_secs(elapsed.as_secs())),
            format_seconds(duration),
            if active.is_empty() {
                "no fault".to_string()
            } else {
                active.join(", ")
            },
        )
    };
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(duration.as_millis() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:20} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        loop {
            bar.set_position(
                (workload_start.elapsed().as_millis() as u64).min(bar.length().unwrap_or(0)),
            );
            bar.set_message(line());
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
        bar.finish_and_clear();
    } else {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(PLAIN_EVERY) => eprintln!("progress: {}", line()),
            }
        }
    }
}

/// A long task outside a run (an image build, a Maven download): on a terminal one line redrawn
/// in place (a spinner, the elapsed time and the task's latest news); otherwise one plain line
/// every 10 seconds, so a CI log shows it is alive without a line per downloaded file.
pub struct Activity {
    label: String,
    started: Instant,
    latest: Arc<std::sync::Mutex<String>>,
    bar: Option<ProgressBar>,
    /// Dropping the sender stops the plain ticker.
    ticker: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl Activity {
    pub fn start(label: &str) -> Activity {
        let latest = Arc::new(std::sync::Mutex::new(String::new()));
        let started = Instant::now();
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            return Activity {
                label: label.to_string(),
                started,
                latest,
                bar: Some(bar),
                ticker: None,
            };
        }
        eprintln!("{label} ...");
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let news = latest.clone();
        let name = label.to_string();
        let thread = std::thread::spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(PLAIN_EVERY)
            {
                let news = news.lock().map(|n| n.clone()).unwrap_or_default();
                eprintln!(
                    "progress: {name}: {} s  {news}",
                    started.elapsed().as_secs()
                );
            }
        });
        Activity {
            label: label.to_string(),
            started,
            latest,
            bar: None,
            ticker: Some((stop, thread)),
        }
    }

    /// The task's latest news (a build step, "mvn: 120 files downloaded (85 MB)").
    pub fn note(&self, news: &str) {
        let news = news.trim();
        if news.is_empty() {
            return;
        }
        if let Some(bar) = &self.bar {
            bar.set_message(news.to_string());
        }
        if let Ok(mut latest) = self.latest.lock() {
            *latest = news.to_string();
        }
    }

    /// Ends the line and says how it went (`image chaos-etcd:latest built in 41 s`).
    pub fn finish(mut self, outcome: &str) {
        self.stop();
        eprintln!("{outcome} in {} s", self.started.elapsed().as_secs());
    }

    fn stop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if let Some((stop, thread)) = self.ticker.take() {
            drop(stop);
            let _ = thread.join();
        }
    }
}

impl Drop for Activity {
    /// A failed task stops its line too; the caller prints why.
    fn drop(&mut self) {
        if self.bar.is_some() || self.ticker.is_some() {
            self.stop();
            eprintln!(
                "{}: stopped after {} s",
                self.label,
                self.started.elapsed().as_secs()
            );
        }
    }
}
