//! cel-interp (in progress).
