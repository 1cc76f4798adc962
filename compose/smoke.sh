#!/bin/sh
# Smoke test of compose/ on a machine with Docker (Compose v2): builds the image, brings a
# stack up, waits until its services are healthy and its connectors are created, checks data
# flows end to end, and tears everything down (volumes included) unless KEEP=1.
#
#   compose/smoke.sh              # compose/cluster.yml: also kills a broker midway
#   compose/smoke.sh secure       # the same with compose/cluster-secure.yml (runs gen-certs.sh)
#   compose/smoke.sh quickstart   # compose/quickstart.yml
#
# cluster: the sample application's log lines go file source -> topic app-logs (3 replicas)
# -> file sink (/var/lib/sluice/app-logs.txt on the workers' shared volume); broker-2 is killed, 100 more
# lines must arrive, broker-2 is started again; the Spark pipeline's per-minute counts must
# appear in app-logs-per-minute. quickstart: the CDC topic holds the sample
# orders, the bucket objects of them, and the log topic the application's lines. Not run where Sluice is developed (no
# Docker engine there; docs/deploy.md); tests/compose/ checks the same files without one.
set -eu
cd "$(dirname "$0")/.."
stack=${1:-cluster}
kafka=broker-1:9092
case $stack in
  cluster | quickstart) files="-f compose/$stack.yml" ;;
  secure)
    sh compose/gen-certs.sh
    files="-f compose/cluster.yml -f compose/cluster-secure.yml"
    kafka=broker-1:9093 ;;  # the worker's SLUICE_COMMAND_CONFIG presents the hub certificate
  *) echo "usage: $0 [cluster|secure|quickstart]" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086 # $files is a list of options
dc() { docker compose $files "$@"; }
say() { printf '\033[1m[smoke]\033[0m %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; dc ps -a >&2 || true; dc logs --tail 50 >&2 || true; exit 1; }

cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then say "KEEP=1: leaving $stack up"; else dc down -v --remove-orphans >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT INT TERM

# wait_for SECONDS DESCRIPTION COMMAND...: runs COMMAND every 2 s until it succeeds.
wait_for() {
  limit=$1 what=$2
  shift 2
  waited=0
  until "$@" >/dev/null 2>&1; do
    waited=$((waited + 2))
    [ "$waited" -le "$limit" ] || fail "$what (after ${limit}s)"
    sleep 2
  done
  say "ok: $what (${waited}s)"
}

# healthy SERVICE: every container of SERVICE (a scaled service has several) is healthy.
healthy() {
  ids=$(dc ps -q "$1")
  [ -n "$ids" ] || return 1
  for id in $ids; do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$id")" = healthy ] || return 1
  done
}
exited_ok() { [ "$(docker inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$(dc ps -a -q "$1")")" = "exited 0" ]; }

say "building and starting $stack"
dc up -d --build

if [ "$stack" = quickstart ]; then
  wait_for 180 "sluice healthy" healthy sluice
  wait_for 180 "connectors created" exited_ok connectors-init
  dc exec -T sluice sluice connectors list
  orders() { dc exec -T sluice timeout 30 sluice consume shop.public.orders -n 3 --format json; }
  wait_for 120 "CDC events of the sample orders" orders
  objects() {
    dc run --rm -T --no-deps --entrypoint sh minio-init -c \
      'mc alias set demo http://minio:9000 sluice sluice-secret >/dev/null && mc ls --recursive demo/sluice-demo | grep -q json'
  }
  wait_for 120 "orders in the MinIO bucket sluice-demo" objects
  lines() { dc exec -T sluice timeout 30 sluice consume app-logs -n 5; }
  wait_for 120 "the application's log lines in app-logs" lines
  say "quickstart smoke test passed"
  exit 0
fi

for service in zookeeper broker-1 broker-2 broker-3 worker-1 worker; do
  wait_for 240 "$service healthy" healthy "$service"
done
wait_for 240 "connectors created" exited_ok connectors-init
dc exec -T worker-1 sluice connectors list

archive=/var/lib/sluice/app-logs.txt
sunk() { dc exec -T worker-1 grep -c "\"service\":\"$1\"" "$archive"; }
has_lines() { [ "$(sunk "$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
wait_for 120 "log lines in the file sink" has_lines shop 5

say "killing broker-2"
dc kill broker-2
dc exec -T log-producer env LOG_FILE=/var/log/app/smoke.log SERVICE=smoke LINES=100 INTERVAL=0 \
  sh /usr/local/bin/log-producer
wait_for 120 "all 100 lines written after the kill in the file sink" has_lines smoke 100
dc start broker-2
wait_for 120 "broker-2 healthy again" healthy broker-2

# More workers: the group grows to worker-1 plus four replicas of `worker`.
say "scaling worker to 4"
dc up -d --no-recreate --scale worker=4 worker
workers() {
  dc exec -T worker-1 python -c 'import json, urllib.request as u
token = open("/var/lib/sluice/hub.token").read().strip()
request = u.Request("http://127.0.0.1:8083/workers", headers={"Authorization": "Bearer " + token})
print(len(json.load(u.urlopen(request))["members"]))'
}
five_workers() { [ "$(workers)" = 5 ]; }
wait_for 180 "five workers in the group (GET /workers)" five_workers

# The Spark pipeline: a window is written once the watermark (2 min) passes its end (1 min).
counts() { dc exec -T worker-1 timeout 30 sluice consume app-logs-per-minute -n 1 -b "$kafka"; }
wait_for 420 "per-minute counts from the Spark pipeline in app-logs-per-minute" counts
say "$stack smoke test passed"
