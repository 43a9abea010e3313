//! Readers for the project's `history.jsonl`, Jepsen EDN maps (one a line) and
//! Jepsen log lines. Bad input is an error naming the line, never a panic.

use crate::history::{Event, EventType, History};
use serde_json::{Map, Number, Value};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The format of a history file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Detect from the first non-blank line.
    Auto,
    Jsonl,
    Edn,
    JepsenLog,
}

impl Format {
    pub const NAMES: &'static [&'static str] = &["auto", "jsonl", "edn", "jepsen-log"];
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Format::Auto),
            "jsonl" | "json" => Ok(Format::Jsonl),
            "edn" => Ok(Format::Edn),
            "jepsen-log" | "log" => Ok(Format::JepsenLog),
            _ => Err(format!(
                "unknown history format {s:?} (expected one of: {})",
                Format::NAMES.join(", ")
            )),
        }
    }
}

/// Why a history could not be read.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// A line (1-based) that is not what the format says; the column when known (else 0).
    Line {
        line: usize,
        column: usize,
        message: String,
    },
    /// The file as a whole is not recognisable.
    Format(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read history: {e}"),
            ReadError::Line {
                line,
                column: 0,
                message,
            } => write!(f, "line {line}: {message}"),
            ReadError::Line {
                line,
                column,
                message,
            } => write!(f, "line {line}, column {column}: {message}"),
            ReadError::Format(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    fn at(line: usize, message: impl Into<String>) -> ReadError {
        ReadError::Line {
            line,
            column: 0,
            message: message.into(),
        }
    }

    /// Whether the error is a line cut short at the end of the file (a writer killed
    /// mid-line leaves one): a run folder's history is still checked without it.
    pub fn is_cut_short(&self) -> bool {
        matches!(self, ReadError::Line { message, .. } if message.starts_with(CUT_SHORT))
    }
}

/// The largest history file read (a million operations take about 200 MB).
pub const MAX_HISTORY_BYTES: u64 = 2 << 30;

/// A file refused for its size, in bytes both (`2147483649 bytes, more than the 2147483648
/// bytes (2 GiB) a history file may be`): rounded to MiB, a file one byte over read as the
/// limit itself.
pub fn larger_than(len: u64, limit: u64, what: &str) -> String {
    let unit = if limit.is_multiple_of(1 << 30) {
        format!("{} GiB", limit >> 30)
    } else if limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    };
    format!("{len} bytes, more than the {limit} bytes ({unit}) {what} may be")
}

/// How [`read_history_with`] reads a file.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    pub format: Format,
    /// A last line cut short (a writer killed mid-line) is left out instead of refused: a
    /// run folder's history stays checkable after the harness died.
    pub tolerate_cut_tail: bool,
    /// Shows what can be shown: a line that is no event (a last line cut short included), or
    /// a completion that pairs with no pending invocation of its process, is left out and its
    /// line noted in [`ReadHistory::skipped`] instead of refused, and bytes that are not UTF-8
    /// are replaced. The report of a run folder reads so (a harness that died, a file edited
    /// by hand); a check never does.
    pub skip_bad_lines: bool,
}

impl ReadOptions {
    /// Every line must read and every completion pair: what a check reads.
    pub fn strict(format: Format) -> ReadOptions {
        ReadOptions {
            format,
            tolerate_cut_tail: false,
            skip_bad_lines: false,
        }
    }

    /// Bad lines are left out and noted ([`ReadOptions::skip_bad_lines`]).
    pub fn lenient(format: Format) -> ReadOptions {
        ReadOptions {
            format,
            tolerate_cut_tail: true,
            skip_bad_lines: true,
        }
    }
}

/// A history as read, with the format it was read as and the line left out, if any.
#[derive(Debug)]
pub struct ReadHistory {
    pub history: History,
    /// The format the events were read as (`Auto` resolved).
    pub format: Format,
    /// The last line, cut short and left out ([`ReadOptions::tolerate_cut_tail`]).
    pub cut_tail: Option<usize>,
    /// The (1-based) lines left out ([`ReadOptions::skip_bad_lines`]), in order.
    pub skipped: Vec<usize>,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Jsonl => "jsonl",
            Format::Edn => "edn",
            Format::JepsenLog => "jepsen-log",
        }
    }
}

/// Reads a history file in the given format.
pub fn read_history(path: &Path, format: Format) -> Result<History, ReadError> {
    read_history_with(path, &ReadOptions::strict(format)).map(|r| r.history)
}

