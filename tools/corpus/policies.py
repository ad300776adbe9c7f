#!/usr/bin/env python3
"""A corpus of public admission-policy libraries and their own tests, run through `cel admit`.

    python3 tools/corpus/policies.py build [--mirror-root DIR] [--out DIR] [--only NAME]
    python3 tools/corpus/policies.py run   [--cel PATH] [--out DIR] [--filter TEXT] [--timeout 10]
    python3 tools/corpus/policies.py report [--out DIR]

`build` reads the snapshots listed in tools/corpus/policy-sources.json (git directories under
--mirror-root, default /work/.mirror/<owner>+<name>/repo, at the commit recorded there) and
writes the corpus to --out (default /work/policy-corpus, outside the repository):

    <out>/index.json                 every case: source, policy, expectation, the file to run
    <out>/skipped.json               what was not converted, and why
    <out>/cases/<source>/<policy>/<n>.json
                                     one `cel admit --batch` request (a single JSON line): the
                                     policy, its binding, params, namespaces, the object

Each library is converted the way its own test harness or its own engine would do it:

* kubescape/cel-admission-library: controls/*/policy.yaml with tests.json; the object is the
  test-resources template with the field changes applied (scripts/change-yaml-field.py), the
  binding and params are test-resources/policy-binding*.yaml and *-control-configuration.yaml
  renamed as scripts/run-control-tests.py does; `kubectl apply` adds its last-applied annotation
  and sends the object to the namespace `default`.
* open-policy-agent/gatekeeper-library: templates with a `K8sNativeValidation` engine become a
  ValidatingAdmissionPolicy as Gatekeeper's own generator does
  (pkg/drivers/k8scel/transform/make_vap_objects.go and cel_snippets.go, without a webhook
  configuration: rules */*/* on CREATE and UPDATE, the four gatekeeper_internal_match_*
  conditions, the variables `anyObject` and `params` first, paramKind
  constraints.gatekeeper.sh/v1beta1 <Kind>); each constraint becomes the param and a binding
  (ConstraintToBinding: gatekeeper-<kind>-<name>, paramRef with parameterNotFoundAction Allow,
  the constraint's labelSelector and namespaceSelector); the cases are suite.yaml's, with
  `violations: yes|N` as a denial and `violations: no|0` as admission.
* kyverno/policies: ValidatingPolicy (*-vpol) and single-rule ClusterPolicy with validate.cel
  (*-cel) become a ValidatingAdmissionPolicy as Kyverno's generator does
  (pkg/admissionpolicy/builder.go: vpol-<name> / cpol-<name>, kinds translated to resource
  rules, celPreconditions as match conditions); the binding denies (the library ships Audit;
  its chainsaw tests switch to Enforce). Cases are .kyverno-test/kyverno-test.yaml results for
  the kinds the generated policy matches (Kyverno's pod-controller autogen is not part of a
  generated VAP), with the namespace `default` set as the Kyverno CLI sets it.
* vap-library/vap-library: policies/*/policy.yaml with policy_test.go; the Go tests are read
  for the YAML they create (fmt.Sprintf with literal arguments), whether they expect an error,
  the parameters applied in Setup, the namespace labels and the generated deny binding
  (testutils.GenerateDenyBindingForTesting).
* kolteq/kubernetes-security-policies: admission/ValidatingAdmissionPolicy/policies/**/policy.yaml
  with test.yaml, every test a denial, the binding generated as test_ValidatingAdmissionPolicy.sh
  does (namespaced policies select the namespace labelled test=enabled).

`run` runs `timeout <t> $CEL admit --batch <case>` (CEL from --cel, $CEL, or
/work/baseline/cel) for each case, records the wall time, the verdict and whether it agrees
with the library, and writes <out>/results.json. `report` prints the summary again, with the
disagreements grouped by the classes in tools/corpus/policy-classes.json.

Python 3.11 standard library, plus PyYAML for `build` only (the sources are YAML); `run` and
`report` read JSON only.
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(HERE, "policy-sources.json")
CLASSES = os.path.join(HERE, "policy-classes.json")
DEFAULT_OUT = "/work/policy-corpus"
DEFAULT_MIRROR = "/work/.mirror"
DEFAULT_CEL = "/work/baseline/cel"
# who kubectl is on the clusters the libraries test on (the API server always has a user)
KIND_ADMIN = {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]}
MINIKUBE_ADMIN = {"username": "minikube-user", "groups": ["system:masters", "system:authenticated"]}


def yaml_module():
    try:
        import yaml  # noqa: PLC0415
    except ImportError:
        sys.exit("build needs PyYAML (import yaml failed); run and report do not")
    return yaml


# --------------------------------------------------------------------------------------------
# Snapshots


class Snapshot:
    """Files of one commit of a git directory, read with `git cat-file --batch`."""

    def __init__(self, gitdir, commit):
        self.gitdir, self.commit = gitdir, commit
        out = subprocess.run(
            ["git", "--git-dir", gitdir, "ls-tree", "-r", "--name-only", commit],
            capture_output=True, text=True, check=True).stdout
        self.files = out.splitlines()
        self.fileset = set(self.files)
        self.proc = subprocess.Popen(["git", "--git-dir", gitdir, "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def exists(self, path):
        return path in self.fileset

    def read(self, path):
        self.proc.stdin.write(f"{self.commit}:{path}\n".encode())
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            raise FileNotFoundError(path)
        size = int(header[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        return data.decode("utf-8", errors="replace")

    def under(self, prefix):
        return [f for f in self.files if f.startswith(prefix)]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def load_all(text):
    yaml = yaml_module()
    return [d for d in yaml.safe_load_all(text) if d is not None]


def load_one(text):
    docs = load_all(text)
    return docs[0] if docs else None


def norm(obj):
    """JSON-compatible copy (YAML dates and the like become strings)."""
    return json.loads(json.dumps(obj, default=str))


# --------------------------------------------------------------------------------------------
# Kubernetes facts the converters need (what discovery would answer)

# kind -> (group, preferred version, resource, namespaced)
KINDS = {
    "Pod": ("", "v1", "pods", True),
    "Service": ("", "v1", "services", True),
    "ConfigMap": ("", "v1", "configmaps", True),
    "Secret": ("", "v1", "secrets", True),
    "ServiceAccount": ("", "v1", "serviceaccounts", True),
    "PersistentVolumeClaim": ("", "v1", "persistentvolumeclaims", True),
    "ReplicationController": ("", "v1", "replicationcontrollers", True),
    "Endpoints": ("", "v1", "endpoints", True),
    "PodTemplate": ("", "v1", "podtemplates", True),
    "LimitRange": ("", "v1", "limitranges", True),
    "ResourceQuota": ("", "v1", "resourcequotas", True),
    "Namespace": ("", "v1", "namespaces", False),
    "Node": ("", "v1", "nodes", False),
    "PersistentVolume": ("", "v1", "persistentvolumes", False),
    "Deployment": ("apps", "v1", "deployments", True),
    "StatefulSet": ("apps", "v1", "statefulsets", True),
    "DaemonSet": ("apps", "v1", "daemonsets", True),
    "ReplicaSet": ("apps", "v1", "replicasets", True),
    "Job": ("batch", "v1", "jobs", True),
    "CronJob": ("batch", "v1", "cronjobs", True),
    "HorizontalPodAutoscaler": ("autoscaling", "v2", "horizontalpodautoscalers", True),
    "PodDisruptionBudget": ("policy", "v1", "poddisruptionbudgets", True),
    "Ingress": ("networking.k8s.io", "v1", "ingresses", True),
    "IngressClass": ("networking.k8s.io", "v1", "ingressclasses", False),
    "NetworkPolicy": ("networking.k8s.io", "v1", "networkpolicies", True),
    "EndpointSlice": ("discovery.k8s.io", "v1", "endpointslices", True),
    "Event": ("events.k8s.io", "v1", "events", True),
    "Lease": ("coordination.k8s.io", "v1", "leases", True),
    "Role": ("rbac.authorization.k8s.io", "v1", "roles", True),
    "RoleBinding": ("rbac.authorization.k8s.io", "v1", "rolebindings", True),
    "ClusterRole": ("rbac.authorization.k8s.io", "v1", "clusterroles", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", False),
    "StorageClass": ("storage.k8s.io", "v1", "storageclasses", False),
    "CSIStorageCapacity": ("storage.k8s.io", "v1", "csistoragecapacities", True),
    "CSIDriver": ("storage.k8s.io", "v1", "csidrivers", False),
    "RuntimeClass": ("node.k8s.io", "v1", "runtimeclasses", False),
    "PriorityClass": ("scheduling.k8s.io", "v1", "priorityclasses", False),
    "FlowSchema": ("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", False),
    "PriorityLevelConfiguration": ("flowcontrol.apiserver.k8s.io", "v1",
                                   "prioritylevelconfigurations", False),
    "CustomResourceDefinition": ("apiextensions.k8s.io", "v1", "customresourcedefinitions", False),
    "ValidatingWebhookConfiguration": ("admissionregistration.k8s.io", "v1",
                                       "validatingwebhookconfigurations", False),
    "MutatingWebhookConfiguration": ("admissionregistration.k8s.io", "v1",
                                     "mutatingwebhookconfigurations", False),
    "CertificateSigningRequest": ("certificates.k8s.io", "v1", "certificatesigningrequests", False),
    # custom resources of the projects Kyverno's library covers (their CRDs' plurals and scopes)
    "Application": ("argoproj.io", "v1alpha1", "applications", True),
    "ApplicationSet": ("argoproj.io", "v1alpha1", "applicationsets", True),
    "AppProject": ("argoproj.io", "v1alpha1", "appprojects", True),
    "GitRepository": ("source.toolkit.fluxcd.io", "v1", "gitrepositories", True),
    "Bucket": ("source.toolkit.fluxcd.io", "v1", "buckets", True),
    "HelmRepository": ("source.toolkit.fluxcd.io", "v1", "helmrepositories", True),
    "ImageRepository": ("image.toolkit.fluxcd.io", "v1beta2", "imagerepositories", True),
    "TaskRun": ("tekton.dev", "v1", "taskruns", True),
    "PipelineRun": ("tekton.dev", "v1", "pipelineruns", True),
    "PeerAuthentication": ("security.istio.io", "v1", "peerauthentications", True),
    "Mesh": ("consul.hashicorp.com", "v1alpha1", "meshes", True),
    "TLSOption": ("traefik.io", "v1alpha1", "tlsoptions", True),
    "BuildConfig": ("build.openshift.io", "v1", "buildconfigs", True),
    "APIServer": ("config.openshift.io", "v1", "apiservers", False),
    "Route": ("route.openshift.io", "v1", "routes", True),
    "Restore": ("velero.io", "v1", "restores", True),
    "Schedule": ("velero.io", "v1", "schedules", True),
}
# group-qualified kinds that share a name with another group's
GROUP_KINDS = {
    ("config.kio.kasten.io", "Policy"): ("config.kio.kasten.io", "v1alpha1", "policies", True),
    ("authorization.openshift.io", "ClusterRole"): ("authorization.openshift.io", "v1",
                                                    "clusterroles", False),
    ("authorization.openshift.io", "ClusterRoleBinding"): ("authorization.openshift.io", "v1",
                                                           "clusterrolebindings", False),
    ("authorization.openshift.io", "Role"): ("authorization.openshift.io", "v1", "roles", True),
    ("authorization.openshift.io", "RoleBinding"): ("authorization.openshift.io", "v1",
                                                    "rolebindings", True),
}
CLUSTER_RESOURCES = {v[2] for v in KINDS.values() if not v[3]} | {
    "apiservices", "volumeattachments", "csinodes", "componentstatuses",
    "validatingadmissionpolicies", "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "tokenreviews",
    "selfsubjectaccessreviews", "subjectaccessreviews", "podsecuritypolicies"}


def split_api_version(api_version):
    if not api_version:
        return "", ""
    if "/" in api_version:
        g, v = api_version.split("/", 1)
        return g, v
    return "", api_version


def kind_info(obj):
    """(group, version, resource, namespaced, known) of an object."""
    group, version = split_api_version(obj.get("apiVersion", ""))
    kind = obj.get("kind", "")
    info = GROUP_KINDS.get((group, kind)) or KINDS.get(kind)
    if info and info[0] == group:
        return group, version, info[2], info[3], True
    return group, version, guess_resource(kind), bool(obj.get("metadata", {}).get("namespace")), False


def guess_resource(kind):
    k = kind.lower()
    if k.endswith("s"):
        return k + "es"
    if k.endswith("y") and not k[:-1].endswith(tuple("aeiou")):
        return k[:-1] + "ies"
    return k + "s"


def rules_match(rules, group, version, resource, subresource=""):
    """Whether resourceRules (as in a policy's matchConstraints) match a resource."""
    full = resource + ("/" + subresource if subresource else "")
    for r in rules or []:
        if not any(g in ("*", group) for g in r.get("apiGroups", [])):
            continue
        if not any(v in ("*", version) for v in r.get("apiVersions", [])):
            continue
        for res in r.get("resources", []):
            if res == "*" and not subresource:
                return True
            if res in (full, "*/*"):
                return True
            if subresource and res == "*/" + subresource:
                return True
            if not subresource and res == resource:
                return True
    return False


def namespace_obj(name, labels=None):
    lab = {"kubernetes.io/metadata.name": name}
    lab.update(labels or {})
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": lab}}


def last_applied(obj):
    """What `kubectl apply` (client side) adds to an object it creates."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    body = json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"
    meta.setdefault("annotations", {})
    if meta["annotations"] is None:
        meta["annotations"] = {}
    meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = body
    return out


# --------------------------------------------------------------------------------------------
# The corpus being written


class Corpus:
    def __init__(self, out):
        self.out = out
        self.cases = []
        self.skipped = []
        self.policies = {}
        self.harness = None

    def skip(self, source, what, why):
        self.skipped.append({"source": source, "what": what, "why": why})

    def add(self, source, policy_id, policy_name, name, request, expect, origin,
            message=None, notes=None, harness=None, group=None):
        """One case. `request` is the `cel admit --batch` line, `expect` admit, deny or warn."""
        n = sum(1 for c in self.cases if c["policy_id"] == policy_id)
        rel = os.path.join("cases", policy_id, f"{n:03d}.json")
        path = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(json.dumps(norm(request), separators=(",", ":")) + "\n")
        obj = request.get("object") or request.get("old_object") or {}
        self.cases.append({
            "id": f"{policy_id}/{n:03d}",
            "source": source,
            "policy_id": policy_id,
            "policy": policy_name,
            "name": name,
            "kind": obj.get("kind"),
            "operation": request.get("operation", "CREATE"),
            "file": rel,
            "expect": expect,
            "message": message,
            "origin": origin,
            "harness": harness or self.harness,
            "group": group,
            "notes": notes or [],
        })
        self.policies.setdefault(policy_id, policy_name)

    def write(self, sources):
        with open(os.path.join(self.out, "index.json"), "w") as f:
            json.dump({"sources": sources, "cases": self.cases}, f, indent=1)
        with open(os.path.join(self.out, "skipped.json"), "w") as f:
            json.dump(self.skipped, f, indent=1)


# --------------------------------------------------------------------------------------------
# kubescape/cel-admission-library


def ks_apply_field(data, field, value):
    """scripts/change-yaml-field.py's apply_field."""
    try:
        value = json.loads(value)
    except ValueError:
        pass
    fields = field.split(".")
    is_index = lambda f: re.fullmatch(r"\[\d+\]", f) is not None  # noqa: E731
    key_of = lambda f: int(f[1:-1]) if is_index(f) else f  # noqa: E731
    for f in fields:
        if not re.match(r"[a-zA-Z]\w*", f) and not is_index(f):
            raise ValueError("Invalid field name: " + f)
    root = data
    for i, f in enumerate(fields[:-1]):
        key = key_of(f)
        missing = [] if is_index(fields[i + 1]) else {}
        if isinstance(root, list):
            if not is_index(f):
                raise ValueError("list index expected")
            if len(root) <= key:
                root += [None] * (key - len(root) + 1)
            if root[key] is None:
                root[key] = missing
        else:
            if is_index(f):
                raise ValueError("cannot index a mapping")
            if root.get(f) is None:
                root[f] = missing
        root = root[key]
    key = key_of(fields[-1])
    if isinstance(root, list):
        if len(root) <= key:
            root += [None] * (key - len(root) + 1)
    root[key] = value


def build_kubescape(snap, src, corpus):
    yaml = yaml_module()
    name = src["name"]
    controls = sorted({p.split("/")[1] for p in snap.files
                       if p.startswith("controls/") and p.endswith("/policy.yaml")})
    namespaces = [namespace_obj("default"), namespace_obj("test-namespace")]
    for ctl in controls:
        tests_path = f"controls/{ctl}/tests.json"
        if not snap.exists(tests_path):
            corpus.skip(name, ctl, "no tests.json")
            continue
        docs = load_all(snap.read(f"controls/{ctl}/policy.yaml"))
        vaps = [d for d in docs if d.get("kind") == "ValidatingAdmissionPolicy"]
        if len(vaps) != 1:
            corpus.skip(name, ctl, f"{len(vaps)} ValidatingAdmissionPolicies in policy.yaml")
            continue
        vap = vaps[0]
        pname = vap["metadata"]["name"]
        tests = json.loads(snap.read(tests_path))
        for i, t in enumerate(tests):
            origin = f"{src['repo']}@{src['commit'][:12]}:{tests_path}#{i}"
            try:
                obj = yaml.safe_load(snap.read(f"test-resources/{t['template']}"))
                for change in t.get("field_change_list", []):
                    if change.count("=") != 1:
                        raise ValueError("missing '=' or more than one in " + change)
                    field, value = change.split("=")
                    ks_apply_field(obj, field, value)
                # the harness writes the object with yaml.dump and kubectl reads it back
                obj = yaml.safe_load(yaml.dump(obj, default_flow_style=False))
            except (ValueError, KeyError, TypeError, IndexError, FileNotFoundError) as e:
                corpus.skip(name, f"{ctl} test {i} {t.get('name')}",
                            f"the harness cannot build the object: {e}")
                continue
            binding = load_one(snap.read(
                f"test-resources/{t.get('binding_template', 'policy-binding.yaml')}"))
            binding["metadata"]["name"] = pname + "-binding"
            binding["spec"]["policyName"] = pname
            binding["spec"].setdefault("paramRef", {})["name"] = pname + "-params"
            params = load_one(snap.read(
                f"test-resources/{t.get('param_template', 'default-control-configuration.yaml')}"))
            params["metadata"]["name"] = pname + "-params"
            _, _, _, namespaced, _ = kind_info(obj)
            request = {
                "policies": [vap], "bindings": [binding], "params": [params],
                "namespaces": namespaces,
                "object": last_applied(obj),
                "operation": "CREATE",
                "dry_run": True,
                "scopes": {"kubescape.io/v1/ControlConfiguration": "Cluster"},
                "user": MINIKUBE_ADMIN,
            }
            if namespaced:
                request["namespace"] = obj.get("metadata", {}).get("namespace") or "default"
            expect = {"pass": "admit", "fail": "deny", "warn": "warn"}.get(t["expected"])
            if expect is None:
                corpus.skip(name, f"{ctl} test {i}", f"unknown expectation {t['expected']}")
                continue
            corpus.add(name, f"{name}/{ctl}", pname, t["name"], request, expect, origin)


# --------------------------------------------------------------------------------------------
# open-policy-agent/gatekeeper-library (Gatekeeper's VAP generation)

GK_MATCH_KINDS = """
	!has(params.spec) ? true: (
		!has(params.spec.match) ? true: (
			!has(params.spec.match.kinds) ? true : (
				params.spec.match.kinds.exists(groupskinds,
					(!has(groupskinds.kinds) || size(groupskinds.kinds) == 0 || "*" in groupskinds.kinds || request.kind.kind in groupskinds.kinds) &&
					(!has(groupskinds.apiGroups) || size(groupskinds.apiGroups) == 0 || "*" in groupskinds.apiGroups || request.kind.group in groupskinds.apiGroups)
				)
			)
		)
	)
	"""
GK_MATCH_NAME = """
	!has(params.spec) ? true: (
		!has(params.spec.match) ? true: (
			!has(params.spec.match.name) ? true : (
				[object, oldObject].exists(obj,
					obj != null && (
						(has(obj.metadata.generateName) && obj.metadata.generateName != "" && params.spec.match.name.endsWith("*") && string(obj.metadata.generateName).matches("^" + string(params.spec.match.name).replace("*", ".*") + "$")) ||
						(has(obj.metadata.name) && string(obj.metadata.name).matches("^" + string(params.spec.match.name).replace("*", ".*") + "$"))
					)
				)
			)
		)
	)
	"""
GK_MATCH_NAMESPACES = """
	!has(params.spec) ? true: (
		!has(params.spec.match) ? true: (
			!has(params.spec.match.namespaces) ? true : (
				[object, oldObject].exists(obj,
					obj != null && (
						// cluster-scoped objects always match
						!has(obj.metadata.namespace) || obj.metadata.namespace == "" ? true : (
							params.spec.match.namespaces.exists(nsMatcher,
								(string(obj.metadata.namespace).matches("^" + string(nsMatcher).replace("*", ".*") + "$"))
							)
						)
					)
				)
			)
		)
	)
	"""
GK_MATCH_EXCLUDED_NAMESPACES = """
	!has(params.spec) ? true: (
		!has(params.spec.match) ? true: (
			!has(params.spec.match.excludedNamespaces) ? true : (
				[object, oldObject].exists(obj,
					obj != null && (
						// cluster-scoped objects always match
						!has(obj.metadata.namespace) || obj.metadata.namespace == "" ? true : (
							!params.spec.match.excludedNamespaces.exists(nsMatcher,
								(string(obj.metadata.namespace).matches("^" + string(nsMatcher).replace("*", ".*") + "$"))
							)
						)
					)
				)
			)
		)
	)
	"""


def gatekeeper_vap(template):
    """TemplateToPolicyDefinition(template) with no webhook configuration."""
    target = template["spec"]["targets"][0]
    source = next(c["source"] for c in target["code"] if c["engine"] == "K8sNativeValidation")
    # schema.Source: matchConditions are read from the key `matchCondition`
    conditions = [{"name": m["name"], "expression": m["expression"]}
                  for m in source.get("matchCondition") or []]
    conditions += [
        {"name": "gatekeeper_internal_match_excluded_namespaces",
         "expression": GK_MATCH_EXCLUDED_NAMESPACES},
        {"name": "gatekeeper_internal_match_namespaces", "expression": GK_MATCH_NAMESPACES},
        {"name": "gatekeeper_internal_match_name", "expression": GK_MATCH_NAME},
        {"name": "gatekeeper_internal_match_kinds", "expression": GK_MATCH_KINDS},
    ]
    variables = [
        {"name": "anyObject", "expression":
         'has(request.operation) && request.operation == "DELETE" && object == null ? oldObject : object'},
        {"name": "params", "expression":
         "!has(params.spec) ? null : !has(params.spec.parameters) ? null: params.spec.parameters"},
    ] + [{"name": v["name"], "expression": v["expression"]} for v in source.get("variables") or []]
    validations = []
    for v in source.get("validations") or []:
        out = {"expression": v["expression"]}
        if v.get("message"):
            out["message"] = v["message"]
        if v.get("messageExpression"):
            out["messageExpression"] = v["messageExpression"]
        validations.append(out)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "gatekeeper-" + template["metadata"]["name"]},
        "spec": {
            "paramKind": {"apiVersion": "constraints.gatekeeper.sh/v1beta1",
                          "kind": template["spec"]["crd"]["spec"]["names"]["kind"]},
            "matchConstraints": {"resourceRules": [{
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]},
            "matchConditions": conditions,
            "validations": validations,
            "failurePolicy": source.get("failurePolicy") or "Fail",
            "variables": variables,
        },
    }


