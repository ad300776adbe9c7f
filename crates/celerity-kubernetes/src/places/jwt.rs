//! The JWT authenticator of structured authentication (AuthenticationConfiguration
//! `jwt[]`), from a token's decoded claims: the user the API server would authenticate, or
//! its error, in its words. Signatures are not checked (there is no token, only claims);
//! the issuer, the audiences and the expiry are.
//!
//! Written after `k8s.io/apiserver` (v0.36.0): `plugin/pkg/authenticator/token/oidc/oidc.go`
//! (`AuthenticateToken`, `getUsername`, `getGroups`, `getUID`, `getExtra`,
//! `convertCELValueToStringList`, `checkValidationRulesEvaluation`),
//! `pkg/authentication/cel/mapper.go` (every expression of a list evaluated before any
//! result is looked at). The configuration's checks (`validateJWTAuthenticator`) are
//! [`super::jwt_validation`]'s.
//! Verification follows go-oidc's `IDTokenVerifier.Verify` (issuer, audience, expiry).

use std::collections::BTreeMap;

use cel_k8s::KubeVersion;
use celerity::{Backend, MapActivation, Value};
use serde_json::{Map, Value as Json};

use super::config_check::{ConfigKind, ConfigOptions, check_config};
use super::jwt_validation::{Compiled, Mapping, aggregate, check_jwt};
use super::{Place, PlaceEnv};

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

/// A string as Go's `%q` writes it (the common cases: quotes, backslashes, controls).
pub(crate) fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

impl JwtAuthenticator {
    /// Checks and compiles a `jwt[]` item as the API server does when it loads the
    /// configuration (see [`super::jwt_validation`]); the error is the aggregate of the
    /// field errors, with paths relative to `path` (empty for the item itself, as
    /// `oidc.New` reports them).
    pub fn new(
        jwt: &Json,
        path: &str,
        version: KubeVersion,
        backend: Backend,
    ) -> Result<JwtAuthenticator, String> {
        let claims_env = PlaceEnv::new(Place::AuthnClaims, version)?;
        let user_env = PlaceEnv::new(Place::AuthnUser, version)?;
        let (c, errs) = check_jwt(jwt, path, &claims_env, &user_env, backend)?;
        if !errs.is_empty() {
            return Err(aggregate(&errs));
        }
        Ok(JwtAuthenticator {
            version,
            issuer: c.issuer,
            audiences: c.audiences,
            required_claims: c.required_claims,
            claim_rules: c.claim_rules,
            username: c.username,
            groups: c.groups,
            uid: c.uid,
            extra: c.extra,
            user_rules: c.user_rules,
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

/// The `jwt[]` authenticators of an AuthenticationConfiguration document, as the API server
/// of release `version` loads them: the whole document's checks first (those of
/// [`check_config`]), then each item compiled. The error is the aggregate of the field
/// errors, with their paths (`jwt[0].claimMappings.username.expression: ...`).
pub fn authenticators(
    config: &Json,
    version: KubeVersion,
    backend: Backend,
) -> Result<Vec<JwtAuthenticator>, String> {
    let report = check_config(config, version, &ConfigOptions::default())?;
    if report.kind != ConfigKind::Authentication {
        return Err(format!(
            "kind {:?} is not AuthenticationConfiguration",
            report.kind.name()
        ));
    }
    if !report.errors.is_empty() {
        return Err(aggregate(&report.errors));
    }
    let jwt = config
        .get("jwt")
        .and_then(Json::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, item) in jwt.iter().enumerate() {
        match JwtAuthenticator::new(item, &format!("jwt[{i}]"), version, backend) {
            Ok(a) => out.push(a),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_time_prints_as_go_does() {
        assert_eq!(go_time(1_257_890_400), "2009-11-10 22:00:00 +0000 UTC");
        assert_eq!(go_time(0), "1970-01-01 00:00:00 +0000 UTC");
    }
}
