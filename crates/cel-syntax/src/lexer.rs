//! The lexer: splits CEL source text into tokens.
//!
//! It follows the lexical rules of cel-go's ANTLR grammar (`CEL.g4`) closely, because those
//! rules decide which inputs are errors and how error messages read:
//!
//! * the longest match wins, and when a longer candidate fails part-way the lexer falls back to
//!   the last complete token (so `0x` is `0` followed by the identifier `x`, and `1.e5` is `1`,
//!   `.`, `e5`);
//! * when no token matches, the text from the token start up to and including the character
//!   that could not be matched is skipped and reported as a "token recognition error", as
//!   ANTLR does (`a | b` skips `| `);
//! * string literals are checked for well-formed escapes here; what the escapes mean (and the
//!   errors about code points) is decided in [`crate::literal`].
//!
//! The lexer works on bytes: every token of the grammar is ASCII, and non-ASCII text can only
//! appear inside strings, comments and errors. Tokens refer to the source by byte offsets, so
//! lexing allocates nothing but the token vector.

/// The kinds of token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// End of input; always the last token.
    Eof,
    /// `[A-Za-z_][A-Za-z0-9_]*`, keywords excluded.
    Ident,
    /// A backtick-quoted identifier, `` `a.b-c` ``.
    EscIdent,
    /// A decimal or hexadecimal int literal, without sign.
    Int,
    /// An int literal with a `u`/`U` suffix.
    Uint,
    /// A floating point literal.
    Float,
    /// A string literal, quotes and prefix included.
    Str,
    /// A bytes literal, quotes and prefix included.
    Bytes,
    True,
    False,
    Null,
    In,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Dot,
    Comma,
    Minus,
    Bang,
    Question,
    Colon,
    Plus,
    Star,
    Slash,
    Percent,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
}

/// One token: its kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: Tok,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

/// Text the lexer could not turn into a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LexError {
    /// Index of the token that follows the bad text. The parser reports the error when it
    /// reaches that token, which is when ANTLR's lexer would have run into it.
    pub(crate) before_token: usize,
    /// Byte range of the skipped text.
    pub(crate) start: u32,
    pub(crate) end: u32,
}

/// The result of lexing a whole expression.
pub(crate) struct Lexed {
    pub(crate) tokens: Vec<Token>,
    pub(crate) errors: Vec<LexError>,
}

/// Splits `src` into tokens. The last token is always [`Tok::Eof`].
pub(crate) fn lex(src: &str) -> Lexed {
    let mut lexer = Lexer {
        text: src,
        bytes: src.as_bytes(),
        pos: 0,
        tokens: Vec::with_capacity(src.len() / 3 + 2),
        errors: Vec::new(),
    };
    lexer.run();
    Lexed {
        tokens: lexer.tokens,
        errors: lexer.errors,
    }
}

/// Escapes a piece of source text for an error message the way ANTLR does: newlines, carriage
/// returns and tabs are shown as `\n`, `\r` and `\t`.
pub(crate) fn display_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `name` is one of the words CEL reserves and rejects as an identifier or a global
/// function name (cel-go's list, keywords excluded since they never lex as identifiers).
pub(crate) fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "as" | "break"
            | "const"
            | "continue"
            | "else"
            | "for"
            | "function"
            | "if"
            | "import"
            | "let"
            | "loop"
            | "package"
            | "namespace"
            | "return"
            | "var"
            | "void"
            | "while"
    )
}

/// Whether `b` may appear inside a backtick-quoted identifier.
pub(crate) fn is_escaped_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/' | b' ')
}

fn is_quote(b: Option<&u8>) -> bool {
    matches!(b, Some(b'\'' | b'"'))
}

fn is_digit(b: Option<&u8>) -> bool {
    matches!(b, Some(b'0'..=b'9'))
}

fn is_hex(b: Option<&u8>) -> bool {
    matches!(b, Some(c) if c.is_ascii_hexdigit())
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    tokens: Vec<Token>,
    errors: Vec<LexError>,
}