def gatekeeper_binding(constraint):
    """ConstraintToBinding(constraint, actions of its enforcementAction)."""
    kind, name = constraint["kind"], constraint["metadata"]["name"]
    action = (constraint.get("spec") or {}).get("enforcementAction") or "deny"
    actions = {"deny": ["Deny"], "warn": ["Warn"], "dryrun": ["Audit"]}.get(action)
    if actions is None:
        return None
    bname = f"gatekeeper-{kind.lower()}-{name}"
    if len(bname) > 253:
        raise ValueError("binding name too long")
    match = (constraint.get("spec") or {}).get("match") or {}
    mr = {}
    if "labelSelector" in match:
        mr["objectSelector"] = match["labelSelector"]
    if "namespaceSelector" in match:
        mr["namespaceSelector"] = match["namespaceSelector"]
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": bname},
        "spec": {
            "policyName": "gatekeeper-" + kind.lower(),
            "paramRef": {"name": name, "parameterNotFoundAction": "Allow"},
            "matchResources": mr,
            "validationActions": actions,
        },
    }


def build_gatekeeper(snap, src, corpus):
    name = src["name"]
    templates = sorted(p for p in snap.files
                       if p.startswith("library/") and p.endswith("/template.yaml"))
    for tpath in templates:
        tdir = tpath.rsplit("/", 1)[0]
        pid = tdir.split("/", 1)[1]
        template = load_one(snap.read(tpath))
        targets = template["spec"]["targets"]
        engines = [c["engine"] for c in targets[0].get("code", [])]
        if "K8sNativeValidation" not in engines:
            corpus.skip(name, pid, "Rego only (no K8sNativeValidation engine)")
            continue
        if not snap.exists(tdir + "/suite.yaml"):
            corpus.skip(name, pid, "no suite.yaml")
            continue
        vap = gatekeeper_vap(template)
        scope_key = f"constraints.gatekeeper.sh/v1beta1/{vap['spec']['paramKind']['kind']}"
        suite = load_one(snap.read(tdir + "/suite.yaml"))
        for test in suite.get("tests", []):
            constraint = load_one(snap.read(f"{tdir}/{test['constraint']}"))
            binding = gatekeeper_binding(constraint)
            if binding is None:
                corpus.skip(name, f"{pid} {test['name']}",
                            "enforcementAction without a VAP action (scoped)")
                continue
            param = copy.deepcopy(constraint)
            param["apiVersion"] = "constraints.gatekeeper.sh/v1beta1"
            policy_id = f"{name}/{pid}/{test['name']}"
            for case in test.get("cases", []):
                origin = f"{src['repo']}@{src['commit'][:12]}:{tdir}/suite.yaml#{test['name']}/{case['name']}"
                if case.get("inventory"):
                    corpus.skip(name, origin, "needs inventory (referential data)")
                    continue
                docs = load_all(snap.read(f"{tdir}/{case['object']}"))
                doc = docs[0]
                notes = []
                request = {"policies": [vap], "bindings": [binding], "params": [param],
                           "scopes": {scope_key: "Cluster"}}
                if doc.get("kind") == "AdmissionReview":
                    req = doc["request"]
                    op = req.get("operation") or "CREATE"
                    obj, old = req.get("object"), req.get("oldObject")
                    if op == "UPDATE" and old is None:
                        old = obj
                        notes.append("UPDATE without oldObject in the review: the object is its own old version")
                    if op == "DELETE":
                        obj = None
                    if req.get("userInfo"):
                        request["user"] = {"username": req["userInfo"].get("username", ""),
                                           "groups": req["userInfo"].get("groups", [])}
                    if req.get("namespace"):
                        request["namespace"] = req["namespace"]
                else:
                    op, obj, old = "CREATE", doc, None
                request["operation"] = op
                if obj is not None:
                    request["object"] = obj
                if old is not None:
                    request["old_object"] = old
                anyobj = obj or old
                if kind_info(anyobj)[3] and "namespace" not in request:
                    request["namespace"] = anyobj.get("metadata", {}).get("namespace") or "default"
                expect, message = None, None
                for a in case.get("assertions", []):
                    v = a.get("violations", "yes")
                    n = {True: "yes", False: "no", "yes": "yes", "no": "no"}.get(v, v)
                    positive = n == "yes" or (isinstance(n, int) and n > 0)
                    if "message" in a:
                        if positive:
                            expect = "deny"
                            message = {"regex": a["message"]}
                        continue
                    expect = "deny" if positive else "admit"
                if expect is None:
                    corpus.skip(name, origin, "no assertion decides the verdict")
                    continue
                if binding["spec"]["validationActions"] == ["Warn"] and expect == "deny":
                    expect = "warn"
                corpus.add(name, policy_id, vap["metadata"]["name"], case["name"], request,
                           expect, origin, message=message, notes=notes)


