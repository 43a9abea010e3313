//! Paths and commands as a run's files show them (the report page, summary.md, the JUnit
//! file, result.json's and compare.json's reproduce commands): a path inside the repository
//! relative to its root, so that a command copied from a report runs in any clone; a word of a
//! command quoted for a POSIX shell when it needs to be.

use std::path::{Path, PathBuf};

/// `path` relative to the root of the repository that holds it (the nearest folder above it
/// with a `.git`), or as an absolute path when no repository holds it. A relative `path`
/// counts from the working directory.
pub fn repo_relative(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(cwd) => cwd.join(path),
            Err(_) => return path.to_path_buf(),
        }
    };
    // Resolved when it exists (symbolic links, `..`); else lexically, without `.` and `..`.
    let absolute = absolute
        .canonicalize()
        .unwrap_or_else(|_| lexical(&absolute));
    let mut dir = absolute.parent();
    while let Some(d) = dir {
        if d.join(".git").exists() {
            if let Ok(rel) = absolute.strip_prefix(d) {
                return rel.to_path_buf();
            }
        }
        dir = d.parent();
    }
    absolute
}

fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A word of a shell command: as it is when it needs no quoting, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Words joined into one command line, each quoted as [`shell_word`] says.
pub fn command_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_word(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_the_repository_is_shown_from_its_root() {
        let root = std::env::temp_dir().join(format!("chaos-shown-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.join("repo/scenarios/ozone")).unwrap();
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        let root = root.canonicalize().unwrap();
        let file = root.join("repo/scenarios/ozone/a.yaml");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(repo_relative(&file), Path::new("scenarios/ozone/a.yaml"));
        // Through `..`, and for a file not written yet (a patch named before it exists).
        let through = root.join("repo/scenarios/../scenarios/ozone/a.yaml");
        assert_eq!(repo_relative(&through), Path::new("scenarios/ozone/a.yaml"));
        assert_eq!(
            repo_relative(&root.join("repo/fixes/../fixes/new.patch")),
            Path::new("fixes/new.patch")
        );
        // Outside every repository: absolute.
        let outside = root.join("elsewhere/b.yaml");
        assert_eq!(repo_relative(&outside), outside);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn words_are_quoted_only_when_they_need_it() {
        assert_eq!(
            command_line(&[
                "chaos",
                "compare",
                "2.2.0+fixes/A.patch",
                "set:K=a b",
                "it's"
            ]),
            r"chaos compare 2.2.0+fixes/A.patch 'set:K=a b' 'it'\''s'"
        );
        assert_eq!(shell_word(""), "''");
    }
}
