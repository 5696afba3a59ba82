{{/* Names */}}
{{- define "eligibility.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "eligibility.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "eligibility.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "eligibility.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Labels */}}
{{- define "eligibility.selectorLabels" -}}
app.kubernetes.io/name: {{ include "eligibility.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "eligibility.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "eligibility.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: eligibility
{{- end -}}

{{/*
The worker pools, in one place: key in .Values, component label / name suffix, and subcommand. Every
pool is the same image with different arguments and environment.
*/}}
{{- define "eligibility.pools" -}}
evaluator: {component: evaluator, command: evaluator}
explainer: {component: explainer, command: explainer}
gpuBatch: {component: gpu-batch, command: evaluator}
{{- end -}}

{{- define "eligibility.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "eligibility.kafkaCaDir" -}}/etc/eligibility/kafka-ca{{- end -}}
{{- define "eligibility.postgresCaDir" -}}/etc/eligibility/postgres-ca{{- end -}}
{{- define "eligibility.redisCaDir" -}}/etc/eligibility/redis-ca{{- end -}}

{{/*
Environment shared by every container (workers and jobs): docs/configuration.md. Secrets are only
referenced (secretKeyRef), never rendered.
*/}}
{{- define "eligibility.env" -}}
- name: ELIGIBILITY_KAFKA_BROKERS
  value: {{ .Values.kafka.brokers | quote }}
- name: ELIGIBILITY_KAFKA_SECURITY_PROTOCOL
  value: {{ .Values.kafka.securityProtocol | quote }}
{{- if hasPrefix "sasl_" .Values.kafka.securityProtocol }}
- name: ELIGIBILITY_KAFKA_SASL_MECHANISM
  value: {{ .Values.kafka.sasl.mechanism | quote }}
- name: ELIGIBILITY_KAFKA_SASL_USERNAME
  value: {{ .Values.kafka.sasl.username | quote }}
- name: ELIGIBILITY_KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.kafka.sasl.passwordSecret.name | quote }}
      key: {{ .Values.kafka.sasl.passwordSecret.key | quote }}
{{- end }}
{{- if .Values.kafka.tls.caSecret.name }}
- name: ELIGIBILITY_KAFKA_SSL_CA_LOCATION
  value: {{ printf "%s/%s" (include "eligibility.kafkaCaDir" .) .Values.kafka.tls.caSecret.key | quote }}
{{- end }}
{{- range $name, $value := .Values.kafka.properties }}
- name: {{ printf "ELIGIBILITY_KAFKA_PROP_%s" ($name | upper | replace "_" "__" | replace "-" "___" | replace "." "_") | quote }}
  value: {{ $value | quote }}
{{- end }}
- name: ELIGIBILITY_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.postgresql.urlSecret.name | quote }}
      key: {{ .Values.postgresql.urlSecret.key | quote }}
{{- if .Values.postgresql.caSecret.name }}
- name: ELIGIBILITY_DATABASE_CA_FILE
  value: {{ printf "%s/%s" (include "eligibility.postgresCaDir" .) .Values.postgresql.caSecret.key | quote }}
{{- end }}
- name: ELIGIBILITY_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.urlSecret.name | quote }}
      key: {{ .Values.redis.urlSecret.key | quote }}
{{- if .Values.redis.caSecret.name }}
- name: ELIGIBILITY_REDIS_CA_FILE
  value: {{ printf "%s/%s" (include "eligibility.redisCaDir" .) .Values.redis.caSecret.key | quote }}
{{- end }}
- name: ELIGIBILITY_SCHEMA_AUTO_REGISTER
  value: {{ .Values.schemaRegistry.autoRegister | toString | quote }}
{{- if .Values.schemaRegistry.urlSecret.name }}
- name: ELIGIBILITY_SCHEMA_REGISTRY_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.schemaRegistry.urlSecret.name | quote }}
      key: {{ .Values.schemaRegistry.urlSecret.key | quote }}
{{- else }}
- name: ELIGIBILITY_SCHEMA_REGISTRY_URL
  value: {{ .Values.schemaRegistry.url | quote }}
{{- end }}
{{- if .Values.llm.baseUrl }}
- name: ELIGIBILITY_LLM_BASE_URL
  value: {{ .Values.llm.baseUrl | quote }}
