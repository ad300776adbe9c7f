//! The conformance corpus: cel-spec's `tests/simple/testdata/*.textproto`, loaded once into
//! memory as plain Rust values.
//!
//! This module owns finding the data (`$CEL_SPEC_DIR`), compiling cel-spec's `.proto` files
//! into a descriptor pool with `protox`, parsing each file as a
//! `cel.expr.conformance.test.SimpleTestFile` text proto with `prost-reflect`, and turning
//! every test into a [`Case`]. The data is read at run time and never copied into the
//! repository.
//!
//! A file that does not parse is reported in [`Corpus::broken`] with its error; a value,
//! type or declaration that cannot be converted is an [`Unsupported`] inside the one case
//! that holds it. Loading never panics on malformed data.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use cel_runtime::Value;
use prost_reflect::{
    DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value as PValue,
};

use crate::convert::{
    self, Converted, Decl, Unsupported, bool_or_false, decl_from_proto, has, message, messages,
    oneof, string_or_empty, type_from_proto, value_from_proto,
};

/// The environment variable naming a checkout of cel-spec.
pub const CEL_SPEC_DIR_VAR: &str = "CEL_SPEC_DIR";

/// Where the test files live inside a cel-spec checkout.
pub const TESTDATA_SUBDIR: &str = "tests/simple/testdata";

/// Where the `.proto` files live inside a cel-spec checkout (the include root).
pub const PROTO_SUBDIR: &str = "proto";

/// The message every test file is an instance of.
pub const TEST_FILE_MESSAGE: &str = "cel.expr.conformance.test.SimpleTestFile";

/// The protos the descriptor pool is compiled from. `simple.proto` describes the files; the
/// test messages are not imported by it but appear inside `google.protobuf.Any` values and
/// as proto2 extensions, so they are compiled too. The well-known types are bundled with
/// protox; those that `Any` values may carry are listed so they are present whatever the
/// other files import.
pub const PROTO_FILES: &[&str] = &[
    "cel/expr/conformance/test/simple.proto",
    "cel/expr/conformance/proto2/test_all_types_extensions.proto",
    "cel/expr/conformance/proto3/test_all_types.proto",
    "google/protobuf/any.proto",
    "google/protobuf/duration.proto",
    "google/protobuf/empty.proto",
    "google/protobuf/struct.proto",
    "google/protobuf/timestamp.proto",
    "google/protobuf/wrappers.proto",
];

/// The conformance data, loaded.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// The cel-spec checkout it was read from.
    pub dir: PathBuf,
    /// The files that parsed, in file-name order.
    pub files: Vec<TestFile>,
    /// The files that did not parse, with their errors.
    pub broken: Vec<BrokenFile>,
}

/// One `.textproto` file.
#[derive(Clone, Debug)]
pub struct TestFile {
    /// The file name without `.textproto` (`basic`): the name used on the command line, in
    /// case ids and in the summary.
    pub name: String,
    /// The `name` the file declares (`type_deduction.textproto` declares `type_deductions`).
    pub declared_name: String,
    /// The file's description.
    pub description: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// Its sections, in order.
    pub sections: Vec<Section>,
}

/// A file that could not be loaded.
#[derive(Clone, Debug)]
pub struct BrokenFile {
    /// The file name without `.textproto`.
    pub name: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// What went wrong (with a line and column where known).
    pub error: String,
}

/// A section of a file.
#[derive(Clone, Debug)]
pub struct Section {
    /// The section's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its tests, in order.
    pub cases: Vec<Case>,
}

