//! Reading what users give the command: files, directories (recursively), `-` for stdin,
//! multi-document YAML and JSON, JSON lines, each bounded in size.
//!
//! YAML becomes JSON as Kubernetes' tools make it: a number written with a fraction that is
//! whole (`replicas: 3.0`) becomes an integer, as `kubectl` does when it converts YAML to
//! JSON; JSON input keeps `3.0` a float.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

/// The largest file (or standard input) read: far above any manifest the API server takes
/// (3 MiB per request), low enough that a hostile input cannot exhaust memory.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The longest line of a `--batch` file.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The deepest a YAML or JSON document may nest.
pub const MAX_DEPTH: usize = 200;

/// One document of an input: where it is, and its JSON or why it could not be read.
#[derive(Debug)]
pub struct Document {
    /// The file (`-` for standard input).
    pub file: String,
    /// Its position in the file, from 0.
    pub index: usize,
    /// The document.
    pub value: Result<Json, String>,
}

impl Document {
    /// `file` or `file#2` (documents after the first are numbered from 0).
    pub fn location(&self) -> String {
        if self.index == 0 {
            self.file.clone()
        } else {
            format!("{}#{}", self.file, self.index)
        }
    }
}

/// Reads a whole file (or standard input for `-`), refusing what exceeds
/// [`MAX_FILE_BYTES`] and what is not UTF-8.
pub fn read_text(path: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{path}: larger than {} MiB",
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{path}: not UTF-8 text"))
}

/// The files named: files as given, directories walked recursively for `.yaml`, `.yml` and
/// `.json` files (in name order), `-` as is.
pub fn expand_paths(paths: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for p in paths {
        let path = Path::new(p);
        if p != "-" && path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found, 0).map_err(|e| format!("{p}: {e}"))?;
            found.sort();
            out.extend(found.into_iter().map(|f| f.to_string_lossy().into_owned()));
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> std::io::Result<()> {
    // Symbolic link loops cannot recurse forever.
    if depth > 64 {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out, depth + 1)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Every document of every file named (see [`expand_paths`]). A file that cannot be read
/// is one document holding the error; a document that does not parse holds its error, and
/// the others still come.
pub fn read_documents(paths: &[String]) -> Result<Vec<Document>, String> {
    let mut out = Vec::new();
    for file in expand_paths(paths)? {
        match read_text(&file) {
            Ok(text) => {
                for (index, value) in parse_documents(&text).into_iter().enumerate() {
                    out.push(Document {
                        file: file.clone(),
                        index,
                        value,
                    });
                }
            }
            Err(e) => out.push(Document {
                file: file.clone(),
                index: 0,
                value: Err(e),
            }),
        }
    }
    Ok(out)
}

/// The documents of a text: JSON (one value, or one per line as JSON lines), or
/// multi-document YAML. Empty documents and `null` ones are skipped.
pub fn parse_documents(text: &str) -> Vec<Result<Json, String>> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(v) = parse_json(text) {
            return vec![Ok(v)];
        }
        // JSON lines.
        let lines: Vec<Result<Json, String>> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(parse_json)
            .collect();
        if lines.iter().all(Result::is_ok) {
            return lines;
        }
    }
    parse_yaml(text)
}

/// One JSON value, with Kubernetes' nesting bound.
pub fn parse_json(text: &str) -> Result<Json, String> {
    let v: Json = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    check_depth(&v)?;
    Ok(v)
}

fn parse_yaml(text: &str) -> Vec<Result<Json, String>> {
    split_yaml_documents(text)
        .into_iter()
        .filter_map(|doc| match parse_yaml_document(doc) {
            Ok(Json::Null) => None,
            other => Some(other),
        })
        .collect()
}

/// The documents of a YAML stream, split where Kubernetes' reader splits them: at lines
/// that start with `---` followed by nothing but spaces or a comment. One document that
/// does not parse then spoils only itself.
fn split_yaml_documents(text: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if rest.is_empty() || rest.starts_with('#') {
                docs.push(&text[start..offset]);
                start = offset + line.len();
            }
        }
        offset += line.len();
    }
    docs.push(&text[start..]);
    docs
}

