#!/bin/bash
# A real S3 server for the S3 harvester's tests: single-node Ceph (memstore OSD, no cephx) with
# RGW on a free loopback port, users with keys test/test and other/other, and every AWS storage
# class placed. Each run has its own directory and ports, so runs (and other clusters on the
# machine) never meet; only daemons running that directory's ceph.conf are ever stopped.
#
#   tests/services/ceph-rgw.sh [start] [DIR]   install if missing, start in DIR (default: a new
#                                              temporary directory), print the env to export
#   tests/services/ceph-rgw.sh stop DIR        stop the daemons started from DIR
#
# DIR/endpoint holds the S3 endpoint once it answers. Installing needs root or sudo (Debian
# bookworm: ceph 16). Data lives in memory (memstore): a restart starts empty, as tests want.
# Ports: RGW_PORT and MON_PORT, else free ones chosen now.
set -euo pipefail
ACTION=start
case "${1:-}" in start|stop) ACTION=$1; shift ;; esac
if [ "$ACTION" = stop ] && [ -z "${1:-}" ]; then
  echo "usage: $0 stop DIR (the directory the cluster was started in)" >&2
  exit 2
fi
C=$(realpath -m "${1:-$(mktemp -d "${TMPDIR:-/tmp}/lineagegraph-ceph-rgw.XXXXXX")}")
SELF=$(realpath "$0")
CLASSES="STANDARD_IA GLACIER INTELLIGENT_TIERING ONEZONE_IA DEEP_ARCHIVE GLACIER_IR"

