//! Tidy: the workspace's layering, checked from `cargo metadata`.
//!
//! The crates form layers (front end, types, runtime, evaluators, the facade) and the rules
//! below keep an edge from being added that would tangle them. Each rule comes from the
//! crate's own documentation (the `//!` header of its `src/lib.rs`), which says what it must
//! not depend on.
//!
//! A rule is checked over the resolved dependency graph (`cargo metadata`'s `resolve`), so it
//! holds for everything the crate reaches, through in-tree and third-party crates alike, not
//! only for what its manifest names, unless the rule says it is about direct dependencies.
//! Beyond the crate's first step, only normal and build edges are followed (a dependency's
//! dev-dependencies are never built for it). Dev-dependencies are exempt from the layering
//! rules (a test may reach across layers without the library doing so), except where a
//! rule counts them: the crate whose documentation says its tests build without Cranelift
//! (`cel-ir`), and no manifest but `cel-jit`'s names Cranelift at all. Every violation is
//! reported, not just the first; a path stops at the first forbidden crate on it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::process::Command;

use serde_json::Value as Json;

/// Which dependencies a rule forbids.
#[derive(Clone, Copy, Debug)]
enum Forbidden {
    /// Every other workspace package, except these.
    InTreeExcept(&'static [&'static str]),
    /// These packages.
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

/// How far a rule looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// The package's own manifest.
    Direct,
    /// Everything the package reaches.
    Transitive,
}

/// Whether the package's dev-dependencies count (its tests, examples and benchmarks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kinds {
    NormalAndBuild,
    All,
}

struct Rule {
    subject: Subject,
    forbidden: Forbidden,
    reach: Reach,
    kinds: Kinds,
    why: &'static str,
}

/// The evaluators and the facade, which everything below them must not reach.
const EVALUATORS_AND_FACADE: &[&str] = &["cel-interp", "cel-ir", "cel-jit", "celerity"];

