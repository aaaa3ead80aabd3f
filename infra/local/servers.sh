#!/usr/bin/env bash
# Real infrastructure servers on loopback for the distributed mode's tests and for CI, without
# Docker: Kafka (KRaft, from Maven Central), MongoDB wire protocol (FerretDB v1 on SQLite, built
# with Go), Redis (Debian's redis-server), S3 (Versity S3 gateway on a directory, built with Go)
# and SMTP with a REST API for reading the mail (MailDev, from npm).
#
#   infra/local/servers.sh install [server...]  download/build into the cache (idempotent)
#   infra/local/servers.sh start   [server...]  install if needed, start, wait until each answers,
#                                               write infra/local/.env.servers and print it
#   infra/local/servers.sh stop                 stop what start started (by pid files)
#   infra/local/servers.sh down    server...    stop the named servers of the running set (SIGTERM),
#                                               keeping their data: an outage, for fault tests
#   infra/local/servers.sh up      server...    start them again on their data, wait until they answer
#   infra/local/servers.sh restart server...    down, then up
#   infra/local/servers.sh status               what runs, on which port
#   infra/local/servers.sh env                  print the .env.servers of the running servers
#
# servers: kafka mongo redis s3 smtp (default: all, or $PORTAL_INFRA_SERVERS). Every port, version
# and directory is an environment variable: see the defaults below and infra/README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---------------------------------------------------------------- settings (all overridable)
HOST=${PORTAL_INFRA_HOST:-127.0.0.1}
KAFKA_PORT=${KAFKA_PORT:-29092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-29093}
MONGO_PORT=${MONGO_PORT:-27027}
REDIS_PORT=${REDIS_PORT:-26379}
S3_PORT=${S3_PORT:-27070}
SMTP_PORT=${SMTP_PORT:-21025}
MAIL_API_PORT=${MAIL_API_PORT:-28025}

KAFKA_VERSION=${KAFKA_VERSION:-4.3.1}
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms32m -Xmx512m}
# Serial GC and the C1 compiler only: a faster start and ~280 MiB instead of ~350 MiB idle RSS than
# Kafka's own G1 defaults; for load tests set KAFKA_JVM_OPTS='-XX:+UseG1GC -XX:MaxGCPauseMillis=20'.
KAFKA_JVM_OPTS=${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxMetaspaceSize=256m -XX:ReservedCodeCacheSize=64m -Xss512k -Djava.awt.headless=true}
MONGO_IMPL=${MONGO_IMPL:-ferretdb} # ferretdb | mongo-java-server
MONGO_JAVA_SERVER_VERSION=${MONGO_JAVA_SERVER_VERSION:-1.47.0}
MONGO_JAVA_SERVER_HEAP_OPTS=${MONGO_JAVA_SERVER_HEAP_OPTS:--Xms32m -Xmx256m}
VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.7.0}
S3_BUCKET=${S3_BUCKET:-portal-test}
S3_ACCESS_KEY_ID=${S3_ACCESS_KEY_ID:-portal-test-key}
S3_SECRET_ACCESS_KEY=${S3_SECRET_ACCESS_KEY:-portal-test-secret-0123456789}
S3_REGION=${S3_REGION:-us-east-1}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
# yes: Redis keeps its data across a restart in an append-only file, as a production Redis for
# BullMQ should (fault tests that stop Redis use it); no: in memory only, the quickest for CI.
REDIS_APPENDONLY=${REDIS_APPENDONLY:-no}

CACHE=${PORTAL_INFRA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/portal-infra}
# remembers the data dir of the running set (git-ignored); a second, private set (a test's) sets
# its own together with PORTAL_INFRA_DATA and PORTAL_INFRA_ENV_FILE
STATE_FILE=${PORTAL_INFRA_STATE_FILE:-$here/.servers.state}
ENV_FILE=${PORTAL_INFRA_ENV_FILE:-$here/.env.servers}
READY_TIMEOUT=${PORTAL_INFRA_READY_TIMEOUT:-60}     # seconds, per server
KAFKA_READY_TIMEOUT=${KAFKA_READY_TIMEOUT:-120}
# Kafka's client listener: plaintext, sasl_plaintext or sasl_ssl (SASL PLAIN, SCRAM-SHA-256 and
# SCRAM-SHA-512 for one user; TLS with a self-signed certificate made with keytool, its PEM
# written beside the data for clients: KAFKA_SSL_CA_FILE in the env file).
KAFKA_SECURITY=${KAFKA_SECURITY:-plaintext}
KAFKA_SASL_USERNAME=${KAFKA_SASL_USERNAME:-portal}
KAFKA_SASL_PASSWORD=${KAFKA_SASL_PASSWORD:-portal-kafka-secret-0123456789}
ALL_SERVERS="kafka mongo redis s3 smtp"

