//! Configuration files found and read as oslo.config finds and reads
//! them, so that the files deployment tools write (kolla-ansible,
//! openstack-helm, OpenStack-Ansible, devstack) mean here what they mean
//! to upstream:
//!
//! - **Which files.** Every `--config-file`, in order (later wins), then
//!   the `*.conf` files of every `--config-dir`, sorted by name. Without
//!   `--config-file`, the default files: `OS_PLACEMENT_CONFIG_DIR`'s
//!   `placement.conf` when that variable is set (as upstream's WSGI
//!   application reads it), else the first `placement.conf` and the first
//!   `PROG.conf` found in `~/.placement/`, `~/`, `/etc/placement/`,
//!   `/etc/`. Without `--config-dir`, the default directories: the first
//!   `placement.conf.d/` and `PROG.conf.d/` found in the same places.
//!   A named file or directory that does not exist is an error; a default
//!   one is simply not there.
//! - **Which values.** oslo.config's file syntax: `[group]` headers,
//!   `key = value` or `key: value`, comment lines starting with `#` or
//!   `;`, continuation lines (starting with a space or a tab) adding a
//!   line to the value, one pair of matching quotes around a value
//!   removed, backslashes kept. The last value of a key wins, across
//!   files and within one. Group names are lower case but `DEFAULT`.
//! - **Interpolation.** `$key` and `${key}` are the value of `key` in the
//!   same group, else in `[DEFAULT]`; `$group.key` names the group; `$$`
//!   and `\$` are a dollar sign. A reference to a key no file sets is left
//!   as written, with a warning naming the file, group and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// The project name oslo.config searches for.
const PROJECT: &str = "placement";

/// The group that holds the options of no group.
const DEFAULT_GROUP: &str = "DEFAULT";

/// Where to look for configuration besides the command line.
#[derive(Clone, Debug, Default)]
pub struct SearchPath {
    /// The home directory (`~`), when there is one.
    pub home: Option<PathBuf>,
    /// `OS_PLACEMENT_CONFIG_DIR`, when set and not empty.
    pub env_dir: Option<PathBuf>,
    /// The program's name, for `PROG.conf` and `PROG.conf.d`.
    pub prog: String,
    /// Prefix of `/etc` (tests point it at a scratch directory; `None`
    /// is the root).
    pub root: Option<PathBuf>,
}

impl SearchPath {
    /// The search of this process: `$HOME`, `OS_PLACEMENT_CONFIG_DIR`
    /// and `prog`.
    #[must_use]
    pub fn of_process(prog: &str) -> SearchPath {
        let non_empty = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        SearchPath {
            home: non_empty("HOME"),
            env_dir: non_empty("OS_PLACEMENT_CONFIG_DIR"),
            prog: prog.to_owned(),
            root: None,
        }
    }

    /// oslo.config's directories, in the order it searches them.
    fn dirs(&self) -> Vec<PathBuf> {
        let etc = match &self.root {
            Some(root) => root.join("etc"),
            None => PathBuf::from("/etc"),
        };
        let mut dirs = Vec::new();
        if let Some(home) = &self.home {
            dirs.push(home.join(format!(".{PROJECT}")));
            dirs.push(home.clone());
        }
        dirs.push(etc.join(PROJECT));
        dirs.push(etc);
        dirs
    }

    /// The first of `names` found in each search, as oslo.config's
    /// `find_config_files` / `find_config_dirs` give them.
    fn first_of(&self, suffix: &str) -> Vec<PathBuf> {
        let dirs = self.dirs();
        let mut found: Vec<PathBuf> = Vec::new();
        for name in [PROJECT, self.prog.as_str()] {
            let hit = dirs
                .iter()
                .map(|d| d.join(format!("{name}{suffix}")))
                .find(|p| p.exists());
            match hit {
                Some(hit) if !found.contains(&hit) => found.push(hit),
                _ => {}
            }
        }
        found
    }
}

/// One value as a file gave it.
#[derive(Clone, Debug)]
struct Entry {
    value: String,
    file: PathBuf,
}

