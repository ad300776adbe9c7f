//! [`Program`]: a planned expression, evaluated many times.

use cel_interp::{Plan, PlanEnv};
use cel_runtime::{Activation, Error, Value};

use crate::Ast;

/// Facts about one evaluation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvalDetails {
    /// The runtime cost, in cel-go's cost units (0 until cost tracking lands).
    pub actual_cost: u64,
}

/// A compiled expression, ready to evaluate.
///
/// `Send + Sync`: one program may be evaluated from many threads at once.
#[derive(Clone, Debug)]
pub struct Program {
    plan: Plan,
}

impl Program {
    pub(crate) fn new(ast: &Ast, env: &PlanEnv) -> Program {
        let plan = match &ast.checked {
            Some(checked) => Plan::checked(checked, env),
            None => Plan::unchecked(&ast.parsed, env),
        };
        Program { plan }
    }

    /// Evaluates the expression against the variables of an activation.
    pub fn eval(&self, activation: &dyn Activation) -> Result<Value, Error> {
        self.plan.eval(activation)
    }

    /// Evaluates, also returning the evaluation's details (its cost), which are reported
    /// for failed evaluations too.
    pub fn eval_details(&self, activation: &dyn Activation) -> (Result<Value, Error>, EvalDetails) {
        (self.plan.eval(activation), EvalDetails::default())
    }
}
