#!/usr/bin/env python3
"""Rebuild the real-world CRD corpus from fetched repository snapshots.

Reads every project listed in sources.json from its git snapshot (by default under
/work/.mirror/<owner>+<name>/repo, as the `fetch` tool leaves them), at the pinned commit,
and writes /work/corpus (or --out):

  <out>/index.json                 every run: CRDs, manifests, profile, expectations
  <out>/<project>/crds/<set>/...   CustomResourceDefinition files, as upstream has them
  <out>/<project>/sets/<set>/raw/...      manifests exactly as upstream has them
  <out>/<project>/sets/<set>/kubectl/...  the same, as `kubectl apply` sends them: a
                                   namespaced custom resource without metadata.namespace
                                   gets the kubeconfig default, `default`
  <out>/<project>/cases/<run>/new/<case>.yaml   one object per case (expected verdict and
  <out>/<project>/cases/<run>/old/<case>.yaml   message in index.json); old: for updates

Cases come from three places: upstream YAML fixtures that carry their own expectations
(istio/api's `_err:` documents, openshift/api's integration test suites), read here, and
the hand-written expectation files in expectations/<project>.json.

Python 3.11 standard library only. YAML is not parsed, except the test-suite files of
openshift/api, which a small reader for their block-style subset handles (`MiniYaml`).
Manifests are copied as text; `cel` parses them.
"""

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# --------------------------------------------------------------------------------------
# Snapshots


