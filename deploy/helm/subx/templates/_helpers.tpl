{{/* Release-scoped name: <release>-subx, or just <release> when it already contains "subx". */}}
{{- define "subx.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Name of one component's objects. Call with (dict "root" $ "name" $name). */}}
{{- define "subx.componentName" -}}
{{- printf "%s-%s" (include "subx.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "subx.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: subx
{{- with .Values.global.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component. Call with (dict "root" $ "name" $name). */}}
{{- define "subx.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "subx.componentLabels" -}}
{{ include "subx.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "subx.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "subx.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "subx.secretName" -}}
{{- default (printf "%s-secrets" (include "subx.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* Image reference of one component. Call with (dict "root" $ "name" $name "c" $component). */}}
{{- define "subx.image" -}}
{{- $g := .root.Values.global.image -}}
{{- $repo := default (printf "%s%s" $g.repositoryPrefix .name) .c.image.repository -}}
{{- $tag := .c.image.tag | default $g.tag | default .root.Chart.AppVersion -}}
{{- if $g.registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $g.registry) $repo $tag -}}
{{- else -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}
{{- end -}}

{{/*
Secret keys one component receives: its own secretEnv plus the infra URLs it uses.
Returns a YAML list of {name, optional}. Call with (dict "root" $ "c" $component).
*/}}
{{- define "subx.secretEnv" -}}
{{- $keys := list -}}
{{- if .c.uses.redis }}{{ $keys = append $keys (dict "name" "REDIS_URL" "optional" false) }}{{ end -}}
{{- if .c.uses.mongo }}{{ $keys = append $keys (dict "name" "MONGO_URL" "optional" false) }}{{ end -}}
{{- if and .c.uses.kafka .root.Values.infra.kafka.sasl.mechanism }}{{ $keys = append $keys (dict "name" "KAFKA_SASL_PASSWORD" "optional" false) }}{{ end -}}
{{- range .c.secretEnv }}{{ $keys = append $keys (dict "name" .name "optional" (default false .optional)) }}{{ end -}}
{{- toYaml $keys -}}
{{- end -}}

{{/*
Whether a component is deployed: its `enabled`, or for the speech engine `speech.enabled`.
Call with (dict "root" $ "name" $name "c" $component); "true" or empty.
*/}}
{{- define "subx.enabled" -}}
{{- if or .c.enabled (and (eq .name "speech") .root.Values.speech.enabled) }}true{{ end -}}
{{- end -}}

{{/*
Whether KEDA scales a component: autoscaling.keda.enabled and its own keda.enabled. Its ScaledObject
(keda.yaml) then replaces the CPU HPA, and the Deployment leaves `replicas` to it.
Call with (dict "root" $ "c" $component); "true" or empty.
*/}}
{{- define "subx.keda" -}}
{{- if and (dig "keda" "enabled" false (.root.Values.autoscaling | default dict)) (dig "enabled" false (.c.keda | default dict)) }}true{{ end -}}
{{- end -}}

{{/* Non-secret environment of one component (the ConfigMap data). Call with (dict "root" $ "name" $name "c" $component). */}}
{{- define "subx.configEnv" -}}
{{- $root := .root -}}
{{- $env := dict "LOG_LEVEL" $root.Values.global.logLevel "OTEL_SERVICE_NAME" .name "SHUTDOWN_TIMEOUT_MS" (toString (int $root.Values.global.shutdownTimeoutMs)) -}}
{{- if $root.Values.global.otelExporterOtlpEndpoint }}{{ $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" $root.Values.global.otelExporterOtlpEndpoint }}{{ end -}}
{{- $portEnv := .c.portEnv | default (ternary "GRPC_PORT" "PORT" (eq .c.protocol "grpc")) -}}
{{- $_ := set $env $portEnv (toString (int .c.port)) -}}
{{- $_ := set $env "METRICS_PORT" (ternary (toString (int $root.Values.metrics.port)) "off" $root.Values.metrics.enabled) -}}
{{- if .c.uses.kafka }}{{ $_ := set $env "KAFKA_BROKERS" $root.Values.infra.kafkaBrokers }}
{{- $k := $root.Values.infra.kafka -}}
{{- if $k.tls.enabled }}{{ $_ := set $env "KAFKA_SSL" "true" }}{{ end -}}
{{- if $k.tls.caSecret }}{{ $_ := set $env "KAFKA_SSL_CA_FILE" "/etc/subx/kafka-ca/ca.crt" }}{{ end -}}
{{- if $k.topicRetentionMs }}{{ $_ := set $env "KAFKA_TOPIC_RETENTION_MS" (toString (int64 $k.topicRetentionMs)) }}{{ end -}}
{{- if $k.sasl.mechanism }}
{{- if not $k.sasl.username }}{{ fail "infra.kafka.sasl.username is required with infra.kafka.sasl.mechanism" }}{{ end -}}
{{- $_ := set $env "KAFKA_SASL_MECHANISM" $k.sasl.mechanism }}{{ $_ := set $env "KAFKA_SASL_USERNAME" $k.sasl.username -}}
{{- end -}}
{{- end -}}
{{- if .c.adminPort }}{{ $_ := set $env "ADMIN_PORT" (toString (int .c.adminPort)) }}{{ $_ := set $env "ADMIN_HOST" "0.0.0.0" }}{{ end -}}
{{- if and (eq .c.protocol "http") $root.Values.trustProxy }}{{ $_ := set $env "TRUST_PROXY" (toString $root.Values.trustProxy) }}{{ end -}}
{{- $tls := $root.Values.grpcTls -}}
{{- if and $tls.enabled (or (eq .c.protocol "grpc") .c.peers) -}}
{{- if not $tls.secretName }}{{ fail "grpcTls.secretName is required with grpcTls.enabled" }}{{ end -}}
{{- /* Servers serve this certificate; clients verify with ca.crt and present it for mutual TLS. */ -}}
{{- $_ := set $env "GRPC_TLS_CERT_FILE" "/etc/subx/grpc-tls/tls.crt" }}{{ $_ := set $env "GRPC_TLS_KEY_FILE" "/etc/subx/grpc-tls/tls.key" -}}
{{- if .c.peers }}{{ $_ := set $env "GRPC_TLS" "true" }}{{ $_ := set $env "GRPC_TLS_CA_FILE" "/etc/subx/grpc-tls/ca.crt" }}{{ end -}}
{{- if and $tls.mutual (eq .c.protocol "grpc") }}{{ $_ := set $env "GRPC_TLS_CLIENT_CA_FILE" "/etc/subx/grpc-tls/ca.crt" }}{{ end -}}
{{- end -}}
{{- if .c.uses.mongo }}{{ $_ := set $env "MONGO_DB" $root.Values.infra.mongoDb }}{{ end -}}
{{- if .c.spool }}{{ $_ := set $env "TRANSCRIBE_SPOOL_DIR" "/var/spool/subx" }}{{ end -}}
{{- $speech := $root.Values.components.speech | default dict -}}
{{- if and (has .name ($speech.callers | default list)) (include "subx.enabled" (dict "root" $root "name" "speech" "c" $speech)) -}}
{{- /* The chart's speech engine transcribes for its callers, unless they name another endpoint. */ -}}
{{- $_ := set $env "TRANSCRIBE_BASE_URL" (printf "http://%s:%d/v1" (include "subx.componentName" (dict "root" $root "name" "speech")) (int $speech.port)) -}}
{{- if and (include "subx.keda" (dict "root" $root "c" $speech)) (eq (int $speech.keda.minReplicaCount) 0) $speech.keda.callerWait -}}
{{- /* KEDA may have scaled the engine to zero: a request waits for it to come up. */ -}}
{{- $_ := set $env "TRANSCRIBE_UNAVAILABLE_WAIT_MS" (toString $speech.keda.callerWait) -}}
{{- end -}}
{{- end -}}
{{- if and .c.uses.youtube $root.Values.youtubeClients }}
{{- if hasKey (.c.env | default dict) "YOUTUBE_CLIENTS" }}{{ fail (printf "components.%s.env.YOUTUBE_CLIENTS and youtubeClients: set the identities in one place (youtubeClients is re-read without a restart)" .name) }}{{ end -}}
{{- $_ := set $env "YOUTUBE_CLIENTS_FILE" "/etc/subx/youtube-clients/clients.json" -}}
{{- end -}}
{{- range $peer := .c.peers -}}
{{- $p := index $root.Values.components $peer | default dict -}}
{{- if not $p }}{{ fail (printf "components.%s.peers: unknown component %q" $.name $peer) }}{{ end -}}
{{- if ne $p.protocol "grpc" }}{{ fail (printf "components.%s.peers: %q is not a gRPC component" $.name $peer) }}{{ end -}}
{{- $_ := set $env (printf "%s_GRPC_ADDR" (upper $peer)) (printf "%s:%d" (include "subx.componentName" (dict "root" $root "name" $peer)) (int $p.port)) -}}
{{- end -}}
{{- range $peer := .c.httpPeers -}}
{{- $p := index $root.Values.components $peer | default dict -}}
{{- if not $p }}{{ fail (printf "components.%s.httpPeers: unknown component %q" $.name $peer) }}{{ end -}}
{{- if ne $p.protocol "http" }}{{ fail (printf "components.%s.httpPeers: %q is not an http component" $.name $peer) }}{{ end -}}
{{- if not $p.enabled }}{{ fail (printf "components.%s.httpPeers: %q is disabled" $.name $peer) }}{{ end -}}
{{- $_ := set $env (printf "%s_URL" (upper $peer)) (printf "http://%s:%d" (include "subx.componentName" (dict "root" $root "name" $peer)) (int $p.port)) -}}
{{- if $p.adminPort }}{{ $_ := set $env (printf "%s_ADMIN_URL" (upper $peer)) (printf "http://%s:%d" (include "subx.componentName" (dict "root" $root "name" (printf "%s-admin" $peer))) (int $p.adminPort)) }}{{ end -}}
{{- end -}}
{{- range $k, $v := .c.env }}{{ $_ := set $env $k (toString $v) }}{{ end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* Probes of one component: protocol defaults merged with component overrides. */}}
{{- define "subx.probes" -}}
{{- $port := int .c.port -}}
{{- $live := dict -}}
{{- $ready := dict -}}
{{- $startup := dict -}}
{{- if and (eq .c.protocol "grpc") .root.Values.grpcTls.enabled -}}
{{- /* The kubelet's gRPC probe speaks plaintext only: with TLS on, the port accepting connections. */ -}}
{{- $live = dict "tcpSocket" (dict "port" $port) -}}
{{- $ready = dict "tcpSocket" (dict "port" $port) -}}
{{- $startup = dict "tcpSocket" (dict "port" $port) -}}
{{- else if eq .c.protocol "grpc" -}}
{{- $live = dict "grpc" (dict "port" $port) -}}
{{- $ready = dict "grpc" (dict "port" $port) -}}
{{- $startup = dict "grpc" (dict "port" $port) -}}
{{- else -}}
{{- $live = dict "httpGet" (dict "path" "/health/live" "port" "http") -}}
{{- $ready = dict "httpGet" (dict "path" "/health/ready" "port" "http") -}}
{{- $startup = dict "httpGet" (dict "path" "/health/live" "port" "http") -}}
{{- end -}}
{{- $live = merge (dict "periodSeconds" 10 "timeoutSeconds" 3 "failureThreshold" 3) $live -}}
{{- $ready = merge (dict "periodSeconds" 5 "timeoutSeconds" 3 "failureThreshold" 2) $ready -}}
{{- $startup = merge (dict "periodSeconds" 2 "timeoutSeconds" 3 "failureThreshold" 30) $startup -}}
{{- $o := .c.probes | default dict -}}
livenessProbe:
{{- toYaml (mergeOverwrite $live (get $o "liveness" | default dict)) | nindent 2 }}
readinessProbe:
{{- toYaml (mergeOverwrite $ready (get $o "readiness" | default dict)) | nindent 2 }}
startupProbe:
{{- toYaml (mergeOverwrite $startup (get $o "startup" | default dict)) | nindent 2 }}
{{- end -}}

{{/*
One egress rule from a destination of networkPolicy.egress ({to, ports}). An empty `to` allows
the ports to any address; `ports` must not be empty, so no rule ever allows everything.
*/}}
{{- define "subx.egressRule" -}}
{{- if not .ports }}{{ fail "networkPolicy.egress: every destination needs `ports` (an empty list would allow every port)" }}{{ end }}
{{- $rule := dict "ports" .ports }}
{{- with .to }}{{ $_ := set $rule "to" . }}{{ end }}
{{- list $rule | toYaml }}
{{- end }}
