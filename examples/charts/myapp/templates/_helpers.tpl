{{/* The release name, cut to a DNS label: the instance's name is the release. */}}
{{- define "myapp.fullname" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "myapp.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "myapp.labels" -}}
{{ include "myapp.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "myapp.image" -}}
{{- $tag := required "image.tag or the chart's appVersion is required" (.Values.image.tag | default .Chart.AppVersion) -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}

{{/* The pod template both workload kinds share. */}}
{{- define "myapp.podTemplate" -}}
metadata:
  labels:
    {{- include "myapp.selectorLabels" . | nindent 4 }}
  annotations:
    checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
spec:
  {{- with .Values.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: app
      image: {{ include "myapp.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      {{- with .Values.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: http
          containerPort: {{ .Values.service.port }}
          protocol: TCP
      envFrom:
        - configMapRef:
            name: {{ include "myapp.fullname" . }}
      {{- if .Values.persistence.enabled }}
      volumeMounts:
        - name: data
          mountPath: /data
      {{- end }}
{{- end -}}
