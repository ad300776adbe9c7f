//! `cel authn`: the user the API server's JWT authenticator (structured authentication,
//! AuthenticationConfiguration `jwt[]`) would authenticate from a token's claims, or its
//! error, in the API server's words (see `celerity_kubernetes::places::jwt`).

use std::process::ExitCode;

use celerity_kubernetes::places::jwt::{JwtAuthenticator, UserInfo, authenticators};
use clap::Args;
use serde_json::{Map, Value as Json, json};

use crate::eval::BackendArg;
use crate::output::Out;
use crate::{Output, bad_input};

/// `cel authn`.
#[derive(Args, Debug)]
pub(crate) struct AuthnArgs {
    /// The AuthenticationConfiguration (YAML or JSON) whose `jwt[]` authenticators are used.
    #[arg(long, value_name = "AUTHN.yaml")]
    config: Option<String>,
    /// The token's claims: its decoded payload, as JSON. Signatures are NOT checked: the
    /// answer is what the API server does with a token carrying these claims, signed by a
    /// key of the issuer.
    #[arg(long, value_name = "CLAIMS.json")]
    claims: Option<String>,
    /// The authenticator to use, by its `issuer.url` (default: the claims' `iss`, as the
    /// API server chooses).
    #[arg(long, value_name = "URL")]
    issuer: Option<String>,
    /// The time the token is presented, in seconds since the epoch (default: now); a token
    /// whose `exp` is before it is expired.
    #[arg(long, value_name = "SECONDS")]
    now: Option<i64>,
    /// The Kubernetes release whose API server authenticates, `kubernetes=1.35` (1.30 to
    /// 1.37; default: the newest released version).
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// How expressions run (all give the same results).
    #[arg(long, value_enum, default_value_t = BackendArg::Interpreter)]
    backend: BackendArg,
    /// One case per line of a file (`-` for stdin) instead:
    /// `{"jwt": {a jwt[] item}, "claims": {...}}`, printing `{"ok":true,"user":{...}}` or
    /// `{"ok":false,"error":...}`.
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
    /// Text (default) or one JSON object.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
}

/// `cel authn`.
pub(crate) fn run(args: &AuthnArgs) -> ExitCode {
    let version = match crate::places::version_of(args.profile.as_deref()) {
        Ok(v) => v,
        Err(e) => return bad_input(e),
    };
    let now = args.now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    });
    let backend = args.backend.backend();
    if let Some(path) = &args.batch {
        if args.config.is_some() || args.claims.is_some() {
            return bad_input("--batch lines carry their jwt and claims: no --config or --claims");
        }
        return crate::batch::run_lines_as(
            path,
            |e| json!({"ok": false, "error": e}),
            |r| r.get("ok") == Some(&Json::Bool(true)),
            |case| line(case, version, backend, now),
        );
    }
    let (Some(config), Some(claims)) = (&args.config, &args.claims) else {
        return bad_input("--config AUTHN.yaml and --claims CLAIMS.json are required (or --batch)");
    };
    let claims = match crate::input::read_text(claims)
        .map_err(|e| format!("reading {e}"))
        .and_then(|t| crate::input::parse_json(&t).map_err(|e| format!("{claims}: {e}")))
    {
        Ok(c) if c.is_object() => c,
        Ok(_) => return bad_input(format!("{claims}: the claims must be a JSON object")),
        Err(e) => return bad_input(e),
    };
    let authenticators = match read_config(config, version, backend) {
        Ok(a) => a,
        Err(e) => return bad_input(e),
    };
    let chosen = match &args.issuer {
        Some(url) => authenticators.iter().find(|a| a.issuer() == url),
        None => authenticators.iter().find(|a| a.accepts_issuer(&claims)),
    };
    let result = match chosen {
        Some(a) => a.authenticate(&claims, now),
        None => Err(match (&args.issuer, claims.get("iss")) {
            (Some(url), _) => format!("{config}: no jwt authenticator has issuer.url {url:?}"),
            (None, Some(Json::String(iss))) => {
                format!("{config}: no jwt authenticator has issuer.url {iss:?} (the claims' iss)")
            }
            (None, _) => "the claims have no iss (a string): give --issuer".to_string(),
        }),
    };
    print(result, args.output)
}

fn print(result: Result<UserInfo, String>, output: Output) -> ExitCode {
    let mut out = Out::new();
    let ok = result.is_ok();
    match (output, result) {
        (Output::Json, r) => out.line(result_json(r)),
        (Output::Text, Ok(user)) => {
            out.line(format!("username: {}", user.username));
            out.line(format!("uid: {}", user.uid));
            out.line(format!("groups: {}", json!(user.groups)));
            out.line(format!("extra: {}", json!(user.extra)));
        }
        (Output::Text, Err(e)) => eprintln!("{e}"),
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn result_json(r: Result<UserInfo, String>) -> Json {
    match r {
        Ok(user) => json!({"ok": true, "user": user.to_json()}),
        Err(e) => json!({"ok": false, "error": e}),
    }
}

/// The `jwt[]` authenticators of an AuthenticationConfiguration file, each checked; errors
/// carry the file and the path (`jwt[0].claimMappings.username: ...`).
fn read_config(
    path: &str,
    version: celerity::kubernetes::KubeVersion,
    backend: celerity::Backend,
) -> Result<Vec<JwtAuthenticator>, String> {
    let docs = crate::input::read_documents(&[path.to_string()])?;
    let [doc] = docs.as_slice() else {
        return Err(format!(
            "{path}: expected one AuthenticationConfiguration document, found {}",
            docs.len()
        ));
    };
    let config = doc.value.as_ref().map_err(|e| format!("{path}: {e}"))?;
    authenticators(config, version, backend).map_err(|e| format!("{}: {e}", doc.location()))
}

/// One batch line: `{"jwt": {...}, "claims": {...}}`.
fn line(
    case: &Map<String, Json>,
    version: celerity::kubernetes::KubeVersion,
    backend: celerity::Backend,
    now: i64,
) -> Json {
    let error = |e: String| json!({"ok": false, "error": e});
    if let Some(k) = case
        .keys()
        .find(|k| !matches!(k.as_str(), "jwt" | "claims"))
    {
        return error(format!("unknown field \"{k}\" (known: jwt, claims)"));
    }
    let (Some(jwt), Some(claims)) = (case.get("jwt"), case.get("claims")) else {
        return error("a line needs \"jwt\" and \"claims\"".into());
    };
    let authenticator = match JwtAuthenticator::new(jwt, "", version, backend) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    result_json(authenticator.authenticate(claims, now))
}
