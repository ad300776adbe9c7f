//! Helpers shared by the integration tests: finding the conformance data, or skipping.

use std::path::PathBuf;

use spec_tests::corpus::{self, TEST_FILE_MESSAGE};

/// The cel-spec directory when its data is present. Otherwise prints a note and returns
/// `None` so the test can return early, except under `CI=true`, where missing data fails.
pub fn spec_dir_or_skip(test: &str) -> Option<PathBuf> {
    let dir = corpus::spec_dir();
    if corpus::data_present(&dir) {
        return Some(dir);
    }
    let message = format!(
        "{test}: conformance data not found at {}; set CEL_SPEC_DIR to a cel-spec checkout",
        dir.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message} (CI=true: missing data is an error)");
    }
    eprintln!("note: skipping {message}");
    None
}

/// The descriptor pool, when the data is present.
#[allow(
    dead_code,
    reason = "not every test binary that includes this module uses it"
)]
pub fn pool_or_skip(test: &str) -> Option<prost_reflect::DescriptorPool> {
    let dir = spec_dir_or_skip(test)?;
    let pool = corpus::descriptor_pool(&dir).expect("cel-spec's protos compile");
    assert!(pool.get_message_by_name(TEST_FILE_MESSAGE).is_some());
    Some(pool)
}
