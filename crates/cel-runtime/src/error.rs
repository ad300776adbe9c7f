//! Evaluation errors.
//!
//! CEL errors are values: an operation that fails produces an [`Error`], which propagates
//! through strict calls and is absorbed by `&&`, `||`, `?:` and comprehensions where the
//! language says so. Each error carries the id of the expression that raised it (0 until the
//! evaluator attaches one) and a message in cel-go's words.

use std::fmt;

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An ordinary CEL evaluation error (overflow, no such key, bad conversion, ...).
    Eval,
    /// A call to a function the environment does not know (only possible for expressions
    /// that were not type-checked). An ordinary CEL error in every other respect.
    UnboundFunction,
    /// The evaluation exceeded its cost limit; it is not absorbed by logical operators.
    CostLimitExceeded,
    /// Evaluation was interrupted by the host.
    Cancelled,
    /// A bug in Celerity (a caught panic in a helper, say), reported rather than crashing.
    Internal,
}

/// A CEL evaluation error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The kind of failure.
    pub kind: ErrorKind,
    /// The message, in cel-go's words (`division by zero`, `no such key: b`).
    pub message: String,
    /// The expression that raised it, or 0 when not yet attached.
    pub expr_id: i64,
}

/// The result of a runtime operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An evaluation error with a message.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Eval,
            message: message.into(),
            expr_id: 0,
        }
    }

    /// A comprehension over a value that is neither a list nor a map, in cel-go's words
    /// (`interpreter.evalFold`: "got '%T', expected iterable type").
    pub fn not_iterable(v: &crate::Value) -> Error {
        Error::new(format!(
            "got '{}', expected iterable type",
            v.go_type_name()
        ))
    }

    /// "no such overload": no implementation accepts the arguments' runtime types.
    pub fn no_such_overload() -> Error {
        Error::new("no such overload")
    }

    /// "no matching overload for 'f' applied to '(int, string)'", as cel-go reports a call
    /// whose arguments fit none of the function's overloads at run time.
    pub fn no_matching_overload(function: &str, arg_types: &[&str]) -> Error {
        Error::new(format!(
            "no matching overload for '{function}' applied to '({})'",
            arg_types.join(", ")
        ))
    }

    /// "no such key: k".
    pub fn no_such_key(key: impl fmt::Display) -> Error {
        Error::new(format!("no such key: {key}"))
    }

    /// "no such attribute: ...", for an unbound variable.
    pub fn no_such_attribute(name: &str) -> Error {
        Error::new(format!("no such attribute(s): {name}"))
    }

    /// The cost-limit error, with cel-go's message.
    pub fn cost_limit_exceeded() -> Error {
        Error {
            kind: ErrorKind::CostLimitExceeded,
            message: "operation cancelled: actual cost limit exceeded".to_string(),
            expr_id: 0,
        }
    }

    /// The error of an evaluation the host interrupted (cel-go's message).
    pub fn interrupted() -> Error {
        Error {
            kind: ErrorKind::Cancelled,
            message: "operation interrupted".to_string(),
            expr_id: 0,
        }
    }

    /// A call to a function the environment does not declare.
    pub fn unbound_function(name: &str) -> Error {
        Error {
            kind: ErrorKind::UnboundFunction,
            message: format!("unbound function: {name}"),
            expr_id: 0,
        }
    }

    /// An internal error (a bug), reported instead of a crash.
    pub fn internal(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Internal,
            message: message.into(),
            expr_id: 0,
        }
    }

    /// Attaches an expression id unless one is already attached.
    pub fn at(mut self, expr_id: i64) -> Error {
        if self.expr_id == 0 {
            self.expr_id = expr_id;
        }
        self
    }

    /// Whether `&&`, `||` and comprehensions may absorb this error (cancellation and budget
    /// exhaustion are never absorbed).
    pub fn is_absorbable(&self) -> bool {
        matches!(self.kind, ErrorKind::Eval | ErrorKind::UnboundFunction)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
