#!/usr/bin/env bash
# Pulsar Functions run on the service: `magnetar functions create` takes pulsar-admin's flags;
# the service runs `process` on each message of the inputs and publishes what it returns to
# the output, effectively once. Run it while `make run` serves: `bash examples/functions.sh`.
set -euo pipefail
M=.venv/bin/magnetar
dir=$(mktemp -d)
cat > "$dir/exclaim.py" <<'PY'
import magnetar as pulsar

class Exclaim(pulsar.Function):
    def process(self, input, context):
        return input + "!"
PY
# create it the first time, update it after (409 Conflict: it exists)
$M functions create --py "$dir/exclaim.py" --classname exclaim.Exclaim \
    --inputs example-words --output example-loud --name example-exclaim 2>/dev/null \
  || $M functions update --py "$dir/exclaim.py" --classname exclaim.Exclaim \
    --inputs example-words --output example-loud --name example-exclaim
$M produce example-words -m "hello"
$M consume example-loud -s tour -p Earliest -n 1 --timeout 10 | grep "content:hello!"
rm -r "$dir"
