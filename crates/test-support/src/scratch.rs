//! Scratch directories: unique names from `tempfile` (not a process id that
//! a killed run may have left behind), removed when dropped.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A new empty directory under the system's temporary directory, removed
/// with everything in it when dropped.
#[derive(Debug)]
pub struct Scratch(TempDir);

impl Scratch {
    /// Makes the directory; `name` goes into its name, so that one left
    /// behind (by a killed run) says which test made it.
    ///
    /// # Panics
    ///
    /// When the directory cannot be made.
    pub fn new(name: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("microversion-{name}-"))
            .tempdir()
            .expect("a scratch directory");
        Scratch(dir)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// The path of `name` inside it.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.path().join(name)
    }

    /// The names of the entries directly in it, sorted.
    pub fn files(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.path()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}
