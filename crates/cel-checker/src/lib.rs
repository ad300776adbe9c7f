//! cel-checker (in progress).
