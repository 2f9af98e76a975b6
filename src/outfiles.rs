//! Output files written all or nothing. A run declares its inputs and outputs before it
//! starts working: every output is checked then (its directory exists, it is not a
//! directory, it is not the same file as an input or as another output) and gets a
//! temporary file beside it. The work writes into the temporaries; only when the whole
//! run has succeeded are they renamed into place. A run that fails at any point leaves
//! every existing file as it was and no temporary behind.
//!
//! Files are told apart by device and inode, not by how their paths are spelled: an
//! existing file is its inode; a file yet to be made is its directory's inode and its
//! name. An existing output that is not a regular file (`/dev/null`, a pipe) is written
//! in place, since renaming over it would replace the device, not write to it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Result, anyhow, bail};

/// What a path names: an existing file, or a name yet to be made in a directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FileId {
    Existing { dev: u64, ino: u64 },
    New { dev: u64, ino: u64, name: OsString },
}

/// The directory a file named by `path` lives in (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn file_id(path: &Path) -> Result<FileId> {
    if let Ok(m) = fs::metadata(path) {
        return Ok(FileId::Existing { dev: m.dev(), ino: m.ino() });
    }
    let name = path.file_name().ok_or_else(|| anyhow!("cannot write {}: not a file name", path.display()))?;
    let dir = parent_dir(path);
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(FileId::New { dev: m.dev(), ino: m.ino(), name: name.to_owned() }),
        Ok(_) => bail!("cannot write {}: {} is not a directory", path.display(), dir.display()),
        Err(e) => bail!("cannot write {}: directory {}: {e}", path.display(), dir.display()),
    }
}

/// One declared output.
struct Output {
    path: PathBuf,
    /// The temporary it is written to; `None` for a non-regular file written in place.
    temp: Option<PathBuf>,
    written: bool,
}

/// The files of one run: inputs (never written) and outputs (written all or nothing).
#[derive(Default)]
pub struct OutFiles {
    ids: HashMap<FileId, (PathBuf, bool)>,
    outputs: Vec<Output>,
    /// Directories this run created, deepest last; removed again if it fails.
    created_dirs: Vec<PathBuf>,
}

static TEMP_SERIAL: AtomicU64 = AtomicU64::new(0);

impl OutFiles {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a file the run reads; an output may not be it. A missing input is left
    /// for its reader to report.
    pub fn input(&mut self, path: &Path) -> Result<()> {
        if let Ok(m) = fs::metadata(path) {
            let id = FileId::Existing { dev: m.dev(), ino: m.ino() };
            if let Some((out, true)) = self.ids.get(&id) {
                bail!("cannot write {}: it is the same file as the input {}", out.display(), path.display());
            }
            self.ids.entry(id).or_insert_with(|| (path.to_owned(), false));
        }
        Ok(())
    }