class Snapshot:
    """One repository at one commit, read with git plumbing (no work tree needed)."""

    def __init__(self, git_dir, commit):
        self.git_dir = git_dir
        self.commit = commit
        self._tree = None
        self.missing = []

    def git(self, *args, data=None):
        return subprocess.run(["git", "--git-dir", self.git_dir, *args], input=data,
                              capture_output=True, check=True).stdout

    def check(self):
        try:
            self.git("cat-file", "-e", self.commit + "^{commit}")
        except subprocess.CalledProcessError:
            raise SystemExit("%s: commit %s is not in the snapshot" % (self.git_dir, self.commit))

    def tree(self):
        if self._tree is None:
            out = self.git("ls-tree", "-r", "-z", "--full-tree", self.commit)
            tree = {}
            for entry in out.split(b"\0"):
                if not entry:
                    continue
                meta, path = entry.split(b"\t", 1)
                mode, typ, sha = meta.split()
                if typ != b"blob" or mode == b"120000":
                    continue
                tree[path.decode()] = sha.decode()
            self._tree = tree
        return self._tree

    def list(self, prefixes, exts, exclude=()):
        """Files under any of prefixes (a directory or a file), with one of exts."""
        out = []
        for path in sorted(self.tree()):
            if not any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes):
                continue
            if exts and not path.endswith(tuple(exts)):
                continue
            if any(fnmatch.fnmatch(path, pat) for pat in exclude):
                continue
            out.append(path)
        return out

    def read(self, paths):
        """The contents of paths as text; files the snapshot lacks (large files) are skipped."""
        tree = self.tree()
        proc = subprocess.Popen(["git", "--git-dir", self.git_dir, "cat-file", "--batch"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        out = {}
        for path in paths:
            proc.stdin.write((tree[path] + "\n").encode())
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) < 2 or header[1] == b"missing":
                self.missing.append(path)
                continue
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            out[path] = data.decode("utf-8", errors="replace")
        proc.stdin.close()
        proc.wait()
        return out


def find_git_dir(mirror, repository):
    name = repository.replace("/", "+")
    for cand in (os.path.join(mirror, name, "repo"), os.path.join(mirror, name),
                 os.path.join(mirror, name + ".git")):
        if os.path.isdir(cand) and (os.path.exists(os.path.join(cand, "HEAD")) or
                                    os.path.isdir(os.path.join(cand, ".git"))):
            if os.path.isdir(os.path.join(cand, ".git")):
                return os.path.join(cand, ".git")
            return cand
    raise SystemExit("no snapshot of %s under %s (fetch it first: github:%s)" %
                     (repository, mirror, repository))


# --------------------------------------------------------------------------------------
# Text-level YAML helpers (documents, kinds, metadata)

DOC_SEP = re.compile(r"^---[ \t]*(?:#.*)?$", re.M)


def split_docs(text):
    """Splits a YAML stream at `---` lines; returns the documents' texts (empty ones kept)."""
    parts = []
    start = 0
    for m in DOC_SEP.finditer(text):
        parts.append(text[start:m.start()])
        start = m.end() + 1
    parts.append(text[start:])
    return parts


def join_docs(docs):
    return "---\n".join(d if d.endswith("\n") or d == "" else d + "\n" for d in docs)


def top_scalar(doc, key):
    m = re.search(r"^%s:[ \t]*(\"[^\"]*\"|'[^']*'|[^\s#]+)" % re.escape(key), doc, re.M)
    if not m:
        return None
    v = m.group(1)
    if v[:1] in "\"'":
        v = v[1:-1]
    return v


def is_blank_doc(doc):
    return all(l.strip() == "" or l.lstrip().startswith("#") for l in doc.split("\n"))


def crd_index(texts):
    """(group, kind) -> scope for every CustomResourceDefinition in texts (controller-gen layout)."""
    index = {}
    for text in texts:
        for doc in split_docs(text):
            if top_scalar(doc, "kind") != "CustomResourceDefinition":
                continue
            group = re.search(r"^  group:[ \t]*[\"']?([^\s\"'#]+)", doc, re.M)
            scope = re.search(r"^  scope:[ \t]*[\"']?([A-Za-z]+)", doc, re.M)
            names = re.search(r"^  names:[ \t]*\n((?:    .*\n|[ \t]*\n)*)", doc, re.M)
            kind = re.search(r"^    kind:[ \t]*[\"']?([^\s\"'#]+)", names.group(1), re.M) if names else None
            if group and scope and kind:
                index[(group.group(1), kind.group(1))] = scope.group(1)
    return index


def group_of(api_version):
    if not api_version or "/" not in api_version:
        return ""
    return api_version.split("/", 1)[0]


def metadata_block(doc):
    """(start, end, child_indent, flow) of the top-level metadata mapping, or None."""
    lines = doc.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^metadata:[ \t]*(.*)$", line)
        if not m:
            continue
        rest = m.group(1)
        if rest.startswith("{"):
            return (i, i + 1, None, True)
        j = i + 1
        indent = None
        while j < len(lines):
            l = lines[j]
            if l.strip() == "" or l.lstrip().startswith("#"):
                j += 1
                continue
            if not l.startswith((" ", "\t")):
                break
            if indent is None:
                indent = len(l) - len(l.lstrip(" "))
            j += 1
        return (i, j, indent or 2, False)
    return None


def set_metadata(doc, values, override=False):
    """Adds metadata fields (text level) the document lacks; override replaces name fields."""
    lines = doc.split("\n")
    block = metadata_block(doc)
    if block is None:
        # insert after kind: (or at the end)
        at = next((i + 1 for i, l in enumerate(lines) if l.startswith("kind:")), len(lines))
        new = ["metadata:"] + ["  %s: %s" % (k, json.dumps(v)) for k, v in values.items()]
        return "\n".join(lines[:at] + new + lines[at:])
    start, end, indent, flow = block
    if flow:
        line = lines[start]
        inner = line[line.index("{") + 1: line.rindex("}")] if "}" in line else None
        if inner is None:
            return doc  # multi-line flow mapping: leave as is
        present = {p.split(":", 1)[0].strip() for p in inner.split(",") if ":" in p}
        adds = ["%s: %s" % (k, json.dumps(v)) for k, v in values.items()
                if k not in present]
        if override:
            parts = [p for p in inner.split(",") if p.strip() and p.split(":", 1)[0].strip() not in values]
            adds = ["%s: %s" % (k, json.dumps(v)) for k, v in values.items()]
            inner = ",".join(parts)
        if not adds:
            return doc
        sep = ", " if inner.strip() else ""
        lines[start] = "metadata: {" + ", ".join(adds) + sep + inner.strip() + "}"
        return "\n".join(lines)
    pad = " " * indent
    children = {}
    for j in range(start + 1, end):
        l = lines[j]
        if l.startswith(pad) and not l.startswith(pad + " ") and not l[len(pad):].startswith("#"):
            key = l[len(pad):].split(":", 1)[0].strip().strip("\"'")
            children[key] = j
    drop = set()
    adds = []
    for k, v in values.items():
        if k in children:
            if not override:
                continue
            drop.add(children[k])
        adds.append("%s%s: %s" % (pad, k, json.dumps(v)))
    if not adds:
        return doc
    kept = [l for j, l in enumerate(lines) if j not in drop]
    # the metadata line itself does not move
    return "\n".join(kept[:start + 1] + adds + kept[start + 1:])


def kubectl_view(text, scopes, namespace="default"):
    """What kubectl apply sends: namespaced custom resources get the default namespace."""
    docs = split_docs(text)
    changed = 0
    for i, doc in enumerate(docs):
        if is_blank_doc(doc):
            continue
        key = (group_of(top_scalar(doc, "apiVersion")), top_scalar(doc, "kind"))
        if scopes.get(key) != "Namespaced":
            continue
        block = metadata_block(doc)
        if block is not None:
            body = "\n".join(doc.split("\n")[block[0]:block[1]])
            if re.search(r"(^|[\s{,])namespace:", body.split("\n", 1)[1] if not block[3] else body):
                continue
        docs[i] = set_metadata(doc, {"namespace": namespace})
        changed += 1
    return join_docs(docs), changed


ENVSUBST = re.compile(r"\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:(:?[-=])([^${}]*))?\s*\}")


def envsubst(text, variables, unresolved):
    """clusterctl-style variables: ${NAME}, ${NAME:-default}, ${NAME:=default}, nested."""
    for _ in range(5):
        def repl(m):
            name, op, default = m.group(1), m.group(2), m.group(3)
            if name in variables:
                return str(variables[name])
            if op:
                return default
            unresolved.add(name)
            return m.group(0)
        new = ENVSUBST.sub(repl, text)
        if new == text:
            break
        text = new
    return text


# --------------------------------------------------------------------------------------
# A reader for the block-style YAML subset of openshift/api's test suites


class MiniYaml:
    """Block mappings and sequences, plain/quoted scalars (also multi-line), literal and
    folded block scalars, comments, anchors/aliases of whole values, flow collections of
    scalars. Enough for test-suite files; raises ValueError on anything else."""

    KEY = re.compile(r"""^(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\-?:,\[\]{}][^#]*?|-[^\s][^#]*?)\s*:(?:\s|$)""")

    def __init__(self, text):
        self.lines = text.replace("\r\n", "\n").replace("\t", "    ").split("\n")
        self.anchors = {}

    @classmethod
    def load(cls, text):
        return cls(text).parse()

    @staticmethod
    def indent(line):
        return len(line) - len(line.lstrip(" "))

    @staticmethod
    def blank(line):
        s = line.strip()
        return s == "" or s.startswith("#")

    @classmethod
    def split_key(cls, content):
        m = cls.KEY.match(content)
        if not m:
            return None
        raw = m.group(0).rstrip()[:-1].rstrip()
        rest = content[m.end():]
        if raw.startswith('"'):
            return cls.unescape(raw[1:-1]), rest
        if raw.startswith("'"):
            return raw[1:-1].replace("''", "'"), rest
        return raw, rest

    @staticmethod
    def unescape(s):
        simple = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "/": "/", "0": "\0", "r": "\r",
                  " ": " ", "b": "\b", "e": "\x1b", "a": "\x07", "N": "\x85", "_": "\xa0"}
        out, i = [], 0
        while i < len(s):
            c = s[i]
            if c == "\\" and i + 1 < len(s):
                n = s[i + 1]
                if n in simple:
                    out.append(simple[n])
                    i += 2
                elif n in "xuU":
                    width = {"x": 2, "u": 4, "U": 8}[n]
                    out.append(chr(int(s[i + 2:i + 2 + width], 16)))
                    i += 2 + width
                else:
                    raise ValueError("unknown escape \\" + n)
            else:
                out.append(c)
                i += 1
        return "".join(out)

    @staticmethod
    def plain(s):
        if s in ("~", "null", "Null", "NULL", ""):
            return None
        if s in ("true", "True", "TRUE"):
            return True
        if s in ("false", "False", "FALSE"):
            return False
        if re.fullmatch(r"[-+]?[0-9]+", s):
            return int(s)
        if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", s):
            return float(s)
        return s

    @staticmethod
    def strip_comment(s):
        m = re.search(r"\s#", s)
        return (s[:m.start()] if m else s).strip()

    def next(self, i):
        while i < len(self.lines) and self.blank(self.lines[i]):
            i += 1
        return i

    def parse(self):
        i = self.next(0)
        if i < len(self.lines) and self.lines[i].startswith("---"):
            i = self.next(i + 1)
        if i >= len(self.lines):
            return None
        value, i = self.node(i, self.indent(self.lines[i]))
        i = self.next(i)
        if i < len(self.lines) and not self.lines[i].startswith(("---", "...")):
            raise ValueError("unexpected content at line %d" % (i + 1))
        return value

    def node(self, i, indent):
        i = self.next(i)
        content = self.lines[i][indent:]
        if content.startswith("- ") or content.rstrip() == "-":
            return self.sequence(i, indent)
        if self.split_key(content) is not None:
            return self.mapping(i, indent)
        return self.value(i, indent - 1, content)

    def sequence(self, i, indent):
        out = []
        while True:
            i = self.next(i)
            if i >= len(self.lines):
                break
            line = self.lines[i]
            if self.indent(line) != indent or line.startswith(("---", "...")):
                break
            content = line[indent:]
            if not (content.startswith("- ") or content.rstrip() == "-"):
                break
            rest = content[1:]
            inner = rest.lstrip(" ")
            if inner == "" or inner.startswith("#"):
                j = self.next(i + 1)
                if j < len(self.lines) and self.indent(self.lines[j]) > indent:
                    v, i = self.node(j, self.indent(self.lines[j]))
                else:
                    v, i = None, i + 1
                out.append(v)
                continue
            col = indent + 1 + (len(rest) - len(inner))
            self.lines[i] = " " * col + inner
            v, i = self.node(i, col)
            out.append(v)
        return out, i

    def mapping(self, i, indent):
        out = {}
        while True:
            i = self.next(i)
            if i >= len(self.lines):
                break
            line = self.lines[i]
            if self.indent(line) != indent or line.startswith(("---", "...")):
                break
            content = line[indent:]
            kv = self.split_key(content)
            if kv is None:
                if content.startswith("- "):
                    break
                raise ValueError("expected a mapping key at line %d" % (i + 1))
            key, rest = kv
            if key == "<<":
                raise ValueError("merge keys are not supported (line %d)" % (i + 1))
            out[key], i = self.value(i, indent, rest)
        return out, i

    def value(self, i, indent, rest):
        r = rest.strip()
        if r.startswith("&"):
            m = re.match(r"&(\S+)\s*", r)
            value, j = self.value(i, indent, " " + r[m.end():])
            self.anchors[m.group(1)] = value
            return value, j
        if r.startswith("*"):
            m = re.match(r"\*(\S+)\s*(#.*)?$", r)
            if not m or m.group(1) not in self.anchors:
                raise ValueError("unknown alias at line %d" % (i + 1))
            return self.anchors[m.group(1)], i + 1
        if r.startswith("!"):
            raise ValueError("tags are not supported (line %d)" % (i + 1))
        if r == "" or r.startswith("#"):
            j = self.next(i + 1)
            if j < len(self.lines):
                nl = self.lines[j]
                ni = self.indent(nl)
                if ni > indent and not nl.startswith("---"):
                    return self.node(j, ni)
                if ni == indent and (nl[indent:].startswith("- ") or nl[indent:].rstrip() == "-"):
                    return self.sequence(j, indent)
            return None, i + 1
        if r[0] in "|>":
            return self.block_scalar(i, indent, r)
        if r[0] in "\"'":
            return self.quoted(i, r, r[0])
        if r[0] in "[{":
            return self.flow(i, r)
        parts = [self.strip_comment(r)]
        j = i + 1
        while j < len(self.lines):
            l = self.lines[j]
            if l.strip() == "":
                parts.append("")
                j += 1
                continue
            if self.indent(l) <= indent or l.lstrip().startswith("#") or self.split_key(l.strip()):
                break
            parts.append(self.strip_comment(l.strip()))
            j += 1
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) == 1:
            return self.plain(parts[0]), i + 1
        return self.fold(parts), j

    @staticmethod
    def fold(parts):
        out, pending = parts[0], 0
        for p in parts[1:]:
            if p == "":
                pending += 1
                continue
            out += ("\n" * pending if pending else " ") + p
            pending = 0
        return out

    @staticmethod
    def find_close(buf, q):
        i = 1
        while i < len(buf):
            c = buf[i]
            if q == '"' and c == "\\":
                i += 2
                continue
            if c == q:
                if q == "'" and i + 1 < len(buf) and buf[i + 1] == "'":
                    i += 2
                    continue
                return i
            i += 1
        return None

    def quoted(self, i, text, q):
        buf, j = text, i
        while self.find_close(buf, q) is None:
            j += 1
            if j >= len(self.lines):
                raise ValueError("unterminated quoted scalar at line %d" % (i + 1))
            buf += "\n" + self.lines[j]
        end = self.find_close(buf, q)
        inner = buf[1:end]
        tail = buf[end + 1:].strip()
        if tail and not tail.startswith("#"):
            raise ValueError("content after a quoted scalar at line %d" % (j + 1))
        lines = inner.split("\n")
        if len(lines) > 1:
            out, pending = lines[0].rstrip(" "), 0
            for l in (x.strip(" ") for x in lines[1:]):
                if l == "":
                    pending += 1
                    continue
                if q == '"' and out.endswith("\\") and not out.endswith("\\\\"):
                    out = out[:-1] + l
                else:
                    out += ("\n" * pending if pending else " ") + l
                pending = 0
            inner = out + "\n" * pending
        if q == '"':
            return self.unescape(inner), j + 1
        return inner.replace("''", "'"), j + 1

    def flow(self, i, text):
        buf, j = text, i
        while self.flow_depth(buf) > 0:
            j += 1
            if j >= len(self.lines):
                raise ValueError("unterminated flow collection at line %d" % (i + 1))
            buf += " " + self.lines[j].strip()
        value, pos = self.parse_flow(buf, 0)
        tail = buf[pos:].strip()
        if tail and not tail.startswith("#"):
            raise ValueError("content after a flow collection at line %d" % (j + 1))
        return value, j + 1

    @staticmethod
    def flow_depth(buf):
        depth, q, i = 0, None, 0
        while i < len(buf):
            c = buf[i]
            if q:
                if q == '"' and c == "\\":
                    i += 2
                    continue
                if c == q:
                    q = None
            elif c in "\"'":
                q = c
            elif c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
            i += 1
        return depth

    def parse_flow(self, s, i):
        while s[i] == " ":
            i += 1
        c = s[i]
        if c in "[{":
            close = "]" if c == "[" else "}"
            out = [] if c == "[" else {}
            i += 1
            while True:
                while s[i] == " ":
                    i += 1
                if s[i] == close:
                    return out, i + 1
                v, i = self.parse_flow(s, i)
                if c == "{":
                    while s[i] == " ":
                        i += 1
                    if s[i] != ":":
                        raise ValueError("bad flow mapping")
                    val, i = self.parse_flow(s, i + 1)
                    out[v] = val
                else:
                    out.append(v)
                while s[i] == " ":
                    i += 1
                if s[i] == ",":
                    i += 1
                elif s[i] != close:
                    raise ValueError("bad flow collection")
        if c in "\"'":
            end = self.find_close(s[i:], c)
            raw = s[i + 1:i + end]
            return (self.unescape(raw) if c == '"' else raw.replace("''", "'")), i + end + 1
        m = re.match(r"[^,\[\]{}:]*(?::(?!\s)[^,\[\]{}:]*)*", s[i:])
        return self.plain(m.group(0).strip()), i + len(m.group(0))

    def block_scalar(self, i, indent, header):
        m = re.match(r"^([|>])([-+]?)([1-9]?)([-+]?)\s*(#.*)?$", header)
        if not m:
            raise ValueError("bad block scalar header at line %d" % (i + 1))
        style, chomp, explicit = m.group(1), m.group(2) or m.group(4), m.group(3)
        raw = self.lines[i + 1:]
        if explicit:
            ci = max(indent, 0) + int(explicit)
        else:
            ci = next((self.indent(l) for l in raw if l.strip() != ""), None)
            if ci is None or ci <= indent:
                return "", i + 1
        body = []
        for l in raw:
            if l.strip() == "":
                body.append("")
                continue
            if self.indent(l) < ci:
                break
            body.append(l[ci:])
        consumed = len(body)
        trailing = 0
        while body and body[-1] == "":
            body.pop()
            trailing += 1
        if style == "|":
            text = "\n".join(body)
        else:
            text, prev_more, blank = "", True, 0
            for n, l in enumerate(body):
                if l == "":
                    blank += 1
                    continue
                more = l.startswith(" ")
                if n == 0 or text == "":
                    text = "\n" * blank + l if text == "" and n > 0 else l
                elif more or prev_more:
                    text += "\n" * (blank + 1) + l
                else:
                    text += ("\n" * blank if blank else " ") + l
                blank, prev_more = 0, more
        if body and chomp != "-":
            text += "\n" + ("\n" * trailing if chomp == "+" else "")
        return text, i + 1 + consumed