# --------------------------------------------------------------------------------------------
# kyverno/policies (Kyverno's VAP generation)

KYVERNO_ONLY = re.compile(
    r"(?<![\w.])(resource\.(Get|List|Post)|http\.|image\.|images\.|globalContext|imagedata|gctx|"
    r"json\.|yaml\.|x509\.|random\(|parseImageReference|generator\.|exceptions\.)")


def kyverno_kind(selector):
    """kubeutils.ParseKindSelector: group, version, kind, subresource."""
    parts = selector.split("/")
    if len(parts) == 1:
        return "*", "*", parts[0], ""
    if len(parts) == 2:
        if parts[1][:1].isupper():
            return "*", parts[0], parts[1], ""
        return "*", "*", parts[0], parts[1]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2], ""
    return parts[0], parts[1], parts[2], parts[3]


def kyverno_discover(group, version, kind):
    """What the discovery client would find: (group, version, resource) or None."""
    if group not in ("*", ""):
        info = GROUP_KINDS.get((group, kind)) or KINDS.get(kind)
        if not info or info[0] != group:
            return None
    else:
        info = KINDS.get(kind)
        if not info or (group == "" and info[0] != ""):
            return None
    return info[0], info[1] if version == "*" else version, info[2]


def kyverno_rules(res, is_match):
    """constructValidatingAdmissionPolicyRules."""
    ops = [o for o in res.get("operations") or [] if o in ("CREATE", "UPDATE", "CONNECT", "DELETE")]
    ops = ops or ["CREATE", "UPDATE", "CONNECT", "DELETE"]
    names = list(res.get("names") or [])
    if res.get("name"):
        names.append(res["name"])
    rules = []
    for k in res.get("kinds") or []:
        if k == "*":
            rules.append({"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"],
                          "operations": ops, **({"resourceNames": names} if names else {})})
            continue
        g, v, kind, sub = kyverno_kind(k)
        found = kyverno_discover(g, v, kind)
        if found is None:
            raise ValueError(f"no unique match for kind {k}")
        grp, ver, resource = found
        resources = [resource + ("/" + sub if sub else "")]
        if resource == "pods" and not sub:
            resources.append("pods/ephemeralcontainers")
        for r in rules:
            if grp in r["apiGroups"] and ver in r["apiVersions"]:
                r["resources"] = sorted(r["resources"] + resources)
                break
        else:
            rules.append({"apiGroups": [grp], "apiVersions": [ver], "resources": sorted(resources),
                          "operations": ops, **({"resourceNames": names} if names else {})})
    if not is_match and res.get("namespaces") and not res.get("kinds"):
        rules.append({"resourceNames": res["namespaces"], "apiGroups": [""], "apiVersions": ["v1"],
                      "resources": ["namespaces"], "operations": ops})
    return rules


