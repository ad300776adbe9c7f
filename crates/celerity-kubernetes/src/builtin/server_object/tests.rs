//! Manifests with their empty and zero fields against the object the API server builds
//! (expected objects as the defaulting tests of k8s.io/kubernetes pkg/apis/*/v1/defaults_test.go
//! state them).

use serde_json::{Value as Json, json};

use super::{pull_policy, server_object};

fn check(minor: u32, manifest: Json, expected: Json) {
    let got = server_object(minor, &manifest);
    assert_eq!(
        got,
        expected,
        "got {}",
        serde_json::to_string_pretty(&got).unwrap()
    );
    // Building it again changes nothing.
    assert_eq!(server_object(minor, &got), got);
}

/// The pod spec a template of one bare container becomes.
fn defaulted_pod_spec(image: &str, policy: &str) -> Json {
    json!({
        "containers": [{
            "name": "c",
            "image": image,
            "imagePullPolicy": policy,
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "schedulerName": "default-scheduler",
    })
}

fn template(image: &str, policy: &str) -> Json {
    json!({
        "metadata": {"creationTimestamp": null, "labels": {"app": "a"}},
        "spec": defaulted_pod_spec(image, policy),
    })
}

fn bare_template(image: &str) -> Json {
    json!({
        "metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    })
}

#[test]
fn pull_policy_follows_the_tag() {
    // TestSetDefaultImagePullPolicy (pkg/apis/core/v1/defaults_test.go).
    for (image, policy) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry:5000/nginx", "Always"),
        ("registry:5000/nginx:v1", "IfNotPresent"),
        ("nginx@sha256:abc", "IfNotPresent"),
        ("nginx:latest@sha256:abc", "Always"),
    ] {
        assert_eq!(pull_policy(image), policy, "{image}");
    }
}

#[test]
fn pod() {
    check(
        36,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "busybox",
                   "ports": [{"containerPort": 80, "hostPort": 0}],
                   "resources": {"limits": {"cpu": "1"}}}]}}),
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "creationTimestamp": null},
               "spec": {
                   "containers": [{"name": "c", "image": "busybox",
                       "imagePullPolicy": "Always",
                       "ports": [{"containerPort": 80, "protocol": "TCP"}],
                       "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
                       "terminationMessagePath": "/dev/termination-log",
                       "terminationMessagePolicy": "File"}],
                   "restartPolicy": "Always",
                   "terminationGracePeriodSeconds": 30,
                   "dnsPolicy": "ClusterFirst",
                   "securityContext": {},
                   "schedulerName": "default-scheduler",
                   "enableServiceLinks": true},
               "status": {}}),
    );
}

#[test]
fn deployment() {
    check(
        36,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"template": bare_template("nginx:1.25")}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "d", "creationTimestamp": null},
               "spec": {"replicas": 1, "selector": null,
                   "template": template("nginx:1.25", "IfNotPresent"),
                   "strategy": {"type": "RollingUpdate",
                       "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                   "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
               "status": {}}),
    );
    // A Recreate strategy gets no rolling-update parameters; set values stay.
    let got = server_object(
        36,
        &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"replicas": 0, "strategy": {"type": "Recreate"}}}),
    );
    assert_eq!(got["spec"]["strategy"], json!({"type": "Recreate"}));
    assert_eq!(got["spec"]["replicas"], json!(0));
    assert_eq!(
        got["spec"]["template"],
        json!({"metadata": {"creationTimestamp": null},
               "spec": {"containers": null, "restartPolicy": "Always",
                   "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                   "securityContext": {}, "schedulerName": "default-scheduler"}})
    );
}

#[test]
fn stateful_set_by_release() {
    let manifest = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "s"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": bare_template("db"),
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                     "spec": {"accessModes": ["ReadWriteOnce"]}}]}});
    let mut expected = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "s", "creationTimestamp": null},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                 "template": template("db", "Always"),
                 "volumeClaimTemplates": [{
                     "metadata": {"name": "data", "creationTimestamp": null},
                     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {},
                              "volumeMode": "Filesystem"},
                     "status": {"phase": "Pending"}}],
                 "podManagementPolicy": "OrderedReady",
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                 "revisionHistoryLimit": 10,
                 "persistentVolumeClaimRetentionPolicy":
                     {"whenDeleted": "Retain", "whenScaled": "Retain"}},
        "status": {}});
    check(36, manifest.clone(), expected.clone());
    expected["spec"]
        .as_object_mut()
        .unwrap()
        .remove("persistentVolumeClaimRetentionPolicy");
    check(26, manifest, expected);
}

#[test]
fn daemon_set_and_replica_set() {
    let got = server_object(
        36,
        &json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
                "spec": {"template": bare_template("agent:1")}}),
    );
    assert_eq!(
        got["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(got["spec"]["revisionHistoryLimit"], json!(10));
    let got = server_object(
        36,
        &json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
                "spec": {"template": bare_template("web")}}),
    );
    assert_eq!(got["spec"]["replicas"], json!(1));
    assert_eq!(got["spec"]["template"], template("web", "Always"));
}

