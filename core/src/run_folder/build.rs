//! build.json: which build of the system a run played on, written by `chaos compare` into each
//! of its run folders and read by the index (a scenario's rates are per build).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file's name in a run folder.
pub const BUILD: &str = "build.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Build {
    /// The build as `--build` named it (`2.2.0`, `2.2.0+fixes/X.patch`, `image:TAG`).
    #[serde(default, deserialize_with = "super::lenient")]
    pub build: Option<String>,
    /// The image the cluster ran (None: the scenario's own).
    #[serde(default, deserialize_with = "super::lenient")]
    pub image: Option<String>,
}

impl Build {
    /// Writes build.json (pretty JSON, `image` null when the scenario's own).
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        super::write_json(run_dir, BUILD, self)
    }

    /// A run folder's build's name; None when it has no build.json (not a comparison's run) or
    /// one that does not read.
    pub fn of_run(run_dir: &Path) -> Option<String> {
        super::read_json::<Build>(run_dir, BUILD).ok()?.build
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_written_reads_back() {
        let dir = std::env::temp_dir().join(format!("chaos-build-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(Build::of_run(&dir), None);
        let build = Build {
            build: Some("2.2.0+fixes/HDDS-16767.patch".into()),
            image: None,
        };
        build.write(&dir).unwrap();
        let text = std::fs::read_to_string(dir.join(BUILD)).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::json!({"build": "2.2.0+fixes/HDDS-16767.patch", "image": null})
        );
        assert_eq!(
            Build::of_run(&dir).as_deref(),
            Some("2.2.0+fixes/HDDS-16767.patch")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
