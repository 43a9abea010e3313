//! converge.json: what the nodes answered the converge probes after the final heal (each node's
//! applied index and, when the scenario asked, its answer to a lookup of every key), written by
//! the run (`observe::record_convergence`, in the runner) and read by the `converge` check and the
//! `compared: { converge }` precondition.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;

/// The file's name in a run folder.
pub const CONVERGE: &str = "converge.json";

/// Node -> key -> that node's answer to a lookup of the key (as its system words it).
pub type Lookups = BTreeMap<String, BTreeMap<String, Value>>;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Converged {
    /// Node -> its applied index; None: the node did not answer. None as a whole: the file
    /// holds none (or none that reads).
    #[serde(default, deserialize_with = "super::lenient")]
    pub applied: Option<BTreeMap<String, Option<u64>>>,
    /// The lookups, when the scenario asked for them (`lookups: true`).
    #[serde(
        default,
        deserialize_with = "super::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub lookups: Option<Lookups>,
}

impl Converged {
    /// Writes converge.json (pretty JSON).
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        super::write_json(run_dir, CONVERGE, self)
    }

    /// A run folder's converge.json, or why it cannot be read (missing, among others: a system
    /// without the probe writes none).
    pub fn read(run_dir: &Path) -> Result<Converged> {
        super::read_json(run_dir, CONVERGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_is_written_reads_back() {
        let dir = std::env::temp_dir().join(format!("chaos-converge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut converged = Converged {
            applied: Some(BTreeMap::from([
                ("om1".to_string(), Some(50)),
                ("om2".to_string(), None),
            ])),
            lookups: None,
        };
        converged.write(&dir).unwrap();
        let text = std::fs::read_to_string(dir.join(CONVERGE)).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"applied": {"om1": 50, "om2": null}})
        );
        assert_eq!(Converged::read(&dir).unwrap(), converged);
        let answers = BTreeMap::from([("k1".to_string(), json!({"length": 2048, "open": false}))]);
        converged.lookups = Some(BTreeMap::from([("om1".to_string(), answers)]));
        converged.write(&dir).unwrap();
        assert_eq!(Converged::read(&dir).unwrap(), converged);
        // Parts that do not read are absent; the rest still reads.
        std::fs::write(
            dir.join(CONVERGE),
            r#"{"applied": {"om1": 5}, "lookups": 3}"#,
        )
        .unwrap();
        let read = Converged::read(&dir).unwrap();
        assert_eq!((read.applied.unwrap().len(), read.lookups), (1, None));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
