//! Kubernetes libraries (in progress).
