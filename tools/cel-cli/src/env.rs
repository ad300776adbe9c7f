//! The environment a command compiles in: `--profile`, `--decl`, `--container`, `--proto`,
//! and variables' values from JSON.

use celerity::kubernetes::{self, KubernetesEnv};
use celerity::{DescriptorPool, Env, EnvBuilder, EnvOptions, MapActivation, Type, Value};

#[derive(clap::Args, Debug, Clone)]
pub(crate) struct EnvArgs {
    /// Declare a variable: `name:type`, the type written as cel-go writes it (`list(int)`).
    #[arg(long = "decl", value_name = "NAME:TYPE")]
    pub(crate) decls: Vec<String>,
    /// The container names are resolved in.
    #[arg(long)]
    pub(crate) container: Option<String>,
    /// An environment profile: `default` (every cel-go extension library) or
    /// `kubernetes[=VERSION]`, what the API server of that Kubernetes release (1.30 to 1.37;
    /// default: the newest released version) does with a new expression: the libraries of
    /// its compatibility version (the previous minor's), its options (homogeneous literals,
    /// cross-type comparisons, literal validators, OptOptimize, free presence tests),
    /// Kubernetes' costs, the per-call cost limit of 1,000,000, and the behaviour of the
    /// cel-go it pins. The `authorizer` variable is declared and bound to an authorizer
    /// that allows everything.
    #[arg(long, value_name = "PROFILE")]
    pub(crate) profile: Option<String>,
    /// With `--profile kubernetes`: the environment for stored expressions (everything the
    /// release knows, not removed) instead of new ones.
    #[arg(long)]
    pub(crate) stored: bool,
    /// A `.proto` file whose messages and enums expressions may use (repeatable). A variable
    /// declared with a message type (`--decl item:shop.Item`) takes its value as that
    /// message's protobuf JSON.
    #[arg(long = "proto", value_name = "FILE.proto")]
    pub(crate) protos: Vec<String>,
    /// Where `--proto` files and their imports are found (repeatable; default: the current
    /// directory). The well-known types are built in.
    #[arg(long = "proto-path", value_name = "DIR")]
    pub(crate) proto_paths: Vec<String>,
}

impl EnvArgs {
    /// The descriptors of the `--proto` files, compiled; `None` without any.
    pub(crate) fn descriptor_pool(&self) -> Result<Option<DescriptorPool>, String> {
        if self.protos.is_empty() {
            return Ok(None);
        }
        // protox reads the files itself: make sure each is a regular file of a sane size first
        // (`--proto /dev/zero` would otherwise be read until memory runs out).
        for p in &self.protos {
            let candidates = std::iter::once(std::path::PathBuf::from(p)).chain(
                self.proto_paths
                    .iter()
                    .map(|d| std::path::Path::new(d).join(p)),
            );
            for c in candidates {
                if let Ok(meta) = std::fs::metadata(&c) {
                    if !meta.is_file() {
                        return Err(format!("--proto {p}: not a regular file"));
                    }
                    if meta.len() > crate::input::MAX_FILE_BYTES {
                        return Err(format!("--proto {p}: larger than 64 MiB"));
                    }
                }
            }
        }
        let includes: Vec<&str> = if self.proto_paths.is_empty() {
            vec!["."]
        } else {
            self.proto_paths.iter().map(String::as_str).collect()
        };
        let mut compiler = protox::Compiler::new(includes).map_err(|e| e.to_string())?;
        compiler.include_imports(true);
        compiler
            .open_files(&self.protos)
            .map_err(|e| format!("--proto: {e}"))?;
        Ok(Some(compiler.descriptor_pool()))
    }
}

/// A variable's value from JSON: protobuf's JSON form of the message, for a variable declared
/// with a message type the descriptors know; for another declared variable, its JSON read as
/// its type ([`celerity::variable_from_json`]: RFC 3339 timestamps, `"1h30m"` durations,
/// base64 bytes, ...; JSON that does not fit is an error); CEL's untyped JSON mapping for an
/// undeclared one. Errors name the variable (`variable 'y': expected int, got string "str"`).
pub(crate) fn json_variable(
    name: &str,
    json: &serde_json::Value,
    decls: &[(String, Type)],
    pool: Option<&DescriptorPool>,
) -> Result<Value, String> {
    let declared = decls.iter().find(|(n, _)| n == name).map(|(_, t)| t);
    let message = declared.and_then(|t| match t {
        Type::Message(m) => pool.and_then(|p| p.get_message_by_name(m)),
        _ => None,
    });
    match (message, declared) {
        (Some(d), _) => {
            let m = prost_reflect::DynamicMessage::deserialize(d, json)
                .map_err(|e| format!("variable '{name}': {e}"))?;
            celerity::proto::from_message(m)
                .map_err(|e| format!("variable '{name}': {}", e.message))
        }
        (None, Some(ty)) => celerity::variable_from_json(name, json, ty).map_err(|e| e.to_string()),
        (None, None) => {
            celerity::value_from_json(json).map_err(|e| format!("variable '{name}': {e}"))
        }
    }
}

