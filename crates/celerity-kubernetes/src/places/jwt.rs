//! The JWT authenticator of structured authentication (AuthenticationConfiguration
//! `jwt[]`), from a token's decoded claims: the user the API server would authenticate, or
//! its error, in its words. Signatures are not checked (there is no token, only claims);
//! the issuer, the audiences and the expiry are.
//!
//! Written after `k8s.io/apiserver` (v0.36.0): `plugin/pkg/authenticator/token/oidc/oidc.go`
//! (`AuthenticateToken`, `getUsername`, `getGroups`, `getUID`, `getExtra`,
//! `convertCELValueToStringList`, `checkValidationRulesEvaluation`),
//! `pkg/authentication/cel/mapper.go` (every expression of a list evaluated before any
//! result is looked at) and `pkg/apis/apiserver/validation/validation.go`
//! (`validateJWTAuthenticator`: the configuration's checks, with their paths and texts).
//! Verification follows go-oidc's `IDTokenVerifier.Verify` (issuer, audience, expiry).

use std::collections::BTreeMap;

use cel_k8s::KubeVersion;
use celerity::{Backend, MapActivation, Value};
use serde_json::{Map, Value as Json};

use super::{Place, PlaceEnv, PlaceProgram};

/// The key of the credential id in a user's `extra` (`user.CredentialIDKey`).
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";

/// The user an authenticator gives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// `username`.
    pub username: String,
    /// `uid` (empty when not mapped).
    pub uid: String,
    /// `groups`.
    pub groups: Vec<String>,
    /// `extra`, by key.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The user as the batch line prints it.
    pub fn to_json(&self) -> Json {
        serde_json::json!({
            "username": self.username,
            "uid": self.uid,
            "groups": self.groups,
            "extra": self.extra,
        })
    }
}

/// A claim or an expression, with a prefix for claims (`PrefixedClaimOrExpression`).
enum Mapping {
    None,
    Claim { claim: String, prefix: String },
    Expression(Box<Compiled>),
}

/// A compiled expression with its text (errors quote it) and a message (rules).
struct Compiled {
    expression: String,
    message: String,
    program: PlaceProgram,
}

/// A `jwt[]` item, checked and compiled.
pub struct JwtAuthenticator {
    version: KubeVersion,
    issuer: String,
    audiences: Vec<String>,
    required_claims: Vec<(String, String)>,
    claim_rules: Vec<Compiled>,
    username: Mapping,
    groups: Mapping,
    uid: Mapping,
    extra: Vec<(String, Compiled)>,
    user_rules: Vec<Compiled>,
    claims_env: PlaceEnv,
    user_env: PlaceEnv,
}

impl std::fmt::Debug for JwtAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuthenticator")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// A field error as apimachinery prints it (`path: Type: detail`).
fn field_error(path: &str, kind: &str, value: Option<&str>, detail: &str) -> String {
    let mut s = format!("{path}: {kind}");
    if let Some(v) = value {
        s.push_str(&format!(": {}", go_quote(v)));
    }
    if !detail.is_empty() {
        s.push_str(": ");
        s.push_str(detail);
    }
    s
}

/// A string as Go's `%q` writes it (the common cases: quotes, backslashes, controls).
fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Errors joined as `utilerrors.NewAggregate` prints them.
fn aggregate(errors: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    if unique.len() == 1 {
        unique.pop().unwrap_or_default()
    } else {
        format!("[{}]", unique.join(", "))
    }
}

/// A string field of a JSON object, or an error with its path (`absent` gives "").
fn string_field(obj: &Map<String, Json>, key: &str, path: &str) -> Result<String, String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(String::new()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(v) => Err(format!(
            "{}: expected a string, got {}",
            join(path, key),
            super::json_kind(v)
        )),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn object<'a>(
    obj: &'a Map<String, Json>,
    key: &str,
    path: &str,
) -> Result<Option<&'a Map<String, Json>>, String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => super::expect_object(v, &join(path, key)).map(Some),
    }
}