- name: ELIGIBILITY_LLM_MODEL
  value: {{ .Values.llm.model | quote }}
{{- end }}
{{- if .Values.llm.apiKeySecret.name }}
- name: ELIGIBILITY_LLM_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.llm.apiKeySecret.name | quote }}
      key: {{ .Values.llm.apiKeySecret.key | quote }}
{{- end }}
- name: ELIGIBILITY_HTTP_ADDR
  value: {{ printf "0.0.0.0:%d" (int .Values.httpPort) | quote }}
- name: ELIGIBILITY_RULES_DIR
  value: /app/schemes
- name: ELIGIBILITY_RULE_REVIEW
  value: {{ .Values.ruleReview | quote }}
- name: ELIGIBILITY_LOG
  value: {{ .Values.logLevel | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Volumes every container needs: a writable /tmp (the root FS is read-only) and the CAs of Kafka,
PostgreSQL and Redis that are set. */}}
{{- define "eligibility.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- range $volume := list (list "kafka-ca" .Values.kafka.tls.caSecret) (list "postgres-ca" .Values.postgresql.caSecret) (list "redis-ca" .Values.redis.caSecret) }}
{{- $secret := index $volume 1 }}
{{- if $secret.name }}
- name: {{ index $volume 0 }}
  secret:
    secretName: {{ $secret.name | quote }}
    items:
      - key: {{ $secret.key | quote }}
        path: {{ $secret.key | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "eligibility.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if .Values.kafka.tls.caSecret.name }}
- name: kafka-ca
  mountPath: {{ include "eligibility.kafkaCaDir" . }}
  readOnly: true
{{- end }}
{{- if .Values.postgresql.caSecret.name }}
- name: postgres-ca
  mountPath: {{ include "eligibility.postgresCaDir" . }}
  readOnly: true
{{- end }}
{{- if .Values.redis.caSecret.name }}
- name: redis-ca
  mountPath: {{ include "eligibility.redisCaDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{/*
Cross-field checks that JSON Schema cannot express. Called from every template that renders workloads
so that `helm template` and `helm install` stop with a clear message.
*/}}
{{- define "eligibility.validate" -}}
{{- if .Values.gpuBatch.enabled -}}
{{- if ne .Values.gpuBatch.consumerGroup .Values.evaluator.consumerGroup -}}
{{- fail "gpuBatch.consumerGroup must equal evaluator.consumerGroup: GPU evaluators own partitions like the CPU ones, and a partition's users and its rule changes belong to one member of one group (docs/fleet.md, Ownership)" -}}
{{- end -}}
{{- if ne (join "," .Values.gpuBatch.inputTopics) (join "," .Values.evaluator.inputTopics) -}}
{{- fail "gpuBatch.inputTopics must equal evaluator.inputTopics: the group's assignor lines partitions up only across identical subscriptions (docs/fleet.md, Ownership)" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.retention.enabled (not .Values.retention.persistentVolumeClaim) -}}
{{- fail "retention.persistentVolumeClaim is required with retention.enabled: the exported audit months must outlive the pod that writes them (docs/fleet.md, Retention)" -}}
{{- end -}}
{{- range $key := list "evaluator" "gpuBatch" -}}
{{- if (index $.Values $key).languages -}}
{{- fail (printf "%s.languages: only the explainer explains; the evaluator pools take no languages" $key) -}}
{{- end -}}
{{- end -}}
{{- range $key := list "evaluator" "explainer" "gpuBatch" -}}
{{- $pool := index $.Values $key -}}
{{- if and $pool.enabled $pool.autoscaling.enabled (gt (int $pool.autoscaling.minReplicas) (int $pool.autoscaling.maxReplicas)) -}}
{{- fail (printf "%s.autoscaling.minReplicas must not exceed maxReplicas" $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Egress allowed when networkPolicy.egress.restrict is true: DNS, then the configured rules. */}}
{{- define "eligibility.egressRules" -}}
- to:
    - namespaceSelector: {}
      podSelector:
        matchLabels:
          k8s-app: kube-dns
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- with .Values.networkPolicy.egress.rules }}
{{ toYaml . }}
{{- end }}
{{- end -}}