/// The values of every file read, merged: the last one of a key wins.
#[derive(Clone, Debug, Default)]
pub struct ConfigFiles {
    groups: BTreeMap<String, BTreeMap<String, Entry>>,
    /// The files read, in order.
    files: Vec<PathBuf>,
    /// The `--config-dir` directories and the default ones read.
    dirs: Vec<PathBuf>,
    search: SearchPath,
    /// What the operator should hear (references to unset keys).
    warnings: Vec<String>,
}

impl ConfigFiles {
    /// Finds and reads the files of `config_files` and `config_dirs` (the
    /// command line's), or the default ones of `search`.
    ///
    /// # Errors
    ///
    /// A named file or directory that cannot be read, or a file that is
    /// not oslo.config's syntax (naming the file and line).
    pub fn load(
        config_files: &[PathBuf],
        config_dirs: &[PathBuf],
        search: SearchPath,
    ) -> anyhow::Result<ConfigFiles> {
        let mut files = Vec::new();
        if config_files.is_empty() {
            match &search.env_dir {
                Some(dir) => {
                    let file = dir.join(format!("{PROJECT}.conf"));
                    if file.exists() {
                        files.push(file);
                    }
                }
                None => files.extend(search.first_of(".conf")),
            }
        } else {
            for file in config_files {
                if !file.is_file() {
                    bail!("cannot read config file {}: not found", file.display());
                }
                files.push(file.clone());
            }
        }
        let dirs = if config_dirs.is_empty() {
            search.first_of(".conf.d")
        } else {
            for dir in config_dirs {
                if !dir.is_dir() {
                    bail!("cannot read config directory {}: not found", dir.display());
                }
            }
            config_dirs.to_vec()
        };
        for dir in &dirs {
            let mut in_dir: Vec<PathBuf> = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read config directory {}", dir.display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "conf") && p.is_file())
                .collect();
            in_dir.sort();
            files.extend(in_dir);
        }
        let mut config = ConfigFiles {
            dirs,
            search,
            ..ConfigFiles::default()
        };
        for file in &files {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read config file {}", file.display()))?;
            config.parse(&text, file)?;
        }
        config.files = files;
        config.interpolate();
        Ok(config)
    }

    /// Reads `text` (of `file`) into the merged values.
    fn parse(&mut self, text: &str, file: &Path) -> anyhow::Result<()> {
        let error =
            |line: usize, why: &str| anyhow::anyhow!("{}: line {line}: {why}", file.display());
        let mut group: Option<String> = None;
        // The assignment being read, which continuation lines extend.
        let mut pending: Option<(String, Vec<String>)> = None;
        for (index, raw) in text.lines().enumerate() {
            let number = index + 1;
            let line = raw.trim_end();
            if line.is_empty() {
                self.assign(group.as_deref(), pending.take(), file);
                continue;
            }
            if line.starts_with([' ', '\t']) {
                match &mut pending {
                    Some((_, lines)) => lines.push(line.trim_start().to_owned()),
                    None => return Err(error(number, "a continuation line with no key above it")),
                }
                continue;
            }
            self.assign(group.as_deref(), pending.take(), file);
            if let Some(header) = line.strip_prefix('[') {
                let name = header
                    .strip_suffix(']')
                    .ok_or_else(|| error(number, "a group header must end with ]"))?;
                if name.is_empty() {
                    return Err(error(number, "an empty group name"));
                }
                group = Some(if name == DEFAULT_GROUP {
                    name.to_owned()
                } else {
                    name.to_ascii_lowercase()
                });
            } else if line.starts_with(['#', ';']) {
                // A comment.
            } else {
                let split = match (line.find('='), line.find(':')) {
                    (Some(eq), Some(colon)) => eq.min(colon),
                    (Some(at), None) | (None, Some(at)) => at,
                    (None, None) => return Err(error(number, "no '=' or ':' in an assignment")),
                };
                let key = line[..split].trim();
                if key.is_empty() {
                    return Err(error(number, "an empty key"));
                }
                if group.is_none() {
                    return Err(error(number, "a key before any [group] header"));
                }
                let mut value = line[split + 1..].trim();
                let quoted = value.len() >= 2
                    && (value.starts_with('"') || value.starts_with('\''))
                    && value.ends_with(&value[..1]);
                if quoted {
                    value = &value[1..value.len() - 1];
                }
                pending = Some((key.to_owned(), vec![value.to_owned()]));
            }
        }
        self.assign(group.as_deref(), pending.take(), file);
        Ok(())
    }