/// One conformance test.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file's name (see [`TestFile::name`]).
    pub file: String,
    /// The section's name.
    pub section: String,
    /// The test's name; not always unique within its section.
    pub name: String,
    /// The position of the test within its section, from 0.
    pub index: usize,
    /// The stable id: `file/section/name`, with `#index` appended when the name is not
    /// unique within its section. Used by the known-failures list and the report.
    pub id: String,
    /// The test's description.
    pub description: String,
    /// The expression.
    pub expr: String,
    /// Parse without macros.
    pub disable_macros: bool,
    /// Evaluate without type checking.
    pub disable_check: bool,
    /// Type check only; do not evaluate.
    pub check_only: bool,
    /// The container names are resolved in (empty for the root).
    pub container: String,
    /// The locale for locale-sensitive functions (empty for none).
    pub locale: String,
    /// Declarations for the checker.
    pub type_env: Vec<Decl>,
    /// Variable bindings for evaluation, sorted by name.
    pub bindings: Vec<(String, Binding)>,
    /// What the test expects.
    pub expected: Expectation,
    /// The descriptors of the test messages (`TestAllTypes`, ...), which the case's
    /// environment knows.
    pub pool: DescriptorPool,
}

/// A variable binding: a value, or why it cannot be represented.
pub type Binding = Converted<Value>;

/// An expected value, or why it cannot be represented.
pub type ExpectedValue = Converted<Value>;

/// An expected type, or why it cannot be represented.
pub type ExpectedType = Converted<cel_types::Type>;

/// What a test expects: the `result_matcher` of a `SimpleTest`.
#[derive(Clone, Debug)]
pub enum Expectation {
    /// Evaluation yields this value. A test with no matcher expects `true`.
    Value(ExpectedValue),
    /// Checking deduces this type, and evaluation (unless `check_only`) yields `value`.
    Typed {
        /// The expected value, absent for check-only tests.
        value: Option<ExpectedValue>,
        /// The type the checker must deduce.
        deduced_type: ExpectedType,
    },
    /// Evaluation fails with this set of errors (their messages).
    EvalError(Vec<String>),
    /// Evaluation fails with any one of these error sets.
    AnyEvalErrors(Vec<Vec<String>>),
    /// Evaluation yields unknowns for these expression ids.
    Unknown(Vec<i64>),
    /// Evaluation yields any one of these unknown sets.
    AnyUnknowns(Vec<Vec<i64>>),
}

impl Expectation {
    /// Whether the test expects evaluation to fail.
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            Expectation::EvalError(_) | Expectation::AnyEvalErrors(_)
        )
    }

    /// The first unsupported part of the expectation, if any.
    pub fn unsupported(&self) -> Option<&Unsupported> {
        match self {
            Expectation::Value(Err(u)) => Some(u),
            Expectation::Typed {
                value,
                deduced_type,
            } => match (value, deduced_type) {
                (Some(Err(u)), _) | (_, Err(u)) => Some(u),
                _ => None,
            },
            _ => None,
        }
    }
}

impl Case {
    /// The first unsupported binding or declaration, with what it belongs to, if any.
    pub fn unsupported_input(&self) -> Option<(String, &Unsupported)> {
        self.bindings
            .iter()
            .find_map(|(name, b)| b.as_ref().err().map(|u| (format!("binding `{name}`"), u)))
            .or_else(|| {
                self.type_env.iter().find_map(|d| match d {
                    Decl::Unsupported { name, reason } => {
                        Some((format!("declaration `{name}`"), reason))
                    }
                    _ => None,
                })
            })
    }
}

