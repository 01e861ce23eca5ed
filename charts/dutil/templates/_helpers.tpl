{{/*
Names: <release>-dutil unless the release is already called dutil-something; `nameOverride`
replaces "dutil" there, `fullnameOverride` the whole prefix (40 characters at most: the
ServiceAccounts, Roles and the Lease are named <prefix>-<component>).
*/}}
{{- define "dutil.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "dutil.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/name: dutil
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: dutil
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "dutil.selector" -}}
app.kubernetes.io/name: dutil
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "dutil.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end -}}

{{- define "dutil.image" -}}
{{- printf "%s/dutil-%s:%s" .root.Values.image.registry .name (include "dutil.tag" .root) -}}
{{- end -}}

{{- define "dutil.serviceAccount" -}}
{{- printf "%s-%s" (include "dutil.fullname" .root) .component -}}
{{- end -}}

{{/* Settings both programs read (README: Configuration). */}}
{{- define "dutil.commonEnv" -}}
- name: KUBECONFIG
  value: ""
- name: DUTIL_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: DUTIL_S3_ENDPOINT
  value: {{ include "dutil.storageEndpoint" . | quote }}
- name: DUTIL_S3_PUBLIC_ENDPOINT
  value: {{ include "dutil.storagePublicEndpoint" . | quote }}
- name: DUTIL_S3_BUCKET
  value: {{ .Values.storage.bucket | quote }}
- name: DUTIL_S3_REGION
  value: {{ .Values.storage.region | quote }}
- name: DUTIL_S3_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "dutil.storageSecret" . }}
      key: accessKey
- name: DUTIL_S3_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "dutil.storageSecret" . }}
      key: secretKey
- name: DUTIL_DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- if eq .Values.database.type "internal" }}
      name: {{ include "dutil.internalSecret" . }}
      key: url
      {{- else }}
      name: {{ required "database.existingSecret is required (database.type: external; a Secret with the PostgreSQL URL)" .Values.database.existingSecret }}
      key: {{ .Values.database.existingSecretKey }}
      {{- end }}
- name: DUTIL_LINK_TTL_SECONDS
  value: {{ .Values.linkTtlSeconds | quote }}
- name: DUTIL_RETENTION_DAYS
  value: {{ .Values.retentionDays | quote }}
- name: DUTIL_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- with .Values.tracing.endpoint }}
- name: DUTIL_TRACING_ENDPOINT
  value: {{ . | quote }}
- name: DUTIL_TRACING_SAMPLE_RATIO
  value: {{ $.Values.tracing.sampleRatio | quote }}
- name: DUTIL_TRACING_SERVICE_PREFIX
  value: {{ $.Values.tracing.serviceNamePrefix | quote }}
{{- end }}
{{- end -}}

{{/* Pod and container security: the restricted Pod Security Standard. */}}
{{- define "dutil.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "dutil.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* Prefer spreading replicas over nodes unless the installer gave an affinity. */}}
{{- define "dutil.affinity" -}}
{{- if .affinity -}}
{{ toYaml .affinity }}
{{- else -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "dutil.selector" . | nindent 12 }}
{{- end -}}
{{- end -}}

