//! The checks the API server makes of a `jwt[]` item of an AuthenticationConfiguration when
//! it loads the file, with their field paths and texts, compiling every expression on the
//! way: what `cel authn` needs to build an authenticator and `cel check-config` reports.
//!
//! Written after `k8s.io/apiserver` (v0.36.0) `pkg/apis/apiserver/validation/validation.go`:
//! `validateJWTAuthenticator` and the functions it calls (`validateIssuer`, `validateURL`,
//! `validateAudiences`, `validateEgressSelector`, `validateClaimValidationRules`,
//! `validateClaimMappings`, `validatePrefixClaimOrExpression`,
//! `validateUserValidationRules`, `convertCELErrorToValidationError`), in their order.
//!
//! Input that is not what the configuration's types allow (a list where a string goes) is
//! not a field error but unusable input: the API server's decoder refuses the file before
//! validation; those are the `Err(String)` results, with the path.

use cel_k8s::KubeVersion;
use cel_k8s_schema::field::{BadValue, ErrorType, FieldError};
use celerity::Backend;
use serde_json::{Map, Value as Json};

use super::{Place, PlaceEnv, PlaceProgram};

/// A field error with a string value (or none), its path as written.
pub(crate) fn error(path: &str, kind: ErrorType, value: Option<&str>, detail: &str) -> FieldError {
    FieldError {
        error_type: kind,
        field: if path.is_empty() {
            "<nil>".to_string()
        } else {
            path.to_string()
        },
        bad_value: value.map_or(BadValue::Omit, |v| BadValue::String(v.to_string())),
        detail: detail.to_string(),
    }
}

/// `field.Invalid` with a string value.
pub(crate) fn invalid(path: &str, value: &str, detail: &str) -> FieldError {
    error(path, ErrorType::Invalid, Some(value), detail)
}

/// `field.Required`.
pub(crate) fn required(path: &str, detail: &str) -> FieldError {
    error(path, ErrorType::Required, None, detail)
}

/// `field.Duplicate` with a string value.
pub(crate) fn duplicate(path: &str, value: &str) -> FieldError {
    error(path, ErrorType::Duplicate, Some(value), "")
}

/// Errors joined as `utilerrors.NewAggregate` prints them (repeated messages once).
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut unique: Vec<String> = Vec::new();
    for e in errors {
        let s = e.to_string();
        if !unique.contains(&s) {
            unique.push(s);
        }
    }
    if unique.len() == 1 {
        unique.pop().unwrap_or_default()
    } else {
        format!("[{}]", unique.join(", "))
    }
}

/// A string field of a JSON object, or an error with its path (`absent` gives "").
pub(crate) fn string_field(
    obj: &Map<String, Json>,
    key: &str,
    path: &str,
) -> Result<String, String> {
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

/// A path and a field name joined (`a.b`, or `b` under the empty path).
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// An object field, absent or `null` as `None`.
pub(crate) fn object<'a>(
    obj: &'a Map<String, Json>,
    key: &str,
    path: &str,
) -> Result<Option<&'a Map<String, Json>>, String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => super::expect_object(v, &join(path, key)).map(Some),
    }
}

/// A list field, absent or `null` as empty.
pub(crate) fn array<'a>(
    obj: &'a Map<String, Json>,
    key: &str,
    path: &str,
) -> Result<&'a [Json], String> {
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

/// A list of strings, or an error with the path of the item that is not one.
pub(crate) fn strings(
    obj: &Map<String, Json>,
    key: &str,
    path: &str,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (i, a) in array(obj, key, path)?.iter().enumerate() {
        match a {
            Json::String(s) => out.push(s.clone()),
            other => {
                return Err(format!(
                    "{}[{i}]: expected a string, got {}",
                    join(path, key),
                    super::json_kind(other)
                ));
            }
        }
    }
    Ok(out)
}

