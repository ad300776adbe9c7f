//! Schemas as CEL types, with the sizes Kubernetes' cost estimator assumes (Kubernetes'
//! `DeclType`, built by `SchemaDeclType`).
//!
//! | schema | CEL type |
//! | --- | --- |
//! | `x-kubernetes-int-or-string` | `dyn` |
//! | `boolean`, `integer`, `number`, `string` | `bool`, `int`, `double`, `string` |
//! | `string` with `format: byte` / `duration` / `date` / `date-time` | `bytes` / `duration` / `timestamp` |
//! | `array` with `items` | `list(items)` |
//! | `object` with an `additionalProperties` schema | `map(string, values)` |
//! | `object` otherwise | an object type whose fields are the escapable properties |
//! | anything else (no `type`) | not exposed: the property is not a field |
//!
//! Object types are named by path from a root name (`selfType3`, `selfType3.spec`, list
//! elements `....@idx`, map values `....@elem`); only equality of types is meaningful.
//! Resource roots and embedded resources get `apiVersion`, `kind` and a `metadata` with just
//! `name` and `generateName`.
//!
//! Sizes: each node carries the largest number of elements (characters, items, entries) a
//! request of at most 3 MiB can hold ([`MAX_REQUEST_SIZE_BYTES`]) given `maxLength`,
//! `maxItems`, `maxProperties`, enums and formats, and the smallest size its JSON can have,
//! as Kubernetes computes them; [`DeclSizes`] gives them to the cost estimator by path.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cel_cost::{EstimateNode, SizeEstimator, SizeRange};
use cel_types::{FieldType, Type, TypeProvider};
use indexmap::IndexMap;

use crate::escape::{escape, is_reserved};
use crate::schema::Schema;

/// The largest request the API server accepts, which bounds every size estimate.
pub const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;
/// The longest a `duration` string is assumed to be.
pub const MAX_DURATION_SIZE_JSON: i64 = 32;
/// The longest a `date-time` string is assumed to be.
pub const MAX_DATETIME_SIZE_JSON: i64 = 32;
/// The shortest JSON of a `duration`.
pub const MIN_DURATION_SIZE_JSON: i64 = 3;
/// The size of a JSON `date`.
pub const JSON_DATE_SIZE: i64 = 12;
/// The shortest JSON of a `date-time`.
pub const MIN_DATETIME_SIZE_JSON: i64 = 21;
/// The shortest JSON string (`""`).
pub const MIN_STRING_SIZE: i64 = 2;
/// The shortest JSON boolean (`true`).
pub const MIN_BOOL_SIZE: i64 = 4;
/// The shortest JSON number.
pub const MIN_NUMBER_SIZE: i64 = 1;
/// The longest a resource name may be (a DNS subdomain).
pub const NAME_MAX_LENGTH: i64 = 253;

/// A schema node as a CEL type, with its size bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclType {
    /// What kind of type it is.
    pub kind: DeclKind,
    /// The most elements (characters, bytes, items, entries) a value may have.
    pub max_elements: i64,
    /// The smallest size of the value's JSON.
    pub min_serialized_size: i64,
}

/// The kinds of [`DeclType`].
#[derive(Clone, Debug, PartialEq)]
pub enum DeclKind {
    /// A type without parts (`int`, `string`, `timestamp`, `dyn` for int-or-string, ...).
    Scalar(Type),
    /// `list(elem)`.
    List(Box<DeclType>),
    /// `map(string, value)`.
    Map(Box<DeclType>),
    /// An object type: its name and its fields by selection name.
    Object {
        /// The type's name (`object` until named).
        name: String,
        /// The fields, by escaped property name.
        fields: IndexMap<String, DeclField>,
    },
}

/// A field of an object type.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclField {
    /// Its type.
    pub ty: DeclType,
    /// Whether the property is required.
    pub required: bool,
}

