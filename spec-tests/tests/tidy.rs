//! Tidy: the workspace's layering, checked from `cargo metadata`.
//!
//! The crates form layers (front end, types, runtime, evaluators, the facade) and the rules
//! below keep an edge from being added that would tangle them. Normal and build
//! dependencies are checked; dev-dependencies are exempt from the layering rules (a test may
//! reach across layers without the library doing so), but not from the Cranelift rule.
//! Every violation is reported, not just the first.

use std::path::Path;
use std::process::Command;

use serde_json::Value as Json;

/// Which dependencies a rule forbids.
#[derive(Clone, Copy, Debug)]
enum Forbidden {
    /// Every other workspace package.
    AnyInTree,
    /// These workspace packages.
    Packages(&'static [&'static str]),
    /// Any crate whose name starts with this prefix (in-tree or not).
    Prefix(&'static str),
}

/// Which packages a rule applies to.
#[derive(Clone, Copy, Debug)]
enum Subject {
    /// One package, by name.
    Package(&'static str),
    /// Every workspace package whose manifest lies under this directory of the workspace,
    /// except the named ones.
    Under(&'static str, &'static [&'static str]),
    /// Every workspace package except the named ones.
    AllExcept(&'static [&'static str]),
}

/// Whether dev-dependencies count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kinds {
    NormalAndBuild,
    All,
}

struct Rule {
    subject: Subject,
    forbidden: Forbidden,
    kinds: Kinds,
    why: &'static str,
}

/// The rules, as a table: who, may not depend on what, and why.
const RULES: &[Rule] = &[
    Rule {
        subject: Subject::Package("cel-syntax"),
        forbidden: Forbidden::AnyInTree,
        kinds: Kinds::NormalAndBuild,
        why: "the front end knows nothing of types, values or evaluation",
    },
    Rule {
        subject: Subject::Package("cel-types"),
        forbidden: Forbidden::AnyInTree,
        kinds: Kinds::NormalAndBuild,
        why: "the type system is shared by the checker and the runtime, so it sits below both",
    },
    Rule {
        subject: Subject::Package("cel-runtime"),
        forbidden: Forbidden::Packages(&["cel-syntax", "cel-checker", "cel-interp", "celerity"]),
        kinds: Kinds::NormalAndBuild,
        why: "the runtime knows nothing of syntax or of any evaluator; evaluators call it",
    },
    Rule {
        subject: Subject::Package("cel-checker"),
        forbidden: Forbidden::Packages(&["cel-runtime", "cel-interp"]),
        kinds: Kinds::NormalAndBuild,
        why: "checking is static: it needs types, never values or evaluation",
    },
    Rule {
        subject: Subject::Package("cel-ext"),
        forbidden: Forbidden::Packages(&["cel-checker", "cel-interp", "celerity"]),
        kinds: Kinds::NormalAndBuild,
        why: "a library is declarations, runtime functions and macros; it plugs into any evaluator",
    },
    Rule {
        subject: Subject::Package("cel-interp"),
        forbidden: Forbidden::Packages(&["cel-ir", "cel-jit"]),
        kinds: Kinds::NormalAndBuild,
        why: "the interpreter is the semantic reference; the JIT depends on it, never the reverse",
    },
    Rule {
        subject: Subject::Package("cel-ir"),
        forbidden: Forbidden::Packages(&["cel-runtime", "cel-interp", "cel-jit", "celerity"]),
        kinds: Kinds::NormalAndBuild,
        why: "the IR is lowered from the checked AST and the cost plan; it builds without values, the interpreter or code generation",
    },
    Rule {
        subject: Subject::Package("cel-k8s-schema"),
        forbidden: Forbidden::Packages(&[
            "cel-syntax",
            "cel-checker",
            "cel-interp",
            "cel-ir",
            "cel-jit",
            "cel-k8s",
            "celerity",
        ]),
        kinds: Kinds::NormalAndBuild,
        why: "schemas become types and values without a front end or an evaluator; compiling and running rules is the facade's",
    },
    Rule {
        subject: Subject::Under("crates", &["celerity"]),
        forbidden: Forbidden::Packages(&["celerity"]),
        kinds: Kinds::NormalAndBuild,
        why: "celerity is the facade on top; only tools/*, spec-tests and benches use it",
    },
    Rule {
        subject: Subject::AllExcept(&["cel-jit"]),
        forbidden: Forbidden::Prefix("cranelift"),
        kinds: Kinds::All,
        why: "code generation is confined to cel-jit; everything else must build without it",
    },
];

/// A workspace package as the rules see it.
struct Package {
    name: String,
    /// The manifest's directory relative to the workspace root, with `/` separators.
    dir: String,
    /// (dependency package name, kind: "normal", "dev" or "build").
    deps: Vec<(String, String)>,
}

fn packages_from_metadata(metadata: &Json) -> Vec<Package> {
    let root = metadata["workspace_root"].as_str().unwrap_or_default();
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| members.contains(&p["id"].as_str().unwrap_or_default()))
        .map(|p| {
            let manifest = Path::new(p["manifest_path"].as_str().unwrap_or_default());
            let dir = manifest
                .parent()
                .and_then(|d| d.strip_prefix(root).ok())
                .map(|d| {
                    d.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/")
                })
                .unwrap_or_default();
            let deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    (
                        d["name"].as_str().unwrap_or_default().to_string(),
                        d["kind"].as_str().unwrap_or("normal").to_string(),
                    )
                })
                .collect();
            Package {
                name: p["name"].as_str().unwrap_or_default().to_string(),
                dir,
                deps,
            }
        })
        .collect()
}