impl Lexer<'_> {
    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let c = self.bytes[start];
            let next = self.bytes.get(start + 1).copied();
            let kind = match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0c => {
                    self.pos += 1;
                    continue;
                }
                b'/' if next == Some(b'/') => {
                    // A comment runs to the end of the line; the newline is whitespace.
                    self.pos = self.bytes[start..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(self.bytes.len(), |n| start + n);
                    continue;
                }
                b'/' => self.single(Tok::Slash),
                b'(' => self.single(Tok::LParen),
                b')' => self.single(Tok::RParen),
                b'[' => self.single(Tok::LBracket),
                b']' => self.single(Tok::RBracket),
                b'{' => self.single(Tok::LBrace),
                b'}' => self.single(Tok::RBrace),
                b',' => self.single(Tok::Comma),
                b'-' => self.single(Tok::Minus),
                b'?' => self.single(Tok::Question),
                b':' => self.single(Tok::Colon),
                b'+' => self.single(Tok::Plus),
                b'*' => self.single(Tok::Star),
                b'%' => self.single(Tok::Percent),
                b'!' if next == Some(b'=') => self.double(Tok::NotEq),
                b'!' => self.single(Tok::Bang),
                b'<' if next == Some(b'=') => self.double(Tok::Le),
                b'<' => self.single(Tok::Lt),
                b'>' if next == Some(b'=') => self.double(Tok::Ge),
                b'>' => self.single(Tok::Gt),
                b'=' if next == Some(b'=') => self.double(Tok::EqEq),
                b'&' if next == Some(b'&') => self.double(Tok::AndAnd),
                b'|' if next == Some(b'|') => self.double(Tok::OrOr),
                // A lone `=`, `&` or `|` started a two-character token that did not complete.
                b'=' | b'&' | b'|' => {
                    self.fail(start, start + 1);
                    continue;
                }
                b'.' if is_digit(self.bytes.get(start + 1)) => self.number(start),
                b'.' => self.single(Tok::Dot),
                b'0'..=b'9' => self.number(start),
                b'\'' | b'"' => match self.string(start, false, false) {
                    Ok(kind) => kind,
                    Err(fail_at) => {
                        self.fail(start, fail_at);
                        continue;
                    }
                },
                b'`' => match self.escaped_ident(start) {
                    Some(kind) => kind,
                    None => continue,
                },
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word(start),
                _ => {
                    self.fail(start, start);
                    continue;
                }
            };
            self.tokens.push(Token {
                kind,
                start: start as u32,
                end: self.pos as u32,
            });
        }
        let end = self.bytes.len() as u32;
        self.tokens.push(Token {
            kind: Tok::Eof,
            start: end,
            end,
        });
    }

    fn single(&mut self, kind: Tok) -> Tok {
        self.pos += 1;
        kind
    }

    fn double(&mut self, kind: Tok) -> Tok {
        self.pos += 2;
        kind
    }

    /// Offset just past the character starting at `i` (or the end of input).
    fn after_char(&self, i: usize) -> usize {
        if i >= self.bytes.len() {
            return self.bytes.len();
        }
        let mut j = i + 1;
        while j < self.bytes.len() && !self.text.is_char_boundary(j) {
            j += 1;
        }
        j
    }

    /// Records that no token matched from `start`; `fail_at` is the character that could not
    /// be matched. Like ANTLR, the skipped text includes that character.
    fn fail(&mut self, start: usize, fail_at: usize) {
        let end = self.after_char(fail_at);
        self.errors.push(LexError {
            before_token: self.tokens.len(),
            start: start as u32,
            end: end as u32,
        });
        self.pos = end;
    }

    fn digits(&self, mut i: usize) -> usize {
        while is_digit(self.bytes.get(i)) {
            i += 1;
        }
        i
    }

    /// An exponent `[eE][+-]?[0-9]+` at `i`, returning its end, or `None` if incomplete.
    fn exponent(&self, i: usize) -> Option<usize> {
        if !matches!(self.bytes.get(i), Some(b'e' | b'E')) {
            return None;
        }
        let mut j = i + 1;
        if matches!(self.bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        is_digit(self.bytes.get(j)).then(|| self.digits(j))
    }

    fn number(&mut self, start: usize) -> Tok {
        let b = self.bytes;
        if b[start] == b'.' {
            let mut i = self.digits(start + 1);
            if let Some(e) = self.exponent(i) {
                i = e;
            }
            self.pos = i;
            return Tok::Float;
        }
        if b[start] == b'0' && b.get(start + 1) == Some(&b'x') && is_hex(b.get(start + 2)) {
            let mut i = start + 2;
            while is_hex(b.get(i)) {
                i += 1;
            }
            if matches!(b.get(i), Some(b'u' | b'U')) {
                self.pos = i + 1;
                return Tok::Uint;
            }
            self.pos = i;
            return Tok::Int;
        }
        let mut i = self.digits(start);
        let mut float = false;
        if b.get(i) == Some(&b'.') && is_digit(b.get(i + 1)) {
            i = self.digits(i + 1);
            float = true;
        }
        if let Some(e) = self.exponent(i) {
            i = e;
            float = true;
        }
        if !float && matches!(b.get(i), Some(b'u' | b'U')) {
            self.pos = i + 1;
            return Tok::Uint;
        }
        self.pos = i;
        if float { Tok::Float } else { Tok::Int }
    }

    /// An identifier, keyword, or prefixed string/bytes literal starting at `start`.
    fn word(&mut self, start: usize) -> Tok {
        let b = self.bytes;
        let lower = |i: usize| b.get(i).map(u8::to_ascii_lowercase);
        // Prefixes: r (raw), b (bytes), and both in either order.
        let prefix = match (lower(start), lower(start + 1)) {
            (Some(b'r'), _) if is_quote(b.get(start + 1)) => Some((1, true, false)),
            (Some(b'b'), _) if is_quote(b.get(start + 1)) => Some((1, false, true)),
            (Some(b'r'), Some(b'b')) | (Some(b'b'), Some(b'r')) if is_quote(b.get(start + 2)) => {
                Some((2, true, true))
            }
            _ => None,
        };
        if let Some((len, raw, bytes)) = prefix {
            if let Ok(kind) = self.string(start + len, raw, bytes) {
                return kind;
            }
            // An unterminated prefixed string: the longest token that did match is the
            // prefix, as an identifier; the quote then starts a (failing) token of its own.
            self.pos = start + len;
            return Tok::Ident;
        }
        let mut i = start + 1;
        while matches!(b.get(i), Some(c) if c.is_ascii_alphanumeric() || *c == b'_') {
            i += 1;
        }
        self.pos = i;
        match &self.text[start..i] {
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            "in" => Tok::In,
            _ => Tok::Ident,
        }
    }

    /// A string or bytes literal whose opening quote is at `quote`. On success sets `pos` past
    /// the literal; on failure returns the offset of the character that could not be matched.
    fn string(&mut self, quote: usize, raw: bool, bytes: bool) -> Result<Tok, usize> {
        let b = self.bytes;
        let q = b[quote];
        let kind = if bytes { Tok::Bytes } else { Tok::Str };
        if b.get(quote + 1) == Some(&q) && b.get(quote + 2) == Some(&q) {
            let mut i = quote + 3;
            loop {
                if i >= b.len() {
                    break;
                }
                if b[i] == q && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                    self.pos = i + 3;
                    return Ok(kind);
                }
                if !raw && b[i] == b'\\' {
                    match self.escape(i) {
                        Ok(j) => i = j,
                        Err(_) => break,
                    }
                } else {
                    i += 1;
                }
            }
            // An unterminated triple-quoted string: the longest complete token is the empty
            // string formed by its first two quotes.
            self.pos = quote + 2;
            return Ok(kind);
        }
        let mut i = quote + 1;
        loop {
            let Some(&c) = b.get(i) else {
                return Err(i);
            };
            if c == q {
                self.pos = i + 1;
                return Ok(kind);
            }
            if c == b'\n' || c == b'\r' {
                return Err(i);
            }
            if !raw && c == b'\\' {
                i = self.escape(i)?;
            } else {
                i += 1;
            }
        }
    }

    /// Checks the escape sequence whose backslash is at `i`; returns the offset after it, or
    /// the offset of the first character that does not fit.
    fn escape(&self, i: usize) -> Result<usize, usize> {
        let b = self.bytes;
        let j = i + 1;
        let expect = |from: usize, n: usize, ok: fn(u8) -> bool| -> Result<usize, usize> {
            for k in from..from + n {
                match b.get(k) {
                    Some(&c) if ok(c) => {}
                    _ => return Err(k),
                }
            }
            Ok(from + n)
        };
        match b.get(j) {
            None => Err(j),
            Some(
                b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'"' | b'\'' | b'\\' | b'?' | b'`',
            ) => Ok(j + 1),
            Some(b'0'..=b'3') => expect(j + 1, 2, |c| (b'0'..=b'7').contains(&c)),
            Some(b'x' | b'X') => expect(j + 1, 2, |c| c.is_ascii_hexdigit()),
            Some(b'u') => expect(j + 1, 4, |c| c.is_ascii_hexdigit()),
            Some(b'U') => expect(j + 1, 8, |c| c.is_ascii_hexdigit()),
            Some(_) => Err(j),
        }
    }

    /// A backtick-quoted identifier; `None` after reporting an error.
    fn escaped_ident(&mut self, start: usize) -> Option<Tok> {
        let b = self.bytes;
        let mut i = start + 1;
        while matches!(b.get(i), Some(&c) if is_escaped_ident_byte(c)) {
            i += 1;
        }
        if i > start + 1 && b.get(i) == Some(&b'`') {
            self.pos = i + 1;
            return Some(Tok::EscIdent);
        }
        self.fail(start, i);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Tok, &str)> {
        lex(src)
            .tokens
            .iter()
            .map(|t| (t.kind, &src[t.start as usize..t.end as usize]))
            .collect()
    }

    fn errors(src: &str) -> Vec<&str> {
        lex(src)
            .errors
            .iter()
            .map(|e| &src[e.start as usize..e.end as usize])
            .collect()
    }

    #[test]
    fn numbers_fall_back_to_the_longest_complete_token() {
        use Tok::*;
        assert_eq!(kinds("0x"), vec![(Int, "0"), (Ident, "x"), (Eof, "")]);
        assert_eq!(kinds("0x1Fu"), vec![(Uint, "0x1Fu"), (Eof, "")]);
        assert_eq!(
            kinds("1.e5"),
            vec![(Int, "1"), (Dot, "."), (Ident, "e5"), (Eof, "")]
        );
        assert_eq!(
            kinds("1e+"),
            vec![(Int, "1"), (Ident, "e"), (Plus, "+"), (Eof, "")]
        );
        assert_eq!(kinds(".5e-3"), vec![(Float, ".5e-3"), (Eof, "")]);
        assert_eq!(kinds("1.5u"), vec![(Float, "1.5"), (Ident, "u"), (Eof, "")]);
        assert_eq!(kinds("12U"), vec![(Uint, "12U"), (Eof, "")]);
    }

    #[test]
    fn strings_and_prefixes() {
        use Tok::*;
        assert_eq!(kinds(r#"r'\'"#), vec![(Str, r"r'\'"), (Eof, "")]);
        assert_eq!(kinds("b'''a'''"), vec![(Bytes, "b'''a'''"), (Eof, "")]);
        assert_eq!(
            kinds("Rb'x' bR\"y\""),
            vec![(Bytes, "Rb'x'"), (Bytes, "bR\"y\""), (Eof, "")]
        );
        assert_eq!(kinds("'''abc"), vec![(Str, "''"), (Eof, "")]);
        assert_eq!(errors("'''abc"), vec!["'abc"]);
        assert_eq!(kinds("b'abc"), vec![(Ident, "b"), (Eof, "")]);
        assert_eq!(errors(r#""\xFh""#), vec![r#""\xFh"#, "\""]);
        assert_eq!(errors("'a\nb'"), vec!["'a\n", "'"]);
    }

    #[test]
    fn recognition_errors_swallow_the_failing_character() {
        assert_eq!(errors("a | b"), vec!["| "]);
        assert_eq!(errors("a =b"), vec!["=b"]);
        assert_eq!(errors("a.`$b`"), vec!["`$", "`"]);
        assert_eq!(errors("é"), vec!["é"]);
        assert_eq!(errors("1 + $"), vec!["$"]);
    }

    #[test]
    fn comments_and_whitespace() {
        use Tok::*;
        assert_eq!(
            kinds("a // c\n\x0c+ b"),
            vec![(Ident, "a"), (Plus, "+"), (Ident, "b"), (Eof, "")]
        );
        assert_eq!(kinds("in inx"), vec![(In, "in"), (Ident, "inx"), (Eof, "")]);
    }
}
