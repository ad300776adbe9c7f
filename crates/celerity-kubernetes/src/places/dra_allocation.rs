//! Which devices of ResourceSlices the selectors of DeviceClasses and ResourceClaims accept,
//! as the scheduler's structured allocator decides it (kubernetes,
//! `staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go`:
//! `isSelectable` runs the request's class's selectors and then the request's own, and
//! `selectorsMatch` stops at the first that is false or fails, a compile error and a
//! runtime error being `class NAME: selector #i: CEL compile error: ...` and
//! `claim NS/NAME: selector #i: CEL runtime error: ...`; a request whose class does not
//! exist fails with `claim NS/NAME, request R: could not retrieve device class C: ...`).
//! Each distinct expression is compiled once in the `dra-selector` environment of the
//! version ([`super::dra`]) and run on every device, with its cost limit.
//!
//! Besides the verdicts, the names each selector reads (`device.attributes["d"].name`,
//! `device.attributes["d"]["name"]`, `"name" in device.attributes["d"]`, the same for
//! `capacity`, and through `cel.bind`) are found in the checked tree, and those no device of
//! the slices has are reported: a misspelled attribute reads as an empty domain's missing key
//! or a `false`, never as an error the allocator would show.
//!
//! Objects are read as the API versions of the release serve them: `resource.k8s.io/v1alpha3`
//! (1.31, 1.32; attributes under `basic`, capacities as quantities), `v1beta1` (from 1.32;
//! `basic`, requests with `deviceClassName` and `selectors`), `v1beta2` (from 1.33) and `v1`
//! (from 1.34; `exactly` or `firstAvailable`). Devices are held as the values selectors see,
//! converted once; time is linear in devices × selectors.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use cel_k8s::KubeVersion;
use cel_syntax::ast::{Expr, ExprKind, Literal};
use celerity::{Backend, MapActivation, Value};
use serde_json::{Map, Value as Json, json};

use super::dra::{Features, qualified, slice_device_value};
use super::{PlaceEnv, PlaceProgram, json_kind};

/// The most requests of a claim, selectors of a request or class, and subrequests of a
/// `firstAvailable` (`DeviceRequestsMaxSize`, `DeviceSelectorsMaxSize`,
/// `FirstAvailableDeviceRequestMaxSize` in `k8s.io/api/resource/v1`).
const MAX_REQUESTS: usize = 32;
const MAX_SELECTORS: usize = 32;
const MAX_SUBREQUESTS: usize = 8;
/// The longest selector expression (`CELSelectorExpressionMaxLength`).
const MAX_EXPRESSION_BYTES: usize = 10 * 1024;
/// The most devices of one slice (`ResourceSliceMaxDevices`).
const MAX_SLICE_DEVICES: usize = 128;

/// How an API version shapes the objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// `v1alpha3` and `v1beta1`: a request holds `deviceClassName` and `selectors`.
    Flat,
    /// `v1beta2` and `v1`: a request holds `exactly` or `firstAvailable`.
    Exactly,
}

/// The shape of `apiVersion` in release `version`, or why the release does not serve it.
fn shape(api_version: &str, version: KubeVersion) -> Result<Shape, String> {
    let (shape, since, until) = match api_version {
        "resource.k8s.io/v1alpha3" => (Shape::Flat, 31, Some(32)),
        "resource.k8s.io/v1beta1" => (Shape::Flat, 32, None),
        "resource.k8s.io/v1beta2" => (Shape::Exactly, 33, None),
        "resource.k8s.io/v1" => (Shape::Exactly, 34, None),
        other => {
            return Err(format!(
                "apiVersion {other:?} is not resource.k8s.io/v1, v1beta2, v1beta1 or v1alpha3"
            ));
        }
    };
    let served =
        version.major == 1 && version.minor >= since && until.is_none_or(|u| version.minor <= u);
    if !served {
        return Err(format!(
            "apiVersion {api_version:?} is not served by Kubernetes {version}"
        ));
    }
    Ok(shape)
}

/// The object's fields, its shape and its name, checking its kind.
fn object<'a>(
    json: &'a Json,
    kind: &str,
    version: KubeVersion,
) -> Result<(&'a Map<String, Json>, Shape, String), String> {
    let obj = json
        .as_object()
        .ok_or_else(|| format!("expected a {kind} object, got {}", json_kind(json)))?;
    let found = obj.get("kind").and_then(Json::as_str).unwrap_or_default();
    if found != kind {
        return Err(format!("kind {found:?} is not {kind}"));
    }
    let api = obj
        .get("apiVersion")
        .and_then(Json::as_str)
        .unwrap_or_default();
    let shape = shape(api, version)?;
    let name = match obj.get("metadata").and_then(|m| m.get("name")) {
        Some(Json::String(n)) if !n.is_empty() => n.clone(),
        _ => return Err(format!("{kind}: metadata.name: Required value")),
    };
    Ok((obj, shape, name))
}

