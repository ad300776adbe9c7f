//! End-to-end tests of the `cel` command.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(args)
        .output()
        .expect("run cel")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn eval_prints_value_and_type() {
    let o = cel(&["eval", "x + 1", "--var", "x=41"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "42 : int\n");
}

#[test]
fn values_print_as_cel_literals() {
    let o = cel(&[
        "eval",
        r#"[1u, 2.0, "s", b"\x00", {"b": 1, "a": 2}, duration("3s"), optional.of(1)]"#,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "[1u, 2.0, \"s\", b\"\\x00\", {\"a\": 2, \"b\": 1}, duration(\"3s\"), optional.of(1)] : list(dyn)\n"
    );
}

#[test]
fn declared_variables_are_checked() {
    let o = cel(&[
        "eval",
        "l[0] + 1",
        "--decl",
        "l:list(int)",
        "--var",
        "l=[1]",
    ]);
    assert_eq!(stdout(&o), "2 : int\n");
    let o = cel(&["check", "l[0] + 'a'", "--decl", "l:list(int)"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "ERROR: <input>:1:6: found no matching overload for '_+_' applied to '(int, string)'\n | l[0] + 'a'\n | .....^\n"
    );
}

#[test]
fn check_prints_the_type() {
    let o = cel(&["check", "size([1, 2]) > 1"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "bool\n");
}

#[test]
fn errors_exit_non_zero() {
    let o = cel(&["eval", "1 / 0"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "division by zero\n");
    let o = cel(&["eval", "1 +"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("ERROR: <input>:1:4: Syntax error"));
}

#[test]
fn json_output() {
    let o = cel(&[
        "eval",
        "self.replicas <= self.max",
        "--var",
        r#"self={"replicas": 3, "max": 5}"#,
        "--output",
        "json",
    ]);
    assert_eq!(
        stdout(&o),
        "{\"ok\":true,\"type\":\"bool\",\"value\":\"true\"}\n"
    );
}

#[test]
fn container_resolves_names() {
    let o = cel(&[
        "eval",
        "name",
        "--container",
        "a.b",
        "--decl",
        "a.b.name:string",
        "--var",
        r#"a.b.name="n""#,
    ]);
    assert_eq!(stdout(&o), "\"n\" : string\n", "{}", stderr(&o));
}

#[test]
fn batch_mode_writes_one_line_per_case() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(["eval", "--batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            br#"{"expr": "x * 2", "vars": {"x": 21}}
{"expr": "x +"}
{"expr": "l[5]", "vars": {"l": [1]}, "decls": {"l": "list(int)"}}
{"expr": "1.5 * 2.0"}
{"expr": "big", "vars": {"big": 18446744073709551615}}
not json
"#,
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(
        lines[0],
        serde_json::json!({"ok": true, "type": "int", "value": "42"})
    );
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["phase"], "compile");
    assert_eq!(
        lines[2],
        serde_json::json!({"ok": false, "phase": "eval", "error": "index out of bounds: 5"})
    );
    assert_eq!(
        lines[3],
        serde_json::json!({"ok": true, "type": "double", "value": "3.0"})
    );
    // JSON numbers beyond int64 are doubles.
    assert_eq!(lines[4]["type"], "double");
    assert_eq!(lines[5]["phase"], "input");
}

#[test]
fn cost_flags() {
    let o = cel(&[
        "eval",
        "l.map(x, x * 2)",
        "--var",
        "l=[1,2,3,4,5]",
        "--cost",
    ]);
    assert_eq!(stdout(&o), "[2, 4, 6, 8, 10] : list(int)\ncost: 82\n");
    // cel-go: over a limit of 50 the evaluation stops, reporting 52.
    let o = cel(&[
        "eval",
        "l.map(x, x * 2)",
        "--var",
        "l=[1,2,3,4,5]",
        "--cost",
        "--cost-limit",
        "50",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "operation cancelled: actual cost limit exceeded\n"
    );
    assert_eq!(stdout(&o), "cost: 52\n");
    let o = cel(&["eval", "1 / 0", "--cost", "--output", "json"]);
    assert_eq!(
        stdout(&o),
        "{\"ok\":false,\"phase\":\"eval\",\"error\":\"division by zero\",\"cost\":1}\n"
    );
}

#[test]
fn cost_command_estimates() {
    let o = cel(&[
        "cost",
        "input.all(x, true)",
        "--decl",
        "input:list(dyn)",
        "--size",
        "input=100",
    ]);
    assert_eq!(stdout(&o), "[2, 302]\n", "{}", stderr(&o));
    let o = cel(&[
        "cost",
        "input.matches('[0-9]')",
        "--decl",
        "input:string",
        "--size",
        "input=500",
    ]);
    assert_eq!(stdout(&o), "[3, 103]\n");
}

#[test]
fn kubernetes_profile() {
    let o = cel(&[
        "eval",
        "--profile",
        "kubernetes",
        "[1,2,3].all(x, true)",
        "--cost",
    ]);
    assert_eq!(stdout(&o), "true : bool\ncost: 10\n");
    let o = cel(&["eval", "--profile", "kubernetes", "duration('1x')"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("ERROR: <input>:1:10: invalid duration argument"));
    let o = cel(&["eval", "--profile", "kubernetes", "1 < 1.5"]);
    assert_eq!(stdout(&o), "true : bool\n");
    let o = cel(&["eval", "--profile", "nope", "1"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn kubernetes_profile_has_the_kubernetes_libraries() {
    // Kubernetes' own functions, with their types printed as Kubernetes prints them.
    for (expr, ty) in [
        ("quantity('1Gi')", "kubernetes.Quantity"),
        ("ip('10.0.0.1')", "net.IP"),
        ("cidr('10.0.0.0/8')", "net.CIDR"),
        ("url('https://k8s.io')", "kubernetes.URL"),
        ("semver('1.2.3')", "kubernetes.Semver"),
        (
            "format.named('dns1123Label')",
            "optional_type(kubernetes.NamedFormat)",
        ),
        (
            "authorizer.path('/healthz')",
            "kubernetes.authorization.PathCheck",
        ),
    ] {
        let o = cel(&["check", "--profile", "kubernetes", expr]);
        assert_eq!(stdout(&o), format!("{ty}\n"), "{expr}: {}", stderr(&o));
    }
    // The default profile has none of them.
    let o = cel(&["check", "quantity('1Gi')"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("undeclared reference to 'quantity'"));
    let o = cel(&[
        "eval",
        "--profile",
        "kubernetes",
        "quantity('1Gi').isGreaterThan(quantity('1G'))",
        "--cost",
    ]);
    assert_eq!(stdout(&o), "true : bool\ncost: 3\n", "{}", stderr(&o));
}

#[test]
fn kubernetes_costs_and_the_authorizer() {
    // Kubernetes' cost estimator and OptOptimize: the constant list is free at run time.
    let o = cel(&["cost", "--profile", "kubernetes", "[1, 2, 3, 4, 5].sum()"]);
    assert_eq!(stdout(&o), "[15, 15]\n", "{}", stderr(&o));
    let o = cel(&[
        "eval",
        "--profile",
        "kubernetes",
        "[1, 2, 3, 4, 5].sum()",
        "--cost",
    ]);
    assert_eq!(stdout(&o), "15 : int\ncost: 5\n");
    // `authorizer` is declared and bound to an authorizer that allows everything; a check
    // costs 350,000.
    let o = cel(&[
        "eval",
        "--profile",
        "kubernetes",
        "authorizer.group('apps').resource('deployments').check('delete').allowed()",
        "--cost",
    ]);
    assert_eq!(stdout(&o), "true : bool\ncost: 350004\n", "{}", stderr(&o));
    // Two checks fit the per-call limit of 1,000,000; three do not.
    let three = "[1, 2, 3].all(i, authorizer.path('/x' + string(i)).check('get').allowed())";
    let o = cel(&["eval", "--profile", "kubernetes", three]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "operation cancelled: actual cost limit exceeded\n"
    );
    // ... unless --cost-limit replaces the limit.
    let o = cel(&[
        "eval",
        "--profile",
        "kubernetes",
        three,
        "--cost-limit",
        "2000000",
    ]);
    assert_eq!(stdout(&o), "true : bool\n", "{}", stderr(&o));
}

#[test]
fn kubernetes_versions_and_stored_expressions() {
    // `--profile kubernetes=1.33` is the 1.33 API server: new expressions compile with
    // 1.32's libraries (no `semver`), stored ones with everything 1.33 has.
    let semver = "semver('1.0.0').major() == 1";
    let o = cel(&["eval", "--profile", "kubernetes=1.33", semver]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("undeclared reference to 'semver'"),
        "{}",
        stderr(&o)
    );
    let o = cel(&["eval", "--profile", "kubernetes=1.33", "--stored", semver]);
    assert_eq!(stdout(&o), "true : bool\n", "{}", stderr(&o));
    let o = cel(&["eval", "--profile", "kubernetes=1.34", semver]);
    assert_eq!(stdout(&o), "true : bool\n", "{}", stderr(&o));
    // `includes` (Kubernetes lists v1) arrived in 1.37: its stored expressions only.
    let includes = "[1].includes(1)";
    let o = cel(&["check", "--profile", "kubernetes=1.37", includes]);
    assert_eq!(o.status.code(), Some(1));
    let o = cel(&[
        "check",
        "--profile",
        "kubernetes=1.37",
        "--stored",
        includes,
    ]);
    assert_eq!(stdout(&o), "bool\n");
    let o = cel(&[
        "check",
        "--profile",
        "kubernetes=1.36",
        "--stored",
        includes,
    ]);
    assert_eq!(o.status.code(), Some(1));
    // A version outside the range is an error naming it.
    let o = cel(&["eval", "--profile", "kubernetes=1.29", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("unsupported Kubernetes version 1.29: supported versions are 1.30 to 1.37"),
        "{}",
        stderr(&o)
    );
    // Batch mode uses the profile too.
    let mut child = Command::new(env!("CARGO_BIN_EXE_cel"))
        .args([
            "eval",
            "--batch",
            "-",
            "--profile",
            "kubernetes=1.31",
            "--cost",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"{\"expr\": \"ip('10.0.0.1').family()\"}\n{\"expr\": \"semver('1.0.0').major()\"}\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"ok": true, "type": "int", "value": "4", "cost": 2})
    );
    // semver arrived in 1.33 (and a 1.31 server compiles new expressions as 1.30).
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["phase"], "compile");
    // Usage errors.
    for args in [
        &["eval", "--profile", "kubernetes=1.22", "1"][..],
        &["eval", "--profile", "kubernetes=one", "1"][..],
        &["eval", "--stored", "1"][..],
    ] {
        let o = cel(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn functions_lists_overloads_with_signatures() {
    let o = cel(&["functions", "--profile", "kubernetes=1.34", "quantity"]);
    assert_eq!(
        stdout(&o),
        "quantity\n  quantity(string) -> kubernetes.Quantity  [string_to_quantity]\n",
        "{}",
        stderr(&o)
    );
    let o = cel(&["functions", "--profile", "kubernetes", "lowerAscii"]);
    assert_eq!(
        stdout(&o),
        "lowerAscii\n  string.lowerAscii() -> string  [string_lower_ascii]\n"
    );
    // By release: `semver` arrived in 1.33, so a 1.34 server takes it in new expressions;
    // `includes` arrived in 1.37, where only stored expressions have it yet.
    let names = |args: &[&str]| -> Vec<String> {
        stdout(&cel(args))
            .lines()
            .filter(|l| !l.starts_with(' '))
            .map(str::to_string)
            .collect()
    };
    assert!(names(&["functions", "--profile", "kubernetes=1.33", "isSemver"]).is_empty());
    assert_eq!(
        names(&["functions", "--profile", "kubernetes=1.34", "isSemver"]),
        ["isSemver"]
    );
    assert!(names(&["functions", "--profile", "kubernetes=1.37", "includes"]).is_empty());
    assert!(
        names(&[
            "functions",
            "--profile",
            "kubernetes=1.36",
            "--stored",
            "includes"
        ])
        .is_empty()
    );
    assert_eq!(
        names(&[
            "functions",
            "--profile",
            "kubernetes=1.37",
            "--stored",
            "includes"
        ]),
        ["includes"]
    );
    // Without a profile: the default environment, every extension library and no Kubernetes
    // function; operators under their internal names.
    let all = names(&["functions"]);
    for f in ["_+_", "size", "sets.contains", "base64.encode", "math.abs"] {
        assert!(all.iter().any(|n| n == f), "{f} missing");
    }
    assert!(!all.iter().any(|n| n == "quantity"));
    let k8s = names(&["functions", "--profile", "kubernetes"]);
    assert!(k8s.iter().any(|n| n == "quantity"));
    // Kubernetes has no math or base64 extension.
    assert!(!k8s.iter().any(|n| n == "math.abs" || n == "base64.encode"));
    // JSON output.
    let o = cel(&[
        "functions",
        "--profile",
        "kubernetes",
        "--output",
        "json",
        "isQuantity",
    ]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        j,
        serde_json::json!([{"name": "isQuantity", "overloads": [
            {"id": "is_quantity_string", "signature": "isQuantity(string) -> bool"}
        ]}])
    );
}

#[test]
fn backends_give_the_same_result_and_cost() {
    for backend in ["interpreter", "jit", "auto"] {
        let o = cel(&[
            "eval",
            "--backend",
            backend,
            "--cost",
            "[1, 2, 3].map(i, i * x).exists(i, i == 9)",
            "--var",
            "x=3",
        ]);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        assert_eq!(stdout(&o), "true : bool\ncost: 85\n", "{backend}");
    }
    // Errors too, with the same text.
    for backend in ["interpreter", "jit"] {
        let o = cel(&["eval", "--backend", backend, "x / 0", "--var", "x=1"]);
        assert!(!o.status.success());
        assert!(
            stderr(&o).contains("division by zero"),
            "{backend}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn dump_shows_each_stage() {
    let o = cel(&[
        "eval",
        "--dump",
        "ast",
        "--dump",
        "checked",
        "--dump",
        "ir",
        "--dump",
        "clif",
        "x * 2 > 10",
        "--var",
        "x=7",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The parsed tree (ids), the checked tree (types), the IR (blocks, a return), the
    // Cranelift function, then the result.
    assert!(out.contains("_>_"), "{out}");
    assert!(out.contains("~bool"), "{out}");
    assert!(out.contains("bb0:") && out.contains("ret "), "{out}");
    assert!(out.contains("function ") && out.contains("block0"), "{out}");
    // The helpers it calls, by name.
    assert!(out.contains("\n; fn0 = cel_rt_resolve\n"), "{out}");
    assert!(out.ends_with("true : bool\n"), "{out}");
}

/// A `.proto` file in a fresh directory, for `--proto`.
fn proto_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cel-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("shop.proto"),
        r#"syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Item {
  string name = 1;
  int32 count = 2;
  google.protobuf.Timestamp created = 3;
}
"#,
    )
    .unwrap();
    dir
}

#[test]
fn proto_files_give_messages() {
    let dir = proto_dir("messages");
    let path = dir.to_str().unwrap();
    // A variable of a message type takes protobuf JSON; literals build messages.
    let o = cel(&[
        "eval",
        "item.count + 1 == 4 && item.created.getFullYear() == 2024 && item == Item{name: 'pen', count: 3, created: timestamp('2024-05-01T00:00:00Z')}",
        "--proto",
        "shop.proto",
        "--proto-path",
        path,
        "--container",
        "shop",
        "--decl",
        "item:shop.Item",
        "--var",
        r#"item={"name": "pen", "count": 3, "created": "2024-05-01T00:00:00Z"}"#,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "true : bool\n");
    // The checker knows the fields.
    let o = cel(&[
        "check",
        "shop.Item{count: 'x'}",
        "--proto",
        "shop.proto",
        "--proto-path",
        path,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("expected type of field 'count'"),
        "{}",
        stderr(&o)
    );
    // JSON that is not the message is an input error.
    let o = cel(&[
        "eval",
        "item.count",
        "--proto",
        "shop.proto",
        "--proto-path",
        path,
        "--decl",
        "item:shop.Item",
        "--var",
        r#"item={"count": "many"}"#,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'item'"), "{}", stderr(&o));
    // A missing file is reported.
    let o = cel(&["check", "1", "--proto", "nope.proto", "--proto-path", path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--proto"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