fn array<'a>(obj: &'a Map<String, Json>, key: &str, path: &str) -> Result<&'a [Json], String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(&[]),
        Some(Json::Array(a)) => Ok(a),
        Some(v) => Err(format!(
            "{}: expected a list, got {}",
            join(path, key),
            super::json_kind(v)
        )),
    }
}

/// Whether an expression reads `claims.<field>` (or `claims.?<field>`), as
/// `hasSelectExp` looks for it: by the text's tokens, which is what a select of that field
/// on the identifier `claims` is.
fn reads_claim(expression: &str, field: &str) -> bool {
    let bytes = expression.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    for (i, _) in expression.match_indices("claims") {
        if i > 0 && (ident(bytes[i - 1]) || bytes[i - 1] == b'.') {
            continue;
        }
        let rest = expression[i + 6..].trim_start();
        let rest = match rest.strip_prefix('.') {
            Some(r) => r.trim_start(),
            None => continue,
        };
        let rest = rest.strip_prefix('?').unwrap_or(rest).trim_start();
        if let Some(after) = rest.strip_prefix(field)
            && !after.bytes().next().is_some_and(ident)
        {
            return true;
        }
    }
    false
}

impl JwtAuthenticator {
    /// Checks and compiles a `jwt[]` item as the API server does when it loads the
    /// configuration; the error is the aggregate of the field errors, with paths relative
    /// to `path` (empty for the item itself, as `oidc.New` reports them).
    pub fn new(
        jwt: &Json,
        path: &str,
        version: KubeVersion,
        backend: Backend,
    ) -> Result<JwtAuthenticator, String> {
        let claims_env = PlaceEnv::new(Place::AuthnClaims, version)?;
        let user_env = PlaceEnv::new(Place::AuthnUser, version)?;
        let item = super::expect_object(jwt, if path.is_empty() { "jwt" } else { path })?;
        let mut errs = Vec::new();
        let issuer_obj = object(item, "issuer", path)?.cloned().unwrap_or_default();
        let ipath = join(path, "issuer");
        let issuer = string_field(&issuer_obj, "url", &ipath)?;
        check_issuer(&issuer_obj, &issuer, &ipath, &mut errs)?;
        let mut audiences = Vec::new();
        for (i, a) in array(&issuer_obj, "audiences", &ipath)?.iter().enumerate() {
            match a {
                Json::String(s) => audiences.push(s.clone()),
                other => {
                    return Err(format!(
                        "{ipath}.audiences[{i}]: expected a string, got {}",
                        super::json_kind(other)
                    ));
                }
            }
        }
        check_audiences(&issuer_obj, &audiences, &ipath, &mut errs)?;

        let compile = |env: &PlaceEnv, expr: &str, rule: bool, path: String| {
            let r = if rule {
                env.compile_rule(expr, backend)
            } else {
                env.compile(expr, backend)
            };
            r.map_err(|detail| field_error(&path, "Invalid value", Some(expr), &detail))
        };

        // claimValidationRules
        let mut required_claims = Vec::new();
        let mut claim_rules = Vec::new();
        let mut uses_email_verified = false;
        let rpath = join(path, "claimValidationRules");
        let mut seen_claims = Vec::new();
        let mut seen_exprs = Vec::new();
        for (i, rule) in array(item, "claimValidationRules", path)?
            .iter()
            .enumerate()
        {
            let p = format!("{rpath}[{i}]");
            let rule = super::expect_object(rule, &p)?;
            let claim = string_field(rule, "claim", &p)?;
            let required = string_field(rule, "requiredValue", &p)?;
            let expr = string_field(rule, "expression", &p)?;
            let message = string_field(rule, "message", &p)?;
            match (claim.is_empty(), expr.is_empty()) {
                (false, false) => errs.push(field_error(
                    &p,
                    "Invalid value",
                    Some(&claim),
                    "claim and expression can't both be set",
                )),
                (true, true) => errs.push(field_error(
                    &p,
                    "Required value",
                    None,
                    "claim or expression is required",
                )),
                (false, true) => {
                    if !message.is_empty() {
                        errs.push(field_error(
                            &format!("{p}.message"),
                            "Invalid value",
                            Some(&message),
                            "may not be specified when claim is set",
                        ));
                    }
                    if seen_claims.contains(&claim) {
                        errs.push(field_error(
                            &format!("{p}.claim"),
                            "Duplicate value",
                            Some(&claim),
                            "",
                        ));
                    }
                    seen_claims.push(claim.clone());
                    required_claims.push((claim, required));
                }
                (true, false) => {
                    if !required.is_empty() {
                        errs.push(field_error(
                            &format!("{p}.requiredValue"),
                            "Invalid value",
                            Some(&required),
                            "may not be specified when expression is set",
                        ));
                    }
                    if seen_exprs.contains(&expr) {
                        errs.push(field_error(
                            &format!("{p}.expression"),
                            "Duplicate value",
                            Some(&expr),
                            "",
                        ));
                        continue;
                    }
                    seen_exprs.push(expr.clone());
                    match compile(&claims_env, &expr, true, format!("{p}.expression")) {
                        Ok(program) => {
                            uses_email_verified |= reads_claim(&expr, "email_verified");
                            claim_rules.push(Compiled {
                                expression: expr,
                                message,
                                program,
                            });
                        }
                        Err(e) => errs.push(e),
                    }
                }
            }
        }

        // claimMappings
        let mpath = join(path, "claimMappings");
        let mappings = object(item, "claimMappings", path)?
            .cloned()
            .unwrap_or_default();
        let prefixed = |key: &str, required: bool, errs: &mut Vec<String>| {
            let p = join(&mpath, key);
            let m = object(&mappings, key, &mpath)?.cloned().unwrap_or_default();
            let claim = string_field(&m, "claim", &p)?;
            let expr = string_field(&m, "expression", &p)?;
            let prefix = match m.get("prefix") {
                None | Some(Json::Null) => None,
                Some(Json::String(s)) => Some(s.clone()),
                Some(v) => {
                    return Err(format!(
                        "{p}.prefix: expected a string, got {}",
                        super::json_kind(v)
                    ));
                }
            };
            Ok::<Mapping, String>(match (claim.is_empty(), expr.is_empty()) {
                (false, false) => {
                    errs.push(field_error(
                        &p,
                        "Invalid value",
                        Some(""),
                        "claim and expression can't both be set",
                    ));
                    Mapping::None
                }
                (true, true) => {
                    if required {
                        errs.push(field_error(
                            &p,
                            "Required value",
                            None,
                            "claim or expression is required",
                        ));
                    }
                    Mapping::None
                }
                (true, false) => {
                    if let Some(prefix) = &prefix {
                        errs.push(field_error(
                            &format!("{p}.prefix"),
                            "Invalid value",
                            Some(prefix),
                            "may not be specified when expression is set",
                        ));
                    }
                    match compile(&claims_env, &expr, false, format!("{p}.expression")) {
                        Ok(program) => Mapping::Expression(Box::new(Compiled {
                            expression: expr,
                            message: String::new(),
                            program,
                        })),
                        Err(e) => {
                            errs.push(e);
                            Mapping::None
                        }
                    }
                }
                (false, true) => match prefix {
                    None => {
                        errs.push(field_error(
                            &format!("{p}.prefix"),
                            "Required value",
                            None,
                            "prefix is required when claim is set. It can be set to an empty string to disable prefixing",
                        ));
                        Mapping::None
                    }
                    Some(prefix) => Mapping::Claim { claim, prefix },
                },
            })
        };
        let username = prefixed("username", true, &mut errs)?;
        let groups = prefixed("groups", false, &mut errs)?;
        let uid_obj = object(&mappings, "uid", &mpath)?
            .cloned()
            .unwrap_or_default();
        let upath = join(&mpath, "uid");
        let uid_claim = string_field(&uid_obj, "claim", &upath)?;
        let uid_expr = string_field(&uid_obj, "expression", &upath)?;
        let uid = match (uid_claim.is_empty(), uid_expr.is_empty()) {
            (false, false) => {
                errs.push(field_error(
                    &upath,
                    "Invalid value",
                    Some(""),
                    "claim and expression can't both be set",
                ));
                Mapping::None
            }
            (true, true) => Mapping::None,
            (false, true) => Mapping::Claim {
                claim: uid_claim,
                prefix: String::new(),
            },
            (true, false) => {
                match compile(&claims_env, &uid_expr, false, format!("{upath}.expression")) {
                    Ok(program) => Mapping::Expression(Box::new(Compiled {
                        expression: uid_expr,
                        message: String::new(),
                        program,
                    })),
                    Err(e) => {
                        errs.push(e);
                        Mapping::None
                    }
                }
            }
        };
        let mut extra = Vec::new();
        let mut seen_keys: Vec<String> = Vec::new();
        for (i, m) in array(&mappings, "extra", &mpath)?.iter().enumerate() {
            let p = format!("{mpath}.extra[{i}]");
            let m = super::expect_object(m, &p)?;
            let key = string_field(m, "key", &p)?;
            let expr = string_field(m, "valueExpression", &p)?;
            let kpath = format!("{p}.key");
            errs.extend(extra_key_errors(&key, &kpath));
            if seen_keys.contains(&key) {
                errs.push(field_error(&kpath, "Duplicate value", Some(&key), ""));
                continue;
            }
            seen_keys.push(key.clone());
            if expr.is_empty() {
                errs.push(field_error(
                    &format!("{p}.valueExpression"),
                    "Required value",
                    None,
                    "",
                ));
                continue;
            }
            match compile(&claims_env, &expr, false, format!("{p}.valueExpression")) {
                Ok(program) => {
                    uses_email_verified |= reads_claim(&expr, "email_verified");
                    extra.push((
                        key,
                        Compiled {
                            expression: expr,
                            message: String::new(),
                            program,
                        },
                    ));
                }
                Err(e) => errs.push(e),
            }
        }
        if let Mapping::Expression(c) = &username {
            uses_email_verified |= reads_claim(&c.expression, "email_verified");
            if reads_claim(&c.expression, "email") && !uses_email_verified {
                errs.push(field_error(
                    &format!("{mpath}.username.expression"),
                    "Invalid value",
                    Some(&c.expression),
                    "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression",
                ));
            }
        }

        // userValidationRules
        let mut user_rules = Vec::new();
        let upath = join(path, "userValidationRules");
        let mut seen_exprs = Vec::new();
        for (i, rule) in array(item, "userValidationRules", path)?.iter().enumerate() {
            let p = format!("{upath}[{i}]");
            let rule = super::expect_object(rule, &p)?;
            let expr = string_field(rule, "expression", &p)?;
            let message = string_field(rule, "message", &p)?;
            let epath = format!("{p}.expression");
            if expr.is_empty() {
                errs.push(field_error(&epath, "Required value", None, ""));
                continue;
            }
            if seen_exprs.contains(&expr) {
                errs.push(field_error(&epath, "Duplicate value", Some(&expr), ""));
                continue;
            }
            seen_exprs.push(expr.clone());
            match compile(&user_env, &expr, true, epath) {
                Ok(program) => user_rules.push(Compiled {
                    expression: expr,
                    message,
                    program,
                }),
                Err(e) => errs.push(e),
            }
        }
        if !errs.is_empty() {
            return Err(aggregate(errs));
        }
        Ok(JwtAuthenticator {
            version,
            issuer,
            audiences,
            required_claims,
            claim_rules,
            username,
            groups,
            uid,
            extra,
            user_rules,
            claims_env,
            user_env,
        })
    }

