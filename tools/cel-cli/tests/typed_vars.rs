//! Variables declared with `--decl` take their JSON (`--var`, `--vars`, batch `vars`) in the
//! form users write for their type, and JSON that does not fit is an error naming the variable.

use std::io::Write;

mod support;

use support::{cel, stderr, stdout};

#[test]
fn a_value_that_does_not_fit_its_declaration_is_an_error() {
    let o = cel(&["eval", "y", "--decl", "y:int", "--var", r#"y="str""#]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        stderr(&o),
        "error: variable 'y': expected int, got string \"str\"\n"
    );
    let o = cel(&["eval", "l", "--decl", "l:list(uint)", "--var", "l=[1, -2]"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: variable 'l' at [1]: expected uint, got number -2\n"
    );
}

#[test]
fn typed_forms_are_read() {
    let o = cel(&[
        "eval",
        "t + d",
        "--decl",
        "t:timestamp",
        "--decl",
        "d:duration",
        "--var",
        r#"t="2024-01-02T03:04:05Z""#,
        "--var",
        r#"d="1h30m""#,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "timestamp(\"2024-01-02T04:34:05Z\") : timestamp\n"
    );
    let o = cel(&[
        "eval",
        "[b, u, x]",
        "--decl",
        "b:bytes",
        "--decl",
        "u:uint",
        "--decl",
        "x:double",
        "--var",
        r#"b="aGk=""#,
        "--var",
        "u=7",
        "--var",
        "x=2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[b\"hi\", 7u, 2.0] : list(dyn)\n");
    // Undeclared variables keep the untyped mapping.
    let o = cel(&["eval", "type(n)", "--var", "n=2"]);
    assert_eq!(stdout(&o), "int : type(dyn)\n");
}

#[test]
fn vars_files_and_batch_lines_are_typed_too() {
    let dir = std::env::temp_dir().join(format!("cel-typed-vars-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let vars = dir.join("vars.json");
    std::fs::write(&vars, r#"{"m": {"a": "1s", "b": "x"}}"#).expect("write");
    let o = cel(&[
        "eval",
        "m",
        "--decl",
        "m:map(string, duration)",
        "--vars",
        vars.to_str().expect("path"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.ends_with(
            "variable 'm' at .b: expected duration (like \"1h30m\" or \"1.5s\"), got string \"x\"\n"
        ),
        "{err}"
    );

    let batch = dir.join("batch.jsonl");
    let mut f = std::fs::File::create(&batch).expect("create");
    writeln!(
        f,
        r#"{{"expr": "d", "decls": {{"d": "duration"}}, "vars": {{"d": "90s"}}}}"#
    )
    .expect("write");
    writeln!(
        f,
        r#"{{"expr": "d", "decls": {{"d": "int"}}, "vars": {{"d": "x"}}}}"#
    )
    .expect("write");
    drop(f);
    let o = cel(&["eval", "--batch", batch.to_str().expect("path")]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains(r#""ok":true"#), "{}", lines[0]);
    assert!(lines[0].contains(r#"duration(\"90s\")"#), "{}", lines[0]);
    assert!(lines[1].contains(r#""ok":false"#), "{}", lines[1]);
    assert!(
        lines[1].contains(r#"variable 'd': expected int, got string \"x\""#),
        "{}",
        lines[1]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
