//! Host functions from typed Rust closures: [`EnvBuilder::host_function`] declares the
//! overload from the closure's parameter and return types and converts the arguments and the
//! result, so a host writes `|name: &str, times: i64| -> String` instead of matching on
//! `&[Value]`.
//!
//! | Rust | CEL |
//! | --- | --- |
//! | `bool`, `i64`, `u64`, `f64` | `bool`, `int`, `uint`, `double` |
//! | `&str` (parameters), `String` | `string` |
//! | `Duration`, `Timestamp` | `google.protobuf.Duration`, `google.protobuf.Timestamp` |
//! | `Vec<T>` | `list(T)` |
//! | `Value` | `dyn` |
//! | `Result<T, E>` (results) | `T`, or an evaluation error with `E`'s text |
//!
//! A closure of up to three parameters declares one global overload with the id
//! `<name>_<parameter types>` (`greet_string_int`). Functions that need member overloads,
//! type parameters or several overloads keep [`EnvBuilder::function`] and [`OverloadDecl`].

use std::fmt::Display;
use std::sync::Arc;

use cel_runtime::{Duration, Error, Implementation, Timestamp, Value};
use cel_types::{OverloadDecl, Type};

use crate::env::EnvBuilder;

/// A Rust type a host function takes as a parameter (owned).
pub trait FromCel: Sized {
    /// The CEL type of the parameter.
    fn cel_type() -> Type;
    /// The argument as this type; a value of another type is "no such overload" (possible
    /// only for arguments of type `dyn`).
    fn from_cel(v: &Value) -> Result<Self, Error>;
}

/// A Rust type a host function returns.
pub trait IntoCel {
    /// The CEL type of the result.
    fn cel_type() -> Type;
    /// The result as a CEL value, or the evaluation error it stands for.
    fn into_cel(self) -> Result<Value, Error>;
}

macro_rules! scalar {
    ($rust:ty, $cel:expr, $variant:ident) => {
        impl FromCel for $rust {
            fn cel_type() -> Type {
                $cel
            }
            fn from_cel(v: &Value) -> Result<Self, Error> {
                match v {
                    Value::$variant(x) => Ok(x.clone()),
                    _ => Err(Error::no_such_overload()),
                }
            }
        }
        impl IntoCel for $rust {
            fn cel_type() -> Type {
                $cel
            }
            fn into_cel(self) -> Result<Value, Error> {
                Ok(Value::$variant(self.into()))
            }
        }
    };
}

scalar!(bool, Type::Bool, Bool);
scalar!(i64, Type::Int, Int);
scalar!(u64, Type::Uint, Uint);
scalar!(f64, Type::Double, Double);
scalar!(Duration, Type::Duration, Duration);
scalar!(Timestamp, Type::Timestamp, Timestamp);

impl FromCel for String {
    fn cel_type() -> Type {
        Type::String
    }
    fn from_cel(v: &Value) -> Result<Self, Error> {
        match v {
            Value::String(s) => Ok(s.to_string()),
            _ => Err(Error::no_such_overload()),
        }
    }
}

impl IntoCel for String {
    fn cel_type() -> Type {
        Type::String
    }
    fn into_cel(self) -> Result<Value, Error> {
        Ok(Value::from(self.as_str()))
    }
}

impl IntoCel for &'static str {
    fn cel_type() -> Type {
        Type::String
    }
    fn into_cel(self) -> Result<Value, Error> {
        Ok(Value::from(self))
    }
}

impl FromCel for Value {
    fn cel_type() -> Type {
        Type::Dyn
    }
    fn from_cel(v: &Value) -> Result<Self, Error> {
        Ok(v.clone())
    }
}

impl IntoCel for Value {
    fn cel_type() -> Type {
        Type::Dyn
    }
    fn into_cel(self) -> Result<Value, Error> {
        Ok(self)
    }
}

impl<T: FromCel> FromCel for Vec<T> {
    fn cel_type() -> Type {
        Type::list(T::cel_type())
    }
    fn from_cel(v: &Value) -> Result<Self, Error> {
        match v {
            Value::List(items) => items.iter().map(T::from_cel).collect(),
            _ => Err(Error::no_such_overload()),
        }
    }
}

impl<T: IntoCel> IntoCel for Vec<T> {
    fn cel_type() -> Type {
        Type::list(T::cel_type())
    }
    fn into_cel(self) -> Result<Value, Error> {
        let items = self
            .into_iter()
            .map(IntoCel::into_cel)
            .collect::<Result<_, _>>()?;
        Ok(Value::list(items))
    }
}

impl<T: IntoCel, E: Display> IntoCel for Result<T, E> {
    fn cel_type() -> Type {
        T::cel_type()
    }
    fn into_cel(self) -> Result<Value, Error> {
        self.map_err(|e| Error::new(e.to_string()))?.into_cel()
    }
}

/// Marks a parameter of an owned [`FromCel`] type (in [`HostFunction`]'s `Args`).
pub struct Owned<T>(std::marker::PhantomData<T>);
/// Marks a `&str` parameter (in [`HostFunction`]'s `Args`).
pub struct Borrowed;

/// A closure that can be a host function; `Args` tells its parameter kinds apart.
pub trait HostFunction<Args>: Send + Sync + 'static {
    /// The parameters' CEL types.
    fn params() -> Vec<Type>;
    /// The result's CEL type.
    fn result() -> Type;
    /// The implementation over the arguments.
    fn into_implementation(self) -> Implementation;
}

