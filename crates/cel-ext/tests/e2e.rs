//! The extension libraries end to end, through the facade: parse (macros), check
//! (declarations), plan and evaluate (implementations).

use celerity::{Env, Library, MapActivation, Value};

fn env_with(libs: Vec<Box<dyn Library>>) -> Env {
    let mut b = Env::builder();
    for l in libs {
        b = b.library(Boxed(l));
    }
    b.build()
}

#[derive(Debug)]
struct Boxed(Box<dyn Library>);

impl Library for Boxed {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn contents(&self) -> celerity::LibraryContents {
        self.0.contents()
    }
}

fn all() -> Env {
    Env::builder().all_extension_libraries().build()
}

fn run(env: &Env, expr: &str) -> Result<Value, String> {
    let ast = env.compile(expr).map_err(|e| format!("compile: {e}"))?;
    let program = env.program(&ast).map_err(|e| format!("program: {e}"))?;
    program
        .eval(&MapActivation::new())
        .map_err(|e| format!("eval: {e}"))
}

#[track_caller]
fn check_true(env: &Env, expr: &str) {
    match run(env, expr) {
        Ok(Value::Bool(true)) => {}
        other => panic!("{expr}: {other:?}"),
    }
}

#[track_caller]
fn check_err(env: &Env, expr: &str, want: &str) {
    match run(env, expr) {
        Err(e) if e.contains(want) => {}
        other => panic!("{expr}: expected an error containing {want:?}, got {other:?}"),
    }
}

#[test]
fn strings() {
    let env = all();
    for e in [
        "'hello'.charAt(4) == 'o' && 'hello'.charAt(5) == ''",
        "'hello mellow'.indexOf('ello', 2) == 7",
        "'hello mellow'.lastIndexOf('ello', 6) == 1",
        "'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'",
        "'aaa'.replace('', '-') == '-a-a-a-'",
        "'a,b,,c'.split(',') == ['a', 'b', '', 'c'] && ''.split('').size() == 0",
        "'tacocat'.substring(0, 4) == 'taco'",
        "'\\u00a0x\\u2003'.trim() == 'x'",
        "['a', 'b'].join('-') == 'a-b' && [].join() == ''",
        "'Ta©oCαt'.reverse() == 'tαCo©aT'",
        "strings.quote('\\t').size() == 4",
        "'%d %s %.2f %e %x %o %b'.format([1, 'a', 2.5, 1000.0, 255, 8, true]) == '1 a 2.50 1.000000e+03 ff 10 1'",
        "'%s'.format([{'b': 1, 'a': [2.0, null]}]) == '{a: [2, null], b: 1}'",
        "'%s'.format([duration('90s')]) == '90s'",
    ] {
        check_true(&env, e);
    }
    check_err(
        &env,
        "'tacocat'.substring(4, 3)",
        "invalid substring range. start: 4, end: 3",
    );
    check_err(&env, "'tacocat'.charAt(30)", "index out of range: 30");
    check_err(&env, "'%d'.format([duration('1s')])", "decimal clause");
    // Version 2 (Kubernetes) has no reverse and no format precision cap of 100.
    let v2 = env_with(vec![Box::new(cel_ext::Strings::version(2))]);
    assert!(run(&v2, "'abc'.reverse()").is_err());
    check_true(&v2, "'%.150f'.format([1.0]).size() == 152");
    check_err(
        &env,
        "'%.150f'.format([1.0])",
        "exceeds maximum allowed precision 100",
    );
}

#[test]
fn math() {
    let env = all();
    for e in [
        "math.greatest(1, 2.5, 3u) == 3u",
        "type(math.greatest(1, 2.5, 3u)) == uint",
        "math.least([-42.0, -21.5, -100.0]) == -100.0",
        "math.greatest(5) == 5",
        "math.round(-2.5) == -3.0 && math.trunc(-1.7) == -1.0",
        "math.abs(-11) == 11 && math.sign(-32.0) == -1.0",
        "math.bitShiftRight(-1, 1) == 9223372036854775807",
        "math.bitShiftLeft(1u, 200) == 0u",
        "math.isNaN(math.sqrt(-1)) && math.sqrt(4) == 2.0",
    ] {
        check_true(&env, e);
    }
    check_err(
        &env,
        "math.greatest()",
        "math.greatest() requires at least one argument",
    );
    check_err(
        &env,
        "math.least('a')",
        "math.least() invalid single argument value",
    );
    check_err(
        &env,
        "math.greatest(1, 'a')",
        "math.greatest() simple literal arguments must be numeric",
    );
    check_err(&env, "math.abs(-9223372036854775808)", "integer overflow");
    check_err(
        &env,
        "math.bitShiftLeft(1, -1)",
        "math.bitShiftLeft() negative offset: -1",
    );
    check_err(
        &env,
        "math.greatest(dyn([]))",
        "math.@max(list) argument must not be empty",
    );
    let v0 = env_with(vec![Box::new(cel_ext::Math::version(0))]);
    check_true(&v0, "math.least(3, 1) == 1");
    assert!(run(&v0, "math.ceil(1.2)").is_err());
}

#[test]
fn bindings() {
    let env = all();
    check_true(&env, "cel.bind(a, 'hello', a + a) == 'hellohello'");
    check_true(&env, "cel.bind(y, 0, cel.bind(y, 1, y != 0))");
    check_true(&env, "cel.bind(a, 1, cel.bind(b, a + 1, [a, b])) == [1, 2]");
    check_err(
        &env,
        "cel.bind(a.b, 1, 2)",
        "cel.bind() variable names must be simple identifiers",
    );
    // An unused binding is never evaluated.
    check_true(&env, "cel.bind(x, 1 / 0, true)");
}

