#!/bin/sh
# Anchor process of one simulated pod node.  Started by sim/podsimlib/nodes.py as
#   ip netns exec NODE unshare --mount --uts --propagation private /bin/sh node-init.sh NAME ROLE NODEDIR SIMDIR
# so it already runs in the node's network namespace and in private mount + UTS namespaces.
# It mounts the node's private views (overlayfs over /etc and /root, tmpfs /run and /mnt, the hardware
# stand-ins over /usr/local/sbin on DGX nodes), sets the hostname, starts the node's daemons,
# writes their PIDs into NODEDIR, then stays alive (its PID is the node's anchor: nsenter -t PID).
# Everything else (/usr, /var, /opt, /tmp, /work...) is shared with the host.
set -eu
NAME=$1 ROLE=$2 NODEDIR=$3 SIMDIR=$4

overlay() { # overlay $1 (lower: the host's dir) with upper/work dirs NODEDIR/$2.{upper,work}
  mount -t overlay "podsim-$2" -o "lowerdir=$1,upperdir=$NODEDIR/$2.upper,workdir=$NODEDIR/$2.work" "$1"
}
overlay /etc etc
overlay /root root
mount -t tmpfs -o mode=0755,size=256m podsim-run /run
mount -t tmpfs -o mode=0755,size=64m podsim-mnt /mnt   # mount points stay inside the node
mount --make-rshared /mnt   # the MPI containers' /mnt:/mnt:rslave follows the node's (re)mounts
mkdir -p /run/sshd /run/lock /run/ganesha
chmod 0755 /run/sshd
if [ "$ROLE" = dgx ]; then
  mount --bind "$SIMDIR/standins" /usr/local/sbin
  mount -o remount,bind,ro /usr/local/sbin
  # the MPI containers (roles/ngc_container, rootful podman): cgroup v1 hierarchies in this node's
  # fresh /sys, and podman's runtime dirs on the node's own /run (/etc/containers/*.conf by podsimlib/containers.py)
  if command -v podman >/dev/null 2>&1; then
    "$SIMDIR/image/cgroup-v1-mount.sh" || echo "node-init: cgroup mounts failed: containers will not start" >&2
    mkdir -p /run/containers/storage /run/libpod
  fi
  # the node's own Slurm and munge state (sim/podsimlib/slurm.py PRIVATE_DIRS, made by nodefiles.py)
  if [ -f "$NODEDIR/private-dirs" ]; then
    while read -r d; do mount --bind "$NODEDIR/private$d" "$d"; done <"$NODEDIR/private-dirs"
  fi
fi
hostname "$NAME"

/usr/sbin/sshd -D -e -f /etc/podsim/sshd_config >>"$NODEDIR/sshd.log" 2>&1 &
echo $! >"$NODEDIR/sshd.pid"

if [ "$ROLE" = storage ]; then
  /usr/sbin/rpcbind -f >>"$NODEDIR/rpcbind.log" 2>&1 &
  echo $! >"$NODEDIR/rpcbind.pid"
  # ganesha registers NFSv3/MOUNT with rpcbind: wait for its socket
  i=0; while [ ! -S /run/rpcbind.sock ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  /usr/bin/ganesha.nfsd -F -f /etc/podsim/ganesha.conf -L "$NODEDIR/ganesha.log" -p /run/ganesha/ganesha.pid -N NIV_EVENT &
  echo $! >"$NODEDIR/ganesha.pid"
fi

echo ready >"$NODEDIR/ready"
# `podsim down` stops the daemons by their recorded PIDs; the anchor just exits.
trap 'exit 0' TERM INT HUP
# Stay alive; `wait` also reaps daemons that exit (no zombies to confuse `podsim status`).
while :; do
  sleep 3600 &
  wait $! || true
done
