//! Source text, locations, and diagnostics rendered in cel-go's text form.
//!
//! cel-go prints an error as `ERROR: <input>:LINE:COL: message`, then the source line, then a
//! caret line with one `.` per preceding character (a full-width `．` for multi-byte
//! characters) and `^` under the column (`＾` under a multi-byte character). Lines are
//! 1-based, columns are 1-based counts of code points. Errors are sorted by position.

use std::fmt::Write as _;

/// Expression text with a line index.
#[derive(Clone, Debug)]
pub struct Source {
    text: String,
    description: String,
    /// Byte offset of the start of each line.
    line_starts: Vec<u32>,
}

/// A 1-based line and a 0-based column counted in code points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// 1-based line number.
    pub line: u32,
    /// 0-based column, in code points.
    pub column: u32,
}

impl Source {
    /// A source described as `<input>`, as cel-go names expressions it is given as text.
    pub fn new(text: impl Into<String>) -> Source {
        Source::with_description(text, "<input>")
    }

    /// A source with a description of its own (a file name, a rule's path).
    pub fn with_description(text: impl Into<String>, description: impl Into<String>) -> Source {
        let text = text.into();
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        Source {
            text,
            description: description.into(),
            line_starts,
        }
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The description used in diagnostics (`<input>`).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The line and column of a byte offset. Offsets past the end map to the end.
    pub fn location(&self, offset: u32) -> Location {
        let offset = offset.min(self.text.len() as u32);
        let line_idx = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line_idx] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() as u32;
        Location {
            line: line_idx as u32 + 1,
            column,
        }
    }

    /// The text of a 1-based line, without its line terminator.
    pub fn line_text(&self, line: u32) -> Option<&str> {
        let idx = (line as usize).checked_sub(1)?;
        let start = *self.line_starts.get(idx)? as usize;
        let end = self
            .line_starts
            .get(idx + 1)
            .map(|&e| e as usize - 1)
            .unwrap_or(self.text.len());
        Some(&self.text[start..end])
    }
}

/// One problem found in an expression: a syntax error, a type error, or a failed validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Byte offset the problem is reported at.
    pub offset: u32,
    /// The node the problem concerns, when there is one (0 otherwise).
    pub expr_id: i64,
    /// The message, in cel-go's words.
    pub message: String,
}

impl Diagnostic {
    /// The offset of a diagnostic that has no position in the source, such as a limit being
    /// exceeded; cel-go prints its location as `-1:0`.
    pub const NO_LOCATION: u32 = u32::MAX;

    /// A diagnostic with no position in the source ([`Diagnostic::NO_LOCATION`]).
    pub fn without_location(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Diagnostic::NO_LOCATION, message)
    }

    /// Whether the diagnostic points into the source.
    pub fn has_location(&self) -> bool {
        self.offset != Diagnostic::NO_LOCATION
    }

    /// A diagnostic at a byte offset.
    pub fn new(offset: u32, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            offset,
            expr_id: 0,
            message: message.into(),
        }
    }

    /// Renders this diagnostic in cel-go's form against its source.
    pub fn render(&self, source: &Source) -> String {
        if !self.has_location() {
            return format!("ERROR: {}:-1:0: {}", source.description(), self.message);
        }
        let loc = source.location(self.offset);
        let mut out = format!(
            "ERROR: {}:{}:{}: {}",
            source.description(),
            loc.line,
            loc.column + 1,
            self.message
        );
        if let Some(line) = source.line_text(loc.line) {
            let line = line.replace('\t', " ");
            let _ = write!(out, "\n | {line}");
            out.push_str("\n | ");
            let mut chars = line.chars();
            for _ in 0..loc.column {
                match chars.next() {
                    Some(c) if c.len_utf8() > 1 => out.push('\u{ff0e}'),
                    Some(_) => out.push('.'),
                    None => break,
                }
            }
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => out.push('\u{ff3e}'),
                _ => out.push('^'),
            }
        }
        out
    }
}

/// The most diagnostics cel-go prints for one expression.
pub const MAX_REPORTED_ERRORS: usize = 100;

/// Renders a list of diagnostics as cel-go does: sorted by position (stable for equal
/// positions), at most [`MAX_REPORTED_ERRORS`], joined by newlines.
pub fn render_diagnostics(diagnostics: &[Diagnostic], source: &Source) -> String {
    let mut sorted: Vec<&Diagnostic> = diagnostics.iter().collect();
    // Diagnostics without a position come first, as cel-go's line -1 sorts first.
    sorted.sort_by_key(|d| d.has_location().then(|| source.location(d.offset)));
    let mut out = String::new();
    for (i, d) in sorted.iter().take(MAX_REPORTED_ERRORS).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&d.render(source));
    }
    if sorted.len() > MAX_REPORTED_ERRORS {
        let _ = write!(
            out,
            "\n{} more errors were truncated",
            sorted.len() - MAX_REPORTED_ERRORS
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_caret_under_column() {
        let src = Source::new("1 + \n  x");
        let d = Diagnostic::new(7, "undeclared reference to 'x' (in container '')");
        assert_eq!(
            d.render(&src),
            "ERROR: <input>:2:3: undeclared reference to 'x' (in container '')\n |   x\n | ..^"
        );
    }

    #[test]
    fn wide_characters_use_full_width_dots() {
        let src = Source::new("'é' + x");
        let d = Diagnostic::new(7, "m");
        assert_eq!(
            d.render(&src),
            "ERROR: <input>:1:7: m\n | 'é' + x\n | .．....^"
        );
    }

    #[test]
    fn diagnostics_without_location_come_first() {
        let src = Source::new("a");
        let ds = [
            Diagnostic::new(0, "second"),
            Diagnostic::without_location("first"),
        ];
        assert_eq!(
            render_diagnostics(&ds, &src),
            "ERROR: <input>:-1:0: first\nERROR: <input>:1:1: second\n | a\n | ^"
        );
    }

    #[test]
    fn offsets_past_end_clamp() {
        let src = Source::new("ab");
        assert_eq!(src.location(10), Location { line: 1, column: 2 });
    }
}
