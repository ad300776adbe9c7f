//! Parsing types written as cel-go writes them: `int`, `list(string)`,
//! `map(string, dyn)`, `optional_type(int)`, `google.protobuf.Timestamp`, `type(int)`.

use crate::{Primitive, Type};

impl Type {
    /// Parses a type written as cel-go prints it. Unknown dotted names are message types;
    /// unknown names with parameters are opaque types.
    pub fn parse(text: &str) -> Result<Type, String> {
        let mut p = TypeParser {
            s: text.as_bytes(),
            pos: 0,
            depth: 0,
        };
        let t = p.ty()?;
        p.ws();
        if p.pos != p.s.len() {
            return Err(format!("unexpected '{}' in type '{text}'", &text[p.pos..]));
        }
        Ok(t)
    }
}

struct TypeParser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl TypeParser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn name(&mut self) -> Result<String, String> {
        self.ws();
        let start = self.pos;
        while self.pos < self.s.len()
            && (self.s[self.pos].is_ascii_alphanumeric() || matches!(self.s[self.pos], b'_' | b'.'))
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Err("expected a type name".to_string());
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    fn ty(&mut self) -> Result<Type, String> {
        self.depth += 1;
        if self.depth > 64 {
            return Err("type nested too deeply".to_string());
        }
        let name = self.name()?;
        self.ws();
        let mut params = Vec::new();
        if self.pos < self.s.len() && self.s[self.pos] == b'(' {
            self.pos += 1;
            loop {
                params.push(self.ty()?);
                self.ws();
                match self.s.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(format!("expected ',' or ')' in parameters of '{name}'")),
                }
            }
        }
        self.depth -= 1;
        let arity = |n: usize| -> Result<(), String> {
            if params.len() == n {
                Ok(())
            } else {
                Err(format!("'{name}' takes {n} type parameter(s)"))
            }
        };
        let simple = |t: Type| -> Result<Type, String> {
            arity(0)?;
            Ok(t)
        };
        match name.as_str() {
            "int" => simple(Type::Int),
            "uint" => simple(Type::Uint),
            "double" => simple(Type::Double),
            "bool" => simple(Type::Bool),
            "string" => simple(Type::String),
            "bytes" => simple(Type::Bytes),
            "null_type" | "null" => simple(Type::Null),
            "dyn" => simple(Type::Dyn),
            "any" => simple(Type::Any),
            "timestamp" => simple(Type::Timestamp),
            "duration" => simple(Type::Duration),
            "list" => {
                arity(1)?;
                Ok(Type::list(params.remove(0)))
            }
            "map" => {
                arity(2)?;
                let v = params.remove(1);
                Ok(Type::map(params.remove(0), v))
            }
            "type" if params.is_empty() => Ok(Type::Type(None)),
            "type" => {
                arity(1)?;
                Ok(Type::type_of(params.remove(0)))
            }
            "optional_type" | "optional" => {
                arity(1)?;
                Ok(Type::optional(params.remove(0)))
            }
            "wrapper" => {
                arity(1)?;
                let t = params.remove(0);
                let p = Primitive::of(&t).ok_or_else(|| format!("'{t}' cannot be wrapped"))?;
                Ok(Type::Wrapper(p))
            }
            other => {
                if params.is_empty() {
                    Ok(Type::well_known(other).unwrap_or_else(|| Type::message(other)))
                } else {
                    Ok(Type::Opaque(other.into(), params.into()))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_display_prints() {
        for text in [
            "int",
            "list(int)",
            "map(string, dyn)",
            "type(list(string))",
            "optional_type(map(int, bool))",
            "wrapper(int)",
            "timestamp",
            "duration",
            "null",
            "net.IP",
            "kubernetes.Quantity",
        ] {
            let t = Type::parse(text).unwrap();
            assert_eq!(t.to_string(), text);
        }
    }

    #[test]
    fn rejects_malformed() {
        assert!(Type::parse("list(").is_err());
        assert!(Type::parse("map(int)").is_err());
        assert!(Type::parse("int x").is_err());
        assert!(Type::parse(&"list(".repeat(1000)).is_err());
    }
}
