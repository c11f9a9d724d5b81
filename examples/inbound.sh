#!/usr/bin/env bash
# Inbound sources publish what AWS services send (S3 uploads, SNS notifications, EventBridge
# events, schedules) into topics, each event once. On AWS those services invoke
# IngestFunction; locally `magnetar invoke` hands it an event, as `sam local invoke` does
# (samples: events/inbound/; the template's IngestRoutes send EventBridge events to
# inbound-events, keyed by detail.orderId). Run it while `make run` serves.
set -euo pipefail
M=.venv/bin/magnetar
$M invoke IngestFunction --event events/inbound/eventbridge_rule.json >/dev/null   # stored once
$M invoke IngestFunction --event events/inbound/eventbridge_rule.json | grep -o '"duplicate": true'
$M admin topics examine-message inbound-events -i earliest -m 1 | grep -o "o-1001" | head -1
