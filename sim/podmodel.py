"""Shape of the pod-in-a-box: nodes, NICs, addresses, cabling, and the inventory text.

Pure functions only (no I/O, no root): `sim/podsimlib/` builds the namespaces from `pod_shape()`,
and `render_inventory()` produces `inventories/sim/hosts.yml` byte for byte (a unit test compares the
committed file with the output for the defaults).

The simulator mirrors the 004 reference pod (Isilon F800 + DGX-1, two Arista switches) scaled down,
on 198.18.0.0/15 (RFC 2544 benchmarking range) with 004's third octets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_NODES = 4
DEFAULT_STORAGE = 2
MAX_NODES = 30
MAX_STORAGE = 20

NODE_PREFIX = "sim-dgx"
STORAGE_PREFIX = "sim-isilon"
SWITCHES = ("sim-sw1", "sim-sw2")
SWITCH_MGMT = {"sim-sw1": "198.18.67.251", "sim-sw2": "198.18.67.252"}
CONTROLLER_ADDRESS = "198.18.67.1"
MGMT_PREFIX_LEN = 24

# Host-side objects: every simulator bridge starts with BRIDGE_PREFIX, every host-side veth end with
# VETH_PREFIX, every namespace with NETNS_PREFIX; `podsim down` looks for leftovers by these prefixes.
BRIDGE_PREFIX = "psbr-"
VETH_PREFIX = "psv-"
NETNS_PREFIX = "sim-"


@dataclass(frozen=True)
class Fabric:
    name: str
    bridge: str
    subnet: str  # "198.18.5.0/24"
    mtu: int
    kind: str = "ethernet"
    carries: tuple[str, ...] = ("compute",)
    roce: str | None = "lossless"

    @property
    def prefix(self) -> str:
        """First three octets, e.g. '198.18.5'."""
        return self.subnet.split("/")[0].rsplit(".", 1)[0]


FABRICS: dict[str, Fabric] = {
    f.name: f
    for f in (
        Fabric("data-5", "psbr-d5", "198.18.5.0/24", 9000, carries=("compute", "storage")),
        Fabric("data-12", "psbr-d12", "198.18.12.0/24", 9000),
        Fabric("data-66", "psbr-d66", "198.18.66.0/24", 9000, carries=("compute", "storage")),
        Fabric("data-139", "psbr-d139", "198.18.139.0/24", 9000),
        Fabric("mgmt", "psbr-mgmt", "198.18.67.0/24", 1500, carries=("management",), roce=None),
    )
}

# The bridge is the simulated switch: its ports (host-side veth ends) take jumbo frames on every
# fabric, like a real switch port (9214 on EOS).  The bridge device itself is the controller's NIC on
# that fabric, so the mgmt bridge keeps the mgmt fabric's MTU (the controller's 198.18.67.1 lives there).
SWITCH_PORT_MTU = 9000


@dataclass(frozen=True)
class Nic:
    name: str  # name inside the node
    fabric: str
    address: str
    host_end: str  # host-side veth name (<= 15 chars)
    mac: str
    rdma_device: str | None = None
    speed: int | None = None
    switch: str | None = None
    switch_port: str | None = None

    @property
    def mtu(self) -> int:
        return FABRICS[self.fabric].mtu

    @property
    def bridge(self) -> str:
        return FABRICS[self.fabric].bridge


@dataclass(frozen=True)
class Node:
    name: str
    role: str  # "dgx" or "storage"
    index: int
    nics: tuple[Nic, ...] = field(default_factory=tuple)

    @property
    def mgmt_address(self) -> str:
        return next(n.address for n in self.nics if n.fabric == "mgmt")

    @property
    def short(self) -> str:
        """Short tag used in host-side veth names: d3, s1."""
        return ("d" if self.role == "dgx" else "s") + str(self.index)


@dataclass(frozen=True)
class Switch:
    name: str
    address: str
    model: str
    peer: str
    isl_members: tuple[str, str]


@dataclass(frozen=True)
class Pod:
    nodes: int
    storage: int
    dgx: tuple[Node, ...]
    storage_nodes: tuple[Node, ...]
    switches: tuple[Switch, ...]

    @property
    def all_nodes(self) -> tuple[Node, ...]:
        return self.dgx + self.storage_nodes


# DGX-1: four ConnectX-4 ports, RDMA device mlx5_k behind each (004's ibdev2netdev output).
DGX_DATA_NICS = (
    # (name, rdma device, fabric, tag in host-side veth name)
    ("enp5s0", "mlx5_0", "data-5", "5"),
    ("enp12s0", "mlx5_1", "data-12", "12"),
    ("enp132s0", "mlx5_2", "data-66", "132"),
    ("enp139s0", "mlx5_3", "data-139", "139"),
)
DGX_MGMT_NIC = "enp1s0f0"


def _mac(role: str, index: int, nic: int) -> str:
    """Deterministic, locally administered unicast MAC: 02:53:49:<role>:<index>:<nic>."""
    return "02:53:49:%02x:%02x:%02x" % (0xD0 if role == "dgx" else 0x50, index, nic)


def switch_model(nodes: int, storage: int) -> tuple[str, int]:
    """(model, QSFP port count) big enough for 2N host ports + M storage ports + the 2-port ISL."""
    need = 2 * nodes + storage + 2
    if need <= 32:
        return "7060CX2-32S", 32
    if need <= 64:
        return "7260CX3-64", 64
    raise ValueError("%d DGX and %d storage nodes need %d ports per switch; at most 64 are modelled"
                     % (nodes, storage, need))


def validate_size(nodes: int, storage: int) -> None:
    if not 1 <= nodes <= MAX_NODES:
        raise ValueError("--nodes must be between 1 and %d (got %d)" % (MAX_NODES, nodes))
    if not 0 <= storage <= MAX_STORAGE:
        raise ValueError("--storage must be between 0 and %d (got %d)" % (MAX_STORAGE, storage))
    switch_model(nodes, storage)


def dgx_node(i: int, nodes: int) -> Node:
    name = "%s%d" % (NODE_PREFIX, i)
    nics = [Nic(DGX_MGMT_NIC, "mgmt", "198.18.67.%d" % (10 + i), "psv-d%d-m" % i, _mac("dgx", i, 0))]
    ports = {"enp5s0": ("sim-sw1", i), "enp12s0": ("sim-sw1", nodes + i),
             "enp132s0": ("sim-sw2", i), "enp139s0": ("sim-sw2", nodes + i)}
    for k, (nic, rdma, fabric, tag) in enumerate(DGX_DATA_NICS, start=1):
        sw, port = ports[nic]
        nics.append(Nic(nic, fabric, "%s.%d" % (FABRICS[fabric].prefix, 10 + i), "psv-d%d-%s" % (i, tag),
                        _mac("dgx", i, k), rdma_device=rdma, speed=100, switch=sw,
                        switch_port="Ethernet%d/1" % port))
    return Node(name, "dgx", i, tuple(nics))


def storage_node(j: int, nodes: int) -> Node:
    name = "%s%d" % (STORAGE_PREFIX, j)
    port = "Ethernet%d/1" % (2 * nodes + j)
    nics = (
        Nic("40gige-1", "data-66", "198.18.66.%d" % (210 + j), "psv-s%d-66" % j, _mac("storage", j, 1),
            speed=40, switch="sim-sw2", switch_port=port),
        Nic("40gige-2", "data-5", "198.18.5.%d" % (210 + j), "psv-s%d-5" % j, _mac("storage", j, 2),
            speed=40, switch="sim-sw1", switch_port=port),
        Nic("mgmt-1", "mgmt", "198.18.67.%d" % (210 + j), "psv-s%d-m" % j, _mac("storage", j, 0)),
    )
    return Node(name, "storage", j, nics)


def pod_shape(nodes: int = DEFAULT_NODES, storage: int = DEFAULT_STORAGE) -> Pod:
    validate_size(nodes, storage)
    model, ports = switch_model(nodes, storage)
    isl = ("Ethernet%d/1" % (ports - 1), "Ethernet%d/1" % ports)
    switches = (Switch("sim-sw1", SWITCH_MGMT["sim-sw1"], model, "sim-sw2", isl),
                Switch("sim-sw2", SWITCH_MGMT["sim-sw2"], model, "sim-sw1", isl))
    return Pod(nodes, storage,
               tuple(dgx_node(i, nodes) for i in range(1, nodes + 1)),
               tuple(storage_node(j, nodes) for j in range(1, storage + 1)),
               switches)


def switch_wiring(pod: Pod) -> dict[str, dict[str, dict]]:
    """What is physically cabled to each fake switch port: {switch: {port: {host, nic, speed, mac}}}. The fake
    switches answer LLDP and link state from it (sim/fakeswitch/eos_show.py); it is the simulator's cabling,
    written independently of the inventory, so a model/cabling mismatch can be injected (the swap fault)."""
    out: dict[str, dict[str, dict]] = {sw.name: {} for sw in pod.switches}
    for node in pod.all_nodes:
        for nic in node.nics:
            if nic.switch and nic.switch_port:
                out[nic.switch][nic.switch_port] = {"host": node.name, "nic": nic.name, "speed": nic.speed or 100,
                                                    "mac": nic.mac}
    for sw in pod.switches:
        for port in sw.isl_members:  # the inter-switch link: member N of one switch to member N of the other
            out[sw.name][port] = {"host": sw.peer, "nic": port, "speed": 100, "mac": ""}
    return out


def _nic_flow(nic: Nic) -> str:
    parts = ["name: %s" % nic.name]
    if nic.rdma_device:
        parts.append("rdma_device: %s" % nic.rdma_device)
    parts += ["fabric: %s" % nic.fabric, "address: %s" % nic.address]
    if nic.speed is not None:
        parts.append("speed: %d" % nic.speed)
    if nic.switch:
        parts += ["switch: %s" % nic.switch, "switch_port: %s" % nic.switch_port]
    return "{%s}" % ", ".join(parts)


def render_inventory(pod: Pod, engine: str = "podman", all_vars: tuple[str, ...] = ()) -> str:
    """The text of inventories/sim/hosts.yml (deterministic; the model is docs/pod-model.md). With
    engine docker (`podsim up --engine docker`) every DGX carries `ngc_container_engine: docker` as a host
    variable, which overrides the podman of group_vars/all/containers.yml (host vars win over group vars).
    all_vars: lines of the `all: vars:` mapping (sim/podsimlib/slurm.py's for `podsim up --scheduler slurm`)."""
    out = [
        "# GENERATED by sim/podsim.py up --nodes %d --storage %d%s — edit sim/, not this file."
        % (pod.nodes, pod.storage, " --engine docker" if engine == "docker" else ""),
        "# The pod-in-a-box: %d simulated DGX-1, %d nfs-ganesha storage nodes (Isilon F800 stand-ins), 2 switches."
        % (pod.nodes, pod.storage),
        "# One flow mapping per NIC (the pod model of docs/pod-model.md), hence the long lines.",
        "# yamllint disable rule:line-length",
        "---",
        "all:",
        "  children:",
        "    dgx:",
        "      hosts:",
    ]
    for n in pod.dgx:
        out += ["        %s:" % n.name, "          ansible_host: %s" % n.mgmt_address]
        if engine == "docker":
            out += ["          ngc_container_engine: docker"]
        out += ["          nics:"]
        out += ["            - %s" % _nic_flow(nic) for nic in n.nics]
    out += ["    storage:", "      hosts:" if pod.storage_nodes else "      hosts: {}"]
    for n in pod.storage_nodes:
        out += ["        %s:" % n.name, "          ansible_host: %s" % n.mgmt_address,
                "          storage_node: {platform: nfs-ganesha, model: F800}", "          nics:"]
        out += ["            - %s" % _nic_flow(nic) for nic in n.nics]
    out += ["    switches:", "      hosts:"]
    for sw in pod.switches:
        out += ["        %s:" % sw.name, "          ansible_host: %s" % sw.address,
                "          switch:", "            platform: eos", "            model: %s" % sw.model,
                "            port_channels:",
                "              - {id: 10, members: [%s, %s], mode: active, peer: %s}" % (sw.isl_members + (sw.peer,))]
    if all_vars:
        out += ["  vars:"] + ["    " + line for line in all_vars]
    return "\n".join(out) + "\n"
