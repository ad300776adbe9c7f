//! Native code, where this build has it: `cel-jit`'s compiler with the `jit` feature (on by
//! default), and without it a stand-in of the same shape whose compile always declines.
//!
//! The feature exists for platforms where Cranelift cannot run or is not wanted
//! (WebAssembly: `wasm32-unknown-unknown`, `wasm32-wasip1`). Without it nothing of
//! Cranelift is built, and [`Backend::Jit`](crate::Backend::Jit) and
//! [`Backend::Auto`](crate::Backend::Auto) run the interpreter, which gives the same values,
//! errors and costs: their programs report
//! [`DeclineReason::NoNativeCode`](crate::DeclineReason::NoNativeCode), and no compile task,
//! background thread or clock is ever started for them.

#[cfg(feature = "jit")]
pub(crate) use cel_jit::{JitError, JitOptions, JitProgram};

/// Whether this build compiles native code.
pub(crate) const AVAILABLE: bool = cfg!(feature = "jit");

#[cfg(not(feature = "jit"))]
pub(crate) use stand_in::{JitError, JitOptions, JitProgram};

/// The native compiler's interface, without a compiler: the options (kept, so that the
/// options and caches of both builds look alike), an error, and a program type that has no
/// value, so that everything that would run native code is statically unreachable.
#[cfg(not(feature = "jit"))]
mod stand_in {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use cel_checker::CheckedAst;
    use cel_interp::{Evaluation, Plan, PlanEnv};
    use cel_runtime::{Activation, Error, Value};

    /// `cel_jit::JitOptions`' fields that the facade sets, with its defaults.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub(crate) struct JitOptions {
        pub(crate) keep_clif: bool,
        pub(crate) fast_compile: bool,
        pub(crate) track_cost: bool,
        pub(crate) inject_fault: bool,
        pub(crate) lazy_variables: bool,
    }

    impl Default for JitOptions {
        fn default() -> JitOptions {
            JitOptions {
                keep_clif: false,
                fast_compile: false,
                track_cost: true,
                inject_fault: false,
                lazy_variables: false,
            }
        }
    }

    /// `cel_jit::JitError`'s variants that the facade tells apart (never made but by
    /// `compile`, which only says there is no compiler).
    #[derive(Debug)]
    #[allow(
        dead_code,
        reason = "the variants the facade matches, which only cel-jit makes"
    )]
    pub(crate) enum JitError {
        TooLarge { budget: usize },
        Eval(Error),
        NotBuilt,
    }

    impl std::fmt::Display for JitError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                JitError::TooLarge { budget } => write!(f, "over the budget of {budget}"),
                JitError::Eval(e) => write!(f, "{e}"),
                JitError::NotBuilt => f.write_str("this build has no native code"),
            }
        }
    }

    /// A native program, of which there is none: no value of this type exists.
    #[derive(Debug)]
    pub(crate) enum JitProgram {}

    impl JitProgram {
        pub(crate) fn compile(
            _: &CheckedAst,
            _: &PlanEnv,
            _: Arc<Plan>,
            _: JitOptions,
        ) -> Result<JitProgram, JitError> {
            Err(JitError::NotBuilt)
        }

        pub(crate) fn plan(&self) -> &Arc<Plan> {
            match *self {}
        }

        pub(crate) fn residuals(&self) -> usize {
            match *self {}
        }

        pub(crate) fn ir_text(&self) -> Option<&str> {
            match *self {}
        }

        pub(crate) fn clif_text(&self) -> Option<&str> {
            match *self {}
        }

        pub(crate) fn eval_interruptible(
            &self,
            _: &dyn Activation,
            _: Option<u64>,
            _: Option<&AtomicBool>,
        ) -> Evaluation {
            match *self {}
        }

        pub(crate) fn eval_into(
            &self,
            _: &dyn Activation,
            _: Option<u64>,
            _: Option<&AtomicBool>,
            _: &mut Value,
        ) -> (Result<(), Box<Error>>, u64) {
            match *self {}
        }
    }
}