/// Why the corpus could not be loaded at all.
#[derive(Clone, Debug)]
pub enum LoadError {
    /// `tests/simple/testdata` does not exist under the directory.
    DataNotFound {
        /// The cel-spec directory that was looked in.
        dir: PathBuf,
    },
    /// The `.proto` files did not compile.
    Protos(String),
    /// The test directory could not be listed.
    Io(String),
    /// `--file` named files that do not exist.
    UnknownFiles {
        /// The names asked for that do not exist.
        unknown: Vec<String>,
        /// The names that do.
        available: Vec<String>,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::DataNotFound { dir } => write!(
                f,
                "conformance data not found at {}; set {CEL_SPEC_DIR_VAR} to a checkout of \
                 https://github.com/cel-expr/cel-spec (the directory containing {TESTDATA_SUBDIR} \
                 and {PROTO_SUBDIR}/)",
                dir.join(TESTDATA_SUBDIR).display()
            ),
            LoadError::Protos(e) => write!(f, "cel-spec's .proto files did not compile: {e}"),
            LoadError::Io(e) => f.write_str(e),
            LoadError::UnknownFiles { unknown, available } => write!(
                f,
                "no such test file: {}; available: {}",
                unknown.join(", "),
                available.join(", ")
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// The cel-spec directory: `$CEL_SPEC_DIR` when set and not empty, else `../shared/cel-spec`
/// relative to the workspace root (found from this crate's manifest directory, so the
/// default works from any working directory).
pub fn spec_dir() -> PathBuf {
    match std::env::var_os(CEL_SPEC_DIR_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => normalize(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("../shared/cel-spec"),
        ),
    }
}

/// Removes `.` and `name/..` pairs lexically, so printed paths are readable.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether the directory holds the conformance test files.
pub fn data_present(dir: &Path) -> bool {
    dir.join(TESTDATA_SUBDIR).is_dir()
}

/// Compiles cel-spec's protos (from `dir/proto`) into a descriptor pool.
pub fn descriptor_pool(dir: &Path) -> Result<DescriptorPool, LoadError> {
    let include = dir.join(PROTO_SUBDIR);
    let mut compiler =
        protox::Compiler::new([&include]).map_err(|e| LoadError::Protos(e.to_string()))?;
    compiler.include_imports(true);
    compiler
        .open_files(PROTO_FILES)
        .map_err(|e| LoadError::Protos(e.to_string()))?;
    Ok(compiler.descriptor_pool())
}

impl Corpus {
    /// Loads every test file under `dir`.
    pub fn load(dir: &Path) -> Result<Corpus, LoadError> {
        Corpus::load_selected(dir, &[])
    }

    /// Loads the test files named in `only` (file names without `.textproto`), or all of
    /// them when `only` is empty.
    pub fn load_selected(dir: &Path, only: &[String]) -> Result<Corpus, LoadError> {
        if !data_present(dir) {
            return Err(LoadError::DataNotFound {
                dir: dir.to_path_buf(),
            });
        }
        let paths = test_file_paths(&dir.join(TESTDATA_SUBDIR))?;
        let available: Vec<String> = paths.iter().map(|(n, _)| n.clone()).collect();
        let unknown: Vec<String> = only
            .iter()
            .filter(|n| !available.contains(n))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(LoadError::UnknownFiles { unknown, available });
        }
        let pool = descriptor_pool(dir)?;
        let desc = pool.get_message_by_name(TEST_FILE_MESSAGE).ok_or_else(|| {
            LoadError::Protos(format!("the descriptor pool has no {TEST_FILE_MESSAGE}"))
        })?;
        let mut corpus = Corpus {
            dir: dir.to_path_buf(),
            files: Vec::new(),
            broken: Vec::new(),
        };
        for (name, path) in paths {
            if !only.is_empty() && !only.contains(&name) {
                continue;
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    corpus.broken.push(BrokenFile {
                        name,
                        path,
                        error: format!("cannot read: {e}"),
                    });
                    continue;
                }
            };
            match parse_test_file(&desc, &name, &text) {
                Ok(mut file) => {
                    file.path = path;
                    corpus.files.push(file);
                }
                Err(error) => corpus.broken.push(BrokenFile { name, path, error }),
            }
        }
        Ok(corpus)
    }

    /// Every case, in file, section and position order.
    pub fn cases(&self) -> impl Iterator<Item = &Case> {
        self.files
            .iter()
            .flat_map(|f| f.sections.iter())
            .flat_map(|s| s.cases.iter())
    }

    /// The number of sections over all files.
    pub fn section_count(&self) -> usize {
        self.files.iter().map(|f| f.sections.len()).sum()
    }
}

/// The `*.textproto` files of a directory as (name without extension, path), sorted by name.
fn test_file_paths(testdata: &Path) -> Result<Vec<(String, PathBuf)>, LoadError> {
    let entries = std::fs::read_dir(testdata)
        .map_err(|e| LoadError::Io(format!("cannot list {}: {e}", testdata.display())))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| LoadError::Io(format!("cannot list {}: {e}", testdata.display())))?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "textproto")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            out.push((stem.to_string(), path));
        }
    }
    out.sort();
    Ok(out)
}

