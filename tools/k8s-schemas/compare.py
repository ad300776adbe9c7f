#!/usr/bin/env python3
"""Check the generated schema data for one Kubernetes version against Kubernetes' own
OpenAPI v3 documents, kind by kind.

Run:   python3 tools/k8s-schemas/compare.py [--reference DIR] [--version 1.35] [--out FILE]
       DIR defaults to ../shared/k8s-openapi-v3/<version> relative to the repository root
       (/work/shared/k8s-openapi-v3/1.35 here): one JSON document per group-version, laid out as
       the API server serves them (api/v1.json = /openapi/v3/api/v1,
       apis/<group>/<version>.json = /openapi/v3/apis/<group>/<version>). The documents are
       read in place and never copied.
Needs: Python 3.11, the standard library, the generated data in crates/celerity-kubernetes/schemas/.

What it checks
  1. The group-versions: the reference's files vs the generated index's groupVersions.
  2. Discovery: for every REST resource the reference's paths define
     (/api/v1/[namespaces/{namespace}/]<resource>, /apis/<g>/<v>/[namespaces/{namespace}/]<resource>,
     and the subresource paths .../{name}/<sub>), its kind (the operations'
     x-kubernetes-group-version-kind), plural name and scope, vs the index's kinds.
  3. The kinds: the definitions carrying an x-kubernetes-group-version-kind of the GV in the
     reference document vs the index's kinds of that GV, and the definition each names.
  4. The schemas: for every kind, the definitions reachable from it (through $ref) in the
     reference document vs in the generated data, and then, definition by definition and node by
     node, every fact: type, format, required, enum, default, nullable, items,
     additionalProperties, properties (names), $ref targets, oneOf/anyOf/allOf,
     x-kubernetes-list-type, x-kubernetes-list-map-keys, x-kubernetes-map-type,
     int-or-string (format int-or-string or x-kubernetes-int-or-string),
     x-kubernetes-embedded-resource, x-kubernetes-preserve-unknown-fields,
     x-kubernetes-patch-strategy / -merge-key, x-kubernetes-unions, x-kubernetes-validations,
     x-kubernetes-group-version-kind, bounds and patterns. Descriptions are ignored (the data has
     none by design). `allOf: [{$ref: X}]` and a bare `$ref: X` count as the same.
Prints a report (Markdown) and exits 0; --strict makes it exit 1 when any difference is found;
--differences rewrites the listing in DIFFERENCES.md (below its marker line; the explanations
above it are kept).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "crates", "celerity-kubernetes", "schemas")
REPO = os.path.dirname(os.path.dirname(HERE))
REF = "#/components/schemas/"
MARKER = "<!-- everything below is written by compare.py --differences -->"


# --------------------------------------------------------------------------------------------
# the generated data, read the way the Rust loader will


class Generated:
    def __init__(self, version: str):
        with open(os.path.join(OUT, "versions", f"{version}.json")) as f:
            self.index = json.load(f)
        self._stores: dict[str, dict] = {}

    def store(self, package: str) -> dict:
        if package not in self._stores:
            with open(os.path.join(OUT, "defs", package + ".json")) as f:
                self._stores[package] = json.load(f)
        return self._stores[package]

    def definition(self, name: str):
        package, _, typ = name.rpartition(".")
        variant = self.index["schemas"].get(package, {}).get(typ)
        if variant is None:
            return None
        return self.store(package)[typ][variant]

    def group_versions(self) -> dict:
        return self.index["groupVersions"]

    def document(self, gv: str) -> dict:
        """The OpenAPI v3 document (components.schemas only) for one group-version."""
        kinds = self.index["groupVersions"][gv]["kinds"]
        todo = [k["schema"] for k in kinds.values() if k.get("schema")]
        schemas = {}
        while todo:
            n = todo.pop()
            if n in schemas:
                continue
            body = self.definition(n)
            if body is None:
                raise KeyError(f"{gv}: {n} is not in the data")
            schemas[n] = body
            todo.extend(refs(body))
        return {"openapi": "3.0.0", "components": {"schemas": dict(sorted(schemas.items()))}}


def refs(schema, acc=None) -> set:
    acc = set() if acc is None else acc
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == "$ref" and isinstance(v, str) and v.startswith(REF):
                acc.add(v[len(REF):])
            elif k in ("x-kubernetes-group-version-kind", "x-kubernetes-unions", "enum",
                       "default", "required", "x-kubernetes-list-map-keys", "example"):
                continue
            else:
                refs(v, acc)
    elif isinstance(schema, list):
        for v in schema:
            refs(v, acc)
    return acc


def closure(roots, lookup) -> set:
    seen = set()
    todo = list(roots)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        body = lookup(n)
        if body is None:
            continue
        seen.add(n)
        todo.extend(refs(body))
    return seen


# --------------------------------------------------------------------------------------------
# node-by-node comparison

PROSE = {"description", "title", "example", "externalDocs"}
SUBSCHEMA_KEYS = {"properties", "items", "additionalProperties", "oneOf", "anyOf", "allOf", "not"}


def normalise(node):
    """Drop prose; turn allOf: [{$ref}] (with or without siblings) into $ref + siblings."""
    if not isinstance(node, dict):
        return node
    node = {k: v for k, v in node.items() if k not in PROSE}
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) <= {"$ref"} | PROSE \
            and "$ref" in all_of[0] and "$ref" not in node:
        del node["allOf"]
        node["$ref"] = all_of[0]["$ref"]
    return node


def category(key: str) -> str:
    if key == "format":
        return "format"
    return key


def int_or_string(node) -> bool:
    return node.get("format") == "int-or-string" or node.get("x-kubernetes-int-or-string") is True


def compare_node(a, b, path: str, diffs: list):
    """a: reference node, b: generated node."""
    a = normalise(a)
    b = normalise(b)
    if isinstance(a, bool) or isinstance(b, bool):
        if a != b:
            diffs.append((path, "additionalProperties", a, b))
        return
    if int_or_string(a) != int_or_string(b):
        diffs.append((path, "int-or-string", int_or_string(a), int_or_string(b)))
    keys = (set(a) | set(b)) - SUBSCHEMA_KEYS
    for k in sorted(keys):
        va, vb = a.get(k), b.get(k)
        if k == "required" or k == "x-kubernetes-list-map-keys":
            if set(va or []) != set(vb or []):
                diffs.append((path, k, va, vb))
        elif va != vb:
            diffs.append((path, k, va, vb))
    pa, pb = a.get("properties", {}), b.get("properties", {})
    for name in sorted(set(pa) | set(pb)):
        sub = f"{path}.{name}"
        if name not in pa:
            diffs.append((sub, "property", None, "present"))
        elif name not in pb:
            diffs.append((sub, "property", "present", None))
        else:
            compare_node(pa[name], pb[name], sub, diffs)
    for k, suffix in (("items", "[]"), ("additionalProperties", "{}"), ("not", "!")):
        if k in a or k in b:
            if k not in a or k not in b:
                diffs.append((path + suffix, k, "present" if k in a else None,
                              "present" if k in b else None))
            else:
                compare_node(a[k], b[k], path + suffix, diffs)
    for k in ("oneOf", "anyOf", "allOf"):
        la, lb = a.get(k), b.get(k)
        if la is None and lb is None:
            continue
        if la is None or lb is None or len(la) != len(lb):
            diffs.append((path, k, la, lb))
            continue
        # order-insensitive: pair by canonical form where possible
        ca = sorted(json.dumps(normalise(x), sort_keys=True) for x in la)
        cb = sorted(json.dumps(normalise(x), sort_keys=True) for x in lb)
        if ca != cb:
            for i, (x, y) in enumerate(zip(sorted(la, key=lambda x: json.dumps(x, sort_keys=True)),
                                           sorted(lb, key=lambda x: json.dumps(x, sort_keys=True)))):
                compare_node(x, y, f"{path}<{k}{i}>", diffs)


def short(v, limit=90) -> str:
    if v is None:
        return "—"
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= limit else s[:limit - 1] + "…"


# --------------------------------------------------------------------------------------------
# discovery from the reference's paths

PATH_RE = re.compile(
    r"^/(?:api|apis/(?P<group>[^/]+))/(?P<version>[^/]+)/"
    r"(?P<ns>namespaces/\{namespace\}/)?(?P<resource>[a-z0-9]+)"
    r"(?:/\{name\}(?:/(?P<sub>[a-z0-9]+))?)?$")


def discovery_from_paths(doc: dict, connect_only: set) -> dict:
    """(apiVersion, resource-or-resource/sub) -> {kind, namespaced, gvk apiVersion}."""
    found = {}
    for path, item in doc.get("paths", {}).items():
        if "/watch/" in path:
            continue
        m = PATH_RE.match(path)
        if not m:
            continue
        group = m.group("group") or ""
        av = f"{group}/{m.group('version')}" if group else m.group("version")
        resource = m.group("resource")
        if m.group("sub"):
            resource += "/" + m.group("sub")
        # /api/v1/namespaces/{name} is the Namespace resource itself
        gvk = None
        for op in ("post", "put", "get", "patch", "delete"):
            g = item.get(op, {}).get("x-kubernetes-group-version-kind")
            if g and item[op].get("x-kubernetes-action") not in ("list", "deletecollection",
                                                                  "watch", "watchlist"):
                gvk = g
                break
        if gvk is None:
            for op in ("get", "post", "delete"):
                g = item.get(op, {}).get("x-kubernetes-group-version-kind")
                if g:
                    gvk = g
                    # a list operation names the item's kind
                    break
        if gvk is None:
            continue
        actions = {item[op].get("x-kubernetes-action") for op in item
                   if isinstance(item[op], dict) and "x-kubernetes-action" in item[op]}
        key = (av, resource)
        if actions == {"connect"}:
            # exec, attach, portforward, proxy: streaming "connect" subresources whose kinds
            # (PodExecOptions, ...) are query parameters, not request bodies
            connect_only.add(key)
            continue
        entry = found.setdefault(key, {"kind": gvk["kind"],
                                       "kindGroupVersion": (f"{gvk['group']}/{gvk['version']}"
                                                            if gvk["group"] else gvk["version"]),
                                       "namespaced": False})
        if m.group("ns"):
            entry["namespaced"] = True
    return found


# --------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", default="1.35")
    ap.add_argument("--reference")
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--differences", action="store_true",
                    help="rewrite the listing part of DIFFERENCES.md (below its marker line)")
    args = ap.parse_args()
    ref_dir = args.reference or os.path.join(os.path.dirname(REPO), "shared", "k8s-openapi-v3",
                                             args.version)
    if not os.path.isdir(ref_dir):
        sys.exit(f"no reference documents at {ref_dir}")
    gen = Generated(args.version)

    ref_docs = {}
    for f in sorted(glob.glob(os.path.join(ref_dir, "api", "*.json")) +
                    glob.glob(os.path.join(ref_dir, "apis", "*", "*.json"))):
        rel = os.path.relpath(f, ref_dir)[:-len(".json")].split(os.sep)
        av = rel[1] if rel[0] == "api" else f"{rel[1]}/{rel[2]}"
        with open(f) as fh:
            ref_docs[av] = json.load(fh)

    report = [f"# Generated {args.version} data vs the reference OpenAPI v3 documents", ""]
    n_diff = 0

    # 1. group-versions
    ours = set(gen.group_versions())
    theirs = set(ref_docs)
    report += ["## Group-versions", "",
               f"- reference: {len(theirs)}, generated: {len(ours)}, in both: {len(ours & theirs)}"]
    for av in sorted(theirs - ours):
        report.append(f"- only in the reference: `{av}`")
        n_diff += 1
    for av in sorted(ours - theirs):
        report.append(f"- only in the generated data: `{av}`")
        n_diff += 1
    report.append("")

    # 2. discovery
    report += ["## Discovery (resource, scope)", ""]
    disc_rows = []
    n_resources = 0
    connect_only: set = set()
    for av in sorted(theirs & ours):
        paths = discovery_from_paths(ref_docs[av], connect_only)
        kinds = gen.group_versions()[av]["kinds"]
        ours_res = {}
        for kind, e in kinds.items():
            if "resource" in e:
                ours_res[(av, e["resource"])] = (kind, av, e["namespaced"])
        for kind, e in kinds.items():
            for s in e.get("subresourceOf", []):
                ours_res[(s["groupVersion"], s["resource"])] = (kind, av, s["namespaced"])
        for key, e in sorted(paths.items()):
            res = key[1]
            if "/" in res:
                # subresources: compared only where the body kind is not the parent's own kind
                # (status, scale of the same kind, ...): the data lists subresource-only kinds
                kind_entry = gen.group_versions().get(e["kindGroupVersion"], {}).get("kinds", {}).get(e["kind"], {})
                if "resource" in kind_entry:
                    continue
                mine = None
                for s in kind_entry.get("subresourceOf", []):
                    if (s["groupVersion"], s["resource"]) == key:
                        mine = (e["kind"], e["kindGroupVersion"], s["namespaced"])
                if mine is None:
                    # Binding is both a resource (bindings) and pods/binding
                    if e["kind"] == "Binding" and res == "pods/binding":
                        continue
                    disc_rows.append(f"- `{av}` `{res}` (kind {e['kindGroupVersion']} {e['kind']}, "
                                     f"{'namespaced' if e['namespaced'] else 'cluster'}): "
                                     f"not listed as a subresource in the generated data")
                    continue
                if mine[2] != e["namespaced"]:
                    disc_rows.append(f"- `{av}` `{res}`: scope differs")
                continue
            n_resources += 1
            mine = ours_res.get(key)
            if mine is None:
                disc_rows.append(f"- `{av}` resource `{res}` (kind {e['kind']}, "
                                 f"{'namespaced' if e['namespaced'] else 'cluster-scoped'}): "
                                 f"missing in the generated data")
            elif (mine[0], mine[1], mine[2]) != (e["kind"], e["kindGroupVersion"], e["namespaced"]):
                disc_rows.append(f"- `{av}` resource `{res}`: reference {e['kind']} "
                                 f"namespaced={e['namespaced']}, generated {mine[0]} "
                                 f"namespaced={mine[2]}")
        for (gav, res), (kind, kav, ns) in sorted(ours_res.items()):
            if gav == av and "/" not in res and (gav, res) not in paths:
                disc_rows.append(f"- `{av}` resource `{res}` ({kind}): only in the generated data")
    report.append(f"- resources in the reference's paths: {n_resources}; differences: {len(disc_rows)}")
    report.append(f"- not compared: {len(connect_only)} connect-only subresources ("
                  + ", ".join(f"`{a} {r}`" for a, r in sorted(connect_only)) + "): their kinds "
                  "(PodExecOptions, ...) are query parameters, and the data lists no "
                  "subresource for them")
    report += disc_rows + [""]
    n_diff += len(disc_rows)

    # 3 + 4. kinds and schemas
    ref_schemas = {}
    for av, doc in ref_docs.items():
        for n, s in doc["components"]["schemas"].items():
            ref_schemas[n] = s
    def_diffs: dict[str, list] = {}

    def diffs_of(name):
        if name not in def_diffs:
            d = []
            a, b = ref_schemas.get(name), gen.definition(name)
            if a is None or b is None:
                d.append(("", "definition", "present" if a else None, "present" if b else None))
            else:
                compare_node(a, b, "", d)
            def_diffs[name] = d
        return def_diffs[name]

    gvk_docs = defaultdict(set)  # (apiVersion, kind) -> reference documents describing it
    for dav, d in ref_docs.items():
        for s_ in d["components"]["schemas"].values():
            for g in s_.get("x-kubernetes-group-version-kind", []):
                gav = f"{g['group']}/{g['version']}" if g["group"] else g["version"]
                gvk_docs[(gav, g["kind"])].add(dav)
    kind_rows = []
    schema_rows = []
    per_kind_summary = []
    for av in sorted(theirs & ours):
        doc = ref_docs[av]["components"]["schemas"]
        ref_kinds = {}
        for n, s in doc.items():
            for g in s.get("x-kubernetes-group-version-kind", []):
                gav = f"{g['group']}/{g['version']}" if g["group"] else g["version"]
                if gav == av:
                    ref_kinds[g["kind"]] = n
        gen_kinds = {k: e.get("schema") for k, e in gen.group_versions()[av]["kinds"].items()}
        for k in sorted(set(ref_kinds) | set(gen_kinds)):
            if k not in gen_kinds:
                kind_rows.append(f"- `{av}` {k} ({ref_kinds[k]}): only in the reference")
                continue
            if k not in ref_kinds:
                where = sorted(gvk_docs.get((av, k), set()))
                kind_rows.append(
                    f"- `{av}` {k} ({gen_kinds[k]}): only in the generated data; the reference "
                    + ((f"describes it in the {', '.join(f'`{w}`' for w in where)} document(s)"
                        if len(where) <= 3 else
                        f"describes it in {len(where)} other group-versions' documents "
                        f"(`{where[0]}`, `{where[1]}`, ...)")
                       if where else "describes it in no group-version document"))
                continue
            if ref_kinds[k] != gen_kinds[k]:
                kind_rows.append(f"- `{av}` {k}: reference {ref_kinds[k]}, generated {gen_kinds[k]}")
            root = ref_kinds[k]
            reach_ref = closure([root], lambda n: doc.get(n))
            reach_gen = closure([gen_kinds[k]], gen.definition)
            if reach_ref != reach_gen:
                kind_rows.append(f"- `{av}` {k}: reachable definitions differ: only reference "
                                 f"{sorted(reach_ref - reach_gen)}, only generated "
                                 f"{sorted(reach_gen - reach_ref)}")
            cats = defaultdict(int)
            for n in sorted(reach_ref | reach_gen):
                for (_p, c, _a, _b) in diffs_of(n):
                    cats[c] += 1
            per_kind_summary.append((av, k, len(reach_ref | reach_gen), dict(cats)))
    n_diff += len(kind_rows)
    report += ["## Kinds", "",
               f"- kinds compared: {len(per_kind_summary)}; kind-level differences: {len(kind_rows)}"]
    report += kind_rows + [""]

    # the schema differences, by category, each definition once
    by_cat = defaultdict(list)
    for name in sorted(def_diffs):
        for (p, c, a, b) in def_diffs[name]:
            by_cat[c].append((name, p, a, b))
    total_nodes = sum(len(v) for v in by_cat.values())
    n_diff += total_nodes
    report += ["## Schema differences by fact", "",
               f"Definitions compared: {len(def_diffs)}; with differences: "
               f"{sum(1 for d in def_diffs.values() if d)}; differing facts: {total_nodes}.", ""]
    report += ["| fact | differences | definitions |", "| --- | ---: | ---: |"]
    for c in sorted(by_cat):
        report.append(f"| {c} | {len(by_cat[c])} | {len({x[0] for x in by_cat[c]})} |")
    report.append("")
    for c in sorted(by_cat):
        rows = by_cat[c]
        values = defaultdict(int)
        for (_n, _p, a, b) in rows:
            values[(short(a, 40), short(b, 40))] += 1
        report += [f"### {c} ({len(rows)})", "",
                   "Value pairs (reference → generated): " +
                   "; ".join(f"{a} → {b} ×{n}" for (a, b), n in
                             sorted(values.items(), key=lambda x: -x[1])[:12]) +
                   (" …" if len(values) > 12 else ""), ""]
        grouped = defaultdict(list)
        for (name, p, a, b) in rows:
            grouped[name].append(f"`{p or '(root)'}` {short(a)} → {short(b)}")
        for name, items in grouped.items():
            report.append(f"- `{name}`: " + "; ".join(items))
        report.append("")

    report += ["## Kind by kind", "",
               "Each kind, the number of definitions reachable from it, and the differing facts "
               "among them (by fact).", "",
               "| group-version | kind | definitions | differing facts |", "| --- | --- | ---: | --- |"]
    for av, k, n, cats in per_kind_summary:
        report.append(f"| {av} | {k} | {n} | "
                      f"{', '.join(f'{c} {v}' for c, v in sorted(cats.items())) or 'none'} |")
    report.append("")

    text = "\n".join(report)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.differences:
        # keep the hand-written explanations above the marker, replace the listing below it
        path = os.path.join(HERE, "DIFFERENCES.md")
        head = ""
        if os.path.exists(path):
            with open(path) as f:
                head = f.read().split(MARKER)[0]
        with open(path, "w") as f:
            f.write(head + MARKER + "\n\n" + text.replace("\n# ", "\n## ", 1)
                    .replace("# Generated", "## Full listing: generated", 1) + "\n")
    summary = f"{n_diff} differences"
    print(summary, file=sys.stderr)
    if args.strict and n_diff:
        sys.exit(1)


if __name__ == "__main__":
    main()
