//! Standard output. A closed pipe (`cel eval --batch cases.jsonl | head -1`) ends the
//! command quietly with status 141, as a Unix tool killed by `SIGPIPE` does, instead of the
//! panic Rust's `println!` gives.

use std::io::{BufWriter, ErrorKind, Stdout, Write};

/// The status a command ends with when its reader went away.
const BROKEN_PIPE_STATUS: i32 = 141;

/// Buffered standard output, flushed line by line (so `--batch -` answers as it reads).
pub struct Out {
    inner: BufWriter<Stdout>,
}

impl Out {
    /// Standard output.
    pub fn new() -> Out {
        Out {
            inner: BufWriter::new(std::io::stdout()),
        }
    }

    /// Writes text as is, then flushes.
    pub fn text(&mut self, s: &str) {
        let written = self
            .inner
            .write_all(s.as_bytes())
            .and_then(|()| self.inner.flush());
        if let Err(e) = written {
            if e.kind() == ErrorKind::BrokenPipe {
                std::process::exit(BROKEN_PIPE_STATUS);
            }
            eprintln!("error: writing to standard output: {e}");
            std::process::exit(2);
        }
    }

    /// Writes a line.
    pub fn line(&mut self, s: impl std::fmt::Display) {
        self.text(&format!("{s}\n"));
    }
}

/// Writes one line to standard output (see [`Out`]).
pub fn line(s: impl std::fmt::Display) {
    Out::new().line(s);
}
