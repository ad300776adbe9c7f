//! The object the API server builds from a manifest of a built-in kind, as admission policies
//! and validation see it: the manifest decoded into the kind's Go type, the release's defaults
//! applied, and the result encoded again by Go's JSON encoder.
//!
//! That encoding differs from the manifest as written in ways policies notice:
//!
//! * a field declared without `omitempty` is always written, as `null` when it is an empty
//!   slice, map or pointer (`Role.rules`);
//! * a field whose type is a struct (not a pointer) is always written, as `{}` at least
//!   (`status`, a container's `resources`, a template's `metadata`), and a zero
//!   `metav1.Time` is written as `null` (`creationTimestamp: null`);
//! * a field with `omitempty` holding a zero value is dropped (`hostPort: 0`), and so is a
//!   `null` written for a pointer, slice or map;
//! * the defaulting functions fill what the manifest leaves out (`imagePullPolicy` from the
//!   image's tag, `restartPolicy: Always`, `protocol: TCP`, `replicas: 1`, ...).
//!
//! The facts are data (`Rule` tables below), one table per Go type, each line naming its
//! source: the type's field tags in `k8s.io/api` (`core/v1/types.go`, `apps/v1/types.go`,
//! `batch/v1/types.go`, `networking/v1/types.go`, `rbac/v1/types.go`, `storage/v1/types.go`,
//! `autoscaling/v2/types.go`, `policy/v1/types.go`, `discovery/v1/types.go`,
//! `scheduling/v1/types.go`) and the defaulting functions of `k8s.io/kubernetes`
//! (`pkg/apis/<group>/<version>/defaults.go`),
//! read at the tags of the releases (v1.30.0 to v1.37); a line that entered in a later release
//! carries its first minor. Kinds without a table are passed through as written
//! ([`covered`] says which are covered).
//!
//! What the API server does after mutating admission (the registry strategy's
//! `PrepareForCreate`: `uid`, `creationTimestamp`, `generation`, a cleared `status`, a Job's
//! generated selector) is not done here: the object is the one mutating policies receive.

use serde_json::{Map, Value as Json};

