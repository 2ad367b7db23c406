# -*- coding: utf-8 -*-
"""Network performance (iperf3): the plans and round-robin rounds (plan), the schedule (schedule), the commands
(cmd), each host's launch (iperf_launch), the re-run of a slow pair (iperf_confirm) and the iperf3 JSON parser
(iperf_parse)."""
