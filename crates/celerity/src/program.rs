//! [`Program`]: a planned expression, evaluated many times.

use cel_interp::{Plan, PlanEnv};
use cel_runtime::{Activation, Error, Value};
use cel_syntax::Diagnostic;

use crate::{Ast, Issues};

/// Facts about one evaluation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvalDetails {
    /// The run-time cost in cel-go's cost units. For an evaluation that failed, the cost
    /// reached when it failed (for one stopped by the cost limit, including the step that
    /// crossed it), as cel-go reports it.
    pub actual_cost: u64,
}

/// A compiled expression, ready to evaluate.
///
/// `Send + Sync`: one program may be evaluated from many threads at once.
#[derive(Clone, Debug)]
pub struct Program {
    plan: Plan,
    cost_limit: Option<u64>,
}

impl Program {
    pub(crate) fn new(
        ast: &Ast,
        env: &PlanEnv,
        cost_limit: Option<u64>,
    ) -> Result<Program, Issues> {
        let plan = match &ast.checked {
            Some(checked) => Plan::checked(checked, env),
            None => Plan::unchecked(&ast.parsed, env),
        };
        match plan {
            Ok(plan) => Ok(Program { plan, cost_limit }),
            Err(e) => {
                let offset = ast.parsed.source_info.anchor(e.expr_id).unwrap_or(0);
                let d = Diagnostic {
                    offset,
                    expr_id: e.expr_id,
                    message: e.message,
                };
                Err(Issues::new(vec![d], ast.source.clone()))
            }
        }
    }

    /// The same program with another cost limit (`None`: unlimited). An evaluation whose
    /// cost exceeds it stops with "operation cancelled: actual cost limit exceeded".
    pub fn with_cost_limit(mut self, limit: Option<u64>) -> Program {
        self.cost_limit = limit;
        self
    }

    /// The cost limit.
    pub fn cost_limit(&self) -> Option<u64> {
        self.cost_limit
    }

    /// Evaluates the expression against the variables of an activation.
    pub fn eval(&self, activation: &dyn Activation) -> Result<Value, Error> {
        self.plan
            .eval_with_limit(activation, self.cost_limit)
            .result
    }

    /// Evaluates, also returning the evaluation's details (its cost), which are reported
    /// for failed evaluations too.
    pub fn eval_details(&self, activation: &dyn Activation) -> (Result<Value, Error>, EvalDetails) {
        let e = self.plan.eval_with_limit(activation, self.cost_limit);
        (
            e.result,
            EvalDetails {
                actual_cost: e.cost,
            },
        )
    }
}
