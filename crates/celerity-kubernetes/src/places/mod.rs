//! The other places the API server (and the scheduler) evaluates CEL, each as a named
//! environment of the Kubernetes environment by version: its variables and their types, its
//! libraries, its cost limit, the type its expressions must have and the messages it gives
//! when they do not.
//!
//! | name | place | variables | result | per-call limit |
//! | --- | --- | --- | --- | --- |
//! | `authn-claims` | AuthenticationConfiguration `jwt[].claimValidationRules`, `claimMappings` ([`authn`]) | `claims`: `map(string, any)` | any (mappings), `bool` (rules) | 1,000,000 |
//! | `authn-user` | AuthenticationConfiguration `jwt[].userValidationRules` ([`authn`]) | `user`: `kubernetes.UserInfo` | `bool` | 1,000,000 |
//! | `authz-match` | AuthorizationConfiguration webhook `matchConditions` ([`authz`]) | `request`: `kubernetes.SubjectAccessReviewSpec` | `bool` | 1,000,000 |
//! | `admission-webhook-match` | Validating/MutatingWebhookConfiguration `matchConditions` ([`webhook`]) | `object`, `oldObject`, `request`, `namespaceObject`, `authorizer` | `bool` | 1,000,000 (2,500,000 per webhook) |
//! | `dra-selector` | DeviceClass and ResourceClaim device selectors ([`dra`]) | `device`: `kubernetes.DRADevice` | `bool` (or `dyn`) | 1,000,000 |
//!
//! Every place compiles as Kubernetes stores expressions (`StoredExpressions`): all libraries
//! of the version not removed, at their newest versions. A place that did not exist in a
//! version is an error for that version.

use std::fmt;
use std::str::FromStr;

use cel_k8s::KubeVersion;
use celerity::{Ast, Backend, CostRange, Env, Program, ProgramOptions, Type, Value};
use serde_json::Value as Json;

pub mod authn;
pub mod authz;
pub mod config_check;
pub mod dra;
pub mod dra_allocation;
pub mod jwt;
pub mod jwt_validation;
pub mod webhook;

/// One of the places Kubernetes evaluates CEL outside CRDs and admission policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Device selectors of DeviceClasses and ResourceClaims (`device`).
    DraSelector,
    /// JWT authenticators' claim validation rules and claim mappings (`claims`).
    AuthnClaims,
    /// JWT authenticators' user validation rules (`user`).
    AuthnUser,
    /// Webhook authorizers' match conditions (`request`).
    AuthzMatch,
    /// Admission webhooks' match conditions.
    AdmissionWebhookMatch,
}

impl Place {
    /// Every place, in the order the CLI lists them.
    pub const ALL: [Place; 5] = [
        Place::DraSelector,
        Place::AuthnClaims,
        Place::AuthnUser,
        Place::AuthzMatch,
        Place::AdmissionWebhookMatch,
    ];

    /// The environment's name (`dra-selector`).
    pub fn name(self) -> &'static str {
        match self {
            Place::DraSelector => "dra-selector",
            Place::AuthnClaims => "authn-claims",
            Place::AuthnUser => "authn-user",
            Place::AuthzMatch => "authz-match",
            Place::AdmissionWebhookMatch => "admission-webhook-match",
        }
    }

    /// The first Kubernetes version that evaluates expressions in this place: webhook match
    /// conditions came in 1.27, structured authentication and authorization in 1.29, device
    /// selectors in 1.31 (`k8s.io/dynamic-resource-allocation/cel/compile.go` introduces
    /// its options at 1.31).
    pub fn since(self) -> KubeVersion {
        match self {
            Place::AdmissionWebhookMatch => KubeVersion::new(1, 27),
            Place::AuthnClaims | Place::AuthnUser | Place::AuthzMatch => KubeVersion::new(1, 29),
            Place::DraSelector => KubeVersion::new(1, 31),
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Place {
    type Err = String;
    fn from_str(s: &str) -> Result<Place, String> {
        Place::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Place::ALL.iter().map(|p| p.name()).collect();
                format!("unknown environment '{s}' (known: {})", names.join(", "))
            })
    }
}