# Go's official tarball installs to /usr/local/go, which a login shell's PATH may lack
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then PATH=$PATH:/usr/local/go/bin; fi

# ---------------------------------------------------------------- helpers
say() { printf '%s\n' "$*"; }
err() { printf 'servers.sh: %s\n' "$*" >&2; }
die() { err "$*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else die "need root or sudo for: $*"; fi; }

servers_from_args() {
  local list=("$@")
  if [ ${#list[@]} -eq 0 ]; then read -r -a list <<< "${PORTAL_INFRA_SERVERS:-$ALL_SERVERS}"; fi
  for s in "${list[@]}"; do
    case " $ALL_SERVERS " in *" $s "*) ;; *) die "unknown server '$s' (known: $ALL_SERVERS)";; esac
  done
  SERVERS="${list[*]}"
}
wants() { case " $SERVERS " in *" $1 "*) return 0;; *) return 1;; esac; }

data_dir() {
  if [ -n "${PORTAL_INFRA_DATA:-}" ]; then printf '%s\n' "$PORTAL_INFRA_DATA"
  elif [ -f "$STATE_FILE" ]; then sed -n 's/^DATA=//p' "$STATE_FILE"
  else printf '%s\n' "${TMPDIR:-/tmp}/portal-infra-$(id -u)"; fi
}

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
# the pid file's process, if it is still the one we started (guards against reused pids)
running_pid() {
  local f=$1/pids/$2.pid pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  pid_alive "$pid" || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$(marker "$2")" || return 1
  printf '%s\n' "$pid"
}
marker() {
  case $1 in
    kafka) echo 'kafka.Kafka' ;;
    mongo) echo 'ferretdb-sqlite\|PortalMongoServer' ;;
    redis) echo 'redis-server' ;;
    s3) echo 'versitygw' ;;
    smtp) echo 'maildev' ;;
  esac
}
port_busy() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

need() { command -v "$1" >/dev/null || die "$1 is needed ($2)"; }

java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\)[."].*/\1/p' | head -n 1; }

# ---------------------------------------------------------------- install
kafka_dir() { echo "$CACHE/kafka-$KAFKA_VERSION"; }
ferretdb_bin() {
  local h
  h=$(cat "$here/ferretdb/go.mod" "$here/ferretdb/go.sum" "$here/ferretdb/main.go" | sha256sum | cut -c1-12)
  echo "$CACHE/ferretdb/ferretdb-sqlite-$h"
}
mjs_dir() { echo "$CACHE/mongo-java-server-$MONGO_JAVA_SERVER_VERSION"; }
versitygw_bin() { echo "$CACHE/versitygw-$VERSITYGW_VERSION/versitygw"; }
maildev_dir() {
  local h
  h=$(cat "$here/maildev/package.json" "$here/maildev/package-lock.json" | sha256sum | cut -c1-12)
  echo "$CACHE/maildev-$h"
}

install_redis() {
  if command -v "$REDIS_SERVER" >/dev/null; then say "redis: $("$REDIS_SERVER" --version | cut -d' ' -f1-3) (already installed)"; return; fi
  command -v apt-get >/dev/null || die "redis-server is missing and there is no apt-get: install Redis >= 6.2 and set REDIS_SERVER"
  say "redis: apt-get install redis-server"
  export DEBIAN_FRONTEND=noninteractive
  # --no-install-recommends; the package's own system service is not used (we run our own process)
  as_root apt-get install -y -qq --no-install-recommends redis-server >/dev/null 2>&1 \
    || { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends redis-server >/dev/null; }
  command -v "$REDIS_SERVER" >/dev/null || die "redis-server still not found after apt-get install"
  say "redis: installed $("$REDIS_SERVER" --version | cut -d' ' -f1-3)"
}

mvn_copy_deps() { # <dir> <dependencies xml>
  local dir=$1 deps=$2
  mkdir -p "$dir"
  cat > "$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.portal-infra</groupId><artifactId>runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
$deps
  </dependencies>
</project>
EOF
  rm -rf "$dir/libs.tmp"
  # shellcheck disable=SC2086
  mvn -B -q -f "$dir/pom.xml" ${PORTAL_INFRA_MAVEN_OPTS:-} dependency:copy-dependencies \
    -DoutputDirectory="$dir/libs.tmp" -DincludeScope=runtime > "$dir/mvn.log" 2>&1 \
    || { err "mvn dependency:copy-dependencies failed in $dir:"; tail -n 40 "$dir/mvn.log" >&2; return 1; }
  rm -rf "$dir/libs" && mv "$dir/libs.tmp" "$dir/libs"
}

check_java() {
  need java "Java 17, e.g. apt-get install openjdk-17-jre-headless"
  local major min=11
  case $KAFKA_VERSION in 3.*) ;; *) min=17 ;; esac
  major=$(java_major)
  [ "${major:-0}" -ge "$min" ] || die "Kafka $KAFKA_VERSION needs Java $min or newer; 'java -version' says ${major:-?}"
}

