#!/usr/bin/env bash
# Starts and stops a single-node Ceph RGW (real S3) for tests and benchmarks.
#
#   rgw.sh start DIR [--bluestore SIZE_GIB | --memstore SIZE_MIB]   (default: memstore 5120 MiB)
#   rgw.sh stop DIR
#
# start writes DIR/env (shell syntax) with FERRY_TEST_S3_ENDPOINT, FERRY_TEST_S3_ACCESS_KEY,
# FERRY_TEST_S3_SECRET_KEY and FERRY_TEST_S3_BUCKET (created). If DIR already holds a running
# server, start reuses it. Daemons run detached (setsid) with output in DIR/*.log, so callers'
# pipes never wait on them. Needs root and the Debian packages radosgw ceph-mon ceph-osd
# ceph-common uuid-runtime (scripts/install-deps.sh).
set -euo pipefail

cmd=${1:?usage: rgw.sh start|stop DIR}
D=$(realpath -m "${2:?usage: rgw.sh start|stop DIR}")
shift 2 || true
export CEPH_CONF=$D/ceph.conf

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

http_up() { curl -s -o /dev/null --max-time 2 "$1"; }

stop() {
  for name in rgw osd mon; do
    if [[ -f $D/$name.pid ]]; then
      pid=$(cat "$D/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$D/$name.pid"
    fi
  done
  rm -rf "$D"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2; shift 2
  for _ in $(seq $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "rgw.sh: timed out waiting for $what (logs in $D)" >&2
  tail -5 "$D"/*.log >&2 || true
  return 1
}

start() {
  local store=memstore size=5120
  while (($#)); do
    case $1 in
      --bluestore) store=bluestore; size=$2; shift 2 ;;
      --memstore) store=memstore; size=$2; shift 2 ;;
      *) echo "rgw.sh: unknown option $1" >&2; exit 2 ;;
    esac
  done
  if [[ -f $D/env ]]; then
    # shellcheck disable=SC1091
    source "$D/env"
    if http_up "$FERRY_TEST_S3_ENDPOINT"; then echo "rgw.sh: reusing $FERRY_TEST_S3_ENDPOINT"; return 0; fi
    stop
  fi
  for bin in ceph-mon ceph-osd radosgw radosgw-admin uuidgen; do
    command -v $bin >/dev/null || { echo "rgw.sh: $bin missing; run scripts/install-deps.sh" >&2; exit 1; }
  done
  mkdir -p "$D/mon" "$D/osd" "$D/run"
  local fsid mon_port rgw_port
  fsid=$(uuidgen); mon_port=$(free_port); rgw_port=$(free_port)
  local store_conf
  if [[ $store == bluestore ]]; then
    store_conf="osd_objectstore = bluestore
bluestore_block_path = $D/osd/block.\$id
bluestore_block_create = true
bluestore_block_size = $((size * 1024 * 1024 * 1024))"
  else
    store_conf="osd_objectstore = memstore
memstore_device_bytes = $((size * 1024 * 1024))"
  fi
  cat >"$D/ceph.conf" <<CONF
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:$mon_port
public_network = 127.0.0.0/8
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_mon_client_mode = crc secure
ms_client_mode = crc secure
ms_mon_service_mode = crc secure
ms_service_mode = crc secure
ms_mon_cluster_mode = crc secure
ms_cluster_mode = crc secure
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_crush_chooseleaf_type = 0
ms_bind_msgr1 = false
run_dir = $D/run
log_file = $D/\$name.log
admin_socket = $D/run/\$name.asok
pid_file = $D/run/\$name.pid
[mon]
mon_data = $D/mon/\$id
[osd]
osd_data = $D/osd/\$id
$store_conf
osd_max_object_name_len = 460
osd_max_object_namespace_len = 64
[client.rgw.a]
rgw_frontends = beast endpoint=127.0.0.1:$rgw_port
rgw_dns_name = localhost
rgw_gc_obj_min_wait = 30
# Free deleted objects' data within a minute (default: hourly), so a long test suite that
# deletes what it wrote does not fill the memstore OSD.
rgw_gc_processor_period = 60
CONF
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$D/monmap" >/dev/null
  ceph-mon --mkfs -i a --monmap "$D/monmap" >"$D/mkfs-mon.log" 2>&1
  setsid ceph-mon -i a -f >"$D/mon.out.log" 2>&1 </dev/null & echo $! >"$D/mon.pid"
  wait_for 30 "ceph-mon" timeout 5 ceph -s
  local uuid id
  uuid=$(uuidgen)
  id=$(timeout 20 ceph osd new "$uuid")
  mkdir -p "$D/osd/$id"
  ceph-osd -i "$id" --mkfs --osd-uuid "$uuid" >"$D/mkfs-osd.log" 2>&1
  setsid ceph-osd -i "$id" -f >"$D/osd.out.log" 2>&1 </dev/null & echo $! >"$D/osd.pid"
  wait_for 60 "ceph-osd" bash -c "timeout 5 ceph osd stat | grep -q '1 up'"
  setsid radosgw -n client.rgw.a -f >"$D/rgw.out.log" 2>&1 </dev/null & echo $! >"$D/rgw.pid"
  local endpoint=http://127.0.0.1:$rgw_port
  wait_for 60 "radosgw on $endpoint" http_up "$endpoint"
  local access secret
  access=FERRY$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F)
  secret=$(head -c 30 /dev/urandom | base64 | tr -d '/+=\n')
  timeout 30 radosgw-admin user create --uid=test --display-name=test \
    --access-key="$access" --secret="$secret" >/dev/null
  cat >"$D/env" <<ENV
FERRY_TEST_S3_ENDPOINT=$endpoint
FERRY_TEST_S3_ACCESS_KEY=$access
FERRY_TEST_S3_SECRET_KEY=$secret
FERRY_TEST_S3_REGION=us-east-1
FERRY_TEST_S3_BUCKET=ferry-test
ENV
  # Create the shared test bucket with a plain signed PUT (any S3 client would do).
  python3 - "$endpoint" "$access" "$secret" <<'PY'
import sys, datetime, hashlib, hmac, urllib.request
ep, ak, sk = sys.argv[1:]
host = ep.split("://")[1]
t = datetime.datetime.utcnow(); amz = t.strftime("%Y%m%dT%H%M%SZ"); day = amz[:8]
ph = hashlib.sha256(b"").hexdigest()
creq = f"PUT\n/ferry-test\n\nhost:{host}\nx-amz-content-sha256:{ph}\nx-amz-date:{amz}\n\nhost;x-amz-content-sha256;x-amz-date\n{ph}"
scope = f"{day}/us-east-1/s3/aws4_request"
sts = f"AWS4-HMAC-SHA256\n{amz}\n{scope}\n" + hashlib.sha256(creq.encode()).hexdigest()
k = ("AWS4" + sk).encode()
for part in (day, "us-east-1", "s3", "aws4_request"):
    k = hmac.new(k, part.encode(), hashlib.sha256).digest()
sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
req = urllib.request.Request(ep + "/ferry-test", method="PUT", data=b"", headers={
    "x-amz-date": amz, "x-amz-content-sha256": ph,
    "Authorization": f"AWS4-HMAC-SHA256 Credential={ak}/{scope},SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature={sig}"})
urllib.request.urlopen(req, timeout=30).read()
PY
  echo "rgw.sh: RGW ready at $endpoint ($store), env in $D/env"
}

case $cmd in
  start) start "$@" ;;
  stop) stop ;;
  *) echo "usage: rgw.sh start|stop DIR" >&2; exit 2 ;;
esac
