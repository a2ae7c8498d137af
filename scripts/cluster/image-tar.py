#!/usr/bin/env python3
"""Writes a one-layer image as a docker-archive tar (what `ctr images import` reads), with no
image builder and no registry: the layer holds one static binary.

  image-tar.py OUT.tar NAME:TAG BINARY PATH_IN_IMAGE [ENTRYPOINT_ARG...]

Used for the node's stand-in `registry.k8s.io/pause` (a static busybox that sleeps) and for the
cluster test's toolbox (a static busybox with nslookup and wget).
"""
import hashlib
import io
import json
import sys
import tarfile

out, ref, binary, path, *entrypoint = sys.argv[1:]
layer = io.BytesIO()
with tarfile.open(fileobj=layer, mode="w") as t:
    for d in ("tmp",):
        info = tarfile.TarInfo(d)
        info.type, info.mode = tarfile.DIRTYPE, 0o1777
        t.addfile(info)
    parts = path.strip("/").split("/")
    for i in range(1, len(parts)):
        info = tarfile.TarInfo("/".join(parts[:i]))
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        t.addfile(info)
    with open(binary, "rb") as f:
        data = f.read()
    info = tarfile.TarInfo(path.strip("/"))
    info.size, info.mode = len(data), 0o755
    t.addfile(info, io.BytesIO(data))
layer_bytes = layer.getvalue()
diff_id = "sha256:" + hashlib.sha256(layer_bytes).hexdigest()
config = json.dumps({
    "architecture": "amd64",
    "os": "linux",
    "config": {"Entrypoint": entrypoint or [path], "Env": ["PATH=/bin"], "User": "65535:65535"},
    "rootfs": {"type": "layers", "diff_ids": [diff_id]},
}).encode()
manifest = json.dumps([{"Config": "config.json", "RepoTags": [ref], "Layers": ["layer.tar"]}]).encode()
with tarfile.open(out, mode="w") as t:
    for name, data in (("layer.tar", layer_bytes), ("config.json", config), ("manifest.json", manifest)):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