/// Whether an expression reads `claims.<field>` (or `claims.?<field>`), as
/// `hasSelectExp` looks for it: by the text's tokens, which is what a select of that field
/// on the identifier `claims` is.
pub(crate) fn reads_claim(expression: &str, field: &str) -> bool {
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

/// A compiled expression with its text (errors quote it) and a message (rules).
pub(crate) struct Compiled {
    pub(crate) expression: String,
    pub(crate) message: String,
    pub(crate) program: PlaceProgram,
}

/// A claim or an expression, with a prefix for claims (`PrefixedClaimOrExpression`).
pub(crate) enum Mapping {
    None,
    Claim { claim: String, prefix: String },
    Expression(Box<Compiled>),
}

/// A claim a rule requires, and the value it must have.
pub(crate) type RequiredClaim = (String, String);

/// A `jwt[]` item's parts, as far as they compiled.
pub(crate) struct Checked {
    pub(crate) issuer: String,
    pub(crate) audiences: Vec<String>,
    pub(crate) required_claims: Vec<(String, String)>,
    pub(crate) claim_rules: Vec<Compiled>,
    pub(crate) username: Mapping,
    pub(crate) groups: Mapping,
    pub(crate) uid: Mapping,
    pub(crate) extra: Vec<(String, Compiled)>,
    pub(crate) user_rules: Vec<Compiled>,
}

/// A part of a `jwt[]` item, validated alone (Kubernetes' tests call each function).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JwtPart {
    /// The whole item (`validateJWTAuthenticator`).
    Item,
    /// `issuer` (`validateIssuer`).
    Issuer,
    /// `claimValidationRules` (`validateClaimValidationRules`).
    ClaimValidationRules,
    /// `claimMappings` (`validateClaimMappings`).
    ClaimMappings,
    /// `userValidationRules` (`validateUserValidationRules`).
    UserValidationRules,
}

impl std::str::FromStr for JwtPart {
    type Err = String;
    fn from_str(s: &str) -> Result<JwtPart, String> {
        Ok(match s {
            "jwt" => JwtPart::Item,
            "issuer" => JwtPart::Issuer,
            "claimValidationRules" => JwtPart::ClaimValidationRules,
            "claimMappings" => JwtPart::ClaimMappings,
            "userValidationRules" => JwtPart::UserValidationRules,
            other => return Err(format!("unknown part of a jwt item: {other:?}")),
        })
    }
}

/// The field errors of a `jwt[]` item (paths under `path`: `jwt[0]`, or empty), or why the
/// item is unusable; `disallowed_issuers` are the URLs its issuer may not be (the API
/// server's service account issuers).
pub fn validate_jwt(
    jwt: &Json,
    path: &str,
    version: KubeVersion,
    disallowed_issuers: &[String],
) -> Result<Vec<FieldError>, String> {
    let claims_env = PlaceEnv::new(Place::AuthnClaims, version)?;
    let user_env = PlaceEnv::new(Place::AuthnUser, version)?;
    let mut v = Validator::new(&claims_env, &user_env, Backend::Interpreter);
    v.disallowed_issuers = disallowed_issuers;
    v.item(jwt, path)?;
    Ok(v.errs)
}

/// The field errors of one part of a `jwt[]` item at `path`, as Kubernetes' function for
/// that part gives them; `uses_email_verified` is what the claim validation rules before
/// the claim mappings said (`validationState.usesEmailVerifiedClaim`).
pub fn validate_part(
    part: JwtPart,
    json: &Json,
    path: &str,
    version: KubeVersion,
    uses_email_verified: bool,
) -> Result<Vec<FieldError>, String> {
    let claims_env = PlaceEnv::new(Place::AuthnClaims, version)?;
    let user_env = PlaceEnv::new(Place::AuthnUser, version)?;
    let mut v = Validator::new(&claims_env, &user_env, Backend::Interpreter);
    v.uses_email_verified = uses_email_verified;
    let what = if path.is_empty() { "jwt" } else { path };
    match part {
        JwtPart::Item => {
            v.item(json, path)?;
        }
        JwtPart::Issuer => {
            v.issuer(super::expect_object(json, what)?, path)?;
        }
        JwtPart::ClaimValidationRules => {
            let Json::Array(rules) = json else {
                return Err(format!("{what}: expected a list"));
            };
            v.claim_validation_rules(rules, path)?;
        }
        JwtPart::ClaimMappings => {
            v.claim_mappings(super::expect_object(json, what)?, path)?;
        }
        JwtPart::UserValidationRules => {
            let Json::Array(rules) = json else {
                return Err(format!("{what}: expected a list"));
            };
            v.user_validation_rules(rules, path)?;
        }
    }
    Ok(v.errs)
}

