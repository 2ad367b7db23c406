"""A --ulimit the container engine refuses (module_utils/containers/ngc_container.ulimit_refusal, issue 20): the message
names the limit, the node's hard limit and the variable to change. Error texts as the engines print them."""

from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers import ngc_container as nc

# docker 20.10 (runc 1.1.5) via community.docker, on the pod-in-a-box with the RA's memlock=-1
RUNC = ('Error starting container 5735a0eaf820: 500 Server Error for http+docker://localhost/v1.41/containers/'
        '5735a0eaf820/start: Internal Server Error ("failed to create shim task: OCI runtime create failed: runc '
        'create failed: unable to start container process: error during container init: error setting rlimits '
        'for ready process: error setting rlimit type 8: operation not permitted: unknown")')
# podman 4.3 (crun)
CRUN = "Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied"
LIMITS = """Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max stack size            8388608              unlimited            bytes
Max processes             96364                96364                processes
Max open files            20000                20000                files
Max locked memory         8388608              8388608              bytes
"""


def test_hard_limits_from_proc_limits():
    assert nc.hard_limits(LIMITS) == {"memlock": "8388608", "nofile": "20000", "nproc": "96364",
                                      "stack": "unlimited"}


def test_runc_rlimit_type_8_is_memlock():
    assert nc.refused_ulimit(RUNC) == "memlock"


def test_crun_rlimit_name():
    assert nc.refused_ulimit(CRUN) == "nofile"


def test_other_errors_are_not_a_refused_limit():
    assert nc.refused_ulimit("No such image: localhost/dgxpod-sim-ngc:latest") is None
    assert nc.ulimit_refusal("port 2222 already in use", {"memlock": "-1"}, LIMITS) == ""


def test_memlock_message_names_value_hard_limit_and_variable():
    msg = nc.ulimit_refusal(RUNC, {"memlock": "-1", "stack": "67108864"}, LIMITS)
    assert "--ulimit memlock=-1" in msg and "RLIMIT_MEMLOCK" in msg
    assert "hard limit is 8388608 bytes" in msg
    assert "ngc_container_ulimit_memlock" in msg and "CAP_SYS_RESOURCE" in msg


def test_other_limits_point_at_extra_ulimits():
    msg = nc.ulimit_refusal(CRUN, {"nofile": "1048576:1048576"}, LIMITS)
    assert "--ulimit nofile=1048576:1048576" in msg and "hard limit is 20000" in msg and "bytes" not in msg
    assert "ngc_container_extra_ulimits.nofile" in msg


def test_without_proc_limits_the_message_still_names_the_variable():
    msg = nc.ulimit_refusal(RUNC, {"memlock": "-1"})
    assert "hard limit" in msg and "ngc_container_ulimit_memlock" in msg and "this node's" not in msg


def test_unknown_rlimit_type_is_reported_as_such():
    assert nc.refused_ulimit("error setting rlimit type 13: operation not permitted") == "type 13"
