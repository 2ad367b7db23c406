"""The offline install (issue 43 item 4; docs/install.md "Offline install"): ``scripts/bundle.sh`` builds a bundle and
``scripts/setup.sh --offline <bundle>`` installs the controller from it inside ``unshare -n`` (no network at all):
a fresh virtual environment from the bundle's wheels only (pip's own configuration and environment, which name an
index here, are ignored), the roles' collections from the bundle's "ansible" release, then - still without network
- ``ansible-playbook`` runs a play with a collection module and a unit test file of this project passes on that
environment. A bundle with a file missing, made for another requirements.txt or lacking a wheel is refused, naming
why (a failed install is completed by the next run with a whole bundle).

CI's test (under a minute on two cores) builds the bundle with ``--skip-apt`` from a wheel cache
(``.cache/bundle-wheels``, filled by one ``pip download`` the first time: it needs PyPI then, as scripts/setup.sh
does) and installs into a copy of setup.sh and requirements.txt in a temporary directory, so neither the checkout's
.venv nor its collections are touched. The whole bundle - the controller's Debian packages and the simulator's image
and Python extras - is the ``long`` test: its Debian packages install on a minimal Debian 12 with no network (apt's
simulation against the dpkg status they were resolved for), and the image loads into a podman store of its own."""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tarfile
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUNDLE_SH = os.path.join(ROOT, "scripts", "bundle.sh")
SETUP_SH = os.path.join(ROOT, "scripts", "setup.sh")
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
WHEEL_CACHE = os.path.join(ROOT, ".cache", "bundle-wheels")
PINNED = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)")

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                reason="needs root and unshare (a network namespace of its own)")


def requirements():
    """[(name, version)] of requirements.txt's pins."""
    with open(os.path.join(ROOT, "requirements.txt"), encoding="utf-8") as fh:
        return [m.groups() for m in (PINNED.match(line.strip()) for line in fh) if m]


def wheel_name(name):
    """A distribution's name as wheel file names spell it (PEP 427: runs of -_. as one underscore, any case)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def cache_has_every_pin(cache):
    names = {(wheel_name(f.split("-")[0]), f.split("-")[1]) for f in os.listdir(cache) if f.endswith(".whl")}
    return all((wheel_name(n), v) in names for n, v in requirements())


def clean_env(**extra):
    """The environment without pip's settings of this machine (an index or a wheel directory in PIP_*), so nothing
    but the bundle can satisfy pip; an index that does not exist instead, to show that setup.sh ignores it. Without
    the ANSIBLE_* settings of the run either: `make test` exports ANSIBLE_CONFIG (the checkout's ansible.cfg, whose
    vars plugin needs the checkout's collection), which is not the offline environment's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "ANSIBLE_"))}
    env.update(PIP_INDEX_URL="http://192.0.2.1/simple", PIP_FIND_LINKS="/nonexistent", **extra)
    return env


def run(argv, cwd, timeout=300, offline=True, env=None):
    """``argv`` (inside ``unshare -n`` when ``offline``): the completed process, stdout and stderr together."""
    argv = (["unshare", "-n"] if offline else []) + list(argv)
    return subprocess.run(argv, cwd=cwd, env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)


def tree(tmp, extra=()):
    """A checkout as setup.sh needs it for the controller part: setup.sh and requirements.txt (and ``extra``)."""
    os.makedirs(os.path.join(tmp, "scripts"))
    for rel in ("scripts/setup.sh", "requirements.txt") + tuple(extra):
        os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), os.path.join(tmp, rel))
    return str(tmp)


