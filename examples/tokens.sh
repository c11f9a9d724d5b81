#!/usr/bin/env bash
# `magnetar tokens` has `pulsar tokens`' verbs, flags and files (the client's `tokens` extra,
# `pip install './sdk[tokens]'`; `make install` has it). No service needed.
set -euo pipefail
KEYS=$(mktemp -d)
.venv/bin/magnetar tokens create-secret-key --output $KEYS/secret.key      # HS256, mode 0600
TOKEN=$(.venv/bin/magnetar tokens create --secret-key file://$KEYS/secret.key \
          --subject billing --expiry-time 1h)
.venv/bin/magnetar tokens show "$TOKEN" | grep -o '"sub": "billing"'        # {"alg": "HS256"} --- {"sub": "billing", "exp": ...}
.venv/bin/magnetar tokens validate --secret-key file://$KEYS/secret.key "$TOKEN" | grep -o '"sub": "billing"'
rm -r $KEYS
