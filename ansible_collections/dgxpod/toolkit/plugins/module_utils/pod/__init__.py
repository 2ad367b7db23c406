# -*- coding: utf-8 -*-
"""The pod model, the floor above the result type and the catalogue (docs/architecture.md): the typed Pod built
once from the inventory and the model's own readers (types: model_from_hostvars, MODEL_VARS, switch_port_mtu,
vlan_id), the derivations every role reads (derive: NIC plan, /etc/hosts, NCCL env) and the RA profile with the
merged expectations (profile). It imports only the ground floor; preflight, which checks the model, is the
package above it (module_utils/preflight/)."""