install_kafka() {
  local dir; dir=$(kafka_dir)
  check_java
  if [ -f "$dir/.complete" ]; then say "kafka: $KAFKA_VERSION (cached, $(ls "$dir/libs" | wc -l) jars)"; return; fi
  need mvn "Maven, e.g. apt-get install maven"
  local binding
  case $KAFKA_VERSION in
    3.*) binding='<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>' ;;
    *) binding='<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.25.3</version></dependency>' ;;
  esac
  say "kafka: resolving org.apache.kafka:kafka_2.13:$KAFKA_VERSION and its runtime dependencies with Maven"
  mvn_copy_deps "$dir" "    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    $binding"
  touch "$dir/.complete"
  say "kafka: $KAFKA_VERSION installed ($(ls "$dir/libs" | wc -l) jars, $(du -sh "$dir/libs" | cut -f1))"
}

install_ferretdb() {
  local bin; bin=$(ferretdb_bin)
  if [ -x "$bin" ]; then say "mongo: FerretDB v1.24.0 on SQLite (cached $(basename "$bin"))"; return; fi
  need go "Go >= 1.22"
  say "mongo: building FerretDB v1.24.0 (SQLite backend) from infra/local/ferretdb with Go"
  mkdir -p "$(dirname "$bin")"
  (cd "$here/ferretdb" && go build -buildvcs=false -trimpath -ldflags='-s -w' -o "$bin.tmp" .)
  mv "$bin.tmp" "$bin"
  say "mongo: built $(basename "$bin")"
}

install_mongo_java_server() {
  local dir; dir=$(mjs_dir)
  if [ -f "$dir/.complete" ] && [ "$dir/classes/PortalMongoServer.class" -nt "$here/mongo-java-server/PortalMongoServer.java" ]; then
    say "mongo: mongo-java-server $MONGO_JAVA_SERVER_VERSION (cached)"; return
  fi
  need java "Java 17"; need javac "a JDK (javac)"; need mvn "Maven"
  say "mongo: resolving de.bwaldvogel:mongo-java-server-memory-backend:$MONGO_JAVA_SERVER_VERSION with Maven"
  mvn_copy_deps "$dir" "    <dependency><groupId>de.bwaldvogel</groupId><artifactId>mongo-java-server-memory-backend</artifactId><version>$MONGO_JAVA_SERVER_VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>2.0.17</version></dependency>"
  rm -rf "$dir/classes" && mkdir -p "$dir/classes"
  javac -d "$dir/classes" -cp "$dir/libs/*" "$here/mongo-java-server/PortalMongoServer.java"
  touch "$dir/.complete"
  say "mongo: mongo-java-server $MONGO_JAVA_SERVER_VERSION installed"
}

