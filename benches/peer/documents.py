"""Documents for the peer benchmark, written for it (no fetched file): a stream of N
objects of one kind, each a little different (names, numbers), all valid against their CRD.

    python3 documents.py httproute|backendtrafficpolicy|webapp N > stream.yaml
    python3 documents.py deployment|service|configmap|builtins N > stream.yaml  (built-in kinds)
"""
import sys


def httproute(i):
    return f"""apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop-{i}
  namespace: default
spec:
  parentRefs:
  - name: edge
    sectionName: https
  hostnames: ["shop{i}.example.com", "www.shop{i}.example.com"]
  rules:
  - matches:
    - path: {{type: PathPrefix, value: /api}}
      headers:
      - {{name: x-canary, value: "true"}}
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        add: [{{name: x-route, value: canary}}]
    backendRefs:
    - {{name: api-canary, port: 8080, weight: 10}}
  - matches:
    - path: {{type: PathPrefix, value: /api}}
    backendRefs:
    - {{name: api, port: 8080, weight: {90 - i % 10}}}
    - {{name: api-canary, port: 8080, weight: {10 + i % 10}}}
  - matches:
    - path: {{type: Exact, value: /old}}
    filters:
    - type: RequestRedirect
      requestRedirect: {{path: {{type: ReplaceFullPath, replaceFullPath: /new}}, statusCode: 301}}
  - matches:
    - path: {{type: PathPrefix, value: /static}}
    filters:
    - type: URLRewrite
      urlRewrite: {{path: {{type: ReplacePrefixMatch, replacePrefixMatch: /assets}}}}
    backendRefs:
    - {{name: static, port: 80}}
  - matches:
    - path: {{type: PathPrefix, value: /}}
      method: GET
    - queryParams: [{{name: version, value: v2}}]
    backendRefs:
    - {{name: web, port: 80}}
"""


def backendtrafficpolicy(i):
    refs = "".join(
        f"  - {{group: gateway.networking.k8s.io, kind: HTTPRoute, name: route-{i}-{r}}}\n"
        for r in range(8)
    )
    rules = "".join(
        f"""      - clientSelectors:
        - headers:
          - {{name: x-user-{r}, type: Distinct}}
          - {{name: x-org-{r}, value: org-{i % 7}}}
          sourceCIDR: {{type: Distinct, value: 10.{r}.0.0/16}}
        limit: {{requests: {100 + r}, unit: Minute}}
"""
        for r in range(24)
    )
    overrides = "".join(
        f"""  - match:
      statusCodes:
      - {{type: Value, value: {500 + r}}}
    response:
      contentType: text/plain
      body: {{type: Inline, inline: "service {r} is resting, please come back soon"}}
"""
        for r in range(6)
    )
    return f"""apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: policy-{i}
  namespace: default
  labels: {{team: shop, tier: backend, env: production}}
spec:
  targetRefs:
{refs}  rateLimit:
    type: Global
    global:
      rules:
{rules}  loadBalancer:
    type: ConsistentHash
    consistentHash:
      type: Header
      header: {{name: x-session-id}}
      tableSize: 65537
  healthCheck:
    active:
      type: HTTP
      timeout: 1s
      interval: {1 + i % 5}s
      unhealthyThreshold: 3
      healthyThreshold: 1
      http: {{path: /healthz, method: GET, expectedStatuses: [200, 201, 204]}}
    passive:
      interval: 10s
      consecutiveGatewayErrors: 3
      consecutive5XxErrors: 5
      baseEjectionTime: 30s
      maxEjectionPercent: 10
  circuitBreaker: {{maxConnections: 1024, maxPendingRequests: 1024, maxParallelRequests: 1024, maxParallelRetries: 3, maxRequestsPerConnection: 100}}
  retry:
    numRetries: 3
    retryOn:
      triggers: [connect-failure, retriable-status-codes, reset]
      httpStatusCodes: [502, 503, 504]
    perRetry: {{timeout: 2s, backOff: {{baseInterval: 100ms, maxInterval: 10s}}}}
  timeout:
    tcp: {{connectTimeout: 5s}}
    http: {{connectionIdleTimeout: 60s, maxConnectionDuration: 300s, requestTimeout: 30s}}
  tcpKeepalive: {{probes: 3, idleTime: 60s, interval: 10s}}
  responseOverride:
{overrides}"""


def webapp(i):
    return f"""apiVersion: apps.example.com/v1
kind: WebApp
metadata:
  name: store-{i}
  namespace: shop
spec:
  image: registry.example.com/store:1.{i % 50}.0
  replicas: {2 + i % 3}
  maxReplicas: 8
  ports:
  - {{name: http, port: 8080}}
  - {{name: metrics, port: 9090}}
  env:
    LOG_LEVEL: info
    CACHE_SIZE: "{128 * (1 + i % 4)}"
  resources: {{cpu: 2, memory: 4Gi}}
  tags: [web, frontend]
  ingress:
    host: store{i}.example.com
    tls: true
    paths: [/, /api]
"""


def deployment(i):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  namespace: shop
  labels: {{app: web-{i}, tier: frontend}}
spec:
  replicas: {1 + i % 5}
  selector:
    matchLabels: {{app: web-{i}}}
  strategy:
    rollingUpdate: {{maxSurge: 25%, maxUnavailable: 0}}
  template:
    metadata:
      labels: {{app: web-{i}, tier: frontend}}
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1.{i % 40}.0
        ports:
        - {{name: http, containerPort: 8080}}
        env:
        - {{name: LOG_LEVEL, value: info}}
        resources:
          requests: {{cpu: 100m, memory: 128Mi}}
          limits: {{cpu: 500m, memory: 256Mi}}
        readinessProbe:
          httpGet: {{path: /healthz, port: http}}
          periodSeconds: 5
"""


def service(i):
    return f"""apiVersion: v1
kind: Service
metadata:
  name: web-{i}
  namespace: shop
spec:
  selector: {{app: web-{i}}}
  ports:
  - {{name: http, port: 80, targetPort: http}}
"""


def configmap(i):
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: web-{i}
  namespace: shop
data:
  LOG_LEVEL: info
  CACHE_SIZE: "{128 * (1 + i % 4)}"
"""


def builtins(i):
    """Deployments, Services and ConfigMaps in turn (issue 32's mixed built-in stream)."""
    return (deployment, service, configmap)[i % 3](i // 3)


if __name__ == "__main__":
    kind, n = sys.argv[1], int(sys.argv[2])
    make = {
        "httproute": httproute,
        "backendtrafficpolicy": backendtrafficpolicy,
        "webapp": webapp,
        "deployment": deployment,
        "service": service,
        "configmap": configmap,
        "builtins": builtins,
    }[kind]
    sys.stdout.write("---\n".join(make(i) for i in range(n)))