fn scalar(t: Type, min_size: i64) -> DeclType {
    DeclType {
        kind: DeclKind::Scalar(t),
        max_elements: 0,
        min_serialized_size: min_size,
    }
}

impl DeclType {
    /// The CEL type of a schema node; `None` when the node is not exposed to CEL.
    /// `is_root` says the node is a resource root (the custom resource itself), which gets
    /// the implicit `apiVersion`, `kind` and `metadata` fields.
    pub fn from_schema(s: &Schema, is_root: bool) -> Option<DeclType> {
        if s.x_int_or_string {
            let mut dyn_ = scalar(Type::Dyn, 1);
            dyn_.max_elements = match s.max_length {
                Some(n) => n.max(0) * 4,
                None => MAX_REQUEST_SIZE_BYTES - 2,
            };
            return Some(dyn_);
        }
        let s = if is_root {
            with_type_and_object_meta(s)
        } else {
            Cow::Borrowed(s)
        };
        match s.type_.as_str() {
            "array" => {
                let items = s.items.as_deref()?;
                let elem = DeclType::from_schema(items, items.x_embedded_resource)?;
                let max = match s.max_items {
                    Some(n) => n.max(0),
                    None => (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 1),
                };
                Some(DeclType {
                    kind: DeclKind::List(Box::new(elem)),
                    max_elements: max,
                    min_serialized_size: 2,
                })
            }
            "object" => match s.additional_schema() {
                Some(values) => {
                    let elem = DeclType::from_schema(values, values.x_embedded_resource)?;
                    let max = match s.max_properties {
                        Some(n) => n.max(0),
                        None => (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 6),
                    };
                    Some(DeclType {
                        kind: DeclKind::Map(Box::new(elem)),
                        max_elements: max,
                        min_serialized_size: 2,
                    })
                }
                None => Some(object_type(&s)),
            },
            "string" => Some(string_type(&s)),
            "boolean" => Some(scalar(Type::Bool, MIN_BOOL_SIZE)),
            "number" => Some(scalar(Type::Double, MIN_NUMBER_SIZE)),
            "integer" => Some(scalar(Type::Int, MIN_NUMBER_SIZE)),
            _ => None,
        }
    }

    /// The CEL type.
    pub fn cel_type(&self) -> Type {
        match &self.kind {
            DeclKind::Scalar(t) => t.clone(),
            DeclKind::List(e) => Type::list(e.cel_type()),
            DeclKind::Map(v) => Type::map(Type::String, v.cel_type()),
            DeclKind::Object { name, .. } => Type::message(name),
        }
    }

    /// Names the object types in this type by path from `name` (Kubernetes'
    /// `MaybeAssignTypeName`): an unnamed object is `name`, its fields `name.field`, list
    /// elements `name.@idx`, map values `name.@elem`.
    pub fn with_type_name(mut self, name: &str) -> DeclType {
        self.assign_name(name);
        self
    }

    fn assign_name(&mut self, name: &str) {
        match &mut self.kind {
            DeclKind::Scalar(_) => {}
            DeclKind::List(e) => e.assign_name(&format!("{name}.@idx")),
            DeclKind::Map(v) => v.assign_name(&format!("{name}.@elem")),
            DeclKind::Object { name: own, fields } => {
                if own == "object" {
                    *own = name.to_string();
                }
                let base = own.clone();
                for (field, f) in fields.iter_mut() {
                    f.ty.assign_name(&format!("{base}.{field}"));
                }
            }
        }
    }

    /// The element type of a list or the value type of a map.
    pub fn elem(&self) -> Option<&DeclType> {
        match &self.kind {
            DeclKind::List(e) | DeclKind::Map(e) => Some(e),
            _ => None,
        }
    }

    /// A field of an object type, by selection name.
    pub fn field(&self, name: &str) -> Option<&DeclField> {
        match &self.kind {
            DeclKind::Object { fields, .. } => fields.get(name),
            _ => None,
        }
    }
}

