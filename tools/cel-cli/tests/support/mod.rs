//! Running the `cel` binary from the repository's root, for the end-to-end tests.

#![allow(dead_code, reason = "each test file uses its own part")]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `cel` with `args` in the repository's root.
pub fn cel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run cel")
}

/// Runs `cel` with `input` on standard input.
pub fn cel_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(args)
        .current_dir(repo())
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
