//! Building environments: a child environment extends its parent without changing it, and
//! declarations that contradict each other are refused rather than one of them winning.

use celerity::kubernetes::KubernetesEnv;
use celerity::{Env, FunctionDecl, OverloadDecl, Type};

#[test]
fn a_child_environment_adds_to_its_parent() {
    let parent = KubernetesEnv::newest()
        .builder()
        .variable("x", Type::Int)
        .build();
    let child = parent
        .extend()
        .variable("y", Type::Int)
        .host_function("twice", |n: i64| n * 2)
        .build();
    // The child has the parent's variables and libraries and its own declarations...
    assert!(
        child
            .compile("twice(x + y) > 0 && quantity('1Gi').isGreaterThan(quantity('1M'))")
            .is_ok()
    );
    // ...and the parent is unchanged.
    assert!(parent.compile("y").is_err());
    assert!(parent.compile("twice(1)").is_err());
    assert_eq!(parent.options().cost_limit, child.options().cost_limit);
}

#[test]
fn conflicting_overloads_are_refused() {
    let decl = |name: &str, id: &str, result: Type| {
        FunctionDecl::new(
            name,
            vec![OverloadDecl::global(id, vec![Type::Int], result)],
        )
    };
    // The same id with another signature.
    let err = Env::builder()
        .declare_function(decl("f", "f_int", Type::Int))
        .declare_function(decl("f", "f_int", Type::String))
        .try_build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overload 'f_int' of 'f' is declared with two signatures"
    );
    // The same id under two names, one of them standard.
    let err = Env::builder()
        .declare_function(decl("g", "add_int64", Type::Int))
        .try_build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overload 'add_int64' is declared for '_+_' and for 'g'"
    );
    // The same declaration twice is no conflict.
    let env = Env::builder()
        .declare_function(decl("f", "f_int", Type::Int))
        .declare_function(decl("f", "f_int", Type::Int))
        .try_build()
        .expect("no conflict");
    assert!(env.compile("f(1)").is_ok());
}

#[test]
#[should_panic(expected = "conflicting declarations: overload 'f_int' of 'f'")]
fn build_panics_on_a_conflict() {
    let decl = |result: Type| {
        FunctionDecl::new(
            "f",
            vec![OverloadDecl::global("f_int", vec![Type::Int], result)],
        )
    };
    let _ = Env::builder()
        .declare_function(decl(Type::Int))
        .declare_function(decl(Type::Bool))
        .build();
}

#[test]
fn every_kubernetes_environment_is_free_of_conflicts() {
    use celerity::kubernetes::{ExpressionKind, KubeVersion};
    for minor in 23..=KubeVersion::NEWEST.minor {
        for kind in [
            ExpressionKind::NewExpressions,
            ExpressionKind::StoredExpressions,
        ] {
            let built = KubernetesEnv::new(KubeVersion::new(1, minor))
                .kind(kind)
                .builder()
                .all_extension_libraries()
                .try_build();
            if let Err(e) = built {
                panic!("1.{minor} {kind:?}: {e}");
            }
        }
    }
}
