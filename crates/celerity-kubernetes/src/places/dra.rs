//! Device selectors (`k8s.io/dynamic-resource-allocation/cel`, `compile.go`): DeviceClass
//! and ResourceClaim `selectors[].cel.expression` over `device`, a `kubernetes.DRADevice`
//! with `driver` (a string), `attributes` (by domain, then by identifier: `bool`, `int`,
//! `string` or a semantic version) and `capacity` (by domain, then identifier: quantities).
//! Introduced at 1.31 with `cel.bind` (cel-go's bindings extension) and the semver library,
//! compiled as stored expressions, evaluated with their own cost limit
//! (`CELSelectorExpressionMaxCost`, 1,000,000). A selector must be a `bool` or `dyn`
//! ("must evaluate to bool or the unknown type, not T"), and a `dyn` selector that gives
//! something else is an error when it runs.
//!
//! Attribute and capacity names without a domain take the driver's name as theirs
//! (`parseQualifiedName`). Looking up a domain the device does not have gives an empty map
//! rather than an error, as the library's defaulting map does, so
//! `device.attributes["other.example.com"].x` fails with `no such key: x`.

use std::sync::Arc;

use cel_k8s::KubeVersion;
use cel_k8s::quantity::quantity_type;
use cel_k8s_schema::decl::{DeclField, DeclKind, DeclType, SchemaTypes};
use cel_runtime::{Key, MapValue, OpaqueMap, OpaqueValue};
use celerity::kubernetes::KubernetesEnv;
use celerity::{Env, Type, Value};
use indexmap::IndexMap;
use serde_json::Value as Json;

use super::{expect_object, json_kind};

/// The runtime cost limit of one selector (`resourceapi.CELSelectorExpressionMaxCost`).
pub const SELECTOR_MAX_COST: u64 = 1_000_000;
/// The variable selectors read.
pub const DEVICE_VARIABLE: &str = "device";
/// The type name of `device`.
pub const DEVICE_TYPE: &str = "kubernetes.DRADevice";
/// The most attributes and capacities a device has (`ResourceSliceMaxAttributesAndCapacitiesPerDevice`).
const MAX_ATTRIBUTES: i64 = 32;

fn decl(kind: DeclKind, max_elements: i64) -> DeclType {
    DeclType {
        kind,
        max_elements,
        min_serialized_size: 0,
    }
}

/// `device`'s declared type, with the size bounds the library gives its estimator: an
/// attribute value at most 64 characters, a domain 63, an identifier 32, a driver name 63.
pub fn device_type() -> DeclType {
    let nested = |leaf: DeclType| {
        let inner = decl(DeclKind::Map(Box::new(leaf)), MAX_ATTRIBUTES);
        decl(DeclKind::Map(Box::new(inner)), MAX_ATTRIBUTES)
    };
    let field = |ty: DeclType| DeclField { ty, required: true };
    let mut fields = IndexMap::new();
    fields.insert(
        "driver".to_string(),
        field(decl(DeclKind::Scalar(Type::String), 63)),
    );
    fields.insert(
        "attributes".to_string(),
        field(nested(decl(DeclKind::Scalar(Type::Dyn), 64))),
    );
    fields.insert(
        "capacity".to_string(),
        field(nested(decl(DeclKind::Scalar(quantity_type()), 0))),
    );
    decl(
        DeclKind::Object {
            name: DEVICE_TYPE.to_string(),
            fields,
        },
        0,
    )
}

/// The environment of device selectors.
pub fn env(version: KubeVersion) -> Env {
    let device = device_type();
    KubernetesEnv::new(version)
        .stored()
        .with_authorizer_variable(false)
        .with_bindings(Some(0))
        .builder()
        .type_provider(Arc::new(SchemaTypes::new(&device)))
        .cost_limit(Some(SELECTOR_MAX_COST))
        .variable(DEVICE_VARIABLE, device.cel_type())
        .build()
}

/// The error of a selector whose value is not a bool.
pub fn not_bool(v: &Value) -> String {
    let t = v.type_of();
    format!(
        "CEL result of type {t} could not be converted to bool: type conversion error from '{t}' to 'bool'"
    )
}

/// Splits a qualified name into domain and identifier, the driver's name being the domain
/// of names without one.
pub(crate) fn qualified<'a>(name: &'a str, driver: &'a str) -> (&'a str, &'a str) {
    match name.split_once('/') {
        Some((domain, id)) => (domain, id),
        None => (driver, name),
    }
}

/// `device` from a ResourceSlice device's JSON (`resource.k8s.io/v1`: `attributes` and
/// `capacity` on the device; `v1beta1`: under `basic`) with the slice's `driver` beside
/// its fields.
pub fn device_value(json: &Json) -> Result<Value, String> {
    let dev = expect_object(json, "device")?;
    let driver = match dev.get("driver") {
        None | Some(Json::Null) => "",
        Some(Json::String(s)) => s.as_str(),
        Some(v) => {
            return Err(format!(
                "device.driver: expected a string, got {}",
                json_kind(v)
            ));
        }
    };
    slice_device_value(json, driver, "device")
}

