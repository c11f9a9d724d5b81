#!/usr/bin/env bash
# Delayed delivery, and a namespace's retention and TTL on Pulsar's admin paths.
set -euo pipefail
API=${MAGNETAR_SERVICE_URL:-http://127.0.0.1:8080}
M=.venv/bin/magnetar
$M admin namespaces create public/example-delays 2>/dev/null || true   # 409 Conflict when it is there
T=persistent://public/example-delays/reminders
$M produce $T -m "later" --deliver-after-ms 2000   # Shared and Key_Shared get it in 2 s
$M consume $T -s later -t Shared -p Earliest -n 1 --timeout 10 | grep "content:later"
# retention and TTL on Pulsar's admin paths
curl -s -X POST $API/admin/v2/namespaces/public/example-delays/retention \
  -H 'content-type: application/json' -d '{"retentionTimeInMinutes":60,"retentionSizeInMB":-1}'
curl -s -X POST $API/admin/v2/namespaces/public/example-delays/messageTTL -d 3600
curl -s $API/admin/v2/namespaces/public/example-delays/messageTTL
echo
