#!/usr/bin/env python3
"""Run `cel validate` over the corpus rebuild.py wrote and report agreement per project.

  python3 tools/corpus/run.py --cel /work/baseline/cel            # every project
  python3 tools/corpus/run.py --project gateway-api --show 20     # one, with disagreements
  CEL=/path/to/cel python3 tools/corpus/run.py --report out.json  # machine-readable too

Manifest sets run twice: `raw` (the files as upstream has them) and `kubectl` (as
`kubectl apply` sends them: a namespaced custom resource without metadata.namespace gets
the default namespace). Expected-valid sets agree object by object; expected-invalid sets
agree file by file (some object rejected, with one of the expected texts); cases agree
when the verdict matches and, for expected failures, the expected text is in the message.
Objects no CRD serves (built-in kinds, kinds of other projects) are "not validated" and
counted apart. Python 3.11 standard library only.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

RULE_LINE = re.compile(r"^\s*(?:- )?rule:", re.M)


def run_cel(cel, run, corpus, mode, timeout):
    if run["type"] == "set":
        target = os.path.join(corpus, run[mode])
    else:
        target = os.path.join(corpus, run["dir"])
    cmd = ["timeout", str(timeout), cel, "validate", "--output", "json"]
    if run.get("profile"):
        cmd += ["--profile", run["profile"]]
    if run.get("field_validation"):
        cmd += ["--field-validation", run["field_validation"]]
    for c in run["crds"]:
        cmd += ["--crd", os.path.join(corpus, c)]
    if run.get("old"):
        cmd += ["--old", os.path.join(corpus, run["old"])]
    cmd.append(target)
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.monotonic() - start
    results, noise = [], []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            noise.append(line)
            continue
        f = obj.get("file", "")
        obj["rel"] = os.path.relpath(f, target) if f else ""
        results.append(obj)
    stderr = proc.stderr.strip().splitlines()
    return {"cmd": cmd, "rc": proc.returncode, "elapsed": elapsed, "results": results,
            "stderr": stderr, "noise": noise, "refused": refused_crds(stderr)}


def refused_crds(stderr):
    """CRDs cel would not load: name -> reasons (as printed on standard error)."""
    refused, cur = {}, None
    for line in stderr:
        m = re.search(r'The CustomResourceDefinition "([^"]+)" is invalid:\s*(.*)$', line)
        if m:
            cur = m.group(1)
            refused.setdefault(cur, [])
            if m.group(2):
                refused[cur].append(m.group(2))
        elif cur and line.startswith("* "):
            refused[cur].append(line[2:])
        else:
            cur = None
    return refused


def refusal_summary(reasons):
    text = " ".join(reasons)
    if "estimated rule cost" in text or "cost total" in text:
        return "estimated rule cost over budget"
    if "unknown field" in text:
        return "unknown field in the CRD schema"
    return text[:80]


def messages_of(obj):
    """Every text an expected substring may be looked for in."""
    errs = [e.get("message", "") for e in obj.get("errors", [])]
    texts = [obj.get("message", ""), obj.get("rejected", "")] + errs
    if errs:
        # the API server's StatusError text (apierrors.NewInvalid): `<Kind>.<group> "<name>" is
        # invalid: <one>` or `[<a>, <b>]` (field.ErrorList.ToAggregate drops repeated messages)
        uniq = list(dict.fromkeys(errs))
        group = obj.get("apiVersion", "").rpartition("/")[0]
        kind = obj.get("kind", "") + ("." + group if group else "")
        texts.append("%s %s is invalid: %s" % (kind, json.dumps(obj.get("name", "")),
                                               uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]"))
    texts += obj.get("warnings", []) if obj.get("valid") is False else []
    return texts


def contains(obj, wanted, fold=False):
    texts = messages_of(obj)
    if fold:
        return any(w.lower() in t.lower() for t in texts for w in wanted)
    return any(w in t for t in texts for w in wanted)


NOT_SUBSTANTIVE = ("metadata.namespace: Required value", "some validation rules were not checked")


def substantive(obj):
    """The object without the errors a missing namespace causes (kubectl would have set it)."""
    errs = [e for e in obj.get("errors", []) if not any(t in e.get("message", "") for t in NOT_SUBSTANTIVE)]
    if len(errs) == len(obj.get("errors", [])):
        return obj
    return {"valid": obj.get("valid"), "errors": errs, "warnings": obj.get("warnings", []),
            "message": "\n".join(e.get("message", "") for e in errs)}


def first_errors(obj, n=3):
    if obj.get("valid") is None:
        return [obj.get("error", "")]
    if obj.get("rejected"):
        return [obj["rejected"]]
    return [e.get("message", "") for e in obj.get("errors", [])][:n]


# Kubernetes before 1.35 printed a failed rule as `Invalid value: "<schema type>": <message>`
# (the type name, "" for int-or-string) where 1.35 prints the value (or nothing for objects and
# arrays); apimachinery before 1.34 rendered a nil value as "null" where 1.34 prints null.
OLD_RULE_VALUE = re.compile(r'(?:Invalid value: |^)"(object|array|string|integer|number|boolean|)": ')


OLD_GO_MAP = re.compile(r'map\[string\]interface \{\}\{([^{}]*)(\}?)')
# before 1.36 the API server dropped int32/int64/float/double formats before validating types
OLD_NUMBER_TYPE = re.compile(r'must be of type (integer|number): "(number|integer)"')
JSON_SCALAR = r'(?:"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)'


def old_format_pattern(wanted):
    """A regex matching, in today's words, what an older API server said (None if no change)."""
    if not OLD_RULE_VALUE.search(wanted) and 'Invalid value: "null"' not in wanted \
            and not OLD_GO_MAP.search(wanted) and not OLD_NUMBER_TYPE.search(wanted):
        return None
    # Go's %#v of a map (before 1.34) is JSON now: map[string]interface {}{"a":"b", "c":"d"}
    wanted = OLD_GO_MAP.sub(lambda m: "{" + m.group(1).replace('", "', '","') + m.group(2), wanted)
    wanted = OLD_NUMBER_TYPE.sub("\x00", wanted)
    out, pos = "", 0
    for m in OLD_RULE_VALUE.finditer(wanted):
        out += re.escape(wanted[pos:m.start()])
        typ = m.group(1)
        prefix = "Invalid value: " if m.group(0).startswith("Invalid") else ""
        if typ in ("object", "array"):
            # omitted since 1.35, except for errors evaluating a rule
            out += prefix + '(?:"%s": )?' % typ
        else:
            out += prefix + "(?:%s: )?" % JSON_SCALAR
        pos = m.end()
    out += re.escape(wanted[pos:])
    out = out.replace(re.escape('Invalid value: "null"'), "Invalid value: null")
    return out.replace(re.escape("\x00"), r'must be of type [a-z0-9]+: "[a-z0-9]+"')


