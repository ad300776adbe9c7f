//! Celerity's playground: the engine and the Kubernetes jobs as a WebAssembly module for a
//! static web page (`playground/www`), which needs no server to evaluate anything.
//!
//! The page talks to the module through two functions that take and give JSON text:
//! [`info`] (the modes and the Kubernetes versions) and [`run`] (one request of a mode,
//! `{"mode": "expression", ...}`, and its result). Each mode is a [`Mode`] in [`MODES`]:
//! adding one is adding a module with a `run` function and an entry there, and a form and
//! a renderer in the page's `modes.js`. The places' environments (device selectors,
//! authentication, webhooks' match conditions) are environments of the expression mode;
//! device allocation and JWT authentication have modes of their own. The modes give what the `cel` command gives for the same inputs, through the
//! same library calls (the browser tests compare them with the native CLI).
//!
//! Built without the facade's `jit` feature: nothing of Cranelift, every program
//! interpreted, with the native build's values, errors and costs. Time is bounded by the
//! page, which runs the module in a Web Worker and ends it after the CLI's time limit;
//! sizes by [`MAX_INPUT_BYTES`] and the engine's own limits.
//!
//! Depends on the facade and the Kubernetes jobs only (and `cel-cli`'s document reader,
//! included by path, so that YAML becomes JSON as the command makes it).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use serde_json::{Map, Value as Json, json};
use wasm_bindgen::prelude::wasm_bindgen;

pub mod admission;
pub mod authn;
pub mod crd;
pub mod dra;
pub mod expression;

/// `cel`'s document reader: YAML and JSON as `kubectl` makes them, with its bounds on size,
/// nesting and aliases.
#[path = "../../tools/cel-cli/src/input.rs"]
#[allow(
    dead_code,
    reason = "the files and batch lines of the command are not read here"
)]
mod input;

/// The largest text one field of a request may hold: the API server takes requests up to
/// 3 MiB, and a larger paste is refused before it is parsed.
pub const MAX_INPUT_BYTES: usize = 3 * 1024 * 1024;

/// One mode of the page.
pub struct Mode {
    /// The name requests give (`"mode": "crd"`).
    pub name: &'static str,
    /// What the page calls it.
    pub title: &'static str,
    /// Runs one request (the request's members) into its result.
    pub run: fn(&Map<String, Json>) -> Result<Json, String>,
}

/// The modes, in the page's order.
pub const MODES: &[Mode] = &[
    Mode {
        name: "expression",
        title: "Expression",
        run: expression::run,
    },
    Mode {
        name: "crd",
        title: "CRD",
        run: crd::run,
    },
    Mode {
        name: "admission",
        title: "Admission",
        run: admission::run,
    },
    Mode {
        name: "dra",
        title: "Devices",
        run: dra::run,
    },
    Mode {
        name: "authn",
        title: "Authentication",
        run: authn::run,
    },
];

/// The modes and the Kubernetes versions the module knows, as JSON:
/// `{"modes": [{"name", "title"}], "versions": ["1.30", ...], "newest": "1.37",
/// "default": "1.36", "max_input_bytes": N, "places": [{"name", "title", "since"}]}`
/// (releases of the API server, as `--profile kubernetes=V` names them; `default` is the
/// newest released one, the command's default; `places`, the environments of the other
/// places the API server evaluates CEL, which the expression mode offers).
#[wasm_bindgen]
pub fn info() -> String {
    use celerity::kubernetes::{DEFAULT_VERSION, NEWEST_VERSION, OLDEST_VERSION};
    use celerity_kubernetes::places::Place;
    let places: Vec<Json> = Place::ALL
        .iter()
        .map(|&p| {
            json!({"name": p.name(), "title": expression::place_title(p), "since": p.since().to_string()})
        })
        .collect();
    let versions: Vec<String> = (OLDEST_VERSION.minor..=NEWEST_VERSION.minor)
        .map(|m| format!("{}.{m}", NEWEST_VERSION.major))
        .collect();
    json!({
        "modes": MODES.iter().map(|m| json!({"name": m.name, "title": m.title})).collect::<Vec<_>>(),
        "versions": versions,
        "newest": NEWEST_VERSION.to_string(),
        "default": DEFAULT_VERSION.to_string(),
        "max_input_bytes": MAX_INPUT_BYTES,
        "places": places,
    })
    .to_string()
}