install_mongo() {
  case $MONGO_IMPL in
    ferretdb) install_ferretdb ;;
    mongo-java-server) install_mongo_java_server ;;
    *) die "MONGO_IMPL must be ferretdb or mongo-java-server, not '$MONGO_IMPL'" ;;
  esac
}

install_s3() {
  local bin; bin=$(versitygw_bin)
  if [ -x "$bin" ]; then say "s3: versitygw $VERSITYGW_VERSION (cached)"; return; fi
  need go "Go >= 1.25 (or a Go that can fetch its toolchain)"
  say "s3: go install github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  local tmp; tmp=$(dirname "$bin").tmp
  rm -rf "$tmp" && mkdir -p "$tmp"
  GOBIN=$tmp go install -buildvcs=false -trimpath -ldflags='-s -w' "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  rm -rf "$(dirname "$bin")" && mv "$tmp" "$(dirname "$bin")"
  say "s3: built versitygw $VERSITYGW_VERSION"
}

install_smtp() {
  local dir; dir=$(maildev_dir)
  if [ -f "$dir/.complete" ]; then say "smtp: maildev $(node -p "require('$dir/node_modules/maildev/package.json').version") (cached)"; return; fi
  need node "Node.js >= 18"; need npm "npm"
  say "smtp: npm ci maildev (versions pinned by infra/local/maildev/package-lock.json)"
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  cp "$here/maildev/package.json" "$here/maildev/package-lock.json" "$dir.tmp/"
  (cd "$dir.tmp" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
  touch "$dir.tmp/.complete"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
  say "smtp: maildev $(node -p "require('$dir/node_modules/maildev/package.json').version") installed"
}

cmd_install() {
  servers_from_args "$@"
  need node "Node.js (the readiness probes and MailDev run on it)"
  mkdir -p "$CACHE/logs"
  exec 9>"$CACHE/.install.lock"
  flock -w 900 9 || die "another install holds $CACHE/.install.lock"
  local t0; t0=$(now)
  say "install: cache $CACHE"
  # Independent downloads/builds run side by side (the two Go builds too: much of FerretDB's build
  # is one huge package, modernc.org/sqlite, compiled on one core). Each step logs to
  # $CACHE/logs/install-<step>.log.
  local -a names=() pids=()
  run_bg() {
    local name=$1; shift
    ( local s; s=$(now); "$@"; say "  ($name: $(since "$s") s)" ) > "$CACHE/logs/install-$name.log" 2>&1 &
    names+=("$name"); pids+=($!)
  }
  wants redis && run_bg redis install_redis
  wants kafka && run_bg kafka install_kafka
  wants smtp && run_bg smtp install_smtp
  wants mongo && run_bg mongo install_mongo
  wants s3 && run_bg s3 install_s3
  local i failed=0
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then sed 's/^/  /' "$CACHE/logs/install-${names[$i]}.log"
    else failed=1; err "install of ${names[$i]} failed; the end of $CACHE/logs/install-${names[$i]}.log:"; tail -n 30 "$CACHE/logs/install-${names[$i]}.log" >&2; fi
  done
  exec 9>&-
  [ $failed -eq 0 ] || die "install failed"
  say "install: done in $(since "$t0") s"
}

# ---------------------------------------------------------------- start
launch() { # <name> <dir> <cmd...>: start detached, log to logs/<name>.log, pid to pids/<name>.pid
  local name=$1 dir=$2; shift 2
  ( cd "$dir" && exec setsid "$@" ) > "$DATA/logs/$name.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$DATA/pids/$name.pid"
}

start_kafka() {
  local dir=$DATA/kafka libs proto; libs=$(kafka_dir)/libs
  mkdir -p "$dir"
  case $KAFKA_SECURITY in
    plaintext) proto=PLAINTEXT ;;
    sasl_plaintext) proto=SASL_PLAINTEXT ;;
    sasl_ssl) proto=SASL_SSL ;;
    *) err "KAFKA_SECURITY must be plaintext, sasl_plaintext or sasl_ssl"; return 1 ;;
  esac
  cat > "$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=$proto://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=$proto://$HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=$proto
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
log.dirs=$dir/log
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
auto.create.topics.enable=true
delete.topic.enable=true
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
log.retention.hours=24
log.segment.bytes=67108864
EOF
  if [ "$proto" != PLAINTEXT ]; then
    local listener jaas_user
    listener=$(echo "$proto" | tr 'A-Z' 'a-z')
    jaas_user="username=\"$KAFKA_SASL_USERNAME\" password=\"$KAFKA_SASL_PASSWORD\""
    cat >> "$dir/server.properties" <<EOF
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.$listener.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required $jaas_user user_$KAFKA_SASL_USERNAME="$KAFKA_SASL_PASSWORD";
listener.name.$listener.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.$listener.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
EOF
  fi
  if [ "$proto" = SASL_SSL ]; then
    local tls=$dir/tls pass=portal-infra-tls
    mkdir -p "$tls"
    if [ ! -f "$tls/broker.p12" ]; then
      keytool -genkeypair -alias broker -keyalg RSA -keysize 2048 -validity 30 -dname "CN=$HOST" -ext "SAN=ip:$HOST,dns:localhost" \
        -keystore "$tls/broker.p12" -storetype PKCS12 -storepass "$pass" -keypass "$pass" >/dev/null 2>&1 || { err "keytool could not make the broker's key"; return 1; }
      keytool -exportcert -rfc -alias broker -keystore "$tls/broker.p12" -storepass "$pass" > "$tls/ca.pem" 2>/dev/null
      keytool -importcert -noprompt -alias broker -file "$tls/ca.pem" -keystore "$tls/trust.p12" -storetype PKCS12 -storepass "$pass" >/dev/null 2>&1
    fi
    cat >> "$dir/server.properties" <<EOF