/// Checks and compiles a `jwt[]` item: its parts and its field errors.
pub(crate) fn check_jwt(
    jwt: &Json,
    path: &str,
    claims_env: &PlaceEnv,
    user_env: &PlaceEnv,
    backend: Backend,
) -> Result<(Checked, Vec<FieldError>), String> {
    let mut v = Validator::new(claims_env, user_env, backend);
    let checked = v.item(jwt, path)?;
    Ok((checked, v.errs))
}

/// The state of one item's validation (Kubernetes' `validationState` and error list).
struct Validator<'a> {
    claims_env: &'a PlaceEnv,
    user_env: &'a PlaceEnv,
    backend: Backend,
    version: KubeVersion,
    errs: Vec<FieldError>,
    uses_email_verified: bool,
    disallowed_issuers: &'a [String],
}

/// The claim mappings' parts.
struct Mappings {
    username: Mapping,
    groups: Mapping,
    uid: Mapping,
    extra: Vec<(String, Compiled)>,
}

impl<'a> Validator<'a> {
    fn new(claims_env: &'a PlaceEnv, user_env: &'a PlaceEnv, backend: Backend) -> Validator<'a> {
        Validator {
            claims_env,
            user_env,
            backend,
            version: claims_env.version(),
            errs: Vec::new(),
            uses_email_verified: false,
            disallowed_issuers: &[],
        }
    }

    fn item(&mut self, jwt: &Json, path: &str) -> Result<Checked, String> {
        let item = super::expect_object(jwt, if path.is_empty() { "jwt" } else { path })?;
        let issuer_obj = object(item, "issuer", path)?.cloned().unwrap_or_default();
        let (issuer, audiences) = self.issuer(&issuer_obj, &join(path, "issuer"))?;
        let rules = array(item, "claimValidationRules", path)?;
        let (required_claims, claim_rules) =
            self.claim_validation_rules(rules, &join(path, "claimValidationRules"))?;
        let mappings = object(item, "claimMappings", path)?
            .cloned()
            .unwrap_or_default();
        let m = self.claim_mappings(&mappings, &join(path, "claimMappings"))?;
        let rules = array(item, "userValidationRules", path)?;
        let user_rules = self.user_validation_rules(rules, &join(path, "userValidationRules"))?;
        Ok(Checked {
            issuer,
            audiences,
            required_claims,
            claim_rules,
            username: m.username,
            groups: m.groups,
            uid: m.uid,
            extra: m.extra,
            user_rules,
        })
    }

    /// Compiles an expression, its error a field error at `path` (`convertCELErrorToValidationError`).
    fn compile(&mut self, user: bool, rule: bool, expr: &str, path: &str) -> Option<PlaceProgram> {
        let env = if user { self.user_env } else { self.claims_env };
        let r = if rule {
            env.compile_rule(expr, self.backend)
        } else {
            env.compile(expr, self.backend)
        };
        match r {
            Ok(p) => Some(p),
            Err(detail) => {
                // A program that does not instantiate is the compiler's internal error.
                self.errs
                    .push(if detail.starts_with("program instantiation failed") {
                        error(path, ErrorType::Internal, None, &detail)
                    } else {
                        invalid(path, expr, &detail)
                    });
                None
            }
        }
    }

    /// `validateIssuer`: the URL, the discovery URL, the audiences, the certificate
    /// authority (not parsed here), the egress selector.
    fn issuer(
        &mut self,
        issuer: &Map<String, Json>,
        path: &str,
    ) -> Result<(String, Vec<String>), String> {
        let url = string_field(issuer, "url", path)?;
        let upath = join(path, "url");
        if url.is_empty() {
            self.errs.push(required(&upath, ""));
        } else {
            if self.disallowed_issuers.contains(&url) {
                let mut list = self.disallowed_issuers.to_vec();
                list.sort();
                list.dedup();
                self.errs.push(invalid(
                    &upath,
                    &url,
                    &format!(
                        "URL must not overlap with disallowed issuers: [{}]",
                        list.join(" ")
                    ),
                ));
            }
            check_url(&url, &upath, &mut self.errs);
        }
        let discovery = string_field(issuer, "discoveryURL", path)?;
        if !discovery.is_empty() {
            let dpath = join(path, "discoveryURL");
            if !url.is_empty() && url.trim_end_matches('/') == discovery.trim_end_matches('/') {
                self.errs.push(invalid(
                    &dpath,
                    &discovery,
                    "discoveryURL must be different from URL",
                ));
            }
            check_url(&discovery, &dpath, &mut self.errs);
        }
        let audiences = strings(issuer, "audiences", path)?;
        let policy = string_field(issuer, "audienceMatchPolicy", path)?;
        check_audiences(&audiences, &policy, path, &mut self.errs);
        string_field(issuer, "certificateAuthority", path)?;
        let egress = string_field(issuer, "egressSelectorType", path)?;
        if !egress.is_empty() {
            let epath = join(path, "egressSelectorType");
            // `StructuredAuthenticationConfigurationEgressSelector` came in 1.34, on.
            if self.version < KubeVersion::new(1, 34) {
                self.errs.push(invalid(
                    &epath,
                    &egress,
                    "egress selector is not supported when StructuredAuthenticationConfigurationEgressSelector feature gate is disabled",
                ));
            }
            if egress != "controlplane" && egress != "cluster" {
                self.errs.push(invalid(
                    &epath,
                    &egress,
                    "egress selector must be either controlplane or cluster",
                ));
            }
        }
        Ok((url, audiences))
    }

    /// `validateClaimValidationRules`: the required claims and the compiled rules.
    fn claim_validation_rules(
        &mut self,
        rules: &[Json],
        path: &str,
    ) -> Result<(Vec<RequiredClaim>, Vec<Compiled>), String> {
        let mut required_claims = Vec::new();
        let mut compiled = Vec::new();
        let mut seen_claims: Vec<String> = Vec::new();
        let mut seen_exprs: Vec<String> = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let p = format!("{path}[{i}]");
            let rule = super::expect_object(rule, &p)?;
            let claim = string_field(rule, "claim", &p)?;
            let required_value = string_field(rule, "requiredValue", &p)?;
            let expr = string_field(rule, "expression", &p)?;
            let message = string_field(rule, "message", &p)?;
            match (claim.is_empty(), expr.is_empty()) {
                (false, false) => self.errs.push(invalid(
                    &p,
                    &claim,
                    "claim and expression can't both be set",
                )),
                (true, true) => self
                    .errs
                    .push(required(&p, "claim or expression is required")),
                (false, true) => {
                    if !message.is_empty() {
                        self.errs.push(invalid(
                            &join(&p, "message"),
                            &message,
                            "may not be specified when claim is set",
                        ));
                    }
                    if seen_claims.contains(&claim) {
                        self.errs.push(duplicate(&join(&p, "claim"), &claim));
                    }
                    seen_claims.push(claim.clone());
                    required_claims.push((claim, required_value));
                }
                (true, false) => {
                    if !required_value.is_empty() {
                        self.errs.push(invalid(
                            &join(&p, "requiredValue"),
                            &required_value,
                            "may not be specified when expression is set",
                        ));
                    }
                    let epath = join(&p, "expression");
                    if seen_exprs.contains(&expr) {
                        self.errs.push(duplicate(&epath, &expr));
                        continue;
                    }
                    seen_exprs.push(expr.clone());
                    if let Some(program) = self.compile(false, true, &expr, &epath) {
                        compiled.push(Compiled {
                            expression: expr,
                            message,
                            program,
                        });
                    }
                }
            }
        }
        self.uses_email_verified |= compiled
            .iter()
            .any(|c| reads_claim(&c.expression, "email_verified"));
        Ok((required_claims, compiled))
    }

    /// `validatePrefixClaimOrExpression` (username, groups).
    fn prefixed(
        &mut self,
        mappings: &Map<String, Json>,
        key: &str,
        path: &str,
        required_mapping: bool,
    ) -> Result<Mapping, String> {
        let p = join(path, key);
        let m = object(mappings, key, path)?.cloned().unwrap_or_default();
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
        Ok(match (claim.is_empty(), expr.is_empty()) {
            (false, false) => {
                self.errs
                    .push(invalid(&p, "", "claim and expression can't both be set"));
                Mapping::None
            }
            (true, true) => {
                if required_mapping {
                    self.errs
                        .push(required(&p, "claim or expression is required"));
                }
                Mapping::None
            }
            (true, false) => {
                if let Some(prefix) = &prefix {
                    self.errs.push(invalid(
                        &join(&p, "prefix"),
                        prefix,
                        "may not be specified when expression is set",
                    ));
                }
                match self.compile(false, false, &expr, &join(&p, "expression")) {
                    Some(program) => Mapping::Expression(Box::new(Compiled {
                        expression: expr,
                        message: String::new(),
                        program,
                    })),
                    None => Mapping::None,
                }
            }
            (false, true) => match prefix {
                None => {
                    self.errs.push(required(
                        &join(&p, "prefix"),
                        "prefix is required when claim is set. It can be set to an empty string to disable prefixing",
                    ));
                    Mapping::None
                }
                Some(prefix) => Mapping::Claim { claim, prefix },
            },
        })
    }

    /// `validateClaimMappings`.
    fn claim_mappings(
        &mut self,
        mappings: &Map<String, Json>,
        path: &str,
    ) -> Result<Mappings, String> {
        let username = self.prefixed(mappings, "username", path, true)?;
        let groups = self.prefixed(mappings, "groups", path, false)?;
        let upath = join(path, "uid");
        let uid_obj = object(mappings, "uid", path)?.cloned().unwrap_or_default();
        let uid_claim = string_field(&uid_obj, "claim", &upath)?;
        let uid_expr = string_field(&uid_obj, "expression", &upath)?;
        let uid = match (uid_claim.is_empty(), uid_expr.is_empty()) {
            (false, false) => {
                self.errs.push(invalid(
                    &upath,
                    "",
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
                match self.compile(false, false, &uid_expr, &join(&upath, "expression")) {
                    Some(program) => Mapping::Expression(Box::new(Compiled {
                        expression: uid_expr,
                        message: String::new(),
                        program,
                    })),
                    None => Mapping::None,
                }
            }
        };
        let extra = self.extra(mappings, path)?;
        if let Mapping::Expression(c) = &username {
            let verified = self.uses_email_verified
                || reads_claim(&c.expression, "email_verified")
                || extra
                    .iter()
                    .any(|(_, e)| reads_claim(&e.expression, "email_verified"));
            if reads_claim(&c.expression, "email") && !verified {
                self.errs.push(invalid(
                    &join(path, "username.expression"),
                    &c.expression,
                    "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression",
                ));
            }
        }
        Ok(Mappings {
            username,
            groups,
            uid,
            extra,
        })
    }

    /// The `extra` mappings of `validateClaimMappings`.
    fn extra(
        &mut self,
        mappings: &Map<String, Json>,
        path: &str,
    ) -> Result<Vec<(String, Compiled)>, String> {
        let mut extra = Vec::new();
        let mut seen_keys: Vec<String> = Vec::new();
        let epath = join(path, "extra");
        for (i, m) in array(mappings, "extra", path)?.iter().enumerate() {
            let p = format!("{epath}[{i}]");
            let m = super::expect_object(m, &p)?;
            let key = string_field(m, "key", &p)?;
            let expr = string_field(m, "valueExpression", &p)?;
            let kpath = join(&p, "key");
            self.errs.extend(extra_key_errors(&key, &kpath));
            if seen_keys.contains(&key) {
                self.errs.push(duplicate(&kpath, &key));
                continue;
            }
            seen_keys.push(key.clone());
            if expr.is_empty() {
                self.errs.push(required(&join(&p, "valueExpression"), ""));
                continue;
            }
            if let Some(program) = self.compile(false, false, &expr, &join(&p, "valueExpression")) {
                extra.push((
                    key,
                    Compiled {
                        expression: expr,
                        message: String::new(),
                        program,
                    },
                ));
            }
        }
        Ok(extra)
    }

    /// `validateUserValidationRules`.
    fn user_validation_rules(
        &mut self,
        rules: &[Json],
        path: &str,
    ) -> Result<Vec<Compiled>, String> {
        let mut compiled = Vec::new();
        let mut seen_exprs: Vec<String> = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let p = format!("{path}[{i}]");
            let rule = super::expect_object(rule, &p)?;
            let expr = string_field(rule, "expression", &p)?;
            let message = string_field(rule, "message", &p)?;
            let epath = join(&p, "expression");
            if expr.is_empty() {
                self.errs.push(required(&epath, ""));
                continue;
            }
            if seen_exprs.contains(&expr) {
                self.errs.push(duplicate(&epath, &expr));
                continue;
            }
            seen_exprs.push(expr.clone());
            if let Some(program) = self.compile(true, true, &expr, &epath) {
                compiled.push(Compiled {
                    expression: expr,
                    message,
                    program,
                });
            }
        }
        Ok(compiled)
    }
}

