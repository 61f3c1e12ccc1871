#!/usr/bin/env bash
# The real-client compatibility suite (compat/README.md): installs the
# third-party clients it drives when they are missing, then runs the suite
# (compat/cmd/compat), which builds and starts samsa, runs every client's
# scenarios, prints the matrix, writes compat/RESULTS.md and ends with
# "compat: N passed, M failed". `make compat` calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

py=${COMPAT_PYTHON:-/usr/bin/python3}
sudo=
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi

# Debian packages, installed the way a user installs them.
missing=()
have_py() { [ -x "$py" ] && "$py" -c "import $1" >/dev/null 2>&1; }
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
have_py confluent_kafka || missing+=(python3-confluent-kafka)
have_py kafka || missing+=(python3-kafka)
# kafka-python's snappy, lz4 and zstd codecs.
have_py snappy || missing+=(python3-snappy)
have_py lz4.frame || missing+=(python3-lz4)
have_py zstandard || missing+=(python3-zstandard)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# A failed install is reported, not fatal: the suite then fails that
# client's cells as not installed, and the matrix still comes out.
if [ ${#missing[@]} -gt 0 ]; then
	echo "compat: installing ${missing[*]}" >&2
	if ! { $sudo apt-get update &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"; }; then
		echo "compat: apt-get install ${missing[*]} failed" >&2
	fi
fi

# The newest confluent-kafka from PyPI (its wheels bundle a current
# librdkafka), in a virtual environment of the suite's own, for the
# confluent-kafka-python-pypi row.
venv=compat/python/.venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import confluent_kafka" >/dev/null 2>&1; then
	echo "compat: pip install confluent-kafka into $venv" >&2
	{ python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check confluent-kafka; } ||
		echo "compat: pip install confluent-kafka failed" >&2
fi

# kafkajs and its codec packages, pinned by package-lock.json. Install
# scripts are not run: every package used is plain JavaScript.
stamp=compat/kafkajs/node_modules/.compat-package-lock.json
if ! cmp -s compat/kafkajs/package-lock.json "$stamp"; then
	echo "compat: npm ci in compat/kafkajs" >&2
	if (cd compat/kafkajs && npm ci --ignore-scripts --no-audit --no-fund); then
		cp compat/kafkajs/package-lock.json "$stamp"
	else
		echo "compat: npm ci failed" >&2
	fi
fi

# The Java driver and Kafka's tools (compat/java/pom.xml): kafka-clients,
# kafka-tools and kafka_2.13 from Maven Central into Maven's local repository
# (~/.m2, or SAMSA_MAVEN_REPO), offline when it already holds them. Needs a
# JDK 17 and Maven: Debian's openjdk-17-jdk-headless and maven.
command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1 || {
	echo "compat: installing openjdk-17-jdk-headless maven" >&2
	{ $sudo apt-get update &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends openjdk-17-jdk-headless maven; } ||
		echo "compat: apt-get install openjdk-17-jdk-headless maven failed" >&2
}
mvn_args=(-q -B -f compat/java/pom.xml)
if [ -n "${SAMSA_MAVEN_REPO:-}" ]; then mvn_args+=("-Dmaven.repo.local=$SAMSA_MAVEN_REPO"); fi
if command -v mvn >/dev/null 2>&1; then
	if ! mvn "${mvn_args[@]}" -o package >/dev/null 2>&1; then
		echo "compat: mvn package in compat/java (downloading from Maven Central)" >&2
		mvn "${mvn_args[@]}" package || echo "compat: mvn package in compat/java failed" >&2
	fi
fi

# Built rather than `go run`, which would print its own line after the
# summary when the suite fails.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/compat" ./compat/cmd/compat
status=0
# Kafka's own command-line tools and kafka-dump-log against samsa nodes
# (compat/kafkatools, about 4 minutes on 2 cores); COMPAT_KAFKA_TOOLS=0
# leaves them out. They run first so the matrix's summary line stays last.
if [ "${COMPAT_KAFKA_TOOLS:-1}" != 0 ]; then
	echo "compat: Kafka's tools against samsa (go test ./compat/kafkatools)" >&2
	SAMSA_KAFKA_TOOLS=1 go test -count=1 -timeout 15m ./compat/kafkatools/ || status=$?
fi
"$bin/compat" "$@" || status=$?
exit $status