def version_format_explains(obj, wanted):
    for w in wanted:
        if contains(obj, [w]):
            continue
        pat = old_format_pattern(w)
        if pat is None or not any(re.search(pat, t) for t in messages_of(obj)):
            return False
    return True


def classify(obj, expect, wanted=(), refused=None):
    """A first, mechanical label for a disagreement (FINDINGS.md refines them)."""
    if obj is None:
        return "no output for the file"
    if obj.get("valid") is None:
        err = obj.get("error", "")
        if "no CustomResourceDefinition serves" in err:
            group = obj.get("apiVersion", "").rpartition("/")[0]
            for name, reasons in (refused or {}).items():
                if name.endswith("." + group):
                    return "CRD refused at load: " + refusal_summary(reasons)
            return "not validated: no CRD serves the kind"
        if "YAML" in err or "yaml" in err:
            return "YAML reading"
        return "CRD refused or object unreadable: " + err[:80]
    if obj.get("valid") is True:
        return "accepted, upstream rejects" if expect == "invalid" else "?"
    errs = [e.get("message", "") for e in obj.get("errors", [])]
    joined = "\n".join(errs)
    if obj.get("rejected") and "unknown field" in obj["rejected"]:
        return "unknown field (strict field validation)"
    if obj.get("rejected"):
        return "rejected before validation: " + obj["rejected"][:80]
    if expect == "invalid" and joined and not substantive(obj)["errors"]:
        return "namespaced object without metadata.namespace"
    if expect == "invalid":
        if wanted and version_format_explains(obj, wanted):
            return "message text of an older Kubernetes (value rendering / number formats)"
        return "rejected, but another message"
    if "metadata.namespace: Required value" in joined:
        return "namespaced object without metadata.namespace"
    if "metadata.namespace: Forbidden" in joined:
        return "metadata.namespace on a cluster-scoped object"
    if "metadata.name: Required value" in joined:
        return "metadata.name missing"
    if "cost" in joined.lower() and "budget" in joined.lower():
        return "cost budget"
    if "unknown field" in joined:
        return "unknown field"
    real = [e for e in errs if "some validation rules were not checked" not in e]
    return "rejected: " + (real[0][:90] if real else joined[:90])