ours() {  # pid $1 is a daemon started with this directory's ceph.conf
  { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qF -- "-c $C/ceph.conf "
}

stop_daemons() {  # only the daemons running this directory's ceph.conf (with or without a
  local d p         # pid file yet: a daemon still starting has none)
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    if ours "$p"; then
      kill "$p" 2>/dev/null || true
      for _ in $(seq 1 40); do ours "$p" || break; sleep 0.25; done
      if ours "$p"; then kill -9 "$p" 2>/dev/null || true; fi
    fi
  done
  rm -f "$C"/run/*.pid
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A daemon in the foreground of its own session (for the OSD: daemonized, its parent sometimes
# exits non-zero under load while the OSD itself starts fine).
daemon() {  # daemon PID_FILE COMMAND...: start it, wait for its pid file
  local pid_file=$1; shift
  rm -f "$pid_file"
  setsid "$@" -f </dev/null >>"$C/log/daemons.err" 2>&1 &
  for _ in $(seq 1 120); do [ -s "$pid_file" ] && return 0; sleep 0.5; done
  echo "error: $1 did not start" >&2; tail -5 "$C/log/daemons.err" >&2; return 1
}

rgw_up() { curl -sf -o /dev/null "$1/"; }
wait_rgw() { for _ in $(seq 1 90); do rgw_up "$1" && return 0; sleep 1; done; return 1; }

if [ "$ACTION" = stop ]; then
  stop_daemons
  echo "stopped Ceph RGW daemons of $C"
  exit 0
fi

# Idempotent: a running RGW of this directory (the endpoint file is written last) is reused.
if [ -f "$C/endpoint" ] && rgw_up "$(cat "$C/endpoint")"; then
  echo "RGW already running in $C: $(cat "$C/endpoint") key=test/test"
  echo "export LINEAGEGRAPH_TEST_RGW=$(cat "$C/endpoint")"
  exit 0
fi

if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null \
   || ! command -v ceph-osd >/dev/null || ! command -v radosgw-admin >/dev/null; then
  echo "installing Ceph from Debian (about 270 MB, ~30 s)..."
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    radosgw ceph-mon ceph-osd ceph-common curl >/dev/null
fi

# Every failing step says which one it was (daemons log under $C/log). On a loaded machine a
# daemon sometimes fails to come up; the whole setup is then tried once more from scratch.
on_error() {
  echo "error: ceph-rgw.sh line $1 exited $2: $3 (logs: $C/log)" >&2
  if [ -z "${CEPH_RGW_RETRIED:-}" ]; then
    echo "retrying the setup once from scratch" >&2
    stop_daemons
    CEPH_RGW_RETRIED=1 exec bash "$SELF" start "$C"
  fi
}
trap 'on_error $LINENO $? "$BASH_COMMAND"' ERR

# A directory used before: stop what it started, then clear only what this script writes there.
stop_daemons
rm -rf "${C:?}"/{run,log,mon.a,osd.0,rgw} "${C:?}"/{ceph.conf,keyring,monmap,endpoint}
mkdir -p "$C"/{run,log,mon.a,osd.0,rgw}
cd "$C"
RGW_PORT=${RGW_PORT:-$(free_port)}
MON_PORT=${MON_PORT:-$(free_port)}
ENDPOINT=http://127.0.0.1:$RGW_PORT
if rgw_up "$ENDPOINT"; then
  echo "error: something else answers on $ENDPOINT" >&2
  exit 1
fi
FSID=$(python3 -c 'import uuid; print(uuid.uuid4())')
cat > ceph.conf <<CONF
[global]
fsid = $FSID
mon_host = v1:127.0.0.1:$MON_PORT
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_pool_default_pg_num = 8
osd_crush_chooseleaf_type = 0
osd_objectstore = memstore
memstore_device_bytes = 2147483648
run_dir = $C/run
admin_socket = $C/run/\$name.asok
log_file = $C/log/\$name.log
pid_file = $C/run/\$name.pid
keyring = $C/keyring
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
[mon]
mon_data = $C/mon.\$id
[osd]
osd_data = $C/osd.\$id
[client.rgw.a]
rgw_frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw_data = $C/rgw
CONF
CONF_FILE=$C/ceph.conf
ceph-authtool --create-keyring keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --add a "v1:127.0.0.1:$MON_PORT" --fsid "$FSID" monmap >/dev/null
ceph-mon -c "$CONF_FILE" --mkfs -i a --monmap monmap --keyring keyring
ceph-mon -c "$CONF_FILE" -i a
for _ in $(seq 1 30); do timeout 10 ceph -c "$CONF_FILE" -s >/dev/null 2>&1 && break; sleep 1; done
ID=$(timeout 30 ceph -c "$CONF_FILE" osd create)
ceph-osd -c "$CONF_FILE" -i "$ID" --mkfs 2>>log/osd-setup.err \
  || { tail -5 log/osd-setup.err >&2; false; }
daemon "run/osd.$ID.pid" ceph-osd -c "$CONF_FILE" -i "$ID"
A="timeout 60 radosgw-admin -c $CONF_FILE"
# The first start creates the default realm, zonegroup, zone and pools.
radosgw -c "$CONF_FILE" -n client.rgw.a
wait_rgw "$ENDPOINT" || { echo "error: RGW did not answer on $ENDPOINT; see $C/log" >&2; false; }
for sc in $CLASSES; do
  pool=default.rgw.$(echo "$sc" | tr 'A-Z_' 'a-z-').data
  $A zonegroup placement add --rgw-zonegroup default --placement-id default-placement \
    --storage-class "$sc" >/dev/null
  $A zone placement add --rgw-zone default --placement-id default-placement \
    --storage-class "$sc" --data-pool "$pool" >/dev/null
done
$A user create --uid=test --display-name=test --access-key=test --secret-key=test >/dev/null
# A second user, to meet a real AccessDenied on the first one's buckets.
$A user create --uid=other --display-name=other --access-key=other --secret-key=other >/dev/null
# Placement changes take effect on restart.
RP=$(cat run/client.rgw.a.pid); kill "$RP"
while kill -0 "$RP" 2>/dev/null; do sleep 0.5; done
radosgw -c "$CONF_FILE" -n client.rgw.a
wait_rgw "$ENDPOINT" || { echo "error: RGW did not come back on $ENDPOINT; see $C/log" >&2; false; }
echo "$ENDPOINT" > endpoint
echo "RGW ready in $C: $ENDPOINT key=test/test (stop: $0 stop $C)"
echo "export LINEAGEGRAPH_TEST_RGW=$ENDPOINT"
