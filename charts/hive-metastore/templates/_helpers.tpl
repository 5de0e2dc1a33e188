{{- define "hive-metastore.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hive-metastore.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hive-metastore.labels" -}}
{{ include "hive-metastore.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: hudi-lakehouse
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "hive-metastore.serviceAccountName" -}}
{{- default (include "hive-metastore.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "hive-metastore.dbHost" -}}
{{- if eq .Values.database.mode "bundled" -}}{{ include "hive-metastore.fullname" . }}-postgresql{{- else -}}{{ .Values.database.external.host }}{{- end -}}
{{- end -}}

{{- define "hive-metastore.dbPort" -}}
{{- if eq .Values.database.mode "bundled" -}}5432{{- else -}}{{ .Values.database.external.port }}{{- end -}}
{{- end -}}

{{- define "hive-metastore.dbName" -}}
{{- if eq .Values.database.mode "bundled" -}}metastore{{- else -}}{{ .Values.database.external.name }}{{- end -}}
{{- end -}}

{{- define "hive-metastore.passwordSecret" -}}
{{- default (printf "%s-db" (include "hive-metastore.fullname" .)) .Values.database.passwordSecret -}}
{{- end -}}

{{- define "hive-metastore.jdbcUrl" -}}
jdbc:postgresql://{{ include "hive-metastore.dbHost" . }}:{{ include "hive-metastore.dbPort" . }}/{{ include "hive-metastore.dbName" . }}
{{- end -}}

{{/* The JVM flags both the schema init and the server use. */}}
{{- define "hive-metastore.javaOpts" -}}
-Djavax.jdo.option.ConnectionURL={{ include "hive-metastore.jdbcUrl" . }} -Djavax.jdo.option.ConnectionDriverName=org.postgresql.Driver -Djavax.jdo.option.ConnectionUserName={{ .Values.database.user }} -Dhive.metastore.warehouse.dir={{ include "hive-metastore.warehouseDir" . }} -Dhive.metastore.schema.verification=false -Dhive.async.log.enabled=false {{ include "hive-metastore.lockManagerOpts" . }}
{{- end -}}

{{/* The lock manager's settings (files/lock-manager.properties) and its timeout, as -D options. */}}
{{- define "hive-metastore.lockManagerOpts" -}}
{{- $opts := list (printf "-Dhive.txn.timeout=%s" .Values.lockManager.txnTimeout) -}}
{{- range .Files.Lines "files/lock-manager.properties" -}}
{{- $line := trim . -}}
{{- if and $line (not (hasPrefix "#" $line)) -}}
{{- $opts = append $opts (printf "-D%s" $line) -}}
{{- end -}}
{{- end -}}
{{- join " " $opts -}}
{{- end -}}

{{/* warehouseDir, else s3a://<global.storage.bucket>/warehouse (the hudi-lakehouse chart's bucket). */}}
{{- define "hive-metastore.warehouseDir" -}}
{{- $bucket := dig "storage" "bucket" "" (.Values.global | default dict) -}}
{{- if .Values.warehouseDir -}}{{ .Values.warehouseDir }}
{{- else if $bucket -}}s3a://{{ $bucket }}/warehouse
{{- else -}}{{ fail "set warehouseDir (e.g. s3a://my-bucket/warehouse), or global.storage.bucket" }}
{{- end -}}
{{- end -}}

{{/* The Secret whose keys become the storage credentials' environment: storageCredentialsSecret, else
global.storage.credentialsSecret; empty: none (workload identity). */}}
{{- define "hive-metastore.storageCredentialsSecret" -}}
{{- .Values.storageCredentialsSecret | default (dig "storage" "credentialsSecret" "" (.Values.global | default dict)) -}}
{{- end -}}

{{/* The service account's annotations: global.storage.serviceAccountAnnotations (workload identity), then
serviceAccount.annotations, which win. */}}
{{- define "hive-metastore.serviceAccountAnnotations" -}}
{{- $global := dig "storage" "serviceAccountAnnotations" dict (.Values.global | default dict) -}}
{{- $all := merge (deepCopy .Values.serviceAccount.annotations) $global -}}
{{- if $all }}{{ toYaml $all }}{{ end -}}
{{- end -}}