#[test]
fn encoders() {
    let env = all();
    check_true(&env, "base64.encode(b'hello') == 'aGVsbG8='");
    check_true(&env, "base64.decode('aGVsbG8') == b'hello'");
    check_err(
        &env,
        "base64.decode('a')",
        "illegal base64 data at input byte 0",
    );
}

#[test]
fn lists() {
    let env = all();
    for e in [
        "[1, 2, 3, 4].slice(1, 3) == [2, 3]",
        "[1, [2, [3, [4]]]].flatten(2) == [1, 2, 3, [4]]",
        "[1, [2, 3], [4]].flatten() == [1, 2, 3, 4]",
        "['b', 'c', 'a'].sort() == ['a', 'b', 'c']",
        "[-3, 1, 2].sortBy(x, math.abs(x)) == [1, 2, -3]",
        "[{'x': 4}, {'x': 3}].sortBy(m, m['x']) == [{'x': 3}, {'x': 4}]",
        "lists.range(4) == [0, 1, 2, 3]",
        "[5, 3, 1, 2].reverse() == [2, 1, 3, 5]",
        "[1, 2, 2, 1.0].distinct() == [1, 2]",
    ] {
        check_true(&env, e);
    }
    check_err(
        &env,
        "[1, 2, 3, 4].slice(1, 5)",
        "cannot slice(1, 5), list is length 4",
    );
    check_err(&env, "[1, [2]].flatten(-1)", "level must be non-negative");
    check_err(&env, "[1, 'b'].sort()", "");
    check_err(
        &env,
        "lists.range(-1)",
        "lists.range: size must be non-negative, got -1",
    );
    check_err(
        &env,
        "lists.range(9223372036854775807)",
        "exceeds maximum allowed (10000000)",
    );
    check_err(&env, "1.sortBy(x, x)", "sortBy can only be applied to");
}

#[test]
fn sets() {
    let env = all();
    check_true(&env, "sets.contains([1, 2, 3], [3u, 2.0])");
    check_true(
        &env,
        "sets.equivalent([1, 1], [1]) && !sets.intersects([], [])",
    );
    check_true(&env, "sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])");
}

#[test]
fn regex() {
    let env = all();
    check_true(&env, "regex.replace('banana', 'a', 'x', 2) == 'bxnxna'");
    check_true(
        &env,
        r"regex.replace('foo bar', '(fo)o (ba)r', '\\2 \\1') == 'ba fo'",
    );
    check_true(
        &env,
        r"regex.extract('item-A, item-B', 'item-(\\w+)') == optional.of('A')",
    );
    check_true(&env, "regex.extract('HELLO', 'hello') == optional.none()");
    check_true(
        &env,
        r"regex.extractAll('id:123, id:456', 'id:\\d+') == ['id:123', 'id:456']",
    );
    check_err(
        &env,
        "regex.extract('a', '(a)(b)')",
        "more than one capturing group",
    );
    check_err(
        &env,
        "regex.replace('a', '(', 'x')",
        "error parsing regexp: missing closing )",
    );
}

#[test]
fn network() {
    let env = all();
    for e in [
        "string(ip('192.168.0.1')) == '192.168.0.1'",
        "ip('2001:DB8::1') == ip('2001:db8::1')",
        "isIP('1.2.3.4') && !isIP('1.2.3.4.5') && !isIP('::ffff:1.2.3.4')",
        "!ip.isCanonical('2001:DB8::68') && ip.isCanonical('::1')",
        "ip('::1').family() == 6 && ip('127.0.0.1').isLoopback()",
        "cidr('192.168.0.0/24').containsIP('192.168.0.1')",
        "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))",
        "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
        "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
        "cidr('2001:db8::/32').prefixLength() == 32",
        "string(cidr('2001:db8::/32')) == '2001:db8::/32'",
        "type(ip('1.2.3.4')) == type(ip('::1')) && type(ip('1.2.3.4')) != type(cidr('::/0'))",
        "'%s'.format([type(ip('1.2.3.4'))]) == 'net.IP'",
    ] {
        check_true(&env, e);
    }
    check_err(&env, "ip('fe80::1%en0')", "with zone value is not allowed");
    check_err(&env, "ip('::ffff:192.168.0.1')", "IPv4-mapped IPv6 address");
    check_err(&env, "cidr('192.168.0.0/')", "bad bits after slash");
    assert!(
        run(&env, "isIP(cidr('10.0.0.0/8'))")
            .unwrap_err()
            .starts_with("compile")
    );
}

#[test]
fn no_panics_on_bad_input() {
    let env = all();
    for e in [
        "'%'.format([])",
        "'%.'.format([1])",
        "'%.99999999999999999999999f'.format([1])",
        "'%.1100f'.format([1e308])",
        "'%.1e'.format([5e-324])",
        "'%s'.format([[[[[]]]]])",
        "'abc'.substring(-9223372036854775808, 9223372036854775807)",
        "'abc'.charAt(9223372036854775807)",
        "'abc'.indexOf('', 9223372036854775807)",
        "'abc'.lastIndexOf('c', 9223372036854775807)",
        "'abc'.replace('', 'x', -9223372036854775808)",
        "'abc'.split('', 9223372036854775807)",
        "base64.decode('====')",
        "base64.decode('\\n\\r')",
        "regex.replace('x', '(?P<', 'y')",
        "regex.extractAll('aaaa', '')",
        "lists.range(-9223372036854775808)",
        "[1].slice(9223372036854775807, 9223372036854775807)",
        "[[1]].flatten(9223372036854775807)",
        "ip('::::::::')",
        "cidr('1.2.3.4/-0')",
        "math.bitShiftLeft(1, 9223372036854775807)",
        "math.greatest([dyn(double('NaN')), dyn(1)])",
    ] {
        let _ = run(&env, e);
    }
}