/// A unique root type name, `selfType<N>` (names are deliberately not stable).
pub fn unique_self_type_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("selfType{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn string_type(s: &Schema) -> DeclType {
    let per_request = MAX_REQUEST_SIZE_BYTES - 2;
    match s.format.as_str() {
        "byte" => DeclType {
            kind: DeclKind::Scalar(Type::Bytes),
            max_elements: s.max_length.map(|n| n.max(0)).unwrap_or(per_request),
            min_serialized_size: MIN_STRING_SIZE,
        },
        "duration" => DeclType {
            kind: DeclKind::Scalar(Type::Duration),
            max_elements: MAX_DURATION_SIZE_JSON,
            min_serialized_size: MIN_DURATION_SIZE_JSON,
        },
        "date" => DeclType {
            kind: DeclKind::Scalar(Type::Timestamp),
            max_elements: JSON_DATE_SIZE,
            min_serialized_size: JSON_DATE_SIZE,
        },
        "date-time" => DeclType {
            kind: DeclKind::Scalar(Type::Timestamp),
            max_elements: MAX_DATETIME_SIZE_JSON,
            min_serialized_size: MIN_DATETIME_SIZE_JSON,
        },
        _ => {
            let max = match (s.max_length, &s.enum_) {
                (Some(n), _) => n.max(0) * 4,
                (None, Some(values)) if !values.is_empty() => values
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(|v| v.len() as i64)
                    .max()
                    .unwrap_or(0),
                _ => per_request,
            };
            DeclType {
                kind: DeclKind::Scalar(Type::String),
                max_elements: max,
                min_serialized_size: MIN_STRING_SIZE,
            }
        }
    }
}

fn object_type(s: &Schema) -> DeclType {
    let mut fields = IndexMap::with_capacity(s.properties.len());
    let mut min_size = 2;
    for (name, prop) in &s.properties {
        let Some(ty) = DeclType::from_schema(prop, prop.x_embedded_resource) else {
            continue;
        };
        let required = s.required.iter().any(|r| r == name);
        if required && prop.default.is_none() {
            min_size += name.len() as i64 + ty.min_serialized_size + 4;
        }
        if let Some(escaped) = escape(name) {
            fields.insert(escaped, DeclField { ty, required });
        }
    }
    DeclType {
        kind: DeclKind::Object {
            name: "object".to_string(),
            fields,
        },
        max_elements: 0,
        min_serialized_size: min_size,
    }
}

/// The schema of a resource root or embedded resource with the `apiVersion`, `kind` and
/// `metadata` (just `name` and `generateName`, their lengths capped at a resource name's)
/// every resource has, unless the schema already declares all four as strings.
pub fn with_type_and_object_meta(s: &Schema) -> Cow<'_, Schema> {
    let is = |p: Option<&Schema>, t: &str| p.is_some_and(|p| p.type_ == t);
    let metadata = s.properties.get("metadata");
    let meta_prop = |n: &str| metadata.and_then(|m| m.properties.get(n));
    if is(s.properties.get("kind"), "string")
        && is(s.properties.get("apiVersion"), "string")
        && is(metadata, "object")
        && metadata.is_some_and(|m| !m.properties.is_empty())
        && is(meta_prop("name"), "string")
        && is(meta_prop("generateName"), "string")
    {
        return Cow::Borrowed(s);
    }
    let string = || Schema {
        type_: "string".to_string(),
        ..Schema::default()
    };
    let capped = |existing: Option<&Schema>, cap: i64| Schema {
        max_length: Some(
            existing
                .and_then(|e| e.max_length)
                .map_or(cap, |n| n.min(cap)),
        ),
        ..string()
    };
    let mut out = s.clone();
    out.properties.insert("kind".to_string(), string());
    out.properties.insert("apiVersion".to_string(), string());
    let mut meta = Schema {
        type_: "object".to_string(),
        ..Schema::default()
    };
    meta.properties.insert(
        "name".to_string(),
        capped(meta_prop("name"), NAME_MAX_LENGTH),
    );
    meta.properties.insert(
        "generateName".to_string(),
        capped(meta_prop("generateName"), NAME_MAX_LENGTH - 1),
    );
    out.properties.insert("metadata".to_string(), meta);
    Cow::Owned(out)
}

