//! The declarations a checker works against.

use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;

use cel_types::{Container, FunctionDecl, NoTypes, Type, TypeProvider, VariableDecl, stdlib};

/// Options that change what the checker accepts.
#[derive(Clone, Debug, Default)]
pub struct CheckerOptions {
    /// Reject list and map literals whose elements (keys, values) have different types
    /// ("expected type 'int' but found 'string'"), as Kubernetes does. Off by default: mixed
    /// literals are `list(dyn)`.
    pub homogeneous_aggregate_literals: bool,
    /// Offer the mixed-type numeric comparisons (`1 < 1.5`, `1u < -1`) to the checker, as
    /// Kubernetes does from 1.28.
    pub cross_type_numeric_comparisons: bool,
}

/// Variables, functions, container, type provider and options for checking.
#[derive(Clone, Debug)]
pub struct CheckerEnv {
    pub(crate) container: Container,
    /// Shared between clones until one of them declares more (an environment extended with
    /// a few variables, per CRD schema node, copies none of the library's declarations).
    pub(crate) variables: Arc<HashMap<String, VariableDecl>>,
    pub(crate) functions: Arc<HashMap<String, FunctionDecl>>,
    pub(crate) provider: Arc<dyn TypeProvider>,
    pub(crate) options: CheckerOptions,
    pub(crate) disabled_overloads: HashSet<String>,
}

impl Default for CheckerEnv {
    fn default() -> Self {
        CheckerEnv::empty()
    }
}

impl CheckerEnv {
    /// An environment that declares nothing at all.
    pub fn empty() -> CheckerEnv {
        CheckerEnv {
            container: Container::default(),
            variables: Arc::new(HashMap::new()),
            functions: Arc::new(HashMap::new()),
            provider: Arc::new(NoTypes),
            options: CheckerOptions::default(),
            disabled_overloads: HashSet::new(),
        }
    }

    /// An environment with the standard library and the standard type identifiers.
    pub fn standard() -> CheckerEnv {
        let mut env = CheckerEnv::empty();
        for v in stdlib::type_identifiers() {
            env.add_variable(v);
        }
        for f in stdlib::functions() {
            env.add_function(f);
        }
        env.set_options(CheckerOptions::default());
        env
    }

    /// Adds the optional-types library's declarations at its newest version.
    pub fn add_optional_library(&mut self) {
        self.add_optional_library_version(stdlib::OPTIONAL_TYPES_VERSION);
    }

    /// Adds the optional-types library's declarations at a version (see
    /// [`stdlib::optional_functions_at`]).
    pub fn add_optional_library_version(&mut self, version: u32) {
        self.add_variable(stdlib::optional_type_identifier());
        for f in stdlib::optional_functions_at(version) {
            self.add_function(f);
        }
    }

    /// Sets the container names are resolved in.
    pub fn set_container(&mut self, container: Container) {
        self.container = container;
    }

    /// The container.
    pub fn container(&self) -> &Container {
        &self.container
    }

    /// Sets the type provider (message and enum types).
    pub fn set_provider(&mut self, provider: Arc<dyn TypeProvider>) {
        self.provider = provider;
    }

    /// The type provider.
    pub fn provider(&self) -> &Arc<dyn TypeProvider> {
        &self.provider
    }

    /// Sets the options.
    pub fn set_options(&mut self, options: CheckerOptions) {
        self.disabled_overloads.clear();
        if !options.cross_type_numeric_comparisons {
            self.disabled_overloads.extend(
                stdlib::CROSS_TYPE_NUMERIC_COMPARISONS
                    .iter()
                    .map(|s| s.to_string()),
            );
        }
        self.options = options;
    }

    /// The options.
    pub fn options(&self) -> &CheckerOptions {
        &self.options
    }

    /// Declares (or redeclares) a variable.
    pub fn add_variable(&mut self, decl: VariableDecl) {
        Arc::make_mut(&mut self.variables).insert(decl.name.clone(), decl);
    }

    /// Declares a function, merging its overloads into an existing declaration of the same
    /// name (an overload whose id is already declared is kept as first declared).
    pub fn add_function(&mut self, decl: FunctionDecl) {
        let functions = Arc::make_mut(&mut self.functions);
        match functions.get_mut(&decl.name) {
            Some(existing) => existing.merge(decl),
            None => {
                functions.insert(decl.name.clone(), decl);
            }
        }
    }

    /// A declared variable by exact name.
    pub fn variable(&self, name: &str) -> Option<&VariableDecl> {
        self.variables.get(name)
    }

    /// A declared function by exact name.
    pub fn function(&self, name: &str) -> Option<&FunctionDecl> {
        self.functions.get(name)
    }

    /// Every declared function.
    pub fn functions(&self) -> impl Iterator<Item = &FunctionDecl> {
        self.functions.values()
    }

    /// Every declared variable.
    pub fn variables(&self) -> impl Iterator<Item = &VariableDecl> {
        self.variables.values()
    }

    /// Resolves a function name in the container.
    pub fn lookup_function(&self, name: &str) -> Option<&FunctionDecl> {
        self.container
            .resolve_candidates(name)
            .iter()
            .find_map(|c| self.functions.get(c))
    }

    /// Whether the checker may choose an overload (cross-type comparisons can be disabled).
    pub fn overload_enabled(&self, id: &str) -> bool {
        !self.disabled_overloads.contains(id)
    }

    /// A type declared by name: a message or enum type from the provider, or a well-known
    /// protobuf type.
    pub(crate) fn find_type(&self, name: &str) -> Option<Type> {
        self.provider
            .find_type(name)
            .or_else(|| Type::well_known(name))
    }
}