fn applies(subject: Subject, p: &Package) -> bool {
    match subject {
        Subject::Package(name) => p.name == name,
        Subject::Under(dir, except) => {
            p.dir.starts_with(&format!("{dir}/")) && !except.contains(&p.name.as_str())
        }
        Subject::AllExcept(except) => !except.contains(&p.name.as_str()),
    }
}

/// Every violation of every rule, as readable lines.
fn violations(packages: &[Package], rules: &[Rule]) -> Vec<String> {
    let in_tree: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    let mut out = Vec::new();
    for rule in rules {
        for p in packages.iter().filter(|p| applies(rule.subject, p)) {
            for (dep, kind) in &p.deps {
                if rule.kinds == Kinds::NormalAndBuild && kind == "dev" {
                    continue;
                }
                let forbidden = match rule.forbidden {
                    Forbidden::AnyInTree => in_tree.contains(&dep.as_str()) && *dep != p.name,
                    Forbidden::Packages(names) => names.contains(&dep.as_str()),
                    Forbidden::Prefix(prefix) => dep.starts_with(prefix),
                };
                if forbidden {
                    out.push(format!(
                        "{} ({}) depends on {dep} ({kind}): not allowed, because {}",
                        p.name, p.dir, rule.why
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn workspace_dependency_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Json = serde_json::from_slice(&output.stdout).expect("cargo metadata is JSON");
    let packages = packages_from_metadata(&metadata);
    for name in ["cel-syntax", "cel-types", "cel-runtime", "spec-tests"] {
        assert!(
            packages.iter().any(|p| p.name == name),
            "{name} is not a workspace package; is the metadata read right?"
        );
    }
    let found = violations(&packages, RULES);
    assert!(
        found.is_empty(),
        "forbidden dependency edges:\n  {}",
        found.join("\n  ")
    );
}

/// The checker itself: a workspace that breaks every rule gets every violation reported.
#[test]
fn rules_catch_violations() {
    let pkg = |name: &str, dir: &str, deps: &[(&str, &str)]| Package {
        name: name.into(),
        dir: dir.into(),
        deps: deps
            .iter()
            .map(|(d, k)| (d.to_string(), k.to_string()))
            .collect(),
    };
    let packages = vec![
        pkg(
            "cel-syntax",
            "crates/cel-syntax",
            &[("cel-types", "normal"), ("insta", "dev")],
        ),
        pkg("cel-types", "crates/cel-types", &[("cel-syntax", "dev")]),
        pkg(
            "cel-runtime",
            "crates/cel-runtime",
            &[("cel-types", "normal"), ("cel-interp", "build")],
        ),
        pkg(
            "cel-checker",
            "crates/cel-checker",
            &[("cel-runtime", "normal")],
        ),
        pkg("cel-interp", "crates/cel-interp", &[("celerity", "normal")]),
        pkg(
            "cel-jit",
            "crates/cel-jit",
            &[("cranelift-codegen", "normal")],
        ),
        pkg("celerity", "crates/celerity", &[("cel-interp", "normal")]),
        pkg(
            "cel-cli",
            "tools/cel-cli",
            &[("celerity", "normal"), ("cranelift-frontend", "dev")],
        ),
        pkg("spec-tests", "spec-tests", &[("celerity", "normal")]),
    ];
    let found = violations(&packages, RULES);
    let short: Vec<String> = found
        .iter()
        .map(|v| v.split(':').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        short,
        vec![
            "cel-syntax (crates/cel-syntax) depends on cel-types (normal)",
            "cel-runtime (crates/cel-runtime) depends on cel-interp (build)",
            "cel-checker (crates/cel-checker) depends on cel-runtime (normal)",
            "cel-interp (crates/cel-interp) depends on celerity (normal)",
            "cel-cli (tools/cel-cli) depends on cranelift-frontend (dev)",
        ],
        "{found:#?}"
    );
}

/// `unsafe` lives only in `cel-jit` (generated code and the helper ABI): every other crate
/// root forbids it, so the compiler enforces it.
#[test]
fn unsafe_code_is_forbidden_outside_the_jit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut roots = Vec::new();
    for dir in ["crates", "tools"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.ends_with("cel-jit") {
                continue;
            }
            for file in ["src/lib.rs", "src/main.rs"] {
                if path.join(file).exists() {
                    roots.push(path.join(file));
                }
            }
        }
    }
    roots.push(root.join("spec-tests/src/lib.rs"));
    roots.push(root.join("spec-tests/src/main.rs"));
    roots.push(root.join("benches/src/lib.rs"));
    assert!(roots.len() >= 12, "{roots:?}");
    let missing: Vec<_> = roots
        .iter()
        .filter(|p| {
            !std::fs::read_to_string(p)
                .unwrap()
                .contains("#![forbid(unsafe_code)]")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "crate roots without #![forbid(unsafe_code)]: {missing:?}"
    );
}