def kyverno_cpol_vap(pol):
    """BuildValidatingAdmissionPolicy for a ClusterPolicy (after CanGenerateVAP)."""
    spec = pol["spec"]
    rules = spec.get("rules") or []
    if len(rules) != 1:
        raise ValueError("multiple rules are not applicable" if rules else "no rules found")
    rule = rules[0]
    cel = (rule.get("validate") or {}).get("cel")
    if not cel:
        raise ValueError("not a CEL rule")
    mr, match_rules, exclude_rules = {}, [], []
    match = rule.get("match") or {}
    filters = []
    if match.get("resources"):
        filters.append(match)
    filters += match.get("any") or []
    if len(match.get("all") or []) > 1:
        raise ValueError("multiple 'all' in the match block is not applicable")
    filters += match.get("all") or []
    for flt in filters:
        if any(flt.get(k) for k in ("roles", "clusterRoles", "subjects")):
            raise ValueError("Roles / ClusterRoles / Subjects are not applicable")
        res = flt.get("resources") or {}
        if res.get("annotations"):
            raise ValueError("annotations in resource description are not applicable")
        if any("*" in n or "?" in n for n in (res.get("names") or []) + [res.get("name") or ""]):
            raise ValueError("wildcards in resource name are not applicable")
        match_rules += kyverno_rules(res, True)
        mr["resourceRules"] = match_rules
        if res.get("namespaces"):
            mr["namespaceSelector"] = {"matchExpressions": [{
                "key": "kubernetes.io/metadata.name", "operator": "In",
                "values": res["namespaces"]}]}
        elif res.get("namespaceSelector"):
            mr["namespaceSelector"] = res["namespaceSelector"]
        if res.get("selector"):
            mr["objectSelector"] = res["selector"]
    exclude = rule.get("exclude") or {}
    efilters = ([exclude] if exclude.get("resources") else []) + (exclude.get("any") or []) + \
        (exclude.get("all") or [])
    for flt in efilters:
        if any(flt.get(k) for k in ("roles", "clusterRoles", "subjects")):
            raise ValueError("Roles / ClusterRoles / Subjects in exclude are not applicable")
        res = flt.get("resources") or {}
        if res.get("kinds") and res.get("namespaces"):
            raise ValueError("excluding a resource within a namespace is not applicable")
        exclude_rules += kyverno_rules(res, False)
        mr["excludeResourceRules"] = exclude_rules
    vspec = {"matchConstraints": mr}
    if cel.get("paramKind"):
        vspec["paramKind"] = cel["paramKind"]
    if cel.get("variables"):
        vspec["variables"] = cel["variables"]
    vspec["validations"] = cel.get("expressions") or []
    if cel.get("auditAnnotations"):
        vspec["auditAnnotations"] = cel["auditAnnotations"]
    if rule.get("celPreconditions"):
        vspec["matchConditions"] = rule["celPreconditions"]
    vap = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
           "metadata": {"name": "cpol-" + pol["metadata"]["name"]}, "spec": vspec}
    binding = {"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "cpol-" + pol["metadata"]["name"] + "-binding"},
               "spec": {"policyName": "cpol-" + pol["metadata"]["name"],
                        "validationActions": ["Deny"]}}
    if cel.get("paramRef"):
        binding["spec"]["paramRef"] = cel["paramRef"]
    return vap, binding, rule["name"]


