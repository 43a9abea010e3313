//! The subset of docker-compose.yml the harness understands. The same file works with
//! `docker compose --profile <p> up` for a person poking by hand; anything outside the subset is
//! an error here rather than silently ignored.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chaos_core::shown::shown;
use indexmap::IndexMap;
use serde::de::{self, Deserializer};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct ComposeFile {
    #[serde(default)]
    pub name: Option<String>,
    /// Services in file order.
    pub services: IndexMap<String, Service>,
    #[serde(default)]
    pub volumes: BTreeMap<String, Option<serde::de::IgnoredAny>>,
    /// Extension fields (`x-...`) are allowed at the top level, as in Compose.
    #[serde(flatten)]
    pub extensions: BTreeMap<String, Extension>,
    #[serde(skip)]
    pub dir: PathBuf,
}

/// A top-level key that must be an `x-` extension.
#[derive(Debug)]
pub struct Extension;

impl<'de> Deserialize<'de> for Extension {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Extension)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Service {
    pub image: Option<String>,
    pub build: Option<Build>,
    #[serde(default, deserialize_with = "command_line")]
    pub command: Option<Vec<String>>,
    #[serde(default, deserialize_with = "command_line")]
    pub entrypoint: Option<Vec<String>>,
    #[serde(default)]
    pub environment: Environment,
    pub hostname: Option<String>,
    #[serde(default)]
    pub volumes: Vec<String>,
    #[serde(default)]
    pub ports: Vec<String>,
    pub healthcheck: Option<Healthcheck>,
    #[serde(default)]
    pub depends_on: DependsOn,
    #[serde(default)]
    pub profiles: Vec<String>,
    #[serde(default)]
    pub cap_add: Vec<String>,
    #[serde(default)]
    pub devices: Vec<String>,
    /// The harness's own settings for this node.
    #[serde(default, rename = "x-chaos")]
    pub x_chaos: XChaos,
    /// The service's key in the file (a node may go by another name: `x-chaos.node`).
    #[serde(skip)]
    pub compose_name: String,
}

impl Service {
    /// The name other containers reach this one by, as `docker compose` gives it: the service's
    /// key in the file.
    pub fn dns_name<'a>(&'a self, node: &'a str) -> &'a str {
        if self.compose_name.is_empty() {
            node
        } else {
            &self.compose_name
        }
    }
}

/// `x-chaos:` on a service.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XChaos {
    /// Directories mounted through chaosfs (fsync faults, lost un-fsynced writes). Such a node
    /// gets /dev/fuse and SYS_ADMIN; no other node does.
    #[serde(default)]
    pub fs: Vec<String>,
    /// The name scenarios, logs and reports use for this node, when it is not the service's
    /// key: two variants of one cluster in one file (compose service names are unique across
    /// profiles) keep the same node names, e.g. `scmha-om1` in profile `ozone-scm-ha` is node
    /// `om1` as `om1` is in profile `ozone`. Unique within each profile.
    #[serde(default)]
    pub node: Option<String>,
    /// Whether clock-skew faults can reach this node's program: `true` when its image has
    /// Debian's libfaketime and the program reads the clock through libc; a sentence saying why
    /// not otherwise (etcd: a Go program). Undeclared means not.
    #[serde(default, rename = "clock-skew")]
    pub clock_skew: ClockSkewSupport,
    /// The container port of the Byteman agent the node's JVM loads at start (the JVM faults:
    /// jvm-delay, jvm-hold, ...); the port must be published too. Undeclared: no JVM faults.
    #[serde(default)]
    pub jvm: Option<u16>,
}

/// `x-chaos.clock-skew`: `true`, `{ preload: [libraries loaded before libfaketime] }`, or why
/// this node cannot take clock skew.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(untagged)]
pub enum ClockSkewSupport {
    #[default]
    Undeclared,
    Declared(bool),
    Refused(String),
    With {
        preload: Vec<String>,
    },
}

impl ClockSkewSupport {
    /// Libraries the image needs in LD_PRELOAD ahead of libfaketime.
    pub fn preload(&self) -> &[String] {
        match self {
            ClockSkewSupport::With { preload } => preload,
            _ => &[],
        }
    }

