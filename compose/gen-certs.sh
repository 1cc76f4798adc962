#!/bin/sh
# Certificates for compose/cluster-secure.yml: a private CA, one key and certificate per broker
# (PEM, key and chain in one file, as the brokers' ssl.keystore.location takes them) and a client
# certificate for the hub worker (CN=hub: its principal User:CN=hub). Writes into DIR (default
# compose/secrets, which git ignores); existing files are kept, so re-running is harmless.
#
#   compose/gen-certs.sh [DIR]
#
# Names in the broker certificates: the service name (broker-N), localhost and 127.0.0.1, so
# clients inside the Compose network and probes inside a container verify the host name.
set -eu
dir=${1:-$(dirname "$0")/secrets}
days=${DAYS:-825}
mkdir -p "$dir"
cd "$dir"
umask 077

if [ ! -f ca.pem ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days "$days" \
    -subj "/CN=sluice-compose-ca" 2>/dev/null
fi

# sign NAME SUBJECT SAN: NAME.key + NAME.crt signed by the CA
sign() {
  [ -f "$1.crt" ] && return 0
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  printf 'subjectAltName=%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.crt" \
    -days "$days" -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

for n in 1 2 3; do
  sign "broker-$n" "/CN=broker-$n" "DNS:broker-$n,DNS:localhost,IP:127.0.0.1"
  cat "broker-$n.key" "broker-$n.crt" ca.pem > "broker-$n.pem"
done
sign hub "/CN=hub" "DNS:hub"

# Client settings for Kafka tools inside the containers (the hub's certificate), e.g.
# SLUICE_COMMAND_CONFIG=/etc/sluice/secrets/client.properties sluice topics list -b broker-1:9093
if [ ! -f client.properties ]; then
  cat > client.properties <<'PROPERTIES'
security.protocol=SSL
ssl.ca.location=/etc/sluice/secrets/ca.pem
ssl.certificate.location=/etc/sluice/secrets/hub.crt
ssl.key.location=/etc/sluice/secrets/hub.key
PROPERTIES
fi

# The containers run as uid 10001 (the image's user sluice): it must read these files.
if [ "$(id -u)" = 0 ]; then
  chown 10001:10001 ca.pem broker-*.pem broker-*.key broker-*.crt hub.key hub.crt client.properties
else
  chmod 0644 ./*.pem ./*.crt ./*.key client.properties
  echo "gen-certs: keys are readable by every user of this machine (run as root to give them to uid 10001 only)" >&2
fi
chmod 0600 ca.key
echo "gen-certs: certificates in $(pwd)" >&2