def kyverno_vpol_vap(pol):
    """BuildValidatingAdmissionPolicy for a ValidatingPolicy (no exceptions)."""
    spec = pol["spec"]
    mode = (spec.get("evaluation") or {}).get("mode")
    if mode not in (None, "Kubernetes"):
        raise ValueError(f"evaluation mode {mode}")
    vspec = {"matchConstraints": spec["matchConstraints"]}
    for k in ("variables", "validations", "auditAnnotations", "matchConditions"):
        if spec.get(k):
            vspec[k] = spec[k]
    name = "vpol-" + pol["metadata"]["name"]
    vap = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
           "metadata": {"name": name}, "spec": vspec}
    binding = {"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": name + "-binding"},
               "spec": {"policyName": name, "validationActions": ["Deny"]}}
    return vap, binding


def kyverno_convert(pol):
    """(vap, binding, rule name or None) or raises ValueError with Kyverno's reason."""
    kind = pol.get("kind")
    if kind == "ValidatingPolicy":
        vap, binding = kyverno_vpol_vap(pol)
        rule = None
    elif kind == "ClusterPolicy":
        vap, binding, rule = kyverno_cpol_vap(pol)
    else:
        raise ValueError(f"{kind} is not a ValidatingPolicy or ClusterPolicy")
    text = json.dumps(vap["spec"])
    if KYVERNO_ONLY.search(text):
        raise ValueError("uses Kyverno's own CEL libraries: " + ", ".join(
            sorted(set(m.group(0) for m in KYVERNO_ONLY.finditer(text)))))
    if vap["spec"].get("paramKind"):
        raise ValueError("needs params the tests do not give")
    return vap, binding, rule


def templated(doc):
    """Whether a chainsaw resource uses chainsaw's templating (`($namespace)` and the like)."""
    return re.search(r"\(\$\w+", json.dumps(doc, default=str)) is not None


def build_kyverno(snap, src, corpus):
    name = src["name"]
    dirs = sorted({p.split("/.kyverno-test/")[0] for p in snap.files
                   if "/.kyverno-test/kyverno-test.yaml" in p} |
                  {p.split("/.chainsaw-test/")[0] for p in snap.files
                   if "/.chainsaw-test/chainsaw-test.yaml" in p})
    dirs = [d for d in dirs if re.match(r"[^/]+-(cel|vpol)/", d)]
    for tdir in dirs:
        family = "vpol" if tdir.split("/")[0].endswith("-vpol") else "cel"
        tpath = tdir + "/.kyverno-test/kyverno-test.yaml"
        if snap.exists(tpath):
            build_kyverno_cli(snap, src, corpus, tdir, tpath, family)
        cpath = tdir + "/.chainsaw-test/chainsaw-test.yaml"
        if snap.exists(cpath):
            build_kyverno_chainsaw(snap, src, corpus, tdir, cpath, family)


def build_kyverno_cli(snap, src, corpus, tdir, tpath, family):
    name = src["name"]
    pid = f"{name}/{tdir}"
    test = load_one(snap.read(tpath))
    base = tpath.rsplit("/", 1)[0]
    if test.get("variables") or test.get("context") or test.get("userinfo"):
        corpus.skip(name, tpath, "the test gives variables, context or user info (Kyverno CLI values)")
        return
    pols = []
    for p in test.get("policies", []):
        pols += load_all(snap.read(os.path.normpath(os.path.join(base, p))))
    resources = []
    for r in test.get("resources", []):
        resources += load_all(snap.read(os.path.normpath(os.path.join(base, r))))
    for pol in pols:
        try:
            vap, binding, rule = kyverno_convert(pol)
        except (ValueError, KeyError) as e:
            corpus.skip(name, f"{tpath} {pol.get('metadata', {}).get('name')}",
                        f"no VAP: {e}")
            continue
        rules = vap["spec"]["matchConstraints"].get("resourceRules")
        for res in test.get("results", []):
            if res.get("policy") != pol["metadata"]["name"]:
                continue
            if rule is not None and res.get("rule") not in (None, rule):
                continue
            expect = {"pass": "admit", "fail": "deny", "skip": "admit"}.get(res.get("result"))
            if expect is None:
                corpus.skip(name, f"{tpath} {res}", "result neither pass, fail nor skip")
                continue
            names = res.get("resources") or ([res["resource"]] if res.get("resource") else [])
            for rname in names:
                rns = None
                if "/" in rname:
                    rns, rname = rname.split("/", 1)
                objs = [o for o in resources if o.get("kind") == res.get("kind")
                        and o.get("metadata", {}).get("name") == rname
                        and (rns is None or o["metadata"].get("namespace") in (rns, None))]
                if len(objs) != 1:
                    corpus.skip(name, f"{tpath} {res.get('kind')} {rname}",
                                f"{len(objs)} resources of that kind and name")
                    continue
                obj = copy.deepcopy(objs[0])
                g, v, resource, namespaced, known = kind_info(obj)
                if not rules_match(rules, g, v, resource):
                    corpus.skip(name, f"{tpath} {res.get('kind')} {rname}",
                                "kind not matched by the generated VAP (Kyverno autogen for pod "
                                "controllers, or another kind)")
                    continue
                notes = []
                if namespaced and not obj.get("metadata", {}).get("namespace"):
                    # cmd/cli/kubectl-kyverno/resource/resource.go
                    obj.setdefault("metadata", {})["namespace"] = "default"
                if res.get("result") == "skip":
                    notes.append("Kyverno result skip (rule not applied)")
                ns = obj["metadata"].get("namespace")
                request = {"policies": [vap], "bindings": [binding], "object": obj,
                           "operation": "CREATE"}
                if ns:
                    request["namespaces"] = [namespace_obj(ns)]
                if not known or g not in ("", "apps", "batch") or obj["kind"] not in KINDS:
                    request["scopes"] = {f"{obj['apiVersion']}/{obj['kind']}":
                                         "Namespaced" if namespaced else "Cluster"}
                origin = f"{src['repo']}@{src['commit'][:12]}:{tpath}#{res.get('kind')}/{rname}"
                corpus.add(name, f"{pid}/{family}-{pol['metadata']['name']}",
                           vap["metadata"]["name"], f"{res.get('kind')} {rname}", request,
                           expect, origin, notes=notes, harness="kyverno CLI (kyverno test)")


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch (how an apply over an existing object is approximated)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def build_kyverno_chainsaw(snap, src, corpus, tdir, cpath, family):
    """The chainsaw test: the policy in Enforce on a cluster, resources applied with an
    expected error or none. Kyverno's webhook sees the objects as the API server decoded,
    defaulted and mutated them."""
    name = src["name"]
    test = load_one(snap.read(cpath))
    base = cpath.rsplit("/", 1)[0]
    ns = "chainsaw-test"
    namespaces = {ns: namespace_obj(ns)}
    converted = None
    existing = {}
    for step in test["spec"].get("steps", []):
        for op in step.get("try", []):
            verb = "apply" if "apply" in op else "create" if "create" in op else None
            if verb is None or not isinstance(op[verb], dict) or "file" not in op[verb]:
                continue
            spec = op[verb]
            path = os.path.normpath(os.path.join(base, spec["file"]))
            if not snap.exists(path):
                corpus.skip(name, f"{cpath} {spec['file']}", "file not in the snapshot")
                continue
            try:
                docs = load_all(snap.read(path))
            except Exception as e:  # noqa: BLE001 (a YAML error in one file)
                corpus.skip(name, f"{cpath} {spec['file']}", f"YAML: {e}")
                continue
            want_error = any("($error != null)" in json.dumps(x) for x in spec.get("expect") or [])
            group = f"{cpath}#{spec['file']}" if want_error and len(docs) > 1 else None
            for i, doc in enumerate(docs):
                kind = doc.get("kind")
                if kind in ("ClusterPolicy", "ValidatingPolicy"):
                    try:
                        converted = kyverno_convert(doc)
                    except (ValueError, KeyError) as e:
                        corpus.skip(name, f"{cpath} {doc['metadata']['name']}", f"no VAP: {e}")
                        converted = None
                    continue
                g, v, resource, namespaced, known = kind_info(doc)
                meta = doc.get("metadata") or {}
                key = (g, kind, meta.get("namespace") or (ns if namespaced else ""), meta.get("name"))
                if kind == "Namespace" and not want_error:
                    namespaces[meta["name"]] = namespace_obj(meta["name"], meta.get("labels") or {})
                old = existing.get(key)
                if not want_error:
                    existing[key] = merge_patch(old, doc) if old and verb == "apply" else doc
                if converted is None:
                    continue
                vap, binding, _ = converted
                rules = vap["spec"]["matchConstraints"].get("resourceRules")
                what = f"{cpath} {spec['file']}#{i} {kind} {meta.get('name')}"
                if not rules_match(rules, g, v, resource):
                    continue
                if templated(doc):
                    corpus.skip(name, what, "uses chainsaw templating")
                    continue
                notes = []
                request = {"policies": [vap], "bindings": [binding],
                           "operation": "CREATE", "namespaces": list(namespaces.values()),
                           "user": KIND_ADMIN}
                if old is not None and verb == "apply":
                    request["operation"] = "UPDATE"
                    request["old_object"] = old
                    request["object"] = merge_patch(old, doc)
                    notes.append("apply over an existing object: UPDATE, the new object a merge "
                                 "patch of the old (the old without the API server's defaults)")
                elif old is not None:
                    corpus.skip(name, what, "create of an existing object (AlreadyExists)")
                    continue
                else:
                    request["object"] = copy.deepcopy(doc)
                if namespaced:
                    request["namespace"] = meta.get("namespace") or ns
                if not known:
                    request["scopes"] = {f"{doc['apiVersion']}/{kind}":
                                         "Namespaced" if namespaced else "Cluster"}
                if group:
                    notes.append(f"document {i + 1} of {len(docs)} of a file expected to fail: "
                                 "one denial is enough")
                origin = f"{src['repo']}@{src['commit'][:12]}:{what}"
                corpus.add(name, f"{name}/{tdir}/{family}-chainsaw-{vap['metadata']['name']}",
                           vap["metadata"]["name"], f"{spec['file']} {kind} {meta.get('name')}",
                           request, "deny" if want_error else "admit", origin, notes=notes,
                           harness="chainsaw: Kyverno (Enforce) on kind, Kubernetes v1.30-v1.33",
                           group=group)