    /// The issuer URL (`issuer.url`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Whether the API server would give a token with these claims to this authenticator:
    /// its `iss` is the issuer's URL (`accounts.google.com` read as
    /// `https://accounts.google.com`).
    pub fn accepts_issuer(&self, claims: &Json) -> bool {
        match claims.get("iss") {
            Some(Json::String(iss)) => {
                let iss = if iss == "accounts.google.com" {
                    "https://accounts.google.com"
                } else {
                    iss.as_str()
                };
                iss == self.issuer
            }
            _ => false,
        }
    }

    /// The user the API server authenticates from a token with these claims, or its error,
    /// at `now` (seconds since the epoch; the token's `exp` must not be before it).
    pub fn authenticate(&self, claims: &Json, now: i64) -> Result<UserInfo, String> {
        let c = super::expect_object(claims, "claims")?;
        if !self.accepts_issuer(claims) {
            let iss = match c.get("iss") {
                Some(Json::String(s)) => go_quote(s),
                _ => "none".to_string(),
            };
            return Err(format!(
                "the token's issuer ({iss}) is not {}: this authenticator does not authenticate it",
                go_quote(&self.issuer)
            ));
        }
        self.verify(c, now)
            .map_err(|e| format!("oidc: verify token: {e}"))?;
        let claims_value = self.claims_env.value("claims", claims)?;
        let mut act = MapActivation::new();
        act.bind("claims", claims_value);

        let username = self.username(c, &act)?;
        let groups = self.groups(c, &act)?;
        let uid = self.uid(c, &act)?;
        let extra = self.extra(c, &act)?;
        let user = UserInfo {
            username,
            uid,
            groups,
            extra,
        };
        for (claim, want) in &self.required_claims {
            let Some(v) = c.get(claim) else {
                return Err(format!(
                    "oidc: required claim {claim} not present in ID token"
                ));
            };
            let got = unmarshal_string(v).map_err(|e| format!("oidc: parse claim {claim}: {e}"))?;
            if &got != want {
                return Err(format!(
                    "oidc: required claim {claim} value does not match. Got = {got}, want = {want}"
                ));
            }
        }
        let prefix = "oidc: error evaluating claim validation expression";
        check_rules(&self.claim_rules, &act, prefix)?;
        if !self.user_rules.is_empty() {
            let value = self.user_env.value("user", &self.user_json(&user))?;
            let mut act = MapActivation::new();
            act.bind("user", value);
            check_rules(
                &self.user_rules,
                &act,
                "oidc: error evaluating user info validation rule",
            )?;
        }
        Ok(user)
    }