# --------------------------------------------------------------------------------------
# Writing


class Writer:
    def __init__(self, out):
        self.out = out

    def write(self, rel, text):
        path = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return rel


def slug(s, limit=80):
    s = re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()
    return s[:limit].rstrip("-") or "case"


def profile_for(version):
    """`--profile` names the API server's release (which compiles new rules in the
    environment of the previous minor by itself)."""
    m = re.match(r"^v?(\d+)\.(\d+)", version or "")
    if not m:
        return None
    return "kubernetes=%d.%d" % (int(m.group(1)), int(m.group(2)))


def build_project(proj, mirror, writer, only_fixture_limit=None):
    snap = Snapshot(find_git_dir(mirror, proj["repository"]), proj["commit"])
    snap.check()
    name = proj["name"]
    profile = proj.get("profile") or profile_for(proj["kubernetes"]["version"])
    runs = []
    stats = {"crd_files": 0, "manifest_files": 0, "namespace_defaulted": 0, "cases": 0,
             "skipped_cases": {}, "missing_files": [], "unresolved_variables": []}

    # CRDs
    crd_dirs, crd_texts = {}, {}
    for set_name, spec in proj["crds"].items():
        paths = snap.list(spec["paths"], (".yaml", ".yml", ".json"), spec.get("exclude", ()))
        texts = snap.read(paths)
        rel = os.path.join(name, "crds", set_name)
        for p, t in texts.items():
            writer.write(os.path.join(rel, p), t)
        crd_dirs[set_name] = rel
        crd_texts[set_name] = list(texts.values())
        stats["crd_files"] += len(texts)
    scopes = {s: crd_index(t) for s, t in crd_texts.items()}

    def crd_args(sets):
        return [crd_dirs[s] for s in sets]

    # manifest sets
    for ms in proj.get("manifests", []):
        sets = ms["crds"] if isinstance(ms["crds"], list) else [ms["crds"]]
        scope = {}
        for s in sets:
            scope.update(scopes[s])
        exts = ms.get("ext", [".yaml", ".yml", ".json"])
        paths = snap.list(ms["paths"], exts, ms.get("exclude", ()))
        texts = snap.read(paths)
        base = os.path.join(name, "sets", ms["name"])
        unresolved = set()
        files = []
        for p, t in texts.items():
            for old, new in ms.get("substitute", {}).items():
                t = t.replace(old, new)
            if "envsubst" in ms:
                t = envsubst(t, ms["envsubst"], unresolved)
            writer.write(os.path.join(base, "raw", p), t)
            view, changed = kubectl_view(t, scope) if not p.endswith(".json") else (t, 0)
            writer.write(os.path.join(base, "kubectl", p), view)
            stats["namespace_defaulted"] += changed
            files.append(p)
        stats["manifest_files"] += len(files)
        stats["unresolved_variables"] += sorted(unresolved)
        runs.append({
            "project": name, "id": "%s/%s" % (name, ms["name"]), "type": "set",
            "crds": crd_args(sets), "profile": ms.get("profile", profile),
            "raw": os.path.join(base, "raw"), "kubectl": os.path.join(base, "kubectl"),
            "files": files, "expect": ms["expect"], "per": ms.get("per", "object"),
            "message_any": ms.get("message_any", []), "ci": ms.get("ci", ""),
            "field_validation": ms.get("field_validation", "strict"),
        })

    # fixtures with expectations of their own
    for fx in proj.get("fixtures", []):
        if fx["kind"] == "istio-err":
            runs += istio_fixtures(proj, fx, snap, writer, scopes, crd_dirs, profile, stats)
        elif fx["kind"] == "openshift-testsuite":
            runs += openshift_fixtures(proj, fx, snap, writer, profile, stats)
        else:
            raise SystemExit("unknown fixture kind %s" % fx["kind"])

    # hand-written expectations
    exp_path = os.path.join(HERE, "expectations", name + ".json")
    if os.path.exists(exp_path):
        runs += hand_cases(proj, exp_path, writer, scopes, crd_dirs, profile, stats)

    stats["missing_files"] = snap.missing
    return runs, stats