/// What the Go type makes of one field.
#[derive(Debug)]
enum Fact {
    /// The defaulting function sets this value (JSON text) when the field is absent, `null`
    /// or empty.
    Default(&'static str),
    /// The defaulting function sets this list (JSON text) when the field is absent, `null`
    /// or an empty list (Go's `len(x) == 0`).
    DefaultList(&'static str),
    /// Declared without `omitempty` (a slice, map or pointer): written as `null` when absent.
    Null,
    /// A struct-valued field: written as `{}` when absent or `null`.
    Object,
    /// Declared with `omitempty` and a scalar type: dropped when zero (`0`, `""`, `false`).
    OmitZero,
    /// The field's value is of this Go type: its facts apply inside.
    Type(&'static [Rule]),
    /// Each element of the list is of this Go type.
    Each(&'static [Rule]),
    /// A strategy's `rollingUpdate`: created empty (then given the inner facts) when the
    /// strategy's `type` is `RollingUpdate` (`false`), or when it is unset, before the type
    /// is defaulted (`true`, StatefulSets).
    RollingUpdate(bool, &'static [Rule]),
    /// `imagePullPolicy`: `Always` for the tag `latest` (or no tag and no digest), else
    /// `IfNotPresent` (`SetDefaults_Container`, pkg/apis/core/v1/defaults.go).
    PullPolicy,
    /// A Service port's `targetPort`: its `port` when unset or zero
    /// (`SetDefaults_Service`).
    TargetPortFromPort,
    /// NetworkPolicy `policyTypes`: `[Ingress]`, plus `Egress` when `egress` rules exist
    /// (`SetDefaults_NetworkPolicy`, pkg/apis/networking/v1/defaults.go).
    PolicyTypes,
    /// An RBAC subject's `apiGroup`: `rbac.authorization.k8s.io` for users and groups, `""`
    /// for service accounts (`SetDefaults_Subject`, pkg/apis/rbac/v1/defaults.go).
    SubjectApiGroup,
}

/// One fact about one field, from a release on.
#[derive(Debug)]
struct Rule {
    field: &'static str,
    /// The first minor release with the fact (`0`: every shipped release).
    since: u32,
    fact: Fact,
}

const fn r(field: &'static str, fact: Fact) -> Rule {
    Rule {
        field,
        since: 0,
        fact,
    }
}

const fn since(minor: u32, field: &'static str, fact: Fact) -> Rule {
    Rule {
        field,
        since: minor,
        fact,
    }
}

use Fact::*;

// ---- meta/v1 (k8s.io/apimachinery pkg/apis/meta/v1/types.go) ----

/// ObjectMeta: `CreationTimestamp Time` is a struct whose zero value Go writes as `null`.
const OBJECT_META: &[Rule] = &[r("creationTimestamp", Null)];

/// LabelSelector: nothing always present.
const LABEL_SELECTOR: &[Rule] = &[];

// ---- core/v1 (k8s.io/api core/v1/types.go; pkg/apis/core/v1/defaults.go) ----

const CONTAINER_PORT: &[Rule] = &[
    r("protocol", Default("\"TCP\"")), // SetDefaults_ContainerPort
    r("hostPort", OmitZero),
    r("hostIP", OmitZero),
    r("name", OmitZero),
];

const OBJECT_FIELD_SELECTOR: &[Rule] = &[r("apiVersion", Default("\"v1\""))]; // SetDefaults_ObjectFieldSelector

const ENV_VAR_SOURCE: &[Rule] = &[r("fieldRef", Type(OBJECT_FIELD_SELECTOR))];

const ENV_VAR: &[Rule] = &[r("valueFrom", Type(ENV_VAR_SOURCE))];

const HTTP_GET: &[Rule] = &[
    r("path", Default("\"/\"")),      // SetDefaults_HTTPGetAction
    r("scheme", Default("\"HTTP\"")), // SetDefaults_HTTPGetAction
];

/// Probe (SetDefaults_Probe).
const PROBE: &[Rule] = &[
    r("timeoutSeconds", Default("1")),
    r("periodSeconds", Default("10")),
    r("successThreshold", Default("1")),
    r("failureThreshold", Default("3")),
    r("httpGet", Type(HTTP_GET)),
];

const LIFECYCLE_HANDLER: &[Rule] = &[r("httpGet", Type(HTTP_GET))];

const LIFECYCLE: &[Rule] = &[
    r("postStart", Type(LIFECYCLE_HANDLER)),
    r("preStop", Type(LIFECYCLE_HANDLER)),
];

/// Container (SetDefaults_Container); `Resources ResourceRequirements` is a struct.
const CONTAINER: &[Rule] = &[
    r("imagePullPolicy", PullPolicy),
    r(
        "terminationMessagePath",
        Default("\"/dev/termination-log\""),
    ),
    r("terminationMessagePolicy", Default("\"File\"")),
    r("resources", Object),
    r("ports", Each(CONTAINER_PORT)),
    r("env", Each(ENV_VAR)),
    r("livenessProbe", Type(PROBE)),
    r("readinessProbe", Type(PROBE)),
    r("startupProbe", Type(PROBE)),
    r("lifecycle", Type(LIFECYCLE)),
];

/// Volume sources with a `defaultMode` (SetDefaults_SecretVolumeSource,
/// SetDefaults_ConfigMapVolumeSource, SetDefaults_DownwardAPIVolumeSource,
/// SetDefaults_ProjectedVolumeSource: 0644).
const DEFAULT_MODE: &[Rule] = &[r("defaultMode", Default("420"))];

/// SetDefaults_ServiceAccountTokenProjection: an hour.
const TOKEN_PROJECTION: &[Rule] = &[r("expirationSeconds", Default("3600"))];

const PROJECTION: &[Rule] = &[r("serviceAccountToken", Type(TOKEN_PROJECTION))];

const PROJECTED: &[Rule] = &[
    r("defaultMode", Default("420")),
    r("sources", Each(PROJECTION)),
];

const HOST_PATH: &[Rule] = &[r("type", Default("\"\""))]; // SetDefaults_HostPathVolumeSource

/// Volume (SetDefaults_Volume: a volume with no source is an `emptyDir`).
const VOLUME: &[Rule] = &[
    r("secret", Type(DEFAULT_MODE)),
    r("configMap", Type(DEFAULT_MODE)),
    r("downwardAPI", Type(DEFAULT_MODE)),
    r("projected", Type(PROJECTED)),
    r("hostPath", Type(HOST_PATH)),
];

/// PodSpec (SetDefaults_PodSpec); `Containers []Container` has no `omitempty`.
const POD_SPEC: &[Rule] = &[
    r("containers", Null),
    r("containers", Each(CONTAINER)),
    r("initContainers", Each(CONTAINER)),
    r("ephemeralContainers", Each(CONTAINER)),
    r("volumes", Each(VOLUME)),
    r("restartPolicy", Default("\"Always\"")),
    r("terminationGracePeriodSeconds", Default("30")),
    r("dnsPolicy", Default("\"ClusterFirst\"")),
    r("securityContext", Default("{}")),
    r("schedulerName", Default("\"default-scheduler\"")),
    r("hostNetwork", OmitZero),
    r("hostPID", OmitZero),
    r("hostIPC", OmitZero),
    r("serviceAccountName", OmitZero),
    r("serviceAccount", OmitZero),
    r("nodeName", OmitZero),
];

/// A Pod's own spec: SetDefaults_Pod adds `enableServiceLinks` (templates do not get it).
const POD_OWN_SPEC: &[Rule] = &[r("enableServiceLinks", Default("true"))];

const POD_TEMPLATE_SPEC: &[Rule] = &[
    r("metadata", Object),
    r("metadata", Type(OBJECT_META)),
    r("spec", Object),
    r("spec", Type(POD_SPEC)),
];

const POD: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(POD_SPEC)),
    r("spec", Type(POD_OWN_SPEC)),
    r("status", Object),
];

const POD_TEMPLATE: &[Rule] = &[
    r("template", Object),
    r("template", Type(POD_TEMPLATE_SPEC)),
];

const SERVICE_PORT: &[Rule] = &[
    r("protocol", Default("\"TCP\"")),
    r("targetPort", TargetPortFromPort),
    r("nodePort", OmitZero),
];

/// ServiceSpec (SetDefaults_Service).
const SERVICE_SPEC: &[Rule] = &[
    r("type", Default("\"ClusterIP\"")),
    r("sessionAffinity", Default("\"None\"")),
    r("ports", Each(SERVICE_PORT)),
];

const LB_STATUS: &[Rule] = &[r("loadBalancer", Object)];

const SERVICE: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(SERVICE_SPEC)),
    r("status", Object),
    r("status", Type(LB_STATUS)),
];

/// PersistentVolumeClaimSpec (SetDefaults_PersistentVolumeClaimSpec).
const PVC_SPEC: &[Rule] = &[
    r("volumeMode", Default("\"Filesystem\"")),
    r("resources", Object),
];

/// PersistentVolumeClaimStatus (SetDefaults_PersistentVolumeClaim sets the phase).
const PVC_STATUS: &[Rule] = &[r("phase", Default("\"Pending\""))];

const PVC: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(PVC_SPEC)),
    r("status", Object),
    r("status", Type(PVC_STATUS)),
];

