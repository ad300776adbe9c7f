//! `cel playground`: serves the playground (the page, its examples and its WebAssembly
//! module, all embedded in this binary by `build.rs`) on 127.0.0.1, for a browser on this
//! machine. Everything is evaluated in the browser; this server only hands out files.
//!
//! ```text
//! cel playground              # Celerity playground: http://127.0.0.1:PORT/
//! cel playground --port 8080
//! ```
//!
//! The same files can be served by any static web server: `playground/build.sh DIR` writes
//! them out.

use std::process::ExitCode;

use crate::bad_input;

include!(concat!(env!("OUT_DIR"), "/playground_assets.rs"));

#[derive(clap::Args, Debug)]
pub(crate) struct PlaygroundArgs {
    /// The port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

/// What every answer carries: the page loads nothing from other origins, runs no inline
/// script, and may not be framed.
const SECURITY_HEADERS: &[(&str, &str)] = &[
    (
        "Content-Security-Policy",
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
];

/// Runs `cel playground`.
pub(crate) fn run(args: &PlaygroundArgs) -> ExitCode {
    if !HAS_MODULE {
        eprintln!(
            "warning: this cel was built without the playground's WebAssembly module: run \
             playground/build.sh (it needs the wasm32-unknown-unknown target and wasm-bindgen-cli), \
             then build cel again"
        );
    }
    let server = match tiny_http::Server::http(("127.0.0.1", args.port)) {
        Ok(s) => s,
        Err(e) => return bad_input(format!("cannot listen on 127.0.0.1:{}: {e}", args.port)),
    };
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .unwrap_or(args.port);
    crate::output::line(format!("Celerity playground: http://127.0.0.1:{port}/"));
    for request in server.incoming_requests() {
        let response = answer(request.method(), request.url());
        // A browser that went away is no concern of ours.
        let _ = request.respond(response);
    }
    ExitCode::SUCCESS
}

/// The answer to one request: an embedded file, or 404 / 405.
fn answer(method: &tiny_http::Method, url: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    use tiny_http::{Method, Response};
    let with_headers = |mut r: Response<std::io::Cursor<Vec<u8>>>, content_type: &str| {
        for (k, v) in SECURITY_HEADERS
            .iter()
            .chain(&[("Content-Type", content_type)])
        {
            if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
                r.add_header(h);
            }
        }
        r
    };
    if !matches!(method, Method::Get | Method::Head) {
        return with_headers(
            Response::from_string("only GET and HEAD").with_status_code(405),
            "text/plain; charset=utf-8",
        );
    }
    let path = url.split(['?', '#']).next().unwrap_or("/");
    let path = path.trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    match ASSETS.iter().find(|(p, _)| *p == path) {
        Some((p, body)) => with_headers(Response::from_data(body.to_vec()), content_type(p)),
        None if path.starts_with("pkg/") => with_headers(
            Response::from_string(
                "the WebAssembly module is not built into this cel: run playground/build.sh, then build cel again",
            )
            .with_status_code(404),
            "text/plain; charset=utf-8",
        ),
        None => with_headers(
            Response::from_string("not found").with_status_code(404),
            "text/plain; charset=utf-8",
        ),
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("yaml" | "yml") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_examples_are_embedded() {
        for path in [
            "index.html",
            "app.js",
            "worker.js",
            "examples/playground.json",
            "examples/crd/webapps.yaml",
        ] {
            assert!(
                ASSETS.iter().any(|(p, _)| *p == path),
                "{path} is not embedded"
            );
        }
    }

    #[test]
    fn only_embedded_files_are_served() {
        let get = |url: &str| answer(&tiny_http::Method::Get, url).status_code().0;
        assert_eq!(get("/"), 200);
        assert_eq!(get("/index.html?x=1"), 200);
        assert_eq!(get("/../Cargo.toml"), 404);
        assert_eq!(get("/examples/../../Cargo.toml"), 404);
        assert_eq!(answer(&tiny_http::Method::Post, "/").status_code().0, 405);
    }
}
