#!/usr/bin/env python3
"""Generate Celerity's built-in Kubernetes schema data (Kubernetes 1.25 .. 1.37).

Run:   python3 tools/k8s-schemas/generate.py            (downloads the pinned wheels with pip)
       python3 tools/k8s-schemas/generate.py --wheels DIR   (uses wheels already in DIR, offline)
Needs: Python 3.11, pip (only for downloading), the standard library. Nothing is imported from
the wheels: they are read as zip files.

SOURCES (both from PyPI, pinned by version and sha256, downloaded with
`pip download --no-deps <name>==<version>` into a temporary directory, never committed)

 1. Schemas: kubernetes-validate 1.37.0
      wheel  kubernetes_validate-1.37.0-py3-none-any.whl   (sha256 in KV_SHA256 below)
      files  kubernetes_validate/kubernetes-json-schema/v1.<N>.0-local/_definitions.json,
             N = 25 .. 37 (one file per Kubernetes minor version; the schemas of the x.y.0 release)
    Each file is a JSON Schema 2020-12 document {"$defs": {<definition name>: <schema>}} that the
    package's authors produced from Kubernetes' published OpenAPI document of that release with
    (a fork of) openapi2jsonschema: every definition of the document, descriptions kept, every
    `type: T` widened to `type: [T, "null"]` inside properties, `$ref`s pointing at
    `#/$defs/<name>`, IntOrString turned into `oneOf: [string, integer]`, and apiVersion/kind
    properties of kinds given an `enum` of their own group-version and kind.
    Not read: the `*-local-strict` twins (the same plus `additionalProperties: false` on every
    object, an artefact of the converter's --strict mode), the per-kind files
    `<kind>-<group>-<version>.json` (copies of one definition each with an `$id`), `all.json`
    (a oneOf of every definition).

 2. Discovery facts (kind -> plural resource, namespaced or cluster-scoped):
    lightkube-models, one pinned release per Kubernetes minor (LIGHTKUBE below, e.g. 1.35.0.8 for
    1.35: its first three numbers are the Kubernetes release whose OpenAPI document it was
    generated from).
      files  lightkube/resources/<group>_<version>.py
    These generated modules declare one class per REST resource, e.g.
        class Deployment(res.NamespacedResourceG, ...):
            _api_info = res.ApiInfo(resource=res.ResourceDef('apps', 'v1', 'Deployment'),
                                    plural='deployments', verbs=[...])
    The generator parses them with `ast` (never imports them). Base class GlobalResource means
    cluster-scoped; NamespacedResource / NamespacedResourceG mean namespaced; *SubResource classes
    (parent=..., action='status'|'scale'|'eviction'|...) are subresources.

CONVERSION (per Kubernetes version, per definition of _definitions.json)
  1. Drop prose: every `description` key. (No other prose key occurs; `$schema` / `$id` of the
     document are dropped.)
  2. Undo the converter's nullability: `type: [T, "null"]` -> `type: T` (Kubernetes' OpenAPI
     documents do not mark built-in fields nullable; nothing else carries `null`).
  3. `$ref: "#/$defs/<name>"` -> `$ref: "#/components/schemas/<name>"`. When facts other than
     the reference remain beside it (x-kubernetes-patch-strategy, x-kubernetes-list-type,
     x-kubernetes-map-type), the reference is wrapped as `allOf: [{"$ref": ...}]` with the
     facts beside it, the way Kubernetes' OpenAPI v3 documents write it (OpenAPI 3.0 ignores
     siblings of a bare $ref). A lone reference stays a bare `$ref`.
  4. Drop the converter's injected `enum: [<group/version>]` on `apiVersion` and
     `enum: [<Kind>]` on `kind` of definitions that carry x-kubernetes-group-version-kind
     (Kubernetes' documents have no such enum; the group-version-kind list stays).
  5. IntOrString: `oneOf: [{type: string}, {type: integer}]` ->
     `{format: int-or-string, oneOf: [{type: integer}, {type: string}]}` as Kubernetes' OpenAPI v3
     documents write io.k8s.apimachinery.pkg.util.intstr.IntOrString. Quantity keeps
     `oneOf: [{type: string}, {type: number}]`, which is how Kubernetes' documents write it.
  6. Everything else is kept as the source has it: type, format, properties, required, items,
     additionalProperties, enum, default, x-kubernetes-list-type, x-kubernetes-list-map-keys,
     x-kubernetes-map-type, x-kubernetes-int-or-string, x-kubernetes-embedded-resource,
     x-kubernetes-preserve-unknown-fields, x-kubernetes-group-version-kind,
     x-kubernetes-patch-strategy, x-kubernetes-patch-merge-key, x-kubernetes-unions, nullable,
     numeric/string/array bounds, pattern, oneOf/allOf/anyOf. A key the generator does not know
     stops it (so a new source release cannot slip in unreviewed prose or shapes).
  7. Deduplicate: the converted definition is serialised canonically (sorted keys, no spaces);
     identical bodies of one definition name in several Kubernetes versions are stored once.

OUTPUT  (crates/celerity-kubernetes/schemas/, committed; see README.md for the loader's view)
  defs/<package>.json     one file per definition package (the definition name up to its last
                          dot, e.g. io.k8s.api.apps.v1): {"<TypeName>": [<variant 0>, <variant 1>,
                          ...], ...}; a variant is a converted schema whose $refs name
                          `#/components/schemas/<full definition name>`. Variants are numbered in
                          order of first appearance (1.25 first), so adding a Kubernetes version
                          only appends.
  versions/1.<N>.json     {"kubernetes": "1.N",
                           "schemas": {"<package>": {"<TypeName>": <variant number>}},
                           "groupVersions": {"<apiVersion>": {"kinds": {"<Kind>": {
                               "schema": "<definition name>",
                               "resource": "<plural>", "namespaced": true|false,   (REST resources)
                               "subresourceOf": [{"groupVersion", "resource", "namespaced"}]
                                                                  (kinds served only as a subresource)
                           }}}}}
                          A group-version is listed when the source has at least one kind of it
                          outside io.k8s.apimachinery (meta's DeleteOptions / WatchEvent carry
                          group-version-kinds of long-removed group-versions too) or lightkube
                          lists a resource of it. The core group is "v1".
  SIZES.md (beside this script): sizes per version and in total, with and without
                          deduplication, and compressed for information.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import io
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import OrderedDict, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "crates", "celerity-kubernetes", "schemas")

KUBE_MINORS = list(range(25, 38))  # 1.25 .. 1.37

KV_NAME = "kubernetes-validate"
KV_VERSION = "1.37.0"
KV_WHEEL = "kubernetes_validate-1.37.0-py3-none-any.whl"
KV_SHA256 = "85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9"
KV_PATH = "kubernetes_validate/kubernetes-json-schema/v1.{minor}.0-local/_definitions.json"

LK_NAME = "lightkube-models"
# Kubernetes minor -> (lightkube-models version, wheel sha256)
LIGHTKUBE = {
    25: ("1.25.4.8", "a8685b9a7b004139e760a5ba60972e3acff5f3dac096a115754b79aa3d757be8"),
    26: ("1.26.0.8", "d2b589f2fcb436381e1f8c967f0899e0b68062e79ac509b0d86f16f4ccadcb8d"),
    27: ("1.27.1.8", "2f45bab2315209e304908029a45e3d1f5883bb3d17837bbd896637b2f0c540bd"),
    28: ("1.28.1.8", "f367791eb209935a6c7561b078f95a115718f588c70bfb03b25db1057420b72e"),
    29: ("1.29.0.8", "13db9930b719f282d7d39f58b51a8442f8fe67a44208544fa5184c83b0026874"),
    30: ("1.30.0.8", "34c43ae4824214eb8bc5e219da57c319ba411a51f503f79510d8c1ae6966ecb5"),
    31: ("1.31.1.8", "50c0e2dd2c125cd9b50e93269e2d212bcbec19f7b00de91aa66a5ec320772fae"),
    32: ("1.32.0.8", "73786dac63085521f4c88aa69d86bfdc76a67da997c1770e5bdcef8482e4b2a0"),
    33: ("1.33.1.8", "cb6343388eb6f03c968ca4f23678743223cdf8f841f9c07f8bd603718e771f83"),
    34: ("1.34.0.8", "7731233ff4e69b6ffd8f7c6dde0788196a0adb76ac7eedc8383f88d4545ff19c"),
    35: ("1.35.0.8", "d01fce42f96baf47a77a571bff59d6a513e96ae043fc03cfaaaaf79c609c4441"),
    36: ("1.36.3.8", "a938eed82e61ae3083e7cac15802e58cf8f7e5d7d6a9a9576d5cbb043427db46"),
    37: ("1.37.0.8", "fe5a16a2a266fd1a5a1472d6f1ee873dbc85d690bc8d60512b1e01157a3d6745"),
}


def lk_wheel(version: str) -> str:
    return f"lightkube_models-{version}-py3-none-any.whl"


# Keys a schema node may carry after conversion. Anything else stops the generator.
SCHEMA_KEYS = {
    "type", "format", "properties", "required", "items", "additionalProperties", "enum",
    "default", "$ref", "allOf", "oneOf", "anyOf", "not", "nullable",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
    "minProperties", "maxProperties",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-group-version-kind",
    "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key", "x-kubernetes-unions",
    "x-kubernetes-validations",
}
PROSE_KEYS = {"description", "title", "example", "examples", "externalDocs", "$comment"}
# Keys whose value is a schema / map of schemas / list of schemas.
SUB_SCHEMA = {"items", "not"}
SUB_SCHEMA_LIST = {"allOf", "oneOf", "anyOf"}


# --------------------------------------------------------------------------------------------
# fetching


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def get_wheel(wheel_dir: str, name: str, version: str, filename: str, sha256: str,
              download: bool) -> str:
    path = os.path.join(wheel_dir, filename)
    if not os.path.exists(path):
        if not download:
            sys.exit(f"missing {path} (and --no-download given)")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--only-binary", ":all:", "-d", wheel_dir, f"{name}=={version}"],
            check=True)
    got = sha256_of(path)
    if got != sha256:
        sys.exit(f"{filename}: sha256 {got}, expected {sha256}")
    return path


# --------------------------------------------------------------------------------------------
# schema conversion


class Stats:
    def __init__(self):
        self.dropped_enums = 0
        self.wrapped_refs = 0
        self.int_or_string = 0


REF_PREFIX_SRC = "#/$defs/"
REF_PREFIX_OUT = "#/components/schemas/"


def convert(node, stats: Stats, gvk_def: bool = False, prop_name: str | None = None):
    """Convert one source schema node into the OpenAPI v3 shape (see header, steps 1-6)."""
    if not isinstance(node, dict):
        raise ValueError(f"schema node is not an object: {node!r}")
    out = {}
    for key, value in node.items():
        if key in PROSE_KEYS:
            continue
        if key == "type":
            if isinstance(value, list):
                kinds = [t for t in value if t != "null"]
                if len(kinds) != 1:
                    raise ValueError(f"unexpected type list {value!r}")
                value = kinds[0]
            out["type"] = value
        elif key == "$ref":
            if not value.startswith(REF_PREFIX_SRC):
                raise ValueError(f"unexpected $ref {value!r}")
            out["$ref"] = REF_PREFIX_OUT + value[len(REF_PREFIX_SRC):]
        elif key == "properties":
            out["properties"] = {
                name: convert(sub, stats, prop_name=name) for name, sub in value.items()
            }
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else convert(value, stats)
        elif key in SUB_SCHEMA:
            out[key] = convert(value, stats)
        elif key in SUB_SCHEMA_LIST:
            out[key] = [convert(v, stats) for v in value]
        elif key in SCHEMA_KEYS:
            out[key] = value
        else:
            raise ValueError(f"unknown schema key {key!r}")

    # step 5: IntOrString as Kubernetes' v3 documents write it
    if out.get("oneOf") == [{"type": "string"}, {"type": "integer"}] and len(out) == 1:
        stats.int_or_string += 1
        out = {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}

    # step 3: a reference with facts beside it becomes allOf: [{$ref}]
    if "$ref" in out and len(out) > 1:
        stats.wrapped_refs += 1
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def convert_definition(name: str, schema: dict, stats: Stats) -> dict:
    gvks = schema.get("x-kubernetes-group-version-kind")
    out = convert(schema, stats)
    if gvks:
        # step 4: drop the converter's injected apiVersion / kind enums
        api_versions = {(g["group"] + "/" if g["group"] else "") + g["version"] for g in gvks}
        kinds = {g["kind"] for g in gvks}
        props = out.get("properties", {})
        for prop, allowed in (("apiVersion", api_versions), ("kind", kinds)):
            p = props.get(prop)
            if p is not None and "enum" in p:
                if not set(p["enum"]) <= allowed:
                    raise ValueError(f"{name}.{prop}: enum {p['enum']} not from its gvk")
                del p["enum"]
                stats.dropped_enums += 1
    return out


def canonical(schema) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def split_name(name: str) -> tuple[str, str]:
    package, _, type_name = name.rpartition(".")
    if not package or not type_name:
        raise ValueError(f"definition name without a package: {name!r}")
    return package, type_name


def refs_of(schema, acc: set):
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == "$ref" and isinstance(v, str):
                acc.add(v[len(REF_PREFIX_OUT):])
            elif k in ("x-kubernetes-group-version-kind", "x-kubernetes-unions", "enum",
                       "default", "required", "x-kubernetes-list-map-keys"):
                continue
            else:
                refs_of(v, acc)
    elif isinstance(schema, list):
        for v in schema:
            refs_of(v, acc)
    return acc


# --------------------------------------------------------------------------------------------
# discovery facts from lightkube-models


def api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def _str_args(call: ast.Call) -> list[str]:
    return [a.value for a in call.args if isinstance(a, ast.Constant)]


def parse_lightkube(wheel_path: str) -> list[dict]:
    """Every resource class of lightkube/resources/*.py as a dict."""
    found = []
    with zipfile.ZipFile(wheel_path) as z:
        for member in sorted(z.namelist()):
            if not re.fullmatch(r"lightkube/resources/[a-z0-9_]+\.py", member):
                continue
            if member.endswith("__init__.py"):
                continue
            tree = ast.parse(z.read(member).decode("utf-8"), filename=member)
            for cls in tree.body:
                if not isinstance(cls, ast.ClassDef) or not cls.bases:
                    continue
                base = cls.bases[0]
                if not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name)
                        and base.value.id == "res"):
                    continue
                info = None
                for stmt in cls.body:
                    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                            and isinstance(stmt.targets[0], ast.Name)
                            and stmt.targets[0].id == "_api_info"):
                        info = stmt.value
                if info is None:
                    continue
                kw = {k.arg: k.value for k in info.keywords}
                entry = {"class": cls.name, "base": base.attr, "file": member}
                g, v, k = _str_args(kw["resource"])
                entry["group"], entry["version"], entry["kind"] = g, v, k
                if "parent" in kw:
                    pg, pv, pk = _str_args(kw["parent"])
                    entry["parent"] = (pg, pv, pk)
                entry["plural"] = kw["plural"].value
                entry["action"] = kw["action"].value if "action" in kw else None
                found.append(entry)
    return found


SCOPE = {
    "GlobalResource": False, "NamespacedResource": True, "NamespacedResourceG": True,
    "GlobalSubResource": False, "NamespacedSubResource": True,
}


# --------------------------------------------------------------------------------------------
# output


def write_json_lines(path: str, obj: dict):
    """A JSON object with one top-level member per line (compact members): small and diffable."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    parts = []
    for k, v in obj.items():
        parts.append(json.dumps(k, ensure_ascii=False) + ":" + json.dumps(
            v, sort_keys=False, separators=(",", ":"), ensure_ascii=False))
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return len(text.encode("utf-8"))


def fmt(n: int) -> str:
    return f"{n / 1024:,.0f} KiB" if n < 1024 * 1024 else f"{n / 1048576:,.2f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheels", help="directory holding (or receiving) the pinned wheels; "
                    "default: a temporary directory")
    ap.add_argument("--no-download", action="store_true",
                    help="fail instead of running pip download when a wheel is missing")
    args = ap.parse_args()

    tmp = None
    wheel_dir = args.wheels
    if not wheel_dir:
        tmp = tempfile.TemporaryDirectory(prefix="k8s-schemas-")
        wheel_dir = tmp.name
    os.makedirs(wheel_dir, exist_ok=True)

    kv = get_wheel(wheel_dir, KV_NAME, KV_VERSION, KV_WHEEL, KV_SHA256, not args.no_download)
    stats = Stats()
    sources: dict[int, dict] = {}
    raw_sizes: dict[int, int] = {}
    with zipfile.ZipFile(kv) as z:
        for minor in KUBE_MINORS:
            data = z.read(KV_PATH.format(minor=minor))
            raw_sizes[minor] = len(data)
            doc = json.loads(data)
            sources[minor] = doc["$defs"]

    # ---- convert + deduplicate
    store: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))  # pkg -> type -> [canonical]
    version_defs: dict[int, dict[str, dict]] = {}  # minor -> name -> converted
    version_index: dict[int, dict[str, dict[str, int]]] = {}
    for minor in KUBE_MINORS:
        converted = {}
        index: dict[str, dict[str, int]] = defaultdict(dict)
        for name in sorted(sources[minor]):
            schema = convert_definition(name, sources[minor][name], stats)
            converted[name] = schema
            pkg, typ = split_name(name)
            c = canonical(schema)
            variants = store[pkg][typ]
            if c not in variants:
                variants.append(c)
            index[pkg][typ] = variants.index(c)
        # every $ref must resolve within the version
        for name, schema in converted.items():
            for r in refs_of(schema, set()):
                if r not in converted:
                    raise SystemExit(f"1.{minor}: {name} refers to missing {r}")
        version_defs[minor] = converted
        version_index[minor] = {p: dict(sorted(t.items())) for p, t in sorted(index.items())}

    # ---- discovery
    lk_resources: dict[int, list[dict]] = {}
    for minor in KUBE_MINORS:
        ver, sha = LIGHTKUBE[minor]
        path = get_wheel(wheel_dir, LK_NAME, ver, lk_wheel(ver), sha, not args.no_download)
        lk_resources[minor] = parse_lightkube(path)

    warnings: list[str] = []
    version_gvs: dict[int, dict] = {}
    for minor in KUBE_MINORS:
        defs = version_defs[minor]
        gv_kinds: dict[str, dict[str, dict]] = defaultdict(dict)
        real_gv = set()
        for name, schema in defs.items():
            for g in schema.get("x-kubernetes-group-version-kind", []):
                av = api_version(g["group"], g["version"])
                prev = gv_kinds[av].get(g["kind"])
                if prev is not None and prev["schema"] != name:
                    raise SystemExit(f"1.{minor}: {av} {g['kind']} has two schemas: "
                                     f"{prev['schema']} and {name}")
                gv_kinds[av][g["kind"]] = {"schema": name}
                if not name.startswith("io.k8s.apimachinery."):
                    real_gv.add(av)
        top = {}
        subs = defaultdict(list)
        for r in lk_resources[minor]:
            av = api_version(r["group"], r["version"])
            namespaced = SCOPE[r["base"]]
            if r["action"] is None and "parent" not in r:
                key = (av, r["kind"])
                fact = {"resource": r["plural"], "namespaced": namespaced}
                if key in top and top[key] != fact:
                    raise SystemExit(f"1.{minor}: {key} has two resources: {top[key]} {fact}")
                top[key] = fact
                real_gv.add(av)
            elif r["action"] is not None and "parent" in r:
                pav = api_version(r["parent"][0], r["parent"][1])
                subs[(av, r["kind"])].append({
                    "groupVersion": pav, "resource": f"{r['plural']}/{r['action']}",
                    "namespaced": namespaced})
        gvs = {}
        for av in sorted(real_gv, key=lambda a: ("/" in a, a)):
            kinds = {}
            for kind in sorted(gv_kinds.get(av, {})):
                entry = dict(gv_kinds[av][kind])
                if (av, kind) in top:
                    entry.update(top[(av, kind)])
                elif (av, kind) in subs:
                    seen = []
                    for s in subs[(av, kind)]:
                        if s not in seen:
                            seen.append(s)
                    entry["subresourceOf"] = sorted(
                        seen, key=lambda s: (s["groupVersion"], s["resource"]))
                kinds[kind] = entry
            for (tav, tkind), fact in sorted(top.items()):
                if tav == av and tkind not in kinds:
                    warnings.append(f"1.{minor}: lightkube lists {av} {tkind} "
                                    f"({fact['resource']}) but the schemas have no such kind")
                    kinds[tkind] = {"schema": None, **fact}
            gvs[av] = {"kinds": kinds}
        version_gvs[minor] = gvs

    # ---- write
    if os.path.isdir(OUT):
        for root, _dirs, files in os.walk(OUT):
            for f in files:
                if f.endswith(".json"):
                    os.remove(os.path.join(root, f))
    store_sizes = {}
    variant_sizes: dict[tuple[str, str, int], int] = {}
    for pkg in sorted(store):
        obj = {}
        for typ in sorted(store[pkg]):
            obj[typ] = [json.loads(c) for c in store[pkg][typ]]
            for i, c in enumerate(store[pkg][typ]):
                variant_sizes[(pkg, typ, i)] = len(c.encode("utf-8")) + 1
        store_sizes[pkg] = write_json_lines(os.path.join(OUT, "defs", pkg + ".json"), obj)
    index_sizes = {}
    for minor in KUBE_MINORS:
        obj = OrderedDict()
        obj["kubernetes"] = f"1.{minor}"
        obj["source"] = (f"{KV_NAME} {KV_VERSION} {KV_PATH.format(minor=minor)}; "
                         f"{LK_NAME} {LIGHTKUBE[minor][0]} lightkube/resources/*.py")
        obj["schemas"] = version_index[minor]
        obj["groupVersions"] = version_gvs[minor]
        index_sizes[minor] = write_json_lines(
            os.path.join(OUT, "versions", f"1.{minor}.json"), obj)

    # ---- measure
    rows = []
    total_single = total_gv_docs = 0
    first_seen: dict[tuple[str, str, int], int] = {}
    for minor in KUBE_MINORS:
        for pkg, types in version_index[minor].items():
            for typ, i in types.items():
                first_seen.setdefault((pkg, typ, i), minor)
    for minor in KUBE_MINORS:
        defs = version_defs[minor]
        single = len(canonical({"components": {"schemas": defs}}).encode())
        # per-GV documents as the API server splits them (closure of the GV's kinds)
        gv_docs = 0
        for av, gv in version_gvs[minor].items():
            todo = [k["schema"] for k in gv["kinds"].values() if k["schema"]]
            seen = set()
            while todo:
                n = todo.pop()
                if n in seen:
                    continue
                seen.add(n)
                todo.extend(refs_of(defs[n], set()))
            gv_docs += len(canonical({"components": {"schemas": {n: defs[n] for n in sorted(seen)}}}).encode())
        used = sum(variant_sizes[(p, t, i)] for p, ts in version_index[minor].items()
                   for t, i in ts.items())
        new = sum(variant_sizes[k] for k, m in first_seen.items() if m == minor)
        rows.append((minor, raw_sizes[minor], single, gv_docs, index_sizes[minor], used, new,
                     len(defs)))
        total_single += single
        total_gv_docs += gv_docs

    total_store = sum(store_sizes.values())
    total_index = sum(index_sizes.values())
    total_dedup = total_store + total_index
    blob = b""
    for root, _dirs, files in sorted(os.walk(OUT)):
        for f in sorted(files):
            with open(os.path.join(root, f), "rb") as fh:
                blob += fh.read()
    gz_all = len(gzip.compress(blob, 9, mtime=0))
    xz_all = len(lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME))
    gz_files = 0
    for root, _dirs, files in os.walk(OUT):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                gz_files += len(gzip.compress(fh.read(), 9, mtime=0))
    n_variants = sum(len(v) for t in store.values() for v in t.values())
    n_defs = sum(len(d) for d in version_defs.values())

    lines = [
        "# Sizes of the generated schema data",
        "",
        "Written by `generate.py` (do not edit). Bytes as committed (UTF-8 JSON).",
        "",
        "| Kubernetes | definitions | source `_definitions.json` | converted, one document | "
        "converted, per-GV documents | version index | store bytes this version uses | "
        "store bytes first added by this version |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for minor, raw, single, gvd, idx, used, new, ndefs in rows:
        lines.append(f"| 1.{minor} | {ndefs} | {fmt(raw)} | {fmt(single)} | {fmt(gvd)} | "
                     f"{fmt(idx)} | {fmt(used)} | {fmt(new)} |")
    lines += [
        "",
        f"- Definitions over all versions: {n_defs}; distinct bodies stored: {n_variants} "
        f"in {len(store)} package files.",
        f"- Without deduplication, one converted document per version: {fmt(total_single)}; "
        f"per-GV documents (each GV's kinds and everything they reference, as the API "
        f"server serves them, core types repeated in every GV): {fmt(total_gv_docs)}.",
        f"- With deduplication (committed): store `defs/` {fmt(total_store)} + indexes "
        f"`versions/` {fmt(total_index)} = **{fmt(total_dedup)}** "
        f"({total_dedup} bytes) for all {len(KUBE_MINORS)} versions.",
        f"- Compressed, for information only (nothing compressed is committed): every file "
        f"gzip -9 on its own {fmt(gz_files)}; all files as one stream gzip -9 {fmt(gz_all)}, "
        f"xz -9e {fmt(xz_all)}.",
        f"- Budget: 8 MiB in the binary for all versions. The uncompressed committed form "
        f"{'fits' if total_dedup < 8 * 1048576 else 'does NOT fit'}.",
        "",
    ]
    with open(os.path.join(HERE, "SIZES.md"), "w") as f:
        f.write("\n".join(lines))

    print("\n".join(lines))
    print(f"conversion: {stats.dropped_enums} injected apiVersion/kind enums dropped, "
          f"{stats.wrapped_refs} $refs wrapped in allOf, {stats.int_or_string} IntOrString "
          f"rewritten (all counts over all versions)")
    for w in warnings:
        print("warning:", w)
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