def istio_fixtures(proj, fx, snap, writer, scopes, crd_dirs, profile, stats):
    """istio/api tests/testdata: documents with `_err: <substring>` must fail, others pass."""
    name = proj["name"]
    sets = fx["crds"] if isinstance(fx["crds"], list) else [fx["crds"]]
    scope = {}
    for s in sets:
        scope.update(scopes[s])
    paths = snap.list(fx["paths"], (".yaml", ".yml"), fx.get("exclude", ()))
    run_dir = os.path.join(name, "cases", fx["name"])
    cases = {}
    for p, text in snap.read(paths).items():
        stem = os.path.splitext(os.path.basename(p))[0]
        # istio's SplitString splits at "---" at a line start, and trims
        for n, doc in enumerate(re.split(r"(?:^|\n)---", text)):
            if doc.strip() == "":
                continue
            m = re.search(r"^_err:[ \t]*(.*)$", doc, re.M)
            expect, message = "valid", None
            if m:
                expect = "invalid"
                message = unquote_yaml_scalar(m.group(1))
                doc = doc[:m.start()] + doc[m.end() + 1:]
            if is_blank_doc(doc):
                continue
            key = (group_of(top_scalar(doc, "apiVersion")), top_scalar(doc, "kind"))
            # the in-process validator ignores metadata; give namespaced objects a namespace
            if scope.get(key) == "Namespaced":
                doc = set_metadata(doc, {"namespace": "default"})
            cid = "%s-%02d" % (stem, n)
            rel = writer.write(os.path.join(run_dir, "new", cid + ".yaml"), doc.strip("\n") + "\n")
            cases[os.path.relpath(rel, os.path.join(run_dir, "new"))] = {
                "id": cid, "expect": expect, "message": message,
                "source": "%s@%s:%s document %d" % (proj["repository"], proj["commit"][:12], p, n)}
    stats["cases"] += len(cases)
    return [{"project": name, "id": "%s/%s" % (name, fx["name"]), "type": "cases",
             "crds": [crd_dirs[s] for s in sets], "profile": fx.get("profile", profile),
             "dir": os.path.join(run_dir, "new"), "old": None, "cases": cases,
             "ci": fx.get("ci", ""), "field_validation": fx.get("field_validation", "strict")}]


