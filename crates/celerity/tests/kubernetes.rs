//! The Kubernetes environment through the facade: what each version and expression kind
//! enables, the types as Kubernetes names them, Kubernetes' costs and its cost limit.

use std::sync::Arc;

use celerity::kubernetes::{
    self, ExpressionKind, KubeVersion, KubernetesEnv, LibraryRef, NEWEST_VERSION,
};
use celerity::{Env, MapActivation, NoSizes, SizeRange, Type, Value};

fn v(minor: u32) -> KubeVersion {
    KubeVersion::new(1, minor)
}

fn eval(env: &Env, expr: &str) -> (Result<Value, celerity::EvalError>, u64) {
    let ast = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let mut act = MapActivation::new();
    act.bind(
        kubernetes::AUTHORIZER_VARIABLE,
        kubernetes::allow_all_authorizer(),
    );
    let (r, d) = env.program(&ast).unwrap().eval_details(&act);
    (r, d.actual_cost)
}

#[test]
fn each_version_enables_what_its_profile_says() {
    // (expression, the first compatibility version whose new-expressions environment
    // accepts it)
    let cases = [
        ("isURL('https://k8s.io')", 23),
        ("[1, 2].isSorted()", 23),
        ("'a 1'.find('[0-9]') == '1'", 23),
        ("'abc'.indexOf('c') == 2", 23),
        ("authorizer.path('/healthz').check('get').allowed()", 27),
        ("1.5 > 1", 28),
        ("optional.of(1).hasValue()", 28),
        ("quantity('1') == quantity('1000m')", 28),
        (
            "optional.of(1).optFlatMap(x, optional.of(x)) == optional.of(1)",
            28,
        ),
        ("sets.contains([1], [1])", 29),
        ("ip('10.0.0.1').family() == 4", 30),
        (
            "format.dns1123Label().validate('a').hasValue() == false",
            31,
        ),
        ("[1].all(i, v, v > 0)", 32),
        ("semver('1.0.0', true).major() == 1", 33),
        ("lists.range(2) == [0, 1]", 34),
        ("[1, 2].includes(1)", 37),
    ];
    for (expr, since) in cases {
        // (Kubernetes' table starts its first entries at 1.0; CEL arrived in 1.23.)
        let before = (since > 23).then_some(since - 1);
        for minor in before.into_iter().chain([since]) {
            let env = KubernetesEnv::newest().compatibility(v(minor)).build();
            let ok = env.compile(expr).is_ok();
            assert_eq!(ok, minor >= since, "{expr} at compatibility 1.{minor}");
            if ok {
                assert_eq!(eval(&env, expr).0.unwrap(), Value::Bool(true), "{expr}");
            }
        }
        // The API server of a release compiles new expressions one minor below it...
        if (30..37).contains(&since) {
            let new = |minor| Env::kubernetes(v(minor), ExpressionKind::NewExpressions);
            assert!(new(since).compile(expr).is_err(), "{expr} new at 1.{since}");
            assert!(
                new(since + 1).compile(expr).is_ok(),
                "{expr} new at 1.{}",
                since + 1
            );
        }
        // ...and stored expressions with everything the release has.
        let stored = Env::kubernetes(NEWEST_VERSION, ExpressionKind::StoredExpressions);
        assert!(stored.compile(expr).is_ok(), "{expr} stored");
    }
    // The optional library is the newest the release's cel-go knows, in both environments:
    // cel-go v0.23 (Kubernetes 1.33) added `first`, `last`, `optional.unwrap`, `unwrapOpt`.
    for expr in [
        "[1, 2, 3].first() == optional.of(1)",
        "[1, 2, 3].last() == optional.of(3)",
        "optional.unwrap([optional.of(1), optional.none()]) == [1]",
        "[optional.none(), optional.of(2)].unwrapOpt() == [2]",
    ] {
        for kind in [
            ExpressionKind::NewExpressions,
            ExpressionKind::StoredExpressions,
        ] {
            assert!(
                Env::kubernetes(v(32), kind).compile(expr).is_err(),
                "{expr} 1.32"
            );
            let env = Env::kubernetes(v(33), kind);
            assert_eq!(eval(&env, expr).0.unwrap(), Value::Bool(true), "{expr}");
        }
    }
    // Literal validators from 1.29.
    let bad = "duration('1x') > duration('1s')";
    let at = |minor| KubernetesEnv::newest().compatibility(v(minor)).build();
    assert!(at(28).compile(bad).is_ok());
    assert!(at(29).compile(bad).is_err());
    // No bindings, math or base64 in Kubernetes.
    let newest = KubernetesEnv::newest().build();
    for expr in ["cel.bind(x, 1, x)", "math.abs(-1)", "base64.encode(b'a')"] {
        assert!(newest.compile(expr).is_err(), "{expr}");
    }
    // JSON Patch only on request (mutating admission policies).
    assert!(newest.compile("jsonpatch.escapeKey('a/b')").is_err());
    let patch = KubernetesEnv::newest().with_jsonpatch(true).build();
    assert!(patch.compile("jsonpatch.escapeKey('a/b')").is_ok());
}

