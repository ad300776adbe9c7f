//! Reading what users give the command: files, directories (recursively), `-` for stdin,
//! as streams of documents read as Kubernetes' tools read them.
//!
//! A file is read as kubectl reads it (apimachinery `YAMLOrJSONDecoder`): when its first
//! non-blank byte is `{`, as a stream of JSON values (and as YAML if the first of them is
//! not JSON); otherwise as YAML documents split at lines that start with `---` (followed
//! by nothing, or a comment), each converted as kubectl converts it
//! (`celerity_kubernetes::yaml`: YAML 1.1 values, `0755` octal, `on` a boolean key). A
//! separator line with anything else after `---` ends the file with kubectl's error.
//!
//! Files are streamed: a document is split off, handed on and forgotten, so memory follows
//! the largest document, not the file. Each document is bounded
//! ([`MAX_DOCUMENT_BYTES`], [`MAX_DEPTH`], aliases); a document over the bound is an
//! error of its own and the stream goes on after it. Non-manifest inputs (variables,
//! descriptor sets) are read whole, up to [`MAX_FILE_BYTES`].

use std::collections::VecDeque;
use std::io::{BufRead, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use celerity_kubernetes::yaml::{self, Limits};
use serde_json::Value as Json;

/// The largest non-manifest file read whole (variables, descriptor sets).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The largest document of a manifest stream: ten times the largest request the API server
/// takes (3 MiB), so no manifest a cluster could hold is refused.
pub const MAX_DOCUMENT_BYTES: usize = 32 * 1024 * 1024;

/// The longest line of a `--batch` file.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The deepest a YAML or JSON document may nest.
pub const MAX_DEPTH: usize = 200;

/// One document of an input: where it is, and its JSON or why it could not be read.
#[derive(Debug)]
pub struct Document {
    /// The file (`-` for standard input).
    pub file: Arc<str>,
    /// Its position in the file, from 0.
    pub index: usize,
    /// The document.
    pub value: Result<Json, String>,
    /// Keys its YAML repeats within a mapping (paths such as `spec.size`): the last value
    /// is kept, and strict decoding refuses them.
    pub duplicates: Vec<String>,
}

impl Document {
    /// `file` or `file#2` (documents after the first are numbered from 0).
    pub fn location(&self) -> String {
        if self.index == 0 {
            self.file.to_string()
        } else {
            format!("{}#{}", self.file, self.index)
        }
    }
}

/// A document split off a stream, not yet converted (conversion is the costly part, and
/// runs where the document is validated, on any thread).
#[derive(Debug)]
pub struct RawDocument {
    /// The file.
    pub file: Arc<str>,
    /// Its position in the file.
    pub index: usize,
    body: Body,
}

#[derive(Debug)]
enum Body {
    Yaml(String),
    Json(Json),
    Error(String),
}

impl RawDocument {
    /// The text's size, for bounding what is in flight.
    pub fn weight(&self) -> usize {
        match &self.body {
            Body::Yaml(t) => t.len(),
            Body::Json(_) | Body::Error(_) => 64,
        }
    }

    /// The document converted to JSON; `None` for an empty (or `null`) document, which
    /// kubectl skips.
    pub fn parse(self) -> Option<Document> {
        let (value, duplicates) = match self.body {
            Body::Json(j) => (Ok(j), Vec::new()),
            Body::Error(e) => (Err(e), Vec::new()),
            Body::Yaml(text) => match yaml::to_json(&text, &yaml_limits()) {
                Ok(c) => (Ok(c.value), c.duplicates),
                Err(e) => (
                    Err(format!("error converting YAML to JSON: {e}")),
                    Vec::new(),
                ),
            },
        };
        if matches!(value, Ok(Json::Null)) {
            return None;
        }
        Some(Document {
            file: self.file,
            index: self.index,
            value,
            duplicates,
        })
    }
}

fn yaml_limits() -> Limits {
    Limits {
        max_depth: MAX_DEPTH,
        ..Limits::default()
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

/// Every document of every file named (see [`expand_paths`]), read whole: for inputs that
/// are needed all at once (CRDs, policies, old objects). A file that cannot be read is one
/// document holding the error; a document that does not parse holds its error, and the
/// others still come.
pub fn read_documents(paths: &[String]) -> Result<Vec<Document>, String> {
    Ok(read_raw_documents(paths)?
        .into_iter()
        .filter_map(RawDocument::parse)
        .collect())
}

/// The documents of files, directories or `-`, split but not converted yet (the caller
/// may convert them across the cores: [`RawDocument::parse`] each).
pub fn read_raw_documents(paths: &[String]) -> Result<Vec<RawDocument>, String> {
    Ok(DocumentStream::open(paths)?.collect())
}

/// The documents of a text (see the module's header), converted. Empty documents and
/// `null` ones are skipped.
#[allow(
    dead_code,
    reason = "the fuzz targets and tests read documents from text"
)]
pub fn parse_documents(text: &str) -> Vec<Result<Json, String>> {
    text_documents(text).into_iter().map(|d| d.value).collect()
}

/// The documents of a text, read as a file is, with the keys each repeats.
#[allow(
    dead_code,
    reason = "the fuzz targets and tests read documents from text"
)]
pub fn text_documents(text: &str) -> Vec<Document> {
    let file: Arc<str> = Arc::from("-");
    FileDocuments::new(file, Box::new(Cursor::new(text.as_bytes().to_vec())))
        .filter_map(RawDocument::parse)
        .collect()
}

