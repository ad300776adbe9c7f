//! The IR's text form: stable, one instruction per line, for snapshots and
//! `cel eval --dump ir`.

use std::fmt::{self, Write as _};

use cel_syntax::Literal;

use crate::ir::{Constant, Function, Op, Term};

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print(self))
    }
}

/// The suffix of a `select` or `has` on a value the checker typed as an object.
fn object_suffix(object: bool) -> &'static str {
    if object { ".object" } else { "" }
}

fn op_text(op: &Op) -> String {
    match op {
        Op::IntConst(i) => format!("const.int {i}"),
        Op::UintConst(u) => format!("const.uint {u}"),
        Op::DoubleConst(d) => format!("const.double {d:?}"),
        Op::BoolConst(b) => format!("const.bool {b}"),
        Op::ValConst(k) => format!("const.val {k}"),
        Op::NoErr => "noerr".into(),
        Op::LoadVar(n) => format!("load.var {n:?}"),
        Op::Box => "box".into(),
        Op::Unbox(t) => format!("unbox.{t}"),
        Op::Select { field, object } => format!("select{} {field:?}", object_suffix(*object)),
        Op::OptSelect { field } => format!("select.opt {field:?}"),
        Op::Has { field, object } => format!("has{} {field:?}", object_suffix(*object)),
        Op::Index => "index".into(),
        Op::OptIndex => "index.opt".into(),
        Op::Call {
            function,
            overloads,
            member,
            dynamic,
        } => {
            let ids: Vec<&str> = overloads.iter().map(|o| &**o).collect();
            format!(
                "call{}{} {function} [{}]",
                if *member { ".member" } else { "" },
                if *dynamic { ".dyn" } else { "" },
                ids.join(", ")
            )
        }
        Op::MatchesConst { pattern } => format!("matches.const {pattern:?}"),
        Op::IntArith(a) => format!("int.{}", a.text()),
        Op::UintArith(a) => format!("uint.{}", a.text()),
        Op::DoubleArith(a) => format!("double.{}", a.text()),
        Op::IntNeg => "int.neg".into(),
        Op::DoubleNeg => "double.neg".into(),
        Op::Not => "not".into(),
        Op::BoolAnd => "bool.and".into(),
        Op::Own => "own".into(),
        Op::ArenaMark => "arena.mark".into(),
        Op::ArenaRelease { vals, errs } => {
            let slots = |s: &[u32]| s.iter().map(|l| format!("l{l}")).collect::<Vec<_>>();
            format!(
                "arena.release keep [{}] [{}]",
                slots(vals).join(", "),
                slots(errs).join(", ")
            )
        }
        Op::ScalarCmp(c) => format!("cmp.{}", c.text()),
        Op::DoubleCmp(c) => format!("double.cmp.{}", c.text()),
        Op::ValEq { negate } => if *negate { "val.ne" } else { "val.eq" }.into(),
        Op::ConcatCompare { negate, steps } => {
            let steps: Vec<String> = steps.iter().map(|s| format!("#{s}")).collect();
            format!(
                "concat.{} [{}]",
                if *negate { "ne" } else { "eq" },
                steps.join(", ")
            )
        }
        Op::ConcatBuild { steps } => {
            let steps: Vec<String> = steps.iter().map(|s| format!("#{s}")).collect();
            format!("concat [{}]", steps.join(", "))
        }
        Op::ValCmp { op, .. } => format!("val.cmp.{}", op.text()),
        Op::ErrOr => "err.or".into(),
        Op::IsErr => "is.err".into(),
        Op::NoSuchOverload => "err.no_such_overload".into(),
        Op::ErrAgain { from } => format!("err.again #{from}"),
        Op::MakeList => "list.new".into(),
        Op::ListPushOpt => "list.push.opt".into(),
        Op::MapNew => "map.new".into(),
        Op::MapEntry { optional } => {
            if *optional {
                "map.entry.opt".into()
            } else {
                "map.entry".into()
            }
        }
        Op::MakeStruct { type_name, .. } => format!("struct.new {type_name}"),
        Op::IterLen => "iter.len".into(),
        Op::IterKey { two_var } => {
            if *two_var {
                "iter.key2".into()
            } else {
                "iter.key".into()
            }
        }
        Op::IterValue => "iter.value".into(),
        Op::ListAppend => "list.append".into(),
        Op::MapInsert => "map.insert".into(),
        Op::MapMerge => "map.merge".into(),
        Op::InSet(ks) => {
            let ks: Vec<String> = ks.iter().map(|k| k.to_string()).collect();
            format!("in.set [{}]", ks.join(", "))
        }
        Op::Charge(n) => format!("charge {n}"),
        Op::ChargeRegion(ns) => {
            let total: u64 = ns.iter().fold(0u64, |a, b| a.saturating_add(*b));
            format!("charge.region {total} {ns:?}")
        }
        Op::ChargeIfOk(n) => format!("charge.if_ok {n}"),
        Op::ChargeUnless(n) => format!("charge.unless {n}"),
        Op::ChargeQualifier { cost, optional } => {
            if *optional {
                format!("charge.qualifier.opt {cost}")
            } else {
                format!("charge.qualifier {cost}")
            }
        }
        Op::ChargeCall {
            function,
            overload,
            appends,
            ..
        } => format!(
            "charge.call {function} {overload:?}{}",
            if *appends { " appends" } else { "" }
        ),
        Op::Residual(id) => format!("residual #{id}"),
        Op::IndexInc => "index.inc".into(),
        Op::IndexLt => "index.lt".into(),
        Op::Copy => "copy".into(),
        Op::LogicalAnd => "logical.and".into(),
        Op::LogicalOr => "logical.or".into(),
        Op::NotStrictlyFalse => cel_types::overloads::NOT_STRICTLY_FALSE.into(),
        Op::OptHasValue => "opt.has_value".into(),
        Op::OptValue => "opt.value".into(),
        Op::LocalGet(s) => format!("local.get l{s}"),
        Op::LocalSet(s) => format!("local.set l{s}"),
    }
}