/// A field that must be a string.
fn string_at<'a>(obj: &'a Map<String, Json>, field: &str, path: &str) -> Result<&'a str, String> {
    match obj.get(field) {
        Some(Json::String(s)) if !s.is_empty() => Ok(s),
        None | Some(Json::Null) | Some(Json::String(_)) => {
            Err(format!("{path}.{field}: Required value"))
        }
        Some(v) => Err(format!(
            "{path}.{field}: expected a string, got {}",
            json_kind(v)
        )),
    }
}

/// A field that must be a list (absent or `null`: empty), with at most `max` items.
fn list_at<'a>(
    obj: &'a Map<String, Json>,
    field: &str,
    path: &str,
    max: usize,
) -> Result<&'a [Json], String> {
    match obj.get(field) {
        None | Some(Json::Null) => Ok(&[]),
        Some(Json::Array(a)) if a.len() > max => Err(format!(
            "{path}.{field}: Too many: {}: must have at most {max} items",
            a.len()
        )),
        Some(Json::Array(a)) => Ok(a),
        Some(v) => Err(format!(
            "{path}.{field}: expected a list, got {}",
            json_kind(v)
        )),
    }
}

/// An object at `path`.
fn object_at<'a>(json: &'a Json, path: &str) -> Result<&'a Map<String, Json>, String> {
    json.as_object()
        .ok_or_else(|| format!("{path}: expected an object, got {}", json_kind(json)))
}

/// The expressions of `selectors[]` (`[{cel: {expression}}]`).
fn selectors(obj: &Map<String, Json>, path: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (i, s) in list_at(obj, "selectors", path, MAX_SELECTORS)?
        .iter()
        .enumerate()
    {
        let at = format!("{path}.selectors[{i}]");
        let cel = match object_at(s, &at)?.get("cel") {
            Some(c) if !c.is_null() => object_at(c, &format!("{at}.cel"))?,
            _ => return Err(format!("{at}.cel: Required value")),
        };
        let expr = string_at(cel, "expression", &format!("{at}.cel"))?;
        if expr.len() > MAX_EXPRESSION_BYTES {
            return Err(format!(
                "{at}.cel.expression: Too long: may not be more than {MAX_EXPRESSION_BYTES} bytes"
            ));
        }
        out.push(expr.to_string());
    }
    Ok(out)
}

/// One device of the slices, as selectors see it.
#[derive(Debug)]
pub struct SliceDevice {
    /// The slice's `spec.driver`.
    pub driver: Arc<str>,
    /// The slice's `spec.pool.name`.
    pub pool: Arc<str>,
    /// The device's `name`.
    pub name: String,
    value: Value,
}

/// The devices of ResourceSlices, and the attribute and capacity names they have.
#[derive(Debug, Default)]
pub struct DeviceSet {
    devices: Vec<SliceDevice>,
    attributes: HashSet<(String, String)>,
    capacities: HashSet<(String, String)>,
}

impl DeviceSet {
    /// No devices.
    pub fn new() -> DeviceSet {
        DeviceSet::default()
    }

    /// The devices, in the order added.
    pub fn devices(&self) -> &[SliceDevice] {
        &self.devices
    }

    /// Adds the devices of a ResourceSlice. Each error names the slice and the field; a
    /// device that cannot be read is left out, the others are added.
    pub fn add_slice(&mut self, slice: &Json, version: KubeVersion) -> Vec<String> {
        let (obj, _, name) = match object(slice, "ResourceSlice", version) {
            Ok(o) => o,
            Err(e) => return vec![e],
        };
        let at = |e: String| format!("ResourceSlice {name:?}: {e}");
        let spec = match obj.get("spec") {
            Some(s) => match object_at(s, "spec") {
                Ok(s) => s,
                Err(e) => return vec![at(e)],
            },
            None => return vec![at("spec: Required value".into())],
        };
        let header = string_at(spec, "driver", "spec").and_then(|driver| {
            let pool = match spec.get("pool") {
                Some(p) => object_at(p, "spec.pool")?,
                None => return Err("spec.pool: Required value".into()),
            };
            let pool = string_at(pool, "name", "spec.pool")?;
            let devices = list_at(spec, "devices", "spec", MAX_SLICE_DEVICES)?;
            Ok((driver, pool, devices))
        });
        let (driver, pool, devices) = match header {
            Ok(h) => h,
            Err(e) => return vec![at(e)],
        };
        let (driver_arc, pool_arc): (Arc<str>, Arc<str>) = (driver.into(), pool.into());
        let mut errors = Vec::new();
        let features = Features::of(version);
        for (i, device) in devices.iter().enumerate() {
            let path = format!("spec.devices[{i}]");
            let read = object_at(device, &path).and_then(|d| {
                let device_name = string_at(d, "name", &path)?;
                let value = slice_device_value(device, driver, &path, features)?;
                Ok((d, device_name, value))
            });
            match read {
                Ok((d, device_name, value)) => {
                    self.note_names(d, driver);
                    self.devices.push(SliceDevice {
                        driver: driver_arc.clone(),
                        pool: pool_arc.clone(),
                        name: device_name.to_string(),
                        value,
                    });
                }
                Err(e) => errors.push(at(e)),
            }
        }
        errors
    }