    fn assign(&mut self, group: Option<&str>, pending: Option<(String, Vec<String>)>, file: &Path) {
        if let (Some(group), Some((key, lines))) = (group, pending) {
            self.groups.entry(group.to_owned()).or_default().insert(
                key,
                Entry {
                    value: lines.join("\n"),
                    file: file.to_owned(),
                },
            );
        }
    }

    /// Replaces every `$reference` by its value, once the files are read.
    fn interpolate(&mut self) {
        let mut resolved = self.groups.clone();
        for (group, entries) in &mut resolved {
            for (key, entry) in entries.iter_mut() {
                if entry.value.contains('$') {
                    entry.value = self.substitute(group, key, entry);
                }
            }
        }
        self.groups = resolved;
    }

    fn substitute(&mut self, group: &str, key: &str, entry: &Entry) -> String {
        let text = entry.value.replace("\\$", "$$");
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix('$') {
                out.push('$');
                rest = tail;
                continue;
            }
            let (name, tail) = match after.strip_prefix('{') {
                Some(braced) => match braced.find('}') {
                    Some(end) => (&braced[..end], &braced[end + 1..]),
                    None => ("", after),
                },
                None => {
                    let end = after
                        .char_indices()
                        .find(|&(i, c)| {
                            !(c == '_'
                                || c.is_ascii_lowercase()
                                || (i > 0 && (c == '.' || c.is_ascii_digit())))
                        })
                        .map_or(after.len(), |(i, _)| i);
                    (&after[..end], &after[end..])
                }
            };
            match self.lookup(group, name) {
                Some(value) if !name.is_empty() => out.push_str(&value),
                _ => {
                    if !name.is_empty() {
                        self.warnings.push(format!(
                            "{}: [{group}] {key} refers to ${name}, which no configuration file sets: left as written",
                            entry.file.display()
                        ));
                    }
                    out.push('$');
                    rest = after;
                    continue;
                }
            }
            rest = tail;
        }
        out.push_str(rest);
        out
    }

    /// The raw value `name` names from `group`: `group.key`, or a key of
    /// the same group, else of `[DEFAULT]`.
    fn lookup(&self, group: &str, name: &str) -> Option<String> {
        let get = |g: &str, k: &str| self.groups.get(g)?.get(k).map(|e| e.value.clone());
        let qualified = name.split_once('.').and_then(|(other, key)| {
            get(&other.to_ascii_lowercase(), key).or_else(|| get(other, key))
        });
        qualified.or_else(|| get(group, name).or_else(|| get(DEFAULT_GROUP, name)))
    }

    /// The value of `key` in `group`, interpolated.
    #[must_use]
    pub fn get(&self, group: &str, key: &str) -> Option<&str> {
        self.groups.get(group)?.get(key).map(|e| e.value.as_str())
    }

    /// The file that gave `key` in `group` its value (the last file read,
    /// when no file sets it).
    #[must_use]
    pub fn origin(&self, group: &str, key: &str) -> &Path {
        self.groups
            .get(group)
            .and_then(|g| g.get(key))
            .map_or_else(|| self.last_file(), |e| e.file.as_path())
    }

    fn last_file(&self) -> &Path {
        self.files
            .last()
            .map_or(Path::new("placement.conf"), PathBuf::as_path)
    }

    /// The keys `group` sets, in name order.
    pub fn keys(&self, group: &str) -> impl Iterator<Item = &str> {
        self.groups
            .get(group)
            .into_iter()
            .flat_map(|g| g.keys().map(String::as_str))
    }

    /// Whether any file sets anything in `group`.
    #[must_use]
    pub fn has_group(&self, group: &str) -> bool {
        self.groups.get(group).is_some_and(|g| !g.is_empty())
    }

    /// `group` as one INI section of its merged values, and the file of
    /// its last value (for messages).
    #[must_use]
    pub fn section(&self, group: &str) -> Option<(ini::Properties, &Path)> {
        let entries = self.groups.get(group)?;
        let mut section = ini::Properties::new();
        for (key, entry) in entries {
            section.insert(key.as_str(), entry.value.as_str());
        }
        let file = entries.values().last().map(|e| e.file.as_path())?;
        Some((section, file))
    }

    /// The files read, in the order they were read.
    #[must_use]
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// What reading the files noticed, for the start-up log.
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Finds `name` (a relative path) as oslo.config's `find_file` does:
    /// in the configuration directories, then beside each file read (the
    /// last first), then in the default search directories.
    #[must_use]
    pub fn find_file(&self, name: &Path) -> Option<PathBuf> {
        let beside = self.files.iter().rev().filter_map(|f| f.parent());
        self.dirs
            .iter()
            .map(PathBuf::as_path)
            .chain(beside)
            .map(Path::to_path_buf)
            .chain(self.search.dirs())
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    }

    /// A warning for each key of `known`'s groups that is not among the
    /// group's known keys (nothing for groups not listed).
    #[must_use]
    pub fn unknown_keys(&self, known: &[(&str, &[&str])]) -> Vec<String> {
        let mut warnings = Vec::new();
        for (group, keys) in known {
            for key in self.keys(group) {
                if !keys.contains(&key) {
                    warnings.push(format!(
                        "{}: [{group}] {key} is not a setting of this service: ignored",
                        self.origin(group, key).display()
                    ));
                }
            }
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use microversion_test_support::Scratch;

    fn search(root: &Path) -> SearchPath {
        SearchPath {
            home: Some(root.join("home")),
            env_dir: None,
            prog: "placement-api".to_owned(),
            root: Some(root.to_owned()),
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn values_as_oslo_config_reads_them() {
        let dir = Scratch::new("oslo-values");
        let file = dir.join("a.conf");
        write(
            &file,
            "# a comment\n[DEFAULT]\nstate_path = /var/lib/placement\ndebug: true\n\
             [Placement_Database]\nconnection = \"mysql+pymysql://p:s3cr$$t@db/placement\"\n\
             connection = mysql+pymysql://p:pw@db/placement?ssl_ca=$state_path/ca.pem\n\
             ; another comment\n[api]\nmotd = first line\n  second line\n\tthird\n\n\
             path = C:\\dir\\file\npct = 100\\$ and ${state_path} and $api.pct0 and $nothing\n\
             pct0 = 0\n",
        );
        let c = ConfigFiles::load(std::slice::from_ref(&file), &[], search(dir.path())).unwrap();
        assert_eq!(c.get("DEFAULT", "debug"), Some("true"));
        assert_eq!(
            c.get("placement_database", "connection"),
            Some("mysql+pymysql://p:pw@db/placement?ssl_ca=/var/lib/placement/ca.pem"),
            "the last value wins; $key falls back to [DEFAULT]"
        );
        assert_eq!(c.get("api", "motd"), Some("first line\nsecond line\nthird"));
        assert_eq!(c.get("api", "path"), Some("C:\\dir\\file"));
        assert_eq!(
            c.get("api", "pct"),
            Some("100$ and /var/lib/placement and 0 and $nothing")
        );
        assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
        assert!(
            c.warnings()[0].ends_with(
                "[api] pct refers to $nothing, which no configuration file sets: left as written"
            ),
            "{:?}",
            c.warnings()
        );
        assert_eq!(c.origin("api", "pct"), file.as_path());
        for (text, why) in [
            ("key = value\n", "line 1: a key before any [group] header"),
            (
                "[a]\n  x\n",
                "line 2: a continuation line with no key above it",
            ),
            ("[a\n", "line 1: a group header must end with ]"),
            (
                "[a]\njust words\n",
                "line 2: no '=' or ':' in an assignment",
            ),
            ("[a]\n= 1\n", "line 2: an empty key"),
        ] {
            write(&file, text);
            let err = ConfigFiles::load(std::slice::from_ref(&file), &[], search(dir.path()))
                .unwrap_err();
            assert_eq!(err.to_string(), format!("{}: {why}", file.display()));
        }
    }

    #[test]
    fn files_found_as_oslo_config_finds_them() {
        let dir = Scratch::new("oslo-search");
        let root = dir.path();
        // Nothing anywhere: no file, no error.
        let c = ConfigFiles::load(&[], &[], search(root)).unwrap();
        assert!(c.files().is_empty());
        // /etc/placement/placement.conf and its .conf.d, as every tool
        // lays them out; /etc/placement.conf is not read (the first found
        // wins), and a file in .conf.d that is not *.conf is not read.
        write(
            &root.join("etc/placement/placement.conf"),
            "[api]\nauth_strategy = keystone\n[a]\nx = etc\n",
        );
        write(&root.join("etc/placement.conf"), "[a]\nx = not read\n");
        write(
            &root.join("etc/placement/placement.conf.d/20-b.conf"),
            "[a]\nx = 20\n",
        );
        write(
            &root.join("etc/placement/placement.conf.d/10-a.conf"),
            "[a]\nx = 10\ny = 10\n",
        );
        write(
            &root.join("etc/placement/placement.conf.d/30.conf.orig"),
            "[a]\nx = orig\n",
        );
        write(&root.join("etc/placement/policy.yaml"), "{}\n");
        let c = ConfigFiles::load(&[], &[], search(root)).unwrap();
        assert_eq!(
            c.files(),
            [
                root.join("etc/placement/placement.conf"),
                root.join("etc/placement/placement.conf.d/10-a.conf"),
                root.join("etc/placement/placement.conf.d/20-b.conf"),
            ]
        );
        assert_eq!((c.get("a", "x"), c.get("a", "y")), (Some("20"), Some("10")));
        // policy.yaml beside placement.conf, as OSA and helm drop it.
        assert_eq!(
            c.find_file(Path::new("policy.yaml")),
            Some(root.join("etc/placement/policy.yaml"))
        );
        assert_eq!(c.find_file(Path::new("other.yaml")), None);
        // ~/.placement/ comes first, and PROG.conf is read after it.
        write(
            &root.join("home/.placement/placement.conf"),
            "[a]\nx = home\n",
        );
        write(&root.join("etc/placement-api.conf"), "[a]\nw = prog\n");
        let c = ConfigFiles::load(&[], &[], search(root)).unwrap();
        assert_eq!(
            &c.files()[..2],
            [
                root.join("home/.placement/placement.conf"),
                root.join("etc/placement-api.conf")
            ]
        );
        // The directories' files come after both, and win.
        assert_eq!(
            (c.get("a", "x"), c.get("a", "w")),
            (Some("20"), Some("prog"))
        );
        // OS_PLACEMENT_CONFIG_DIR replaces the search for the file.
        write(&root.join("env/placement.conf"), "[a]\nz = env\n");
        let c = ConfigFiles::load(
            &[],
            &[],
            SearchPath {
                env_dir: Some(root.join("env")),
                ..search(root)
            },
        )
        .unwrap();
        assert_eq!(c.files()[0], root.join("env/placement.conf"));
        assert_eq!(c.get("a", "z"), Some("env"));
        assert_eq!(c.get("a", "w"), None, "placement-api.conf is not read");
        // --config-file (later wins) and --config-dir replace the defaults.
        write(&root.join("one.conf"), "[a]\nx = one\ny = one\n");
        write(&root.join("two.conf"), "[a]\nx = two\n");
        write(&root.join("d/1.conf"), "[a]\ny = d\n");
        let c = ConfigFiles::load(
            &[root.join("one.conf"), root.join("two.conf")],
            &[root.join("d")],
            search(root),
        )
        .unwrap();
        assert_eq!(
            c.files(),
            [
                root.join("one.conf"),
                root.join("two.conf"),
                root.join("d/1.conf")
            ]
        );
        assert_eq!((c.get("a", "x"), c.get("a", "y")), (Some("two"), Some("d")));
        let err = ConfigFiles::load(&[root.join("none.conf")], &[], search(root)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read config file {}: not found",
                root.join("none.conf").display()
            )
        );
        let err = ConfigFiles::load(&[], &[root.join("nodir")], search(root)).unwrap_err();
        assert!(
            err.to_string().starts_with("cannot read config directory"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_of_known_groups_are_named() {
        let dir = Scratch::new("oslo-unknown");
        let file = dir.join("placement.conf");
        write(
            &file,
            "[api]\nauth_strategy = keystone\nauth_stratgy = noauth2\n[other]\nanything = 1\n",
        );
        let c = ConfigFiles::load(std::slice::from_ref(&file), &[], search(dir.path())).unwrap();
        assert_eq!(
            c.unknown_keys(&[("api", &["auth_strategy"])]),
            [format!(
                "{}: [api] auth_stratgy is not a setting of this service: ignored",
                file.display()
            )]
        );
    }
}