#[test]
fn profile_and_options() {
    // cel-go's lists library arrived in 1.34: a 1.35 server has it for new expressions.
    let k = KubernetesEnv::parse("1.35").unwrap();
    assert_eq!(k.version(), v(35));
    assert_eq!(k.expression_kind(), ExpressionKind::NewExpressions);
    let p = k.profile();
    assert!(p.libraries.contains(&LibraryRef::CelExt {
        name: "lists",
        version: 3
    }));
    assert!(p.libraries.contains(&LibraryRef::Kubernetes {
        name: "kubernetes.lists",
        version: 0
    }));
    assert_eq!(p.release, v(35));
    assert_eq!(p.compatibility, v(34));
    let p = KubernetesEnv::newest().stored().profile();
    assert!(p.libraries.contains(&LibraryRef::Kubernetes {
        name: "kubernetes.lists",
        version: 1
    }));
    let env = k.build();
    assert_eq!(env.options().cost_limit, Some(1_000_000));
    assert!(env.options().optimize && !env.options().presence_test_has_cost);
    assert_eq!(
        KubernetesEnv::default().version(),
        kubernetes::DEFAULT_VERSION
    );
    assert!(KubernetesEnv::parse("1.2").is_err());
    assert!(KubernetesEnv::parse("1.29").is_err());
}

#[test]
fn types_are_named_as_kubernetes_names_them() {
    let env = KubernetesEnv::newest().build();
    for (expr, name) in [
        ("quantity('1')", "kubernetes.Quantity"),
        ("ip('10.0.0.1')", "net.IP"),
        ("cidr('10.0.0.0/8')", "net.CIDR"),
        ("url('https://k8s.io')", "kubernetes.URL"),
        ("semver('1.0.0')", "kubernetes.Semver"),
        ("format.dns1123Label()", "kubernetes.NamedFormat"),
        ("authorizer", "kubernetes.authorization.Authorizer"),
        ("authorizer.path('/')", "kubernetes.authorization.PathCheck"),
        (
            "authorizer.path('/').check('get')",
            "kubernetes.authorization.Decision",
        ),
    ] {
        let ast = env.compile(expr).unwrap();
        assert_eq!(ast.result_type().unwrap().to_string(), name, "{expr}");
        let (value, _) = eval(&env, expr);
        assert_eq!(value.unwrap().type_of().to_string(), name, "{expr}");
        // `type(x)` compares with the type's name.
        let (same, _) = eval(&env, &format!("type({expr}) == {name}"));
        assert_eq!(same.unwrap(), Value::Bool(true), "{expr}");
    }
}