/// Reads a history file: a regular file of at most [`MAX_HISTORY_BYTES`].
///
/// JSON lines and EDN maps are read line by line, so the file's text is never held whole
/// (it is about a fifth of the parsed history's size); a Jepsen log, whose format may only
/// show after its first line, is read whole.
pub fn read_history_with(path: &Path, options: &ReadOptions) -> Result<ReadHistory, ReadError> {
    use std::io::BufRead;
    let not_a_file = || {
        ReadError::Format(match options.format {
            Format::Auto => "not a regular file (a history is read from a file)".into(),
            f => format!(
                "not a regular file (a history is read from a file); nothing read as {}",
                f.name()
            ),
        })
    };
    // Asked before opening: opening a named pipe waits for a writer, forever.
    if !std::fs::metadata(path).map_err(ReadError::Io)?.is_file() {
        return Err(not_a_file());
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(not_a_file());
    }
    if meta.len() > MAX_HISTORY_BYTES {
        return Err(ReadError::Format(larger_than(
            meta.len(),
            MAX_HISTORY_BYTES,
            "a history file",
        )));
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let lenient = options.skip_bad_lines;
    let mut format = options.format;
    let mut buf: Vec<u8> = Vec::new();
    let mut events = Vec::new();
    let mut lines = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = Indices::default();
    let mut n = 0;
    // A line cut short, refused only if another line follows it.
    let mut cut: Option<(usize, ReadError)> = None;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(ReadError::Io)? == 0 {
            break;
        }
        n += 1;
        let line = match std::str::from_utf8(&buf) {
            Ok(line) => std::borrow::Cow::Borrowed(line),
            Err(_) if lenient => String::from_utf8_lossy(&buf),
            Err(_) => return Err(ReadError::at(n, "not valid UTF-8")),
        };
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some((_, e)) = cut.take() {
            return Err(e);
        }
        if format == Format::Auto {
            match detect_first(t) {
                Some(f) => format = f,
                None => {
                    let bytes = std::fs::read(path).map_err(ReadError::Io)?;
                    let format = detect_bytes(&bytes)?;
                    return whole(&bytes, format, lenient);
                }
            }
        }
        if format == Format::JepsenLog {
            let bytes = std::fs::read(path).map_err(ReadError::Io)?;
            return whole(&bytes, format, lenient);
        }
        match push_line(format, t, n, &mut events, &mut lines, &mut seen) {
            Err(_) if lenient => skipped.push(n),
            Err(e) if options.tolerate_cut_tail && e.is_cut_short() => cut = Some((n, e)),
            other => other?,
        }
    }
    let (history, unpaired) = pair(events, &lines, lenient)?;
    Ok(ReadHistory {
        history,
        format: if format == Format::Auto {
            Format::Jsonl
        } else {
            format
        },
        cut_tail: cut.map(|(line, _)| line),
        skipped: merged(skipped, unpaired),
    })
}

/// The events' operations ([`History::pair`]), a pairing error naming its line.
fn pair(
    events: Vec<Event>,
    lines: &[usize],
    lenient: bool,
) -> Result<(History, Vec<usize>), ReadError> {
    History::pair(events, lines, lenient)
        .map_err(|e| ReadError::at(lines.get(e.event).copied().unwrap_or(0), e.message))
}

/// Two ascending lists of lines as one.
fn merged(mut a: Vec<usize>, b: Vec<usize>) -> Vec<usize> {
    if !b.is_empty() {
        a.extend(b);
        a.sort_unstable();
    }
    a
}

/// A file read whole (its format shows only past its first line).
fn whole(bytes: &[u8], format: Format, lenient: bool) -> Result<ReadHistory, ReadError> {
    let (history, skipped) = if lenient {
        parse_text(&String::from_utf8_lossy(bytes), format, true)?
    } else {
        (parse_bytes(bytes, format)?, Vec::new())
    };
    Ok(ReadHistory {
        history,
        format,
        cut_tail: None,
        skipped,
    })
}

fn detect_bytes(bytes: &[u8]) -> Result<Format, ReadError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => detect(text),
        // parse_bytes names the line.
        Err(_) => Ok(Format::Jsonl),
    }
}

/// The indices given so far, with the line that gave each.
type Indices = crate::fx::FxHashMap<u64, usize>;

/// Parses one non-blank line and keeps its event, if it has one.
fn push_line(
    format: Format,
    t: &str,
    n: usize,
    events: &mut Vec<Event>,
    lines: &mut Vec<usize>,
    seen: &mut Indices,
) -> Result<(), ReadError> {
    let ev = match format {
        Format::Jsonl => {
            let ev = parse_json_line(t, n)?;
            // An index given twice: two events claim one place in the history. (A history
            // without indices numbers nothing, so only a line that gives one is held to it.)
            if t.contains("\"index\"") {
                if let Some(&first) = seen.get(&ev.index) {
                    return Err(ReadError::at(
                        n,
                        format!(
                            "index {} is given twice (also on line {first}): the history contradicts itself",
                            ev.index
                        ),
                    ));
                }
                seen.insert(ev.index, n);
            }
            Some(ev)
        }
        Format::Edn => parse_edn_line(t, n)?,
        Format::JepsenLog => parse_log_line(t, n)?,
        Format::Auto => unreachable!("resolved by the caller"),
    };
    if let Some(mut ev) = ev {
        if format != Format::Jsonl {
            ev.index = events.len() as u64;
        }
        events.push(ev);
        lines.push(n);
    }
    Ok(())
}

