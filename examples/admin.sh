#!/usr/bin/env bash
# `magnetar admin` is pulsar-admin for Magnetar: the same verbs, flags and units (times 30s,
# 10m, 1h, 3d, 2w; sizes 500M, 5G), a table for people, `-o json` for scripts. Every verb:
# docs/admin-cli.md. Run it while `make run` serves: `bash examples/admin.sh`.
set -euo pipefail
M=.venv/bin/magnetar   # finds the service: --service-url, $MAGNETAR_SERVICE_URL, or make run's
NS=public/example-ops
$M admin namespaces delete $NS -f 2>/dev/null || true   # with its topics: each run starts afresh
$M admin namespaces create $NS
# namespace policies: kept 3 days or 5 GiB once acknowledged, unacknowledged expire after 1 h
$M admin namespaces set-retention $NS --size 5G --time 3d
$M admin namespaces set-message-ttl $NS -ttl 1h
$M admin namespaces get-retention $NS                # retentionSizeInMB 5120, retentionTimeInMinutes 4320
# a topic and a subscription walked through their backlog
$M admin topics create $NS/audit
$M admin topics create-subscription $NS/audit -s tour -m earliest
$M produce $NS/audit -m "a,b,c"
$M admin topics peek-messages $NS/audit -s tour -n 3  # MESSAGE ID, PUBLISH TIME, KEY, ... PAYLOAD
$M admin topics skip $NS/audit -s tour -n 1
$M admin topics stats $NS/audit -o json \
  | python3 -c 'import json, sys; print("backlog:", json.load(sys.stdin)["subscriptions"]["tour"]["msgBacklog"])'
$M admin topics reset-cursor $NS/audit -s tour -t 1h   # deliver again what came in the last hour
# quotas and rates, enforced by the service
$M admin namespaces set-backlog-quota $NS -l 1G -p producer_request_hold   # producers wait past 1 GiB of backlog
$M admin namespaces set-publish-rate $NS -m 1000      # 1000 msg/s a topic; past it, 429 and the SDK waits
$M admin namespaces get-backlog-quotas $NS
# also: set-deduplication -e, set-delayed-delivery, clear-backlog, partitioned-stats, compact, ...