/// A PVC in a StatefulSet's `volumeClaimTemplates` (an embedded object with metadata).
const PVC_TEMPLATE: &[Rule] = &[
    r("metadata", Object),
    r("metadata", Type(OBJECT_META)),
    r("spec", Object),
    r("spec", Type(PVC_SPEC)),
    r("status", Object),
    r("status", Type(PVC_STATUS)),
];

const NAMESPACE_STATUS: &[Rule] = &[r("phase", Default("\"Active\""))]; // SetDefaults_NamespaceStatus

const NAMESPACE: &[Rule] = &[
    r("spec", Object),
    r("status", Object),
    r("status", Type(NAMESPACE_STATUS)),
];

const SECRET: &[Rule] = &[r("type", Default("\"Opaque\""))]; // SetDefaults_Secret

/// PersistentVolumeSpec (SetDefaults_PersistentVolume).
const PV_SPEC: &[Rule] = &[
    r("persistentVolumeReclaimPolicy", Default("\"Retain\"")),
    r("volumeMode", Default("\"Filesystem\"")),
    r("hostPath", Type(HOST_PATH)),
];

const PV_STATUS: &[Rule] = &[r("phase", Default("\"Pending\""))]; // SetDefaults_PersistentVolume

const PERSISTENT_VOLUME: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(PV_SPEC)),
    r("status", Object),
    r("status", Type(PV_STATUS)),
];

const ENDPOINT_PORT: &[Rule] = &[r("protocol", Default("\"TCP\""))]; // SetDefaults_Endpoints

const ENDPOINT_SUBSET: &[Rule] = &[r("ports", Each(ENDPOINT_PORT))];

const ENDPOINTS: &[Rule] = &[r("subsets", Each(ENDPOINT_SUBSET))];

/// LimitRangeItem: `Type LimitType` has no `omitempty`; a `Container` item's `default` and
/// `defaultRequest` are filled by [`limit_range_defaults`].
const LIMIT_RANGE_ITEM: &[Rule] = &[r("type", Default("\"\""))];

/// LimitRangeSpec: `Limits []LimitRangeItem` has no `omitempty`.
const LIMIT_RANGE_SPEC: &[Rule] = &[r("limits", Null), r("limits", Each(LIMIT_RANGE_ITEM))];

const LIMIT_RANGE: &[Rule] = &[r("spec", Object), r("spec", Type(LIMIT_RANGE_SPEC))];

// ---- apps/v1 (k8s.io/api apps/v1/types.go; pkg/apis/apps/v1/defaults.go) ----

const ROLLING_UPDATE_DEPLOYMENT: &[Rule] = &[
    r("maxUnavailable", Default("\"25%\"")),
    r("maxSurge", Default("\"25%\"")),
];

/// DeploymentStrategy: a rolling update gets its parameters (SetDefaults_Deployment).
const DEPLOYMENT_STRATEGY: &[Rule] = &[
    r("type", Default("\"RollingUpdate\"")),
    r(
        "rollingUpdate",
        RollingUpdate(false, ROLLING_UPDATE_DEPLOYMENT),
    ),
];

const DEPLOYMENT_SPEC: &[Rule] = &[
    r("replicas", Default("1")),
    r("selector", Null),
    r("selector", Type(LABEL_SELECTOR)),
    r("template", Object),
    r("template", Type(POD_TEMPLATE_SPEC)),
    r("strategy", Object),
    r("strategy", Type(DEPLOYMENT_STRATEGY)),
    r("revisionHistoryLimit", Default("10")),
    r("progressDeadlineSeconds", Default("600")),
];

const DEPLOYMENT: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(DEPLOYMENT_SPEC)),
    r("status", Object),
];

const REPLICA_SET_SPEC: &[Rule] = &[
    r("replicas", Default("1")),
    r("selector", Null),
    r("template", Object),
    r("template", Type(POD_TEMPLATE_SPEC)),
];

/// ReplicationControllerSpec: `Template *PodTemplateSpec` is a pointer.
const CONTROLLER_SPEC: &[Rule] = &[
    r("replicas", Default("1")),
    r("template", Type(POD_TEMPLATE_SPEC)),
];

const CONTROLLER: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(CONTROLLER_SPEC)),
    r("status", Object),
];

const REPLICA_SET: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(REPLICA_SET_SPEC)),
    r("status", Object),
];