/// Parses a history from raw bytes (UTF-8 is required; the error names the line).
pub fn parse_bytes(bytes: &[u8], format: Format) -> Result<History, ReadError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => parse_str(s, format),
        Err(e) => {
            let line = 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            Err(ReadError::at(line, "not valid UTF-8"))
        }
    }
}

/// Parses a history from text.
pub fn parse_str(text: &str, format: Format) -> Result<History, ReadError> {
    parse_text(text, format, false).map(|(history, _)| history)
}

/// [`parse_str`], and `lenient` ([`ReadOptions::skip_bad_lines`]) the lines left out.
fn parse_text(
    text: &str,
    format: Format,
    lenient: bool,
) -> Result<(History, Vec<usize>), ReadError> {
    let format = match format {
        Format::Auto => detect(text)?,
        f => f,
    };
    let mut events = Vec::new();
    let mut lines = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = Indices::default();
    // A Jepsen log's last line without its line end may be cut short anywhere, even where
    // what is left still reads (`:ok :read 4` of `:ok :read 42`): it is refused, not guessed.
    let mut text = text;
    if format == Format::JepsenLog && !text.is_empty() && !text.ends_with('\n') {
        let start = text.rfind('\n').map_or(0, |i| i + 1);
        if !text[start..].trim().is_empty() {
            let line = 1 + text[..start].matches('\n').count();
            if !lenient {
                return Err(ReadError::at(
                    line,
                    format!(
                        "{CUT_SHORT}: the last line has no line end, so it may end early (a writer stopped mid-line); if it is whole, end it with a line end"
                    ),
                ));
            }
            skipped.push(line);
            text = &text[..start];
        }
    }
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if !t.is_empty() {
            match push_line(format, t, i + 1, &mut events, &mut lines, &mut seen) {
                Err(_) if lenient => skipped.push(i + 1),
                other => other?,
            }
        }
    }
    let (history, unpaired) = pair(events, &lines, lenient)?;
    Ok((history, merged(skipped, unpaired)))
}

/// JSON lines or EDN maps, told by the first non-blank line; `None` otherwise.
fn detect_first(first: &str) -> Option<Format> {
    if !first.starts_with('{') {
        return None;
    }
    if first.contains("\"type\"") || serde_json::from_str::<Value>(first).is_ok() {
        Some(Format::Jsonl)
    } else {
        Some(Format::Edn)
    }
}

/// Detects the format from the first non-blank line.
pub fn detect(text: &str) -> Result<Format, ReadError> {
    let Some((i, first)) = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i, l.trim()))
        .find(|(_, l)| !l.is_empty())
    else {
        // An empty file is an empty history in any format.
        return Ok(Format::Jsonl);
    };
    if let Some(f) = detect_first(first) {
        return Ok(f);
    }
    if text.contains("jepsen.util") {
        return Ok(Format::JepsenLog);
    }
    Err(ReadError::at(
        i + 1,
        "cannot tell the history format: expected a JSON object, an EDN map or a Jepsen log line",
    ))
}

fn parse_json_line(line: &str, n: usize) -> Result<Event, ReadError> {
    serde_json::from_str::<Event>(line).map_err(|e| ReadError::Line {
        line: n,
        column: e.column(),
        message: event_error_words(&e),
    })
}

/// How a line cut short is worded (and recognised by [`ReadError::is_cut_short`]).
const CUT_SHORT: &str = "the event is cut short";

/// A history line's JSON error: a line cut short is said so (a writer that stopped mid-line),
/// anything else is no event.
fn event_error_words(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => {
            format!("{CUT_SHORT}: the line ends inside it (a writer stopped mid-line)")
        }
        _ => format!("not a history event: {}", json_error_words(e)),
    }
}

/// serde_json's error in a reader's words, without its own "at line 1 column N" (the
/// caller names the file, line and column) and without Rust's type names (`u64`,
/// `struct Event`).
pub fn json_error_words(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match e.classify() {
        Category::Eof => "the text ends inside a value (cut short)".into(),
        Category::Io => e.to_string(),
        Category::Syntax | Category::Data => {
            let text = e.to_string();
            serde_words(text.split(" at line ").next().unwrap_or(&text))
        }
    }
}