/// Runs one request, `{"mode": NAME, ...}` as JSON text, and gives its result as JSON
/// text: the mode's result, or `{"ok": false, "phase": "input", "error": "..."}` for a
/// request that cannot be run (malformed JSON, an unknown mode, bad input to the mode).
#[wasm_bindgen]
pub fn run(request: &str) -> String {
    handle(request).to_string()
}

/// [`run`], as JSON values.
pub fn handle(request: &str) -> Json {
    let outcome = serde_json::from_str::<Json>(request)
        .map_err(|e| format!("the request is not JSON: {e}"))
        .and_then(|r| match r {
            Json::Object(m) => Ok(m),
            _ => Err("the request is not a JSON object".to_string()),
        })
        .and_then(|r| {
            let name = r.get("mode").and_then(Json::as_str).unwrap_or_default();
            let mode = MODES
                .iter()
                .find(|m| m.name == name)
                .ok_or_else(|| format!("unknown mode {name:?}"))?;
            (mode.run)(&r)
        });
    outcome.unwrap_or_else(|error| input_error(&error))
}

/// The result of a request that could not be run.
pub fn input_error(error: &str) -> Json {
    json!({"ok": false, "phase": "input", "error": error})
}

/// A text member of a request (absent or `null`: empty), refused past [`MAX_INPUT_BYTES`].
pub fn text<'r>(request: &'r Map<String, Json>, key: &str) -> Result<&'r str, String> {
    let t = match request.get(key) {
        None | Some(Json::Null) => "",
        Some(Json::String(s)) => s,
        Some(_) => return Err(format!("{key}: expected text")),
    };
    if t.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "{key}: {} bytes, larger than the {} MiB the API server accepts",
            t.len(),
            MAX_INPUT_BYTES / (1024 * 1024)
        ));
    }
    Ok(t)
}

/// The documents of a YAML or JSON text (multi-document YAML, JSON, JSON lines), each an
/// object, the items of a `kind: List` expanded; errors name the field and the document.
pub fn documents(request: &Map<String, Json>, key: &str) -> Result<Vec<Json>, String> {
    let mut out = Vec::new();
    for (i, doc) in input::parse_documents(text(request, key)?)
        .into_iter()
        .enumerate()
    {
        let at = if i == 0 {
            key.to_string()
        } else {
            format!("{key}#{i}")
        };
        match doc {
            Ok(Json::Object(m)) if is_list(&m) => out.extend(
                m.get("items")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .cloned(),
            ),
            Ok(o @ Json::Object(_)) => out.push(o),
            Ok(_) => return Err(format!("{at}: expected an object")),
            Err(e) => return Err(format!("{at}: {e}")),
        }
    }
    Ok(out)
}

fn is_list(m: &Map<String, Json>) -> bool {
    m.get("kind")
        .and_then(Json::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && m.get("items").is_some_and(Json::is_array)
}

/// At most one object from a text: `None` when it is empty.
pub fn one_document(request: &Map<String, Json>, key: &str) -> Result<Option<Json>, String> {
    let mut docs = documents(request, key)?;
    match docs.len() {
        0 => Ok(None),
        1 => Ok(docs.pop()),
        n => Err(format!("{key}: expected one document, found {n}")),
    }
}

/// At most one object from a text, with the keys its YAML repeats (which strict field
/// validation refuses, as `cel validate` does): `None` when it is empty. A `kind: List` is
/// not expanded.
pub fn one_object(
    request: &Map<String, Json>,
    key: &str,
) -> Result<Option<(Json, Vec<String>)>, String> {
    let mut docs = input::text_documents(text(request, key)?);
    if docs.len() > 1 {
        return Err(format!(
            "{key}: expected one document, found {}",
            docs.len()
        ));
    }
    match docs.pop().map(|d| (d.value, d.duplicates)) {
        None => Ok(None),
        Some((Ok(o @ Json::Object(_)), duplicates)) => Ok(Some((o, duplicates))),
        Some((Ok(_), _)) => Err(format!("{key}: expected an object")),
        Some((Err(e), _)) => Err(format!("{key}: {e}")),
    }
}

/// A string member of a request, if given.
pub fn string<'r>(request: &'r Map<String, Json>, key: &str) -> Option<&'r str> {
    request
        .get(key)
        .and_then(Json::as_str)
        .filter(|s| !s.trim().is_empty())
}