const ROLLING_UPDATE_DAEMON_SET: &[Rule] = &[
    r("maxUnavailable", Default("1")),
    r("maxSurge", Default("0")),
];

const DAEMON_SET_STRATEGY: &[Rule] = &[
    r("type", Default("\"RollingUpdate\"")),
    r(
        "rollingUpdate",
        RollingUpdate(false, ROLLING_UPDATE_DAEMON_SET),
    ),
];

const DAEMON_SET_SPEC: &[Rule] = &[
    r("selector", Null),
    r("template", Object),
    r("template", Type(POD_TEMPLATE_SPEC)),
    r("updateStrategy", Object),
    r("updateStrategy", Type(DAEMON_SET_STRATEGY)),
    r("revisionHistoryLimit", Default("10")),
];

const DAEMON_SET: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(DAEMON_SET_SPEC)),
    r("status", Object),
];

const STATEFUL_SET_ROLLING: &[Rule] = &[r("partition", Default("0"))];

/// StatefulSetUpdateStrategy: `rollingUpdate` is made only when the type was unset; a
/// partition is given to any rolling update (SetDefaults_StatefulSet).
const STATEFUL_SET_STRATEGY: &[Rule] = &[
    r("rollingUpdate", RollingUpdate(true, &[])),
    r("type", Default("\"RollingUpdate\"")),
    r("rollingUpdate", Type(STATEFUL_SET_ROLLING)),
];

/// StatefulSetPersistentVolumeClaimRetentionPolicy (StatefulSetAutoDeletePVC, on by default
/// from 1.27).
const PVC_RETENTION: &[Rule] = &[
    r("whenDeleted", Default("\"Retain\"")),
    r("whenScaled", Default("\"Retain\"")),
];

const STATEFUL_SET_SPEC: &[Rule] = &[
    r("replicas", Default("1")),
    r("selector", Null),
    r("template", Object),
    r("template", Type(POD_TEMPLATE_SPEC)),
    r("volumeClaimTemplates", Each(PVC_TEMPLATE)),
    r("podManagementPolicy", Default("\"OrderedReady\"")),
    r("updateStrategy", Object),
    r("updateStrategy", Type(STATEFUL_SET_STRATEGY)),
    r("revisionHistoryLimit", Default("10")),
    since(27, "persistentVolumeClaimRetentionPolicy", Default("{}")),
    since(
        27,
        "persistentVolumeClaimRetentionPolicy",
        Type(PVC_RETENTION),
    ),
];

const STATEFUL_SET: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(STATEFUL_SET_SPEC)),
    r("status", Object),
];

// ---- batch/v1 (k8s.io/api batch/v1/types.go; pkg/apis/batch/v1/defaults.go) ----

/// JobSpec (SetDefaults_Job; the defaults that read other fields are [`job_defaults`]).
const JOB_SPEC: &[Rule] = &[
    r("completionMode", Default("\"NonIndexed\"")),
    r("suspend", Default("false")),
    r("template", Object),
    r("template", Type(POD_TEMPLATE_SPEC)),
];

const JOB: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(JOB_SPEC)),
    r("status", Object),
];

/// A CronJob's job template: only the pod template is defaulted (SetDefaults_Job takes a
/// Job, not a JobTemplateSpec).
const JOB_TEMPLATE_SPEC: &[Rule] = &[
    r("template", Object),
    r("template", Type(POD_TEMPLATE_SPEC)),
];

const JOB_TEMPLATE: &[Rule] = &[
    r("metadata", Object),
    r("metadata", Type(OBJECT_META)),
    r("spec", Object),
    r("spec", Type(JOB_TEMPLATE_SPEC)),
];

/// CronJobSpec (SetDefaults_CronJob).
const CRON_JOB_SPEC: &[Rule] = &[
    r("concurrencyPolicy", Default("\"Allow\"")),
    r("suspend", Default("false")),
    r("successfulJobsHistoryLimit", Default("3")),
    r("failedJobsHistoryLimit", Default("1")),
    r("jobTemplate", Object),
    r("jobTemplate", Type(JOB_TEMPLATE)),
];

const CRON_JOB: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(CRON_JOB_SPEC)),
    r("status", Object),
];

// ---- networking/v1 ----

const NETWORK_POLICY_PORT: &[Rule] = &[r("protocol", Default("\"TCP\""))]; // SetDefaults_NetworkPolicyPort

const NETWORK_POLICY_RULE: &[Rule] = &[r("ports", Each(NETWORK_POLICY_PORT))];

/// NetworkPolicySpec: `PodSelector metav1.LabelSelector` is a struct.
const NETWORK_POLICY_SPEC: &[Rule] = &[
    r("podSelector", Object),
    r("ingress", Each(NETWORK_POLICY_RULE)),
    r("egress", Each(NETWORK_POLICY_RULE)),
    r("policyTypes", PolicyTypes),
];

const NETWORK_POLICY: &[Rule] = &[r("spec", Object), r("spec", Type(NETWORK_POLICY_SPEC))];

const INGRESS: &[Rule] = &[
    r("spec", Object),
    r("status", Object),
    r("status", Type(LB_STATUS)),
];

// ---- rbac/v1 (k8s.io/api rbac/v1/types.go; pkg/apis/rbac/v1/defaults.go) ----