#[test]
fn job_and_cron_job() {
    check(
        36,
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
               "spec": {"template": bare_template("busybox:1")}}),
        json!({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "j", "creationTimestamp": null},
               "spec": {"completionMode": "NonIndexed", "suspend": false,
                   "template": template("busybox:1", "IfNotPresent"),
                   "completions": 1, "parallelism": 1, "backoffLimit": 6,
                   "podReplacementPolicy": "TerminatingOrFailed"},
               "status": {}}),
    );
    // TestSetDefaultJob: parallelism alone leaves completions unset; 1.28 has no
    // podReplacementPolicy.
    let got = server_object(
        28,
        &json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"parallelism": 3}}),
    );
    assert_eq!(got["spec"].get("completions"), None);
    assert_eq!(got["spec"].get("podReplacementPolicy"), None);
    check(
        36,
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
               "spec": {"schedule": "* * * * *",
                        "jobTemplate": {"spec": {"template": bare_template("busybox:1")}}}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": "c", "creationTimestamp": null},
               "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Allow",
                   "suspend": false, "successfulJobsHistoryLimit": 3,
                   "failedJobsHistoryLimit": 1,
                   "jobTemplate": {"metadata": {"creationTimestamp": null},
                       "spec": {"template": template("busybox:1", "IfNotPresent")}}},
               "status": {}}),
    );
}

#[test]
fn service() {
    check(
        36,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "spec": {"ports": [{"port": 80}, {"port": 443, "targetPort": "https"}]}}),
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "s", "creationTimestamp": null},
               "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                                  {"port": 443, "targetPort": "https", "protocol": "TCP"}],
                        "type": "ClusterIP", "sessionAffinity": "None",
                        "internalTrafficPolicy": "Cluster"},
               "status": {"loadBalancer": {}}}),
    );
}

#[test]
fn load_balancer_and_affinity() {
    let got = server_object(
        36,
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                "spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP"}}),
    );
    assert_eq!(
        got["spec"],
        json!({"type": "LoadBalancer", "sessionAffinity": "ClientIP",
               "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
               "externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster",
               "allocateLoadBalancerNodePorts": true})
    );
}

#[test]
fn host_network_and_volumes() {
    let got = server_object(
        36,
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"hostNetwork": true,
                         "containers": [{"name": "c", "image": "x:1",
                                         "ports": [{"containerPort": 8080}]}],
                         "volumes": [{"name": "s", "secret": {"secretName": "s"}},
                                     {"name": "t", "projected": {"sources": [
                                         {"serviceAccountToken": {"path": "t"}}]}}]}}),
    );
    assert_eq!(
        got["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}])
    );
    assert_eq!(
        got["spec"]["volumes"][0]["secret"]["defaultMode"],
        json!(420)
    );
    assert_eq!(
        got["spec"]["volumes"][1]["projected"],
        json!({"defaultMode": 420,
               "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}]})
    );
}

#[test]
fn claims_classes_namespaces_secrets() {
    check(
        36,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
               "spec": {"accessModes": ["ReadWriteOnce"]}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": "c", "creationTimestamp": null},
               "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem",
                        "resources": {}},
               "status": {"phase": "Pending"}}),
    );
    check(
        36,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "fast"}}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "fast", "creationTimestamp": null},
               "provisioner": "", "reclaimPolicy": "Delete",
               "volumeBindingMode": "Immediate"}),
    );
    check(
        36,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}),
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "team", "creationTimestamp": null,
                            "labels": {"kubernetes.io/metadata.name": "team"}},
               "spec": {}, "status": {"phase": "Active"}}),
    );
    let got = server_object(
        36,
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
    );
    assert_eq!(got["type"], json!("Opaque"));
}

#[test]
fn networking() {
    check(
        36,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
               "metadata": {"name": "n"},
               "spec": {"egress": [{"ports": [{"port": 53}]}]}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
               "metadata": {"name": "n", "creationTimestamp": null},
               "spec": {"podSelector": {},
                        "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}],
                        "policyTypes": ["Ingress", "Egress"]}}),
    );
    let got = server_object(
        36,
        &json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "i"}}),
    );
    assert_eq!(got["spec"], json!({}));
    assert_eq!(got["status"], json!({"loadBalancer": {}}));
}

