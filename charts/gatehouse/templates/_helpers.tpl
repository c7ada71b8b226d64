{{/*
Gatehouse chart helpers. Flags come from files/flags.json, generated from the flag registry by
scripts/gen-chart-flags.ts: `flags` (Config key -> {flag, type, secret}) and `commands`
(command -> accepted keys).
*/}}

{{/* Base name of every object: fullnameOverride or the release name. */}}
{{- define "gatehouse.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 45 | trimSuffix "-" -}}
{{- end -}}

{{/* The services in chart order (the gateway first, then services/registry.ts, through the generated
files/flags.json); enabled ones get a Deployment + Service. */}}
{{- define "gatehouse.components" -}}
{{- (.Files.Get "files/flags.json" | fromJson).services.components | join " " -}}
{{- end -}}


{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "gatehouse.labels" -}}
{{ include "gatehouse.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret the pods mount as files. */}}
{{- define "gatehouse.secretName" -}}
{{- default (printf "%s-secrets" (include "gatehouse.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "gatehouse.flagsMeta" -}}
{{- .Files.Get "files/flags.json" -}}
{{- end -}}

{{/* Where the pods mount the Secret (read-only); each secret flag reads its file through `--flag=file:<dir>/<key>`. */}}
{{- define "gatehouse.secretDir" -}}
/etc/gatehouse/secrets
{{- end -}}

{{/*
Secret flag keys available from the Secret, as a JSON list: secrets.keys (kebab names) with an
existingSecret, otherwise the non-empty keys of secrets.values. Fails on a key that is no flag.
*/}}
{{- define "gatehouse.secretKeys" -}}
{{- $meta := include "gatehouse.flagsMeta" . | fromJson -}}
{{- $byFlag := dict -}}
{{- range $key, $info := $meta.flags -}}{{- $_ := set $byFlag (trimPrefix "--" $info.flag) $key -}}{{- end -}}
{{- $keys := list -}}
{{- if .Values.secrets.existingSecret -}}
  {{- range .Values.secrets.keys -}}
    {{- $key := index $byFlag . -}}
    {{- if not $key -}}{{- fail (printf "secrets.keys: %q is not a gatehouse flag; list Secret keys as flag names without dashes, e.g. admin-secret" .) -}}{{- end -}}
    {{- $keys = append $keys $key -}}
  {{- end -}}
{{- else -}}
  {{- range $key, $value := .Values.secrets.values -}}
    {{- if not (hasKey $meta.flags $key) -}}{{- fail (printf "secrets.values.%s is not a gatehouse flag key (camelCase Config key, e.g. adminSecret; see files/flags.json)" $key) -}}{{- end -}}
    {{- if and (ne $value nil) (ne (toString $value) "") -}}{{- $keys = append $keys $key -}}{{- end -}}
  {{- end -}}
{{- end -}}
{{- range list "adminSecret" "clientSecret" -}}
  {{- if not (has . $keys) -}}{{- fail (printf "secrets: %s is required (secrets.values.%s, or %s in secrets.keys with existingSecret)" . . (trimPrefix "--" (index $meta.flags . "flag"))) -}}{{- end -}}
{{- end -}}
{{- toJson $keys -}}
{{- end -}}

{{/* One flag value as text: lists comma-joined, whole numbers without exponent. */}}
{{- define "gatehouse.flagValue" -}}
{{- if kindIs "slice" . -}}
{{- $items := list -}}{{- range . -}}{{- $items = append $items (include "gatehouse.flagValue" .) -}}{{- end -}}
{{- join "," $items -}}
{{- else if kindIs "float64" . -}}
{{- if eq . (floor .) -}}{{- int64 . -}}{{- else -}}{{- . -}}{{- end -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/*
The flags the chart sets itself; setting them under config.* fails rendering (ports: use
`ports`; routing: derived from the Services).
*/}}
{{- define "gatehouse.managedKeys" -}}
host metricsHost httpPort grpcPort metricsPort openfgaHttpPort openfgaGrpcPort openfgaHttpHost gatewayOpenfgaUrl authnAddress mfaAddress adminAddress orgsAddress authzAddress authnGraphqlUrl mfaGraphqlUrl adminGraphqlUrl orgsGraphqlUrl authzGraphqlUrl
{{- end -}}

{{/*
Container args of one command, as a JSON object {args: [...], secrets: [secret flag keys]}: each
secret flag is `--flag=file:/etc/gatehouse/secrets/<kebab-flag>`, the file projected from the Secret
key of that name, so no secret value is an argument or an environment variable (issue 37 §5).
Input: dict "root" $ "command" <name>.
*/}}
{{- define "gatehouse.args" -}}
{{- $root := .root -}}
{{- $cmd := .command -}}
{{- $meta := include "gatehouse.flagsMeta" $root | fromJson -}}
{{- $accepted := index $meta.commands $cmd -}}
{{- $managed := include "gatehouse.managedKeys" . | splitList " " -}}
{{- $fullname := include "gatehouse.fullname" $root -}}
{{- $cfg := merge (deepCopy (index $root.Values.config $cmd | default dict)) (deepCopy ($root.Values.config.shared | default dict)) -}}
{{- $_ := required "config.shared.url is required: the public base URL, e.g. --set config.shared.url=https://auth.example.com" (get $cfg "url") -}}
{{- $args := list (printf "--host=0.0.0.0") (printf "--http-port=%v" (include "gatehouse.flagValue" $root.Values.ports.http)) -}}
{{- if has $cmd $meta.services.grpc -}}{{- $args = append $args (printf "--grpc-port=%v" (include "gatehouse.flagValue" $root.Values.ports.grpc)) -}}{{- end -}}
{{- $args = concat $args (list "--metrics-host=0.0.0.0" (printf "--metrics-port=%v" (include "gatehouse.flagValue" $root.Values.ports.metrics))) -}}
{{- if and (eq $cmd "authz") $root.Values.openfgaApi.enabled -}}
  {{- $args = concat $args (list "--openfga-http-host=0.0.0.0" (printf "--openfga-http-port=%v" (include "gatehouse.flagValue" $root.Values.openfgaApi.port)) (printf "--openfga-grpc-port=%v" (include "gatehouse.flagValue" $root.Values.openfgaApi.grpcPort))) -}}
{{- end -}}
{{- if and (eq $cmd "gateway") $root.Values.openfgaApi.enabled $root.Values.openfgaApi.gateway $root.Values.services.authz.enabled -}}
  {{- $args = append $args (printf "--gateway-openfga-url=http://%s-authz-openfga:%v" $fullname (include "gatehouse.flagValue" $root.Values.openfgaApi.port)) -}}
{{- end -}}
{{- range $key, $value := $cfg -}}
  {{- $info := index $meta.flags $key -}}
  {{- $where := ternary $cmd "shared" (hasKey (index $root.Values.config $cmd | default dict) $key) -}}
  {{- if not $info -}}{{- fail (printf "config.%s.%s is not a gatehouse flag key (camelCase Config key, e.g. logLevel for --log-level; see files/flags.json)" $where $key) -}}{{- end -}}
  {{- if has $key $managed -}}{{- fail (printf "config: %s (%s) is set by the chart; use `ports` for ports, routing flags derive from the Services" $key $info.flag) -}}{{- end -}}
  {{- $text := include "gatehouse.flagValue" $value -}}
  {{- $set := and (ne $value nil) (ne $text "") -}}
  {{- if and $set $info.secret (not (and (has $key (list "natsUrl" "redisUrl")) (not (contains "@" $text)))) -}}
    {{- fail (printf "config: %s (%s) is a secret flag; give it through secrets.values.%s or an existingSecret, never as a plain value" $key $info.flag $key) -}}
  {{- end -}}
  {{- if and $set (has $key $accepted) -}}
    {{- $args = append $args (printf "%s=%s" $info.flag $text) -}}
  {{- end -}}
{{- end -}}
{{- $secrets := list -}}
{{- $secretDir := include "gatehouse.secretDir" $root -}}
{{- range $key := include "gatehouse.secretKeys" $root | fromJsonArray -}}
  {{- $plain := get $cfg $key -}}
  {{- if and (ne $plain nil) (ne (include "gatehouse.flagValue" $plain) "") -}}
    {{- fail (printf "%s is set both in config and in the Secret; keep only the Secret" $key) -}}
  {{- end -}}
  {{- if has $key $accepted -}}
    {{- $flag := index $meta.flags $key "flag" -}}
    {{- $secrets = append $secrets $key -}}
    {{- $args = append $args (printf "%s=file:%s/%s" $flag $secretDir (trimPrefix "--" $flag)) -}}
  {{- end -}}
{{- end -}}
{{- if eq $cmd "gateway" -}}
  {{- range $svc := $meta.services.routed -}}
    {{- if (index $root.Values.services $svc).enabled -}}
      {{- $host := printf "%s-%s" $fullname $svc -}}
      {{- $args = append $args (printf "--%s-address=%s:%v" $svc $host (include "gatehouse.flagValue" $root.Values.ports.grpc)) -}}
      {{- $args = append $args (printf "--%s-graphql-url=http://%s:%v/graphql" $svc $host (include "gatehouse.flagValue" $root.Values.ports.http)) -}}
    {{- end -}}
  {{- end -}}
{{- end -}}
{{- /* the peers a service calls (internal APIs, never through the gateway; calls go one way) */ -}}
{{- $grpcPort := include "gatehouse.flagValue" $root.Values.ports.grpc -}}
{{- range $peer := (index $meta.services.calls $cmd | default list) -}}
  {{- if (index $root.Values.services $peer).enabled -}}
    {{- $args = append $args (printf "--%s-address=%s-%s:%v" $peer $fullname $peer $grpcPort) -}}
  {{- end -}}
{{- end -}}
{{- /* what this command cannot work without (the registry's requires, files/flags.json) */ -}}
{{- $given := dict -}}
{{- range $args -}}{{- $_ := set $given (regexReplaceAll "=.*$" . "") true -}}{{- end -}}
{{- range $key, $why := (index $meta.services.requires $cmd | default dict) -}}
  {{- $flag := index $meta.flags $key "flag" -}}
  {{- if not (hasKey $given $flag) -}}
    {{- fail (printf "%s needs %s: %s. Set config.shared.%s (a URL without credentials) or secrets.values.%s (or %s in secrets.keys with existingSecret)" $cmd $flag $why $key $key (trimPrefix "--" $flag)) -}}
  {{- end -}}
{{- end -}}
{{- if has "jwtType" $accepted -}}
  {{- $alg := get $cfg "jwtType" | default "HS256" | toString -}}
  {{- $keyFlag := ternary "jwtSecret" "jwtPrivateKey" (hasPrefix "HS" $alg) -}}
  {{- if not (hasKey $given (index $meta.flags $keyFlag "flag")) -}}
    {{- fail (printf "%s signs or verifies tokens with jwtType %s: set secrets.values.%s (or %s in secrets.keys with existingSecret)" $cmd $alg $keyFlag (trimPrefix "--" (index $meta.flags $keyFlag "flag"))) -}}
  {{- end -}}
{{- end -}}
{{- if has "databaseType" $accepted -}}
  {{- if not (or (hasKey $given "--database-url") (and (hasKey $given "--database-host") (hasKey $given "--database-name"))) -}}
    {{- fail (printf "%s needs a database: set secrets.values.databaseUrl (or database-url in secrets.keys with existingSecret), or config.shared.databaseHost with config.shared.databaseName" $cmd) -}}
  {{- end -}}
{{- end -}}
{{- toJson (dict "args" $args "secrets" $secrets) -}}
{{- end -}}

{{/* The name of the pods' ServiceAccount: the chart's (serviceAccount.create) or a given one, else "default". */}}
{{- define "gatehouse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gatehouse.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether a component has a gRPC listener (a public or internal API, or the gateway). Input: dict "root" $ "component" <name>; "true" or "". */}}
{{- define "gatehouse.hasGrpc" -}}
{{- if has .component (include "gatehouse.flagsMeta" .root | fromJson).services.grpc -}}true{{- end -}}
{{- end -}}

{{/* The kebab flag (with dashes) of a Config key. Input: dict "root" $ "key" <key>. */}}
{{- define "gatehouse.flagOf" -}}
{{- $meta := include "gatehouse.flagsMeta" .root | fromJson -}}
{{- index $meta.flags .key "flag" -}}
{{- end -}}

{{/* The fewest replicas a component runs: the HPA's minReplicas when autoscaled, else replicaCount (default 1). Input: dict "root" $ "component" <name>. */}}
{{- define "gatehouse.minReplicas" -}}
{{- $svc := index .root.Values.services .component | default dict -}}
{{- if and $svc.autoscaling $svc.autoscaling.enabled -}}
{{- $svc.autoscaling.minReplicas | default 1 -}}
{{- else -}}
{{- if hasKey $svc "replicaCount" }}{{ $svc.replicaCount }}{{ else }}1{{ end -}}
{{- end -}}
{{- end -}}

{{/* Whether a component runs (or may scale to) more than one pod: replicaCount > 1 or an enabled HPA; "true" or "". Input: dict "root" $ "component" <name>. */}}
{{- define "gatehouse.replicated" -}}
{{- $svc := index .root.Values.services .component | default dict -}}
{{- if or (and $svc.autoscaling $svc.autoscaling.enabled) (gt (int (include "gatehouse.minReplicas" .)) 1) -}}true{{- end -}}
{{- end -}}