/// PolicyRule: `Verbs []string` has no `omitempty`.
const POLICY_RULE: &[Rule] = &[r("verbs", Null)];

/// Role and ClusterRole: `Rules []PolicyRule` has no `omitempty`.
const ROLE: &[Rule] = &[r("rules", Null), r("rules", Each(POLICY_RULE))];

const ROLE_REF: &[Rule] = &[r("apiGroup", Default("\"rbac.authorization.k8s.io\""))]; // SetDefaults_RoleBinding

const SUBJECT: &[Rule] = &[r("apiGroup", SubjectApiGroup)];

/// RoleBinding and ClusterRoleBinding: `RoleRef RoleRef` is a struct.
const ROLE_BINDING: &[Rule] = &[
    r("roleRef", Object),
    r("roleRef", Type(ROLE_REF)),
    r("subjects", Each(SUBJECT)),
];

// ---- storage/v1 (pkg/apis/storage/v1/defaults.go) ----

/// StorageClass: `Provisioner string` has no `omitempty` (SetDefaults_StorageClass).
const STORAGE_CLASS: &[Rule] = &[
    r("provisioner", Default("\"\"")),
    r("reclaimPolicy", Default("\"Delete\"")),
    r("volumeBindingMode", Default("\"Immediate\"")),
];

// ---- autoscaling/v2 (k8s.io/api autoscaling/v2/types.go; pkg/apis/autoscaling/v2/defaults.go) ----

/// An HPA without metrics scales on CPU at 80% (`autoscaling.DefaultCPUUtilization`).
const HPA_CPU_METRIC: &str = r#"[{"type": "Resource", "resource": {"name": "cpu",
    "target": {"type": "Utilization", "averageUtilization": 80}}}]"#;

/// `defaultHPAScaleUpRules`: no stabilization, the larger of 4 pods or 100% per 15 s.
const HPA_SCALE_UP: &[Rule] = &[
    r("stabilizationWindowSeconds", Default("0")),
    r("selectPolicy", Default("\"Max\"")),
    r(
        "policies",
        Default(
            r#"[{"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]"#,
        ),
    ),
];

/// `defaultHPAScaleDownRules`: 100% per 15 s; the stabilization window stays unset (the
/// controller's flag decides it).
const HPA_SCALE_DOWN: &[Rule] = &[
    r("selectPolicy", Default("\"Max\"")),
    r(
        "policies",
        Default(r#"[{"type": "Percent", "value": 100, "periodSeconds": 15}]"#),
    ),
];

/// SetDefaults_HorizontalPodAutoscalerBehavior: a behavior that is given gets both rules,
/// each filled from the defaults.
const HPA_BEHAVIOR: &[Rule] = &[
    r("scaleUp", Object),
    r("scaleUp", Type(HPA_SCALE_UP)),
    r("scaleDown", Object),
    r("scaleDown", Type(HPA_SCALE_DOWN)),
];

/// HorizontalPodAutoscalerSpec (SetDefaults_HorizontalPodAutoscaler); `ScaleTargetRef` is a
/// struct and `MaxReplicas int32` has no `omitempty`.
const HPA_SPEC: &[Rule] = &[
    r("scaleTargetRef", Object),
    r("maxReplicas", Default("0")),
    r("minReplicas", Default("1")),
    r("metrics", DefaultList(HPA_CPU_METRIC)),
    r("behavior", Type(HPA_BEHAVIOR)),
];

/// HorizontalPodAutoscalerStatus: `DesiredReplicas` and `CurrentMetrics` have no
/// `omitempty`.
const HPA_STATUS: &[Rule] = &[
    r("desiredReplicas", Default("0")),
    r("currentMetrics", Null),
];

const HPA: &[Rule] = &[
    r("spec", Object),
    r("spec", Type(HPA_SPEC)),
    r("status", Object),
    r("status", Type(HPA_STATUS)),
];

// ---- policy/v1 (k8s.io/api policy/v1/types.go; no defaulting functions) ----

/// PodDisruptionBudgetStatus: four counts without `omitempty`.
const PDB_STATUS: &[Rule] = &[
    r("disruptionsAllowed", Default("0")),
    r("currentHealthy", Default("0")),
    r("desiredHealthy", Default("0")),
    r("expectedPods", Default("0")),
];

const PDB: &[Rule] = &[
    r("spec", Object),
    r("status", Object),
    r("status", Type(PDB_STATUS)),
];

// ---- discovery/v1 (k8s.io/api discovery/v1/types.go; pkg/apis/discovery/v1/defaults.go) ----

const SLICE_PORT: &[Rule] = &[
    r("name", Default("\"\"")),        // SetDefaults_EndpointPort
    r("protocol", Default("\"TCP\"")), // SetDefaults_EndpointPort
];

/// Endpoint: `Addresses []string` has no `omitempty`; `Conditions` is a struct.
const SLICE_ENDPOINT: &[Rule] = &[r("addresses", Null), r("conditions", Object)];

/// EndpointSlice: `Endpoints` and `Ports` have no `omitempty`.
const ENDPOINT_SLICE: &[Rule] = &[
    r("endpoints", Null),
    r("endpoints", Each(SLICE_ENDPOINT)),
    r("ports", Null),
    r("ports", Each(SLICE_PORT)),
];

// ---- scheduling/v1 (pkg/apis/scheduling/v1/defaults.go) ----

/// PriorityClass: `Value int32` has no `omitempty` (SetDefaults_PriorityClass).
const PRIORITY_CLASS: &[Rule] = &[
    r("value", Default("0")),
    r("preemptionPolicy", Default("\"PreemptLowerPriority\"")),
];

/// The covered kinds: (apiVersion, kind, the table of the kind's own fields).
const KINDS: &[(&str, &str, &[Rule])] = &[
    ("v1", "Pod", POD),
    ("v1", "PodTemplate", POD_TEMPLATE),
    ("v1", "ReplicationController", CONTROLLER),
    ("v1", "Service", SERVICE),
    ("v1", "PersistentVolumeClaim", PVC),
    ("v1", "Namespace", NAMESPACE),
    ("v1", "Secret", SECRET),
    ("v1", "PersistentVolume", PERSISTENT_VOLUME),
    ("v1", "Endpoints", ENDPOINTS),
    ("v1", "LimitRange", LIMIT_RANGE),
    ("apps/v1", "Deployment", DEPLOYMENT),
    ("apps/v1", "ReplicaSet", REPLICA_SET),
    ("apps/v1", "DaemonSet", DAEMON_SET),
    ("apps/v1", "StatefulSet", STATEFUL_SET),
    ("batch/v1", "Job", JOB),
    ("batch/v1", "CronJob", CRON_JOB),
    ("networking.k8s.io/v1", "NetworkPolicy", NETWORK_POLICY),
    ("networking.k8s.io/v1", "Ingress", INGRESS),
    ("rbac.authorization.k8s.io/v1", "Role", ROLE),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", ROLE),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", ROLE_BINDING),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        ROLE_BINDING,
    ),
    ("storage.k8s.io/v1", "StorageClass", STORAGE_CLASS),
    ("autoscaling/v2", "HorizontalPodAutoscaler", HPA),
    ("policy/v1", "PodDisruptionBudget", PDB),
    ("discovery.k8s.io/v1", "EndpointSlice", ENDPOINT_SLICE),
    ("scheduling.k8s.io/v1", "PriorityClass", PRIORITY_CLASS),
];

