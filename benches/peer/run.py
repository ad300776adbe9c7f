#!/usr/bin/env python3
"""kube-cel beside `cel validate`, in one run, on the same CRDs and documents (issue 38).

    python3 benches/peer/run.py [--corpus DIR] [--documents N] [--rounds R]
                                [--cel PATH] [--peer PATH]

For each workload (a CRD and a stream of N generated documents, all valid against it):

- start-up: one document, the whole process, wall time (median of R runs);
- stream: N documents, wall time, CPU time (user + system) and peak resident memory
  (median of R runs); objects per second per core is N over the CPU time, so a run on two
  cores is not credited for the second one;
- the verdicts each tool printed, so a disagreement is seen, not hidden in a ratio.

Runs alternate between the two tools so that a noisy machine slows both alike. The ratios
printed are kube-cel's time over ours (higher is better for us) and our memory over
kube-cel's (lower is better).

The CRDs: the example CRD (examples/crd/webapps.yaml), and Gateway API's HTTPRoute and
Envoy Gateway's BackendTrafficPolicy from the real-world corpus, which
tools/corpus/rebuild.py writes from repository snapshots (default /work/corpus). Nothing
fetched is committed; without the corpus only the example runs. The documents are written by
documents.py, beside this file.

Builds: `cel` with `cargo build --release -p cel-cli` (the workspace's target directory),
the peer in its own workspace (benches/peer, kube-cel pinned in its Cargo.toml) into
target/peer. Give --cel or --peer to time binaries already built.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

WORKLOADS = [
    # (name, kind for documents.py, CRD path: relative to the repository or to the corpus)
    ("example WebApp", "webapp", ("repo", "examples/crd/webapps.yaml")),
    ("Gateway API HTTPRoute", "httproute",
     ("corpus", "gateway-api/crds/standard/config/crd/standard/"
                "gateway.networking.k8s.io_httproutes.yaml")),
    ("Envoy Gateway BackendTrafficPolicy", "backendtrafficpolicy",
     ("corpus", "envoy-gateway/crds/all/charts/gateway-helm/charts/crds/crds/generated/"
                "gateway.envoyproxy.io_backendtrafficpolicies.yaml")),
]


def build(args):
    if args.cel is None:
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "cel-cli", "-q"],
                       cwd=ROOT, check=True)
        args.cel = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                                "release", "cel")
    if args.peer is None:
        target = os.path.join(ROOT, "target", "peer")
        subprocess.run(["cargo", "build", "--release", "-q", "--target-dir", target],
                       cwd=HERE, check=True)
        args.peer = os.path.join(target, "release", "peer-kube-cel")


def measure(argv):
    """Wall seconds, CPU seconds (user + system), peak RSS in MB and the output of one whole
    process; wait4 gives the rusage of that child alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    chunks = []
    while True:
        chunk = proc.stdout.read(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = b"".join(chunks).decode()
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "out": text,
        "code": proc.returncode,
    }


def verdicts(text):
    """`N valid, M invalid` from either tool's last line."""
    m = re.search(r"(\d+) valid, (\d+) invalid", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def median_of(runs, key):
    return statistics.median(r[key] for r in runs)


def compare(name, crd, docs_one, docs_n, n, args):
    cel = lambda docs: [args.cel, "validate", "--crd", crd, docs]
    peer = lambda docs: [args.peer, crd, docs]
    start = {"cel": [], "peer": []}
    stream = {"cel": [], "peer": []}
    for _ in range(args.rounds):
        start["peer"].append(measure(peer(docs_one)))
        start["cel"].append(measure(cel(docs_one)))
        stream["peer"].append(measure(peer(docs_n)))
        stream["cel"].append(measure(cel(docs_n)))
    row = {"name": name, "n": n}
    for tool in ("cel", "peer"):
        row[tool] = {
            "start_ms": median_of(start[tool], "wall") * 1000,
            "wall": median_of(stream[tool], "wall"),
            "cpu": median_of(stream[tool], "cpu"),
            "rss_mb": median_of(stream[tool], "rss_mb"),
            "verdicts": verdicts(stream[tool][-1]["out"]),
        }
        row[tool]["per_core"] = n / row[tool]["cpu"]
    return row


def table(rows, machine):
    lines = [
        f"Machine: {machine}",
        "",
        "| workload | start-up, 1 doc (kube-cel / cel) | stream objects/s per core "
        "(kube-cel / cel, ratio) | stream wall (kube-cel / cel) | peak memory (kube-cel / cel) "
        "| verdicts valid/invalid (kube-cel / cel) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, c = r["peer"], r["cel"]
        lines.append(
            f"| {r['name']}, {r['n']:,} docs "
            f"| {p['start_ms']:.0f} ms / {c['start_ms']:.0f} ms "
            f"| {p['per_core']:,.0f} / {c['per_core']:,.0f} (**{c['per_core'] / p['per_core']:.1f}x**) "
            f"| {p['wall']:.2f} s / {c['wall']:.2f} s "
            f"| {p['rss_mb']:.0f} MB / {c['rss_mb']:.0f} MB ({c['rss_mb'] / p['rss_mb']:.2f}x) "
            f"| {fmt_verdicts(p['verdicts'])} / {fmt_verdicts(c['verdicts'])} |"
        )
    return "\n".join(lines)


def fmt_verdicts(v):
    return "?" if v is None else f"{v[0]}/{v[1]}"


def machine_name():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="/work/corpus",
                    help="the real-world corpus tools/corpus/rebuild.py writes")
    ap.add_argument("--documents", type=int, default=10_000, help="documents per stream")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each measurement")
    ap.add_argument("--cel", help="a built `cel` binary (default: build it)")
    ap.add_argument("--peer", help="a built peer-kube-cel binary (default: build it)")
    ap.add_argument("--only", help="run only workloads whose name contains this")
    args = ap.parse_args()
    build(args)
    rows = []
    with tempfile.TemporaryDirectory(prefix="celerity-peer-") as tmp:
        for name, kind, (base, rel) in WORKLOADS:
            if args.only and args.only.lower() not in name.lower():
                continue
            crd = os.path.join(ROOT if base == "repo" else args.corpus, rel)
            if not os.path.exists(crd):
                print(f"skipped {name}: {crd} is missing (run tools/corpus/rebuild.py)",
                      file=sys.stderr)
                continue
            docs = {}
            for count in (1, args.documents):
                path = os.path.join(tmp, f"{kind}-{count}.yaml")
                with open(path, "w") as out:
                    subprocess.run([sys.executable, os.path.join(HERE, "documents.py"), kind,
                                    str(count)], stdout=out, check=True)
                docs[count] = path
            print(f"{name}: {os.path.getsize(docs[args.documents]) / 1e6:.1f} MB stream",
                  file=sys.stderr)
            rows.append(compare(name, crd, docs[1], docs[args.documents], args.documents, args))
    print(table(rows, machine_name()))


if __name__ == "__main__":
    main()
