//! Embeds the playground's files in the `cel` binary for `cel playground`: the page
//! (`playground/www`), the examples it loads (`examples/**/*.{yaml,yml,json}`) and, when it
//! has been built (`playground/build.sh` writes `playground/www/pkg/`), the WebAssembly
//! module. Without the module `cel` still builds, with no tool beyond cargo, and
//! `cel playground` says how to build it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.join("../..");
    let www = root.join("playground/www");
    let examples = root.join("examples");
    println!("cargo:rerun-if-changed={}", www.display());
    println!("cargo:rerun-if-changed={}", examples.display());
    let mut assets = Vec::new();
    collect(&www, &www, "", &mut assets, &|_| true);
    collect(&examples, &examples, "examples/", &mut assets, &|p| {
        matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        )
    });
    assets.sort();
    let has_module = assets
        .iter()
        .any(|(url, _)| url == "pkg/celerity_playground_bg.wasm");
    let mut out =
        String::from("/// The playground's files: URL path (without the leading `/`), contents.\n");
    out.push_str("pub(crate) static ASSETS: &[(&str, &[u8])] = &[\n");
    for (url, path) in &assets {
        writeln!(
            out,
            "    ({url:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .expect("a string");
    }
    out.push_str("];\n/// Whether the WebAssembly module was built in.\n");
    writeln!(out, "pub(crate) const HAS_MODULE: bool = {has_module};").expect("a string");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"))
        .join("playground_assets.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

/// The files under `dir` that `keep` accepts, as (URL path, absolute path), skipping hidden
/// files and build directories.
fn collect(
    base: &Path,
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, PathBuf)>,
    keep: &dyn Fn(&Path) -> bool,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if path.is_dir() {
            collect(base, &path, prefix, out, keep);
        } else if keep(&path) {
            let rel = path.strip_prefix(base).expect("under its base");
            let url = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let abs = std::fs::canonicalize(&path).unwrap_or(path);
            out.push((format!("{prefix}{url}"), abs));
        }
    }
}
