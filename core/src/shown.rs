//! A value a user gave, as a message shows it: control characters escaped (U+0085 or a line
//! break never splits a message across lines) and a long value cut, with its length said.

/// How many characters of a value a message shows.
pub const SHOWN_CHARS: usize = 80;

/// Whether a message shows `c` escaped: a control character, or a line or paragraph separator
/// (U+0085, U+2028 or a line break would split a message across lines).
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `text` with its control characters escaped (`\n`, `\u{85}`) and nothing else changed: a
/// message that may hold a value from a file stays one line.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `value` quoted, its control characters escaped (`\n`, `\u{85}`), cut after
/// [`SHOWN_CHARS`] characters with its whole length said.
pub fn shown(value: &str) -> String {
    let total = value.chars().count();
    let mut out = String::from("`");
    for c in value.chars().take(SHOWN_CHARS) {
        if needs_escape(c) || c == '`' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('`');
    if total > SHOWN_CHARS {
        out.push_str(&format!(
            " (cut: the first {SHOWN_CHARS} of {total} characters)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_long_values_cut() {
        assert_eq!(shown("a\u{85}b\0c\n"), "`a\\u{85}b\\u{0}c\\n`");
        let long = "x".repeat(100_000);
        let s = shown(&long);
        assert!(
            s.ends_with("(cut: the first 80 of 100000 characters)"),
            "{s}"
        );
        assert!(s.len() < 140);
        assert_eq!(escaped("a\u{85}b\u{2028}`é\n"), "a\\u{85}b\\u{2028}`é\\n");
    }
}