/// `validateURL` without the disallowed issuers: https, no user, query or fragment; a port
/// that is not a number is `url.Parse`'s error.
pub(crate) fn check_url(url: &str, path: &str, errs: &mut Vec<FieldError>) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if !scheme.is_empty()
        && !host.ends_with(']')
        && let Some((_, port)) = host.rsplit_once(':')
        && !port.bytes().all(|b| b.is_ascii_digit())
    {
        errs.push(invalid(
            path,
            url,
            &format!(
                "parse {}: invalid port {} after host",
                super::jwt::go_quote(url),
                super::jwt::go_quote(&format!(":{port}"))
            ),
        ));
        return;
    }
    if scheme != "https" {
        errs.push(invalid(path, url, "URL scheme must be https"));
    }
    if authority.contains('@') {
        errs.push(invalid(
            path,
            url,
            "URL must not contain a username or password",
        ));
    }
    let no_fragment = url.split('#').next().unwrap_or_default();
    if no_fragment
        .split_once('?')
        .is_some_and(|(_, q)| !q.is_empty())
    {
        errs.push(invalid(path, url, "URL must not contain a query"));
    }
    if url.split_once('#').is_some_and(|(_, f)| !f.is_empty()) {
        errs.push(invalid(path, url, "URL must not contain a fragment"));
    }
}