    /// Records the qualified names of a device's attributes and capacities (already read
    /// once by `slice_device_value`, so their shapes are known good).
    fn note_names(&mut self, device: &Map<String, Json>, driver: &str) {
        let parts = match device.get("basic").and_then(Json::as_object) {
            Some(b) => b,
            None => device,
        };
        for (field, set) in [
            ("attributes", &mut self.attributes),
            ("capacity", &mut self.capacities),
        ] {
            for name in parts
                .get(field)
                .and_then(Json::as_object)
                .into_iter()
                .flat_map(|m| m.keys())
            {
                let (domain, id) = qualified(name, driver);
                if !set.contains(&(domain.to_string(), id.to_string())) {
                    set.insert((domain.to_string(), id.to_string()));
                }
            }
        }
    }

    fn has(&self, read: &NameRead) -> bool {
        let set = if read.capacity {
            &self.capacities
        } else {
            &self.attributes
        };
        set.contains(&(read.domain.clone(), read.id.clone()))
    }

    /// The known name closest to an unknown one (at most two edits away), for the warning.
    fn suggestion(&self, read: &NameRead) -> Option<String> {
        let set = if read.capacity {
            &self.capacities
        } else {
            &self.attributes
        };
        // Bounded work: names are short, and a huge name set gets no suggestions.
        if set.len() > 4096 {
            return None;
        }
        let wanted = format!("{}/{}", read.domain, read.id);
        set.iter()
            .map(|(d, i)| format!("{d}/{i}"))
            .map(|n| (edit_distance(&wanted, &n), n))
            .filter(|(d, _)| *d <= 2)
            .min()
            .map(|(_, n)| n)
    }
}

/// Levenshtein distance over characters (both strings are at most a few hundred bytes).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A DeviceClass: its name and selectors.
#[derive(Clone, Debug)]
pub struct DeviceClass {
    /// `metadata.name`.
    pub name: String,
    /// `spec.selectors[].cel.expression`.
    pub selectors: Vec<String>,
}

impl DeviceClass {
    /// Reads a DeviceClass; errors name the field.
    pub fn read(json: &Json, version: KubeVersion) -> Result<DeviceClass, String> {
        let (obj, _, name) = object(json, "DeviceClass", version)?;
        let selectors = match obj.get("spec") {
            None | Some(Json::Null) => Ok(Vec::new()),
            Some(s) => object_at(s, "spec").and_then(|s| selectors(s, "spec")),
        }
        .map_err(|e| format!("DeviceClass {name:?}: {e}"))?;
        Ok(DeviceClass { name, selectors })
    }
}

/// One request (or subrequest of `firstAvailable`) of a claim.
#[derive(Clone, Debug)]
pub struct Request {
    /// `name`, or `name/subrequest` for one of `firstAvailable`'s.
    pub name: String,
    /// The name the allocator's messages give it (a subrequest's own).
    own_name: String,
    /// `deviceClassName`.
    pub class: String,
    /// `selectors[].cel.expression`.
    pub selectors: Vec<String>,
    /// Where it is in the claim (`spec.devices.requests[0].exactly`).
    pub path: String,
}

/// A ResourceClaim or ResourceClaimTemplate's claim (`spec.spec`): its requests.
#[derive(Clone, Debug)]
pub struct Claim {
    /// `ResourceClaim` or `ResourceClaimTemplate`.
    pub kind: &'static str,
    /// `metadata.namespace` (may be empty).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Its requests, subrequests flattened in order.
    pub requests: Vec<Request>,
}

impl Claim {
    /// Reads a ResourceClaim or a ResourceClaimTemplate; errors name the field.
    pub fn read(json: &Json, version: KubeVersion) -> Result<Claim, String> {
        let kind = match json.get("kind").and_then(Json::as_str) {
            Some("ResourceClaimTemplate") => "ResourceClaimTemplate",
            _ => "ResourceClaim",
        };
        let (obj, shape, name) = object(json, kind, version)?;
        let namespace = obj
            .get("metadata")
            .and_then(|m| m.get("namespace"))
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string();
        let requests = claim_requests(obj, kind, shape)
            .map_err(|e| format!("{kind} {:?}: {e}", klog_name(&namespace, &name)))?;
        Ok(Claim {
            kind,
            namespace,
            name,
            requests,
        })
    }

