//! Where a part of a JSON document is: its path (`counterexample.action[3][1].name`) and, found
//! again in the text only when an error needs it, its line and column. serde_json's values
//! keep no positions, and a reader that fails is rare, so the text is scanned once then.

use std::fmt;

/// One step of a path: a key of an object or an index of an array.
#[derive(Clone, Copy, Debug)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// The path of a value being read, as a chain of borrowed frames: descending costs nothing,
/// and the path is only written out for an error.
#[derive(Clone, Copy, Debug)]
pub(crate) struct At<'a> {
    parent: Option<&'a At<'a>>,
    segment: Option<Segment<'a>>,
}

impl At<'static> {
    /// The whole document.
    pub(crate) const ROOT: At<'static> = At {
        parent: None,
        segment: None,
    };
}

impl<'a> At<'a> {
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At {
            parent: Some(self),
            segment: Some(Segment::Key(key)),
        }
    }

    pub(crate) fn index(&self, index: usize) -> At<'_> {
        At {
            parent: Some(self),
            segment: Some(Segment::Index(index)),
        }
    }

    fn segments(&self) -> Vec<Segment<'a>> {
        let mut out = Vec::new();
        let mut frame = Some(self);
        while let Some(at) = frame {
            out.extend(at.segment);
            frame = at.parent;
        }
        out.reverse();
        out
    }

    /// The byte offset in `text` (the document this path is of) where the value starts, when
    /// the text has it.
    pub(crate) fn offset_in(&self, text: &str) -> Option<usize> {
        offset_of(text.as_bytes(), &self.segments())
    }
}

/// `counterexample.action[3][1].name`; a key that is not a plain name is written as a JSON
/// string in brackets (`states[2]["odd key"]`); `mbt::actionTaken` stays plain.
impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, segment) in self.segments().into_iter().enumerate() {
            match segment {
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Key(key) if is_plain(key) => {
                    if n > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Segment::Key(key) => {
                    let json = serde_json::Value::String(key.to_string());
                    write!(f, "[{json}]")?;
                }
            }
        }
        Ok(())
    }
}

fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '#' | '-'))
}

/// The line and column (from 1, the column in characters) of byte `offset` of `text`.
pub(crate) fn line_and_column(text: &str, offset: usize) -> Option<(usize, usize)> {
    let before = text.get(..offset)?;
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let column = before.get(line_start..)?.chars().count() + 1;
    Some((line, column))
}

/// Follows `segments` through JSON `text` (already known to parse) to the start of the value
/// they name. Where an object repeats a key, the last one counts, as it does for serde_json.
fn offset_of(text: &[u8], segments: &[Segment]) -> Option<usize> {
    let mut at = skip_space(text, 0);
    for segment in segments {
        at = match *segment {
            Segment::Key(key) => member_value(text, at, key)?,
            Segment::Index(index) => element(text, at, index)?,
        };
    }
    Some(at)
}

fn member_value(text: &[u8], object: usize, wanted: &str) -> Option<usize> {
    if *text.get(object)? != b'{' {
        return None;
    }
    let mut at = skip_space(text, object + 1);
    let mut found = None;
    if *text.get(at)? == b'}' {
        return None;
    }
    loop {
        let key_end = skip_string(text, at)?;
        let key: String = serde_json::from_slice(text.get(at..key_end)?).ok()?;
        at = skip_space(text, key_end);
        if *text.get(at)? != b':' {
            return None;
        }
        at = skip_space(text, at + 1);
        if key == wanted {
            found = Some(at);
        }
        at = skip_space(text, skip_value(text, at)?);
        match *text.get(at)? {
            b',' => at = skip_space(text, at + 1),
            b'}' => return found,
            _ => return None,
        }
    }
}

fn element(text: &[u8], array: usize, wanted: usize) -> Option<usize> {
    if *text.get(array)? != b'[' {
        return None;
    }
    let mut at = skip_space(text, array + 1);
    for _ in 0..wanted {
        at = skip_space(text, skip_value(text, at)?);
        if *text.get(at)? != b',' {
            return None;
        }
        at = skip_space(text, at + 1);
    }
    (*text.get(at)? != b']').then_some(at)
}

fn skip_space(text: &[u8], mut at: usize) -> usize {
    while matches!(text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The offset just past the string that starts at `at`.
fn skip_string(text: &[u8], at: usize) -> Option<usize> {
    if *text.get(at)? != b'"' {
        return None;
    }
    let mut at = at + 1;
    loop {
        match *text.get(at)? {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
}

/// The offset just past the value that starts at `at`.
fn skip_value(text: &[u8], at: usize) -> Option<usize> {
    match *text.get(at)? {
        b'"' => skip_string(text, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match *text.get(at)? {
                    b'"' => {
                        at = skip_string(text, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let mut end = at;
            while !matches!(
                text.get(end),
                None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                end += 1;
            }
            Some(end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
  "a": [1, {"b": "x,]}", "c": [10, 20]}],
  "odd key": true,
  "a2": {"d": 1, "d": 2}
}"#;

    fn position(at: &At) -> Option<(usize, usize)> {
        line_and_column(TEXT, at.offset_in(TEXT)?)
    }

    #[test]
    fn finds_keys_and_indexes_past_strings_that_hold_brackets() {
        let a = At::ROOT.key("a");
        let second = a.index(1);
        let c = second.key("c");
        assert_eq!(position(&c.index(1)), Some((2, 36)));
        assert_eq!(position(&a), Some((2, 8)));
        assert_eq!(c.index(1).to_string(), "a[1].c[1]");
    }

    #[test]
    fn a_repeated_key_is_the_last_one_as_serde_json_reads_it() {
        let a2 = At::ROOT.key("a2");
        assert_eq!(position(&a2.key("d")), Some((4, 23)));
    }

    #[test]
    fn odd_keys_are_written_as_json_strings_and_missing_parts_have_no_position() {
        let odd = At::ROOT.key("odd key");
        assert_eq!(odd.to_string(), r#"["odd key"]"#);
        assert_eq!(position(&odd), Some((3, 14)));
        let a = At::ROOT.key("a");
        assert_eq!(position(&a.index(2)), None);
        assert_eq!(position(&At::ROOT.key("nowhere")), None);
        assert_eq!(
            At::ROOT.key("mbt::actionTaken").to_string(),
            "mbt::actionTaken"
        );
    }
}
