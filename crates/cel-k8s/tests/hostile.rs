//! Hostile inputs: every parser rejects or accepts quickly, without panicking or allocating
//! without bound.

use std::time::{Duration, Instant};

use cel_k8s::quantity::Quantity;
use cel_k8s::{format, semver, urls};
use cel_runtime::Value;

fn quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let r = f();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{what} took {:?}",
        start.elapsed()
    );
    r
}

#[test]
fn absurd_quantities() {
    for s in [
        "1e2147483647",
        "1e-2147483648",
        "1e9223372036854775807",
        "12345678901234567890e2147483647",
        "12345678901234567890e-2147483647",
        "0e999999999",
        "-1e999999999",
        "9999999999999999999999999999999999999Ei",
        "1e4294967296",
        "1.5e-2147483648",
    ] {
        let q = quick(s, || Quantity::parse(s));
        if let Ok(q) = q {
            quick(s, || {
                let _ = q.as_i64();
                let _ = q.as_approximate_f64();
                let _ = q.cmp_exact(&Quantity::parse("1.5Gi").unwrap());
                let _ = q.add(&Quantity::parse("1.5Gi").unwrap());
                let _ = q.sub(&Quantity::from_i64(i64::MIN));
            });
        }
    }
    let digits = "9".repeat(200_000);
    let q = quick("long", || Quantity::parse(&digits)).unwrap();
    quick("long ops", || {
        let _ = q.as_approximate_f64();
        let _ = q.add(&q);
    });
}

#[test]
fn long_and_odd_strings() {
    let long = "a".repeat(1 << 20);
    let weird = "%".repeat(10_000) + "\u{0}\u{7f}[]@:";
    for s in [
        long.as_str(),
        weird.as_str(),
        "",
        "\u{ffff}",
        "[",
        "http://[",
        "http://@",
        "a:",
        "//",
    ] {
        quick("url", || {
            let _ = urls::parse_request_uri(s);
            let _ = urls::parse_url(s);
        });
        quick("semver", || {
            let _ = semver::parse(s);
            let _ = semver::normalize_and_parse(s);
        });
        quick("formats", || {
            for f in &format::FORMATS {
                let _ = f.validate(s);
            }
        });
        quick("quantity", || {
            let _ = Quantity::parse(s);
        });
    }
}

#[test]
fn deep_values_cost_without_recursion() {
    let mut v = Value::list(vec![Value::from("0123456789")]);
    for _ in 0..100_000 {
        v = Value::list(vec![v]);
    }
    assert_eq!(cel_k8s::cost::traversal_cost(&v), 1);
}
