# -*- coding: utf-8 -*-
"""The switches: structured config from the pod (model), rendering (render), diff (diff), push (push), lossless
verify (verify), show-command parsers (show_parse), the validation readings (readings) and the switch stage's
evaluation (eval)."""
