//! Output folders written all at once ([`OutputDir`]), and the checks of an output path made
//! before anything runs ([`check_out_dir`], [`check_out_file`]): shared by the command line
//! (`--out`) and the Python package (`wisp.reproduce(…, out=…)`).

use std::path::{Path, PathBuf};

/// Why an output folder was refused or could not be written: the message names the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputError {
    /// A path that cannot be an output folder or file (bad input: the command line's exit
    /// code 2), found before anything runs.
    Input(String),
    /// Writing failed (the disk, a rename).
    Io(String),
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputError::Input(m) | OutputError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for OutputError {}

/// Files to write into an output folder. Nothing touches the disk until [`OutputDir::commit`],
/// which writes each file under a temporary name and renames it into place, so a failed command
/// leaves no partial files.
#[derive(Debug, Default)]
pub struct OutputDir {
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl OutputDir {
    pub fn add(&mut self, name: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) {
        self.files.push((name.into(), bytes.into()));
    }

    pub fn commit(self, dir: &Path) -> Result<(), OutputError> {
        self.commit_with(dir, |path, bytes| std::fs::write(path, bytes))
    }

    /// [`OutputDir::commit`] with `write` putting each file's bytes at its temporary path (a
    /// test injects a failing disk here). On any failure the folder is as before: every
    /// temporary file goes (also the one being written when the disk filled up), so do the
    /// files this commit renamed into places that were empty and the folders it created.
    pub fn commit_with(
        self,
        dir: &Path,
        mut write: impl FnMut(&Path, &[u8]) -> std::io::Result<()>,
    ) -> Result<(), OutputError> {
        let io = |what: &str, p: &Path, e: std::io::Error| {
            OutputError::Io(format!("cannot {what} {}: {e}", p.display()))
        };
        // The folders this commit creates, innermost first: removed again if it fails.
        let created: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .map(Path::to_path_buf)
            .collect();
        let remove_created = || {
            for d in &created {
                let _ = std::fs::remove_dir(d);
            }
        };
        // Subfolders (`plots/`) first, then the folders made for `dir`; only empty ones go.
        let remove_folders = || {
            for (name, _) in &self.files {
                for d in dir.join(name).ancestors().skip(1) {
                    if d == dir {
                        break;
                    }
                    let _ = std::fs::remove_dir(d);
                }
            }
            remove_created();
        };
        if let Err(e) = std::fs::create_dir_all(dir) {
            remove_created();
            return Err(io("create", dir, e));
        }
        // `(temporary, final path, whether the final path held nothing before)`.
        let mut written: Vec<(PathBuf, PathBuf, bool)> = vec![];
        let remove_temps = |written: &[(PathBuf, PathBuf, bool)]| {
            for (tmp, _, _) in written {
                let _ = std::fs::remove_file(tmp);
            }
        };
        let result = (|| {
            for (name, bytes) in &self.files {
                let path = dir.join(name);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| io("create", parent, e))?;
                }
                let tmp = path.with_file_name(format!(
                    ".{}.tmp{}",
                    path.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default(),
                    std::process::id()
                ));
                // Recorded before writing: a write that fails half way leaves a partial file.
                let fresh = std::fs::symlink_metadata(&path).is_err();
                written.push((tmp.clone(), path, fresh));
                write(&tmp, bytes).map_err(|e| io("write", &tmp, e))?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            remove_temps(&written);
            remove_folders();
            return Err(e);
        }
        // A folder in a file's place would stop the renames half way: refused before any.
        if let Some((_, path, _)) = written.iter().find(|(_, p, _)| p.is_dir()) {
            remove_temps(&written);
            remove_folders();
            return Err(io(
                "write",
                path,
                std::io::Error::other("a folder is in the way"),
            ));
        }
        for (i, (tmp, path, _)) in written.iter().enumerate() {
            if let Err(e) = std::fs::rename(tmp, path) {
                remove_temps(&written[i..]);
                // The files renamed where nothing was go again (those that replaced an older
                // file of the same name are complete and stay).
                for (_, path, fresh) in &written[..i] {
                    if *fresh {
                        let _ = std::fs::remove_file(path);
                    }
                }
                remove_folders();
                return Err(io("rename into", path, e));
            }
        }
        Ok(())
    }
}

/// Refuses, before anything runs, an output folder `dir` (given as `flag`) that cannot be one:
/// an existing file, a path below a file, or one whose nearest existing folder this user may
/// not write into. Bad input, exit code 2, and nothing written.
pub fn check_out_dir(flag: &str, dir: &Path) -> Result<(), OutputError> {
    check_folder(flag, dir, dir)
}

/// [`check_out_dir`] of `dir` for the path `named` (`dir` itself, or a file to go into it),
/// which the messages name as the user gave it.
fn check_folder(flag: &str, named: &Path, dir: &Path) -> Result<(), OutputError> {
    let writable = |d: &Path| {
        use nix::unistd::{AccessFlags, access};
        access(d, AccessFlags::W_OK | AccessFlags::X_OK).map_err(|e| {
            OutputError::Input(format!(
                "{flag} {}: cannot write into {}: {}",
                named.display(),
                d.display(),
                e.desc()
            ))
        })
    };
    for d in dir.ancestors() {
        if d.as_os_str().is_empty() {
            return writable(Path::new("."));
        }
        match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => return writable(d),
            Ok(_) if d == named => {
                return Err(OutputError::Input(format!(
                    "{flag} {}: is a file, not a folder",
                    named.display()
                )));
            }
            Ok(_) => {
                return Err(OutputError::Input(format!(
                    "{flag} {}: {} is a file, not a folder",
                    named.display(),
                    d.display()
                )));
            }
            // Missing (or below a file): look further up.
            Err(_) => {}
        }
    }
    Ok(())
}

/// Refuses, before anything runs, an output file `path` (given as `flag`) that is a folder,
/// lies below a file, or goes into a folder this user may not write into.
pub fn check_out_file(flag: &str, path: &Path) -> Result<(), OutputError> {
    if path.is_dir() {
        return Err(OutputError::Input(format!(
            "{flag} {}: is a folder, not a file",
            path.display()
        )));
    }
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => check_folder(flag, path, d),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk that fills up after `room` bytes: the file being written keeps what fit.
    fn filling_disk(mut room: usize) -> impl FnMut(&Path, &[u8]) -> std::io::Result<()> {
        move |path, bytes| {
            let n = bytes.len().min(room);
            std::fs::write(path, &bytes[..n])?;
            room -= n;
            if n < bytes.len() {
                return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
            }
            Ok(())
        }
    }

    fn three_files() -> OutputDir {
        let mut out = OutputDir::default();
        out.add("run.json", vec![b'j'; 100]);
        out.add("packets.csv", vec![b'p'; 1000]);
        out.add("plots/rate.svg", vec![b's'; 100]);
        out
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_full_disk_leaves_a_new_folder_absent() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("tiny/o");
        for room in [0, 50, 100, 150, 1099] {
            let e = three_files().commit_with(&dir, filling_disk(room));
            assert!(matches!(e, Err(OutputError::Io(_))), "{e:?}");
            assert!(!root.path().join("tiny").exists(), "room {room}");
        }
        three_files().commit_with(&dir, filling_disk(1200)).unwrap();
        assert_eq!(listing(&dir), ["packets.csv", "plots", "run.json"]);
    }

    #[test]
    fn a_full_disk_leaves_an_existing_folder_as_it_was() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("o");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        for room in [0, 120, 1150] {
            assert!(three_files().commit_with(&dir, filling_disk(room)).is_err());
            assert_eq!(listing(&dir), ["notes.txt"], "room {room}");
        }
    }
}
