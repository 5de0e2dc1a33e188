{{- define "hudi-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hudi-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hudi-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hudi-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hudi-operator.labels" -}}
{{ include "hudi-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: hudi-lakehouse
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "hudi-operator.serviceAccountName" -}}
{{- default (include "hudi-operator.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "hudi-operator.peering" -}}
{{- if gt (int .Values.replicaCount) 1 -}}true{{- end -}}
{{- end -}}

{{/* The rules of operator/hudi_operator/rbac.py, generated into files/rbac-rules.json. */}}
{{- define "hudi-operator.rules" -}}
{{- $all := .Files.Get "files/rbac-rules.json" | fromJson -}}
{{- $peering := include "hudi-operator.peering" . -}}
{{- $namespaced := ternary $all.namespacedPeering $all.namespaced (and (eq $peering "true") (not (empty .Values.watchNamespaces))) -}}
{{- $cluster := ternary $all.clusterPeering $all.cluster (and (eq $peering "true") (empty .Values.watchNamespaces)) -}}
{{- dict "namespaced" $namespaced "cluster" $cluster | toJson -}}
{{- end -}}

{{/* storageCredentialsSecret, else global.storage.credentialsSecret (the hudi-lakehouse chart's). */}}
{{- define "hudi-operator.storageCredentialsSecret" -}}
{{- .Values.storageCredentialsSecret | default (dig "storage" "credentialsSecret" "" (.Values.global | default dict)) -}}
{{- end -}}

{{/* global.storage.serviceAccountAnnotations (workload identity) with serviceAccount.annotations winning. */}}
{{- define "hudi-operator.serviceAccountAnnotations" -}}
{{- $global := dig "storage" "serviceAccountAnnotations" dict (.Values.global | default dict) -}}
{{- $all := merge (deepCopy .Values.serviceAccount.annotations) $global -}}
{{- if $all }}{{ toYaml $all }}{{ end -}}
{{- end -}}