/// The kinds whose defaults and encoding are applied (`apiVersion`, `kind`).
pub fn covered() -> impl Iterator<Item = (&'static str, &'static str)> {
    KINDS.iter().map(|(v, k, _)| (*v, *k))
}

/// The object the API server of `1.<minor>` builds from `object` (a manifest of a built-in
/// kind): defaults applied and encoded as Go encodes the kind's type. A kind without a
/// table, or a value that is not an object, is returned as written.
///
/// Wrong types (a string `replicas`) are left in place for validation to report.
pub fn server_object(minor: u32, object: &Json) -> Json {
    let mut out = object.clone();
    apply_server_defaults(minor, &mut out);
    out
}

/// [`server_object`] in place: `object` becomes the object the API server of `1.<minor>`
/// builds from it. A kind without a table, or a value that is not an object, is left as it
/// is.
pub fn apply_server_defaults(minor: u32, object: &mut Json) {
    let (api_version, kind) = crate::type_meta(object);
    let Some(&(api_version, kind, rules)) = KINDS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind)
    else {
        return;
    };
    let Some(map) = object.as_object_mut() else {
        return;
    };
    if let Some(Json::Object(meta)) = map.get_mut("metadata") {
        apply(meta, OBJECT_META, minor, 0);
    } else {
        let mut meta = Map::new();
        apply(&mut meta, OBJECT_META, minor, 0);
        map.insert("metadata".into(), Json::Object(meta));
    }
    apply(map, rules, minor, 0);
    match (api_version, kind) {
        ("batch/v1", "Job") => {
            if let Some(Json::Object(spec)) = map.get_mut("spec") {
                job_defaults(spec, minor);
            }
        }
        ("v1", "Pod") => {
            if let Some(Json::Object(spec)) = map.get_mut("spec") {
                requests_from_limits(spec);
                host_network_ports(spec);
            }
        }
        ("v1", "Namespace") => namespace_name_label(map),
        ("v1", "Service") => {
            if let Some(Json::Object(spec)) = map.get_mut("spec") {
                service_defaults(spec);
            }
        }
        ("v1", "ReplicationController") => controller_selector(map),
        ("v1", "LimitRange") => limit_range_defaults(map),
        _ => {}
    }
}

/// How deep tables nest at most (the tables are ours; this only guards a mistake in them).
const MAX_DEPTH: usize = 16;

fn is_empty(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) => true,
        Some(Json::String(s)) => s.is_empty(),
        _ => false,
    }
}

fn is_zero(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::String(s) => s.is_empty(),
        _ => false,
    }
}

