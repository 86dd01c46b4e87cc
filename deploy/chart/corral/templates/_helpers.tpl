{{/* RELEASE-scheduler, or fullnameOverride. */}}
{{- define "corral.fullname" -}}
{{- default (printf "%s-scheduler" .Release.Name) .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "corral.selectorLabels" -}}
app.kubernetes.io/name: corral-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "corral.labels" -}}
{{ include "corral.selectorLabels" . }}
app.kubernetes.io/version: {{ include "corral.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "corral.serviceAccountName" -}}
{{- default (include "corral.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "corral.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "corral.image" -}}
{{- .Values.image.repository }}:{{ include "corral.tag" . }}{{ with .Values.image.digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/* --topology-levels: name=label|label,... outermost first. */}}
{{- define "corral.topologyLevels" -}}
{{- $levels := list -}}
{{- range .Values.topology.levels -}}
{{- if or (not .name) (not .labels) -}}
{{- fail "topology.levels: each level needs a name and labels" -}}
{{- end -}}
{{- $levels = append $levels (printf "%s=%s" .name (join "|" .labels)) -}}
{{- end -}}
{{- join "," $levels -}}
{{- end -}}

{{/*
Whether to render the PodGroup CRD: podGroupCRD.install true, or auto and
the cluster lacks it or this release installed it.
*/}}
{{- define "corral.installPodGroupCRD" -}}
{{- $mode := toString .Values.podGroupCRD.install -}}
{{- if eq $mode "true" -}}
true
{{- else if eq $mode "auto" -}}
{{- $crd := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "podgroups.scheduling.x-k8s.io" -}}
{{- if not $crd -}}
true
{{- else if and (eq (dig "metadata" "annotations" "meta.helm.sh/release-name" "" $crd) .Release.Name) (eq (dig "metadata" "annotations" "meta.helm.sh/release-namespace" "" $crd) .Release.Namespace) -}}
true
{{- end -}}
{{- else if ne $mode "false" -}}
{{- fail (printf "podGroupCRD.install is %q: want auto, true or false" $mode) -}}
{{- end -}}
{{- end -}}