ssl.keystore.type=PKCS12
ssl.keystore.location=$tls/broker.p12
ssl.keystore.password=$pass
ssl.key.password=$pass
ssl.truststore.type=PKCS12
ssl.truststore.location=$tls/trust.p12
ssl.truststore.password=$pass
EOF
  fi
  local logcfg
  case $KAFKA_VERSION in
    3.*)
      cat > "$dir/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN
EOF
      logcfg="-Dlog4j.configuration=file:$dir/log4j.properties" ;;
    *)
      cat > "$dir/log4j2.properties" <<'EOF'
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = warn
logger.state.name = state.change.logger
logger.state.level = warn
EOF
      logcfg="-Dlog4j2.configurationFile=$dir/log4j2.properties" ;;
  esac
  if [ ! -f "$dir/log/meta.properties" ]; then
    local cluster_id
    # A base64url id may begin with '-', which the storage tool would read as an option
    # (Kafka's own random-uuid never hands one out): draw again until it does not.
    cluster_id=-
    while [ "${cluster_id#-}" != "$cluster_id" ]; do
      cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
    done
    # shellcheck disable=SC2086
    local scram=()
    if [ "$proto" != PLAINTEXT ]; then
      scram=(--add-scram "SCRAM-SHA-256=[name=$KAFKA_SASL_USERNAME,password=$KAFKA_SASL_PASSWORD]" --add-scram "SCRAM-SHA-512=[name=$KAFKA_SASL_USERNAME,password=$KAFKA_SASL_PASSWORD]")
    fi
    java -Xmx256m $logcfg -cp "$libs/*" kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/server.properties" "${scram[@]}" \
      > "$DATA/logs/kafka-format.log" 2>&1 || { err "kafka storage format failed:"; tail -n 20 "$DATA/logs/kafka-format.log" >&2; return 1; }
  fi
  # shellcheck disable=SC2086
  launch kafka "$dir" java $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS $logcfg -cp "$libs/*" kafka.Kafka "$dir/server.properties"
}

start_mongo() {
  mkdir -p "$DATA/mongo"
  # shellcheck disable=SC2086 # *_OPTS are word lists
  case $MONGO_IMPL in
    ferretdb) launch mongo "$DATA/mongo" "$(ferretdb_bin)" -listen "$HOST:$MONGO_PORT" -dir "$DATA/mongo/sqlite" -log-level "${FERRETDB_LOG_LEVEL:-warn}" ;;
    mongo-java-server) launch mongo "$DATA/mongo" java $MONGO_JAVA_SERVER_HEAP_OPTS -cp "$(mjs_dir)/libs/*:$(mjs_dir)/classes" PortalMongoServer "$HOST" "$MONGO_PORT" ;;
  esac
}