    /// The user as the rules see it.
    fn user_json(&self, user: &UserInfo) -> Json {
        user.to_json()
    }

    /// go-oidc's checks of a verified token: audience (one configured: go-oidc's own
    /// check; several: Kubernetes' `verifyAudience`), then expiry.
    fn verify(&self, c: &Map<String, Json>, now: i64) -> Result<(), String> {
        let aud: Vec<String> = match c.get("aud") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::String(s)) => vec![s.clone()],
            Some(Json::Array(a)) if a.iter().all(Json::is_string) => a
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            Some(v) => {
                return Err(format!(
                    "oidc: failed to unmarshal claims: json: cannot unmarshal {} into Go value of type []string",
                    go_kind(v)
                ));
            }
        };
        let list = |v: &[String]| {
            let items: Vec<String> = v.iter().map(|s| go_quote(s)).collect();
            format!("[{}]", items.join(" "))
        };
        if self.audiences.len() == 1 {
            if !aud.contains(&self.audiences[0]) {
                return Err(format!(
                    "oidc: expected audience {} got {}",
                    go_quote(&self.audiences[0]),
                    list(&aud)
                ));
            }
        } else if !aud.iter().any(|a| self.audiences.contains(a)) {
            let mut want = self.audiences.clone();
            want.sort();
            want.dedup();
            return Err(format!(
                "oidc: expected audience in {} got {}",
                list(&want),
                list(&aud)
            ));
        }
        let exp = match c.get("exp") {
            None | Some(Json::Null) => 0.0,
            Some(Json::Number(n)) => n.as_f64().unwrap_or(0.0),
            Some(v) => {
                return Err(format!(
                    "oidc: failed to unmarshal claims: json: cannot unmarshal {} into Go value of type float64",
                    go_kind(v)
                ));
            }
        };
        let exp_seconds = if exp == 0.0 {
            None
        } else {
            Some(exp.floor() as i64)
        };
        match exp_seconds {
            Some(s) if s >= now => Ok(()),
            Some(s) => Err(format!(
                "oidc: token is expired (Token Expiry: {})",
                go_time(s)
            )),
            None => {
                Err("oidc: token is expired (Token Expiry: 0001-01-01 00:00:00 +0000 UTC)".into())
            }
        }
    }

    fn username(&self, c: &Map<String, Json>, act: &MapActivation) -> Result<String, String> {
        match &self.username {
            Mapping::Expression(m) => {
                let prefix = "oidc: error evaluating username claim expression";
                let v = eval(m, act).map_err(|e| format!("{prefix}: {e}"))?;
                let Value::String(s) = &v else {
                    return Err(format!(
                        "{prefix}: username claim expression must return a string"
                    ));
                };
                if s.is_empty() {
                    return Err("oidc: empty username via CEL expression is not allowed".into());
                }
                Ok(s.to_string())
            }
            Mapping::Claim { claim, prefix } => {
                let username = c
                    .get(claim)
                    .ok_or_else(|| "claim not present".to_string())
                    .and_then(unmarshal_string)
                    .map_err(|e| format!("oidc: parse username claims {}: {e}", go_quote(claim)))?;
                if claim == "email"
                    && let Some(v) = c.get("email_verified")
                {
                    let verified = match v {
                        Json::Bool(b) => *b,
                        Json::Null => false,
                        other => {
                            return Err(format!(
                                "oidc: parse 'email_verified' claim: json: cannot unmarshal {} into Go value of type bool",
                                go_kind(other)
                            ));
                        }
                    };
                    if !verified {
                        return Err("oidc: email not verified".into());
                    }
                }
                Ok(format!("{prefix}{username}"))
            }
            Mapping::None => Ok(String::new()),
        }
    }

    fn groups(&self, c: &Map<String, Json>, act: &MapActivation) -> Result<Vec<String>, String> {
        if let Mapping::Claim { claim, prefix } = &self.groups
            && let Some(v) = c.get(claim)
        {
            let groups = match v {
                Json::Null => Vec::new(),
                Json::String(s) => vec![s.clone()],
                Json::Array(a) if a.iter().all(|i| i.is_string() || i.is_null()) => a
                    .iter()
                    .map(|i| i.as_str().unwrap_or_default().to_string())
                    .collect(),
                other => {
                    return Err(format!(
                        "oidc: parse groups claim {}: json: cannot unmarshal {} into Go value of type string",
                        go_quote(claim),
                        go_kind(other)
                    ));
                }
            };
            return Ok(groups.into_iter().map(|g| format!("{prefix}{g}")).collect());
        }
        let Mapping::Expression(m) = &self.groups else {
            return Ok(Vec::new());
        };
        let prefix = "oidc: error evaluating group claim expression";
        let v = eval(m, act).map_err(|e| format!("{prefix}: {e}"))?;
        string_list(&v).map_err(|e| format!("{prefix}: {e}"))
    }

    fn uid(&self, c: &Map<String, Json>, act: &MapActivation) -> Result<String, String> {
        match &self.uid {
            Mapping::Claim { claim, .. } => c
                .get(claim)
                .ok_or_else(|| "claim not present".to_string())
                .and_then(unmarshal_string)
                .map_err(|e| format!("oidc: parse uid claim {}: {e}", go_quote(claim))),
            Mapping::Expression(m) => {
                let prefix = "oidc: error evaluating uid claim expression";
                match &eval(m, act).map_err(|e| format!("{prefix}: {e}"))? {
                    Value::String(s) => Ok(s.to_string()),
                    _ => Err(format!(
                        "{prefix}: uid claim expression must return a string"
                    )),
                }
            }
            Mapping::None => Ok(String::new()),
        }
    }

    fn extra(
        &self,
        c: &Map<String, Json>,
        act: &MapActivation,
    ) -> Result<BTreeMap<String, Vec<String>>, String> {
        let mut extra = BTreeMap::new();
        // The credential id came in 1.32 (`getCredentialID`).
        if self.version >= KubeVersion::new(1, 32)
            && let Some(Json::String(jti)) = c.get("jti")
            && !jti.is_empty()
        {
            extra.insert(CREDENTIAL_ID_KEY.to_string(), vec![format!("JTI={jti}")]);
        }
        let mut values = Vec::with_capacity(self.extra.len());
        for (_, m) in &self.extra {
            values.push(eval(m, act)?);
        }
        for ((key, m), v) in self.extra.iter().zip(values) {
            let list = string_list(&v).map_err(|e| {
                format!(
                    "oidc: error evaluating extra claim expression: {}: {e}",
                    m.expression
                )
            })?;
            if !list.is_empty() {
                extra.insert(key.clone(), list);
            }
        }
        Ok(extra)
    }
}

