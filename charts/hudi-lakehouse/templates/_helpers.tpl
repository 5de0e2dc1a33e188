{{- define "hudi-lakehouse.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: hudi-lakehouse
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The namespace of the Kafka cluster: kafka.namespace, else the first job namespace. */}}
{{- define "hudi-lakehouse.kafkaNamespace" -}}
{{- .Values.kafka.namespace | default (first .Values.jobNamespaces) -}}
{{- end -}}

{{/* The bundled ZooKeeper's StatefulSet and client Service (<name>.<release namespace>.svc:2181). */}}
{{- define "hudi-lakehouse.zookeeperName" -}}
{{- printf "%s-zookeeper" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{/* ZooKeeper hosts (list: "host[:port],...", the port of hosts that name none) as host:port,...: what a
ZooKeeper client connects to, so two spellings of one ensemble compare equal. */}}
{{- define "hudi-lakehouse.zookeeperHosts" -}}
{{- $port := index . 1 -}}
{{- $hosts := list -}}
{{- range splitList "," (index . 0) -}}
{{- $host := trim . -}}
{{- if $host -}}{{- $hosts = append $hosts (ternary $host (printf "%s:%v" $host $port) (contains ":" $host)) -}}{{- end -}}
{{- end -}}
{{- join "," $hosts -}}
{{- end -}}

{{/* Every namespace this chart and its subcharts put objects into, but the release's own, as JSON. */}}
{{- define "hudi-lakehouse.namespaces" -}}
{{- $all := concat .Values.jobNamespaces (ternary (list (include "hudi-lakehouse.kafkaNamespace" .)) list .Values.kafka.enabled) -}}
{{- without (uniq $all) .Release.Namespace | toJson -}}
{{- end -}}

{{/* Fails naming `key` when a subchart's copy of the job namespaces differs from jobNamespaces. */}}
{{- define "hudi-lakehouse.sameNamespaces" -}}
{{- $root := index . 0 -}}{{- $key := index . 1 -}}{{- $copy := index . 2 -}}
{{- if ne (toJson $copy) (toJson $root.Values.jobNamespaces) -}}
{{- fail (printf "%s is %s but jobNamespaces is %s: Helm cannot pass one value to another chart, so set both to the same list (a YAML anchor in one values file does it, see charts/README.md)" $key (toJson $copy) (toJson $root.Values.jobNamespaces)) -}}
{{- end -}}
{{- end -}}