    pub fn support(&self) -> Result<(), String> {
        match self {
            ClockSkewSupport::Declared(true) | ClockSkewSupport::With { .. } => Ok(()),
            ClockSkewSupport::Refused(why) => Err(why.clone()),
            ClockSkewSupport::Undeclared | ClockSkewSupport::Declared(false) => Err(
                "its compose service does not declare `x-chaos: { clock-skew: true }` (its image \
                 needs Debian's libfaketime, and its program must read the clock through libc)"
                    .into(),
            ),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Build {
    pub context: String,
    pub dockerfile: Option<String>,
}

impl<'de> Deserialize<'de> for Build {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Long {
            context: String,
            dockerfile: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Short(String),
            Long(Long),
        }
        match Either::deserialize(d)
            .map_err(|_| de::Error::custom("expected a path or { context, dockerfile }"))?
        {
            Either::Short(context) => Ok(Build {
                context,
                dockerfile: None,
            }),
            Either::Long(l) => Ok(Build {
                context: l.context,
                dockerfile: l.dockerfile,
            }),
        }
    }
}

#[derive(Debug, Default)]
pub struct Environment(pub Vec<(String, String)>);

impl<'de> Deserialize<'de> for Environment {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Scalar {
            S(String),
            I(i64),
            B(bool),
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            List(Vec<String>),
            Map(IndexMap<String, Option<Scalar>>),
        }
        let parsed = Either::deserialize(d).map_err(|_| {
            de::Error::custom("expected a list of KEY=VALUE or a map of KEY: VALUE")
        })?;
        Ok(Environment(match parsed {
            Either::List(items) => items
                .into_iter()
                .map(|item| match item.split_once('=') {
                    Some((k, v)) => (k.to_string(), v.to_string()),
                    None => (item, String::new()),
                })
                .collect(),
            Either::Map(pairs) => pairs
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        None => String::new(),
                        Some(Scalar::S(s)) => s,
                        Some(Scalar::I(i)) => i.to_string(),
                        Some(Scalar::B(b)) => b.to_string(),
                    };
                    (k, v)
                })
                .collect(),
        }))
    }
}

#[derive(Debug, Default)]
pub struct DependsOn(pub Vec<String>);

impl<'de> Deserialize<'de> for DependsOn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            List(Vec<String>),
            Map(IndexMap<String, serde::de::IgnoredAny>),
        }
        match Either::deserialize(d)
            .map_err(|_| de::Error::custom("expected a list or a map of service names"))?
        {
            Either::List(l) => Ok(DependsOn(l)),
            Either::Map(m) => Ok(DependsOn(m.into_iter().map(|(k, _)| k).collect())),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Healthcheck {
    #[serde(deserialize_with = "health_test")]
    pub test: Vec<String>,
    #[serde(default, deserialize_with = "compose_duration")]
    pub interval: Option<Duration>,
    #[serde(default, deserialize_with = "compose_duration")]
    pub timeout: Option<Duration>,
    pub retries: Option<i64>,
    #[serde(default, deserialize_with = "compose_duration")]
    pub start_period: Option<Duration>,
}

fn command_line<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Line(String),
        List(Vec<String>),
    }
    match Option::<Either>::deserialize(d)
        .map_err(|_| de::Error::custom("expected a command line or a list of arguments"))?
    {
        None => Ok(None),
        Some(Either::List(l)) => Ok(Some(l)),
        Some(Either::Line(line)) => shell_words::split(&line)
            .map(Some)
            .map_err(|e| de::Error::custom(format!("cannot split {}: {e}", shown(&line)))),
    }
}

/// `["CMD", ...]`, `["CMD-SHELL", "..."]` or a string (run with a shell), as Docker takes them.
fn health_test<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Line(String),
        List(Vec<String>),
    }
    match Either::deserialize(d).map_err(|_| de::Error::custom("expected a list or a string"))? {
        Either::Line(line) => Ok(vec!["CMD-SHELL".to_string(), line]),
        Either::List(l) => Ok(l),
    }
}

