//! The encoders extension (cel-go's `ext.Encoders()`, library `cel.lib.ext.encoders`),
//! version 0.
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `base64.encode` | `base64.encode(bytes) -> string` | `base64.encode(b'hello')` → `'aGVsbG8='` | 0 |
//! | `base64.decode` | `base64.decode(string) -> bytes` | `base64.decode('aGVsbG8')` → `b'hello'` | 0 |
//!
//! Encoding uses the standard alphabet with padding. Decoding behaves as cel-go's: Go's
//! `base64.StdEncoding` first (padding required, `\r` and `\n` ignored, non-zero trailing
//! bits accepted), then, if that fails, `base64.RawStdEncoding` (no padding allowed). The
//! error is Go's, from the second attempt: `illegal base64 data at input byte 0`.
//!
//! # Costs
//!
//! No cost hooks: each call costs 1.

use cel_runtime::{Error, Implementation, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{Library, LibraryContents};

/// The encoders extension library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Encoders {
    version: u32,
}

impl Encoders {
    /// The library at a version (only version 0 exists here).
    pub fn version(version: u32) -> Encoders {
        Encoders { version }
    }
}

impl Library for Encoders {
    fn name(&self) -> &str {
        "cel.lib.ext.encoders"
    }

    fn contents(&self) -> LibraryContents {
        let _ = self.version;
        let mut c = LibraryContents {
            functions: vec![
                FunctionDecl::new(
                    "base64.decode",
                    vec![OverloadDecl::global(
                        "base64_decode_string",
                        vec![Type::String],
                        Type::Bytes,
                    )],
                ),
                FunctionDecl::new(
                    "base64.encode",
                    vec![OverloadDecl::global(
                        "base64_encode_bytes",
                        vec![Type::Bytes],
                        Type::String,
                    )],
                ),
            ],
            ..LibraryContents::default()
        };
        c.implement("base64_decode_string", Implementation::Unary(decode_value));
        c.implement("base64_encode_bytes", Implementation::Unary(encode_value));
        c
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn encode(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        let sextets = [n >> 18, n >> 12, n >> 6, n];
        for (i, s) in sextets.iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(s & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

fn corrupt(at: usize) -> Error {
    Error::new(format!("illegal base64 data at input byte {at}"))
}

/// Go's base64 decoding of the standard alphabet, padded (`padded`) or raw: `\r` and `\n`
/// are skipped, trailing bits may be non-zero, and the error names the offending offset.
pub fn decode_with(src: &[u8], padded: bool) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3 + 3);
    let mut si = 0;
    while si < src.len() {
        let mut quantum = [0u8; 4];
        let mut len = 4;
        let mut j = 0;
        let mut trailing_error = None;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                if j == 1 || padded {
                    return Err(corrupt(si - j));
                }
                len = j;
                break;
            }
            let c = src[si];
            si += 1;
            if let Some(v) = sextet(c) {
                quantum[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if !padded || c != b'=' {
                return Err(corrupt(si - 1));
            }
            // Padding: only after two or three symbols.
            match j {
                0 | 1 => return Err(corrupt(si - 1)),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(corrupt(src.len()));
                    }
                    if src[si] != b'=' {
                        return Err(corrupt(si - 1));
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                trailing_error = Some(corrupt(si));
            }
            len = j;
            break;
        }
        let v = (u32::from(quantum[0]) << 18)
            | (u32::from(quantum[1]) << 12)
            | (u32::from(quantum[2]) << 6)
            | u32::from(quantum[3]);
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..len - 1]);
        if let Some(e) = trailing_error {
            return Err(e);
        }
    }
    Ok(out)
}

/// `base64.decode(s)`: padded standard base64, else unpadded.
pub fn decode(s: &str) -> Result<Vec<u8>> {
    decode_with(s.as_bytes(), true).or_else(|_| decode_with(s.as_bytes(), false))
}

fn decode_value(v: &Value) -> Result<Value> {
    match v {
        Value::String(s) => decode(s).map(Value::bytes),
        _ => Err(Error::no_such_overload()),
    }
}

fn encode_value(v: &Value) -> Result<Value> {
    match v {
        Value::Bytes(b) => Ok(Value::from(encode(b))),
        _ => Err(Error::no_such_overload()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in ["", "h", "he", "hel", "hello", "Hello World!"] {
            let e = encode(s.as_bytes());
            assert_eq!(decode(&e).unwrap(), s.as_bytes(), "{e}");
            assert_eq!(decode(e.trim_end_matches('=')).unwrap(), s.as_bytes());
        }
        assert_eq!(encode(b"hello"), "aGVsbG8=");
        assert_eq!(encode(&[0xff, 0xfe]), "//4=");
    }

    #[test]
    fn go_behaviour() {
        assert_eq!(decode("aGVs\nbG8=").unwrap(), b"hello");
        assert_eq!(
            decode("aGVsbG9=").unwrap(),
            b"hello",
            "trailing bits are accepted"
        );
        let err = |s: &str| decode(s).unwrap_err().message;
        assert_eq!(err("a"), "illegal base64 data at input byte 0");
        assert_eq!(err("!!!!"), "illegal base64 data at input byte 0");
        assert_eq!(err("aGVsbG8=x"), "illegal base64 data at input byte 7");
        assert_eq!(decode("aG==").unwrap(), b"h");
        assert_eq!(err("a==="), "illegal base64 data at input byte 1");
        assert_eq!(err("aGVsb"), "illegal base64 data at input byte 4");
    }
}