def evaluate(run, out, mode):
    """Returns (tallies, disagreements)."""
    t = collections.Counter()
    dis = []
    by_file = collections.defaultdict(list)
    for obj in out["results"]:
        by_file[obj["rel"]].append(obj)
    if run["type"] == "set":
        if run["per"] == "file":
            for f in run["files"]:
                objs = by_file.get(f, [])
                t["expected_invalid"] += 1
                rejected = [o for o in objs if o.get("valid") is False]
                good = [o for o in rejected if contains(substantive(o), run["message_any"])]
                if good:
                    t["agree_invalid"] += 1
                else:
                    obj = rejected[0] if rejected else (objs[0] if objs else None)
                    if obj is None or (not rejected and all(o.get("valid") is None for o in objs)):
                        t["not_validated_invalid"] += 1
                    dis.append({"run": run["id"], "mode": mode, "file": f,
                                "expect": "invalid", "wanted": run["message_any"],
                                "got": None if obj is None else obj.get("valid"),
                                "kind": obj and obj.get("kind"), "name": obj and obj.get("name"),
                                "errors": first_errors(obj) if obj else [],
                                "class": classify(obj, "invalid", (), out["refused"])})
        else:
            for obj in out["results"]:
                v = obj.get("valid")
                if v is None:
                    cls = classify(obj, "valid", (), out["refused"])
                    if cls == "not validated: no CRD serves the kind":
                        t["not_validated"] += 1
                        t["not_validated:" + obj.get("apiVersion", "") + " " + obj.get("kind", "")] += 1
                        continue
                    # a CRD of the project refused, or an unreadable document: a disagreement
                    t["expected_valid"] += 1
                    dis.append({"run": run["id"], "mode": mode, "file": obj["rel"],
                                "document": obj.get("document"), "expect": "valid", "got": None,
                                "kind": obj.get("kind"), "name": obj.get("name"),
                                "errors": first_errors(obj), "class": cls})
                    continue
                t["expected_valid"] += 1
                if v:
                    t["agree_valid"] += 1
                else:
                    dis.append({"run": run["id"], "mode": mode, "file": obj["rel"],
                                "document": obj.get("document"), "expect": "valid", "got": False,
                                "kind": obj.get("kind"), "name": obj.get("name"),
                                "errors": first_errors(obj, 4), "class": classify(obj, "valid")})
    else:
        for f, case in run["cases"].items():
            objs = by_file.get(f, [])
            obj = objs[0] if objs else None
            expect = case["expect"]
            wanted = case.get("messages") or ([case["message"]] if case.get("message") else [])
            t["expected_" + expect] += 1
            ok = False
            if obj is not None and obj.get("valid") is not None:
                if expect == "valid":
                    ok = obj["valid"] is True
                else:
                    fold = case.get("case_insensitive", False)
                    ok = obj["valid"] is False and all(contains(obj, [w], fold) for w in wanted)
            if obj is None or obj.get("valid") is None:
                t["not_validated_" + expect] += 1
            if ok:
                t["agree_" + expect] += 1
            else:
                dis.append({"run": run["id"], "mode": mode, "file": f, "case": case["id"],
                            "expect": expect, "wanted": wanted,
                            "got": None if obj is None else obj.get("valid"),
                            "kind": obj and obj.get("kind"), "name": obj and obj.get("name"),
                            "errors": first_errors(obj, 4) if obj else [],
                            "class": classify(obj, expect, wanted, out["refused"]), "source": case.get("source", ""),
                            "title": case.get("name", "")})
    return t, dis


