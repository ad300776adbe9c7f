//! The authentication mode: an AuthenticationConfiguration and a token's claims (its
//! decoded payload) in; the user the API server's JWT authenticator gives (username, uid,
//! groups, extra) or its error, in its words. What `cel authn --output json` prints for the
//! same files (`celerity_kubernetes::places::jwt`); signatures are not checked, the issuer,
//! the audiences and the expiry are.
//!
//! Request: `{"mode": "authn", "config": "YAML", "claims": "JSON or YAML", "issuer": "URL",
//! "now": SECONDS, "version": "1.36"}` (`issuer`: the authenticator to use, by its
//! `issuer.url`; default: the claims' `iss`, as the API server chooses; `now`: when the
//! token is presented, which the page fills with its clock).

use celerity::Backend;
use celerity::kubernetes::{NEWEST_VERSION, parse_version};
use celerity_kubernetes::places::jwt::{JwtAuthenticator, authenticators};
use serde_json::{Map, Value as Json, json};

/// Runs one request of the mode.
pub fn run(request: &Map<String, Json>) -> Result<Json, String> {
    // `cel authn`'s default, as for `cel eval --env`: the newest version.
    let version = match crate::string(request, "version") {
        Some(v) => parse_version(v.trim())?,
        None => NEWEST_VERSION,
    };
    let now = request
        .get("now")
        .and_then(Json::as_i64)
        .ok_or("now: expected the time in seconds since 1970")?;
    let config = crate::one_document(request, "config")?.ok_or("config: required")?;
    let claims = crate::one_document(request, "claims")?.ok_or("claims: required")?;
    let authenticators = match authenticators(&config, version, Backend::Auto) {
        Ok(a) => a,
        Err(e) => return Ok(json!({"ok": false, "phase": "config", "error": e})),
    };
    let issuer = crate::string(request, "issuer").map(str::trim);
    let chosen = match choose(&authenticators, &claims, issuer) {
        Ok(a) => a,
        Err(e) => return Ok(json!({"ok": false, "phase": "issuer", "error": e})),
    };
    Ok(match chosen.authenticate(&claims, now) {
        Ok(user) => json!({"ok": true, "issuer": chosen.issuer(), "user": user.to_json()}),
        Err(e) => json!({"ok": false, "phase": "authn", "issuer": chosen.issuer(), "error": e}),
    })
}

/// The authenticator a token goes to: the one named by `issuer`, else the one whose URL is
/// the claims' `iss` (as `cel authn` chooses).
fn choose<'a>(
    authenticators: &'a [JwtAuthenticator],
    claims: &Json,
    issuer: Option<&str>,
) -> Result<&'a JwtAuthenticator, String> {
    let chosen = match issuer {
        Some(url) => authenticators.iter().find(|a| a.issuer() == url),
        None => authenticators.iter().find(|a| a.accepts_issuer(claims)),
    };
    chosen.ok_or_else(|| match (issuer, claims.get("iss")) {
        (Some(url), _) => format!("no jwt authenticator has issuer.url {url:?}"),
        (None, Some(Json::String(iss))) => {
            format!("no jwt authenticator has issuer.url {iss:?} (the claims' iss)")
        }
        (None, _) => "the claims have no iss (a string): give the issuer".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/../examples/authn/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn run_with(config: &str, claims: &str) -> Json {
        crate::handle(
            &json!({"mode": "authn", "config": config, "claims": claims, "now": 1_767_225_600})
                .to_string(),
        )
    }

    #[test]
    fn the_example_claims_give_a_user_or_the_api_servers_error() {
        let r = run_with(&example("config.yaml"), &example("claims.json"));
        assert_eq!(r["ok"], json!(true), "{r}");
        assert_eq!(r["user"]["username"], json!("oidc:jane@example.com"));
        assert_eq!(
            r["user"]["groups"],
            json!(["role:developer", "role:oncall"])
        );
        let r = run_with(&example("config.yaml"), &example("unverified.json"));
        assert_eq!(
            r["error"],
            json!("oidc: empty username via CEL expression is not allowed"),
            "{r}"
        );
    }

    #[test]
    fn a_bad_configuration_or_issuer_is_an_error() {
        let r = run_with(&example("invalid-config.yaml"), &example("claims.json"));
        // The file holds three documents: one is expected.
        assert_eq!(r["phase"], json!("input"), "{r}");
        let first = example("invalid-config.yaml");
        let first = first.split("\n---").next().unwrap();
        let r = run_with(first, &example("claims.json"));
        assert_eq!(r["phase"], json!("config"), "{r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("jwt[0].claimMappings.groups.expression"),
            "{r}"
        );
        let r = run_with(&example("config.yaml"), "{\"iss\": \"https://other\"}");
        assert_eq!(r["phase"], json!("issuer"), "{r}");
        let r = crate::handle(
            &json!({"mode": "authn", "config": example("config.yaml"), "claims": "{}"}).to_string(),
        );
        assert_eq!(r["phase"], json!("input"), "{r}");
    }
}