fn parse_yaml_document(doc: &str) -> Result<Json, String> {
    let mut options = serde_saphyr::Options::default();
    // Aliases may not multiply a document past a small factor (YAML bombs).
    options.alias_limits.max_total_replayed_events = 1_000_000;
    options.alias_limits.max_replay_stack_depth = 64;
    options.alias_limits.max_alias_expansions_per_anchor = 10_000;
    if doc.trim().is_empty() {
        return Ok(Json::Null);
    }
    let v: Json = serde_saphyr::from_str_with_options(doc, options)
        .map_err(|e| format!("invalid YAML: {}", first_line(&e.to_string())))?;
    check_depth(&v)?;
    Ok(whole_floats_as_integers(v))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Refuses documents nested deeper than [`MAX_DEPTH`].
fn check_depth(v: &Json) -> Result<(), String> {
    let mut work = vec![(v, 0usize)];
    while let Some((v, d)) = work.pop() {
        if d > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match v {
            Json::Array(items) => work.extend(items.iter().map(|x| (x, d + 1))),
            Json::Object(m) => work.extend(m.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    Ok(())
}

/// `3.0` as `3`, everywhere in a document: what YAML-to-JSON conversion does in Kubernetes'
/// tools (Go's JSON encoder writes a whole float without a fraction).
fn whole_floats_as_integers(v: Json) -> Json {
    match v {
        Json::Number(n) if !n.is_i64() && !n.is_u64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                Json::from(f as i64)
            }
            _ => Json::Number(n),
        },
        Json::Array(items) => {
            Json::Array(items.into_iter().map(whole_floats_as_integers).collect())
        }
        Json::Object(m) => Json::Object(
            m.into_iter()
                .map(|(k, v)| (k, whole_floats_as_integers(v)))
                .collect(),
        ),
        other => other,
    }
}

/// The lines of a `--batch` file, each bounded by [`MAX_LINE_BYTES`]: `Ok(line)` or the
/// error that line gives (too long, not UTF-8). Reading stops at the first I/O error and
/// after a line that is too long.
pub struct BatchLines {
    reader: Box<dyn BufRead>,
    path: String,
    /// Set after an over-long line: the lines after it cannot be found reliably.
    stopped: bool,
}

impl BatchLines {
    /// Opens a batch file (`-` for standard input).
    pub fn open(path: &str) -> Result<BatchLines, String> {
        let reader: Box<dyn BufRead> = if path == "-" {
            Box::new(std::io::BufReader::new(std::io::stdin()))
        } else {
            let f = std::fs::File::open(path).map_err(|e| format!("reading {path}: {e}"))?;
            Box::new(std::io::BufReader::new(f))
        };
        Ok(BatchLines {
            reader,
            path: path.to_string(),
            stopped: false,
        })
    }
}

/// One line of a batch file.
pub enum BatchLine {
    /// The line's text.
    Text(String),
    /// The line could not be used; why.
    Bad(String),
}

impl Iterator for BatchLines {
    type Item = Result<BatchLine, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped {
            return None;
        }
        let mut buf = Vec::new();
        let mut too_long = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) => return Some(Err(format!("reading {}: {e}", self.path))),
            };
            if chunk.is_empty() {
                if buf.is_empty() && !too_long {
                    return None;
                }
                break;
            }
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            buf.extend_from_slice(&chunk[..take]);
            self.reader.consume(take);
            if buf.len() > MAX_LINE_BYTES {
                // Reading on to the end of the line could take forever (`/dev/zero`): stop.
                too_long = true;
                break;
            }
            if done {
                break;
            }
        }
        if too_long {
            self.stopped = true;
            return Some(Ok(BatchLine::Bad(format!(
                "line longer than {} MiB",
                MAX_LINE_BYTES / (1024 * 1024)
            ))));
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        Some(Ok(match String::from_utf8(buf) {
            Ok(s) => BatchLine::Text(s),
            Err(_) => BatchLine::Bad("line is not UTF-8".into()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_and_whole_floats() {
        let docs = parse_documents("a: 1.0\nb: 1.5\n---\n---\nc: [x]\n");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].as_ref().unwrap()["a"], Json::from(1));
        assert_eq!(docs[0].as_ref().unwrap()["b"], Json::from(1.5));
        let json = parse_documents("{\"a\": 1.0}");
        assert!(json[0].as_ref().unwrap()["a"].is_f64());
    }

    #[test]
    fn a_bad_document_spoils_only_itself() {
        let docs = parse_documents("a: 1\n--- # next\nb: [\n---\nc: 3\n");
        assert_eq!(docs.len(), 3);
        assert!(docs[0].is_ok() && docs[1].is_err() && docs[2].is_ok());
        // A `---` inside a value is not a separator.
        let docs = parse_documents("a: |\n  ---x\n");
        assert_eq!(docs.len(), 1);
    }

    #[test]
    fn yaml_bombs_are_refused() {
        let mut bomb = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for i in 1..10 {
            let prev = (b'a' + i - 1) as char;
            let name = (b'a' + i) as char;
            bomb.push_str(&format!(
                "{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
        }
        let docs = parse_documents(&bomb);
        assert!(docs[0].is_err(), "{docs:?}");
    }

    #[test]
    fn deep_documents_are_refused() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        assert!(parse_json(&deep).is_err());
    }
}