/// The rules, as a table: who, may not depend on what, how far, and why.
const RULES: &[Rule] = &[
    Rule {
        subject: Subject::Package("cel-syntax"),
        forbidden: Forbidden::InTreeExcept(&[]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "the front end knows nothing of types, values or evaluation",
    },
    Rule {
        subject: Subject::Package("cel-types"),
        forbidden: Forbidden::InTreeExcept(&[]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "the type system is shared by the checker and the runtime, so it sits below both",
    },
    Rule {
        subject: Subject::Package("cel-runtime"),
        forbidden: Forbidden::Packages(&[
            "cel-syntax",
            "cel-checker",
            "cel-interp",
            "cel-ir",
            "cel-jit",
            "celerity",
        ]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "the runtime knows nothing of syntax or of any evaluator; evaluators call it",
    },
    Rule {
        subject: Subject::Package("cel-checker"),
        forbidden: Forbidden::InTreeExcept(&["cel-syntax", "cel-types"]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "checking is static: it needs the AST and types only, never values or evaluation",
    },
    Rule {
        subject: Subject::Package("cel-cost"),
        forbidden: Forbidden::InTreeExcept(&["cel-syntax", "cel-types", "cel-checker"]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "the cost model knows types and the checked AST, never runtime values; the evaluators and libraries use it",
    },
    Rule {
        subject: Subject::Package("cel-ext"),
        forbidden: Forbidden::Packages(&["cel-checker"]),
        reach: Reach::Direct,
        kinds: Kinds::NormalAndBuild,
        why: "a library declares functions for whichever checker is used; it sees checked ASTs only through cel-cost's hooks",
    },
    Rule {
        subject: Subject::Package("cel-ext"),
        forbidden: Forbidden::Packages(EVALUATORS_AND_FACADE),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "a library is declarations, runtime functions and macros; it plugs into any evaluator",
    },
    Rule {
        subject: Subject::Package("cel-interp"),
        forbidden: Forbidden::Packages(&["cel-ir", "cel-jit", "celerity"]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "the interpreter is the semantic reference; the JIT depends on it, never the reverse",
    },
    Rule {
        subject: Subject::Package("cel-ir"),
        forbidden: Forbidden::Packages(&["cel-runtime", "cel-interp", "cel-jit", "celerity"]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "the IR is lowered from the checked AST and the cost plan; it builds without values, the interpreter or code generation",
    },
    Rule {
        subject: Subject::Package("cel-ir"),
        forbidden: Forbidden::Packages(&["cel-interp", "cel-jit", "celerity"]),
        reach: Reach::Transitive,
        kinds: Kinds::All,
        why: "the IR's tests build without an evaluator or the facade (they may use cel-ext's declarations)",
    },
    Rule {
        subject: Subject::Package("cel-ir"),
        forbidden: Forbidden::Prefix("cranelift"),
        reach: Reach::Transitive,
        kinds: Kinds::All,
        why: "lowering and its tests build without code generation",
    },
    Rule {
        subject: Subject::Package("cel-k8s"),
        forbidden: Forbidden::Packages(&[
            "cel-interp",
            "cel-ir",
            "cel-jit",
            "cel-k8s-schema",
            "celerity",
        ]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "Kubernetes' libraries plug into any evaluator; the facade brings them and the schemas together",
    },
    Rule {
        subject: Subject::Package("cel-k8s-schema"),
        forbidden: Forbidden::Packages(&["cel-syntax", "cel-checker"]),
        reach: Reach::Direct,
        kinds: Kinds::NormalAndBuild,
        why: "schemas become types and values without a front end of their own (cel-cost brings the checked AST)",
    },
    Rule {
        subject: Subject::Package("cel-k8s-schema"),
        forbidden: Forbidden::Packages(&["cel-interp", "cel-ir", "cel-jit", "cel-k8s", "celerity"]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "schemas become types and values without an evaluator; compiling and running rules is the facade's",
    },
    Rule {
        subject: Subject::Under("crates", &["celerity", "celerity-kubernetes"]),
        forbidden: Forbidden::Packages(&["celerity"]),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "celerity is the facade on top; only the Kubernetes jobs, tools/*, spec-tests and benches use it",
    },
    Rule {
        subject: Subject::Package("celerity"),
        forbidden: Forbidden::Packages(&["celerity-kubernetes"]),
        reach: Reach::Transitive,
        kinds: Kinds::All,
        why: "the facade is the embedding API of the language and of Kubernetes' environments; the Kubernetes jobs are built on it, never the reverse",
    },
    Rule {
        subject: Subject::Under("crates", &["celerity-kubernetes"]),
        forbidden: Forbidden::Packages(&["celerity-kubernetes"]),
        reach: Reach::Transitive,
        kinds: Kinds::All,
        why: "the Kubernetes jobs are the top of the crates; only tools/*, spec-tests and benches use them",
    },
    Rule {
        subject: Subject::Package("celerity-kubernetes"),
        forbidden: Forbidden::Packages(&[
            "cel-checker",
            "cel-cost",
            "cel-interp",
            "cel-ir",
            "cel-jit",
            "cel-ext",
        ]),
        reach: Reach::Direct,
        kinds: Kinds::NormalAndBuild,
        why: "the Kubernetes jobs compile and run expressions through the facade, as any host does",
    },
    Rule {
        subject: Subject::AllExcept(&["cel-jit"]),
        forbidden: Forbidden::Prefix("cranelift"),
        reach: Reach::Direct,
        kinds: Kinds::All,
        why: "code generation is confined to cel-jit: no other manifest names Cranelift",
    },
    Rule {
        subject: Subject::Under("crates", &["cel-jit", "celerity", "celerity-kubernetes"]),
        forbidden: Forbidden::Prefix("cranelift"),
        reach: Reach::Transitive,
        kinds: Kinds::NormalAndBuild,
        why: "everything below the facade builds without code generation",
    },
];

/// How a dependency is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Normal,
    Build,
    Dev,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Normal => "normal",
            Kind::Build => "build",
            Kind::Dev => "dev",
        }
    }
}

/// A package of the resolved graph, in-tree or not.
struct Package {
    name: String,
    /// For a workspace package, the manifest's directory relative to the workspace root,
    /// with `/` separators; `None` for any other package.
    dir: Option<String>,
    /// (index of the dependency in the graph, kind), one entry per kind.
    deps: Vec<(usize, Kind)>,
}

/// Every package `cargo metadata` resolved, with the edges between them.
fn graph_from_metadata(metadata: &Json) -> Vec<Package> {
    let root = metadata["workspace_root"].as_str().unwrap_or_default();
    let members: HashSet<&str> = metadata["workspace_members"]
        .as_array()
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let listed: Vec<&Json> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let index: HashMap<&str, usize> = listed
        .iter()
        .enumerate()
        .map(|(i, p)| (p["id"].as_str().unwrap_or_default(), i))
        .collect();
    let mut graph: Vec<Package> = listed
        .iter()
        .map(|p| {
            let id = p["id"].as_str().unwrap_or_default();
            let dir = members.contains(id).then(|| {
                Path::new(p["manifest_path"].as_str().unwrap_or_default())
                    .parent()
                    .and_then(|d| d.strip_prefix(root).ok())
                    .map(|d| {
                        d.components()
                            .map(|c| c.as_os_str().to_string_lossy().into_owned())
                            .collect::<Vec<_>>()
                            .join("/")
                    })
                    .unwrap_or_default()
            });
            Package {
                name: p["name"].as_str().unwrap_or_default().to_string(),
                dir,
                deps: Vec::new(),
            }
        })
        .collect();
    for node in metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let Some(&from) = node["id"].as_str().and_then(|id| index.get(id)) else {
            continue;
        };
        for dep in node["deps"].as_array().into_iter().flatten() {
            let Some(&to) = dep["pkg"].as_str().and_then(|id| index.get(id)) else {
                continue;
            };
            for dk in dep["dep_kinds"].as_array().into_iter().flatten() {
                let kind = match dk["kind"].as_str() {
                    Some("dev") => Kind::Dev,
                    Some("build") => Kind::Build,
                    _ => Kind::Normal,
                };
                if !graph[from].deps.contains(&(to, kind)) {
                    graph[from].deps.push((to, kind));
                }
            }
        }
    }
    graph
}

fn applies(subject: Subject, p: &Package) -> bool {
    let Some(dir) = &p.dir else {
        return false;
    };
    match subject {
        Subject::Package(name) => p.name == name,
        Subject::Under(under, except) => {
            dir.starts_with(&format!("{under}/")) && !except.contains(&p.name.as_str())
        }
        Subject::AllExcept(except) => !except.contains(&p.name.as_str()),
    }
}

fn is_forbidden(forbidden: Forbidden, subject: &Package, dep: &Package) -> bool {
    match forbidden {
        Forbidden::InTreeExcept(allowed) => {
            dep.dir.is_some() && dep.name != subject.name && !allowed.contains(&dep.name.as_str())
        }
        Forbidden::Packages(names) => names.contains(&dep.name.as_str()),
        Forbidden::Prefix(prefix) => dep.name.starts_with(prefix),
    }
}

/// The forbidden packages `graph[start]` reaches under `rule`, each with the kind of the
/// first edge and the packages in between, in breadth-first order (so each with a shortest
/// path). A path stops at the first forbidden package on it.
fn reached(graph: &[Package], start: usize, rule: &Rule) -> Vec<(usize, Kind, Vec<usize>)> {
    let mut seen: HashSet<usize> = HashSet::from([start]);
    let mut queue: VecDeque<(usize, Kind, Vec<usize>)> = VecDeque::new();
    for &(dep, kind) in &graph[start].deps {
        if (kind != Kind::Dev || rule.kinds == Kinds::All) && seen.insert(dep) {
            queue.push_back((dep, kind, Vec::new()));
        }
    }
    let mut out = Vec::new();
    while let Some((at, kind, via)) = queue.pop_front() {
        if is_forbidden(rule.forbidden, &graph[start], &graph[at]) {
            out.push((at, kind, via));
            continue;
        }
        if rule.reach == Reach::Direct {
            continue;
        }
        for &(dep, dep_kind) in &graph[at].deps {
            if dep_kind != Kind::Dev && seen.insert(dep) {
                let mut path = via.clone();
                path.push(at);
                queue.push_back((dep, kind, path));
            }
        }
    }
    out
}

/// Every violation of every rule, as readable lines.
fn violations(graph: &[Package], rules: &[Rule]) -> Vec<String> {
    let mut out = Vec::new();
    for rule in rules {
        for (i, p) in graph.iter().enumerate() {
            if !applies(rule.subject, p) {
                continue;
            }
            for (dep, kind, via) in reached(graph, i, rule) {
                let through = if via.is_empty() {
                    String::new()
                } else {
                    let names: Vec<&str> = via.iter().map(|&v| graph[v].name.as_str()).collect();
                    format!(", through {}", names.join(" -> "))
                };
                out.push(format!(
                    "{} ({}) depends on {} ({}{through}): not allowed, because {}",
                    p.name,
                    p.dir.as_deref().unwrap_or_default(),
                    graph[dep].name,
                    kind.name(),
                    rule.why
                ));
            }
        }
    }
    out
}

/// The index of the package named `name` (the first, if several versions are resolved).
fn find(graph: &[Package], name: &str) -> Option<usize> {
    graph.iter().position(|p| p.name == name)
}

/// The platform cargo builds for here (`cargo -vV`'s `host:` line).
fn host_triple() -> String {
    let out = Command::new(env!("CARGO"))
        .arg("-vV")
        .output()
        .expect("cargo -vV runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("cargo -vV names its host")
        .trim()
        .to_string()
}

#[test]
fn workspace_dependency_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The graph of this platform only: the packages other platforms would need
    // (`anstyle-wincon` on Windows, say) are not downloaded on a fresh machine, and
    // `--offline` must not need them. CI runs this test with a fresh cargo home.
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host_triple()])
        .current_dir(&root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Json = serde_json::from_slice(&output.stdout).expect("cargo metadata is JSON");
    let graph = graph_from_metadata(&metadata);
    for name in [
        "cel-syntax",
        "cel-types",
        "cel-runtime",
        "cel-cost",
        "cel-k8s",
        "cel-ir",
        "celerity-kubernetes",
        "spec-tests",
    ] {
        assert!(
            find(&graph, name).is_some_and(|i| graph[i].dir.is_some()),
            "{name} is not a workspace package; is the metadata read right?"
        );
    }
    // The graph is the resolved one, through third-party crates: the facade reaches
    // Cranelift through cel-jit, and cel-jit reaches cranelift-entity through
    // cranelift-codegen, though its manifest does not name it.
    let probe = |from: &str, to: &'static str| {
        let rule = Rule {
            subject: Subject::Package("(probe)"),
            forbidden: Forbidden::Prefix(to),
            reach: Reach::Transitive,
            kinds: Kinds::NormalAndBuild,
            why: "",
        };
        let start = find(&graph, from).expect("the package is in the graph");
        reached(&graph, start, &rule)
            .iter()
            .any(|&(i, _, _)| graph[i].name == to)
    };
    assert!(probe("celerity", "cranelift-codegen"));
    assert!(probe("cel-jit", "cranelift-entity"));
    let found = violations(&graph, RULES);
    assert!(
        found.is_empty(),
        "forbidden dependency edges:\n  {}",
        found.join("\n  ")
    );
}

/// The packages `cargo tree` says `package` builds from (normal and build dependencies) for
/// `target`, with `features` (`None`: its defaults, else exactly these), as `name version`
/// lines. `cargo tree` resolves features for the one package, as a build of it alone does;
/// `cargo metadata` would unify them with every other workspace member's. Not `--offline`:
/// a WebAssembly build needs a few crates no other platform does (`jiff-tzdb-platform`),
/// which a fresh cargo home that built only for this machine does not hold yet.
fn tree(package: &str, target: &str, features: Option<&str>) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["tree", "--locked", "-e", "normal,build", "--prefix", "none"])
        .args(["-p", package, "--target", target])
        .current_dir(&root);
    if let Some(features) = features {
        cmd.args(["--no-default-features", "--features", features]);
    }
    let output = cmd.output().expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree -p {package} --target {target} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_string())
        .collect()
}

