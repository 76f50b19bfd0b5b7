#!/bin/bash
# A real S3 server for the S3 harvester's tests: single-node Ceph (memstore OSD, no cephx) with
# RGW on 127.0.0.1:7480, users with keys test/test and other/other, and every AWS storage class
# placed.
#
#   tests/services/ceph-rgw.sh [start] [DIR]   install if missing, start (idempotent), print env
#   tests/services/ceph-rgw.sh stop [DIR]      stop the daemons started from DIR
#
# DIR defaults to /tmp/lineagegraph-ceph-rgw. Installing needs root or sudo (Debian bookworm: ceph 16).
# Afterwards: export LINEAGEGRAPH_TEST_RGW=http://127.0.0.1:7480
# Data lives in memory (memstore): a restart starts empty, which is what tests want.
set -euo pipefail
ACTION=start
case "${1:-}" in start|stop) ACTION=$1; shift ;; esac
C=${1:-/tmp/lineagegraph-ceph-rgw}
ENDPOINT=http://127.0.0.1:7480
CLASSES="STANDARD_IA GLACIER INTELLIGENT_TIERING ONEZONE_IA DEEP_ARCHIVE GLACIER_IR"

stop_daemons() {  # only the daemons whose pid files live under $C
  local f p
  for f in "$C"/run/*.pid; do
    [ -e "$f" ] || continue
    p=$(cat "$f")
    if kill -0 "$p" 2>/dev/null; then
      kill "$p"
      for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
      kill -0 "$p" 2>/dev/null && kill -9 "$p"
    fi
    rm -f "$f"
  done
}

rgw_up() { curl -sf -o /dev/null "$ENDPOINT/"; }
wait_rgw() { for _ in $(seq 1 90); do rgw_up && return 0; sleep 1; done; return 1; }

if [ "$ACTION" = stop ]; then
  stop_daemons
  echo "stopped Ceph RGW daemons of $C"
  exit 0
fi

# Idempotent: a running RGW of ours (the ready marker is written last) is reused as is.
if [ -f "$C/ready" ] && rgw_up; then
  echo "RGW already running: $ENDPOINT key=test/test"
  echo "export LINEAGEGRAPH_TEST_RGW=$ENDPOINT"
  exit 0
fi
if rgw_up; then
  echo "error: something else answers on $ENDPOINT (not started from $C); stop it first" >&2
  exit 1
fi

if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null \
   || ! command -v ceph-osd >/dev/null || ! command -v radosgw-admin >/dev/null; then
  echo "installing Ceph from Debian (about 270 MB, ~30 s)..."
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    radosgw ceph-mon ceph-osd ceph-common curl >/dev/null
fi

stop_daemons 2>/dev/null || true
rm -rf "$C"; mkdir -p "$C"/{run,log,mon.a,osd.0,rgw}; cd "$C"
FSID=$(python3 -c 'import uuid; print(uuid.uuid4())')
cat > ceph.conf <<CONF
[global]
fsid = $FSID
mon_host = v1:127.0.0.1:6789
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
rgw_frontends = beast endpoint=127.0.0.1:7480
rgw_data = $C/rgw
CONF
ceph-authtool --create-keyring keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --add a v1:127.0.0.1:6789 --fsid "$FSID" monmap >/dev/null
ceph-mon -c ceph.conf --mkfs -i a --monmap monmap --keyring keyring
ceph-mon -c ceph.conf -i a
for _ in $(seq 1 30); do timeout 10 ceph -c ceph.conf -s >/dev/null 2>&1 && break; sleep 1; done
ID=$(timeout 30 ceph -c ceph.conf osd create)
ceph-osd -c ceph.conf -i "$ID" --mkfs 2>/dev/null
ceph-osd -c ceph.conf -i "$ID" 2>/dev/null
A="timeout 60 radosgw-admin -c ceph.conf"
# The first start creates the default realm, zonegroup, zone and pools.
radosgw -c ceph.conf -n client.rgw.a
wait_rgw || { echo "error: RGW did not answer on $ENDPOINT; see $C/log" >&2; exit 1; }
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
radosgw -c ceph.conf -n client.rgw.a
wait_rgw || { echo "error: RGW did not come back on $ENDPOINT; see $C/log" >&2; exit 1; }
touch ready
echo "RGW ready: $ENDPOINT key=test/test"
echo "export LINEAGEGRAPH_TEST_RGW=$ENDPOINT"