fn compose_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    parse_compose_duration(&text)
        .map(Some)
        .ok_or_else(|| de::Error::custom(format!("{} is not a duration like 1m30s", shown(&text))))
}

/// Compose durations chain units: `1m30s`, `500ms`, `2s`.
fn parse_compose_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "us" => number / 1e6,
            "ms" => number / 1e3,
            "s" => number,
            "m" => number * 60.0,
            "h" => number * 3600.0,
            _ => return None,
        };
        // Past 30 days is no healthcheck timing (and would overflow a `Duration`).
        if !seconds.is_finite() || seconds > super::units::MAX_DURATION_S {
            return None;
        }
        total = total.checked_add(Duration::from_secs_f64(seconds))?;
        rest = &rest[unit_len..];
    }
    Some(total)
}

#[derive(Debug)]
pub struct ComposeError(pub String);

impl fmt::Display for ComposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ComposeError {}

/// One published port: the container port, on 127.0.0.1, with a fixed or a random host port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSpec {
    pub host: Option<u16>,
    pub container: u16,
}

impl ComposeFile {
    pub fn load(path: &Path) -> Result<ComposeFile, ComposeError> {
        let text = super::read_file(path).map_err(|e| ComposeError(e.to_string()))?;
        Self::parse(path, &text)
    }

    /// Parses a compose file's text; `path` names it in messages and is the folder its
    /// relative paths (build contexts, volumes) start from.
    pub fn parse(path: &Path, text: &str) -> Result<ComposeFile, ComposeError> {
        let mut file: ComposeFile = super::wording::parse_yaml(text).map_err(|e| {
            ComposeError(format!(
                "{}:{}:{}: {}: {}",
                path.display(),
                e.line,
                e.column,
                e.path,
                e.message
            ))
        })?;
        if let Some(bad) = file.extensions.keys().find(|k| !k.starts_with("x-")) {
            return Err(ComposeError(format!(
                "{}: top-level key {} is not supported (services, volumes, name, x-*)",
                path.display(),
                shown(bad)
            )));
        }
        for service in file.services.values_mut() {
            service.image = service
                .image
                .take()
                .map(|i| interpolate(&i, |v| std::env::var(v).ok()));
        }
        for (name, service) in file.services.iter_mut() {
            service.compose_name = name.clone();
        }
        for profile in file.profiles() {
            let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
            for (name, service) in file.services.iter() {
                if !service.profiles.contains(&profile) {
                    continue;
                }
                let node = service.x_chaos.node.as_deref().unwrap_or(name);
                if let Some(other) = seen.insert(node, name) {
                    return Err(ComposeError(format!(
                        "{}: services {} and {} of profile `{profile}` are both node {} (x-chaos.node names a node once per profile)",
                        path.display(),
                        shown(other),
                        shown(name),
                        shown(node)
                    )));
                }
            }
        }
        for (name, service) in &file.services {
            // A node's log is `logs/<node>.log` in the run folder: its name is one safe
            // path component, as a scenario's name is.
            let node = service.x_chaos.node.as_deref().unwrap_or(name);
            if let Some(problem) = super::name_problem(node) {
                return Err(ComposeError(format!(
                    "{}: service {}: the node name {problem}",
                    path.display(),
                    shown(name)
                )));
            }
            if service.image.is_none() {
                return Err(ComposeError(format!(
                    "{}: service {} needs an image (the harness names and builds images by tag)",
                    path.display(),
                    shown(name)
                )));
            }
            for port in &service.ports {
                parse_port(port).map_err(|e| {
                    ComposeError(format!("{}: service {}: {e}", path.display(), shown(name)))
                })?;
            }
        }
        file.dir = path
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(file)
    }

    pub fn profile_services(&self, profile: &str) -> Vec<String> {
        self.services
            .iter()
            .filter(|(_, s)| s.profiles.iter().any(|p| p == profile))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The profile's nodes, by the names scenarios use (`x-chaos.node`, or the service's key),
    /// in file order.
    pub fn profile_nodes(&self, profile: &str) -> Vec<String> {
        self.services
            .iter()
            .filter(|(_, s)| s.profiles.iter().any(|p| p == profile))
            .map(|(name, s)| s.x_chaos.node.clone().unwrap_or_else(|| name.clone()))
            .collect()
    }