/// The WebAssembly builds (the engine and the Kubernetes jobs without their `jit` feature,
/// and the playground's module) contain nothing of Cranelift or of the crate that calls it,
/// for both WebAssembly targets; with the default features the same query finds Cranelift,
/// so the check can see it.
#[test]
fn webassembly_builds_have_no_native_code() {
    let native = |l: &String| l.starts_with("cranelift") || l.starts_with("cel-jit ");
    for target in ["wasm32-unknown-unknown", "wasm32-wasip1"] {
        for (package, features) in [
            ("celerity", Some("")),
            ("celerity-kubernetes", Some("")),
            ("celerity-playground", None),
        ] {
            let crates = tree(package, target, features);
            assert!(
                crates.iter().any(|l| l.starts_with("cel-interp ")),
                "{package} for {target}: cargo tree listed {crates:?}"
            );
            let found: Vec<&String> = crates.iter().filter(|l| native(l)).collect();
            assert!(
                found.is_empty(),
                "{package} for {target} builds native code: {found:?}"
            );
        }
    }
    assert!(
        tree("celerity-kubernetes", &host_triple(), None)
            .iter()
            .any(|l| l.starts_with("cranelift-codegen ")),
        "with its default features the Kubernetes jobs compile with Cranelift"
    );
}

/// A package given by name: (name, directory for workspace packages, dependencies by name).
type Named<'a> = (&'a str, Option<&'a str>, &'a [(&'a str, Kind)]);

/// A graph of named packages.
fn graph_of(packages: &[Named<'_>]) -> Vec<Package> {
    let index = |name: &str| {
        packages
            .iter()
            .position(|(n, _, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} is not in the graph"))
    };
    packages
        .iter()
        .map(|(name, dir, deps)| Package {
            name: name.to_string(),
            dir: dir.map(str::to_string),
            deps: deps.iter().map(|&(d, k)| (index(d), k)).collect(),
        })
        .collect()
}

/// The checker itself: a workspace that breaks rules of every kind (direct and transitive,
/// through in-tree and third-party crates, by normal, build and dev edges) gets every
/// violation reported, and the edges the rules allow (dev-dependencies a rule does not
/// count, what a direct rule reaches only transitively) get none.
#[test]
fn rules_catch_violations() {
    use Kind::{Build, Dev, Normal};
    let graph = graph_of(&[
        (
            "cel-syntax",
            Some("crates/cel-syntax"),
            &[("cel-types", Normal), ("insta", Dev)],
        ),
        (
            "cel-types",
            Some("crates/cel-types"),
            &[("cel-syntax", Dev)],
        ),
        (
            "cel-runtime",
            Some("crates/cel-runtime"),
            &[("cel-types", Normal), ("cel-syntax", Build)],
        ),
        (
            "cel-checker",
            Some("crates/cel-checker"),
            &[("cel-syntax", Normal), ("cel-types", Normal)],
        ),
        // Values reached through a third-party crate.
        (
            "cel-cost",
            Some("crates/cel-cost"),
            &[("cel-checker", Normal), ("value-helper", Normal)],
        ),
        ("value-helper", None, &[("cel-runtime", Normal)]),
        (
            "cel-ext",
            Some("crates/cel-ext"),
            &[("cel-cost", Normal), ("celerity", Dev)],
        ),
        (
            "cel-interp",
            Some("crates/cel-interp"),
            &[("cel-runtime", Normal)],
        ),
        // Tests that need the facade, hence Cranelift.
        (
            "cel-ir",
            Some("crates/cel-ir"),
            &[("cel-checker", Normal), ("insta", Dev), ("celerity", Dev)],
        ),
        (
            "cel-jit",
            Some("crates/cel-jit"),
            &[
                ("cel-ir", Normal),
                ("cel-interp", Normal),
                ("cranelift-codegen", Normal),
            ],
        ),
        ("cel-k8s", Some("crates/cel-k8s"), &[("cel-ext", Normal)]),
        // The front end directly (a build dependency), and transitively (allowed).
        (
            "cel-k8s-schema",
            Some("crates/cel-k8s-schema"),
            &[("cel-cost", Normal), ("cel-checker", Build)],
        ),
        (
            "celerity",
            Some("crates/celerity"),
            &[
                ("cel-jit", Normal),
                ("cel-k8s", Normal),
                ("cel-k8s-schema", Normal),
            ],
        ),
        (
            "cel-cli",
            Some("tools/cel-cli"),
            &[("celerity", Normal), ("cranelift-frontend", Dev)],
        ),
        ("spec-tests", Some("spec-tests"), &[("celerity", Normal)]),
        ("insta", None, &[]),
        ("cranelift-codegen", None, &[]),
        ("cranelift-frontend", None, &[]),
    ]);
    let found = violations(&graph, RULES);
    let short: Vec<String> = found
        .iter()
        .map(|v| v.split(':').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        short,
        vec![
            "cel-syntax (crates/cel-syntax) depends on cel-types (normal)",
            "cel-runtime (crates/cel-runtime) depends on cel-syntax (build)",
            "cel-cost (crates/cel-cost) depends on cel-runtime (normal, through value-helper)",
            "cel-ir (crates/cel-ir) depends on celerity (dev)",
            "cel-ir (crates/cel-ir) depends on cranelift-codegen (dev, through celerity -> cel-jit)",
            "cel-k8s-schema (crates/cel-k8s-schema) depends on cel-checker (build)",
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
    roots.push(root.join("playground/src/lib.rs"));
    roots.push(root.join("examples/wasi-policy/src/main.rs"));
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