/// `device` from one device of a ResourceSlice (`spec.devices[i]` at `path`, the slice's
/// `spec.driver` given apart), as the library's `DeviceMatches` builds it: attributes and
/// capacities by domain, the driver's name the domain of names without one. A capacity is
/// `{value: Q}` (`v1beta1` on) or the quantity itself (`v1alpha3`). Errors carry `path`.
pub fn slice_device_value(json: &Json, driver: &str, path: &str) -> Result<Value, String> {
    let dev = expect_object(json, path)?;
    let basic_path = format!("{path}.basic");
    let (parts, base) = match dev.get("basic") {
        Some(b) if !b.is_null() => (expect_object(b, &basic_path)?, basic_path.as_str()),
        _ => (dev, path),
    };
    let mut attributes: IndexMap<String, MapValue> = IndexMap::new();
    if let Some(a) = parts.get("attributes").filter(|a| !a.is_null()) {
        for (name, attr) in expect_object(a, &format!("{base}.attributes"))? {
            let value = attribute(attr)
                .map_err(|e| format!("{base}.attributes[{name:?}]: attribute {name}: {e}"))?;
            let (domain, id) = qualified(name, driver);
            attributes
                .entry(domain.to_string())
                .or_default()
                .insert(Key::String(id.into()), value);
        }
    }
    let mut capacity: IndexMap<String, MapValue> = IndexMap::new();
    if let Some(c) = parts.get("capacity").filter(|c| !c.is_null()) {
        for (name, cap) in expect_object(c, &format!("{base}.capacity"))? {
            let path = format!("{base}.capacity[{name:?}]");
            let (quantity, path) = match cap {
                Json::String(_) | Json::Number(_) => (Some(cap), path),
                _ => (
                    expect_object(cap, &path)?.get("value"),
                    format!("{path}.value"),
                ),
            };
            let value = match quantity {
                Some(Json::String(q)) => cel_k8s::quantity::to_quantity(&Value::string(q.as_str()))
                    .map_err(|e| format!("{path}: {e}"))?,
                Some(Json::Number(n)) => {
                    cel_k8s::quantity::to_quantity(&Value::string(n.to_string()))
                        .map_err(|e| format!("{path}: {e}"))?
                }
                other => {
                    return Err(format!(
                        "{path}: expected a quantity, got {}",
                        other.map_or("nothing", json_kind)
                    ));
                }
            };
            let (domain, id) = qualified(name, driver);
            capacity
                .entry(domain.to_string())
                .or_default()
                .insert(Key::String(id.into()), value);
        }
    }
    let mut device = MapValue::with_capacity(3);
    device.insert(Key::String("driver".into()), Value::string(driver));
    device.insert(Key::String("attributes".into()), by_domain(attributes));
    device.insert(Key::String("capacity".into()), by_domain(capacity));
    Ok(Value::Map(Arc::new(device)))
}

/// One attribute's value: exactly one of `int`, `bool`, `string`, `version`.
fn attribute(attr: &Json) -> Result<Value, String> {
    let attr = attr
        .as_object()
        .ok_or_else(|| format!("expected an object, got {}", json_kind(attr)))?;
    let set: Vec<(&String, &Json)> = attr.iter().filter(|(_, v)| !v.is_null()).collect();
    match set.as_slice() {
        [(k, v)] => match (k.as_str(), v) {
            ("int", Json::Number(n)) => n
                .as_i64()
                .map(Value::Int)
                .ok_or_else(|| format!("int: {n} is not a 64-bit integer")),
            ("bool", Json::Bool(b)) => Ok(Value::Bool(*b)),
            ("string", Json::String(s)) => Ok(Value::string(s.as_str())),
            ("version", Json::String(s)) => cel_k8s::semver::parse(s)
                .map(|_| ())
                .map_err(|e| format!("parse semantic version: {e}"))
                .and_then(|()| {
                    cel_k8s::semver::to_semver(&Value::string(s.as_str()))
                        .map_err(|e| format!("parse semantic version: {e}"))
                }),
            (k @ ("int" | "bool" | "string" | "version"), v) => {
                Err(format!("{k}: wrong type, got {}", json_kind(v)))
            }
            _ => Err("unsupported attribute value".to_string()),
        },
        [] => Err("unsupported attribute value".to_string()),
        _ => Err("more than one value is set".to_string()),
    }
}

/// The outer map (by domain) with the library's default: an empty map for a domain the
/// device does not have.
fn by_domain(entries: IndexMap<String, MapValue>) -> Value {
    let mut m = MapValue::with_capacity(entries.len());
    for (domain, inner) in entries {
        m.insert(Key::String(domain.into()), Value::Map(Arc::new(inner)));
    }
    Value::Opaque(Arc::new(DefaultingMap(m)))
}

/// A map whose missing keys read as an empty map (the DRA library's
/// `newStringInterfaceMapWithDefault`).
#[derive(Debug)]
struct DefaultingMap(MapValue);

impl OpaqueValue for DefaultingMap {
    fn type_name(&self) -> &str {
        "map"
    }

    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        std::ptr::eq(
            self as *const DefaultingMap as *const u8,
            other as *const dyn OpaqueValue as *const u8,
        )
    }

    fn size(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }

    fn as_map(&self) -> Option<&dyn OpaqueMap> {
        Some(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl OpaqueMap for DefaultingMap {
    fn find(&self, key: &str) -> Option<cel_runtime::Result<Value>> {
        let v = self
            .0
            .get_exact(cel_runtime::KeyRef::String(key))
            .cloned()
            .unwrap_or_else(|| Value::Map(Arc::new(MapValue::new())));
        Some(Ok(v))
    }

    fn entries(&self) -> Option<&MapValue> {
        Some(&self.0)
    }
}
