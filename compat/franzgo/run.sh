#!/usr/bin/env bash
# franz-go's own kgo test suite against a fresh samsa node, over TLS and
# with SCRAM and OAUTHBEARER, as franz-go runs it against Kafka:
#
#   KGO_SEEDS             an SSL listener (every suite client uses TLS:
#                         KGO_TEST_TLS=ca:<ca.crt>)
#   KGO_TEST_SCRAM_SEEDS  a SASL_PLAINTEXT listener, KGO_TEST_SCRAM=user:pass:512
#   KGO_TEST_OAUTH_SEEDS  the same listener, unsecured OAUTHBEARER tokens
#
#   compat/franzgo/run.sh          the short run (CI): the SASL tests and a
#                                  small produce/consume group ETL over TLS
#   compat/franzgo/run.sh full     every kgo test (tens of minutes)
#
# The suite is the franz-go module in the Go module cache at the version
# go.mod requires, copied to a scratch directory (the cache is read-only).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-short}

work=$(mktemp -d)
node_pid=
cleanup() {
	if [ -n "$node_pid" ]; then
		kill "$node_pid" 2>/dev/null || true
		wait "$node_pid" 2>/dev/null || true
	fi
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/samsa" ./cmd/samsa
franz=$(go list -m -f '{{.Dir}}' github.com/twmb/franz-go)
cp -r "$franz" "$work/franz-go"
chmod -R u+w "$work/franz-go"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
plain=$(free_port)
ssl=$(free_port)
sasl=$(free_port)
password=franz-suite-Secret-3e1f
"$work/samsa" certs --dir "$work/certs" --node node=localhost,127.0.0.1 --password "$password" >/dev/null

jaas="org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"$password\";"
"$work/samsa" server \
	--override "listeners=PLAINTEXT://127.0.0.1:$plain,SSL://127.0.0.1:$ssl,SASL_PLAINTEXT://127.0.0.1:$sasl" \
	--override "log.dirs=$work/data" \
	--override "metrics.listener=" \
	--override "ssl.keystore.type=PKCS12" \
	--override "ssl.keystore.location=$work/certs/node.p12" \
	--override "ssl.keystore.password=$password" \
	--override "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER" \
	--override "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;" \
	--override "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=$jaas" \
	--override "samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password=$password]" \
	--override "group.initial.rebalance.delay.ms=0" \
	>"$work/samsa.log" 2>&1 &
node_pid=$!
for _ in $(seq 1 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$ssl") 2>/dev/null; then break; fi
	if ! kill -0 "$node_pid" 2>/dev/null; then
		echo "franz-go suite: samsa exited:" >&2
		cat "$work/samsa.log" >&2
		exit 1
	fi
	sleep 0.1
done

export KGO_SEEDS=127.0.0.1:$ssl
export KGO_TEST_RF=1
export KGO_TEST_TLS=ca:$work/certs/ca.crt
export KGO_TEST_SCRAM=admin:$password:512
export KGO_TEST_SCRAM_SEEDS=127.0.0.1:$sasl
export KGO_TEST_OAUTH_SEEDS=127.0.0.1:$sasl
cd "$work/franz-go/pkg/kgo"
status=0
if [ "$mode" = full ]; then
	go test -count=1 -timeout 60m . || status=$?
else
	KGO_TEST_RECORDS=20000 KGO_TEST_MAX_TOPIC_PARTS=3 \
		go test -count=1 -timeout 10m -run '^(TestSCRAMAuth|TestSCRAMAuthBadCredentials|TestOAuthAuth|TestGroupETL)$' -v . \
		>"$work/suite.log" 2>&1 || status=$?
	grep -E '^\s*--- |^(PASS|FAIL|ok )' "$work/suite.log" || true
	if [ "$status" -ne 0 ]; then tail -80 "$work/suite.log" >&2; fi
fi
if [ "$status" -ne 0 ]; then
	echo "franz-go suite: failed; samsa's log:" >&2
	tail -50 "$work/samsa.log" >&2
	if grep -q "$password" "$work/samsa.log"; then echo "franz-go suite: samsa logged the password" >&2; fi
	exit "$status"
fi
if grep -q "$password" "$work/samsa.log"; then
	echo "franz-go suite: samsa logged the password" >&2
	exit 1
fi
echo "franz-go suite ($mode): ok"
