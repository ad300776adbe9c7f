//! Kubernetes structural schemas for CEL: what the API server does with a
//! CustomResourceDefinition's `openAPIV3Schema` before and around its validation rules.
//!
//! * [`schema`]: the schema as JSON declares it (`JSONSchemaProps`), read with every
//!   problem reported at its path.
//! * [`field`]: field errors and paths, printed exactly as the API server prints them.
//! * [`openapi`]: OpenAPI value validation of custom resources, with ratcheting on update;
//!   [`strfmt`] checks `format` as Go does (`pattern` is Go's dialect through
//!   `cel_runtime::regex`), [`gojson`] types and prints JSON as Go does, [`godecode`] says
//!   what Go's decoder says of a body that does not fit a built-in kind's Go type.
//! * [`listtype`]: duplicates in `x-kubernetes-list-type` set and map lists.
//! * [`objectmeta`]: metadata of embedded resources and of the custom resource itself;
//!   [`names`] holds Kubernetes' name and label syntax checks.
//! * [`escape`]: property names as CEL identifiers (`foo-bar` is `foo__dash__bar`).
//! * [`decl`]: schemas as CEL types ([`DeclType`]), the object types the checker sees
//!   ([`SchemaTypes`]) and the sizes the cost estimator assumes ([`DeclSizes`]).
//! * [`value`]: data as CEL values typed by the schema ([`ValueModel`]).
//! * [`formats`]: the `duration`, `date` and `date-time` string formats.
//! * [`fieldpath`]: a rule's `fieldPath`, checked against the schema.
//! * [`structural`]: the checks the API server applies to a CRD's schema before accepting it
//!   (structural, valid, its defaults pruned and valid).
//! * [`defaulting`]: applying the schema's `default`s to an object.
//! * [`pruning`]: removing the fields the schema does not declare.
//!
//! This crate owns the schema side of custom resources: it knows OpenAPI, Kubernetes'
//! extensions (`x-kubernetes-*`) and the data, and it builds CEL types and values through
//! `cel-types` and `cel-runtime` (and implements `cel-cost`'s `SizeEstimator`). It must not
//! depend directly on the front end (`cel-syntax`, `cel-checker`), on any evaluator or on the
//! facade: compiling and running the rules is the facade's job (`celerity_kubernetes::crd`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod decl;
pub mod defaulting;
pub mod escape;
pub mod field;
pub mod fieldpath;
pub mod formats;
pub mod godecode;
pub mod gojson;
pub mod listtype;
pub mod names;
pub mod objectmeta;
pub mod openapi;
pub mod pruning;
pub mod schema;
pub mod strfmt;
pub mod structural;
pub mod value;

pub use decl::{DeclKind, DeclSizes, DeclType, SchemaTypes};
pub use field::{BadValue, ErrorType, FieldError, Path};
pub use openapi::Validator;
pub use schema::{AdditionalProperties, Schema, ValidationRule};
pub use value::ValueModel;