# --------------------------------------------------------------------------------------------
# vap-library/vap-library (Go tests read for what they create)

GO_STRING_VAR = re.compile(r"^var\s+(\w+)\s+(?:string\s*)?=\s*`(.*?)`", re.S | re.M)


def go_args(text):
    """Split a Go call's argument list (strings, identifiers, nested calls) at top-level commas."""
    out, depth, cur, i = [], 0, "", 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur += text[i:j + 1]
            i = j + 1
            continue
        if c == "`":
            j = text.index("`", i + 1)
            cur += text[i:j + 1]
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out


def go_call_args(text, start):
    """The argument text of the call whose '(' is at text[start]."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "`":
            i = text.index("`", i + 1)
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i
        i += 1
    raise ValueError("unbalanced call")


def go_eval(expr, env):
    expr = expr.strip()
    if expr.startswith('"'):
        return json.loads(expr)
    if expr.startswith("`"):
        return expr[1:-1]
    if expr.startswith("[]byte("):
        return go_eval(expr[len("[]byte("):-1], env)
    if expr.startswith("fmt.Sprintf("):
        args = go_args(go_call_args(expr, len("fmt.Sprintf"))[0])
        fmt = go_eval(args[0], env)
        vals = [go_eval(a, env) for a in args[1:]]
        it = iter(vals)

        def sub(m):
            if m.group(0) == "%%":
                return "%"
            return str(next(it))
        return re.sub(r"%%|%[sdv]", sub, fmt)
    if re.fullmatch(r"\w+", expr) and expr in env:
        return env[expr]
    raise ValueError("cannot evaluate Go expression " + expr[:80])


def build_vaplib(snap, src, corpus):
    yaml = yaml_module()
    name = src["name"]
    pols = sorted({p.split("/")[1] for p in snap.files
                   if p.startswith("policies/") and p.endswith("/policy_test.go")})
    for pol in pols:
        pdir = f"policies/{pol}"
        docs = []
        for f in sorted(snap.under(pdir + "/")):
            if f.endswith(".yaml") and f.count("/") == 2:
                docs += load_all(snap.read(f))
        vaps = [d for d in docs if d.get("kind") == "ValidatingAdmissionPolicy"]
        crds = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
        if len(vaps) != 1:
            corpus.skip(name, pol, f"{len(vaps)} policies")
            continue
        vap = vaps[0]
        pname = vap["metadata"]["name"]
        scopes = {}
        for crd in crds:
            for v in crd["spec"]["versions"]:
                scopes[f"{crd['spec']['group']}/{v['name']}/{crd['spec']['names']['kind']}"] = \
                    crd["spec"]["scope"]
        go = snap.read(f"{pdir}/policy_test.go")
        env = {m.group(1): m.group(2) for m in GO_STRING_VAR.finditer(go)}
        m = re.search(r"namespaceLabels\s*=\s*map\[string\]string\{(.*?)\}", go, re.S)
        ns_labels = dict(re.findall(r'"([^"]*)"\s*:\s*"([^"]*)"', m.group(1))) if m else {}
        m = re.search(r"bindingsToGenerate\s*=\s*map\[string\]bool\{(.*?)\}", go, re.S)
        bindings = []
        for bn, has_param in re.findall(r'"([^"]*)"\s*:\s*(true|false)', m.group(1) if m else ""):
            b = {"apiVersion": "admissionregistration.k8s.io/v1",
                 "kind": "ValidatingAdmissionPolicyBinding",
                 "metadata": {"name": f"{bn}-deny.vap-library.com"},
                 "spec": {"matchResources": {"matchPolicy": "Equivalent",
                                             "namespaceSelector": {"matchLabels": {
                                                 f"vap-library.com/{bn}": "deny"}},
                                             "objectSelector": {}},
                          "policyName": f"{bn}.vap-library.com",
                          "validationActions": ["Deny", "Audit"]}}
            if has_param == "true":
                b["spec"]["paramRef"] = {"name": f"{bn}.vap-library.com",
                                         "parameterNotFoundAction": "Deny"}
            bindings.append(b)
        param_kind = (vap["spec"].get("paramKind") or {}).get("kind")
        funcs = re.split(r"^func (Test\w+)\(t \*testing\.T\) \{", go, flags=re.M)
        for fname, body in zip(funcs[1::2], funcs[2::2]):
            if fname == "TestMain":
                continue
            ns = "vaplib-" + re.sub(r"[^a-z0-9]+", "-", fname.lower()).strip("-")
            env["namespace"] = ns
            steps = re.split(r"\b(Setup|Assess|Teardown)\(", body)
            state = []
            for kind, step in zip(steps[1::2], steps[2::2]):
                desc = re.match(r'\s*"([^"]*)"', step)
                desc = desc.group(1) if desc else kind
                if kind == "Teardown":
                    continue
                for call in re.finditer(r"ApplyK8sResourceFromYAML\(ctx, cfg, ", step):
                    args, end = go_call_args(step, call.end() - len("ctx, cfg, ") - 1)
                    expr = go_args(args)[2]
                    after = step[end:end + 400]
                    want = re.search(r"if err (==|!=) nil", after)
                    want_ok = kind == "Setup" or (want and want.group(1) == "!=")
                    origin = f"{src['repo']}@{src['commit'][:12]}:{pdir}/policy_test.go#{fname}/{desc}"
                    try:
                        text = go_eval(expr, env)
                        obj = yaml.safe_load(text)
                    except (ValueError, StopIteration, KeyError) as e:
                        corpus.skip(name, origin, f"cannot read the object: {e}")
                        continue
                    suffix = None
                    sm = re.search(r"strings\.HasSuffix\(err\.Error\(\), (.*?)\) \{", after)
                    if sm and not want_ok:
                        try:
                            suffix = go_eval(sm.group(1), env)
                        except (ValueError, StopIteration):
                            suffix = None
                    if kind == "Assess":
                        notes = []
                        same = [o for o in state if o.get("kind") == obj.get("kind") and
                                o["metadata"]["name"] == obj["metadata"]["name"]]
                        if same and not want_ok:
                            notes.append("an object of that name already exists in the test: "
                                         "the create fails with AlreadyExists whatever the policy says")
                        params = [o for o in state if o.get("kind") == param_kind]
                        request = {"policies": [vap], "bindings": bindings, "params": params,
                                   "namespaces": [namespace_obj(ns, ns_labels)],
                                   "object": obj, "operation": "CREATE", "scopes": scopes,
                                   "user": KIND_ADMIN}
                        if kind_info(obj)[3] or obj["metadata"].get("namespace"):
                            request["namespace"] = obj["metadata"].get("namespace") or "default"
                        corpus.add(name, f"{name}/{pol}", pname, f"{fname}: {desc}", request,
                                   "admit" if want_ok else "deny", origin,
                                   message={"suffix": suffix} if suffix else None, notes=notes)
                    if want_ok:
                        state.append(obj)
                # ephemeral containers: a strategic-merge patch of pods/ephemeralcontainers
                for pm in re.finditer(r'Get\(ctx, "([^"]+)", namespace, pod\)', step):
                    pd = re.search(r"patchData := (\[\]byte\(.*?\))\n", step)
                    want = re.search(r"PatchSubresource\(ctx, pod, \"ephemeralcontainers\", patch\)"
                                     r"\s*if err (==|!=) nil", step)
                    if not pd or not want:
                        continue
                    origin = f"{src['repo']}@{src['commit'][:12]}:{pdir}/policy_test.go#{fname}/{desc}"
                    pods = [o for o in state if o.get("kind") == "Pod" and
                            o["metadata"]["name"] == pm.group(1)]
                    if not pods:
                        corpus.skip(name, origin, "patched pod not created in the test")
                        continue
                    patch = json.loads(go_eval(pd.group(1), env))
                    old = copy.deepcopy(pods[-1])
                    new = copy.deepcopy(old)
                    new["spec"]["ephemeralContainers"] = (new["spec"].get("ephemeralContainers") or []) \
                        + patch["spec"]["ephemeralContainers"]
                    request = {"policies": [vap], "bindings": bindings,
                               "params": [o for o in state if o.get("kind") == param_kind],
                               "namespaces": [namespace_obj(ns, ns_labels)],
                               "object": new, "old_object": old, "operation": "UPDATE",
                               "subresource": "ephemeralcontainers", "namespace": ns,
                               "scopes": scopes, "user": KIND_ADMIN}
                    corpus.add(name, f"{name}/{pol}", pname, f"{fname}: {desc}", request,
                               "admit" if want.group(1) == "!=" else "deny", origin,
                               notes=["the old pod is the one the test created, without the "
                                      "API server's defaults"])


# --------------------------------------------------------------------------------------------
# kolteq/kubernetes-security-policies


def build_kolteq(snap, src, corpus):
    name = src["name"]
    root = src.get("root", "admission/ValidatingAdmissionPolicy/policies")
    test_ns = namespace_obj("policy-test", {"test": "enabled"})
    for ppath in sorted(p for p in snap.files if p.startswith(root + "/") and p.endswith("/policy.yaml")):
        pdir = ppath.rsplit("/", 1)[0]
        pid = f"{name}/{pdir[len(root) + 1:]}"
        tpath = pdir + "/test.yaml"
        if not snap.exists(tpath):
            corpus.skip(name, pid, "no test.yaml")
            continue
        vap = load_one(snap.read(ppath))
        pname = vap["metadata"]["name"]
        cluster = False
        for r in (vap["spec"].get("matchConstraints") or {}).get("resourceRules") or []:
            if "*" in r.get("apiGroups", []) or "*" in r.get("resources", []):
                cluster = True
            if any(x.split("/")[0] in CLUSTER_RESOURCES for x in r.get("resources", [])):
                cluster = True
        binding = {"apiVersion": "admissionregistration.k8s.io/v1",
                   "kind": "ValidatingAdmissionPolicyBinding",
                   "metadata": {"name": pname + "-test-binding"},
                   "spec": {"policyName": pname, "validationActions": ["Deny"]}}
        if not cluster:
            binding["spec"]["matchResources"] = {"namespaceSelector": {"matchLabels": {"test": "enabled"}}}
        text = snap.read(tpath)
        command = re.search(r"^# Command: (.*)$", text, re.M)
        docs = load_all(text)
        origin = f"{src['repo']}@{src['commit'][:12]}:{tpath}"
        if command:
            # kubectl debug -n policy-test POD -it --image=IMG [--profile=P] --custom=FILE
            cmd = command.group(1)
            cm = re.match(r"kubectl debug -n (\S+) (\S+) .*--image=(\S+)", cmd)
            custom = re.search(r"--custom=(\S+)", cmd)
            if not cm or "--profile" in cmd or "--copy-to" in cmd:
                corpus.skip(name, origin, "a command the corpus does not model: " + cmd)
                continue
            pods = [d for d in docs if d.get("kind") == "Pod" and d["metadata"]["name"] == cm.group(2)]
            if not pods:
                corpus.skip(name, origin, "the debugged pod is not in test.yaml")
                continue
            old = copy.deepcopy(pods[0])
            old["metadata"]["namespace"] = cm.group(1)
            eph = {"name": "debugger-test", "image": cm.group(3), "stdin": True, "tty": True,
                   "terminationMessagePolicy": "File", "resources": {}}
            if custom:
                cpath = os.path.normpath(os.path.join(root.rsplit("/", 1)[0], custom.group(1)))
                if not snap.exists(cpath):
                    corpus.skip(name, origin, "the --custom file is missing: " + cpath)
                    continue
                eph.update(load_one(snap.read(cpath)))
            new = copy.deepcopy(old)
            new["spec"]["ephemeralContainers"] = [eph]
            request = {"policies": [vap], "bindings": [binding], "namespaces": [test_ns],
                       "object": new, "old_object": old, "operation": "UPDATE",
                       "subresource": "ephemeralcontainers", "namespace": cm.group(1),
                       "user": KIND_ADMIN}
            corpus.add(name, pid, pname, "kubectl debug", request, "deny", origin,
                       notes=["kubectl debug modelled: an ephemeral container with the --custom "
                              "fields; the pod without the API server's defaults"])
            continue
        for i, doc in enumerate(docs):
            g, v, resource, namespaced, _ = kind_info(doc)
            obj = copy.deepcopy(doc)
            request = {"policies": [vap], "bindings": [binding], "namespaces": [test_ns],
                       "object": last_applied(obj), "operation": "CREATE", "dry_run": True,
                       "user": KIND_ADMIN}
            notes = []
            group = None
            if len(docs) > 1:
                group = f"{pid}/test.yaml"
                notes.append(f"document {i + 1} of {len(docs)}: the library only needs one denial")
            if not cluster and resource not in CLUSTER_RESOURCES:
                request["namespace"] = obj["metadata"].get("namespace") or "policy-test"
            elif namespaced:
                request["namespace"] = obj["metadata"].get("namespace") or "default"
            if obj.get("kind") == "Namespace":
                request["namespaces"] = [test_ns]
            corpus.add(name, pid, pname, f"{obj.get('kind')} {obj['metadata'].get('name')}",
                       request, "deny", origin, notes=notes, group=group)


ADAPTERS = {
    "kubescape": build_kubescape,
    "gatekeeper": build_gatekeeper,
    "kyverno": build_kyverno,
    "vaplib": build_vaplib,
    "kolteq": build_kolteq,
}


def cmd_build(args):
    with open(SOURCES) as f:
        sources = json.load(f)
    if os.path.isdir(args.out):
        for sub in ("cases",):
            p = os.path.join(args.out, sub)
            if os.path.isdir(p):
                subprocess.run(["rm", "-rf", "--", p], check=True)
    os.makedirs(args.out, exist_ok=True)
    corpus = Corpus(args.out)
    used = []
    for src in sources["sources"]:
        if args.only and src["name"] not in args.only:
            continue
        gitdir = os.path.join(args.mirror_root, src["repo"].replace("/", "+"), "repo")
        if not os.path.isdir(gitdir):
            sys.exit(f"{src['repo']}: no snapshot at {gitdir} (fetch github:{src['repo']})")
        snap = Snapshot(gitdir, src["commit"])
        before = len(corpus.cases)
        corpus.harness = src.get("harness")
        ADAPTERS[src["adapter"]](snap, src, corpus)
        snap.close()
        used.append(src)
        print(f"{src['name']}: {len(corpus.cases) - before} cases, "
              f"{len({c['policy_id'] for c in corpus.cases[before:]})} policies", file=sys.stderr)
    corpus.write(used)
    print(f"{len(corpus.cases)} cases, {len(corpus.skipped)} skipped -> {args.out}", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# Running

ERROR_MARKERS = ("compilation error", "resulted in error", "failed to configure binding",
                 "no params found", "failed messageExpression", "evaluation error",
                 "failed to compile")


def verdict_of(resp, policy):
    if not resp.get("ok"):
        return "error", None
    msg = resp.get("status", {}).get("message", "")
    mine = f"'{policy}'" in msg
    if not resp.get("allowed"):
        return ("deny" if mine else "deny-other"), msg
    if any(f"'{policy}'" in w for w in resp.get("warnings", [])):
        return "warn", msg
    return "admit", msg


def deny_detail(msg):
    part = msg.split("denied request: ", 1)[-1] if msg else ""
    return part


def run_case(cel, case, out, timeout, backend=None):
    path = os.path.join(out, case["file"])
    cmd = ["timeout", str(timeout), cel, "admit", "--batch", path]
    if backend:
        cmd[4:4] = ["--backend", backend]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.monotonic() - t0
    r = {"id": case["id"], "seconds": round(secs, 4), "exit": p.returncode}
    if p.returncode == 124:
        r.update(verdict="timeout", agree=False)
        return r
    try:
        resp = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        r.update(verdict="crash", agree=False, stderr=p.stderr[-2000:])
        return r
    verdict, msg = verdict_of(resp, case["policy"])
    r["verdict"] = verdict
    if msg:
        r["message"] = msg
    if resp.get("warnings"):
        r["warnings"] = resp["warnings"]
    if not resp.get("ok"):
        r["error"] = resp.get("error")
    detail = deny_detail(msg) if verdict == "deny" else ""
    r["deny_by_error"] = verdict == "deny" and any(m in detail for m in ERROR_MARKERS)
    expect = case["expect"]
    if expect == "admit":
        r["agree"] = verdict in ("admit", "warn")
    elif expect == "deny":
        r["agree"] = verdict == "deny"
    else:
        r["agree"] = verdict == "warn"
    m = case.get("message")
    if m and verdict == "deny":
        if "regex" in m:
            r["message_agree"] = re.search(m["regex"], detail) is not None
        elif "suffix" in m:
            r["message_agree"] = msg.endswith(m["suffix"])
    return r


def cmd_run(args):
    with open(os.path.join(args.out, "index.json")) as f:
        index = json.load(f)
    cel = args.cel or os.environ.get("CEL") or DEFAULT_CEL
    cases = [c for c in index["cases"] if not args.filter or any(x in c["id"] for x in args.filter)]
    results = []
    for i, case in enumerate(cases):
        r = run_case(cel, case, args.out, args.timeout, args.backend)
        results.append(r)
        if r["verdict"] in ("timeout", "crash") or r["seconds"] > args.slow:
            print(f"  {case['id']}: {r['verdict']} in {r['seconds']:.2f}s", file=sys.stderr)
        if (i + 1) % 200 == 0:
            print(f"{i + 1}/{len(cases)}", file=sys.stderr)
    group_agreement(index, results)
    name = "results.json" if not args.filter else "results-filtered.json"
    with open(os.path.join(args.out, name), "w") as f:
        json.dump({"cel": cel, "timeout": args.timeout, "backend": args.backend,
                   "results": results}, f, indent=1)
    summarize(index, results, args.slow)


def load_classes():
    if not os.path.exists(CLASSES):
        return {}
    with open(CLASSES) as f:
        return json.load(f)


def classify(result, classes):
    """The first class whose case patterns match the id (and, when given, whose verdict and
    message pattern match the result)."""
    for cls, entry in classes.get("classes", {}).items():
        if entry.get("verdict") and result.get("verdict") != entry["verdict"]:
            continue
        if entry.get("message") and not re.search(entry["message"], result.get("message", "")):
            continue
        if any(re.fullmatch(p, result["id"]) for p in entry.get("cases", [".*"])):
            return cls
    return "unclassified"


def group_agreement(index, results):
    """A file the library expects to fail as a whole needs one denial among its documents."""
    cases = {c["id"]: c for c in index["cases"]}
    groups = {}
    for r in results:
        g = cases[r["id"]].get("group")
        if g:
            groups.setdefault(g, []).append(r)
    for rs in groups.values():
        any_deny = any(r.get("verdict") == "deny" for r in rs)
        for r in rs:
            if cases[r["id"]]["expect"] == "deny" and r.get("verdict") != "timeout":
                r["agree"] = any_deny
                r["group_denied"] = any_deny


def summarize(index, results, slow):
    cases = {c["id"]: c for c in index["cases"]}
    group_agreement(index, results)
    classes = load_classes()
    by_source = {}
    for r in results:
        c = cases[r["id"]]
        s = by_source.setdefault(c["source"], {"vaps": set(), "setups": set(), "cases": 0,
                                               "agree": 0, "by_error": 0, "slow": 0,
                                               "timeout": 0, "mc": 0, "ma": 0})
        s["vaps"].add(c["policy"])
        s["setups"].add(c["policy_id"])
        s["cases"] += 1
        s["agree"] += bool(r.get("agree"))
        s["by_error"] += bool(r.get("agree") and r.get("deny_by_error"))
        s["slow"] += r["seconds"] > slow
        s["timeout"] += r["verdict"] == "timeout"
        if "message_agree" in r:
            s["mc"] += 1
            s["ma"] += r["message_agree"]
    print(f"| source | policies (VAPs) | test setups | cases | agree | of which denied by an error | "
          f"disagree | > {slow:g}s | timeouts | messages checked/agree |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    tot = {k: 0 for k in ("vaps", "setups", "cases", "agree", "by_error", "slow", "timeout", "mc", "ma")}
    for src, s in by_source.items():
        row = {k: (len(v) if isinstance(v, set) else v) for k, v in s.items()}
        print(f"| {src} | {row['vaps']} | {row['setups']} | {row['cases']} | {row['agree']} | "
              f"{row['by_error']} | {row['cases'] - row['agree']} | {row['slow']} | "
              f"{row['timeout']} | {row['mc']}/{row['ma']} |")
        for k in tot:
            tot[k] += row[k]
    print(f"| **total** | {tot['vaps']} | {tot['setups']} | {tot['cases']} | {tot['agree']} | "
          f"{tot['by_error']} | {tot['cases'] - tot['agree']} | {tot['slow']} | {tot['timeout']} | "
          f"{tot['mc']}/{tot['ma']} |")
    counts = {}
    for r in results:
        if not r.get("agree") or r.get("message_agree") is False or r["seconds"] > slow:
            counts.setdefault(classify(r, classes), []).append(r["id"])
    print()
    for cls, ids in sorted(counts.items(), key=lambda kv: -len(kv[1])):
        pols = sorted({cases[i]["policy"] for i in ids})
        print(f"{cls}: {len(ids)} cases, {len(pols)} policies ({', '.join(pols)})")
        if cls == "unclassified":
            for i in ids:
                r = next(x for x in results if x["id"] == i)
                c = cases[i]
                print(f"   {i} expect={c['expect']} got={r['verdict']} "
                      f"t={r['seconds']:.2f} {r.get('message', r.get('error', ''))[:200]}")


def cmd_report(args):
    with open(os.path.join(args.out, "index.json")) as f:
        index = json.load(f)
    with open(os.path.join(args.out, "results.json")) as f:
        results = json.load(f)["results"]
    summarize(index, results, args.slow)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--mirror-root", default=DEFAULT_MIRROR)
    b.add_argument("--out", default=DEFAULT_OUT)
    b.add_argument("--only", action="append")
    r = sub.add_parser("run")
    r.add_argument("--cel")
    r.add_argument("--out", default=DEFAULT_OUT)
    r.add_argument("--filter", action="append")
    r.add_argument("--timeout", type=float, default=10)
    r.add_argument("--slow", type=float, default=1.0)
    r.add_argument("--backend", help="interpreter, jit or auto (default: the CLI's, jit)")
    p = sub.add_parser("report")
    p.add_argument("--out", default=DEFAULT_OUT)
    p.add_argument("--slow", type=float, default=1.0)
    args = ap.parse_args()
    {"build": cmd_build, "run": cmd_run, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