/// The types a place's expressions may have, and how it says they do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Returns {
    /// Anything (claim mappings take any type and check the value).
    Any,
    /// `bool`, exactly: "must evaluate to bool" (authentication's words).
    BoolAuthn,
    /// `bool`, exactly: "must evaluate to bool but got T" (authorization and admission).
    BoolButGot,
    /// `bool` or `dyn`: "must evaluate to bool or the unknown type, not T" (DRA).
    BoolOrDyn,
}

/// A place's environment for one Kubernetes version.
pub struct PlaceEnv {
    place: Place,
    version: KubeVersion,
    env: Env,
    returns: Returns,
    cost_limit: u64,
    defaults: Vec<(String, Value)>,
    inner: Inner,
}

/// What a place needs besides its environment to bind values.
enum Inner {
    Authn(authn::AuthnTypes),
    Authz(authz::AuthzTypes),
    Webhook(Box<webhook::WebhookTypes>),
    Dra,
}

impl fmt::Debug for PlaceEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlaceEnv")
            .field("place", &self.place)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// A compiled expression of a place.
#[derive(Debug)]
pub struct PlaceProgram {
    /// The checked expression (for estimates).
    pub ast: Ast,
    /// The program, with the place's cost limit.
    pub program: Program,
    /// The expression's static type.
    pub output: Type,
}

impl PlaceEnv {
    /// The environment of `place` in Kubernetes `version`, or why there is none.
    pub fn new(place: Place, version: KubeVersion) -> Result<PlaceEnv, String> {
        if version < place.since() {
            return Err(format!(
                "{place}: Kubernetes {version} has no such expressions (they exist from {})",
                place.since()
            ));
        }
        let (env, inner, returns, defaults) = match place {
            Place::AuthnClaims => {
                let (env, t) = authn::claims_env(version);
                (env, Inner::Authn(t), Returns::Any, Vec::new())
            }
            Place::AuthnUser => {
                let (env, t) = authn::user_env(version);
                (env, Inner::Authn(t), Returns::BoolAuthn, Vec::new())
            }
            Place::AuthzMatch => {
                let (env, t) = authz::env(version);
                (env, Inner::Authz(t), Returns::BoolButGot, Vec::new())
            }
            Place::AdmissionWebhookMatch => {
                let (env, t) = webhook::env(version);
                let defaults = webhook::default_bindings(&env);
                (
                    env,
                    Inner::Webhook(Box::new(t)),
                    Returns::BoolButGot,
                    defaults,
                )
            }
            Place::DraSelector => (
                dra::env(version),
                Inner::Dra,
                Returns::BoolOrDyn,
                Vec::new(),
            ),
        };
        let cost_limit = match place {
            Place::DraSelector => dra::SELECTOR_MAX_COST,
            _ => crate::admission::PER_CALL_LIMIT,
        };
        Ok(PlaceEnv {
            place,
            version,
            env,
            returns,
            cost_limit,
            defaults,
            inner,
        })
    }

    /// The place.
    pub fn place(&self) -> Place {
        self.place
    }

    /// The Kubernetes version.
    pub fn version(&self) -> KubeVersion {
        self.version
    }

    /// The environment expressions compile in.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The runtime cost limit of one evaluation.
    pub fn cost_limit(&self) -> u64 {
        self.cost_limit
    }

    /// Compiles an expression as the place's compiler does, with its messages
    /// (`compilation failed: ERROR: ...`, `must evaluate to bool ...`).
    pub fn compile(&self, expression: &str, backend: Backend) -> Result<PlaceProgram, String> {
        self.compile_returning(expression, backend, self.returns)
    }