/// The object types of a named type tree, for the checker: each object type's fields and
/// their CEL types (Kubernetes' `DeclTypeProvider`).
#[derive(Debug, Default)]
pub struct SchemaTypes {
    objects: HashMap<String, HashMap<String, Type>>,
    keyword_field_names: bool,
}

impl SchemaTypes {
    /// The object types in `root` (already named).
    pub fn new(root: &DeclType) -> SchemaTypes {
        let mut types = SchemaTypes::default();
        types.add(root);
        types
    }

    /// Adds the object types in another named type tree.
    pub fn add(&mut self, root: &DeclType) {
        let mut work = vec![root];
        while let Some(t) = work.pop() {
            match &t.kind {
                DeclKind::Scalar(_) => {}
                DeclKind::List(e) | DeclKind::Map(e) => work.push(e),
                DeclKind::Object { name, fields } => {
                    let entry = self.objects.entry(name.clone()).or_default();
                    for (f, field) in fields {
                        entry.insert(f.clone(), field.ty.cel_type());
                        work.push(&field.ty);
                    }
                }
            }
        }
    }

    /// Whether `obj.namespace` also finds a field declared as `__namespace__` (Kubernetes
    /// 1.31 and later: "recognize keyword as field name").
    pub fn with_keyword_field_names(mut self, on: bool) -> SchemaTypes {
        self.keyword_field_names = on;
        self
    }
}

impl TypeProvider for SchemaTypes {
    fn find_type(&self, name: &str) -> Option<Type> {
        self.objects.contains_key(name).then(|| Type::message(name))
    }

    fn find_field(&self, message: &str, field: &str) -> Option<FieldType> {
        let fields = self.objects.get(message)?;
        let found = fields.get(field).or_else(|| {
            (self.keyword_field_names && is_reserved(field))
                .then(|| fields.get(&format!("__{field}__")))
                .flatten()
        })?;
        Some(FieldType { ty: found.clone() })
    }

    fn find_enum_value(&self, _name: &str) -> Option<i64> {
        None
    }
}

/// Sizes for the cost estimator from a type tree, by the path an expression reads from a
/// variable of that type (`self.spec.items`, elements as `@items`, map keys as `@keys`,
/// values as `@values`): `[0, max_elements]` of the node the path reaches.
#[derive(Clone, Debug)]
pub struct DeclSizes {
    root: Arc<DeclType>,
}

impl DeclSizes {
    /// Sizes from the type of the variables the paths start at.
    pub fn new(root: Arc<DeclType>) -> DeclSizes {
        DeclSizes { root }
    }
}

/// A map's keys: strings of unknown length, which Kubernetes' size estimate counts as 0.
const MAP_KEY: DeclType = DeclType {
    kind: DeclKind::Scalar(Type::String),
    max_elements: 0,
    min_serialized_size: MIN_STRING_SIZE,
};