start_redis() {
  mkdir -p "$DATA/redis"
  launch redis "$DATA/redis" "$REDIS_SERVER" --bind "$HOST" --port "$REDIS_PORT" --dir "$DATA/redis" \
    --save '' --appendonly "$REDIS_APPENDONLY" --appendfsync everysec --daemonize no --protected-mode yes --logfile '' --databases 16
}

start_s3() {
  mkdir -p "$DATA/s3/buckets"
  launch s3 "$DATA/s3" env ROOT_ACCESS_KEY_ID="$S3_ACCESS_KEY_ID" ROOT_SECRET_ACCESS_KEY="$S3_SECRET_ACCESS_KEY" \
      "$(versitygw_bin)" --port "$HOST:$S3_PORT" --region "$S3_REGION" --health /health --quiet \
      posix "$DATA/s3/buckets"
}

start_smtp() {
  mkdir -p "$DATA/smtp/mail"
  launch smtp "$DATA/smtp" node "$(maildev_dir)/node_modules/maildev/bin/maildev" --ip "$HOST" --web-ip "$HOST" \
    --smtp "$SMTP_PORT" --web "$MAIL_API_PORT" --mail-directory "$DATA/smtp/mail"
}

probe_spec() { # JSON for probe.mjs
  local specs=() pid
  pid() { cat "$DATA/pids/$1.pid"; }
  # A SASL or TLS listener is not spoken by the probe: it waits for the broker's log line instead.
  local kafka_kind=kafka; [ "$KAFKA_SECURITY" = plaintext ] || kafka_kind=kafka-log
  wants kafka && specs+=("{\"name\":\"kafka\",\"kind\":\"$kafka_kind\",\"log\":\"$DATA/logs/kafka.log\",\"host\":\"$HOST\",\"port\":$KAFKA_PORT,\"pid\":$(pid kafka),\"timeout\":$KAFKA_READY_TIMEOUT}")
  wants mongo && specs+=("{\"name\":\"mongo\",\"kind\":\"mongo\",\"host\":\"$HOST\",\"port\":$MONGO_PORT,\"pid\":$(pid mongo),\"timeout\":$READY_TIMEOUT}")
  wants redis && specs+=("{\"name\":\"redis\",\"kind\":\"redis\",\"host\":\"$HOST\",\"port\":$REDIS_PORT,\"pid\":$(pid redis),\"timeout\":$READY_TIMEOUT}")
  wants s3 && specs+=("{\"name\":\"s3\",\"kind\":\"s3\",\"host\":\"$HOST\",\"port\":$S3_PORT,\"pid\":$(pid s3),\"timeout\":$READY_TIMEOUT,\"healthPath\":\"/health\",\"bucket\":\"$S3_BUCKET\",\"region\":\"$S3_REGION\",\"accessKey\":\"$S3_ACCESS_KEY_ID\",\"secretKey\":\"$S3_SECRET_ACCESS_KEY\"}")
  if wants smtp; then
    specs+=("{\"name\":\"smtp\",\"kind\":\"smtp\",\"host\":\"$HOST\",\"port\":$SMTP_PORT,\"pid\":$(pid smtp),\"timeout\":$READY_TIMEOUT}")
    specs+=("{\"name\":\"smtp-api\",\"kind\":\"http\",\"host\":\"$HOST\",\"port\":$MAIL_API_PORT,\"path\":\"/email\",\"pid\":$(pid smtp),\"timeout\":$READY_TIMEOUT}")
  fi
  local IFS=,
  printf '[%s]\n' "${specs[*]}"
}