{{/* The runner resources the operator applies: only utilities whose resources were set. */}}
{{- define "dutil.utilityConcurrency" -}}
{{- $out := dict -}}
{{- range $slug, $r := .Values.runners -}}
{{- if and $r $r.concurrency -}}
{{- $_ := set $out $slug $r.concurrency -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* DUTIL_RUNNER_POOLS: the utilities in pool mode and their pools. */}}
{{- define "dutil.runnerPools" -}}
{{- $out := dict -}}
{{- range $slug, $r := .Values.runners -}}
{{- $mode := (and $r $r.mode) | default "job" -}}
{{- if not (has $mode (list "job" "pool")) -}}
{{- fail (printf "runners.%s.mode must be job or pool, not %v" $slug $mode) -}}
{{- end -}}
{{- if eq $mode "pool" -}}
{{- $_ := set $out $slug ($r.pool | default dict) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{- define "dutil.runnerResources" -}}
{{- $out := dict -}}
{{- range $slug, $r := .Values.runners -}}
{{- if and $r $r.resources -}}
{{- $_ := set $out $slug $r.resources -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
The pod `dutil keys …` runs in (NOTES.txt): the operator image's CLI under the key-admin
service account, restricted like every dutil pod. A strategic merge patch over what
`kubectl run dutil-keys` generates: the container named like the pod gets the command, env and
security context; the arguments after `--` stay.
*/}}
{{- define "dutil.keysPodOverrides" -}}
{{- $container := dict
  "name" "dutil-keys"
  "command" (list "node" "/app/bin/dutil.js")
  "env" (list (dict "name" "DUTIL_NAMESPACE" "value" .Release.Namespace) (dict "name" "DUTIL_DEFAULT_RATE_LIMIT" "value" (toString .Values.defaultRateLimit)))
  "securityContext" (fromYaml (include "dutil.containerSecurityContext" .))
-}}
{{- $spec := dict
  "serviceAccountName" (printf "%s-keys" (include "dutil.fullname" .))
  "automountServiceAccountToken" true
  "securityContext" (fromYaml (include "dutil.podSecurityContext" .))
  "containers" (list $container)
-}}
{{- with .Values.imagePullSecrets }}
{{- $_ := set $spec "imagePullSecrets" . }}
{{- end }}
{{- toJson (dict "apiVersion" "v1" "spec" $spec) -}}
{{- end -}}

{{/*
DUTIL_RUNNER_POD: where runner pods run. `default` from `runnerPod` (its pull secrets default to
the chart's `imagePullSecrets`, so runner images come from the same private registry), each
utility's from `runners.<slug>.pod`.
*/}}
{{- define "dutil.runnerPod" -}}
{{- $d := .Values.runnerPod -}}
{{- $secrets := list -}}
{{- range (default .Values.imagePullSecrets $d.imagePullSecrets) -}}
{{- $secrets = append $secrets (ternary . (get . "name") (kindIs "string" .)) -}}
{{- end -}}
{{- $default := dict "imagePullSecrets" $secrets "nodeSelector" $d.nodeSelector "tolerations" $d.tolerations "affinity" $d.affinity "priorityClassName" $d.priorityClassName "runtimeClassName" $d.runtimeClassName "seccompProfile" (default (dict "type" "RuntimeDefault") $d.seccompProfile) "annotations" $d.podAnnotations "labels" $d.podLabels -}}
{{- $out := dict "default" $default -}}
{{- range $slug, $r := .Values.runners -}}
{{- if and $r $r.pod -}}
{{- $_ := set $out $slug $r.pod -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* The Secret with the internal services' generated credentials and URLs. */}}
{{- define "dutil.internalSecret" -}}
{{- .Values.trialExistingSecret | default (printf "%s-internal" (include "dutil.fullname" .)) -}}
{{- end -}}

{{/* Runner pods, as the operator labels them (dutil.io/job-id), in a podSelector. */}}
{{- define "dutil.runnerPodSelector" -}}
matchLabels:
  app.kubernetes.io/managed-by: dutil
matchExpressions:
  - { key: dutil.io/job-id, operator: Exists }
{{- end -}}

{{/* Pool mode's runner pods, with or without a job. */}}
{{- define "dutil.poolPodSelector" -}}
matchLabels:
  app.kubernetes.io/managed-by: dutil
matchExpressions:
  - { key: dutil.io/pool, operator: Exists }
{{- end -}}

{{/* Non-empty when any of storage, database and redis is internal (a trial install). */}}
{{- define "dutil.anyInternal" -}}
{{- if or (eq .Values.storage.type "internal") (eq .Values.database.type "internal") (eq .Values.redis.type "internal") -}}true{{- end -}}
{{- end -}}

{{/* Storage as the pods reach it, and the Secret with its credentials. */}}
{{- define "dutil.storageEndpoint" -}}
{{- if eq .Values.storage.type "internal" -}}
{{- printf "http://%s-minio:9000" (include "dutil.fullname" .) -}}
{{- else -}}
{{- required "storage.endpoint is required (storage.type: external)" .Values.storage.endpoint -}}
{{- end -}}
{{- end -}}

{{/* Where download links point: storage.publicEndpoint, else (internal storage) the gateway's
files port as `kubectl port-forward` brings it to 127.0.0.1, else the storage endpoint. */}}
{{- define "dutil.storagePublicEndpoint" -}}
{{- if .Values.storage.publicEndpoint -}}
{{- .Values.storage.publicEndpoint -}}
{{- else if eq .Values.storage.type "internal" -}}
{{- printf "http://127.0.0.1:%v" .Values.gateway.files.servicePort -}}
{{- else -}}
{{- include "dutil.storageEndpoint" . -}}
{{- end -}}
{{- end -}}

{{- define "dutil.storageSecret" -}}
{{- if eq .Values.storage.type "internal" -}}
{{- include "dutil.internalSecret" . -}}
{{- else -}}
{{- required "storage.existingSecret is required (storage.type: external)" .Values.storage.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* The files host: on when asked for, and always with internal storage (nothing else reaches it). */}}
{{- define "dutil.filesEnabled" -}}
{{- if or .Values.gateway.files.enabled (eq .Values.storage.type "internal") -}}true{{- end -}}
{{- end -}}

{{/*
One internal service: a single-replica StatefulSet, its Service and a NetworkPolicy letting in
only the named clients. dict: root, component, port, mountPath, values (the *.internal block),
env, probe, clients (gateway, operator, runners).
*/}}
{{- define "dutil.internalService" -}}
{{- $root := .root }}
{{- $v := .values }}
{{- $name := printf "%s-%s" (include "dutil.fullname" $root) .component }}
{{- $c := dict "root" $root "component" .component }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "dutil.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  selector:
    {{- include "dutil.selector" $c | nindent 4 }}
  ports:
    - name: service
      port: {{ .port }}
      targetPort: service
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ $name }}
  labels:
    {{- include "dutil.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  replicas: 1
  serviceName: {{ $name }}
  selector:
    matchLabels:
      {{- include "dutil.selector" $c | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "dutil.labels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext:
        {{- include "dutil.podSecurityContext" $root | nindent 8 }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "dutil.image" (dict "root" $root "name" .component) }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - name: service
              containerPort: {{ .port }}
          env:
            {{- toYaml .env | nindent 12 }}
          readinessProbe:
            {{- toYaml .probe | nindent 12 }}
            periodSeconds: 5
          livenessProbe:
            {{- toYaml .probe | nindent 12 }}
            periodSeconds: 10
            failureThreshold: 6
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- include "dutil.containerSecurityContext" $root | nindent 12 }}
          volumeMounts:
            - { name: data, mountPath: {{ .mountPath }} }
            - { name: tmp, mountPath: /tmp }
      volumes:
        - name: tmp
          emptyDir: {}
        {{- if not $v.persistence.enabled }}
        - name: data
          emptyDir: {}
        {{- end }}
  {{- if $v.persistence.enabled }}
  volumeClaimTemplates:
    - metadata:
        name: data
        labels:
          {{- include "dutil.selector" $c | nindent 10 }}
      spec:
        accessModes: [ReadWriteOnce]
        {{- with $v.persistence.storageClass }}
        storageClassName: {{ . | quote }}
        {{- end }}
        resources:
          requests:
            storage: {{ $v.persistence.size }}
  {{- end }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ $name }}
  labels:
    {{- include "dutil.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  podSelector:
    matchLabels:
      {{- include "dutil.selector" $c | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    - ports:
        - { protocol: TCP, port: {{ .port }} }
      from:
        {{- range .clients }}
        {{- if eq . "runners" }}
        - podSelector:
            {{- include "dutil.runnerPodSelector" $root | nindent 12 }}
        {{- if ne (include "dutil.runnerPools" $root) "{}" }}
        - podSelector:
            {{- include "dutil.poolPodSelector" $root | nindent 12 }}
        {{- end }}
        {{- else }}
        - podSelector:
            matchLabels:
              {{- include "dutil.selector" (dict "root" $root "component" .) | nindent 14 }}
        {{- end }}
        {{- end }}
{{- end -}}

{{/*
A value as a CEL literal (for ValidatingAdmissionPolicy expressions): JSON, but every map value
and list element wrapped in dyn(), since CEL wants the values of one literal to be of one type.
*/}}
{{- define "dutil.celLiteral" -}}
{{- $v := . -}}
{{- if kindIs "map" $v -}}
{{- $parts := list -}}
{{- range $k := keys $v | sortAlpha -}}
{{- $parts = append $parts (printf "%s: dyn(%s)" (toJson $k) (include "dutil.celLiteral" (get $v $k))) -}}
{{- end -}}
{{- printf "{%s}" (join ", " $parts) -}}
{{- else if kindIs "slice" $v -}}
{{- $parts := list -}}
{{- range $e := $v -}}
{{- $parts = append $parts (printf "dyn(%s)" (include "dutil.celLiteral" $e)) -}}
{{- end -}}
{{- printf "[%s]" (join ", " $parts) -}}
{{- else -}}
{{- toJson $v -}}
{{- end -}}
{{- end -}}