    /// `namespace/name` (or `name`), as `klog.KObj` prints it in the allocator's errors.
    pub fn display_name(&self) -> String {
        klog_name(&self.namespace, &self.name)
    }

    /// `resourceclaims/NAME` or `resourceclaimtemplates/NAME`, for selector paths.
    fn resource(&self) -> String {
        let plural = match self.kind {
            "ResourceClaimTemplate" => "resourceclaimtemplates",
            _ => "resourceclaims",
        };
        format!("{plural}/{}", self.name)
    }
}

fn klog_name(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// The requests of a claim's spec (a template's `spec.spec`).
fn claim_requests(
    obj: &Map<String, Json>,
    kind: &str,
    shape: Shape,
) -> Result<Vec<Request>, String> {
    let (mut spec, mut path) = (obj.get("spec"), "spec".to_string());
    if kind == "ResourceClaimTemplate" {
        spec = match spec {
            Some(s) => object_at(s, "spec")?.get("spec"),
            None => None,
        };
        path = "spec.spec".into();
    }
    let devices = match spec {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(s) => match object_at(s, &path)?.get("devices") {
            None | Some(Json::Null) => return Ok(Vec::new()),
            Some(d) => object_at(d, &format!("{path}.devices"))?,
        },
    };
    let path = format!("{path}.devices");
    let mut out = Vec::new();
    for (i, r) in list_at(devices, "requests", &path, MAX_REQUESTS)?
        .iter()
        .enumerate()
    {
        let at = format!("{path}.requests[{i}]");
        let r = object_at(r, &at)?;
        let name = string_at(r, "name", &at)?;
        let first = list_at(r, "firstAvailable", &at, MAX_SUBREQUESTS)?;
        let exactly = match r.get("exactly") {
            Some(e) if !e.is_null() && shape == Shape::Exactly => {
                Some(object_at(e, &format!("{at}.exactly"))?)
            }
            _ => None,
        };
        match (exactly, first.is_empty(), shape) {
            (Some(_), false, _) => {
                return Err(format!(
                    "{at}: Invalid value: exactly one of exactly or firstAvailable is required"
                ));
            }
            (None, true, Shape::Exactly) => {
                return Err(format!(
                    "{at}: Required value: exactly one of exactly or firstAvailable is required"
                ));
            }
            (Some(e), true, _) => out.push(request(e, name, name, &format!("{at}.exactly"))?),
            (None, true, Shape::Flat) => out.push(request(r, name, name, &at)?),
            (None, false, _) => {
                for (k, sub) in first.iter().enumerate() {
                    let sub_at = format!("{at}.firstAvailable[{k}]");
                    let sub = object_at(sub, &sub_at)?;
                    let sub_name = string_at(sub, "name", &sub_at)?;
                    out.push(request(
                        sub,
                        &format!("{name}/{sub_name}"),
                        sub_name,
                        &sub_at,
                    )?);
                }
            }
        }
    }
    Ok(out)
}

fn request(obj: &Map<String, Json>, name: &str, own: &str, path: &str) -> Result<Request, String> {
    Ok(Request {
        name: name.to_string(),
        own_name: own.to_string(),
        class: string_at(obj, "deviceClassName", path)?.to_string(),
        selectors: selectors(obj, path)?,
        path: path.to_string(),
    })
}

/// An attribute or capacity name a selector reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameRead {
    /// `device.capacity` rather than `device.attributes`.
    pub capacity: bool,
    /// The domain (`device.attributes["DOMAIN"]`).
    pub domain: String,
    /// The identifier (`.ID`, `["ID"]`).
    pub id: String,
}

impl NameRead {
    /// `domain/id`.
    pub fn qualified(&self) -> String {
        format!("{}/{}", self.domain, self.id)
    }
}

/// A local name in scope while walking a tree: a comprehension's variable, bound (by
/// `cel.bind`) to a domain's map or to something else.
struct Scope {
    name: String,
    domain: Option<(bool, String)>,
    parent: Option<Rc<Scope>>,
}

fn lookup<'a>(mut scope: &'a Option<Rc<Scope>>, name: &str) -> Option<&'a Scope> {
    while let Some(s) = scope {
        if s.name == name {
            return Some(s);
        }
        scope = &s.parent;
    }
    None
}

fn string_literal(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Literal(Literal::String(s)) => Some(s),
        _ => None,
    }
}