/// Evaluates one expression as `mapper.eval` does, its error quoting the expression.
fn eval(m: &Compiled, act: &MapActivation) -> Result<Value, String> {
    m.program
        .program
        .eval(act)
        .map_err(|e| format!("expression '{}' resulted in error: {e}", m.expression))
}

/// Every rule evaluated, then each result checked in order (`checkValidationRulesEvaluation`).
fn check_rules(rules: &[Compiled], act: &MapActivation, prefix: &str) -> Result<(), String> {
    let mut results = Vec::with_capacity(rules.len());
    for r in rules {
        results.push(eval(r, act).map_err(|e| format!("{prefix}: {e}"))?);
    }
    for (r, v) in rules.iter().zip(results) {
        match v {
            Value::Bool(true) => {}
            Value::Bool(false) => {
                return Err(format!(
                    "{prefix}: validation expression '{}' failed: {}",
                    r.expression, r.message
                ));
            }
            _ => {
                return Err(format!(
                    "{prefix}: validation expression must return a boolean"
                ));
            }
        }
    }
    Ok(())
}

/// A claim decoded into a Go string (`json.Unmarshal`): `null` is the empty string.
fn unmarshal_string(v: &Json) -> Result<String, String> {
    match v {
        Json::String(s) => Ok(s.clone()),
        Json::Null => Ok(String::new()),
        other => Err(format!(
            "json: cannot unmarshal {} into Go value of type string",
            go_kind(other)
        )),
    }
}

