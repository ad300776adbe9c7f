//! The protos extension (cel-go's `ext.Protos()`, library `cel.lib.ext.protos`), version 0:
//! access to protobuf extension fields by their qualified names.
//!
//! | macro | signature | example | since |
//! |---|---|---|---|
//! | `proto.getExt` | `proto.getExt(msg, qualified.ext.name) -> the field's type` | `proto.getExt(msg, google.expr.proto2.test.int32_ext)` → `42` | 0 |
//! | `proto.hasExt` | `proto.hasExt(msg, qualified.ext.name) -> bool` | `proto.hasExt(msg, google.expr.proto2.test.int32_ext)` → `true` | 0 |
//!
//! Both are macros: `proto.getExt(m, a.b.c)` is the selection ``m.`a.b.c` `` and
//! `proto.hasExt(m, a.b.c)` the presence test ``has(m.`a.b.c`)``, which the checker and the
//! runtime resolve against the message's extensions (see `cel_runtime::proto`). A second
//! argument that is not a qualified name is a parse error, `invalid extension field`.
//!
//! # Costs
//!
//! Those of the selection and the presence test they expand to.

use cel_syntax::macros::{ExprFactory, Macro, MacroError};
use cel_syntax::{Expr, ExprKind};

use crate::{Library, LibraryContents};

/// The protos extension library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Protos;

impl Library for Protos {
    fn name(&self) -> &str {
        "cel.lib.ext.protos"
    }

    fn contents(&self) -> LibraryContents {
        LibraryContents {
            macros: vec![
                Macro::receiver("getExt", 2, |f, t, a| expand(false, f, t, a)),
                Macro::receiver("hasExt", 2, |f, t, a| expand(true, f, t, a)),
            ],
            ..LibraryContents::default()
        }
    }
}

fn expand(
    presence: bool,
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    if !matches!(target.as_ref().map(|t| &t.kind), Some(ExprKind::Ident(n)) if n == "proto") {
        return Ok(None);
    }
    let [message, field] = <[Expr; 2]>::try_from(args)
        .map_err(|_| MacroError::new(0, "proto extension macros take two arguments"))?;
    let Some(name) = qualified_name(&field) else {
        return Err(f.error(field.id, "invalid extension field"));
    };
    Ok(Some(if presence {
        f.presence_test(message, &name)
    } else {
        f.select(message, &name)
    }))
}

/// `a.b.c` as the string `"a.b.c"`; `None` for anything but identifiers and selections.
fn qualified_name(e: &Expr) -> Option<String> {
    cel_syntax::stack::guarded(|| qualified_name_unguarded(e))
}

fn qualified_name_unguarded(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n.clone()),
        ExprKind::Select(s) if !s.test_only => {
            Some(format!("{}.{}", qualified_name(&s.operand)?, s.field))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_the_two_macros() {
        let c = Protos.contents();
        let names: Vec<&str> = c.macros.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["getExt", "hasExt"]);
    }
}
