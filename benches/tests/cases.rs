//! Every benchmark case gives its expected value and cel-go's cost on both backends, so the
//! benchmarks measure correct work.

use celerity::Backend;

#[test]
fn every_case_gives_the_expected_value_and_cel_go_cost_on_both_backends() {
    let cases = benches::cases();
    assert_eq!(cases.len(), 14);
    for case in &cases {
        let env = benches::env(case);
        let act = benches::activation(case);
        let want_cost = benches::cel_go_cost(&case.name).expect("a documented cost");
        for backend in [Backend::Interpreter, Backend::Jit] {
            let p = benches::program(&env, case, backend, true);
            assert_eq!(p.backend(), backend, "{}", case.name);
            let (r, d) = p.eval_details(&act);
            assert_eq!(
                r.as_ref().ok(),
                Some(&benches::expected(case)),
                "{} on {backend:?}: {r:?}",
                case.name
            );
            assert_eq!(d.actual_cost, want_cost, "{} on {backend:?}", case.name);
        }
        // Without cost tracking, the same value and no cost.
        let p = benches::program(&env, case, Backend::Jit, false);
        let (r, d) = p.eval_details(&act);
        assert_eq!(
            r.ok(),
            Some(benches::expected(case)),
            "{} untracked",
            case.name
        );
        assert_eq!(d.actual_cost, 0);
    }
}

#[test]
fn every_case_compiles_without_residuals() {
    for case in benches::cases() {
        let env = benches::env(&case);
        let p = benches::program(&env, &case, Backend::Jit, true);
        assert_eq!(p.residuals(), Some(0), "{}", case.name);
    }
}

/// Typed `self` gives the same values; costs may differ from the untyped cases' (cel-go
/// charges `e in list` by the list's size when the checker resolved the overload, 1 when it
/// dispatches dynamically), but both backends agree on them.
#[test]
fn typed_cases_give_the_expected_value_on_both_backends() {
    let mut typed = 0;
    for case in benches::cases() {
        let Some(t) = benches::typed(&case) else {
            continue;
        };
        typed += 1;
        let mut costs = Vec::new();
        for backend in [Backend::Interpreter, Backend::Jit] {
            let p = benches::program(&t.env, &case, backend, true);
            assert_eq!(p.backend(), backend, "{}", case.name);
            assert_eq!(p.residuals().unwrap_or(0), 0, "{}", case.name);
            let (r, d) = p.eval_details(&t.activation);
            assert_eq!(
                r.as_ref().ok(),
                Some(&benches::expected(&case)),
                "typed {} on {backend:?}: {r:?}",
                case.name
            );
            costs.push(d.actual_cost);
        }
        assert_eq!(costs[0], costs[1], "typed {}: costs", case.name);
    }
    // Every case but the baseline, `list_map_filter_literal`, `int_arith` and
    // `string_concat_eq` reads only `self`.
    assert_eq!(typed, 10);
}
