#!/usr/bin/env python3
"""The Go names of built-in kinds' named scalar, slice and map field types, which the
published schemas do not carry, for the decoder's error texts (`... of type v1.PullPolicy`).

    python3 tools/k8s-schemas/go_names.py --api DIR --apimachinery DIR [--out FILE]

DIR is a work tree of k8s.io/api (github.com/kubernetes/api) and of k8s.io/apimachinery at
the release the table describes (v0.36.0 for the committed table). The script reads each
package's `types.go`, finds the types declared over a scalar, a slice or a map
(`type PullPolicy string`, `type ResourceList map[ResourceName]resource.Quantity`), and for
every struct field (by its `json` name) whose type names one of them writes the type as Go's
`reflect.Type.String()` writes it: `v1.PullPolicy`, `[]v1.Capability`, `v1.ResourceList`,
`types.UID` (a pointer is left out: the decoder reports the type it points to).

The output maps OpenAPI definition names (`io.k8s.api.core.v1.Container`) to
`{json field: Go type}`. Only names are taken from the sources; the table is data about the
API's types, regenerated rather than edited (crates/celerity-kubernetes/schemas/go-names.json).
"""

import argparse
import json
import os
import re
import sys

NAMED = re.compile(
    r"^type (\w+) (string|bool|u?int(?:8|16|32|64)?|float(?:32|64)|\[\]\S+|map\[\S+?\]\S+)\s*(?://.*)?$",
    re.M)
STRUCT = re.compile(r"^type (\w+) struct \{")
FIELD = re.compile(r'^\t(\w+)\s+(\S+)\s+`json:"([^",]+)')
IMPORT = re.compile(r'^\s*(\w+\s+)?"([^"]+)"\s*$')


def imports(src):
    """alias -> import path, from a Go file's import block."""
    out = {}
    block = re.search(r"^import \((.*?)^\)", src, re.M | re.S)
    lines = block.group(1).splitlines() if block else []
    for line in lines:
        m = IMPORT.match(line)
        if m:
            path = m.group(2)
            alias = (m.group(1) or "").strip() or path.rsplit("/", 1)[-1]
            out[alias] = path
    return out


def packages(api, apimachinery):
    """(definition prefix, Go package name, import path, types.go text) of every package."""
    for group in sorted(os.listdir(api)):
        gdir = os.path.join(api, group)
        if not os.path.isdir(gdir) or group.startswith("."):
            continue
        for version in sorted(os.listdir(gdir)):
            path = os.path.join(gdir, version, "types.go")
            if os.path.exists(path):
                yield (f"io.k8s.api.{group}.{version}", version,
                       f"k8s.io/api/{group}/{version}", open(path).read())
    meta = os.path.join(apimachinery, "pkg/apis/meta/v1/types.go")
    yield ("io.k8s.apimachinery.pkg.apis.meta.v1", "v1",
           "k8s.io/apimachinery/pkg/apis/meta/v1", open(meta).read())
    uid = os.path.join(apimachinery, "pkg/types/uid.go")
    yield ("io.k8s.apimachinery.pkg.types", "types", "k8s.io/apimachinery/pkg/types",
           open(uid).read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--api", required=True)
    ap.add_argument("--apimachinery", required=True)
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(__file__), "../../crates/celerity-kubernetes/schemas/go-names.json"))
    args = ap.parse_args()
    pkgs = list(packages(args.api, args.apimachinery))
    # import path -> (package name, its named types)
    named = {path: (name, set(m.group(1) for m in NAMED.finditer(src)))
             for _, name, path, src in pkgs}
    table = {}
    for prefix, name, path, src in pkgs:
        aliases = imports(src)

        def qualify(ident):
            """The Go name of an identifier of this file, when it is a named type."""
            if "." in ident:
                alias, base = ident.split(".", 1)
                target = named.get(aliases.get(alias, ""))
                if target and base in target[1]:
                    return f"{target[0]}.{base}"
                return None
            if ident in named[path][1]:
                return f"{name}.{ident}"
            return None

        struct = None
        for line in src.splitlines():
            m = STRUCT.match(line)
            if m:
                struct = m.group(1)
                continue
            if line.startswith("}"):
                struct = None
                continue
            m = FIELD.match(line) if struct else None
            if not m:
                continue
            go_type, field = m.group(2).lstrip("*"), m.group(3)
            parts = re.split(r"(\[\]|map\[|\])", go_type)
            found = False
            out = []
            for p in parts:
                q = qualify(p.lstrip("*")) if p and p not in ("[]", "map[", "]") else None
                if q:
                    found = True
                    out.append(q)
                elif p in ("[]", "map[", "]"):
                    out.append(p)
                elif p:
                    out.append(p.lstrip("*"))
            if found:
                table.setdefault(f"{prefix}.{struct}", {})[field] = "".join(out)
    with open(args.out, "w") as f:
        json.dump(table, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{sum(len(v) for v in table.values())} fields of {len(table)} types -> {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