def unquote_yaml_scalar(s):
    s = s.strip()
    if s.startswith('"'):
        end = MiniYaml.find_close(s, '"')
        return MiniYaml.unescape(s[1:end])
    if s.startswith("'"):
        end = MiniYaml.find_close(s, "'")
        return s[1:end].replace("''", "'")
    return MiniYaml.strip_comment(s)


def openshift_fixtures(proj, fx, snap, writer, profile, stats):
    """openshift/api integration suites: <group>/<version>/tests/<crd name>/<suite>.yaml."""
    name = proj["name"]
    tree = snap.tree()
    suite_paths = [p for p in sorted(tree)
                   if re.match(r"^(?!tests/).+/tests/[^/]+/[^/]+\.yaml$", p)]
    suites = snap.read(suite_paths)
    # CRD manifests by directory
    manifest_paths = [p for p in tree if "/zz_generated.crd-manifests/" in p and p.endswith(".yaml")]
    manifest_texts = snap.read(manifest_paths)
    crds = {}  # (dir, crd name) -> list of (path, feature sets, scope)
    for p, t in manifest_texts.items():
        if top_scalar(t, "kind") != "CustomResourceDefinition":
            continue
        m = re.search(r"^  name:[ \t]*(\S+)", t, re.M)
        if not m:
            continue
        fs = re.search(r"release\.openshift\.io/feature-set:[ \t]*(\S+)", t)
        feature_sets = set(fs.group(1).split(",")) if fs else set()
        scope = re.search(r"^  scope:[ \t]*(\S+)", t, re.M)
        crds.setdefault((os.path.dirname(p), m.group(1)), []).append(
            (p, feature_sets, scope.group(1) if scope else "Namespaced"))
    skipped = stats["skipped_cases"]
    runs = {}
    written_crds = set()

    def skip(reason, n=1):
        skipped[reason] = skipped.get(reason, 0) + n

    for sp, text in suites.items():
        try:
            suite = MiniYaml.load(text)
        except ValueError as e:
            skip("suite file not readable by the YAML subset reader: %s" % e)
            continue
        crd_name = suite.get("crdName")
        tests = suite.get("tests") or {}
        creates, updates = tests.get("onCreate") or [], tests.get("onUpdate") or []
        if not crd_name:
            skip("suite without crdName", len(creates) + len(updates))
            continue
        gen_dir = os.path.normpath(os.path.join(os.path.dirname(sp), "..", "..", "zz_generated.crd-manifests"))
        variants = crds.get((gen_dir, crd_name), [])
        gates = suite.get("featureGates") or []
        if not variants:
            skip("no generated CRD for the suite", len(creates) + len(updates))
            continue
        chosen = choose_variant(variants, gates)
        crd_path, _, scope = chosen
        crd_rel = os.path.join(name, "crds", "generated", crd_path)
        if crd_path not in written_crds:
            writer.write(crd_rel, manifest_texts[crd_path])
            written_crds.add(crd_path)
            stats["crd_files"] += 1
        run_key = crd_path
        run = runs.get(run_key)
        if run is None:
            run = runs[run_key] = {"crd": crd_rel, "scope": scope, "create": {}, "updates": []}
        suite_id = "%s-%s" % (slug(os.path.basename(sp)[:-5], 40),
                              hashlib.sha1(sp.encode()).hexdigest()[:8])
        for n, case in enumerate(creates):
            if not isinstance(case, dict) or not isinstance(case.get("initial"), str):
                skip("onCreate case without an initial object")
                continue
            doc = case["initial"]
            meta = {"generateName": "test-"}
            if scope == "Namespaced":
                meta["namespace"] = "default"
            doc = set_metadata(doc, meta)
            err = case.get("expectedError")
            cid = "%s-c%03d" % (suite_id, n)
            run["create"][cid + ".yaml"] = (doc, {
                "id": cid, "expect": "invalid" if err else "valid", "message": err or None,
                "name": case.get("name"), "source": "%s@%s:%s onCreate[%d]" % (
                    proj["repository"], proj["commit"][:12], sp, n)})
        for n, case in enumerate(updates):
            if not isinstance(case, dict) or not isinstance(case.get("initial"), str) \
                    or not isinstance(case.get("updated"), str):
                skip("onUpdate case without initial and updated objects")
                continue
            if case.get("initialCRDPatches"):
                skip("onUpdate case that patches the CRD first (initialCRDPatches)")
                continue
            if case.get("expectedStatusError"):
                skip("onUpdate case expecting a status-subresource error (expectedStatusError)")
                continue
            cid = "%s-u%03d" % (suite_id, n)
            given = re.search(r"^metadata:[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+name:[ \t]*(\S+)",
                              case["initial"], re.M)
            obj_name = given.group(1).strip("\"'") if given else "test-" + slug(cid, 50)
            meta = {"name": obj_name}
            if scope == "Namespaced":
                meta["namespace"] = "default"
            old = set_metadata(case["initial"], meta, override=True)
            new = set_metadata(case["updated"], meta, override=True)
            err = case.get("expectedError")
            run["updates"].append((cid, obj_name, old, new, {
                "id": cid, "expect": "invalid" if err else "valid", "message": err or None,
                "name": case.get("name"), "source": "%s@%s:%s onUpdate[%d]" % (
                    proj["repository"], proj["commit"][:12], sp, n)}))

    out = []
    for crd_path, run in sorted(runs.items()):
        # <group>/<version>/zz_generated.crd-manifests/<file>: the same file name recurs per version
        parts = crd_path.split("/")
        label = "-".join(parts[:-2] + [os.path.basename(crd_path)[:-len(".crd.yaml")]])
        base = os.path.join(name, "cases", slug(label, 110))
        if run["create"]:
            cases = {}
            for fname, (doc, meta) in run["create"].items():
                writer.write(os.path.join(base, "create", fname), doc)
                cases[fname] = meta
            stats["cases"] += len(cases)
            out.append({"project": name, "id": "%s/%s/create" % (name, os.path.basename(base)),
                        "type": "cases", "crds": [run["crd"]], "profile": fx.get("profile", profile),
                        "dir": os.path.join(base, "create"), "old": None, "cases": cases,
                        "ci": fx.get("ci", ""), "field_validation": fx.get("field_validation", "strict")})
        # updates: one invocation per bucket of distinct object names
        buckets = []
        for item in run["updates"]:
            for b in buckets:
                if item[1] not in b["names"]:
                    b["names"].add(item[1])
                    b["items"].append(item)
                    break
            else:
                buckets.append({"names": {item[1]}, "items": [item]})
        for k, b in enumerate(buckets):
            d = os.path.join(base, "update-%02d" % k)
            cases = {}
            for cid, _, old, new, meta in b["items"]:
                writer.write(os.path.join(d, "old", cid + ".yaml"), old)
                writer.write(os.path.join(d, "new", cid + ".yaml"), new)
                cases[cid + ".yaml"] = meta
            stats["cases"] += len(cases)
            out.append({"project": name, "id": "%s/%s/update-%02d" % (name, os.path.basename(base), k),
                        "type": "cases", "crds": [run["crd"]], "profile": fx.get("profile", profile),
                        "dir": os.path.join(d, "new"), "old": os.path.join(d, "old"), "cases": cases,
                        "ci": fx.get("ci", ""), "field_validation": fx.get("field_validation", "strict")})
    return out