/// Parses one test file's text (a `SimpleTestFile` in text format) into a [`TestFile`].
/// `path` is left empty for the caller to fill. The error names a line and column.
pub fn parse_test_file(
    desc: &MessageDescriptor,
    name: &str,
    text: &str,
) -> Result<TestFile, String> {
    let msg = DynamicMessage::parse_text_format(desc.clone(), text)
        .map_err(|e| describe_text_format_error(&e, text))?;
    let mut sections = Vec::new();
    for s in messages(&msg, "section").map_err(|u| u.0)? {
        let section_name = string_or_empty(&s, "name");
        let tests = messages(&s, "test").map_err(|u| u.0)?;
        let names: Vec<String> = tests.iter().map(|t| string_or_empty(t, "name")).collect();
        let cases = tests
            .iter()
            .enumerate()
            .map(|(index, t)| {
                let unique = names.iter().filter(|n| **n == names[index]).count() == 1;
                case_from_proto(t, name, &section_name, index, unique)
            })
            .collect();
        sections.push(Section {
            name: section_name,
            description: string_or_empty(&s, "description"),
            cases,
        });
    }
    Ok(TestFile {
        name: name.to_string(),
        declared_name: string_or_empty(&msg, "name"),
        description: string_or_empty(&msg, "description"),
        path: PathBuf::new(),
        sections,
    })
}

