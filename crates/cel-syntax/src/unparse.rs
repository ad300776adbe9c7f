//! Placeholder until the unparser lands.
use crate::Ast;
/// Why an AST could not be unparsed.
#[derive(Clone, Debug)]
pub struct UnparseError(pub String);
/// Writes an AST back as CEL text.
pub fn unparse(_ast: &Ast) -> Result<String, UnparseError> { Err(UnparseError("todo".into())) }
