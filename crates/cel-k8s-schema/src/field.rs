//! Field errors as Kubernetes reports them (apimachinery's `field.Error`): a type, the path
//! of the field, the offending value and a detail, printed as
//! `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`.

use std::fmt;

/// The kind of a field error; [`ErrorType::as_str`] is Kubernetes' `field.ErrorType` value
/// (`FieldValueInvalid`), [`ErrorType::text`] what its message says (`Invalid value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// `FieldValueNotFound`.
    NotFound,
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueDuplicate`.
    Duplicate,
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueNotSupported`.
    NotSupported,
    /// `FieldValueForbidden`.
    Forbidden,
    /// `FieldValueTooLong`.
    TooLong,
    /// `FieldValueTooMany`.
    TooMany,
    /// `FieldValueTooFew`.
    TooFew,
    /// `InternalError`.
    Internal,
    /// `FieldValueTypeInvalid`.
    TypeInvalid,
    /// `FieldValueTooShort`.
    TooShort,
}

impl ErrorType {
    /// The value Kubernetes serializes (`FieldValueInvalid`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::TooFew => "FieldValueTooFew",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::TooShort => "FieldValueTooShort",
        }
    }

    /// The type from its serialized value.
    pub fn parse(s: &str) -> Option<ErrorType> {
        [
            ErrorType::NotFound,
            ErrorType::Required,
            ErrorType::Duplicate,
            ErrorType::Invalid,
            ErrorType::NotSupported,
            ErrorType::Forbidden,
            ErrorType::TooLong,
            ErrorType::TooMany,
            ErrorType::TooFew,
            ErrorType::Internal,
            ErrorType::TypeInvalid,
            ErrorType::TooShort,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }

    /// The words a message uses for it (`Invalid value`, `Required value`).
    pub fn text(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::TooFew => "Too few",
            ErrorType::Internal => "Internal error",
            ErrorType::TooShort => "Too short",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// The offending value a field error shows.
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    /// No value is shown (Kubernetes' `field.OmitValueType`).
    Omit,
    /// A string, shown quoted as Go's `%q` does.
    String(String),
    /// An integer.
    Int(i64),
    /// A floating-point number, shown as Go's `%v`.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// Anything else, shown as JSON (`null`, lists, objects).
    Json(serde_json::Value),
    /// Decoded JSON data shown as Go's `%#v` shows an `interface{}` holding it
    /// (`map[string]interface {}{"a":1}`), as apimachinery printed lists and objects up to
    /// Kubernetes 1.33.
    GoSyntax(serde_json::Value),
    /// A Go struct, shown as JSON with its fields in the order given (Go marshals a struct's
    /// fields in declaration order, a map's keys sorted).
    GoStruct(serde_json::Value),
}

impl BadValue {
    /// The value of a piece of JSON data, typed as Go's JSON decoding types it.
    pub fn of_json(v: &serde_json::Value) -> BadValue {
        match v {
            serde_json::Value::String(s) => BadValue::String(s.clone()),
            serde_json::Value::Bool(b) => BadValue::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => BadValue::Int(i),
                None => BadValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            other => BadValue::Json(other.clone()),
        }
    }
}

/// One field error.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// The kind.
    pub error_type: ErrorType,
    /// The field's path (`spec.items[0].name`); empty for the object itself.
    pub field: String,
    /// The value shown.
    pub bad_value: BadValue,
    /// The explanation.
    pub detail: String,
}

