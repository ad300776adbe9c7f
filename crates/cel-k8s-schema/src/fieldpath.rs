//! A validation rule's `fieldPath` (`.spec.replicas`, `.labels['app']`): checked against the
//! schema and turned into the path its errors are reported at, as Kubernetes'
//! `ValidFieldPath` does.

use crate::field::Path;
use crate::schema::Schema;

/// Options of [`valid_field_path`].
#[derive(Clone, Copy, Debug)]
pub struct FieldPathOptions {
    /// Whether `['name']` may be used (Kubernetes allows it except where stated).
    pub allow_array_notation: bool,
}

impl Default for FieldPathOptions {
    fn default() -> FieldPathOptions {
        FieldPathOptions {
            allow_array_notation: true,
        }
    }
}

/// The path a `fieldPath` names below `schema`, and the schema it reaches; or why it is not
/// valid (Kubernetes' messages: "does not refer to a valid field", "expected [ or . but
/// got: x", ...).
pub fn valid_field_path<'s>(
    json_path: &str,
    schema: &'s Schema,
    options: FieldPathOptions,
) -> Result<(Path, &'s Schema), String> {
    let tokens = tokenize(json_path);
    let mut tokens = tokens.iter().map(String::as_str);
    let mut path = Path::root();
    let mut schema = schema;
    let end = || "unexpected end of JSON path".to_string();
    while let Some(tok) = tokens.next() {
        match tok {
            "[" => {
                if !options.allow_array_notation {
                    return Err("array notation is not allowed".into());
                }
                let quoted = tokens.next().ok_or_else(end)?;
                if quoted.len() < 2 || !quoted.starts_with('\'') || !quoted.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {quoted}"));
                }
                let name = unescape_single_quoted(&quoted[1..quoted.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                (path, schema) = step(&path, schema, &name)?;
                let close = tokens.next().ok_or_else(end)?;
                if close != "]" {
                    return Err(format!("expected ] but got {close}"));
                }
            }
            "." => {
                let name = tokens.next().ok_or_else(end)?;
                (path, schema) = step(&path, schema, name)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok((path, schema))
}

/// One step down: a property of an object, or an entry of a map.
fn step<'s>(path: &Path, schema: &'s Schema, name: &str) -> Result<(Path, &'s Schema), String> {
    let invalid = || "does not refer to a valid field".to_string();
    if !schema.properties.is_empty() {
        let child = schema.properties.get(name).ok_or_else(invalid)?;
        Ok((path.child(name), child))
    } else if schema.additional_properties.is_some() {
        let values = schema.additional_schema().ok_or_else(invalid)?;
        Ok((path.key(name), values))
    } else {
        Err(invalid())
    }
}

/// Splits a path into `.`, `[`, `]` and the names between them; a part starting with a
/// single quote runs to the next quote not preceded by a backslash.
fn tokenize(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            let mut j = i + 1;
            while j < b.len() && !(b[j] == b'\'' && b[j - 1] != b'\\') {
                j += 1;
            }
            let end = (j + 1).min(b.len());
            out.push(s[i..end].to_string());
            i = end;
            continue;
        }
        if matches!(b[i], b'.' | b'[' | b']') {
            out.push(s[i..i + 1].to_string());
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !matches!(b[i], b'.' | b'[' | b']') {
            i += 1;
        }
        out.push(s[start..i].to_string());
    }
    out
}

/// The escapes a quoted name may use: `\a \b \f \n \r \t \v \' \\`.
fn unescape_single_quoted(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push('\\');
            break;
        };
        out.push(match d {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => return Err(format!("invalid escape char \\{other}")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::from_json(
            &json!({"type": "object", "properties": {
                "a": {"type": "object", "properties": {"b.c": {"type": "string"}}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}
            }}),
            &Path::root(),
        )
        .unwrap()
    }

    #[test]
    fn paths_as_kubernetes_reads_them() {
        let s = schema();
        let p =
            |j: &str| valid_field_path(j, &s, FieldPathOptions::default()).map(|r| r.0.to_string());
        assert_eq!(p(".a['b.c']"), Ok("a.b.c".into()));
        assert_eq!(p(".m['k1']"), Ok("m[k1]".into()));
        assert_eq!(p(".m.k1"), Ok("m[k1]".into()));
        assert_eq!(p(".x"), Err("does not refer to a valid field".into()));
        assert_eq!(p("a"), Err("expected [ or . but got: a".into()));
        assert_eq!(p(".a["), Err("unexpected end of JSON path".into()));
        assert_eq!(
            p(".a[b]"),
            Err("expected single quoted string but got b".into())
        );
        assert_eq!(
            p(".a['b\\qc']"),
            Err("invalid string literal: invalid escape char \\q".into())
        );
        let no_arrays = FieldPathOptions {
            allow_array_notation: false,
        };
        assert_eq!(
            valid_field_path(".m['k']", &s, no_arrays).map(|r| r.0.to_string()),
            Err("array notation is not allowed".into())
        );
    }
}
