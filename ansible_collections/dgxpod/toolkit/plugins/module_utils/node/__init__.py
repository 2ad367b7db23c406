"""A DGX host's own health (issue 39): kernel-log events, host inventory and BMC, pinned versions."""