#[test]
fn kubernetes_costs_and_limit() {
    let env = KubernetesEnv::newest().build();
    // cost_test.go: 'abc 123 def 123'.find('123') is 2 both ways.
    let ast = env.compile("'abc 123 def 123'.find('123')").unwrap();
    let est = env.estimate_cost(&ast, &NoSizes).unwrap();
    assert_eq!((est.min, est.max), (2, 2));
    assert_eq!(eval(&env, "'abc 123 def 123'.find('123')").1, 2);
    // Two authorization checks fit the per-call limit; three do not.
    let two = "authorizer.path('/a').check('get').allowed() && authorizer.path('/b').check('get').allowed()";
    assert_eq!(eval(&env, two), (Ok(Value::Bool(true)), 700_006));
    let three = format!("{two} && authorizer.path('/c').check('get').allowed()");
    let (r, _) = eval(&env, &three);
    assert_eq!(
        r.unwrap_err().to_string(),
        "operation cancelled: actual cost limit exceeded"
    );
    // Element sizes for Kubernetes' list-function estimates, as a schema would give them.
    let l = "l.max()";
    let plain = KubernetesEnv::newest()
        .builder()
        .variable("l", Type::list(Type::String))
        .build();
    let sized = KubernetesEnv::newest()
        .with_element_sizes(Arc::new(|t: &Type| {
            (*t == Type::String).then_some(SizeRange { min: 0, max: 20 })
        }))
        .builder()
        .variable("l", Type::list(Type::String))
        .build();
    let hints = celerity::PathSizes([("l".to_string(), SizeRange { min: 0, max: 5 })].into());
    let e1 = plain
        .estimate_cost(&plain.compile(l).unwrap(), &hints)
        .unwrap();
    let e2 = sized
        .estimate_cost(&sized.compile(l).unwrap(), &hints)
        .unwrap();
    // 5 elements × (1 + ceil(0.1 × 20)) + 1 for `l`, against an unknown element size.
    assert_eq!((e2.min, e2.max), (1, 16));
    assert!(e1.max > e2.max);
}

#[test]
fn library_values_print_as_the_cel_that_rebuilds_them() {
    let env = KubernetesEnv::newest().build();
    let cases = [
        ("quantity('50k').add(quantity('20k'))", r#"quantity("70k")"#),
        ("quantity('1.5Gi')", r#"quantity("1.5Gi")"#),
        (
            "quantity('1.5').sub(quantity('0.25'))",
            r#"quantity("1.25")"#,
        ),
        ("quantity('1').add(quantity('1m'))", r#"quantity("1001m")"#),
        ("quantity('1e1').add(quantity('5e1'))", r#"quantity("6e1")"#),
        ("ip('2001:DB8::1')", r#"ip("2001:db8::1")"#),
        ("cidr('192.168.0.1/24')", r#"cidr("192.168.0.1/24")"#),
        (
            "semver('1.2.3-rc.1+build.5')",
            r#"semver("1.2.3-rc.1+build.5")"#,
        ),
        (
            "url('https://k8s.io/a?b=c')",
            r#"url("https://k8s.io/a?b=c")"#,
        ),
        ("format.named('uuid').value()", "format.uuid()"),
        ("authorizer", "authorizer"),
        (
            "authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').subresource('scale').namespace('ns').name('web')",
            r#"authorizer.serviceAccount("ns", "sa").group("apps").resource("deployments").subresource("scale").namespace("ns").name("web")"#,
        ),
        (
            "authorizer.path('/healthz').check('get')",
            r#"authorizer.path("/healthz").check("get")"#,
        ),
        (
            "[quantity('1'), quantity('2')]",
            r#"[quantity("1"), quantity("2")]"#,
        ),
        ("{'a': ip('::1')}", r#"{"a": ip("::1")}"#),
        (
            "optional.of(semver('1.0.0'))",
            r#"optional.of(semver("1.0.0"))"#,
        ),
    ];
    for (expr, printed) in cases {
        let v = eval(&env, expr).0.unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(celerity::to_cel_literal(&v), printed, "{expr}");
        assert_eq!(v.to_string(), printed, "{expr}");
        if let Value::Opaque(_) = v {
            // JSON has no such values: the same text, as a string.
            assert_eq!(
                celerity::value_to_json(&v).unwrap(),
                serde_json::Value::String(printed.to_string()),
                "{expr}"
            );
        }
        // The printed text evaluates to a value that prints the same.
        let again = eval(&env, printed)
            .0
            .unwrap_or_else(|e| panic!("{printed}: {e}"));
        assert_eq!(celerity::to_cel_literal(&again), printed, "{printed}");
    }
    // Values that compare by value are equal to their printed form.
    for expr in [
        "quantity('1.5').sub(quantity('0.25'))",
        "ip('::1')",
        "semver('1.0.0+x')",
    ] {
        let printed = celerity::to_cel_literal(&eval(&env, expr).0.unwrap());
        let same = format!("{printed} == {expr}");
        assert_eq!(eval(&env, &same).0.unwrap(), Value::Bool(true), "{same}");
    }
    // Error messages show values the same way.
    let err = eval(&env, "optional.unwrap([dyn(quantity('1'))])")
        .0
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(r#"value quantity("1") is not optional"#),
        "{err}"
    );
}
