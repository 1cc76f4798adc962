#!/bin/sh
# Creates the connectors in $CONNECTORS_DIR (default /etc/sluice/connectors) through the hub's
# REST API, once: a connector that exists already is left as it is, so re-running
# `docker compose up` never fails or resets one. Each file is named after its connector
# (<name>.json, Kafka Connect's {"name", "config"} body).
# The REST URL and token come from SLUICE_REST_URL and SLUICE_REST_TOKEN_FILE (docs/deploy.md).
# A distributed worker answers 409 "worker rebalance" until its group has formed: that is
# retried for up to a minute; any other failure stops the script.
set -eu
dir=${CONNECTORS_DIR:-/etc/sluice/connectors}
for file in "$dir"/*.json; do
  name=$(basename "$file" .json)
  tries=0
  while :; do
    if sluice connectors status "$name" > /dev/null 2>&1; then
      echo "connector $name exists; left as it is"
      break
    fi
    if out=$(sluice connectors create "$file" 2>&1); then
      echo "$out"
      break
    fi
    case $out in
      *rebalance*) ;;
      *) echo "$out" >&2; exit 1 ;;
    esac
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then echo "$out" >&2; exit 1; fi
    sleep 1
  done
done
sluice connectors list
