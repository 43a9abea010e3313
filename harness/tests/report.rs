//! The report: rendered from real run folders of the etcd scenarios (fixtures trimmed from real
//! runs), loaded in headless Chromium (no console error, no network request), an injection test,
//! the index over many run folders, suite shards, and a render benchmark that prints figures.
//!
//! Chromium (Debian's `chromium`) must be installed: scripts/setup installs it. The tests fail,
//! not skip, without it. A screenshot of the violation view lands in
//! `$CARGO_TARGET_TMPDIR/report-artifacts/violation-view.png`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use chaos::report;
use serde_json::{json, Value};

/// Tests of this binary run one at a time (Chromium is heavy on 2 cores).
static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs")
}

fn stale_fixture() -> PathBuf {
    fixtures().join("etcd-stale-reads/20261129T194844Z-s1")
}

fn passing_fixture() -> PathBuf {
    fixtures().join("etcd-register-faults/20261129T194902Z-s7")
}

/// ozone-retry-after-restart seed 1 on Ozone 2.2.0 (exit 1), trimmed: every witness kept, the
/// history's other lines blanked (line numbers stay), the logs cut to the start and the first
/// witnesses.
fn ozone_fixture() -> PathBuf {
    fixtures().join("ozone-retry-after-restart/20261203T080602Z-s1")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("report-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A copy of a fixture run folder, rendered.
fn rendered(fixture: &Path, name: &str) -> PathBuf {
    let dir = scratch(name).join(fixture.file_name().unwrap());
    copy_dir(fixture, &dir);
    report::render(&dir).unwrap();
    dir
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The page without its embedded JSON (where `"` is harmless and escaped as `\"`).
fn markup(html: &str) -> String {
    let start = html.find("<script id=\"chaos-data\"").expect("data block");
    let end = start + html[start..].find("</script>").unwrap();
    format!("{}{}", &html[..start], &html[end..])
}

struct Loaded {
    dom: String,
    console: Vec<String>,
    requests: Vec<String>,
}

/// Hosts Chromium itself talks to (updates, time, accounts), not the page.
fn browser_own(url: &str) -> bool {
    [
        "google.com/",
        "googleapis.com/",
        "gvt1.com/",
        "gstatic.com/",
    ]
    .iter()
    .any(|h| url.contains(h))
}

fn chromium(url: &str, extra: &[String]) -> Loaded {
    let tmp = scratch(&format!("chromium-{}", extra.len()));
    let netlog = tmp.join("netlog.json");
    let mut cmd = Command::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-features=Translate,OptimizationHints,MediaRouter,SpellCheck",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
        "--window-size=1400,1000",
    ])
    .arg(format!("--user-data-dir={}", tmp.join("profile").display()))
    .arg(format!("--log-net-log={}", netlog.display()))
    .args(extra)
    .arg(url);
    let out = cmd
        .output()
        .expect("chromium is not installed: run scripts/setup (apt-get install chromium)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let log = std::fs::read_to_string(&netlog).unwrap_or_default();
    let re = regex::Regex::new(r#""url":"([^"]+)""#).unwrap();
    let mut requests: Vec<String> = re
        .captures_iter(&log)
        .map(|c| c[1].to_string())
        .filter(|u| !u.starts_with("file:") && !u.starts_with("data:") && !browser_own(u))
        .collect();
    requests.sort();
    requests.dedup();
    Loaded {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
        requests,
    }
}

fn url(p: &Path) -> String {
    format!("file://{}", p.canonicalize().unwrap().display())
}

#[test]
fn violation_report_has_the_sentence_the_views_and_junit() {
    let _g = lock();
    let dir = rendered(&stale_fixture(), "violation");
    let html = read(&dir.join("index.html"));
    // Summary: verdict in words, the sentence, seed, versions, the command, a link to the view.
    assert!(html.contains("violation"), "verdict badge");
    let sentence = regex::Regex::new(
        r"a read on key (k\d) served by (etcd\d) returned (\d+) at [\d.]+ s, although (\d+) had been acknowledged [\d.]+ ms before the read began",
    )
    .unwrap();
    let m = sentence
        .captures(&html)
        .expect("a stale-read sentence in the summary");
    assert_ne!(&m[3], &m[4]);
    assert!(
        html.contains("etcd-version 3.4"),
        "system version from the logs"
    );
    assert!(html.contains("chaos run /tmp/report-scen/stale-reads.yaml --seed 1"));
    assert!(
        html.contains("href=\"#violation-0-0\""),
        "summary links to the violation view"
    );
    for id in [
        "summary",
        "timeline",
        "violations",
        "latency",
        "faults",
        "logs",
        "scenario",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "section {id}");
    }
    // Violation view: SVG of the key's sub-history, the op in red, the needed vs seen state,
    // the two answers side by side, the longest linearization.
    assert!(html.contains("id=\"violation-0-0\""));
    assert!(html.contains("<svg"));
    assert!(html.contains("class=\"op bad\""));
    assert!(html.contains("class=\"op wit\""));
    assert!(html.contains("The two answers"));
    assert!(html.contains("Longest partial linearization"));
    assert!(html.contains("class=\"needs\"") && html.contains("class=\"saw\""));
    // Fault band data, latency table inside/outside, logs around the partition.
    assert!(html.contains("partition isolate"));
    assert!(html.contains("inside fault windows"));
    assert!(html.contains("k-violation") && html.contains("k-fault"));
    // Self-contained: no external resource of any kind.
    let outside = markup(&html);
    for bad in [
        "src=\"http",
        "href=\"http",
        "@import",
        "url(http",
        "<link rel=\"stylesheet",
    ] {
        assert!(!outside.contains(bad), "external resource: {bad}");
    }
    // The data block parses and has every operation.
    let start = html.find("application/json\">").unwrap() + "application/json\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).unwrap();
    let ops = read(&dir.join("history.jsonl"))
        .lines()
        .filter(|l| l.contains("\"invoke\""))
        .count();
    assert_eq!(data["op"]["s"].as_array().unwrap().len(), ops);
    // junit: a failure per violated check, message = the sentence with the run folder, shown
    // from the repository's root when the folder is inside it (target/tmp/... here).
    let junit = read(&dir.join("junit.xml"));
    assert!(junit.contains("<failure"), "{junit}");
    assert!(junit.contains("served by"), "{junit}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap();
    let folder = dir.canonicalize().unwrap();
    match folder.strip_prefix(&root) {
        Ok(rel) => {
            assert!(
                junit.contains(&format!("run folder: {}\n", rel.display())),
                "{junit}"
            );
            assert!(!junit.contains(&folder.display().to_string()), "{junit}");
        }
        // A CARGO_TARGET_DIR outside this clone: shown from the root of the repository that
        // holds it, or absolute.
        Err(_) => {
            let shown = chaos::run_folder::repo_relative(&folder);
            assert!(junit.contains(&shown.display().to_string()), "{junit}");
        }
    }
    let summary: Value = serde_json::from_str(&read(&dir.join("report.json"))).unwrap();
    assert_eq!(summary["verdict"], "illegal");
    assert!(summary["headline"].as_str().unwrap().contains("served by"));
}

#[test]
fn passing_report_shows_faults_marks_and_the_trigger_line() {
    let _g = lock();
    let dir = rendered(&passing_fixture(), "passing");
    let html = read(&dir.join("index.html"));
    assert!(html.contains("badge v-ok"));
    assert!(!html.contains("id=\"violations\""));
    assert!(html.contains("can be put in one order that agrees with real time"));
    for kind in ["kill", "pause", "partition"] {
        assert!(
            html.contains(&format!("{kind} ×")),
            "faults by kind: {kind}"
        );
    }
    // The log line that fired the `on: log` trigger is marked.
    assert!(html.contains("class=\"ll trig\""), "trigger line marked");
    assert!(html.contains("became leader at term"));
    let data = &html[html.find("application/json\">").unwrap()..];
    for mark in [
        "\"killed\"",
        "\"started\"",
        "\"paused\"",
        "\"resumed\"",
        "\"cut off\"",
    ] {
        assert!(data.contains(mark), "lifecycle mark {mark}");
    }
    let junit = read(&dir.join("junit.xml"));
    assert!(!junit.contains("<failure"), "{junit}");
    assert!(junit.contains("linearizable (cas-register)"));
}

#[test]
fn chromium_loads_both_pages_cleanly_and_screenshots_the_violation() {
    let _g = lock();
    let drawn = regex::Regex::new(r#"data-drawn="(\d+)""#).unwrap();
    for (fixture, name) in [
        (stale_fixture(), "cr-violation"),
        (passing_fixture(), "cr-pass"),
    ] {
        let dir = rendered(&fixture, name);
        let page = dir.join("index.html");
        let loaded = chromium(&url(&page), &["--dump-dom".to_string()]);
        assert!(
            loaded.console.is_empty(),
            "{name}: console: {:#?}",
            loaded.console
        );
        assert!(
            loaded.requests.is_empty(),
            "{name}: network: {:#?}",
            loaded.requests
        );
        let n: usize = drawn
            .captures(&loaded.dom)
            .unwrap_or_else(|| panic!("{name}: the script did not finish drawing"))[1]
            .parse()
            .unwrap();
        assert!(n > 100, "{name}: {n} operations drawn");
        if name == "cr-violation" {
            // The violation view alone: the same page with the other sections hidden.
            let html = read(&page).replacen(
                "</style>",
                "section:not(#violations),nav{display:none}</style>",
                1,
            );
            let view = dir.join("violation-view.html");
            std::fs::write(&view, html).unwrap();
            let shot = artifacts().join("violation-view.png");
            let _ = std::fs::remove_file(&shot);
            chromium(&url(&view), &[format!("--screenshot={}", shot.display())]);
            let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
            assert!(
                size > 10_000,
                "screenshot {} ({size} bytes)",
                shot.display()
            );
            println!("violation view screenshot: {}", shot.display());
            let full = artifacts().join("etcd-report.png");
            chromium(&url(&page), &[format!("--screenshot={}", full.display())]);
            println!("etcd report screenshot: {}", full.display());
        }
    }
}

#[test]
fn injected_markup_renders_as_text() {
    let _g = lock();
    let evil = "<script>alert(1)</script>\"onmouseover=alert(2) x=\"";
    let dir = scratch("injection").join("run");
    copy_dir(&stale_fixture(), &dir);
    // A history value and key, a log line, a fault trigger and the scenario description.
    let mut history = read(&dir.join("history.jsonl"));
    let t = 1_000_000_000u64;
    for (i, kind) in ["invoke", "ok"].iter().enumerate() {
        history.push_str(&format!(
            "{}\n",
            json!({"index": 99999 + i, "time": t + i as u64, "process": 777, "type": kind,
                   "f": "write", "key": evil, "value": evil, "node": "etcd1"})
        ));
    }
    std::fs::write(dir.join("history.jsonl"), history).unwrap();
    let mut log = read(&dir.join("logs/etcd1.log"));
    log.push_str(&format!("[    3.000000] {evil}\n"));
    std::fs::write(dir.join("logs/etcd1.log"), log).unwrap();
    let mut faults = read(&dir.join("faults.jsonl"));
    faults.insert_str(
        0,
        &format!(
            "{}\n",
            json!({"time": 2_900_000_000u64, "step": 9, "action": "pause", "phase": "apply",
                   "targets": ["etcd1"], "trigger": format!("on log of any node /x/ (etcd1: {evil})"), "outcome": "ok"})
        ),
    );
    std::fs::write(dir.join("faults.jsonl"), faults).unwrap();
    let scenario = read(&dir.join("scenario.yaml")).replacen(
        "description: >",
        &format!("description: >\n  {}\n ", evil.replace('"', "'")),
        1,
    );
    std::fs::write(dir.join("scenario.yaml"), scenario).unwrap();
    let mut result: Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
    result["description"] = json!(evil);
    std::fs::write(dir.join("result.json"), result.to_string()).unwrap();

    report::render(&dir).unwrap();
    let html = read(&dir.join("index.html"));
    let outside = markup(&html);
    assert!(!html.contains("<script>alert"), "raw script tag");
    assert!(
        !outside.contains("\"onmouseover"),
        "raw attribute break-out"
    );
    assert!(outside.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // The data block ends where it should and still carries the text, unchanged.
    let start = html.find("application/json\">").unwrap() + "application/json\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).expect("data block closed early");
    assert!(data["keys"].as_array().unwrap().iter().any(|k| k == evil));
    // In a browser: the text is there as text, no element carries the handler, and the page
    // script still ran to the end.
    let loaded = chromium(&url(&dir.join("index.html")), &["--dump-dom".to_string()]);
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(loaded.dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        !loaded.dom.contains(" onmouseover="),
        "an element got the handler"
    );
    assert!(loaded.dom.contains("data-drawn="));
}

#[test]
fn secrets_are_redacted_and_nothing_outside_the_folder_is_read() {
    let _g = lock();
    let root = scratch("secrets");
    let dir = root.join("run");
    copy_dir(&passing_fixture(), &dir);
    // A log line next to the kill at 6.556 s (so it is in an excerpt) and a scenario comment.
    let log = read(&dir.join("logs/etcd1.log"));
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    let at = lines
        .iter()
        .position(|l| l[1..l.find(']').unwrap()].trim().parse::<f64>().unwrap() > 6.5)
        .unwrap_or(lines.len());
    lines.insert(at, "[    6.500000] starting with AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCY and key AKIAIOSFODNN7EXAMPLE".into());
    std::fs::write(dir.join("logs/etcd1.log"), lines.join("\n") + "\n").unwrap();
    let scenario = read(&dir.join("scenario.yaml"))
        + "# s3: { access_key: minio, secret_key: Sup3rS3cretValue }\n";
    std::fs::write(dir.join("scenario.yaml"), scenario).unwrap();
    // A log that is a link to a file outside the run folder is not read.
    std::fs::write(
        root.join("outside.log"),
        "[    1.000000] OUTSIDE-SECRET-CONTENT\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(root.join("outside.log"), dir.join("logs/evil.log")).unwrap();
    report::render(&dir).unwrap();
    let html = read(&dir.join("index.html"));
    assert!(!html.contains("wJalrXUtnFEMIK7MDENGbPxRfiCY"));
    assert!(!html.contains("AKIAIOSFODNN7EXAMPLE"));
    assert!(!html.contains("Sup3rS3cretValue"));
    assert!(
        html.contains("AWS_SECRET_ACCESS_KEY=[redacted]"),
        "the log line is shown, redacted"
    );
    assert!(!html.contains("OUTSIDE-SECRET-CONTENT"));
}

#[test]
fn index_over_24_run_folders_links_resolve_newest_first() {
    let _g = lock();
    let root = scratch("index");
    // Twelve copies of each real run, as CI shards upload them (nested folders).
    for i in 0..12 {
        for (fixture, scenario) in [
            (stale_fixture(), "etcd-stale-reads"),
            (passing_fixture(), "etcd-register-faults"),
        ] {
            let dir = root
                .join(format!("shard-{}", i % 3 + 1))
                .join(scenario)
                .join(format!("20261130T0{:02}000Z-s{}", i, i + 1));
            copy_dir(&fixture, &dir);
            let mut result: Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
            result["started"] = json!(format!("2026-11-30T0{i:02}:00:00Z"));
            result["seed"] = json!(i + 1);
            std::fs::write(dir.join("result.json"), result.to_string()).unwrap();
            report::render(&dir).unwrap();
        }
    }
    // A `latest` link must not duplicate a run.
    std::os::unix::fs::symlink(
        "20261130T000000Z-s1",
        root.join("shard-1/etcd-stale-reads/latest"),
    )
    .unwrap();
    let runs = report::render_index(&root).unwrap();
    assert_eq!(runs.len(), 24);
    let html = read(&root.join("index.html"));
    let href = regex::Regex::new(r#"href="([^"]+)""#).unwrap();
    let links: Vec<String> = href
        .captures_iter(&html)
        .map(|c| c[1].to_string())
        // Links within the page (the rates table's filters) are no files.
        .filter(|h| !h.starts_with("data:") && !h.starts_with('#'))
        .collect();
    let reports: Vec<&String> = links
        .iter()
        .filter(|l| l.ends_with("/index.html"))
        .collect();
    assert_eq!(reports.len(), 24);
    for l in &links {
        assert!(
            !l.starts_with('/') && !l.contains("://"),
            "not relative: {l}"
        );
        assert!(root.join(l).is_file(), "broken link {l}");
    }
    // Newest first.
    let started: Vec<&str> = runs.iter().map(|r| r.started.as_str()).collect();
    let mut sorted = started.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(started, sorted);
    assert!(html.contains("id=\"f-verdict\"") && html.contains("id=\"f-scenario\""));
    // Each run page links back to the index with a relative link that resolves... when the
    // run folders sit two levels below it, as in reports/.
    let junit = read(&root.join("junit.xml"));
    assert_eq!(junit.matches("<testcase").count(), 24);
    assert_eq!(junit.matches("<failure").count(), 12);
    let loaded = chromium(&url(&root.join("index.html")), &["--dump-dom".to_string()]);
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(
        loaded.requests.is_empty(),
        "network: {:#?}",
        loaded.requests
    );
}

#[test]
fn shards_together_play_every_scenario_and_seed_once() {
    let root = scratch("suite");
    let suite = root.join("nightly.yaml");
    std::fs::write(
        &suite,
        "name: nightly\nscenarios:\n  - scenario: etcd/register-faults.yaml\n    seeds: 5\n  - scenario: etcd/stale-reads.yaml\n    seeds: [3, 7, 11, 19]\n  - scenario: redis/lost-writes.yaml\n    seeds: 2\n    first_seed: 100\n",
    )
    .unwrap();
    let all = chaos::suite::load_work(&suite, None).unwrap().plays;
    assert_eq!(all.len(), 11);
    let mut union = Vec::new();
    for i in 1..=3 {
        let shard: chaos::suite::Shard = format!("{i}/3").parse().unwrap();
        let part = chaos::suite::load_work(&suite, Some(shard)).unwrap().plays;
        assert!((3..=4).contains(&part.len()), "shard {i}: {}", part.len());
        // Deterministic: the same share every time.
        assert_eq!(
            part,
            chaos::suite::load_work(&suite, Some(shard)).unwrap().plays
        );
        union.extend(part);
    }
    let mut want = all.clone();
    union.sort_by_key(|p| (p.scenario.clone(), p.seed));
    want.sort_by_key(|p| (p.scenario.clone(), p.seed));
    assert_eq!(union, want, "every (scenario, seed) exactly once");
    assert!(all
        .iter()
        .any(|p| p.scenario == root.join("etcd/stale-reads.yaml") && p.seed == 19));

    // A comparison added between the entries moves no play to another shard.
    let with_compare = root.join("with-compare.yaml");
    let text = std::fs::read_to_string(&suite).unwrap().replace(
        "  - scenario: etcd/stale-reads.yaml",
        "  - compare: redis/lose-unsynced.yaml\n    builds: [set:A=no, set:A=always]\n    seeds: 2\n  - scenario: etcd/stale-reads.yaml",
    );
    std::fs::write(&with_compare, text).unwrap();
    let mut comparisons = 0;
    for i in 1..=3 {
        let shard: chaos::suite::Shard = format!("{i}/3").parse().unwrap();
        let plain = chaos::suite::load_work(&suite, Some(shard)).unwrap();
        let mixed = chaos::suite::load_work(&with_compare, Some(shard)).unwrap();
        let key = |p: &chaos::suite::Play| (p.scenario.clone(), p.seed);
        assert_eq!(
            mixed.plays.iter().map(key).collect::<Vec<_>>(),
            plain.plays.iter().map(key).collect::<Vec<_>>()
        );
        comparisons += mixed.comparisons.len();
    }
    assert_eq!(comparisons, 1, "the comparison plays on one shard");
}

/// Prints the time to render and the size of the page for 1,000, 10,000 and 100,000
/// operations (the real stale-reads history repeated, shifted in time). Goals at 100,000:
/// under 2 s and under 15 MB (measured, never asserted).
#[test]
fn benchmark_render_time_and_page_size() {
    let _g = lock();
    let base = stale_fixture();
    let history = read(&base.join("history.jsonl"));
    let events: Vec<Value> = history
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let span = events
        .iter()
        .filter_map(|e| e["time"].as_u64())
        .max()
        .unwrap()
        + 1_000_000;
    let per_copy = events.iter().filter(|e| e["type"] == "invoke").count();
    println!("\nreport render benchmark (real stale-reads history of {per_copy} ops, repeated):");
    println!("{:>9} {:>12} {:>12}", "ops", "render", "page");
    for target in [1_000usize, 10_000, 100_000] {
        let dir = scratch(&format!("bench-{target}")).join("run");
        copy_dir(&base, &dir);
        let mut out = String::new();
        let mut ops = 0;
        let mut copy = 0u64;
        'fill: loop {
            for e in &events {
                if e["type"] == "invoke" {
                    if ops == target {
                        break 'fill;
                    }
                    ops += 1;
                }
                let mut e = e.clone();
                e["time"] = json!(e["time"].as_u64().unwrap() + copy * span);
                out.push_str(&e.to_string());
                out.push('\n');
            }
            copy += 1;
        }
        std::fs::write(dir.join("history.jsonl"), out).unwrap();
        let started = Instant::now();
        report::render(&dir).unwrap();
        let took = started.elapsed();
        let size = std::fs::metadata(dir.join("index.html")).unwrap().len();
        println!(
            "{:>9} {:>10.3} s {:>9.2} MB",
            target,
            took.as_secs_f64(),
            size as f64 / 1e6
        );
    }
}

/// The data block of a rendered page.
fn data_of(html: &str) -> Value {
    let start = html.find("application/json\">").unwrap() + "application/json\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// The Ozone report in one time base (the workload's start, as `at:` counts), its head in the
/// order a reviewer reads it, every fault step counted, the workload's lanes, the violations as
/// a first witness and a table, and summary.md.
#[test]
fn ozone_report_reads_from_the_workloads_start_and_leads_with_the_verdict() {
    let _g = lock();
    let dir = rendered(&ozone_fixture(), "ozone");
    let html = read(&dir.join("index.html"));
    let result: Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
    let t0 = result["workload_started_ns"].as_u64().unwrap();
    // The first retried call was invoked 0.266 s after the workload began (80.487 s after the
    // run began): only the first appears.
    assert!(
        html.contains("cas [nil 1] → ok [nil 1] at 0.266 s by om1"),
        "workload time"
    );
    assert!(
        !html.contains("80.487 s"),
        "no time counted from the run's start"
    );
    let data = data_of(&html);
    assert_eq!(data["t0"].as_u64(), Some(t0 / 1000), "the cluster's phase");
    assert_eq!(
        data["op"]["s"][0].as_i64(),
        Some(80_487_241 - (t0 / 1000) as i64)
    );
    // Lanes: the four processes and the final reads, not one lane per final read.
    assert_eq!(
        data["lanes"],
        json!(["p0", "p1", "p2", "p3", "final reads"]),
        "lanes"
    );
    // The restart of every OM is counted with the resets, with its targets and time.
    let faults = html.find("id=\"faults-applied\"").expect("faults summary");
    let faults = &html[faults..faults + html[faults..].find("</dd>").unwrap()];
    assert!(faults.contains("4 of 4 steps applied"), "{faults}");
    assert!(
        faults.contains("reset-connections ×3 on om1, om2, om3 at 8.0, 9.0, 10.0 s"),
        "{faults}"
    );
    assert!(
        faults.contains("restart ×1 on om1, om2, om3 at 15.0 s"),
        "{faults}"
    );
    // No event of the faults table has `nil` for a trigger (the restart's ready event has none).
    assert!(!html.contains("<td class=\"trig\">nil</td>"));
    assert!(html.contains("step 3's nodes answering again"));
    // The head: the verdict sentence, then the confirmation, then the facts; the description
    // folded under its first sentence.
    let at = |needle: &str| {
        html.find(needle)
            .unwrap_or_else(|| panic!("{needle} not in the page"))
    };
    assert!(at("id=\"verdict\"") < at("Confirmation"));
    assert!(at("Confirmation") < at("reproduce"));
    assert!(at("reproduce") < at("<details class=\"desc\""));
    assert!(html.contains(
        "<summary>The OM retry cache across a restart of every Ozone Manager (HDDS-16743)."
    ));
    // One full witness per check, with the OM's log line that names the key; the rest in a
    // table.
    assert_eq!(html.matches("The first witness").count(), 1);
    assert!(html.contains("And 162 more like it"));
    assert!(html.contains("Key already exists c1."), "the OM's log line");
    let rows = html.matches("<tr><td class=\"num\">").count();
    assert!(rows >= 163, "{rows} rows in the witness table");
    // summary.md: fit to paste into a bug tracker.
    let md = read(&dir.join("summary.md"));
    for needed in [
        "ozone-retry-after-restart",
        "ozone (ozone 2.2.0)",
        "seed 1",
        "15.0 s → 22.8 s: restart om1, om2, om3 (at 15s)",
        "8.0 s: reset-connections om1, om2, om3 (at 8s)",
        "163 calls sent again were answered differently",
        "Key already exists c1.",
        "`chaos run scenarios/ozone/retry-after-restart.yaml --seed 1`",
        "index.html",
    ] {
        assert!(md.contains(needed), "summary.md lacks {needed}:\n{md}");
    }
    assert!(md.lines().count() < 60, "summary.md is short:\n{md}");
}

/// The rate over the scenario's runs beside this one, on the page and in summary.md.
#[test]
fn the_rate_counts_the_scenarios_runs_in_the_same_folder() {
    let _g = lock();
    let root = scratch("ozone-rate");
    for (name, confirmation) in [
        ("a-s1", None),
        ("b-s2", Some("confirmed")),
        ("c-s3", Some("held")),
    ] {
        let dir = root.join(name);
        copy_dir(&ozone_fixture(), &dir);
        if let Some(c) = confirmation {
            let path = dir.join("result.json");
            let mut r: Value = serde_json::from_str(&read(&path)).unwrap();
            r["confirmation"] = json!(c);
            std::fs::write(&path, r.to_string()).unwrap();
        }
    }
    report::render(&root.join("a-s1")).unwrap();
    let html = read(&root.join("a-s1/index.html"));
    let rate = &html[html.find("id=\"rate\"").expect("the rate")..];
    let rate = &rate[..rate.find("</p>").unwrap()];
    assert!(
        rate.contains(
            "Over this scenario's 3 runs in this folder: violated, unreached in 1 of 3 runs"
        ),
        "{rate}"
    );
    assert!(
        rate.contains("confirmed in 1 of 3") && rate.contains("held in 1 of 3"),
        "{rate}"
    );
    let md = read(&root.join("a-s1/summary.md"));
    assert!(
        md.contains("**Rate:** violated, unreached in 1 of 3 runs"),
        "{md}"
    );
}

/// A comparison folder gets a summary too: its conclusion, each build's rate and the first
/// failing run's witness.
#[test]
fn a_comparison_has_a_summary() {
    let _g = lock();
    let root = scratch("compare-summary");
    copy_dir(&ozone_fixture(), &root.join("2.2.0/s1"));
    let record = json!({
        "scenario": "ozone-retry-after-restart",
        "scenario_path": "scenarios/ozone/retry-after-restart.yaml",
        "seeds": [1],
        "conclusion": "fix confirmed: violated, unreached on 2.2.0 in 1 of 1 seeds",
        "builds": [
            {"build": "2.2.0", "folder": "2.2.0", "image": "chaos-ozone:2.2.0",
             "runs": [{"class": "violated-unreached", "folder": "2.2.0/s1", "seconds": 227.0, "seed": 1}]},
            {"build": "2.2.0+fix", "folder": "fix", "image": "chaos-ozone:fix",
             "runs": [{"class": "held", "folder": "fix/s1", "seconds": 220.0, "seed": 1}]}
        ]
    });
    std::fs::write(root.join("compare.json"), record.to_string()).unwrap();
    let md = report::summary_of(&root).unwrap();
    assert_eq!(md, read(&root.join("summary.md")));
    for needed in [
        "fix confirmed",
        "**2.2.0** (chaos-ozone:2.2.0): violated, unreached 1 of 1",
        "**2.2.0+fix** (chaos-ozone:fix): held 1 of 1",
        "#### On 2.2.0 (seed 1)",
        "163 calls sent again were answered differently",
    ] {
        assert!(md.contains(needed), "lacks {needed}:\n{md}");
    }
}

/// Chromium: the Ozone report loads cleanly and is kept as screenshots; with 100 witnesses the
/// violation section stays within two screens (the window is 1000 px high).
#[test]
fn chromium_keeps_the_ozone_report_and_100_witnesses_fit_two_screens() {
    let _g = lock();
    let dir = rendered(&ozone_fixture(), "cr-ozone");
    let page = dir.join("index.html");
    let loaded = chromium(&url(&page), &["--dump-dom".to_string()]);
    assert!(loaded.console.is_empty(), "console: {:#?}", loaded.console);
    assert!(
        loaded.requests.is_empty(),
        "network: {:#?}",
        loaded.requests
    );
    let shot = artifacts().join("ozone-report.png");
    let _ = std::fs::remove_file(&shot);
    chromium(&url(&page), &[format!("--screenshot={}", shot.display())]);
    assert!(std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0) > 10_000);
    println!("ozone report screenshot: {}", shot.display());
    // The README's picture (docs/img/ozone-report.png, that file through `pngquant`): the
    // report's head and the start of its timeline (a later --window-size wins).
    let head = artifacts().join("ozone-report-head.png");
    chromium(
        &url(&page),
        &[
            "--window-size=1200,1150".to_string(),
            format!("--screenshot={}", head.display()),
        ],
    );
    assert!(std::fs::metadata(&head).map(|m| m.len()).unwrap_or(0) > 10_000);
    println!("the README's picture, before pngquant: {}", head.display());
    let html = read(&page).replacen(
        "</style>",
        "section:not(#violations),nav{display:none}</style>",
        1,
    );
    let view = dir.join("violation-view.html");
    std::fs::write(&view, html).unwrap();
    let shot = artifacts().join("ozone-violations.png");
    chromium(&url(&view), &[format!("--screenshot={}", shot.display())]);
    println!("ozone violations screenshot: {}", shot.display());

    // 100 calls answered differently (the run's first 100) and 100 illegal keys.
    let hundred = scratch("cr-ozone-100").join("run");
    copy_dir(&ozone_fixture(), &hundred);
    let path = hundred.join("result.json");
    let mut r: Value = serde_json::from_str(&read(&path)).unwrap();
    for c in r["checks"].as_array_mut().unwrap() {
        if let Some(d) = c["detail"]["duplicates"].as_array_mut() {
            d.retain(|x| x["consistent"] == false);
            d.truncate(100);
            assert_eq!(d.len(), 100);
        }
        if let Some(p) = c["detail"]["partitions"].as_array_mut() {
            let first = p
                .iter()
                .find(|x| x["explanation"].is_object())
                .unwrap()
                .clone();
            p.clear();
            p.extend((0..100).map(|i| {
                let mut x = first.clone();
                x["key"] = json!(format!("k{i}"));
                x
            }));
        }
    }
    std::fs::write(&path, r.to_string()).unwrap();
    report::render(&hundred).unwrap();
    let html = read(&hundred.join("index.html"));
    assert!(html.contains("And 99 more like it"), "the retry witnesses");
    assert!(
        html.contains("And 99 more like it: every illegal key"),
        "the keys"
    );
    let loaded = chromium(
        &url(&hundred.join("index.html")),
        &["--dump-dom".to_string()],
    );
    let px: u32 = regex::Regex::new(r#"data-violations-px="(\d+)""#)
        .unwrap()
        .captures(&loaded.dom)
        .expect("the script measured the violation section")[1]
        .parse()
        .unwrap();
    println!("violation section with 100 + 100 witnesses: {px} px high");
    assert!(px > 300, "{px} px: the section was drawn");
    assert!(px <= 2 * 1000, "{px} px: more than two screens of 1000 px");
    // Every witness is in the page, not left out to fit.
    assert!(loaded.dom.matches("<td class=\"num\">").count() >= 100);
}