impl FieldError {
    /// An error of any type.
    pub fn new(
        error_type: ErrorType,
        field: &Path,
        bad_value: BadValue,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            error_type,
            // Go prints a nil path as `<nil>`: errors about the object itself, when no root
            // path is given, read `<nil>: Invalid value: ...`, as the API server's do.
            field: if field.is_root() {
                "<nil>".to_string()
            } else {
                field.to_string()
            },
            bad_value,
            detail: detail.into(),
        }
    }

    /// `field.Invalid`.
    pub fn invalid(field: &Path, bad_value: BadValue, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Invalid, field, bad_value, detail)
    }

    /// `field.Required`.
    pub fn required(field: &Path, detail: impl Into<String>) -> FieldError {
        FieldError::new(
            ErrorType::Required,
            field,
            BadValue::String(String::new()),
            detail,
        )
    }

    /// `field.Forbidden`.
    pub fn forbidden(field: &Path, detail: impl Into<String>) -> FieldError {
        FieldError::new(
            ErrorType::Forbidden,
            field,
            BadValue::String(String::new()),
            detail,
        )
    }

    /// `field.Duplicate`.
    pub fn duplicate(field: &Path, bad_value: BadValue) -> FieldError {
        FieldError::new(ErrorType::Duplicate, field, bad_value, "")
    }

    /// `field.InternalError`.
    pub fn internal(field: &Path, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Internal, field, BadValue::Omit, detail)
    }

    /// The message without the field: `Invalid value: "x": detail`.
    pub fn body(&self) -> String {
        let mut s = String::from(self.error_type.text());
        let shows_value = matches!(
            self.error_type,
            ErrorType::Invalid
                | ErrorType::TypeInvalid
                | ErrorType::NotSupported
                | ErrorType::NotFound
                | ErrorType::Duplicate
                | ErrorType::TooMany
                | ErrorType::TooFew
        );
        if shows_value {
            match &self.bad_value {
                BadValue::Omit => {}
                BadValue::String(v) => {
                    s.push_str(": ");
                    s.push_str(&go_quote(v));
                }
                BadValue::Int(i) => s.push_str(&format!(": {i}")),
                BadValue::Float(x) => {
                    s.push_str(": ");
                    s.push_str(&cel_runtime::format::format_double(*x));
                }
                BadValue::Bool(b) => s.push_str(&format!(": {b}")),
                BadValue::Json(j) => {
                    // As Go's json.Marshal: sorted keys, Go's number forms.
                    s.push_str(": ");
                    s.push_str(&crate::gojson::marshal(j));
                }
                BadValue::GoSyntax(j) => {
                    s.push_str(": ");
                    s.push_str(&crate::gojson::go_syntax(j));
                }
                BadValue::GoStruct(j) => {
                    s.push_str(": ");
                    s.push_str(&crate::gojson::marshal_struct(j));
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Go's `%q` of a string.
pub fn go_quote(s: &str) -> String {
    cel_runtime::format::go_quote(s)
}

/// A field path, as apimachinery's `field.Path` prints it: names joined by dots, list
/// indexes as `[0]`, map keys as `[key]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path {
    text: String,
}

impl Path {
    /// The empty path (the object itself).
    pub fn root() -> Path {
        Path::default()
    }

    /// A path starting with a name (`spec`).
    pub fn new(name: &str) -> Path {
        Path {
            text: name.to_string(),
        }
    }

    /// The path of a named child (`spec.replicas`).
    pub fn child(&self, name: &str) -> Path {
        let mut text = self.text.clone();
        if !text.is_empty() {
            text.push('.');
        }
        text.push_str(name);
        Path { text }
    }

    /// The path of a list element (`items[2]`).
    pub fn index(&self, i: usize) -> Path {
        Path {
            text: format!("{}[{i}]", self.text),
        }
    }

    /// The path of a map entry (`labels[app]`).
    pub fn key(&self, k: &str) -> Path {
        Path {
            text: format!("{}[{k}]", self.text),
        }
    }

    /// Whether this is the empty path.
    pub fn is_root(&self) -> bool {
        self.text.is_empty()
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_apimachinery() {
        let p = Path::new("spec").child("replicas");
        let e = FieldError::invalid(
            &p,
            BadValue::String("string".into()),
            "spec.replicas in body must be of type integer: \"string\"",
        );
        assert_eq!(
            e.to_string(),
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        );
        let r = FieldError::required(&Path::new("spec").child("x"), "");
        assert_eq!(r.to_string(), "spec.x: Required value");
        let o = FieldError::invalid(&Path::new("root"), BadValue::Omit, "failed rule: x");
        assert_eq!(o.to_string(), "root: Invalid value: failed rule: x");
        let j = FieldError::invalid(
            &Path::new("l").index(0).key("k"),
            BadValue::Json(serde_json::json!(["a"])),
            "d",
        );
        assert_eq!(j.to_string(), r#"l[0][k]: Invalid value: ["a"]: d"#);
        let f = FieldError::new(
            ErrorType::NotSupported,
            &Path::new("f"),
            BadValue::Float(1.5),
            "",
        );
        assert_eq!(f.to_string(), "f: Unsupported value: 1.5");
        assert_eq!(
            ErrorType::parse("FieldValueTypeInvalid"),
            Some(ErrorType::TypeInvalid)
        );
    }
}