/// `device.attributes["D"]` or `device.capacity["D"]` (or a `cel.bind` name of one): the
/// kind and the domain.
fn domain_map(e: &Expr, scope: &Option<Rc<Scope>>) -> Option<(bool, String)> {
    match &e.kind {
        ExprKind::Ident(name) => lookup(scope, name).and_then(|s| s.domain.clone()),
        ExprKind::Call(c) if c.function == "_[_]" && c.target.is_none() && c.args.len() == 2 => {
            let ExprKind::Select(sel) = &c.args[0].kind else {
                return None;
            };
            let capacity = match sel.field.as_str() {
                "attributes" => false,
                "capacity" => true,
                _ => return None,
            };
            let is_device = matches!(&sel.operand.kind, ExprKind::Ident(n)
                if n == super::dra::DEVICE_VARIABLE && lookup(scope, n).is_none());
            if sel.test_only || !is_device {
                return None;
            }
            string_literal(&c.args[1]).map(|d| (capacity, d.to_string()))
        }
        _ => None,
    }
}

/// The name `e` reads from a domain's map, if it is such a read.
fn name_read(e: &Expr, scope: &Option<Rc<Scope>>) -> Option<NameRead> {
    let (map, id) = match &e.kind {
        ExprKind::Select(s) => (&*s.operand, s.field.as_str()),
        ExprKind::Call(c) if c.target.is_none() && c.args.len() == 2 => match c.function.as_str() {
            "_[_]" | "_[?_]" | "_?._" => (&c.args[0], string_literal(&c.args[1])?),
            "@in" => (&c.args[1], string_literal(&c.args[0])?),
            _ => return None,
        },
        _ => return None,
    };
    let (capacity, domain) = domain_map(map, scope)?;
    Some(NameRead {
        capacity,
        domain,
        id: id.to_string(),
    })
}

/// The attribute and capacity names a checked selector reads, in the order written, each
/// once. The walk uses a work list: trees may be deep.
pub fn name_reads(ast: &celerity::Ast) -> Vec<NameRead> {
    let Some(checked) = ast.checked() else {
        return Vec::new();
    };
    let mut found: Vec<(u32, NameRead)> = Vec::new();
    let mut work: Vec<(&Expr, Option<Rc<Scope>>)> = vec![(&checked.ast.expr, None)];
    while let Some((e, scope)) = work.pop() {
        if let Some(read) = name_read(e, &scope) {
            let at = checked
                .ast
                .source_info
                .positions
                .get(&e.id)
                .map_or(0, |p| p.span.start);
            found.push((at, read));
        }
        match &e.kind {
            ExprKind::Select(s) => work.push((&s.operand, scope)),
            ExprKind::Call(c) => {
                work.extend(c.target.iter().map(|t| (&**t, scope.clone())));
                work.extend(c.args.iter().map(|a| (a, scope.clone())));
            }
            ExprKind::List(l) => work.extend(l.elements.iter().map(|x| (x, scope.clone()))),
            ExprKind::Map(m) => {
                for entry in &m.entries {
                    work.push((&entry.key, scope.clone()));
                    work.push((&entry.value, scope.clone()));
                }
            }
            ExprKind::Struct(s) => work.extend(s.fields.iter().map(|f| (&f.value, scope.clone()))),
            ExprKind::Comprehension(c) => {
                work.push((&c.iter_range, scope.clone()));
                work.push((&c.accu_init, scope.clone()));
                let mut inner = scope.clone();
                for var in std::iter::once(&c.iter_var).chain(c.iter_var2.iter()) {
                    inner = Some(Rc::new(Scope {
                        name: var.clone(),
                        domain: None,
                        parent: inner,
                    }));
                }
                inner = Some(Rc::new(Scope {
                    name: c.accu_var.clone(),
                    domain: domain_map(&c.accu_init, &scope),
                    parent: inner,
                }));
                for part in [&c.loop_condition, &c.loop_step, &c.result] {
                    work.push((part, inner.clone()));
                }
            }
            ExprKind::Error | ExprKind::Literal(_) | ExprKind::Ident(_) => {}
        }
    }
    found.sort_by_key(|(at, _)| *at);
    let mut seen = HashSet::new();
    found
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| seen.insert(r.clone()))
        .collect()
}

/// A selector compiled once: its program (or the library's compile error) and the names it
/// reads.
#[derive(Debug)]
struct Selector {
    program: Result<PlaceProgram, String>,
    reads: Vec<NameRead>,
}

/// Whose selector: the request's class's or the request's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The DeviceClass's `spec.selectors`.
    Class,
    /// The request's `selectors`.
    Request,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Class => "class",
            Source::Request => "request",
        }
    }
}

