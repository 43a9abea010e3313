//! The harness's errors, each mapped to one of Jepsen's exit codes so a CI job can tell
//! "the system is broken" (1) from "the test is broken" (254, 255).

use std::fmt;
use std::path::PathBuf;

pub const EXIT_OK: i32 = 0;
pub const EXIT_VIOLATION: i32 = 1;
pub const EXIT_UNKNOWN: i32 = 2;
/// 128 + SIGINT, as shells report it: the run was interrupted and cleaned up.
pub const EXIT_INTERRUPTED: i32 = 130;
pub const EXIT_BAD_INPUT: i32 = 254;
pub const EXIT_INFRA: i32 = 255;

#[derive(Debug)]
pub enum HarnessError {
    /// Scenario problems, each with file:line:column.
    Scenario(Vec<ScenarioError>),
    /// Bad arguments or unreadable input.
    BadInput(String),
    /// Docker, images, nodes that never got ready: the test could not run.
    Infra(String),
    /// Ctrl-C or SIGTERM; what was recorded is kept.
    Interrupted(String),
}

impl HarnessError {
    pub fn exit_code(&self) -> i32 {
        match self {
            HarnessError::Scenario(_) | HarnessError::BadInput(_) => EXIT_BAD_INPUT,
            HarnessError::Infra(_) => EXIT_INFRA,
            HarnessError::Interrupted(_) => EXIT_INTERRUPTED,
        }
    }

    pub fn infra(message: impl Into<String>) -> Self {
        HarnessError::Infra(message.into())
    }
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HarnessError::Scenario(list) => {
                for (i, e) in list.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            HarnessError::BadInput(m) => write!(f, "{m}"),
            HarnessError::Infra(m) => write!(f, "{m}"),
            HarnessError::Interrupted(m) => write!(f, "interrupted: {m}"),
        }
    }
}

impl std::error::Error for HarnessError {}

pub type Result<T, E = HarnessError> = std::result::Result<T, E>;

/// A scenario problem with where it is: `file:line:column: key.path: message`.
#[derive(Debug, Clone)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: u64,
    pub column: u64,
    pub path: String,
    pub message: String,
}

/// `FILE:line:column: key.path: message`, one line whatever the file held: control
/// characters in a value it echoes are escaped.
impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::shown::escaped;
        write!(f, "{}", escaped(&self.file.display().to_string()))?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", escaped(&self.path))?;
        }
        write!(f, ": {}", escaped(&self.message))
    }
}

impl std::error::Error for ScenarioError {}