/// serde's data errors as a user reads them: `invalid type: string "5", expected u64` is
/// `found string "5", expected a whole number from 0 to 18446744073709551615`.
fn serde_words(text: &str) -> String {
    const TYPES: &[(&str, &str)] = &[
        ("u64", "a whole number from 0 to 18446744073709551615"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("usize", "a whole number from 0 to 18446744073709551615"),
        (
            "i64",
            "a whole number from -9223372036854775808 to 9223372036854775807",
        ),
        ("f64", "a number"),
        ("struct Event", "a JSON object (one event)"),
    ];
    let expected = |what: &str| -> String {
        TYPES
            .iter()
            .find(|(rust, _)| *rust == what)
            .map_or(what.to_string(), |(_, ours)| ours.to_string())
    };
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = text.strip_prefix(prefix) {
            if let Some((found, wanted)) = rest.rsplit_once(", expected ") {
                return format!("found {found}, expected {}", expected(wanted));
            }
        }
    }
    if let Some(rest) = text.strip_prefix("duplicate field ") {
        return format!("{rest} is given twice");
    }
    if text == "expected ident" {
        return "expected a value (true, false, null, a number, a string, a list or an object)"
            .into();
    }
    text.replace("unknown variant", "unknown value")
}

/// Parses `{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}`.
/// Events of non-numeric processes (the nemesis) are skipped.
fn parse_edn_line(line: &str, n: usize) -> Result<Option<Event>, ReadError> {
    let mut p = Edn::new(line);
    let v = p.value(0).map_err(|m| {
        // Where the parser stopped, in characters (the line is text; pos counts bytes).
        let before = String::from_utf8_lossy(&line.as_bytes()[..p.pos.min(line.len())]);
        ReadError::Line {
            line: n,
            column: before.chars().count() + 1,
            message: format!("not an EDN event: {m}"),
        }
    })?;
    p.skip_ws();
    if p.pos < p.s.len() {
        return Err(ReadError::at(n, "trailing characters after the EDN map"));
    }
    let Edn_::Map(entries) = v else {
        return Err(ReadError::at(
            n,
            "expected an EDN map {:process .., :type .., :f ..}",
        ));
    };
    let mut process = None;
    let mut kind = None;
    let mut f = None;
    let mut key = None;
    let mut value = Value::Null;
    let mut time = 0u64;
    let mut error = None;
    let mut node = None;
    let mut nemesis = false;
    for (k, v) in entries {
        let Edn_::Keyword(k) = k else { continue };
        match k.as_str() {
            "process" => match v {
                Edn_::Int(i) if i >= 0 => process = Some(i as u64),
                Edn_::Keyword(name) if is_named_process(&name) => nemesis = true,
                _ => {
                    return Err(ReadError::at(
                        n,
                        ":process must be a non-negative integer or a name such as :nemesis",
                    ))
                }
            },
            "type" => {
                kind = Some(event_type(&v).ok_or_else(|| {
                    ReadError::at(n, ":type must be :invoke, :ok, :fail or :info")
                })?)
            }
            "f" => {
                f = Some(
                    name_of(&v)
                        .ok_or_else(|| ReadError::at(n, ":f must be a keyword or string"))?,
                )
            }
            "key" => key = key_of(&v),
            "value" => value = v.into_json(),
            "time" => {
                if let Edn_::Int(t) = v {
                    time = t.max(0) as u64
                }
            }
            "error" => error = Some(v.into_json().to_string()),
            "node" => node = key_of(&v),
            _ => {}
        }
    }
    if nemesis {
        return Ok(None);
    }
    let process = process.ok_or_else(|| ReadError::at(n, "missing :process"))?;
    let kind = kind.ok_or_else(|| ReadError::at(n, "missing :type"))?;
    let f = f.ok_or_else(|| ReadError::at(n, "missing :f"))?;
    let mut ev = Event::new(process, kind, &f, key.as_deref(), value);
    ev.time = time;
    ev.error = error;
    ev.node = node;
    Ok(Some(timed_out_fail(ev)))
}

/// `:fail ... :timed-out` is an unknown outcome, not a definite failure.
fn timed_out_fail(mut ev: Event) -> Event {
    if ev.kind == EventType::Fail && ev.value == Value::String(":timed-out".into()) {
        ev.kind = EventType::Info;
        ev.error = Some("timed-out".into());
        ev.value = Value::Null;
    }
    ev
}

/// A process that is no client (Jepsen's `:nemesis`): a name that starts with a letter. A
/// damaged number (`:3`, `nil`) is not one, so its event is refused rather than skipped.
fn is_named_process(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && !matches!(name, "invoke" | "ok" | "fail" | "info")
}

