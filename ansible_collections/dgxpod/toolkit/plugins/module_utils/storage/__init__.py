# -*- coding: utf-8 -*-
"""Shared storage: the NFS mount plan (nfs_plan), Spectrum Scale's plan, parsers and runner (scale_plan,
scale_parsers, scale_run), and fio - its job files, parser, step record and evaluation (fio_job, fio_parse,
fio_record, fio_eval)."""