def choose_variant(variants, gates):
    """Which generated CRD a suite runs against (a simplification of tests/crd_filter.go):
    ungated suites and suites needing a gate off use the Default feature set; suites
    needing gates on use CustomNoUpgrade, which carries every gated field."""
    if len(variants) == 1:
        return variants[0]
    want = "CustomNoUpgrade" if gates and not any(g.startswith("-") for g in gates) else "Default"
    for v in sorted(variants):
        if want in v[1]:
            return v
    return sorted(variants)[0]


def hand_cases(proj, exp_path, writer, scopes, crd_dirs, profile, stats):
    """expectations/<project>.json: cases written by hand, as JSON objects."""
    name = proj["name"]
    with open(exp_path, encoding="utf-8") as f:
        spec = json.load(f)
    groups = {}
    for case in spec["cases"]:
        sets = case.get("crds", spec.get("crds"))
        sets = sets if isinstance(sets, list) else [sets]
        key = (tuple(sets), "old" in case)
        groups.setdefault(key, []).append(case)
    out = []
    for (sets, is_update), cases in sorted(groups.items()):
        label = "hand-%s%s" % ("-".join(sets), "-update" if is_update else "")
        base = os.path.join(name, "cases", label)
        seen = set()
        bucket_cases = []
        # distinct (kind, namespace, name) per invocation when old objects are involved
        buckets = []
        for case in cases:
            obj = case["object"]
            ident = (obj.get("kind"), obj.get("metadata", {}).get("namespace"),
                     obj.get("metadata", {}).get("name"))
            if case["id"] in seen:
                raise SystemExit("%s: duplicate case id %s" % (exp_path, case["id"]))
            seen.add(case["id"])
            for b in buckets:
                if not is_update or ident not in b[0]:
                    b[0].add(ident)
                    b[1].append(case)
                    break
            else:
                buckets.append(({ident}, [case]))
        for k, (_, items) in enumerate(buckets):
            d = base if len(buckets) == 1 else "%s-%02d" % (base, k)
            entries = {}
            for case in items:
                fname = slug(case["id"], 100) + ".json"
                writer.write(os.path.join(d, "new", fname), json.dumps(case["object"], indent=1) + "\n")
                if is_update:
                    writer.write(os.path.join(d, "old", fname), json.dumps(case["old"], indent=1) + "\n")
                msgs = case.get("messages") or ([case["message"]] if case.get("message") else [])
                entries[fname] = {"id": case["id"], "expect": case["expect"],
                                  "message": msgs[0] if len(msgs) == 1 else None,
                                  "messages": msgs, "upstream": case.get("upstream", ""),
                                  "note": case.get("note", ""),
                                  "case_insensitive": bool(spec.get("case_insensitive")),
                                  "source": "expectations/%s.json" % name}
            stats["cases"] += len(entries)
            out.append({"project": name, "id": "%s/%s" % (name, os.path.basename(d)), "type": "cases",
                        "crds": [crd_dirs[s] for s in sets],
                        "profile": spec.get("profile", profile), "dir": os.path.join(d, "new"),
                        "old": os.path.join(d, "old") if is_update else None, "cases": entries,
                        "ci": spec.get("upstream", ""),
                        "field_validation": spec.get("field_validation", "strict")})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror",
                    help="where the snapshots are: <mirror>/<owner>+<name>/repo (default: %(default)s)")
    ap.add_argument("--out", default="/work/corpus", help="the corpus directory (default: %(default)s)")
    ap.add_argument("--sources", default=os.path.join(HERE, "sources.json"))
    ap.add_argument("--project", action="append", help="only these projects (repeatable)")
    ap.add_argument("mirror_dir", nargs="?", help="same as --mirror")
    args = ap.parse_args()
    mirror = args.mirror_dir or args.mirror
    with open(args.sources, encoding="utf-8") as f:
        sources = json.load(f)
    projects = [p for p in sources["projects"] if not args.project or p["name"] in args.project]
    out = os.path.abspath(args.out)
    if os.path.realpath(out).startswith(os.path.realpath(os.path.join(HERE, "..", ".."))):
        raise SystemExit("refusing to write the corpus inside the repository: %s" % out)
    index_path = os.path.join(out, "index.json")
    index = {"projects": [], "runs": []}
    if args.project and os.path.exists(index_path):
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
        index["projects"] = [p for p in index["projects"] if p["name"] not in args.project]
        index["runs"] = [r for r in index["runs"] if r["project"] not in args.project]
    os.makedirs(out, exist_ok=True)
    writer = Writer(out)
    for proj in projects:
        shutil.rmtree(os.path.join(out, proj["name"]), ignore_errors=True)
        runs, stats = build_project(proj, mirror, writer)
        index["projects"].append({
            "name": proj["name"], "repository": proj["repository"], "commit": proj["commit"],
            "kubernetes": proj["kubernetes"],
            "profile": proj.get("profile") or profile_for(proj["kubernetes"]["version"]),
            "stats": stats})
        index["runs"] += runs
        print("%-22s %4d CRD files, %5d manifest files (%d namespaces defaulted), %5d cases%s" % (
            proj["name"], stats["crd_files"], stats["manifest_files"], stats["namespace_defaulted"],
            stats["cases"], "".join("\n    skipped %d: %s" % (n, r) for r, n in stats["skipped_cases"].items())
            + ("\n    missing from the snapshot: %s" % ", ".join(stats["missing_files"]) if stats["missing_files"] else "")
            + ("\n    unresolved variables: %s" % ", ".join(stats["unresolved_variables"]) if stats["unresolved_variables"] else "")))
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
    print("wrote %s (%d runs)" % (index_path, len(index["runs"])))


if __name__ == "__main__":
    sys.exit(main())
