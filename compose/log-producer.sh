#!/bin/sh
# The sample application of compose/: appends one JSON log line a second to $LOG_FILE (default
# /var/log/app/shop.log), the fields the file source tails and the log_aggregation pipeline
# counts (time, level, service, host, message). SERVICE names the service (default shop),
# INTERVAL the seconds between lines (default 1), LINES=n stops after n lines (0 = forever).
set -eu
file=${LOG_FILE:-/var/log/app/shop.log}
lines=${LINES:-0}
interval=${INTERVAL:-1}
service=${SERVICE:-shop}
host=$(hostname)
i=0
while [ "$lines" -eq 0 ] || [ "$i" -lt "$lines" ]; do
  i=$((i + 1))
  case $((i % 10)) in
    0) level=ERROR ;;
    3 | 7) level=WARN ;;
    *) level=INFO ;;
  esac
  printf '{"time":"%s","level":"%s","service":"%s","host":"%s","message":"order %d placed"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$level" "$service" "$host" "$i" >> "$file"
  [ "$interval" = 0 ] || sleep "$interval"
done