/// What the selectors of a request say of one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every selector is true.
    Matched,
    /// Selector `index` of `source` is false (the earlier ones are true).
    Rejected {
        /// Whose selector.
        source: Source,
        /// Its index in its list.
        index: usize,
    },
    /// Selector `index` of `source` did not compile or failed on this device, with the
    /// library's error.
    Failed {
        /// Whose selector.
        source: Source,
        /// Its index in its list.
        index: usize,
        /// The library's words (`no such key: x`, `operation cancelled: actual cost limit
        /// exceeded`, `CEL result of type ... could not be converted to bool ...`,
        /// `compilation failed: ...`).
        error: String,
        /// A compile error rather than a runtime error.
        compile: bool,
    },
}

/// A name a selector reads that no device of the slices has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// The selector (`deviceclasses/gpu spec.selectors[0]`,
    /// `resourceclaims/big spec.devices.requests[0].exactly.selectors[1]`).
    pub selector: String,
    /// The name.
    pub read: NameRead,
    /// A known name it is probably a misspelling of.
    pub suggestion: Option<String>,
}

/// The verdicts on one request.
#[derive(Debug)]
pub struct RequestReport {
    /// The claim, `namespace/name` as the allocator prints it.
    pub claim: String,
    /// `ResourceClaim` or `ResourceClaimTemplate`.
    pub kind: &'static str,
    /// The request (`name/subrequest` for `firstAvailable`).
    pub request: String,
    /// Its DeviceClass.
    pub class: String,
    /// Whether the class was among those given (without classes, none are applied).
    pub class_applied: bool,
    /// Where the request's selectors are (`resourceclaims/NAME spec.devices.requests[0].exactly`).
    pub path: String,
    /// The class's path (`deviceclasses/NAME`).
    class_path: String,
    own_name: String,
    /// An error of the whole request: its class does not exist, in the allocator's words.
    pub error: Option<String>,
    /// One verdict per device of the set, in its order (none when `error` is set).
    pub verdicts: Vec<Verdict>,
    /// Names its selectors read that no device has.
    pub unknown: Vec<UnknownName>,
}

impl RequestReport {
    /// The path of a selector (`deviceclasses/gpu spec.selectors[0]`).
    pub fn selector_path(&self, source: Source, index: usize) -> String {
        match source {
            Source::Class => format!("{} spec.selectors[{index}]", self.class_path),
            Source::Request => format!("{}.selectors[{index}]", self.path),
        }
    }

    /// A failure as the allocator reports it (`claim NS/NAME: selector #1: CEL runtime
    /// error: no such key: x`).
    pub fn allocator_error(&self, verdict: &Verdict) -> Option<String> {
        let Verdict::Failed {
            source,
            index,
            error,
            compile,
        } = verdict
        else {
            return None;
        };
        let whose = match source {
            Source::Class => format!("class {}", self.class),
            Source::Request => format!("claim {}", self.claim),
        };
        let what = if *compile { "compile" } else { "runtime" };
        Some(format!(
            "{whose}: selector #{index}: CEL {what} error: {error}"
        ))
    }

    /// How many devices every selector accepts.
    pub fn matched(&self) -> usize {
        self.verdicts
            .iter()
            .filter(|v| **v == Verdict::Matched)
            .count()
    }

    /// Whether a selector failed (to compile or on a device) or the request failed.
    pub fn failed(&self) -> bool {
        self.error.is_some()
            || self
                .verdicts
                .iter()
                .any(|v| matches!(v, Verdict::Failed { .. }))
    }

    /// The report as one JSON object: `{"claim", "request", "class", "devices": [{"driver",
    /// "pool", "device", "matched", "selector"?, "from"?, "error"?}], "unknown_attributes":
    /// [{"selector", "attribute" | "capacity", "suggestion"?}], "error"?}`.
    pub fn to_json(&self, devices: &DeviceSet) -> Json {
        let verdicts: Vec<Json> = self
            .verdicts
            .iter()
            .zip(&devices.devices)
            .map(|(v, d)| {
                let mut o = json!({
                    "driver": &*d.driver,
                    "pool": &*d.pool,
                    "device": d.name,
                    "matched": *v == Verdict::Matched,
                });
                match v {
                    Verdict::Matched => {}
                    Verdict::Rejected { source, index } => {
                        o["selector"] = json!(index);
                        o["from"] = json!(source.name());
                    }
                    Verdict::Failed {
                        source,
                        index,
                        error,
                        ..
                    } => {
                        o["selector"] = json!(index);
                        o["from"] = json!(source.name());
                        o["error"] = json!(error);
                    }
                }
                o
            })
            .collect();
        let unknown: Vec<Json> = self
            .unknown
            .iter()
            .map(|u| {
                let field = if u.read.capacity {
                    "capacity"
                } else {
                    "attribute"
                };
                let mut o = json!({"selector": u.selector, field: u.read.qualified()});
                if let Some(s) = &u.suggestion {
                    o["suggestion"] = json!(s);
                }
                o
            })
            .collect();
        let mut o = json!({
            "claim": self.claim,
            "kind": self.kind,
            "request": self.request,
            "class": self.class,
            "devices": verdicts,
            "unknown_attributes": unknown,
        });
        if !self.class_applied {
            o["class_applied"] = json!(false);
        }
        if let Some(e) = &self.error {
            o["error"] = json!(e);
        }
        o
    }
}