impl SizeEstimator for DeclSizes {
    fn estimate_size(&self, node: &EstimateNode<'_>) -> Option<SizeRange> {
        let path = node.path?;
        let mut current: &DeclType = &self.root;
        for step in path.iter().skip(1) {
            current = match step.as_str() {
                "@items" | "@values" => current.elem()?,
                "@keys" => match current.kind {
                    DeclKind::Map(_) => &MAP_KEY,
                    _ => return None,
                },
                name => &current.field(name)?.ty,
            };
        }
        Some(SizeRange {
            min: 0,
            max: current.max_elements.max(0) as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Path;
    use serde_json::json;

    fn decl(j: serde_json::Value, root: bool) -> Option<DeclType> {
        DeclType::from_schema(&Schema::from_json(&j, &Path::root()).unwrap(), root)
    }

    #[test]
    fn types_follow_the_schema() {
        let t = decl(
            json!({"type": "object", "properties": {
                "i": {"type": "integer"}, "n": {"type": "number"},
                "b": {"type": "string", "format": "byte"},
                "d": {"type": "string", "format": "duration"},
                "t": {"type": "string", "format": "date-time"},
                "ios": {"x-kubernetes-int-or-string": true},
                "l": {"type": "array", "items": {"type": "string"}},
                "m": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "foo-bar": {"type": "string"},
                "if": {"type": "string"},
                "1up": {"type": "string"},
                "x": {"x-kubernetes-preserve-unknown-fields": true},
                "o": {"type": "object"}
            }}),
            false,
        )
        .unwrap()
        .with_type_name("selfType1");
        assert_eq!(t.cel_type(), Type::message("selfType1"));
        let f = |n: &str| t.field(n).map(|f| f.ty.cel_type());
        assert_eq!(f("i"), Some(Type::Int));
        assert_eq!(f("n"), Some(Type::Double));
        assert_eq!(f("b"), Some(Type::Bytes));
        assert_eq!(f("d"), Some(Type::Duration));
        assert_eq!(f("t"), Some(Type::Timestamp));
        assert_eq!(f("ios"), Some(Type::Dyn));
        assert_eq!(f("l"), Some(Type::list(Type::String)));
        assert_eq!(f("m"), Some(Type::map(Type::String, Type::Bool)));
        assert_eq!(f("foo__dash__bar"), Some(Type::String));
        assert_eq!(f("__if__"), Some(Type::String));
        assert_eq!(f("1up"), None);
        assert_eq!(f("x"), None);
        assert_eq!(f("o"), Some(Type::message("selfType1.o")));
    }

    #[test]
    fn roots_get_type_and_object_meta() {
        let t = decl(json!({"type": "object"}), true)
            .unwrap()
            .with_type_name("R");
        let meta = &t.field("metadata").unwrap().ty;
        assert_eq!(meta.cel_type(), Type::message("R.metadata"));
        assert_eq!(meta.field("name").unwrap().ty.max_elements, 253 * 4);
        assert_eq!(meta.field("generateName").unwrap().ty.max_elements, 252 * 4);
        assert!(meta.field("namespace").is_none());
        assert!(t.field("kind").is_some() && t.field("apiVersion").is_some());
    }

    #[test]
    fn sizes_match_kubernetes() {
        // From compilation_test.go: unbounded string list items, bounded by the request size.
        let l = decl(json!({"type": "array", "items": {"type": "string"}}), false).unwrap();
        assert_eq!(l.max_elements, 1_048_575);
        let l = decl(
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 20}),
            false,
        )
        .unwrap();
        assert_eq!(l.max_elements, 20);
        let m = decl(
            json!({"type": "object", "additionalProperties": {"type": "number"}}),
            false,
        )
        .unwrap();
        assert_eq!(m.max_elements, 449_389);
        let e = decl(json!({"type": "string", "enum": ["a", "abcd"]}), false).unwrap();
        assert_eq!(e.max_elements, 4);
        let o = decl(
            json!({"type": "object", "required": ["ab"], "properties": {"ab": {"type": "string"}}}),
            false,
        )
        .unwrap();
        assert_eq!(o.min_serialized_size, 2 + 2 + 2 + 4);
    }

    #[test]
    fn keyword_fields_resolve_from_1_31() {
        let t = decl(
            json!({"type": "object", "properties": {"namespace": {"type": "string"}}}),
            false,
        )
        .unwrap()
        .with_type_name("S");
        let old = SchemaTypes::new(&t);
        assert!(old.find_field("S", "namespace").is_none());
        assert!(old.find_field("S", "__namespace__").is_some());
        let new = SchemaTypes::new(&t).with_keyword_field_names(true);
        assert_eq!(new.find_field("S", "namespace").unwrap().ty, Type::String);
    }
}
