//! Embeds the built-in kinds' schemas (`schemas/`, written by tools/k8s-schemas/generate.py):
//! writes `builtin_data.rs` into `OUT_DIR`, two tables of `include_str!`s, the definition
//! store files by package and the version indexes by Kubernetes minor. Listing the
//! directory here, rather than by hand in the source, keeps the tables and the data from
//! drifting apart when the generator adds a package or a version.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    println!("cargo::rerun-if-changed={}", root.display());
    let mut out = String::new();
    out.push_str("/// The definition store files, by package.\n");
    out.push_str("pub(super) static DEFS: &[(&str, &str)] = &[\n");
    for (stem, path) in json_files(&root.join("defs")) {
        writeln!(out, "    ({stem:?}, include_str!({path:?})),").unwrap();
    }
    out.push_str("];\n/// The version indexes, by Kubernetes version (`1.35`).\n");
    out.push_str("pub(super) static VERSIONS: &[(&str, &str)] = &[\n");
    for (stem, path) in json_files(&root.join("versions")) {
        writeln!(out, "    ({stem:?}, include_str!({path:?})),").unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("builtin_data.rs");
    std::fs::write(dest, out).unwrap();
}

/// The `.json` files of `dir`, sorted: (file stem, absolute path).
fn json_files(dir: &Path) -> Vec<(String, String)> {
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, p.to_string_lossy().into_owned())
        })
        .collect();
    files.sort();
    files
}