/// The JSON kind as encoding/json names it in its errors.
fn go_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// A value as a list of strings (`convertCELValueToStringList`): a string or a list of
/// strings, empty strings dropped, `null` none.
fn string_list(v: &Value) -> Result<Vec<String>, String> {
    const WRONG: &str = "expression must return a string or a list of strings";
    match v {
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![s.to_string()]),
        Value::Null => Ok(Vec::new()),
        Value::List(l) => {
            let mut out = Vec::new();
            for item in &l.items {
                match item {
                    Value::String(s) if s.is_empty() => {}
                    Value::String(s) => out.push(s.to_string()),
                    _ => return Err(WRONG.into()),
                }
            }
            Ok(out)
        }
        _ => Err(WRONG.into()),
    }
}

/// The issuer's checks (`validateIssuer`) that need no network: the URL, the discovery
/// URL, the egress selector.
fn check_issuer(
    issuer: &Map<String, Json>,
    url: &str,
    path: &str,
    errs: &mut Vec<String>,
) -> Result<(), String> {
    let upath = format!("{path}.url");
    if url.is_empty() {
        errs.push(field_error(&upath, "Required value", None, ""));
    } else {
        check_url(url, &upath, errs);
    }
    let discovery = string_field(issuer, "discoveryURL", path)?;
    if !discovery.is_empty() {
        let dpath = format!("{path}.discoveryURL");
        if !url.is_empty() && url.trim_end_matches('/') == discovery.trim_end_matches('/') {
            errs.push(field_error(
                &dpath,
                "Invalid value",
                Some(&discovery),
                "discoveryURL must be different from URL",
            ));
        }
        check_url(&discovery, &dpath, errs);
    }
    let egress = string_field(issuer, "egressSelectorType", path)?;
    if !egress.is_empty() && egress != "controlplane" && egress != "cluster" {
        errs.push(field_error(
            &format!("{path}.egressSelectorType"),
            "Invalid value",
            Some(&egress),
            "egress selector must be either controlplane or cluster",
        ));
    }
    Ok(())
}

