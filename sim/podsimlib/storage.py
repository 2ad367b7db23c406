"""The storage nodes' NFS server: nfs-ganesha's config (the Isilon F800 node stand-in, every storage node
exporting the same host directory as /ifs).  The daemons are started by sim/node-init.sh (nodes.py restarts them)."""

from __future__ import annotations

IFS_EXPORT = "/ifs"


def ganesha_conf(export_dir: str) -> str:
    return """\
# nfs-ganesha of a simulated storage node (podsim): the Isilon F800 node stand-in.
# Every storage node exports the same host directory as /ifs (Isilon's single namespace).
NFS_CORE_PARAM {
    Protocols = 3, 4;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    NFS_Port = 2049;
    Mount_Path_Pseudo = true;
}
NFSV4 {
    Graceless = true;
    RecoveryRoot = /run/ganesha/recovery;
    Only_Numeric_Owners = true;
}
MDCACHE {
    Entries_HWMark = 100000;
}
EXPORT_DEFAULTS {
    Attr_Expiration_Time = 0;
}
EXPORT {
    Export_Id = 1;
    Path = "%s";
    Pseudo = "%s";
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = sys;
    Protocols = 3, 4;
    Transports = TCP;
    FSAL {
        Name = VFS;
    }
}
NFS_KRB5 {
    Active_krb5 = false;
}
LOG {
    Default_Log_Level = EVENT;
}
""" % (export_dir, IFS_EXPORT)