/// prost-reflect's text-format errors display without a position; their debug form carries
/// the byte span (`span: 120..125`), which is turned into a line and column here.
fn describe_text_format_error(e: &prost_reflect::text_format::ParseError, text: &str) -> String {
    let debug = format!("{e:?}");
    let offset = debug.find("span: ").and_then(|i| {
        let digits: String = debug[i + 6..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<usize>().ok()
    });
    match offset {
        Some(offset) if offset <= text.len() => {
            let before = text.get(..offset).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("text format error at line {line}, column {column}: {e}")
        }
        _ => format!("text format error: {e} ({debug})"),
    }
}

/// The id of a case: `file/section/name`, plus `#index` when the name is not unique.
pub fn case_id(file: &str, section: &str, name: &str, index: usize, unique: bool) -> String {
    if unique {
        format!("{file}/{section}/{name}")
    } else {
        format!("{file}/{section}/{name}#{index}")
    }
}

fn case_from_proto(
    t: &DynamicMessage,
    file: &str,
    section: &str,
    index: usize,
    unique_name: bool,
) -> Case {
    let name = string_or_empty(t, "name");
    let type_env = match messages(t, "type_env") {
        Ok(decls) => decls.iter().map(|d| decl_from_proto(d)).collect(),
        Err(reason) => vec![Decl::Unsupported {
            name: String::new(),
            reason,
        }],
    };
    Case {
        file: file.to_string(),
        section: section.to_string(),
        id: case_id(file, section, &name, index, unique_name),
        name,
        index,
        description: string_or_empty(t, "description"),
        expr: string_or_empty(t, "expr"),
        disable_macros: bool_or_false(t, "disable_macros"),
        disable_check: bool_or_false(t, "disable_check"),
        check_only: bool_or_false(t, "check_only"),
        container: string_or_empty(t, "container"),
        locale: string_or_empty(t, "locale"),
        type_env,
        bindings: bindings(t),
        expected: expectation(t),
        pool: t.descriptor().parent_pool().clone(),
    }
}

fn bindings(t: &DynamicMessage) -> Vec<(String, Binding)> {
    let Some(field) = t.get_field_by_name("bindings") else {
        return Vec::new();
    };
    let PValue::Map(map) = field.as_ref() else {
        return vec![(
            String::new(),
            Err(Unsupported::new("bindings is not a map")),
        )];
    };
    let mut out: Vec<(String, Binding)> = map
        .iter()
        .map(|(k, v)| {
            let name = match k {
                prost_reflect::MapKey::String(s) => s.clone(),
                other => format!("{other:?}"),
            };
            let binding = match v {
                PValue::Message(expr_value) => binding(expr_value),
                other => Err(Unsupported(format!("binding is not a message: {other:?}"))),
            };
            (name, binding)
        })
        .collect();
    // Protobuf maps are unordered; sort so runs are deterministic.
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Converts a `cel.expr.ExprValue`: only its `value` case is a binding Celerity can use.
fn binding(expr_value: &DynamicMessage) -> Binding {
    match oneof(expr_value, "kind") {
        Some((f, v)) => match (f.name(), v.as_ref()) {
            ("value", PValue::Message(m)) => value_from_proto(m),
            ("error", _) => Err(Unsupported::new("error bindings")),
            ("unknown", _) => Err(Unsupported::new("unknown bindings")),
            (other, _) => Err(Unsupported(format!("binding of kind {other}"))),
        },
        None => Err(Unsupported::new("binding with no kind set")),
    }
}

fn expectation(t: &DynamicMessage) -> Expectation {
    let Some((field, v)) = oneof(t, "result_matcher") else {
        // simple.proto: "A test with no result matcher expects the boolean value true".
        return Expectation::Value(Ok(Value::Bool(true)));
    };
    let PValue::Message(m) = v.as_ref() else {
        return Expectation::Value(Err(Unsupported(format!(
            "result matcher {} is not a message",
            field.name()
        ))));
    };
    match field.name() {
        "value" => Expectation::Value(value_from_proto(m)),
        "typed_result" => Expectation::Typed {
            value: has(m, "result")
                .then(|| message(m, "result").and_then(|r| value_from_proto(&r))),
            deduced_type: if has(m, "deduced_type") {
                message(m, "deduced_type").and_then(|t| type_from_proto(&t))
            } else {
                Err(Unsupported::new("typed_result without deduced_type"))
            },
        },
        "eval_error" => Expectation::EvalError(error_messages(m)),
        "any_eval_errors" => Expectation::AnyEvalErrors(
            messages(m, "errors")
                .map(|sets| sets.iter().map(|s| error_messages(s)).collect())
                .unwrap_or_default(),
        ),
        "unknown" => Expectation::Unknown(unknown_ids(m)),
        "any_unknowns" => Expectation::AnyUnknowns(
            messages(m, "unknowns")
                .map(|sets| sets.iter().map(|s| unknown_ids(s)).collect())
                .unwrap_or_default(),
        ),
        other => Expectation::Value(Err(Unsupported(format!("result matcher {other}")))),
    }
}

/// The messages of a `cel.expr.ErrorSet`.
fn error_messages(error_set: &DynamicMessage) -> Vec<String> {
    messages(error_set, "errors")
        .map(|statuses| {
            statuses
                .iter()
                .map(|s| string_or_empty(s, "message"))
                .collect()
        })
        .unwrap_or_default()
}

/// The expression ids of a `cel.expr.UnknownSet`.
fn unknown_ids(unknown_set: &DynamicMessage) -> Vec<i64> {
    match convert::get(unknown_set, "exprs").as_deref() {
        Ok(PValue::List(ids)) => ids
            .iter()
            .filter_map(|v| match v {
                PValue::I64(i) => Some(*i),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_removes_parent_pairs() {
        assert_eq!(
            normalize(Path::new("/work/main/spec-tests/../../shared/cel-spec")),
            PathBuf::from("/work/shared/cel-spec")
        );
        assert_eq!(normalize(Path::new("../x/./y")), PathBuf::from("../x/y"));
    }

    #[test]
    fn ids_get_an_index_only_when_needed() {
        assert_eq!(case_id("f", "s", "n", 3, true), "f/s/n");
        assert_eq!(case_id("f", "s", "n", 3, false), "f/s/n#3");
    }
}
