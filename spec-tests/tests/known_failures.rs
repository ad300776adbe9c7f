//! The known-failures list: parsing, the comparison that fails a run (both ways), and
//! regeneration.

use std::collections::HashSet;
use std::path::Path;

use spec_tests::known_failures::{self, DEFAULT_HEADER, Entry, KnownFailures, Verdict};

const LIST: &str = "\
# header line
#   with an indented line

basic/self_eval_zeroish/self_eval_int_zero  parser not implemented
string_ext/format/multiple substitutions  needs   string.format
string_ext/index_of/empty_index#3\ttab-separated reason
dynamic/float/field_assign_proto2_subnorm#7

# a comment between entries
lists/in/elem_in_list    several spaces
";

fn files(names: &[&str]) -> HashSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn parses_ids_reasons_and_comments() {
    let k = KnownFailures::parse(LIST).unwrap();
    assert_eq!(k.header, vec!["# header line", "#   with an indented line"]);
    let got: Vec<(&str, &str)> = k
        .entries
        .iter()
        .map(|e| (e.id.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "basic/self_eval_zeroish/self_eval_int_zero",
                "parser not implemented"
            ),
            // Single spaces belong to the name; the reason keeps its own spacing.
            (
                "string_ext/format/multiple substitutions",
                "needs   string.format"
            ),
            ("string_ext/index_of/empty_index#3", "tab-separated reason"),
            ("dynamic/float/field_assign_proto2_subnorm#7", ""),
            ("lists/in/elem_in_list", "several spaces"),
        ]
    );
    assert_eq!(k.entries[0].line, 4);
    assert_eq!(k.entries[0].file(), "basic");
    assert_eq!(
        k.reason("string_ext/index_of/empty_index#3"),
        Some("tab-separated reason")
    );
    assert_eq!(k.reason("string_ext/index_of/empty_index"), None);
}

#[test]
fn rejects_duplicates_and_malformed_ids() {
    let errors = KnownFailures::parse("a/b/c  x\nnot-an-id  y\na/b/c  z\n").unwrap_err();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("line 2:"), "{errors:?}");
    assert!(
        errors[1].contains("line 3") && errors[1].contains("line 1"),
        "{errors:?}"
    );
}

#[test]
fn committed_list_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("known-failures.txt");
    let list = KnownFailures::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
        .expect("spec-tests/known-failures.txt exists");
    assert!(
        !list.header.is_empty(),
        "the committed list documents its format"
    );
}

#[test]
fn missing_file_reads_as_none() {
    let path = std::env::temp_dir().join("spec-tests-no-such-known-failures.txt");
    assert_eq!(KnownFailures::read(&path), Ok(None));
}

#[test]
fn comparison_flags_unexpected_failures_and_passes() {
    let known = KnownFailures::parse(
        "f/s/known_fail  r\nf/s/now_passes  r\nf/s/now_skipped  r\nf/s/gone  r\nother/s/t  r\n",
    )
    .unwrap();
    let run = [
        ("f/s/known_fail", Verdict::Fail),
        ("f/s/new_fail", Verdict::Fail),
        ("f/s/now_passes", Verdict::Pass),
        ("f/s/now_skipped", Verdict::Skip),
        ("f/s/passes", Verdict::Pass),
        ("f/s/skipped", Verdict::Skip),
    ];
    // `other` was not run, so its entry is neither stale nor judged.
    let c = known_failures::compare(&known, run, &files(&["f"]));
    assert_eq!(c.unexpected_failures, vec!["f/s/new_fail"]);
    assert_eq!(c.unexpected_passes, vec!["f/s/now_passes"]);
    assert_eq!(c.listed_but_skipped, vec!["f/s/now_skipped"]);
    assert_eq!(c.stale, vec!["f/s/gone"]);
    assert_eq!(c.known_failures, 1);
    assert!(!c.is_clean());

    // Each problem alone fails the comparison.
    let only_new_failure = known_failures::compare(
        &KnownFailures::default(),
        [("f/s/t", Verdict::Fail)],
        &files(&["f"]),
    );
    assert!(!only_new_failure.is_clean());
    let only_new_pass = known_failures::compare(
        &KnownFailures::parse("f/s/t  r\n").unwrap(),
        [("f/s/t", Verdict::Pass)],
        &files(&["f"]),
    );
    assert_eq!(only_new_pass.unexpected_passes, vec!["f/s/t"]);
    assert!(!only_new_pass.is_clean());

    // Agreement is clean.
    let agree = known_failures::compare(
        &KnownFailures::parse("f/s/t  r\n").unwrap(),
        [("f/s/t", Verdict::Fail), ("f/s/u", Verdict::Pass)],
        &files(&["f"]),
    );
    assert!(agree.is_clean());
    assert_eq!(agree.known_failures, 1);
}

#[test]
fn regeneration_keeps_reasons_and_other_files() {
    let old = KnownFailures::parse(
        "# my header\n\nb/s/still  kept reason\nb/s/fixed  old\nz/s/t  not run\na/s/t  not run either\n",
    )
    .unwrap();
    let failures = vec![
        ("b/s/still".to_string(), "new message".to_string()),
        (
            "b/s/new".to_string(),
            "ERROR: <input>:1:1: bad\n | x\n | ^".to_string(),
        ),
    ];
    let new = KnownFailures::regenerate(Some(&old), &failures, &files(&["b"]));
    let ids: Vec<(&str, &str)> = new
        .entries
        .iter()
        .map(|e| (e.id.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(
        ids,
        vec![
            ("a/s/t", "not run either"),
            ("b/s/still", "kept reason"),
            ("b/s/new", "ERROR: <input>:1:1: bad"),
            ("z/s/t", "not run"),
        ]
    );
    let text = new.render();
    assert!(
        text.starts_with("# my header\n\na/s/t  not run either\n"),
        "{text}"
    );
    // The rendered list reads back as itself.
    let reread = KnownFailures::parse(&text).unwrap();
    assert_eq!(reread.header, new.header);
    assert_eq!(
        reread.entries.iter().map(|e| &e.id).collect::<Vec<_>>(),
        new.entries.iter().map(|e| &e.id).collect::<Vec<_>>()
    );

    // Without an old list, the default header documents the format.
    let fresh = KnownFailures::regenerate(None, &failures, &files(&["b"]));
    assert!(fresh.render().starts_with(DEFAULT_HEADER));
    assert_eq!(
        fresh.entries[0],
        Entry {
            id: "b/s/still".into(),
            reason: "new message".into(),
            line: 0
        }
    );
}