fn apply(map: &mut Map<String, Json>, rules: &[Rule], minor: u32, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for rule in rules.iter().filter(|r| r.since <= minor) {
        let field = rule.field;
        match &rule.fact {
            Default(text) => {
                if is_empty(map.get(field))
                    && let Ok(v) = serde_json::from_str::<Json>(text)
                {
                    map.insert(field.into(), v);
                }
            }
            DefaultList(text) => {
                let empty = match map.get(field) {
                    None | Some(Json::Null) => true,
                    Some(Json::Array(items)) => items.is_empty(),
                    Some(_) => false,
                };
                if empty && let Ok(v) = serde_json::from_str::<Json>(text) {
                    map.insert(field.into(), v);
                }
            }
            Null => {
                map.entry(field).or_insert(Json::Null);
            }
            Object => {
                if matches!(map.get(field), None | Some(Json::Null)) {
                    map.insert(field.into(), Json::Object(Map::new()));
                }
            }
            OmitZero => {
                if map.get(field).is_some_and(is_zero) {
                    map.remove(field);
                }
            }
            Type(inner) => {
                if let Some(Json::Object(m)) = map.get_mut(field) {
                    apply(m, inner, minor, depth + 1);
                }
            }
            Each(inner) => {
                if let Some(Json::Array(items)) = map.get_mut(field) {
                    for item in items {
                        if let Json::Object(m) = item {
                            apply(m, inner, minor, depth + 1);
                        }
                    }
                }
            }
            RollingUpdate(when_type_unset, inner) => {
                let kind = map.get("type").and_then(Json::as_str).unwrap_or("");
                let applies = if *when_type_unset {
                    kind.is_empty()
                } else {
                    kind == "RollingUpdate"
                };
                if applies {
                    if unset(map, field) {
                        map.insert(field.into(), Json::Object(Map::new()));
                    }
                    if let Some(Json::Object(m)) = map.get_mut(field) {
                        apply(m, inner, minor, depth + 1);
                    }
                }
            }
            PullPolicy => {
                if is_empty(map.get(field)) {
                    let image = map.get("image").and_then(Json::as_str).unwrap_or("");
                    map.insert(field.into(), Json::from(pull_policy(image)));
                }
            }
            TargetPortFromPort => {
                if map.get(field).is_none_or(is_zero)
                    && let Some(port) = map.get("port").cloned()
                {
                    map.insert(field.into(), port);
                }
            }
            PolicyTypes => {
                if map
                    .get(field)
                    .is_none_or(|v| v.is_null() || v.as_array().is_some_and(Vec::is_empty))
                {
                    let mut types = vec![Json::from("Ingress")];
                    if map
                        .get("egress")
                        .and_then(Json::as_array)
                        .is_some_and(|e| !e.is_empty())
                    {
                        types.push(Json::from("Egress"));
                    }
                    map.insert(field.into(), Json::Array(types));
                }
            }
            SubjectApiGroup => {
                if !map.contains_key(field) {
                    let group = match map.get("kind").and_then(Json::as_str) {
                        Some("User" | "Group") => "rbac.authorization.k8s.io",
                        _ => "",
                    };
                    map.insert(field.into(), Json::from(group));
                }
            }
        }
    }
}

fn unset(map: &Map<String, Json>, key: &str) -> bool {
    matches!(map.get(key), None | Some(Json::Null))
}

/// The Job defaults that read other fields (SetDefaults_Job): `parallelism` and
/// `completions` both 1 when both are unset, else `parallelism` 1; `backoffLimit` 6, or the
/// largest int32 with `backoffLimitPerIndex` (from 1.29, where that field is on by
/// default); `podReplacementPolicy` (JobPodReplacementPolicy, on by default from 1.29)
/// `Failed` with a `podFailurePolicy`, else `TerminatingOrFailed`.
fn job_defaults(spec: &mut Map<String, Json>, minor: u32) {
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), Json::from(1));
    }
    if unset(spec, "parallelism") {
        spec.insert("parallelism".into(), Json::from(1));
    }
    if unset(spec, "backoffLimit") {
        let per_index = minor >= 29 && !unset(spec, "backoffLimitPerIndex");
        let limit = if per_index { i64::from(i32::MAX) } else { 6 };
        spec.insert("backoffLimit".into(), Json::from(limit));
    }
    if minor >= 29 && is_empty(spec.get("podReplacementPolicy")) {
        let policy = if unset(spec, "podFailurePolicy") {
            "TerminatingOrFailed"
        } else {
            "Failed"
        };
        spec.insert("podReplacementPolicy".into(), Json::from(policy));
    }
}

/// A Pod's containers get requests equal to their limits where the limits name a resource
/// the requests do not (SetDefaults_Pod).
fn requests_from_limits(spec: &mut Map<String, Json>) {
    for list in ["containers", "initContainers"] {
        let Some(Json::Array(containers)) = spec.get_mut(list) else {
            continue;
        };
        for c in containers {
            let Some(Json::Object(resources)) = c.get_mut("resources") else {
                continue;
            };
            let Some(Json::Object(limits)) = resources.get("limits").cloned() else {
                continue;
            };
            if limits.is_empty() {
                continue;
            }
            if unset(resources, "requests") {
                resources.insert("requests".into(), Json::Object(Map::new()));
            }
            if let Some(Json::Object(requests)) = resources.get_mut("requests") {
                for (k, v) in limits {
                    requests.entry(k).or_insert(v);
                }
            }
        }
    }
}