    /// The file as one profile's cluster: only its services, each under its node name (see
    /// [`XChaos::node`]), their `depends_on` naming nodes too. The service keeps its key in
    /// `compose_name`: that is the name the other containers resolve it by.
    pub fn into_profile(mut self, profile: &str) -> ComposeFile {
        let renamed: BTreeMap<String, String> = self
            .services
            .iter()
            .filter(|(_, s)| s.profiles.iter().any(|p| p == profile))
            .map(|(name, s)| {
                let node = s.x_chaos.node.clone().unwrap_or_else(|| name.clone());
                (name.clone(), node)
            })
            .collect();
        let services = std::mem::take(&mut self.services);
        self.services = services
            .into_iter()
            .filter_map(|(name, mut service)| {
                let node = renamed.get(&name)?.clone();
                for dep in service.depends_on.0.iter_mut() {
                    if let Some(to) = renamed.get(dep.as_str()) {
                        *dep = to.clone();
                    }
                }
                Some((node, service))
            })
            .collect();
        self
    }

    pub fn profiles(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .services
            .iter()
            .flat_map(|(_, s)| s.profiles.iter().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    pub fn service(&self, name: &str) -> Option<&Service> {
        self.services.get(name)
    }
}

/// Compose's `${NAME}` and `${NAME:-default}` in an image tag, the default itself possibly holding
/// another variable (`${OZONE_IMAGE:-chaos-ozone:${OZONE_VERSION:-2.2.0}}`, as docker compose v2
/// reads it), from the harness's environment, so one compose file serves several images.
pub fn interpolate(text: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    interpolate_with(text, &lookup)
}

fn interpolate_with(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        // The matching brace, counting the ones a nested default opens.
        let mut depth = 0;
        let mut end = None;
        for (i, c) in rest[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(start + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            break;
        };
        let inner = &rest[start + 2..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match lookup(name).filter(|v| !v.is_empty()) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&interpolate_with(default.unwrap_or_default(), lookup)),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `"2379"`, `"127.0.0.1::2379"`, `"127.0.0.1:12379:2379"`, `"12379:2379"`; always published on
/// loopback only, whatever the file says, so a run never exposes a node beyond this machine.
pub fn parse_port(text: &str) -> Result<PortSpec, String> {
    let text = text.trim().trim_end_matches("/tcp");
    let parts: Vec<&str> = text.split(':').collect();
    let num = |s: &str| {
        s.parse::<u16>()
            .map_err(|_| format!("{} is not a port mapping", shown(text)))
    };
    match parts.as_slice() {
        [c] => Ok(PortSpec {
            host: None,
            container: num(c)?,
        }),
        [h, c] => Ok(PortSpec {
            host: Some(num(h)?),
            container: num(c)?,
        }),
        [_ip, h, c] => Ok(PortSpec {
            host: if h.is_empty() { None } else { Some(num(h)?) },
            container: num(c)?,
        }),
        _ => Err(format!("{} is not a port mapping", shown(text))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_take_compose_variables() {
        let env = |name: &str| (name == "OZONE_VERSION").then(|| "2.0.0".to_string());
        let none = |_: &str| None;
        let tag = "apache/ozone:${OZONE_VERSION:-2.1.1}";
        assert_eq!(interpolate(tag, env), "apache/ozone:2.0.0");
        assert_eq!(interpolate(tag, none), "apache/ozone:2.1.1");
        assert_eq!(interpolate("a:${X}", none), "a:");
        assert_eq!(interpolate("chaos-etcd:latest", none), "chaos-etcd:latest");
        let nested = "${OZONE_IMAGE:-chaos-ozone:${OZONE_VERSION:-2.2.0}}";
        assert_eq!(interpolate(nested, none), "chaos-ozone:2.2.0");
        assert_eq!(interpolate(nested, env), "chaos-ozone:2.0.0");
        let image = |name: &str| (name == "OZONE_IMAGE").then(|| "apache/ozone:2.1.1".to_string());
        assert_eq!(interpolate(nested, image), "apache/ozone:2.1.1");
    }

    #[test]
    fn ports_parse() {
        assert_eq!(
            parse_port("127.0.0.1::2379").unwrap(),
            PortSpec {
                host: None,
                container: 2379
            }
        );
        assert_eq!(parse_port("12379:2379").unwrap().host, Some(12379));
        assert!(parse_port("a:b:c:d").is_err());
    }

    #[test]
    fn compose_durations_chain_units() {
        assert_eq!(
            parse_compose_duration("1m30s"),
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            parse_compose_duration("500ms"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(parse_compose_duration("5"), None);
    }

    #[test]
    fn services_keep_file_order_and_reject_unknown_keys() {
        let dir = std::env::temp_dir().join(format!("chaos-compose-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.yml");
        std::fs::write(
            &path,
            "services:\n  b:\n    image: x\n    profiles: [p]\n    command: run --flag 'a b'\n  a:\n    image: y\n    profiles: [p]\n    environment: { K: 1 }\n",
        )
        .unwrap();
        let file = ComposeFile::load(&path).unwrap();
        assert_eq!(file.profile_services("p"), vec!["b", "a"]);
        assert_eq!(
            file.service("b").unwrap().command.as_deref().unwrap(),
            ["run", "--flag", "a b"]
        );
        assert_eq!(
            file.service("a").unwrap().environment.0,
            vec![("K".into(), "1".into())]
        );
        std::fs::write(
            &path,
            "services:\n  b:\n    image: x\n    restart: always\n",
        )
        .unwrap();
        let err = ComposeFile::load(&path).unwrap_err().to_string();
        assert!(err.contains(":4:") && err.contains("restart"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Two variants of one cluster: the second profile's services carry the first's node names
    /// (x-chaos.node) and share environment through a YAML anchor and merge key.
    #[test]
    fn a_profile_variant_keeps_node_names_and_merges_environment() {
        let dir =
            std::env::temp_dir().join(format!("chaos-compose-variant-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.yml");
        std::fs::write(
            &path,
            r#"x-common: &common
  SHARED: "1"
  PEER: "v-b"
services:
  a:
    image: x
    profiles: [p]
  b:
    image: x
    profiles: [p]
    depends_on: [a]
  v-a:
    image: x
    profiles: [p-v]
    environment:
      <<: *common
      OWN: "a"
    x-chaos: { node: a }
  v-b:
    image: x
    profiles: [p-v]
    depends_on: [v-a]
    environment:
      <<: *common
    x-chaos: { node: b, fs: [/data] }
  v-c:
    image: x
    profiles: [p-v]
"#,
        )
        .unwrap();
        let file = ComposeFile::load(&path).unwrap();
        assert_eq!(file.profile_services("p-v"), vec!["v-a", "v-b", "v-c"]);
        assert_eq!(file.profile_nodes("p-v"), vec!["a", "b", "v-c"]);
        assert_eq!(file.profile_nodes("p"), vec!["a", "b"]);
        let cluster = file.into_profile("p-v");
        assert_eq!(
            cluster.services.keys().collect::<Vec<_>>(),
            vec!["a", "b", "v-c"]
        );
        let a = cluster.service("a").unwrap();
        assert_eq!(a.dns_name("a"), "v-a");
        let mut env = a.environment.0.clone();
        env.sort();
        assert_eq!(
            env,
            vec![
                ("OWN".to_string(), "a".to_string()),
                ("PEER".to_string(), "v-b".to_string()),
                ("SHARED".to_string(), "1".to_string()),
            ]
        );
        let b = cluster.service("b").unwrap();
        assert_eq!(b.depends_on.0, vec!["a"]);
        assert_eq!(b.x_chaos.fs, vec!["/data"]);
        assert_eq!(b.environment.0.len(), 2);
        assert_eq!(cluster.service("v-c").unwrap().dns_name("v-c"), "v-c");

        // A node name taken twice in one profile is an error that names both services.
        std::fs::write(
            &path,
            "services:
  a:
    image: x
    profiles: [p]
  b:
    image: x
    profiles: [p]
    x-chaos: { node: a }
",
        )
        .unwrap();
        let err = ComposeFile::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("`a` and `b` of profile `p` are both node `a`"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