    /// Compiles a rule that must be a `bool` where the place also has expressions of any
    /// type: `claimValidationRules` in `authn-claims` (whose mappings take any type).
    pub fn compile_rule(&self, expression: &str, backend: Backend) -> Result<PlaceProgram, String> {
        let returns = match self.returns {
            Returns::Any => Returns::BoolAuthn,
            other => other,
        };
        self.compile_returning(expression, backend, returns)
    }

    fn compile_returning(
        &self,
        expression: &str,
        backend: Backend,
        returns: Returns,
    ) -> Result<PlaceProgram, String> {
        let ast = self
            .env
            .compile(expression)
            .map_err(|issues| format!("compilation failed: {issues}"))?;
        let output = ast.result_type().cloned().unwrap_or(Type::Dyn);
        let ok = match returns {
            Returns::Any => true,
            Returns::BoolAuthn | Returns::BoolButGot => output == Type::Bool,
            Returns::BoolOrDyn => output == Type::Bool || output == Type::Dyn,
        };
        if !ok {
            return Err(match returns {
                Returns::BoolButGot => format!("must evaluate to bool but got {output}"),
                Returns::BoolOrDyn => {
                    format!("must evaluate to bool or the unknown type, not {output}")
                }
                _ => "must evaluate to bool".to_string(),
            });
        }
        let options = ProgramOptions::default().backend(backend);
        let program = self
            .env
            .program_with(&ast, options)
            .map_err(|e| format!("program instantiation failed: {e}"))?
            .with_cost_limit(Some(self.cost_limit));
        Ok(PlaceProgram {
            ast,
            program,
            output,
        })
    }

    /// The static cost estimate of an expression the place compiled, as the place's
    /// compiler makes it: device selectors with the DRA library's sizes of `device`
    /// ([`dra::DraSizes`]); the other places with no sizes, as their compilers estimate.
    pub fn estimate_cost(&self, ast: &Ast) -> Option<CostRange> {
        match self.inner {
            Inner::Dra => self
                .env
                .estimate_cost(ast, &dra::DraSizes::new(self.version)),
            _ => self.env.estimate_cost(ast, &celerity::NoSizes),
        }
    }

    /// A variable's value from the JSON the API server receives (a claims object, a
    /// UserInfo, a SubjectAccessReview spec, an admission request's parts, a ResourceSlice
    /// device), converted as the place converts it; errors name the variable and a path.
    pub fn value(&self, name: &str, json: &Json) -> Result<Value, String> {
        let declared = self.env.variables().iter().any(|v| v.name == name);
        if !declared {
            return Err(format!(
                "variable '{name}': the {} environment declares no such variable",
                self.place
            ));
        }
        match &self.inner {
            Inner::Authn(t) => t.value(name, json),
            Inner::Authz(t) => t.value(json),
            Inner::Webhook(t) => t.value(name, json),
            Inner::Dra => dra::device_value(json, dra::Features::of(self.version)),
        }
    }

    /// Values bound before the caller's: the admission webhook environment's `authorizer`,
    /// allowing everything.
    pub fn defaults(&self) -> &[(String, Value)] {
        &self.defaults
    }

    /// The place's verdict on a value an expression returned: device selectors must give a
    /// bool, in the DRA library's words; other places take the value as it is.
    pub fn check_result(&self, v: &Value) -> Result<(), String> {
        match (self.place, v) {
            (Place::DraSelector, Value::Bool(_)) => Ok(()),
            (Place::DraSelector, other) => Err(dra::not_bool(other)),
            _ => Ok(()),
        }
    }
}

/// Lists the fields of a JSON object that are not among `known`, as a path error.
pub(crate) fn expect_object<'a>(
    json: &'a Json,
    path: &str,
) -> Result<&'a serde_json::Map<String, Json>, String> {
    json.as_object()
        .ok_or_else(|| format!("{path}: expected an object, got {}", json_kind(json)))
}

/// The JSON kind of a value, for messages.
pub(crate) fn json_kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