/// Selectors compiled once each, in the `dra-selector` environment of a version.
#[derive(Debug)]
pub struct Matcher {
    env: PlaceEnv,
    backend: Backend,
    compiled: HashMap<String, Arc<Selector>>,
}

/// A request's selectors, in the order the allocator runs them.
struct Plan {
    selectors: Vec<(Source, usize, Arc<Selector>)>,
}

impl Matcher {
    /// A matcher for selectors of Kubernetes `version`, or why the version has none.
    pub fn new(version: KubeVersion, backend: Backend) -> Result<Matcher, String> {
        Ok(Matcher {
            env: PlaceEnv::new(super::Place::DraSelector, version)?,
            backend,
            compiled: HashMap::new(),
        })
    }

    fn compile(&mut self, expression: &str) -> Arc<Selector> {
        if let Some(s) = self.compiled.get(expression) {
            return s.clone();
        }
        let program = self.env.compile(expression, self.backend);
        let reads = match &program {
            Ok(p) => name_reads(&p.ast),
            Err(_) => Vec::new(),
        };
        let s = Arc::new(Selector { program, reads });
        self.compiled.insert(expression.to_string(), s.clone());
        s
    }

    /// The verdicts of every request of `claims` on every device of `devices`. Without
    /// `classes` (`None`), classes' selectors are not applied; with them, a request whose
    /// class is not among them fails as in the allocator.
    pub fn run(
        &mut self,
        devices: &DeviceSet,
        classes: Option<&[DeviceClass]>,
        claims: &[Claim],
    ) -> Vec<RequestReport> {
        let by_name: HashMap<&str, &DeviceClass> = classes
            .unwrap_or_default()
            .iter()
            .map(|c| (c.name.as_str(), c))
            .collect();
        let mut reports = Vec::new();
        let mut plans = Vec::new();
        for claim in claims {
            for request in &claim.requests {
                let mut report = RequestReport {
                    claim: claim.display_name(),
                    kind: claim.kind,
                    request: request.name.clone(),
                    class: request.class.clone(),
                    class_applied: classes.is_some(),
                    path: format!("{} {}", claim.resource(), request.path),
                    class_path: format!("deviceclasses/{}", request.class),
                    own_name: request.own_name.clone(),
                    error: None,
                    verdicts: Vec::new(),
                    unknown: Vec::new(),
                };
                let class = by_name.get(request.class.as_str());
                if classes.is_some() && class.is_none() {
                    report.error = Some(format!(
                        "claim {}, request {}: could not retrieve device class {}: deviceclass.resource.k8s.io {:?} not found",
                        report.claim, report.own_name, request.class, request.class
                    ));
                    reports.push(report);
                    plans.push(None);
                    continue;
                }
                let class_selectors = class.map_or(&[][..], |c| c.selectors.as_slice());
                let mut plan = Plan {
                    selectors: Vec::new(),
                };
                for (source, list) in [
                    (Source::Class, class_selectors),
                    (Source::Request, request.selectors.as_slice()),
                ] {
                    for (i, expr) in list.iter().enumerate() {
                        let s = self.compile(expr);
                        for read in s.reads.iter().filter(|r| !devices.has(r)) {
                            report.unknown.push(UnknownName {
                                selector: report.selector_path(source, i),
                                read: read.clone(),
                                suggestion: devices.suggestion(read),
                            });
                        }
                        plan.selectors.push((source, i, s));
                    }
                }
                report.verdicts.reserve(devices.devices.len());
                reports.push(report);
                plans.push(Some(plan));
            }
        }
        for device in &devices.devices {
            let act = MapActivation::new().with(super::dra::DEVICE_VARIABLE, device.value.clone());
            for (report, plan) in reports.iter_mut().zip(&plans) {
                if let Some(plan) = plan {
                    report.verdicts.push(self.verdict(plan, &act));
                }
            }
        }
        reports
    }

    /// Runs a request's selectors on one device, stopping at the first false or failing.
    fn verdict(&self, plan: &Plan, act: &MapActivation) -> Verdict {
        for (source, index, selector) in &plan.selectors {
            let (source, index) = (*source, *index);
            let program = match &selector.program {
                Ok(p) => p,
                Err(e) => {
                    return Verdict::Failed {
                        source,
                        index,
                        error: e.clone(),
                        compile: true,
                    };
                }
            };
            let (result, _) = program.program.eval_details(act);
            let outcome = result
                .map_err(|e| e.to_string())
                .and_then(|v| self.env.check_result(&v).map(|()| v));
            match outcome {
                Ok(Value::Bool(true)) => {}
                Ok(_) => return Verdict::Rejected { source, index },
                Err(error) => {
                    return Verdict::Failed {
                        source,
                        index,
                        error,
                        compile: false,
                    };
                }
            }
        }
        Verdict::Matched
    }
}