/// `validateURL`: https, no user, query or fragment.
fn check_url(url: &str, path: &str, errs: &mut Vec<String>) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let invalid = |detail: &str| field_error(path, "Invalid value", Some(url), detail);
    if scheme != "https" {
        errs.push(invalid("URL scheme must be https"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        errs.push(invalid("URL must not contain a username or password"));
    }
    let no_fragment = url.split('#').next().unwrap_or_default();
    if no_fragment
        .split_once('?')
        .is_some_and(|(_, q)| !q.is_empty())
    {
        errs.push(invalid("URL must not contain a query"));
    }
    if url.split_once('#').is_some_and(|(_, f)| !f.is_empty()) {
        errs.push(invalid("URL must not contain a fragment"));
    }
}

/// `validateAudiences`.
fn check_audiences(
    issuer: &Map<String, Json>,
    audiences: &[String],
    path: &str,
    errs: &mut Vec<String>,
) -> Result<(), String> {
    let apath = format!("{path}.audiences");
    if audiences.is_empty() {
        errs.push(field_error(
            &apath,
            "Required value",
            None,
            &format!("at least one {apath} is required"),
        ));
        return Ok(());
    }
    for (i, a) in audiences.iter().enumerate() {
        let p = format!("{apath}[{i}]");
        if a.is_empty() {
            errs.push(field_error(&p, "Required value", None, ""));
        }
        if audiences[..i].contains(a) {
            errs.push(field_error(&p, "Duplicate value", Some(a), ""));
        }
    }
    let policy = string_field(issuer, "audienceMatchPolicy", path)?;
    let ppath = format!("{path}.audienceMatchPolicy");
    if audiences.len() > 1 && policy != "MatchAny" {
        errs.push(field_error(
            &ppath,
            "Invalid value",
            Some(&policy),
            "audienceMatchPolicy must be MatchAny for multiple audiences",
        ));
    }
    if audiences.len() == 1 && !policy.is_empty() && policy != "MatchAny" {
        errs.push(field_error(
            &ppath,
            "Invalid value",
            Some(&policy),
            "audienceMatchPolicy must be empty or MatchAny for single audience",
        ));
    }
    Ok(())
}

/// The checks of an `extra` key: a domain-prefixed path (`IsDomainPrefixedPath`), lower
/// case, not in Kubernetes' domains.
fn extra_key_errors(key: &str, path: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.is_empty() {
        errs.push(field_error(path, "Required value", None, ""));
    } else {
        match key.split_once('/') {
            Some((domain, rest)) if !rest.is_empty() => {
                if !is_dns1123_subdomain(domain) {
                    errs.push(field_error(
                        path,
                        "Invalid value",
                        Some(domain),
                        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    ));
                }
                if !rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:@".contains(&b))
                {
                    errs.push(field_error(
                        path,
                        "Invalid value",
                        Some(rest),
                        "Invalid path",
                    ));
                }
            }
            _ => errs.push(field_error(
                path,
                "Invalid value",
                Some(key),
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            )),
        }
    }
    if key != key.to_lowercase() {
        errs.push(field_error(
            path,
            "Invalid value",
            Some(key),
            "must be lowercase",
        ));
    }
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or_default();
    let reserved = |d: &str| domain == d || domain.ends_with(&format!(".{d}"));
    if reserved("kubernetes.io") || reserved("k8s.io") {
        errs.push(field_error(
            path,
            "Invalid value",
            Some(key),
            "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use",
        ));
    }
    errs
}

fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

/// A time as Go's `time.Time` prints itself in UTC (`2009-11-10 23:00:00 +0000 UTC`).
fn go_time(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} +0000 UTC",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_time_prints_as_go_does() {
        assert_eq!(go_time(1_257_890_400), "2009-11-10 22:00:00 +0000 UTC");
        assert_eq!(go_time(0), "1970-01-01 00:00:00 +0000 UTC");
    }

    #[test]
    fn reads_claim_finds_selects_only() {
        assert!(reads_claim("claims.email", "email"));
        assert!(reads_claim("claims.?email.orValue('')", "email"));
        assert!(!reads_claim("claims.email_verified", "email"));
        assert!(!reads_claim("xclaims.email", "email"));
        assert!(reads_claim("a && claims.email_verified", "email_verified"));
    }
}
