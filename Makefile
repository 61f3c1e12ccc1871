# Project tasks. Document each target with a "## " comment after its name;
# `make help` lists them.

.PHONY: help check vet test compat ecosystem bench-smoke soak kafka-jars diffcheck diffcheck-short

help: ## list the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

check: vet test compat ecosystem ## everything CI runs (.ci/run): vet, unit and integration tests, the compat suite, Kafka Streams and Connect

vet: ## go vet over every package
	go vet ./...

# The race detector runs on every package (most share state between
# goroutines) and the invariants tag turns on the expensive checks.
# -count=1: the cluster tests build cmd/samsa themselves, which Go's test
# cache cannot see, so a cached result could stand for older server code.
test: ## unit and integration tests with -race and the invariants build tag
	go test -count=1 -race -tags invariants -timeout 25m ./...

compat: ## real Kafka clients against a fresh samsa node; writes compat/RESULTS.md (compat/README.md)
	bash compat/run.sh

ecosystem: ## Kafka Streams (exactly_once_v2 word count) and Kafka Connect (distributed, exactly-once source) against a 3-node samsa cluster with failures (compat/ecosystem)
	mvn -q -B -f compat/java/pom.xml $(if $(SAMSA_MAVEN_REPO),-Dmaven.repo.local=$(SAMSA_MAVEN_REPO)) -o package 2>/dev/null || \
		mvn -q -B -f compat/java/pom.xml $(if $(SAMSA_MAVEN_REPO),-Dmaven.repo.local=$(SAMSA_MAVEN_REPO)) package
	SAMSA_ECOSYSTEM=1 go test -count=1 -timeout 15m ./compat/ecosystem/

bench-smoke: ## every benchmark workload for a moment against Samsa, Apache Kafka and kfake: proves bench/ works (bench/README.md)
	go run ./bench -smoke

# Maven's local repository is $(SAMSA_MAVEN_REPO) when set (CI points it at
# a cache of its own), else Maven's default.
kafka-jars: ## resolve Apache Kafka 4.4.0's jars from Maven Central into bench/kafka/target/classpath.txt
	mvn -B -q -f bench/kafka/pom.xml $(if $(SAMSA_MAVEN_REPO),-Dmaven.repo.local=$(SAMSA_MAVEN_REPO)) generate-resources

diffcheck: kafka-jars ## every API at every version against Apache Kafka 4.4; rewrites the table in docs/compatibility.md (about a minute)
	SAMSA_DIFFCHECK=1 SAMSA_DIFFCHECK_WRITE=1 go test -count=1 -run 'TestDifferential$$' -v ./internal/diffcheck/

diffcheck-short: kafka-jars ## the API differential at each API's oldest and newest common version only, writing nothing (CI)
	SAMSA_DIFFCHECK=short go test -count=1 -run 'TestDifferential$$' ./internal/diffcheck/

soak: ## the long fault runs: replication under hundreds of kills, pauses and restarts (about 10 minutes)
	SAMSA_SOAK=1 go test -count=1 -timeout 30m -run 'TestReplicationUnderFaults' -v ./internal/clustertest/
