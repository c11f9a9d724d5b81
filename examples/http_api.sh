#!/usr/bin/env bash
# The HTTP API with curl: produce, subscribe, long-poll receive, ack by the ids received,
# admin on Pulsar's paths, metrics, and an error. Run it while `make run` serves:
# `bash examples/http_api.sh`.
set -euo pipefail
API=${MAGNETAR_SERVICE_URL:-http://127.0.0.1:8080}
T=$API/v1/persistent/public/default/example-payments
field() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }

# produce (payloads are base64): one entry holding two messages
curl -s -X POST $T/messages -H 'content-type: application/json' \
  -d '{"messages":[{"payload":"aGVsbG8=","key":"k1"},{"payload":"d29ybGQ=","properties":{"a":"b"}}]}'
echo
# subscribe a consumer, long-poll up to 2 s, then ack exactly the ids that came
CID=$(curl -s -X POST $T/subscriptions/audit/consumers -H 'content-type: application/json' \
  -d '{"subscriptionType":"Shared","initialPosition":"Earliest"}' | field '["consumerId"]')
RECEIVED=$(curl -s -X POST $T/subscriptions/audit/consumers/$CID/receive -d '{"maxMessages":10,"waitMs":2000}')
echo "$RECEIVED"
IDS=$(echo "$RECEIVED" | python3 -c 'import json, sys; print(json.dumps({"messageIds": [m["messageId"] for m in json.load(sys.stdin)["messages"]]}))')
curl -s -X POST $T/subscriptions/audit/consumers/$CID/ack -d "$IDS"
echo
curl -s -X DELETE $T/subscriptions/audit/consumers/$CID   # close the consumer
echo

# admin, on Pulsar's paths: a partitioned topic (409 Conflict once it exists), a topic's stats
curl -s -o /dev/null \
  -X PUT $API/admin/v2/persistent/public/default/example-views/partitions -d 2
curl -s $API/admin/v2/persistent/public/default/example-views/partitions
echo
curl -s $API/admin/v2/persistent/public/default/example-payments/stats \
  | field '["subscriptions"]["audit"]["msgBacklog"]'       # 0: everything was acknowledged

# metrics in Prometheus' text format, Pulsar's names (the local stack's own path)
curl -s $API/metrics | grep -cE '^pulsar_(in|out)_messages_total' >/dev/null && echo "metrics: yes"

# errors name Pulsar's result, say what to do, and change nothing
curl -s -X POST "$API/v1/persistent/public/default/bad%20name/messages" -d '{}'
echo
