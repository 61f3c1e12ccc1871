#!/usr/bin/env bash
# franz-go's own share-group integration tests (KIP-932) against a fresh
# samsa node: TestShareGroupETL, TestShareGroupAckOnClose,
# TestShareGroupOffsetsAdmin, TestShareGroup and
# TestConsumeRegexShareSkipsInternal of the franz-go version in go.mod,
# which skip themselves unless the broker advertises ShareFetch and
# ShareAcknowledge v2. `make franz-share` calls this; KGO_TEST_RECORDS
# (franz-go's, default here 50000) sizes the ETL test.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
node_pid=
cleanup() {
	if [ -n "$node_pid" ]; then kill "$node_pid" 2>/dev/null || true; wait "$node_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/samsa" ./cmd/samsa
version=$(go list -m -f '{{.Version}}' github.com/twmb/franz-go)
src=$(go list -m -f '{{.Dir}}' github.com/twmb/franz-go)
cp -r "$src" "$work/franz-go"
chmod -R u+w "$work/franz-go"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/samsa" server --override "listeners=PLAINTEXT://127.0.0.1:$port" --override "log.dirs=$work/data" \
	--override metrics.listener= --override schema.registry.listeners= \
	--override group.initial.rebalance.delay.ms=0 >"$work/samsa.log" 2>&1 &
node_pid=$!
for _ in $(seq 1 300); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	sleep 0.1
done

echo "franz-share: franz-go $version share tests against samsa on 127.0.0.1:$port" >&2
cd "$work/franz-go"
if ! KGO_SEEDS="127.0.0.1:$port" KGO_TEST_RF=1 KGO_TEST_RECORDS="${KGO_TEST_RECORDS:-50000}" \
	go test -count=1 -timeout 10m \
	-run 'TestShareGroupETL$|TestShareGroupAckOnClose$|TestShareGroupOffsetsAdmin$|TestShareGroup$|TestConsumeRegexShareSkipsInternal$' \
	-v ./pkg/kgo/ 2>&1 | grep -E '^(--- |ok|FAIL|panic|\s+share_test.go:[0-9]+: level)'; then
	echo "franz-share: failed; the node's log:" >&2
	tail -50 "$work/samsa.log" >&2
	exit 1
fi