#[test]
fn rbac() {
    check(
        36,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "r"}}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "r", "creationTimestamp": null}, "rules": null}),
    );
    let got = server_object(
        36,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "r"}, "rules": [{"apiGroups": [""]}]}),
    );
    assert_eq!(got["rules"], json!([{"apiGroups": [""], "verbs": null}]));
    check(
        36,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "b"},
               "roleRef": {"kind": "Role", "name": "r"},
               "subjects": [{"kind": "User", "name": "alice"},
                            {"kind": "ServiceAccount", "name": "sa", "namespace": "x"}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "b", "creationTimestamp": null},
               "roleRef": {"kind": "Role", "name": "r",
                           "apiGroup": "rbac.authorization.k8s.io"},
               "subjects": [{"kind": "User", "name": "alice",
                             "apiGroup": "rbac.authorization.k8s.io"},
                            {"kind": "ServiceAccount", "name": "sa", "namespace": "x",
                             "apiGroup": ""}]}),
    );
}

#[test]
fn other_kinds_and_values_pass_through() {
    let cm = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "c"}});
    assert_eq!(server_object(36, &cm), cm);
    assert_eq!(server_object(36, &json!([1])), json!([1]));
    // Wrong types are left for validation.
    let bad = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                     "spec": "nope"});
    assert_eq!(server_object(36, &bad)["spec"], json!("nope"));
}

#[test]
fn limit_range_container_items_get_default_limits_and_requests() {
    // TestSetDefaultLimitRangeItem (pkg/apis/core/v1/defaults_test.go): the default limit
    // from the max, the default request from the default limit, else from the min.
    check(
        36,
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
        "spec": {"limits": [
            {"type": "Container", "max": {"cpu": "100m"}, "min": {"memory": "100Mi"}},
            {"type": "Pod", "max": {"cpu": "1"}},
            {"max": {"cpu": "1"}},
        ]}}),
        json!({"apiVersion": "v1", "kind": "LimitRange",
        "metadata": {"name": "l", "creationTimestamp": null},
        "spec": {"limits": [
            {"type": "Container", "max": {"cpu": "100m"}, "min": {"memory": "100Mi"},
             "default": {"cpu": "100m"},
             "defaultRequest": {"cpu": "100m", "memory": "100Mi"}},
            {"type": "Pod", "max": {"cpu": "1"}},
            {"type": "", "max": {"cpu": "1"}},
        ]}}),
    );
    check(
        36,
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"}}),
        json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "l", "creationTimestamp": null},
            "spec": {"limits": null}}),
    );
}

#[test]
fn hpas_scale_on_cpu_and_fill_a_given_behavior() {
    // SetDefaults_HorizontalPodAutoscaler (pkg/apis/autoscaling/v2/defaults.go): one
    // replica at least, CPU at 80%, and a behavior that is given filled from both rules'
    // defaults.
    let bare = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 5}});
    check(
        36,
        bare.clone(),
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "creationTimestamp": null},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 5,
                "minReplicas": 1,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80}}}]},
            "status": {"desiredReplicas": 0, "currentMetrics": null}}),
    );
    let mut with_behavior = bare;
    with_behavior["spec"]["minReplicas"] = json!(0);
    with_behavior["spec"]["metrics"] = json!([]);
    with_behavior["spec"]["behavior"] = json!({"scaleDown": {"stabilizationWindowSeconds": 60}});
    let got = server_object(36, &with_behavior);
    assert_eq!(got["spec"]["minReplicas"], json!(0), "a given zero stays");
    assert_eq!(got["spec"]["metrics"][0]["resource"]["name"], json!("cpu"));
    assert_eq!(
        got["spec"]["behavior"],
        json!({
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
            "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        })
    );
}

#[test]
fn persistent_volumes_endpoints_and_slices() {
    // SetDefaults_PersistentVolume, SetDefaults_Endpoints (core/v1) and
    // SetDefaults_EndpointPort (discovery/v1).
    check(
        36,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
            "spec": {"hostPath": {"path": "/data"}, "capacity": {"storage": "1Gi"}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv", "creationTimestamp": null},
            "spec": {"hostPath": {"path": "/data", "type": ""}, "capacity": {"storage": "1Gi"},
                "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"}}),
    );
    check(
        36,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}),
        json!({"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "e", "creationTimestamp": null},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                "ports": [{"port": 80, "protocol": "TCP"}]}]}),
    );
    check(
        36,
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "s"}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}, {}], "ports": [{"port": 80}]}),
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "s", "creationTimestamp": null}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {}},
                {"addresses": null, "conditions": {}}],
            "ports": [{"port": 80, "name": "", "protocol": "TCP"}]}),
    );
}

#[test]
fn disruption_budgets_and_priority_classes() {
    // policy/v1 has no defaulting function: only Go's encoding of the status's counts.
    check(
        36,
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "p"}, "spec": {"minAvailable": 1}}),
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "p", "creationTimestamp": null}, "spec": {"minAvailable": 1},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                "expectedPods": 0}}),
    );
    // SetDefaults_PriorityClass (pkg/apis/scheduling/v1/defaults.go).
    check(
        36,
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high"}, "value": 1000}),
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high", "creationTimestamp": null}, "value": 1000,
            "preemptionPolicy": "PreemptLowerPriority"}),
    );
}