def fill_wheel_cache():
    """The wheel cache with a wheel of every pin of requirements.txt: one ``pip download`` the first time (PyPI);
    the test is skipped, saying so, when that cannot be done."""
    if not cache_has_every_pin(WHEEL_CACHE):
        fill = subprocess.run([VENV_PYTHON, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                               "--only-binary=:all:", "-d", WHEEL_CACHE, "-r", os.path.join(ROOT, "requirements.txt")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if fill.returncode != 0:
            pytest.skip("the wheel cache %s could not be filled (PyPI unreachable?): %s" % (WHEEL_CACHE,
                                                                                          fill.stdout[-500:]))


@pytest.fixture(scope="module")
def bundle_tar(tmp_path_factory):
    """``scripts/bundle.sh --skip-apt <tmp>/bundle.tar``, its wheels from the wheel cache (pip with no index)."""
    os.makedirs(WHEEL_CACHE, exist_ok=True)
    with open(os.path.join(WHEEL_CACHE, ".lock"), "w") as lock:  # pytest-xdist: one worker fills it, the other waits
        fcntl.flock(lock, fcntl.LOCK_EX)
        fill_wheel_cache()
    out = str(tmp_path_factory.mktemp("bundle") / "bundle.tar")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=WHEEL_CACHE, PIP_CONFIG_FILE=os.devnull)
    res = subprocess.run(["bash", BUNDLE_SH, "--skip-apt", out], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:]
    return out


def unpacked(tar, tmp):
    """The bundle directory of ``tar`` unpacked under ``tmp`` (to change a copy)."""
    os.makedirs(str(tmp))
    subprocess.run(["tar", "-xf", tar, "-C", str(tmp)], check=True)
    return os.path.join(str(tmp), "dgxpod-bundle")


def test_setup_offline_installs_the_controller_from_the_bundle_without_network(bundle_tar, tmp_path):
    with tarfile.open(bundle_tar) as tf:
        names = tf.getnames()
    assert "dgxpod-bundle/bundle.env" in names and "dgxpod-bundle/SHA256SUMS" in names
    assert any(re.match(r"dgxpod-bundle/collections/ansible-[\d.]+-py3-none-any\.whl$", n) for n in names)
    assert not any(n.startswith("dgxpod-bundle/apt/") for n in names)  # --skip-apt
    home = tree(tmp_path / "checkout")
    # first a copy whose digests agree but that lacks a wheel (built with another pip configuration, edited by
    # hand): pip, with no index to fall back on, names the package and setup.sh stops
    lacking = unpacked(bundle_tar, tmp_path / "lacking")
    wheel = next(f for f in os.listdir(os.path.join(lacking, "wheels")) if f.lower().startswith("pyyaml-"))
    os.unlink(os.path.join(lacking, "wheels", wheel))
    with open(os.path.join(lacking, "SHA256SUMS"), encoding="utf-8") as fh:
        sums = [line for line in fh if not line.rstrip().endswith("wheels/" + wheel)]
    with open(os.path.join(lacking, "SHA256SUMS"), "w", encoding="utf-8") as fh:
        fh.writelines(sums)
    res = run(["bash", "scripts/setup.sh", "--offline", lacking], home)
    assert res.returncode == 1 and "a wheel is missing from" in res.stdout, res.stdout[-2000:]
    assert re.search(r"(?i)no matching distribution found for pyyaml", res.stdout), res.stdout[-2000:]
    # then the whole bundle, as the archive bundle.sh wrote: the same environment completed
    res = run(["bash", "scripts/setup.sh", "--offline", bundle_tar], home)
    assert res.returncode == 0, res.stdout[-3000:]
    assert "offline: bundle of" in res.stdout and "creating/updating virtual environment" in res.stdout
    venv = os.path.join(home, ".venv", "bin")
    core = dict(requirements())["ansible-core"]
    # ansible-playbook of the offline environment runs a play with a module of a bundled collection
    play = os.path.join(home, "play.yml")
    ini = os.path.join(home, "proof.ini")
    with open(play, "w", encoding="utf-8") as fh:
        fh.write("- hosts: localhost\n  gather_facts: false\n  tasks:\n"
                 "    - community.general.ini_file: {path: %s, section: pod, option: offline, value: 'yes', "
                 "mode: '0644'}\n" % ini)
    env = clean_env(ANSIBLE_COLLECTIONS_PATH=os.path.join(home, "collections"), ANSIBLE_NOCOLOR="1",
                    ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-tmp"), ANSIBLE_HOME=str(tmp_path / "ansible-home"))
    version = run([os.path.join(venv, "ansible-playbook"), "--version"], home, env=env)
    assert version.returncode == 0 and "core %s" % core in version.stdout, version.stdout
    played = run([os.path.join(venv, "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e",
                  "ansible_python_interpreter=%s" % os.path.join(venv, "python"), play], home, env=env)
    assert played.returncode == 0 and "changed=1" in played.stdout, played.stdout[-2000:]
    with open(ini, encoding="utf-8") as fh:
        assert "offline = yes" in fh.read()
    # this project's module_utils and a unit test file (the Prometheus parser, report/metrics.py) on that environment
    unit = run([os.path.join(venv, "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                "tests/unit/test_metrics.py"], ROOT, env=clean_env(PYTHONDONTWRITEBYTECODE="1"))
    assert unit.returncode == 0 and re.search(r"\d+ passed", unit.stdout), unit.stdout[-3000:]
    # a second run changes nothing and needs nothing
    again = run(["bash", "scripts/setup.sh", "--offline", bundle_tar], home)
    assert again.returncode == 0 and "virtual environment: up to date" in again.stdout and \
        "collections: up to date" in again.stdout, again.stdout[-2000:]


def test_a_bundle_with_a_file_missing_or_for_another_checkout_is_refused(bundle_tar, tmp_path):
    bundle = unpacked(bundle_tar, tmp_path / "copy")
    home = tree(tmp_path / "checkout")
    with open(os.path.join(home, "requirements.txt"), "a", encoding="utf-8") as fh:
        fh.write("# another checkout's requirements\n")
    res = run(["bash", "scripts/setup.sh", "--offline", bundle], home)
    assert res.returncode == 1 and "built for another requirements.txt" in res.stdout, res.stdout
    wheel = next(f for f in os.listdir(os.path.join(bundle, "wheels")) if f.lower().startswith("pyyaml-"))
    os.unlink(os.path.join(bundle, "wheels", wheel))
    res = run(["bash", "scripts/setup.sh", "--offline", bundle], home)
    assert res.returncode == 1 and "files missing or changed" in res.stdout and wheel in res.stdout, res.stdout
    assert not os.path.exists(os.path.join(home, ".venv"))  # refused before anything was installed
    for bad in (str(tmp_path / "nothing-here"), os.path.join(bundle, "wheels")):
        res = run(["bash", "scripts/setup.sh", "--offline", bad], home)
        assert res.returncode == 1 and ("no such bundle" in res.stdout or "not a bundle" in res.stdout), res.stdout
    res = run(["bash", "scripts/setup.sh", "--offline"], home)
    assert res.returncode == 1 and "usage" in res.stdout


@pytest.mark.long
def test_the_whole_bundle_debian_packages_and_simulator_image_installs_offline(tmp_path):
    """Minutes and the network (PyPI, the Debian mirror): the bundle with the controller's Debian packages and the
    simulator's image and extras. Its .deb files install on a minimal Debian 12 with no network and no apt lists
    (apt's simulation against apt/base.status, the dpkg status they were resolved for), with every controller
    package among them; setup.sh --offline loads the image into a podman store of the test's own and installs the
    simulator's extras from the bundle's wheels."""
    bundle = str(tmp_path / "full")
    made = run(["bash", BUNDLE_SH, "--with-image", bundle], ROOT, timeout=3600, offline=False, env=dict(os.environ))
    assert made.returncode == 0, made.stdout[-3000:]
    debs = sorted(os.path.join(bundle, "apt", f) for f in os.listdir(os.path.join(bundle, "apt")) if
                  f.endswith(".deb"))
    config = subprocess.run(["bash", SETUP_SH, "--print-config"], capture_output=True, text=True, check=True).stdout
    wanted = re.search(r"^controller_packages=(.*)$", config, re.M).group(1).split()
    lists = tmp_path / "lists"
    (lists / "partial").mkdir(parents=True)
    sim = run(["apt-get", "-s", "-o", "Dir::State::status=%s" % os.path.join(bundle, "apt", "base.status"),
               "-o", "Dir::State::Lists=%s" % lists, "-o", "Dir::Cache=%s" % (tmp_path / "cache"),
               "-o", "Debug::NoLocking=1", "--no-download", "install", "--no-install-recommends", *debs], ROOT,
              env=dict(os.environ))
    assert sim.returncode == 0, sim.stdout[-3000:]
    installed = set(re.findall(r"^Inst (\S+)", sim.stdout, re.M))
    assert set(wanted) <= installed, set(wanted) - installed
    # the image and the simulator's extras, offline, into a store and a tree of the test's own
    home = tree(tmp_path / "checkout", extra=("sim/setup-extras.sh",))
    runroot = tempfile.mkdtemp(prefix="dgxpod-pm.", dir="/tmp")  # podman wants a runroot under 50 characters
    podman = "--root %s --runroot %s" % (tmp_path / "podman", runroot)
    try:
        res = run(["bash", "scripts/setup.sh", "--offline", bundle], home, timeout=1800,
                  env=clean_env(PODMAN_ARGS=podman))
        assert res.returncode == 0 and "loading the simulator image" in res.stdout, res.stdout[-3000:]
        assert "installing simulator extras" in res.stdout, res.stdout[-3000:]
        exists = subprocess.run(["podman", *podman.split(), "image", "exists", "localhost/dgxpod-sim-ngc:latest"])
        assert exists.returncode == 0
    finally:
        # the test's own store only (never `system reset`: it would remove the machine's podman networks too)
        subprocess.run(["podman", *podman.split(), "rmi", "-a", "-f"], capture_output=True)
        shutil.rmtree(runroot, ignore_errors=True)