write_env() {
  {
    echo "# written by infra/local/servers.sh start at $(date -u +%FT%TZ); data in $DATA"
    wants kafka && echo "KAFKA_BROKERS=$HOST:$KAFKA_PORT"
    if wants kafka && [ "$KAFKA_SECURITY" != plaintext ]; then
      echo "KAFKA_SASL_MECHANISM=plain"
      echo "KAFKA_SASL_USERNAME=$KAFKA_SASL_USERNAME"
      echo "KAFKA_SASL_PASSWORD=$KAFKA_SASL_PASSWORD"
      if [ "$KAFKA_SECURITY" = sasl_ssl ]; then echo "KAFKA_SSL=true"; echo "KAFKA_SSL_CA_FILE=$DATA/kafka/tls/ca.pem"; fi
    fi
    wants mongo && echo "MONGO_URL=mongodb://$HOST:$MONGO_PORT"
    wants redis && echo "REDIS_URL=redis://$HOST:$REDIS_PORT"
    if wants s3; then
      echo "S3_ENDPOINT=http://$HOST:$S3_PORT"
      echo "S3_BUCKET=$S3_BUCKET"
      echo "S3_ACCESS_KEY_ID=$S3_ACCESS_KEY_ID"
      echo "S3_SECRET_ACCESS_KEY=$S3_SECRET_ACCESS_KEY"
      echo "S3_REGION=$S3_REGION"
      echo "S3_FORCE_PATH_STYLE=true"
    fi
    if wants smtp; then
      echo "SMTP_URL=smtp://$HOST:$SMTP_PORT"
      echo "MAIL_API=http://$HOST:$MAIL_API_PORT"
    fi
  } > "$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cp "$ENV_FILE" "$DATA/env"
}