/// One JSON value, with Kubernetes' nesting bound.
pub fn parse_json(text: &str) -> Result<Json, String> {
    let v: Json = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    check_depth(&v)?;
    Ok(v)
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

/// The documents of several files, in order, one file open at a time.
pub struct DocumentStream {
    files: VecDeque<String>,
    current: Option<FileDocuments>,
}

impl DocumentStream {
    /// The documents of the files named (see [`expand_paths`]).
    pub fn open(paths: &[String]) -> Result<DocumentStream, String> {
        Ok(DocumentStream {
            files: expand_paths(paths)?.into(),
            current: None,
        })
    }
}

impl Iterator for DocumentStream {
    type Item = RawDocument;

    fn next(&mut self) -> Option<RawDocument> {
        loop {
            if let Some(doc) = self.current.as_mut().and_then(Iterator::next) {
                return Some(doc);
            }
            let file = self.files.pop_front()?;
            let name: Arc<str> = Arc::from(file.as_str());
            let reader: std::io::Result<Box<dyn BufRead + Send>> = if file == "-" {
                Ok(Box::new(std::io::BufReader::new(std::io::stdin())))
            } else {
                std::fs::File::open(&file)
                    .map(|f| Box::new(std::io::BufReader::with_capacity(1 << 16, f)) as _)
            };
            match reader {
                Ok(r) => self.current = Some(FileDocuments::new(name, r)),
                Err(e) => {
                    self.current = None;
                    return Some(RawDocument {
                        file: name,
                        index: 0,
                        body: Body::Error(format!("{file}: {e}")),
                    });
                }
            }
        }
    }
}

/// How a file is being read.
enum Mode {
    /// Not yet known: the first non-blank byte decides.
    Start,
    Yaml,
    Json,
    Done,
}

/// The documents of one file, split off as they are read.
struct FileDocuments {
    file: Arc<str>,
    reader: Box<dyn BufRead + Send>,
    mode: Mode,
    index: usize,
}

/// One line of a stream, bounded.
enum Line {
    End,
    /// The line is in the caller's buffer.
    Text,
    /// Longer than the document bound: the line was skipped.
    TooLong,
}

impl FileDocuments {
    fn new(file: Arc<str>, reader: Box<dyn BufRead + Send>) -> FileDocuments {
        FileDocuments {
            file,
            reader,
            mode: Mode::Start,
            index: 0,
        }
    }

    fn doc(&mut self, body: Body) -> RawDocument {
        let d = RawDocument {
            file: self.file.clone(),
            index: self.index,
            body,
        };
        self.index += 1;
        d
    }

    fn io_error(&mut self, e: std::io::Error) -> RawDocument {
        self.mode = Mode::Done;
        let message = format!("{}: {e}", self.file);
        self.doc(Body::Error(message))
    }

    /// Skips blanks; the next byte, if any.
    fn peek_past_blanks(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => {
                    let b = buf[i];
                    self.reader.consume(i);
                    return Ok(Some(b));
                }
                None => {
                    let n = buf.len();
                    self.reader.consume(n);
                }
            }
        }
    }

    /// Reads a line (with its newline), up to [`MAX_DOCUMENT_BYTES`], into `out` (cleared
    /// first: one buffer serves every line of a document).
    fn line(&mut self, out: &mut Vec<u8>) -> std::io::Result<Line> {
        out.clear();
        let mut too_long = false;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let (take, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if !too_long {
                out.extend_from_slice(&buf[..take]);
                if out.len() > MAX_DOCUMENT_BYTES {
                    too_long = true;
                    *out = Vec::new();
                }
            }
            self.reader.consume(take);
            if done {
                break;
            }
        }
        Ok(match (too_long, out.is_empty()) {
            (true, _) => Line::TooLong,
            (false, true) => Line::End,
            (false, false) => Line::Text,
        })
    }

    /// The next YAML document: the lines up to a separator.
    fn next_yaml(&mut self) -> Option<RawDocument> {
        let mut text: Vec<u8> = Vec::new();
        let mut bytes: Vec<u8> = Vec::new();
        let mut oversize = false;
        let mut content = false;
        loop {
            match self.line(&mut bytes) {
                Ok(Line::End) => {
                    self.mode = Mode::Done;
                    break;
                }
                Ok(Line::TooLong) => {
                    oversize = true;
                    continue;
                }
                Ok(Line::Text) => {}
                Err(e) => return Some(self.io_error(e)),
            }
            if let Some(rest) = bytes.strip_prefix(b"---") {
                let rest = String::from_utf8_lossy(rest);
                let rest = rest.trim();
                if rest.is_empty() || rest.starts_with('#') {
                    if content || oversize {
                        break;
                    }
                    text.clear();
                    continue;
                }
                // kubectl's reader stops the file here.
                self.mode = Mode::Done;
                return Some(self.doc(Body::Error(format!(
                    "invalid Yaml document separator: {rest}"
                ))));
            }
            if !oversize {
                // Once the document has content, its other lines need no look.
                content = content || line_has_content(&bytes);
                text.extend_from_slice(&bytes);
                if text.len() > MAX_DOCUMENT_BYTES {
                    oversize = true;
                    text = Vec::new();
                }
            }
        }
        if oversize {
            return Some(self.doc(Body::Error(format!(
                "document larger than {} MiB",
                MAX_DOCUMENT_BYTES / (1024 * 1024)
            ))));
        }
        if !content {
            return None;
        }
        Some(match String::from_utf8(text) {
            Ok(t) => self.doc(Body::Yaml(t)),
            Err(_) => self.doc(Body::Error("not UTF-8 text".into())),
        })
    }

    /// The next JSON value of a JSON stream (a value's text is found by matching its
    /// brackets, then parsed whole).
    fn next_json(&mut self) -> Option<RawDocument> {
        let first = match self.peek_past_blanks() {
            Ok(None) => {
                self.mode = Mode::Done;
                return None;
            }
            Ok(Some(b)) => b,
            Err(e) => return Some(self.io_error(e)),
        };
        if first != b'{' && first != b'[' {
            self.mode = Mode::Done;
            return Some(self.doc(Body::Error(format!(
                "invalid JSON: expected a value, found {:?}",
                first as char
            ))));
        }
        let text = match self.json_text() {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                self.mode = Mode::Done;
                return Some(self.doc(Body::Error(e)));
            }
            Err(e) => return Some(self.io_error(e)),
        };
        match serde_json::from_slice::<Json>(&text) {
            Ok(v) => {
                let body = match check_depth(&v) {
                    Ok(()) => Body::Json(v),
                    Err(e) => Body::Error(e),
                };
                Some(self.doc(body))
            }
            // Not JSON after all: the first value is read again as YAML, as kubectl does
            // (`{a: b}` is a YAML flow mapping).
            Err(_) if self.index == 0 => {
                let rest = std::mem::replace(&mut self.reader, Box::new(Cursor::new(Vec::new())));
                self.reader = Box::new(std::io::BufReader::new(Cursor::new(text).chain(rest)));
                self.mode = Mode::Yaml;
                self.next_yaml()
            }
            Err(e) => {
                self.mode = Mode::Done;
                Some(self.doc(Body::Error(format!("invalid JSON: {e}"))))
            }
        }
    }

    /// The bytes of one JSON value, found by bracket matching (strings and escapes
    /// respected), bounded by [`MAX_DOCUMENT_BYTES`].
    fn json_text(&mut self) -> std::io::Result<Result<Vec<u8>, String>> {
        let mut out = Vec::new();
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(Err("invalid JSON: the stream ends inside a value".into()));
            }
            let mut end = None;
            for (i, &b) in buf.iter().enumerate() {
                if in_string {
                    match (escaped, b) {
                        (true, _) => escaped = false,
                        (false, b'\\') => escaped = true,
                        (false, b'"') => in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let take = end.unwrap_or(buf.len());
            out.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if out.len() > MAX_DOCUMENT_BYTES {
                return Ok(Err(format!(
                    "document larger than {} MiB",
                    MAX_DOCUMENT_BYTES / (1024 * 1024)
                )));
            }
            if end.is_some() {
                return Ok(Ok(out));
            }
        }
    }
}

