# Shared by sim/image/selftest.sh and role-selftest.sh (sourced, not run).
# ctest_take_host: hold one lock for the whole self-test (two self-tests at once would share ctbr0 and
# the ctest-* names), then remove what a killed earlier self-test left on the host. A self-test's own
# EXIT trap removes everything it made, but a run killed with SIGKILL (a CI job stopped at its time
# limit, a session ended) leaves its namespaces, veths, bridge and containers behind, and the next run
# then failed at once on "Cannot create namespace file /run/netns/ctest-1: File exists".
# Every name removed here is one only these self-tests create (ctest-*, ctv-*, ctbr0, the label
# org.dgxpod.test=ctest), so nothing of the simulator's or the user's is touched.
ctest_take_host() {
  exec {CTEST_LOCK_FD}>/run/dgxpod-ctest.lock
  flock -w 900 "$CTEST_LOCK_FD" || { echo "another sim/image self-test holds /run/dgxpod-ctest.lock" >&2; return 1; }
  local stale ns link
  stale=$(podman ps -aq --filter label=org.dgxpod.test=ctest 2>/dev/null || true)
  [[ -z $stale ]] || podman rm --force --time 1 $stale >/dev/null 2>&1 || true
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^ctest-/ {print $1}'); do
    echo "removing network namespace $ns left by an earlier self-test" >&2
    ip netns del "$ns" 2>/dev/null || true
  done
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | grep -E '^(ctv-[0-9]+|ctbr0)$'); do
    echo "removing link $link left by an earlier self-test" >&2
    ip link del "$link" 2>/dev/null || true
  done
}