/// Whether a line not from `jepsen.util` still holds an event's shape (`3 :ok :read 4`): a
/// damaged logger name must not make an event vanish.
fn has_event_shape(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(3).any(|w| {
        (w[0].bytes().all(|b| b.is_ascii_digit()) || w[0].starts_with(':'))
            && matches!(w[1], ":invoke" | ":ok" | ":fail" | ":info")
            && w[2].starts_with(':')
    })
}

/// Parses `INFO  jepsen.util - 3\t:ok\t:read\t4`. Lines without `jepsen.util - ` and
/// without an event's shape are other log output and skipped; nemesis lines are skipped.
fn parse_log_line(line: &str, n: usize) -> Result<Option<Event>, ReadError> {
    let Some(pos) = line.find("jepsen.util - ") else {
        // Jepsen's log holds other loggers' lines; a jepsen.util line, or a line shaped as an
        // event, is an event or damaged.
        if line.contains("jepsen.util") || has_event_shape(line) {
            return Err(ReadError::at(
                n,
                "a jepsen.util line that is no event: expected `jepsen.util - PROCESS<tab>:TYPE<tab>:F<tab>VALUE`",
            ));
        }
        return Ok(None);
    };
    let rest = &line[pos + "jepsen.util - ".len()..];
    let mut fields = rest.trim_start().splitn(2, char::is_whitespace);
    let proc_s = fields.next().unwrap_or("");
    let rest = fields.next().unwrap_or("").trim_start();
    if proc_s.strip_prefix(':').is_some_and(is_named_process) {
        return Ok(None); // :nemesis
    }
    let process: u64 = proc_s
        .parse()
        .map_err(|_| ReadError::at(n, format!("expected a process number, found {proc_s:?}")))?;
    let mut fields = rest.splitn(2, char::is_whitespace);
    let type_s = fields.next().unwrap_or("");
    let rest = fields.next().unwrap_or("").trim_start();
    let kind = match type_s {
        ":invoke" => EventType::Invoke,
        ":ok" => EventType::Ok,
        ":fail" => EventType::Fail,
        ":info" => EventType::Info,
        _ => {
            return Err(ReadError::at(
                n,
                format!("expected :invoke, :ok, :fail or :info, found {type_s:?}"),
            ))
        }
    };
    let mut fields = rest.splitn(2, char::is_whitespace);
    let f_s = fields.next().unwrap_or("");
    let value_s = fields.next().unwrap_or("").trim();
    let Some(f) = f_s.strip_prefix(':').filter(|f| !f.is_empty()) else {
        return Err(ReadError::at(
            n,
            format!("expected an operation like :read, found {f_s:?}"),
        ));
    };
    let value = if value_s.is_empty() {
        Value::Null
    } else {
        let mut p = Edn::new(value_s);
        let v = p.value(0).map_err(|m| ReadError::at(n, m))?;
        p.skip_ws();
        if p.pos < p.s.len() {
            return Err(ReadError::at(n, "trailing characters after the value"));
        }
        v.into_json()
    };
    let mut ev = Event::new(process, kind, f, None, value);
    if kind == EventType::Info && ev.value == Value::String(":timed-out".into()) {
        ev.error = Some("timed-out".into());
        ev.value = Value::Null;
    }
    Ok(Some(timed_out_fail(ev)))
}

fn event_type(v: &Edn_) -> Option<EventType> {
    match name_of(v)?.as_str() {
        "invoke" => Some(EventType::Invoke),
        "ok" => Some(EventType::Ok),
        "fail" => Some(EventType::Fail),
        "info" => Some(EventType::Info),
        _ => None,
    }
}

fn name_of(v: &Edn_) -> Option<String> {
    match v {
        Edn_::Keyword(s) | Edn_::Symbol(s) | Edn_::Str(s) => Some(s.clone()),
        _ => None,
    }
}

fn key_of(v: &Edn_) -> Option<String> {
    match v {
        Edn_::Nil => None,
        Edn_::Str(s) | Edn_::Keyword(s) | Edn_::Symbol(s) => Some(s.clone()),
        other => Some(other.clone().into_json().to_string()),
    }
}

/// A parsed EDN value (the subset histories use).
#[derive(Clone, Debug, PartialEq)]
enum Edn_ {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Keyword(String),
    Symbol(String),
    List(Vec<Edn_>),
    Map(Vec<(Edn_, Edn_)>),
}