/// One line of `cel dra --batch`: `{"slices": [...], "classes": [...], "claims": [...]}`
/// (objects as JSON; without `classes`, classes' selectors are not applied), answered with
/// `{"ok": true, "requests": [RequestReport::to_json...]}` or `{"ok": false, "error": ...}`
/// for input that cannot be used (the first error, with its path).
pub fn batch_line(case: &Map<String, Json>, version: KubeVersion, backend: Backend) -> Json {
    match run_case(case, version, backend) {
        Ok((reports, devices)) => json!({
            "ok": true,
            "requests": reports.iter().map(|r| r.to_json(&devices)).collect::<Vec<_>>(),
        }),
        Err(e) => json!({"ok": false, "error": e}),
    }
}

/// The reports of a [`batch_line`]'s objects, with the devices they are about (for callers
/// that show the reports themselves, such as the playground), or the line's first error.
pub fn run_case(
    case: &Map<String, Json>,
    version: KubeVersion,
    backend: Backend,
) -> Result<(Vec<RequestReport>, DeviceSet), String> {
    if let Some(k) = case
        .keys()
        .find(|k| !matches!(k.as_str(), "slices" | "classes" | "claims"))
    {
        return Err(format!(
            "unknown field \"{k}\" (known: slices, classes, claims)"
        ));
    }
    let inputs = Inputs::read(case, version)?;
    let mut matcher = Matcher::new(version, backend)?;
    let reports = matcher.run(&inputs.devices, inputs.classes.as_deref(), &inputs.claims);
    Ok((reports, inputs.devices))
}

/// The objects of a batch line.
struct Inputs {
    devices: DeviceSet,
    classes: Option<Vec<DeviceClass>>,
    claims: Vec<Claim>,
}

impl Inputs {
    /// Reads a line's `slices`, `classes` and `claims`; the first error, with its path.
    fn read(case: &Map<String, Json>, version: KubeVersion) -> Result<Inputs, String> {
        let list = |field: &str| -> Result<Option<&Vec<Json>>, String> {
            match case.get(field) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::Array(a)) => Ok(Some(a)),
                Some(v) => Err(format!("{field}: expected a list, got {}", json_kind(v))),
            }
        };
        let mut devices = DeviceSet::new();
        for (i, s) in list("slices")?.into_iter().flatten().enumerate() {
            if let Some(e) = devices.add_slice(s, version).into_iter().next() {
                return Err(format!("slices[{i}]: {e}"));
            }
        }
        let classes = match list("classes")? {
            None => None,
            Some(cs) => Some(
                cs.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        DeviceClass::read(c, version).map_err(|e| format!("classes[{i}]: {e}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let claims = list("claims")?
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| Claim::read(c, version).map_err(|e| format!("claims[{i}]: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Inputs {
            devices,
            classes,
            claims,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(expr: &str) -> Vec<String> {
        let env = PlaceEnv::new(super::super::Place::DraSelector, KubeVersion::new(1, 35)).unwrap();
        let p = env.compile(expr, Backend::Interpreter).unwrap();
        name_reads(&p.ast)
            .iter()
            .map(|r| {
                format!(
                    "{}:{}",
                    if r.capacity { "cap" } else { "attr" },
                    r.qualified()
                )
            })
            .collect()
    }

    #[test]
    fn reads_are_found_in_every_form() {
        assert_eq!(
            reads(
                r#"device.attributes["a.com"].x && device.attributes["a.com"]["y"] == true
                   && "z" in device.attributes["b.com"] && has(device.attributes["a.com"].w)
                   && device.capacity["a.com"].mem.isGreaterThan(quantity("1"))
                   && cel.bind(d, device.attributes["c.com"], d.v && d["u"])"#
            ),
            [
                "attr:a.com/x",
                "attr:a.com/y",
                "attr:b.com/z",
                "attr:a.com/w",
                "cap:a.com/mem",
                "attr:c.com/v",
                "attr:c.com/u"
            ]
        );
        // A comprehension variable named `device` is not the device.
        assert!(
            reads(r#"[{"attributes": {"a": {"x": true}}}].all(device, device.attributes["a"].x)"#)
                .is_empty()
        );
        // Keys that are not literals are not names.
        assert!(reads(r#"device.attributes["a.com"][device.driver] == true"#).is_empty());
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("memroy", "memory"), 2);
        assert_eq!(edit_distance("model", "model"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