/// An environment profile.
#[derive(Clone, Debug)]
pub(crate) enum Profile {
    /// cel-go's defaults with every extension library, with these options.
    Default(EnvOptions),
    /// A Kubernetes environment, with an optional cost limit replacing Kubernetes'.
    Kubernetes(KubernetesEnv, Option<Option<u64>>),
}

impl Profile {
    /// The profile a `--profile` value (`default`, `kubernetes`, `kubernetes=1.34`) and
    /// `--stored` name, or an error.
    pub(crate) fn parse(profile: Option<&str>, stored: bool) -> Result<Profile, String> {
        let p = match profile {
            None | Some("cel-go") | Some("default") => Profile::Default(EnvOptions::default()),
            Some("kubernetes") => Profile::Kubernetes(KubernetesEnv::default(), None),
            Some(p) if p.starts_with("kubernetes=") => {
                let version = &p["kubernetes=".len()..];
                Profile::Kubernetes(KubernetesEnv::parse(version)?, None)
            }
            Some(other) => {
                return Err(format!(
                    "unknown profile '{other}' (known: default, kubernetes, kubernetes=VERSION)"
                ));
            }
        };
        match (p, stored) {
            (Profile::Kubernetes(k, l), true) => Ok(Profile::Kubernetes(k.stored(), l)),
            (Profile::Default(_), true) => {
                Err("--stored applies to --profile kubernetes only".to_string())
            }
            (p, false) => Ok(p),
        }
    }

    /// The Kubernetes environment, for the Kubernetes profile.
    pub(crate) fn kubernetes(&self) -> Option<&KubernetesEnv> {
        match self {
            Profile::Kubernetes(k, _) => Some(k),
            Profile::Default(_) => None,
        }
    }

    /// Replaces the profile's cost limit.
    pub(crate) fn set_cost_limit(&mut self, limit: Option<u64>) {
        match self {
            Profile::Default(o) => o.cost_limit = limit,
            Profile::Kubernetes(_, l) => *l = Some(limit),
        }
    }

    /// A builder holding the profile's environment.
    pub(crate) fn builder(&self) -> EnvBuilder {
        match self {
            Profile::Default(o) => Env::builder().options(o.clone()).all_extension_libraries(),
            Profile::Kubernetes(k, limit) => {
                let b = k.builder();
                match limit {
                    Some(l) => b.cost_limit(*l),
                    None => b,
                }
            }
        }
    }

    /// Variables the profile binds before the user's: Kubernetes' `authorizer`, allowing
    /// everything, where the environment declares it.
    pub(crate) fn bind_defaults(&self, env: &Env, act: &mut MapActivation) {
        if matches!(self, Profile::Kubernetes(..))
            && env
                .variables()
                .iter()
                .any(|v| v.name == kubernetes::AUTHORIZER_VARIABLE)
        {
            act.bind(
                kubernetes::AUTHORIZER_VARIABLE,
                kubernetes::allow_all_authorizer(),
            );
        }
    }
}

/// Builds an environment with the given declarations; variables bound without a
/// declaration are declared `dyn`.
pub(crate) fn build_env(
    decls: &[(String, Type)],
    undeclared: impl IntoIterator<Item = String>,
    container: Option<&str>,
    profile: &Profile,
    pool: Option<&DescriptorPool>,
) -> Env {
    let mut b = profile.builder();
    if let Some(pool) = pool {
        b = b.descriptor_pool(pool.clone());
    }
    for (name, ty) in decls {
        b = b.variable(name, ty.clone());
    }
    for name in undeclared {
        if !decls.iter().any(|(n, _)| *n == name) {
            b = b.variable(&name, Type::Dyn);
        }
    }
    if let Some(c) = container {
        b = b.container(c);
    }
    b.build()
}

/// The environment of `check` and `cost`: the declarations, the container, the profile and
/// the `--proto` files.
pub(crate) fn declared_env(
    args: &EnvArgs,
    decls: &[(String, Type)],
    profile: &Profile,
) -> Result<Env, String> {
    let pool = args.descriptor_pool()?;
    Ok(build_env(
        decls,
        Vec::new(),
        args.container.as_deref(),
        profile,
        pool.as_ref(),
    ))
}

pub(crate) fn parse_decls(decls: &[String]) -> Result<Vec<(String, Type)>, String> {
    decls
        .iter()
        .map(|d| {
            let (name, ty) = d
                .split_once(':')
                .ok_or_else(|| format!("--decl '{d}': expected NAME:TYPE"))?;
            let ty = Type::parse(ty.trim()).map_err(|e| format!("--decl '{d}': {e}"))?;
            Ok((name.trim().to_string(), ty))
        })
        .collect()
}
