//! celerity (in progress).