cmd_start() {
  servers_from_args "$@"
  DATA=$(data_dir)
  local s pid busy=()
  if [ -d "$DATA/pids" ]; then
    for s in $ALL_SERVERS; do
      if pid=$(running_pid "$DATA" "$s"); then busy+=("$s (pid $pid)"); fi
    done
    [ ${#busy[@]} -eq 0 ] || die "already running from $DATA: ${busy[*]}; run '$0 stop' first"
  fi
  local port
  for port in \
    $(wants kafka && echo "$KAFKA_PORT $KAFKA_CONTROLLER_PORT") $(wants mongo && echo "$MONGO_PORT") \
    $(wants redis && echo "$REDIS_PORT") $(wants s3 && echo "$S3_PORT") $(wants smtp && echo "$SMTP_PORT $MAIL_API_PORT"); do
    if port_busy "$port"; then die "port $HOST:$port is already in use; set its *_PORT variable (see infra/README.md)"; fi
  done

  # shellcheck disable=SC2086 # a word list
  cmd_install $SERVERS

  local t0; t0=$(now)
  mkdir -p "$DATA"
  DATA=$(cd "$DATA" && pwd)
  if [ "${PORTAL_INFRA_KEEP_DATA:-0}" != 1 ]; then
    rm -rf "$DATA/kafka" "$DATA/mongo" "$DATA/redis" "$DATA/s3" "$DATA/smtp" "$DATA/logs" "$DATA/pids" "$DATA/env"
  fi
  mkdir -p "$DATA/logs" "$DATA/pids"
  printf 'DATA=%s\n' "$DATA" > "$STATE_FILE"
  say "start: data and logs in $DATA"

  trap 'err "start interrupted; stopping what was started"; stop_all; exit 130' INT TERM
  for s in $SERVERS; do "start_$s" || { stop_all; die "could not start $s"; }; done

  local out rc=0
  out=$(node "$here/probe.mjs" "$(probe_spec)") || rc=$?
  printf '%s\n' "$out" | sed 's/^/  /'
  if [ $rc -ne 0 ]; then
    local line name
    while read -r line; do
      name=$(echo "$line" | awk '{print $2}'); name=${name%-api}
      err "$name did not become ready; the end of $DATA/logs/$name.log:"
      tail -n 40 "$DATA/logs/$name.log" >&2 || true
    done < <(printf '%s\n' "$out" | grep '^FAIL')
    stop_all
    die "start failed after $(since "$t0") s (servers stopped; logs kept in $DATA/logs)"
  fi
  trap - INT TERM
  write_env
  say "start: all ready in $(since "$t0") s; addresses in $ENV_FILE:"
  grep -v '^#' "$ENV_FILE"
}

# ---------------------------------------------------------------- stop / status
stop_all() {
  local s pid pids=() names=()
  for s in $ALL_SERVERS; do
    if pid=$(running_pid "$DATA" "$s"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid"); names+=("$s")
    fi
  done
  local i deadline=$((SECONDS + ${PORTAL_INFRA_STOP_TIMEOUT:-30}))
  for i in "${!pids[@]}"; do
    while pid_alive "${pids[$i]}" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    if pid_alive "${pids[$i]}"; then
      err "${names[$i]} (pid ${pids[$i]}) did not stop on SIGTERM; sending SIGKILL"
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
    say "stopped ${names[$i]} (pid ${pids[$i]})"
  done
  rm -f "$DATA"/pids/*.pid 2>/dev/null || true
  [ ${#pids[@]} -gt 0 ] || say "nothing was running (data dir $DATA)"
}

cmd_stop() {
  DATA=$(data_dir)
  stop_all
  rm -f "$ENV_FILE" "$STATE_FILE"
}

cmd_status() {
  DATA=$(data_dir)
  local s pid port any=0 down=0
  say "data dir: $DATA"
  for s in $ALL_SERVERS; do
    case $s in kafka) port=$KAFKA_PORT;; mongo) port=$MONGO_PORT;; redis) port=$REDIS_PORT;; s3) port=$S3_PORT;; smtp) port="$SMTP_PORT (api $MAIL_API_PORT)";; esac
    if pid=$(running_pid "$DATA" "$s"); then
      any=1
      printf '  %-6s running  pid %-8s %s:%s  rss %s MiB\n' "$s" "$pid" "$HOST" "$port" "$(( $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024 ))"
    elif [ -f "$DATA/pids/$s.pid" ]; then
      down=1; printf '  %-6s DEAD     (pid %s gone; see %s)\n' "$s" "$(cat "$DATA/pids/$s.pid")" "$DATA/logs/$s.log"
    else
      printf '  %-6s stopped\n' "$s"
    fi
  done
  [ $any -eq 0 ] || { [ -f "$ENV_FILE" ] && say "env file: $ENV_FILE"; }
  [ $down -eq 0 ]
}

cmd_env() { [ -f "$ENV_FILE" ] || die "no $ENV_FILE: nothing started"; grep -v '^#' "$ENV_FILE"; }

# Stops the named running servers (SIGTERM, like an orchestrator's or a node's) and keeps their
# data: the other servers of the set run on, as in an outage of one dependency.
cmd_down() {
  [ $# -gt 0 ] || die "down needs server names (known: $ALL_SERVERS)"
  servers_from_args "$@"
  DATA=$(data_dir)
  local s pid deadline
  for s in $SERVERS; do
    if pid=$(running_pid "$DATA" "$s"); then
      kill -TERM "$pid" 2>/dev/null || true
      deadline=$((SECONDS + ${PORTAL_INFRA_STOP_TIMEOUT:-30}))
      while pid_alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
      pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
      say "stopped $s (pid $pid)"
    fi
    rm -f "$DATA/pids/$s.pid"
  done
}

# Starts the named servers again on their existing data (after down) and waits until they answer.
cmd_up() {
  [ $# -gt 0 ] || die "up needs server names (known: $ALL_SERVERS)"
  servers_from_args "$@"
  DATA=$(data_dir)
  local s pid
  for s in $SERVERS; do
    if pid=$(running_pid "$DATA" "$s"); then die "$s is running (pid $pid)"; fi
    "start_$s" || die "could not start $s again"
  done
  local out rc=0
  out=$(node "$here/probe.mjs" "$(probe_spec)") || rc=$?
  printf '%s\n' "$out" | sed 's/^/  /'
  [ $rc -eq 0 ] || die "a server did not become ready (logs in $DATA/logs)"
  say "up: $SERVERS ready"
}

# Down, then up: for fault tests such as restarting the Kafka broker while events flow.
cmd_restart() {
  cmd_down "$@"
  cmd_up "$@"
}

case ${1:-} in
  install) shift; cmd_install "$@" ;;
  start) shift; cmd_start "$@" ;;
  restart) shift; cmd_restart "$@" ;;
  down) shift; cmd_down "$@" ;;
  up) shift; cmd_up "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2 ;;
esac