/// Reads argument `i` as the parameter kind `$kind` (`owned` or `str`).
macro_rules! read_arg {
    (owned, $t:ty, $v:expr) => {
        <$t as FromCel>::from_cel($v)?
    };
    (str, $t:ty, $v:expr) => {
        match $v {
            Value::String(s) => &**s,
            _ => return Err(Error::no_such_overload()),
        }
    };
}

macro_rules! param_type {
    (owned, $t:ty) => {
        <$t as FromCel>::cel_type()
    };
    (str, $t:ty) => {
        Type::String
    };
}

/// One implementation of [`HostFunction`] per arity and combination of parameter kinds:
/// `$marker` is the `Args` type, `$f` the closure bound, each `($kind, $t, $arg)` a
/// parameter.
macro_rules! host_function {
    ([$($gen:ident),*] $marker:ty, {$($bound:tt)*}, $( ($kind:ident, $t:ty, $arg:ident) ),*) => {
        impl<F, R, $($gen),*> HostFunction<$marker> for F
        where
            F: $($bound)* + Send + Sync + 'static,
            R: IntoCel,
            $($gen: FromCel,)*
        {
            fn params() -> Vec<Type> {
                vec![$(param_type!($kind, $t)),*]
            }
            fn result() -> Type {
                R::cel_type()
            }
            fn into_implementation(self) -> Implementation {
                Implementation::External(Arc::new(move |args: &[Value]| {
                    #[allow(unused_variables, reason = "no arguments to read for arity 0")]
                    let [$($arg),*] = args else {
                        return Err(Error::no_such_overload());
                    };
                    self($(read_arg!($kind, $t, $arg)),*).into_cel()
                }))
            }
        }
    };
}

host_function!([] (), {Fn() -> R},);
host_function!([A] (Owned<A>,), {Fn(A) -> R}, (owned, A, a));
host_function!([] (Borrowed,), {for<'a> Fn(&'a str) -> R}, (str, A, a));
host_function!([A, B] (Owned<A>, Owned<B>), {Fn(A, B) -> R}, (owned, A, a), (owned, B, b));
host_function!([B] (Borrowed, Owned<B>), {for<'a> Fn(&'a str, B) -> R}, (str, A, a), (owned, B, b));
host_function!([A] (Owned<A>, Borrowed), {for<'b> Fn(A, &'b str) -> R}, (owned, A, a), (str, B, b));
host_function!([] (Borrowed, Borrowed), {for<'a, 'b> Fn(&'a str, &'b str) -> R}, (str, A, a), (str, B, b));
host_function!([A, B, C] (Owned<A>, Owned<B>, Owned<C>), {Fn(A, B, C) -> R},
    (owned, A, a), (owned, B, b), (owned, C, c));
host_function!([B, C] (Borrowed, Owned<B>, Owned<C>), {for<'a> Fn(&'a str, B, C) -> R},
    (str, A, a), (owned, B, b), (owned, C, c));
host_function!([A, C] (Owned<A>, Borrowed, Owned<C>), {for<'b> Fn(A, &'b str, C) -> R},
    (owned, A, a), (str, B, b), (owned, C, c));
host_function!([A, B] (Owned<A>, Owned<B>, Borrowed), {for<'c> Fn(A, B, &'c str) -> R},
    (owned, A, a), (owned, B, b), (str, C, c));
host_function!([C] (Borrowed, Borrowed, Owned<C>), {for<'a, 'b> Fn(&'a str, &'b str, C) -> R},
    (str, A, a), (str, B, b), (owned, C, c));
host_function!([B] (Borrowed, Owned<B>, Borrowed), {for<'a, 'c> Fn(&'a str, B, &'c str) -> R},
    (str, A, a), (owned, B, b), (str, C, c));
host_function!([A] (Owned<A>, Borrowed, Borrowed), {for<'b, 'c> Fn(A, &'b str, &'c str) -> R},
    (owned, A, a), (str, B, b), (str, C, c));
host_function!([] (Borrowed, Borrowed, Borrowed), {for<'a, 'b, 'c> Fn(&'a str, &'b str, &'c str) -> R},
    (str, A, a), (str, B, b), (str, C, c));

/// The overload id of a host function: its name and its parameters' types
/// (`greet_string_int`).
fn overload_id(name: &str, params: &[Type]) -> String {
    let mut id = name.replace('.', "_");
    for p in params {
        id.push('_');
        id.push_str(
            &p.to_string()
                .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
                .to_lowercase(),
        );
    }
    id
}

impl EnvBuilder {
    /// Declares a global function implemented by a typed Rust closure: the overload's
    /// parameter and result types come from the closure's (see [`crate::host_fn`]'s table),
    /// and arguments and results are converted.
    ///
    /// ```
    /// use celerity::{Env, MapActivation, Value};
    /// let env = Env::builder()
    ///     .host_function("greet", |name: &str, times: i64| -> String {
    ///         format!("hello {}", name.repeat(times.max(0) as usize))
    ///     })
    ///     .build();
    /// let program = env.program(&env.compile("greet('ab', 2)").unwrap()).unwrap();
    /// assert_eq!(program.eval(&MapActivation::new()).unwrap(), Value::from("hello abab"));
    /// ```
    pub fn host_function<Args, F: HostFunction<Args>>(self, name: &str, f: F) -> Self {
        let params = F::params();
        let id = overload_id(name, &params);
        let overload = OverloadDecl::global(&id, params, F::result());
        self.declare_function(cel_types::FunctionDecl::new(name, vec![overload]))
            .implementation(&id, f.into_implementation())
    }
}