    /// Declares an output and makes its temporary now, so that an unwritable place
    /// fails before the work.
    pub fn output(&mut self, path: &Path) -> Result<()> {
        let id = file_id(path)?;
        if let Some((other, is_output)) = self.ids.get(&id) {
            let what = if *is_output { "output" } else { "input" };
            bail!("cannot write {}: it is the same file as the {what} {}", path.display(), other.display());
        }
        let meta = fs::metadata(path).ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            bail!("cannot write {}: it is a directory", path.display());
        }
        let temp = match meta {
            Some(m) if !m.is_file() => None,
            _ => Some(self.make_temp(path)?),
        };
        self.ids.insert(id, (path.to_owned(), true));
        self.outputs.push(Output { path: path.to_owned(), temp, written: false });
        Ok(())
    }

    /// Declares an output directory: made now if it does not exist (and removed again
    /// if the run fails while it is still empty).
    pub fn dir(&mut self, dir: &Path) -> Result<()> {
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => bail!("cannot write into {}: it exists and is not a directory", dir.display()),
            Err(_) => {}
        }
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && fs::metadata(d).is_err()) {
            missing.push(d.to_owned());
            at = d.parent();
        }
        for d in missing.into_iter().rev() {
            fs::create_dir(&d).map_err(|e| anyhow!("cannot create {}: {e}", d.display()))?;
            self.created_dirs.push(d);
        }
        Ok(())
    }

    fn make_temp(&self, path: &Path) -> Result<PathBuf> {
        let name = path.file_name().ok_or_else(|| anyhow!("cannot write {}: not a file name", path.display()))?;
        let serial = TEMP_SERIAL.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}-{serial}.tmp", std::process::id()));
        let temp = parent_dir(path).join(temp_name);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        Ok(temp)
    }

    /// Writes the whole content of the declared output `path`; flushing and syncing
    /// are checked, so a full disk is an error.
    pub fn write(&mut self, path: &Path, content: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        let out = self
            .outputs
            .iter_mut()
            .find(|o| o.path == path)
            .unwrap_or_else(|| panic!("{} was not declared as an output", path.display()));
        let target = out.temp.as_deref().unwrap_or(&out.path);
        write_whole(target, out.temp.is_some(), content).map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
        out.written = true;
        Ok(())
    }

    /// Moves every written output into place.
    pub fn commit(mut self) -> Result<()> {
        for out in &mut self.outputs {
            if let Some(temp) = &out.temp {
                if !out.written {
                    continue;
                }
                fs::rename(temp, &out.path).map_err(|e| anyhow!("writing {}: {e}", out.path.display()))?;
                out.temp = None;
            }
        }
        self.created_dirs.clear();
        Ok(())
    }
}

impl Drop for OutFiles {
    fn drop(&mut self) {
        for temp in self.outputs.iter().filter_map(|o| o.temp.as_ref()) {
            let _ = fs::remove_file(temp);
        }
        for d in self.created_dirs.iter().rev() {
            let _ = fs::remove_dir(d);
        }
    }
}

/// Writes `target` through a buffer and checks what buffered writers drop silently:
/// the last flush and, for a regular file, that the data reached the disk.
fn write_whole(target: &Path, regular: bool, content: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let file = if regular { File::create(target)? } else { OpenOptions::new().write(true).open(target)? };
    let mut w = BufWriter::with_capacity(1 << 20, file);
    content(&mut w)?;
    let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
    if regular {
        file.sync_all()?;
    }
    Ok(())
}

/// Writes one file all or nothing (a run with a single output).
pub fn write_file(path: &Path, content: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    let mut files = OutFiles::new();
    files.output(path)?;
    files.write(path, content)?;
    files.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_run_leaves_old_files_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, "old a").unwrap();
        let mut files = OutFiles::new();
        files.output(&a).unwrap();
        files.output(&b).unwrap();
        files.write(&a, |w| w.write_all(b"new a")).unwrap();
        let e = files.write(&b, |_| Err(io::Error::other("disk on fire"))).unwrap_err();
        assert_eq!(e.to_string(), format!("writing {}: disk on fire", b.display()));
        drop(files);
        assert_eq!(fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(names(dir.path()), ["a"]);

        let mut files = OutFiles::new();
        files.output(&a).unwrap();
        files.output(&b).unwrap();
        files.write(&a, |w| w.write_all(b"new a")).unwrap();
        files.write(&b, |w| w.write_all(b"new b")).unwrap();
        files.commit().unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(names(dir.path()), ["a", "b"]);
    }

    #[test]
    fn files_are_told_apart_by_inode() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, "a").unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::hard_link(&a, dir.path().join("h")).unwrap();
        let mut files = OutFiles::new();
        files.input(&a).unwrap();
        for same in [dir.path().join("sub/../a"), dir.path().join("h")] {
            let e = files.output(&same).unwrap_err().to_string();
            assert!(e.contains("the same file as the input"), "{e}");
        }
        files.output(&dir.path().join("new")).unwrap();
        let e = files.output(&dir.path().join("sub/../new")).unwrap_err().to_string();
        assert!(e.contains("the same file as the output"), "{e}");
        let e = files.output(&dir.path().join("sub")).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = files.output(&dir.path().join("nodir/x")).unwrap_err().to_string();
        assert!(e.contains("directory") && e.contains("nodir"), "{e}");
    }
}