fn args_text(args: &[crate::Value]) -> String {
    let a: Vec<String> = args.iter().map(|v| v.to_string()).collect();
    a.join(", ")
}

/// The text form of a function.
pub fn print(func: &Function) -> String {
    let mut out = String::new();
    if !func.locals.is_empty() {
        let ls: Vec<String> = func
            .locals
            .iter()
            .enumerate()
            .map(|(i, t)| format!("l{i}: {t}"))
            .collect();
        let _ = writeln!(out, "locals {}", ls.join(", "));
    }
    for (bi, b) in func.blocks.iter().enumerate() {
        let params: Vec<String> = b
            .params
            .iter()
            .map(|p| format!("{p}: {}", func.ty(*p)))
            .collect();
        if params.is_empty() {
            let _ = writeln!(out, "bb{bi}:");
        } else {
            let _ = writeln!(out, "bb{bi}({}):", params.join(", "));
        }
        for inst in &b.insts {
            out.push_str("  ");
            if !inst.results.is_empty() {
                let rs: Vec<String> = inst
                    .results
                    .iter()
                    .map(|r| format!("{r}: {}", func.ty(*r)))
                    .collect();
                let _ = write!(out, "{} = ", rs.join(", "));
            }
            out.push_str(&op_text(&inst.op));
            if !inst.args.is_empty() {
                let _ = write!(out, " {}", args_text(&inst.args));
            }
            let _ = writeln!(out, "  ; #{}", inst.expr);
        }
        match &b.term {
            Some(Term::Jump(t, args)) => {
                let _ = writeln!(out, "  jump {t}({})", args_text(args));
            }
            Some(Term::Branch {
                cond,
                then,
                otherwise,
            }) => {
                let _ = writeln!(
                    out,
                    "  br {cond}, {}({}), {}({})",
                    then.0,
                    args_text(&then.1),
                    otherwise.0,
                    args_text(&otherwise.1)
                );
            }
            Some(Term::Return { value, err }) => {
                let _ = writeln!(out, "  ret {value}, {err}");
            }
            None => out.push_str("  <unterminated>\n"),
        }
    }
    for (i, k) in func.consts.iter().enumerate() {
        let text = match k {
            Constant::Literal(Literal::String(s)) => format!("{s:?}"),
            Constant::Literal(l) => l.to_string(),
            Constant::Type(t) => format!("type {t}"),
            Constant::List(ks) => format!("list {ks:?}"),
            Constant::Folded(id) => format!("folded #{id}"),
        };
        let _ = writeln!(out, "k{i} = {text}");
    }
    out
}