/// Whether a line holds anything but blanks and a comment.
fn line_has_content(line: &[u8]) -> bool {
    let t = String::from_utf8_lossy(line);
    let t = t.trim();
    !t.is_empty() && !t.starts_with('#')
}

impl Iterator for FileDocuments {
    type Item = RawDocument;

    fn next(&mut self) -> Option<RawDocument> {
        loop {
            match self.mode {
                Mode::Done => return None,
                Mode::Start => match self.peek_past_blanks() {
                    Ok(None) => self.mode = Mode::Done,
                    Ok(Some(b'{')) => self.mode = Mode::Json,
                    Ok(Some(_)) => self.mode = Mode::Yaml,
                    Err(e) => return Some(self.io_error(e)),
                },
                Mode::Json => return self.next_json(),
                Mode::Yaml => {
                    if let Some(d) = self.next_yaml() {
                        return Some(d);
                    }
                }
            }
        }
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
    fn json_streams_separators_and_kubernetes_values() {
        let docs = parse_documents("{\"a\": 1}\n{\"b\": [2]} {\"c\": \"}\"}\n");
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[2].as_ref().unwrap()["c"], Json::from("}"));
        // A flow mapping that is not JSON is read as YAML.
        let docs = parse_documents("{a: yes}\n");
        assert_eq!(docs[0].as_ref().unwrap()["a"], Json::Bool(true));
        // Octal, as kubectl reads it.
        assert_eq!(
            parse_documents("m: 0644\n")[0].as_ref().unwrap()["m"],
            Json::from(420)
        );
        // A separator with something after it ends the file, and loses the document
        // being read, as kubectl's reader does.
        let docs = parse_documents("a: 1\n---foo\nb: 2\n");
        assert_eq!(docs.len(), 1);
        assert_eq!(
            docs[0].as_ref().unwrap_err(),
            "invalid Yaml document separator: foo"
        );
        // Comment-only documents are skipped.
        assert_eq!(parse_documents("# x\n---\n# y\n---\na: 1\n").len(), 1);
    }

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