impl Edn_ {
    /// Keywords become strings with their colon, so `:timed-out` stays recognisable.
    fn into_json(self) -> Value {
        match self {
            Edn_::Nil => Value::Null,
            Edn_::Bool(b) => Value::Bool(b),
            Edn_::Int(i) => Value::Number(i.into()),
            Edn_::Float(f) => Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Edn_::Str(s) | Edn_::Symbol(s) => Value::String(s),
            Edn_::Keyword(k) => Value::String(format!(":{k}")),
            Edn_::List(items) => Value::Array(items.into_iter().map(Edn_::into_json).collect()),
            Edn_::Map(entries) => {
                let mut m = Map::new();
                for (k, v) in entries {
                    let k = match k {
                        Edn_::Str(s) | Edn_::Symbol(s) => s,
                        Edn_::Keyword(s) => s,
                        other => other.into_json().to_string(),
                    };
                    m.insert(k, v.into_json());
                }
                Value::Object(m)
            }
        }
    }
}

const MAX_DEPTH: usize = 64;

struct Edn<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Edn<'a> {
    fn new(s: &'a str) -> Self {
        Edn {
            s: s.as_bytes(),
            pos: 0,
        }
    }

    fn skip_ws(&mut self) {
        while let Some(&c) = self.s.get(self.pos) {
            if c.is_ascii_whitespace() || c == b',' {
                self.pos += 1;
            } else if c == b';' {
                self.pos = self.s.len();
            } else {
                break;
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Edn_, String> {
        if depth > MAX_DEPTH {
            return Err("EDN nested too deeply".into());
        }
        self.skip_ws();
        let Some(&c) = self.s.get(self.pos) else {
            return Err("unexpected end of line, expected a value".into());
        };
        match c {
            b'{' => {
                self.pos += 1;
                let items = self.seq(b'}', depth)?;
                if items.len() % 2 != 0 {
                    return Err("EDN map with an odd number of forms".into());
                }
                let mut it = items.into_iter();
                let mut entries = Vec::new();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Edn_::Map(entries))
            }
            b'[' => {
                self.pos += 1;
                Ok(Edn_::List(self.seq(b']', depth)?))
            }
            b'(' => {
                self.pos += 1;
                Ok(Edn_::List(self.seq(b')', depth)?))
            }
            b'#' => {
                self.pos += 1;
                match self.s.get(self.pos) {
                    Some(b'{') => {
                        self.pos += 1;
                        Ok(Edn_::List(self.seq(b'}', depth)?))
                    }
                    Some(b'_') => {
                        self.pos += 1;
                        self.value(depth + 1)?;
                        self.value(depth + 1)
                    }
                    _ => {
                        // A tagged literal (#inst "..."): keep the value.
                        self.token();
                        self.value(depth + 1)
                    }
                }
            }
            b'"' => self.string(),
            b':' => {
                self.pos += 1;
                let t = self.token();
                if t.is_empty() {
                    return Err("empty keyword".into());
                }
                Ok(Edn_::Keyword(t.to_string()))
            }
            b'\\' => {
                self.pos += 1;
                let t = self.token();
                let ch = match t {
                    "newline" => "\n".to_string(),
                    "space" => " ".to_string(),
                    "tab" => "\t".to_string(),
                    "" => match self.s.get(self.pos) {
                        Some(_) => {
                            let rest = std::str::from_utf8(&self.s[self.pos..]).unwrap_or("");
                            let c = rest.chars().next().unwrap_or(' ');
                            self.pos += c.len_utf8();
                            c.to_string()
                        }
                        None => return Err("character literal at end of line".into()),
                    },
                    t => t.to_string(),
                };
                Ok(Edn_::Str(ch))
            }
            b'}' | b']' | b')' => Err(format!("unexpected {:?}", c as char)),
            _ => {
                let t = self.token();
                if t.is_empty() {
                    // Not a token character: step over it so the error is precise.
                    return Err(format!("unexpected character at column {}", self.pos + 1));
                }
                Ok(atom(t))
            }
        }
    }

    fn seq(&mut self, close: u8, depth: usize) -> Result<Vec<Edn_>, String> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.s.get(self.pos) {
                None => return Err(format!("missing closing {:?}", close as char)),
                Some(&c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(_) => items.push(self.value(depth + 1)?),
            }
        }
    }

    fn token(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(&c) = self.s.get(self.pos) {
            if c.is_ascii_whitespace() || b",{}[]()\";".contains(&c) {
                break;
            }
            self.pos += 1;
        }
        // Token boundaries are ASCII, so this slice is valid UTF-8.
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("")
    }

    fn string(&mut self) -> Result<Edn_, String> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Err("unterminated string".into());
            };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(self.pos) else {
                        return Err("unterminated string".into());
                    };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'u' => {
                            let hex = self
                                .s
                                .get(self.pos..self.pos + 4)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .and_then(char::from_u32)
                                .ok_or("bad \\u escape in string")?;
                            self.pos += 4;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(hex.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
        String::from_utf8(out)
            .map(Edn_::Str)
            .map_err(|_| "string is not valid UTF-8".into())
    }
}