def count_rules(corpus, crd_paths):
    seen, n = set(), 0
    for c in crd_paths:
        p = os.path.join(corpus, c)
        files = [p] if os.path.isfile(p) else [os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs]
        for f in files:
            if f in seen:
                continue
            seen.add(f)
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if "CustomResourceDefinition" in text:
                n += len(RULE_LINE.findall(text))
    return seen, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cel", default=os.environ.get("CEL", "cel"), help="the cel binary (default: $CEL or cel)")
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--project", action="append", help="only these projects (repeatable)")
    ap.add_argument("--mode", choices=["raw", "kubectl", "both"], default="both",
                    help="which view of the manifest sets to run (default: both)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cel invocation")
    ap.add_argument("--show", type=int, default=0, help="print up to N disagreements per project")
    ap.add_argument("--report", help="write every result and disagreement as JSON here")
    args = ap.parse_args()

    with open(os.path.join(args.corpus, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    projects = [p for p in index["projects"] if not args.project or p["name"] in args.project]
    modes = ["raw", "kubectl"] if args.mode == "both" else [args.mode]
    report = {"cel": args.cel, "projects": []}
    grand = collections.Counter()
    t0 = time.monotonic()
    for proj in projects:
        runs = [r for r in index["runs"] if r["project"] == proj["name"]]
        tallies = {m: collections.Counter() for m in modes}
        case_t = collections.Counter()
        dis = []
        elapsed = 0.0
        failures = []
        crd_files = set()
        for run in runs:
            files, _ = count_rules(args.corpus, run["crds"])
            crd_files |= files
            for mode in (modes if run["type"] == "set" else ["cases"]):
                out = run_cel(args.cel, run, args.corpus, mode if mode != "cases" else "dir", args.timeout)
                elapsed += out["elapsed"]
                if out["rc"] not in (0, 1) and not (out["rc"] == 2 and out["results"]):
                    failures.append({"run": run["id"], "mode": mode, "rc": out["rc"],
                                     "stderr": out["stderr"][-5:]})
                t, d = evaluate(run, out, mode)
                (case_t if mode == "cases" else tallies[mode]).update(t)
                dis += d
                noise = [l for l in out["stderr"] + out["noise"]
                         if l.strip() and "not a CustomResourceDefinition" not in l]
                if noise:
                    failures.append({"run": run["id"], "mode": mode, "rc": out["rc"], "stderr": noise[:5]})
        _, rules = count_rules(args.corpus, sorted(crd_files))
        crds = 0
        for f in crd_files:
            with open(f, encoding="utf-8", errors="replace") as fh:
                crds += len(re.findall(r"^kind:\s*CustomResourceDefinition\s*$", fh.read(), re.M))
        classes = collections.Counter((d["mode"], d["class"]) for d in dis)
        entry = {"name": proj["name"], "repository": proj["repository"], "commit": proj["commit"],
                 "kubernetes": proj["kubernetes"]["version"], "profile": proj.get("profile"),
                 "crds": crds, "rules": rules, "seconds": round(elapsed, 2),
                 "sets": {m: dict(tallies[m]) for m in modes}, "cases": dict(case_t),
                 "classes": [{"mode": m, "class": c, "count": n} for (m, c), n in classes.most_common()],
                 "disagreements": dis, "failures": failures}
        report["projects"].append(entry)
        print_project(entry, modes, args.show)
        for m in modes:
            grand.update({m + ":" + k: v for k, v in tallies[m].items()})
        grand.update({"cases:" + k: v for k, v in case_t.items()})
    total = time.monotonic() - t0
    report["seconds"] = round(total, 2)
    report["totals"] = dict(grand)
    print("\nTOTAL %.1f s wall" % total)
    for m in modes:
        ev, av = grand[m + ":expected_valid"], grand[m + ":agree_valid"]
        ei, ai = grand[m + ":expected_invalid"], grand[m + ":agree_invalid"]
        print("  sets/%-7s valid %d/%d agree, invalid files %d/%d agree, %d not validated" % (
            m, av, ev, ai, ei, grand[m + ":not_validated"]))
    print("  cases        valid %d/%d agree, invalid %d/%d agree" % (
        grand["cases:agree_valid"], grand["cases:expected_valid"],
        grand["cases:agree_invalid"], grand["cases:expected_invalid"]))
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        print("report: " + args.report)


def pct(a, b):
    return "%5.1f%%" % (100.0 * a / b) if b else "    -"


def print_project(e, modes, show):
    print("\n== %s (%s@%s, Kubernetes %s, %s): %d CRDs, %d rules, %.1f s" % (
        e["name"], e["repository"], e["commit"][:12], e["kubernetes"], e["profile"], e["crds"],
        e["rules"], e["seconds"]))
    for m in modes:
        s = collections.Counter(e["sets"][m])
        if not s:
            continue
        print("  manifests/%-7s expected valid: %4d/%-4d agree %s   expected invalid (files): %3d/%-3d agree %s   not validated: %d" % (
            m, s["agree_valid"], s["expected_valid"], pct(s["agree_valid"], s["expected_valid"]),
            s["agree_invalid"], s["expected_invalid"], pct(s["agree_invalid"], s["expected_invalid"]),
            s["not_validated"]))
    c = collections.Counter(e["cases"])
    if c:
        print("  cases             expected valid: %4d/%-4d agree %s   expected invalid:         %4d/%-4d agree %s" % (
            c["agree_valid"], c["expected_valid"], pct(c["agree_valid"], c["expected_valid"]),
            c["agree_invalid"], c["expected_invalid"], pct(c["agree_invalid"], c["expected_invalid"])))
    for cl in e["classes"]:
        print("    %4d  [%s] %s" % (cl["count"], cl["mode"], cl["class"]))
    for f in e["failures"][:5]:
        print("    ! %s (%s) rc=%s %s" % (f["run"], f["mode"], f["rc"], " | ".join(f["stderr"])[:300]))
    for d in e["disagreements"][:show]:
        print("    - %s [%s] %s%s: expected %s%s, got %s" % (
            d["run"], d["mode"], d["file"], "#%s" % d["document"] if d.get("document") else "",
            d["expect"], (" " + json.dumps(d.get("wanted"))) if d.get("wanted") else "", d["got"]))
        for err in d["errors"]:
            print("        " + err.replace("\n", "\n        ")[:400])


if __name__ == "__main__":
    sys.exit(main())
