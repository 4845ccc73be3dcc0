#!/bin/bash
# Issue 2 "done when": Debian's unmodified ibv_devices and ibv_devinfo run under
# `softrnic run` and show the device, port ACTIVE, link layer Ethernet and its
# RoCEv2 GID. Requirements: V-01, V-02.
. "$(dirname "$0")/lib.sh"

out=$("$SOFTRNIC" run --name softrnic7 --ip 127.0.0.7 -- ibv_devices 2>&1)
check "V-01 ibv_devices lists softrnic7" grep -q "softrnic7" <<<"$out"

out=$("$SOFTRNIC" run --name softrnic7 --ip 127.0.0.7 -- ibv_devinfo -v 2>&1)
rc=$?
check "ibv_devinfo exits 0" [ $rc -eq 0 ]
check "V-02 hca_id is softrnic7" grep -q "hca_id:.*softrnic7" <<<"$out"
check "V-02 port state PORT_ACTIVE" grep -q "state:.*PORT_ACTIVE" <<<"$out"
check "V-02 link layer Ethernet" grep -q "link_layer:.*Ethernet" <<<"$out"
check "V-02 GID 0 is the IPv4-mapped address" grep -qi "GID\[ *0\]:.*::ffff:127.0.0.7" <<<"$out"
check "V-02 GID 0 is RoCE v2" grep -qi "GID\[ *0\]:.*v2" <<<"$out"
echo "$out" | head -n 40
finish
