//! Running the `cel` binary from the repository's root, for the end-to-end tests.

#![allow(dead_code, reason = "each test file uses its own part")]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the tests' `cel` keeps its cache of checked CRDs (not the user's own).
pub fn cache_dir() -> PathBuf {
    std::env::temp_dir().join("celerity-cli-tests-cache")
}

/// Runs `cel` with `args` in the repository's root.
pub fn cel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(args)
        .current_dir(repo())
        .env("CELERITY_CACHE_DIR", cache_dir())
        .output()
        .expect("run cel")
}

/// Runs `cel` with `input` on standard input.
pub fn cel_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(args)
        .current_dir(repo())
        .env("CELERITY_CACHE_DIR", cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cel");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `cel` with `args`, failing the test if it has not finished within `limit` (it is
/// then killed): for inputs that once made the command hang.
pub fn cel_within(args: &[&str], limit: std::time::Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(args)
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cel");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait for cel").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("cel {args:?} did not finish within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("cel's output")
}

/// A file with `text` in a fresh temporary directory, for inputs a test writes.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cel-cli-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a temporary file");
    path
}
