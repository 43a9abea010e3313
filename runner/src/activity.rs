//! A long task outside a run (an image build, a Maven download) as one line that shows it is
//! alive. Its own module, on the lowest floor, so that the cluster's image builds draw it
//! without using the run's progress line (progress.rs), which sits above the fault engine.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a plain line is printed when stderr is not a terminal.
pub(crate) const PLAIN_EVERY: Duration = Duration::from_secs(10);

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