fn atom(t: &str) -> Edn_ {
    match t {
        "nil" => return Edn_::Nil,
        "true" => return Edn_::Bool(true),
        "false" => return Edn_::Bool(false),
        _ => {}
    }
    let num = t.strip_suffix('N').unwrap_or(t);
    if let Ok(i) = num.parse::<i64>() {
        return Edn_::Int(i);
    }
    let num = t.strip_suffix('M').unwrap_or(t);
    if num.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
        if let Ok(f) = num.parse::<f64>() {
            return Edn_::Float(f);
        }
    }
    Edn_::Symbol(t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Status;

    /// The streaming file reader and the in-memory parser agree, errors and line numbers
    /// included.
    #[test]
    fn files_read_as_their_text_parses() {
        let dir = std::env::temp_dir().join(format!("chaos-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let texts: &[&[u8]] = &[
            b"",
            b"\n\n",
            b"{\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"value\":1}\r\n\r\n{\"process\":0,\"type\":\"ok\",\"f\":\"write\",\"value\":1}",
            b"{:process 0, :type :invoke, :f :read, :value nil}\n{:process 0, :type :ok, :f :read, :value 3}\n",
            b"INFO  jepsen.util - 3\t:invoke\t:read\tnil\nINFO  jepsen.util - 3\t:ok\t:read\t4\n",
            b"garbage\nINFO  jepsen.util - 3\t:invoke\t:read\tnil\n",
            b"nothing to see\n",
            b"{\"process\":0,\"type\":\"invoke\",\"f\":\"read\"}\n{oops\n",
            b"{\"process\":0,\"type\":\"invoke\",\"f\":\"read\"}\n\xff\xfe\n",
            b"{\"process\":0,\"type\":\"ok\",\"f\":\"read\"}\n",
        ];
        for (i, text) in texts.iter().enumerate() {
            let path = dir.join(format!("h{i}"));
            std::fs::write(&path, text).unwrap();
            for format in [Format::Auto, Format::Jsonl, Format::Edn, Format::JepsenLog] {
                let a = read_history(&path, format).map_err(|e| e.to_string());
                let b = parse_bytes(text, format).map_err(|e| e.to_string());
                match (&a, &b) {
                    (Ok(_), _) | (_, Ok(_)) => assert_eq!(a, b, "text {i}, {format:?}"),
                    // The whole text is checked for UTF-8 first; the reader stops at the
                    // first bad line, whatever is wrong with it.
                    (Err(x), Err(y)) => {
                        let line = |m: &str| {
                            m.strip_prefix("line ")
                                .and_then(|r| r.split(':').next()?.parse::<usize>().ok())
                        };
                        assert!(
                            x == y || line(x) <= line(y),
                            "text {i}, {format:?}: {x} / {y}"
                        );
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn edn_lines() {
        let h = parse_str(
            "{:process 0, :type :invoke, :f :append, :key \"0\", :value \"x 0 0 y\"}\n\
             {:process 0, :type :ok, :f :append, :key \"0\", :value \"x 0 0 y\"}\n\
             {:process 1, :type :invoke, :f :txn, :value [[:r 1 nil] [:append 2 3]]}\n",
            Format::Auto,
        )
        .unwrap();
        assert_eq!(h.ops.len(), 2);
        assert_eq!(h.ops[0].key.as_deref(), Some("0"));
        assert_eq!(h.ops[0].status, Status::Ok);
        assert_eq!(h.ops[1].status, Status::Info);
        assert_eq!(
            h.ops[1].value,
            serde_json::json!([[":r", 1, null], [":append", 2, 3]])
        );
    }

    #[test]
    fn log_lines() {
        let h = parse_str(
            "INFO  jepsen.util - 3\t:invoke\t:read\tnil\n\
             INFO  jepsen.util - 3\t:ok\t:read\t4\n\
             INFO  jepsen.util - 1   :invoke :cas    [1 2]\n\
             INFO  jepsen.util - 1   :info   :cas    :timed-out\n\
             INFO  jepsen.util - 2   :invoke :read   nil\n\
             INFO  jepsen.util - 2   :fail   :read   :timed-out\n",
            Format::Auto,
        )
        .unwrap();
        assert_eq!(h.ops.len(), 3);
        assert_eq!(h.ops[0].output, serde_json::json!(4));
        assert_eq!(h.ops[1].value, serde_json::json!([1, 2]));
        assert_eq!(h.ops[1].status, Status::Info);
        assert_eq!(h.ops[2].status, Status::Info);
    }

    /// What a harness that died leaves (an invocation never completed, a last line cut
    /// short) reads leniently with the bad lines noted; so do a line that is no event and a
    /// completion without its invocation, which a strict read refuses.
    #[test]
    fn a_lenient_read_leaves_bad_lines_out_and_notes_them() {
        let dir = std::env::temp_dir().join(format!("chaos-lenient-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.jsonl");
        let text = b"{\"index\":0,\"time\":10,\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"key\":\"k\",\"value\":1}
{\"index\":1,\"time\":20,\"process\":1,\"type\":\"invoke\",\"f\":\"read\",\"key\":\"k\",\"value\":null}
not json
{\"index\":2,\"time\":30,\"process\":0,\"type\":\"ok\",\"f\":\"write\",\"key\":\"k\",\"value\":1}
{\"index\":3,\"time\":35,\"process\":7,\"type\":\"ok\",\"f\":\"read\",\"key\":\"k\",\"value\":1}
{\"index\":4,\"time\":40,\"process\":2,\"type\":\"invoke\",\"f\":\"write\",\"key\":\"k\xff\",\"value\":2}
{\"index\":5,\"time\":50,\"process\":1,\"type\":\"ok\",\"f\":\"re";
        std::fs::write(&path, text).unwrap();
        let read = read_history_with(&path, &ReadOptions::lenient(Format::Jsonl)).unwrap();
        assert_eq!(read.skipped, [3, 5, 7]);
        assert_eq!(read.cut_tail, None);
        let h = &read.history;
        assert_eq!(h.events.len(), 4);
        assert_eq!(h.ops.len(), 3);
        assert_eq!((h.ops[0].status, h.ops[0].complete), (Status::Ok, Some(2)));
        // The read's completion was cut short: its outcome is unknown.
        assert_eq!((h.ops[1].status, h.ops[1].complete), (Status::Info, None));
        assert_eq!(h.ops[1].line, 2);
        assert_eq!(h.ops[2].key.as_deref(), Some("k\u{fffd}"));
        assert_eq!((h.ops[2].line, h.ops[2].invoke), (6, 3));
        // Strictly, the first bad line is refused.
        let e = read_history(&path, Format::Jsonl).unwrap_err().to_string();
        assert!(
            e.starts_with("line 3, column 2: not a history event"),
            "{e}"
        );
        // Only the cut tail is tolerated by a run folder's check; an unpaired completion is not.
        let cut_only = ReadOptions {
            tolerate_cut_tail: true,
            ..ReadOptions::strict(Format::Jsonl)
        };
        let lines: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
        let keep = |n: &[usize]| -> Vec<u8> {
            n.iter()
                .map(|i| lines[i - 1])
                .collect::<Vec<_>>()
                .join(&b'\n')
        };
        std::fs::write(&path, keep(&[1, 2, 4, 7])).unwrap();
        let read = read_history_with(&path, &cut_only).unwrap();
        assert_eq!((read.cut_tail, read.skipped.len()), (Some(4), 0));
        assert_eq!(read.history.ops[1].status, Status::Info);
        std::fs::write(&path, keep(&[1, 2, 4, 5])).unwrap();
        let e = read_history_with(&path, &cut_only).unwrap_err().to_string();
        assert_eq!(
            e,
            "line 4: ok completion for process 7 which has no pending invocation"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn jsonl_round_trip() {
        let line = r#"{"index":0,"time":1234567,"process":3,"type":"invoke","f":"cas","key":"k1","value":[1,2],"extra":1}"#;
        let h = parse_str(line, Format::Auto).unwrap();
        let out = serde_json::to_string(&h.events[0]).unwrap();
        assert_eq!(
            out,
            r#"{"index":0,"time":1234567,"process":3,"type":"invoke","f":"cas","key":"k1","value":[1,2]}"#
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_str(
            "{\"process\":1,\"type\":\"invoke\",\"f\":\"read\"}\n{bad",
            Format::Jsonl,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("line 2, column 2: "), "{e}");
        let e = parse_str(
            "{\"process\":1,\"type\":\"invoke\",\"f\":\"read\"}\n{\"process\":1,\"ty",
            Format::Jsonl,
        )
        .unwrap_err();
        assert!(e.is_cut_short(), "{e}");
        assert!(
            e.to_string()
                .starts_with("line 2, column 16: the event is cut short"),
            "{e}"
        );
        let e = parse_str("INFO  jepsen.util - 3\t:ok\t:read\t4\n", Format::JepsenLog).unwrap_err();
        assert!(e.to_string().starts_with("line 1:"), "{e}");
        let e = parse_str("hello\n", Format::Auto).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