/// `validateAudiences`, under the issuer's path.
fn check_audiences(audiences: &[String], policy: &str, path: &str, errs: &mut Vec<FieldError>) {
    let apath = join(path, "audiences");
    if audiences.is_empty() {
        errs.push(required(
            &apath,
            &format!("at least one {apath} is required"),
        ));
        return;
    }
    for (i, a) in audiences.iter().enumerate() {
        let p = format!("{apath}[{i}]");
        if a.is_empty() {
            errs.push(required(&p, ""));
        }
        if audiences[..i].contains(a) {
            errs.push(duplicate(&p, a));
        }
    }
    let ppath = join(path, "audienceMatchPolicy");
    if audiences.len() > 1 && policy != "MatchAny" {
        errs.push(invalid(
            &ppath,
            policy,
            "audienceMatchPolicy must be MatchAny for multiple audiences",
        ));
    }
    if audiences.len() == 1 && !policy.is_empty() && policy != "MatchAny" {
        errs.push(invalid(
            &ppath,
            policy,
            "audienceMatchPolicy must be empty or MatchAny for single audience",
        ));
    }
}

/// The checks of an `extra` key: a domain-prefixed path (apimachinery's
/// `IsDomainPrefixedPath`, `pkg/util/validation/validation.go`), lower case, not in
/// Kubernetes' domains.
fn extra_key_errors(key: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match key.split_once('/') {
        _ if key.is_empty() => errs.push(required(path, "")),
        Some((domain, rest)) if !domain.is_empty() && !rest.is_empty() => {
            for e in cel_k8s_schema::names::is_dns1123_subdomain(domain) {
                errs.push(invalid(path, domain, &e));
            }
            let http_path = |b: u8| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&b);
            if !rest.bytes().all(http_path) {
                errs.push(invalid(
                    path,
                    rest,
                    "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
                ));
            }
        }
        _ => errs.push(invalid(
            path,
            key,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )),
    }
    if key != key.to_lowercase() {
        errs.push(invalid(path, key, "must be lowercase"));
    }
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or_default();
    let reserved = |d: &str| domain == d || domain.ends_with(&format!(".{d}"));
    if reserved("kubernetes.io") || reserved("k8s.io") {
        errs.push(invalid(
            path,
            key,
            "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_claim_finds_selects_only() {
        assert!(reads_claim("claims.email", "email"));
        assert!(reads_claim("claims.?email.orValue('')", "email"));
        assert!(!reads_claim("claims.email_verified", "email"));
        assert!(!reads_claim("xclaims.email", "email"));
        assert!(reads_claim("a && claims.email_verified", "email_verified"));
    }

    #[test]
    fn urls_as_validate_url_sees_them() {
        let mut errs = Vec::new();
        check_url("https://issuer-url:invalid-port", "u", &mut errs);
        assert_eq!(
            aggregate(&errs),
            r#"u: Invalid value: "https://issuer-url:invalid-port": parse "https://issuer-url:invalid-port": invalid port ":invalid-port" after host"#
        );
        let mut errs = Vec::new();
        check_url("https://issuer:443/x", "u", &mut errs);
        assert!(errs.is_empty());
    }
}