/// The Service defaults that read other fields (SetDefaults_Service): `ClientIP` affinity's
/// timeout (10800 s), `externalTrafficPolicy: Cluster` for services reachable from outside
/// (NodePort, LoadBalancer, or with `externalIPs`), `internalTrafficPolicy: Cluster` for
/// ClusterIP, NodePort and LoadBalancer, `allocateLoadBalancerNodePorts: true` for
/// LoadBalancer.
fn service_defaults(spec: &mut Map<String, Json>) {
    let text =
        |s: &Map<String, Json>, k: &str| s.get(k).and_then(Json::as_str).unwrap_or("").to_string();
    match text(spec, "sessionAffinity").as_str() {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"));
            if timeout.is_none_or(Json::is_null) {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    serde_json::json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    let kind = text(spec, "type");
    let external_ips = spec
        .get("externalIPs")
        .and_then(Json::as_array)
        .is_some_and(|a| !a.is_empty());
    let outside = matches!(kind.as_str(), "NodePort" | "LoadBalancer")
        || (kind == "ClusterIP" && external_ips);
    if outside && is_empty(spec.get("externalTrafficPolicy")) {
        spec.insert("externalTrafficPolicy".into(), Json::from("Cluster"));
    }
    if matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer")
        && unset(spec, "internalTrafficPolicy")
    {
        spec.insert("internalTrafficPolicy".into(), Json::from("Cluster"));
    }
    if kind == "LoadBalancer" && unset(spec, "allocateLoadBalancerNodePorts") {
        spec.insert("allocateLoadBalancerNodePorts".into(), Json::from(true));
    }
}

/// A ReplicationController takes its selector, and its labels when it has none, from its
/// template's labels (SetDefaults_ReplicationController).
fn controller_selector(map: &mut Map<String, Json>) {
    let labels = map
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.is_object())
        .cloned();
    let Some(labels) = labels else { return };
    let empty = |v: Option<&Json>| v.is_none_or(|v| v.as_object().is_none_or(Map::is_empty));
    if let Some(Json::Object(spec)) = map.get_mut("spec")
        && empty(spec.get("selector"))
    {
        spec.insert("selector".into(), labels.clone());
    }
    if let Some(Json::Object(meta)) = map.get_mut("metadata")
        && empty(meta.get("labels"))
    {
        meta.insert("labels".into(), labels);
    }
}

/// With `hostNetwork`, a Pod's container ports get their `containerPort` as `hostPort`
/// (SetDefaults_Pod).
fn host_network_ports(spec: &mut Map<String, Json>) {
    if spec.get("hostNetwork") != Some(&Json::Bool(true)) {
        return;
    }
    for list in ["containers", "initContainers"] {
        let Some(Json::Array(containers)) = spec.get_mut(list) else {
            continue;
        };
        for c in containers {
            let Some(Json::Array(ports)) = c.get_mut("ports") else {
                continue;
            };
            for p in ports.iter_mut().filter_map(Json::as_object_mut) {
                if p.get("hostPort").is_none_or(is_zero)
                    && let Some(port) = p.get("containerPort").cloned()
                {
                    p.insert("hostPort".into(), port);
                }
            }
        }
    }
}

/// A LimitRange's `Container` items get a default limit from their max, and a default
/// request from their default limit, else their min, resource by resource
/// (SetDefaults_LimitRangeItem). Empty maps stay unwritten (`omitempty`).
fn limit_range_defaults(map: &mut Map<String, Json>) {
    let Some(Json::Array(items)) = map.get_mut("spec").and_then(|s| s.get_mut("limits")) else {
        return;
    };
    for item in items.iter_mut().filter_map(Json::as_object_mut) {
        if item.get("type").and_then(Json::as_str) != Some("Container") {
            continue;
        }
        let resources = |item: &Map<String, Json>, key: &str| match item.get(key) {
            Some(Json::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let mut default = resources(item, "default");
        for (k, v) in resources(item, "max") {
            default.entry(k).or_insert(v);
        }
        let mut request = resources(item, "defaultRequest");
        for (k, v) in default.iter().chain(resources(item, "min").iter()) {
            request.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (key, value) in [("default", default), ("defaultRequest", request)] {
            if !value.is_empty() {
                item.insert(key.into(), Json::Object(value));
            }
        }
    }
}

/// A Namespace is labelled `kubernetes.io/metadata.name` with its name (SetDefaults_Namespace).
fn namespace_name_label(map: &mut Map<String, Json>) {
    let Some(Json::Object(meta)) = map.get_mut("metadata") else {
        return;
    };
    let Some(name) = meta.get("name").and_then(Json::as_str).map(str::to_string) else {
        return;
    };
    if unset(meta, "labels") {
        meta.insert("labels".into(), Json::Object(Map::new()));
    }
    if let Some(Json::Object(labels)) = meta.get_mut("labels") {
        labels.insert("kubernetes.io/metadata.name".into(), Json::from(name));
    }
}

/// The pull policy the API server gives a container of `image` without one: `Always` when
/// the reference's tag is `latest` or it has neither tag nor digest, else `IfNotPresent`
/// (`SetDefaults_Container` with `parsers.ParseImageName`, pkg/util/parsers).
pub fn pull_policy(image: &str) -> &'static str {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    // The tag follows the last ':' after the last '/' (a ':' before it is a registry port).
    let last = name.rsplit('/').next().unwrap_or(name);
    let tag = last.rsplit_once(':').map(|(_, t)| t);
    match (tag, digest) {
        (Some("latest"), _) | (None, None) => "Always",
        _ => "IfNotPresent",
    }
}

#[cfg(test)]
mod tests;
