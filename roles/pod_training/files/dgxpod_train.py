#!/usr/bin/env python3
"""The training stage's job: PyTorch DistributedDataParallel on real JPEG files from the pod's storage.

Started by library/pod_train.py through mpirun in the MPI containers (one process per GPU on real pods,
one or two per node on the pod-in-a-box). Rank and world come from Open MPI's environment
(OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK; RANK/WORLD_SIZE/LOCAL_RANK also work). Rank r reads its files
through ``--data-dirs[r % len]`` (004's round robin over the data mounts), a fixed shard of the dataset's
file list (FILES.txt) in a fixed order, so a second pass reads the same files through the same mount.

The files: the generated dataset (``FILES.txt`` in each data directory) or a user's own dataset, read-only, listed
once by library/pod_dataset.py into a manifest beside the generated one (``--manifest``): an ImageFolder tree
(``<class>/<file>.jpg``) read file by file, or WebDataset-style shards (``--format shards``: tar files of
``<key>.jpg`` + ``<key>.cls``/``.json`` members) read sequentially, each rank its own shards. A file that cannot be
read or decoded (a truncated JPEG) does not end the job: its sample is replaced by a blank image, and the rank
reports the file's path (``bad_files``), so the report names the file once instead of one rank's crash and every
other rank's broken connection.

Every step is timed: the time spent waiting for the next batch (data), the whole step, and the rank's
own work (data wait + forward + optimizer step: everything but the backward pass, where DDP's all-reduce
makes every rank wait for the slowest - so a slow node shows in its own figure, not in everyone's). DDP runs
with ``broadcast_buffers=False``: by default every forward starts by broadcasting rank 0's BatchNorm running
statistics, a collective that made every rank's "own work" wait for the slowest rank (measured on the
pod-in-a-box: one DGX capped to 0.02 CPU cut three nodes' own work to its level). In training mode BatchNorm
normalises with the batch's own statistics, so the running statistics (used only for evaluation, which this
job does not do) being each rank's own changes neither the loss nor the gradients. The first
``--warmup`` steps are not measured; the measured window runs between two barriers. At the end of a pass every
rank prints one line ``DGXPOD_TRAIN {json}`` (module_utils/training/parse.py reads it); a rank that fails prints
``DGXPOD_TRAIN_ERROR {json}`` naming its pass and exits 1, so no later pass runs. Local rank 0 samples
``nvidia-smi`` during the window when ``--gpu-util-interval`` > 0 and prints the raw CSV lines in its result.

``--passes cold,warm`` runs the passes one after another in the same processes (one mpirun, one rendezvous):
each pass builds its model, optimizer and data loader anew from the same seed and reads the same files, so
only where the files come from differs (the storage, then the page cache). Starting PyTorch in every rank took
about 5 s of each 7-8 s pass on the pod-in-a-box; a job per pass paid it twice.
"""
import argparse
import datetime
import io
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import traceback

RANK_ENV = (("OMPI_COMM_WORLD_RANK", "RANK"), ("OMPI_COMM_WORLD_SIZE", "WORLD_SIZE"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK"))


def env_int(names, default=None):
    for n in names:
        if os.environ.get(n, "").strip():
            return int(os.environ[n])
    if default is None:
        raise RuntimeError("none of %s is set (start under mpirun or set RANK/WORLD_SIZE)" % ", ".join(names))
    return default


def emit(tag, doc):
    sys.stdout.write("%s %s\n" % (tag, json.dumps(doc, sort_keys=True)))
    sys.stdout.flush()


def read_file_list(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 3:
                raise ValueError("%s line %d: expected '<path> <bytes> <class>'" % (path, n))
            out.append((parts[0], int(parts[1]), int(parts[2])))
    if not out:
        raise ValueError("%s lists no files" % path)
    return out


class GpuSampler(threading.Thread):
    """nvidia-smi --query-gpu=index,utilization.gpu every interval seconds; raw CSV lines kept."""

    def __init__(self, interval):
        super().__init__(daemon=True)
        self.interval, self.lines, self.errors = interval, [], []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                p = subprocess.run(["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True, timeout=10)
                if p.returncode == 0:
                    self.lines += [ln for ln in p.stdout.splitlines() if ln.strip()]
                else:
                    self.errors.append((p.stderr or p.stdout).strip()[:200])
            except (OSError, subprocess.TimeoutExpired) as exc:
                self.errors.append(str(exc)[:200])
            self.stop.wait(self.interval)


IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".bmp")
LABEL_EXTS = (".cls", ".json", ".txt", ".label")
BAD_FILES_KEPT = 20  # paths a rank reports; the count is always whole


def decode(raw, size):
    """(uint8 HxWx3 bytes of the image resized to size x size) or raise (truncated, not an image)."""
    from PIL import Image
    img = Image.open(io.BytesIO(raw))
    img.load()  # decode now: a truncated file fails here, not later in a worker's convert()
    return img.convert("RGB").resize((size, size), Image.BILINEAR).tobytes()


def shard_label(name, raw):
    """The class of a WebDataset sample from its label member (``.cls``/``.txt``: an integer; ``.json``: the
    ``label``/``cls``/``class`` key)."""
    text = raw.decode("utf-8", "replace").strip()
    if name.lower().endswith(".json"):
        doc = json.loads(text)
        for key in ("label", "cls", "class"):
            if isinstance(doc, dict) and isinstance(doc.get(key), int):
                return doc[key]
        raise ValueError("no integer label/cls/class in %s" % name)
    return int(text.split()[0])


def shard_samples(path):
    """The samples of one WebDataset tar, in order: (key, image bytes or None, label or None, problem or None).
    A sample is the members sharing a key (the member name up to the first dot of its base name)."""
    import tarfile
    cur, img, label, problem = None, None, None, None
    with tarfile.open(path, mode="r|*") as tar:
        for m in tar:
            if not m.isfile():
                continue
            base = os.path.basename(m.name)
            key = os.path.join(os.path.dirname(m.name), base.split(".", 1)[0])
            ext = "." + base.split(".", 1)[1].lower() if "." in base else ""
            if key != cur:
                if cur is not None:
                    yield cur, img, label, problem
                cur, img, label, problem = key, None, None, None
            raw = tar.extractfile(m).read()
            if ext in IMAGE_EXTS:
                img = raw
            elif ext in LABEL_EXTS:
                try:
                    label = shard_label(base, raw)
                except ValueError as exc:
                    problem = "label %s: %s" % (base, exc)
    if cur is not None:
        yield cur, img, label, problem


def main():
    ap = argparse.ArgumentParser(description="DGX pod training stage job")
    ap.add_argument("--data-dirs", required=True, help="comma-separated dataset root through each data mount")
    ap.add_argument("--pass-name", default="run", help="name of the one pass (without --passes)")
    ap.add_argument("--passes", default="", help="comma-separated pass names, run one after another (cold,warm)")
    ap.add_argument("--model", default="small", help="small, or a torchvision.models name (resnet50)")
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--batch", type=int, default=32, help="images per rank per step")
    ap.add_argument("--steps", type=int, default=20, help="measured steps")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--workers", type=int, default=0, help="DataLoader worker processes per rank")
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: leave)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--master-addr", required=True)
    ap.add_argument("--master-port", type=int, default=29533)
    ap.add_argument("--init-timeout", type=int, default=120)
    ap.add_argument("--gpu-util-interval", type=float, default=0)
    ap.add_argument("--manifest", default="", help="the file list ('<path> <bytes> <class>' per line, paths relative "
                    "to the data directory); default: <data dir>/FILES.txt (the generated dataset)")
    ap.add_argument("--format", default="imagefolder", choices=["imagefolder", "shards"],
                    help="imagefolder: one image per manifest line; shards: one WebDataset tar per line")
    ap.add_argument("--classes", type=int, default=0, help="classes of a sharded dataset (0: from the manifest)")
    ap.add_argument("--shuffle-buffer", type=int, default=256, help="samples a shard reader shuffles among (raw bytes)")
    args = ap.parse_args()
    rank = env_int(RANK_ENV[0])
    world = env_int(RANK_ENV[1])
    local = env_int(RANK_ENV[2], 0)
    host = socket.gethostname()
    passes = [n.strip() for n in args.passes.split(",") if n.strip()] or [args.pass_name]
    current = [passes[0]]  # the pass running now, named by an error
    try:
        run(args, rank, world, local, host, passes, current)
    except Exception as exc:  # every failure names its rank, host and pass
        emit("DGXPOD_TRAIN_ERROR", {"rank": rank, "host": host, "pass": current[0],
                                    "error": "%s: %s" % (type(exc).__name__, exc),
                                    "trace": traceback.format_exc().splitlines()[-6:]})
        sys.stdout.flush()
        os._exit(1)


def run(args, rank, world, local, host, passes, current):
    import torch
    import torch.distributed as dist

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda", local) if args.device == "cuda" else torch.device("cpu")
    if args.device == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(args.backend, init_method="tcp://%s:%d" % (args.master_addr, args.master_port),
                            rank=rank, world_size=world, timeout=datetime.timedelta(seconds=args.init_timeout))
    for name in passes:
        current[0] = name
        emit("DGXPOD_TRAIN", one_pass(args, rank, world, local, host, name, device))
    dist.destroy_process_group()


def one_pass(args, rank, world, local, host, pass_name, device):
    """One pass: a fresh model from the seed, warm-up, then the measured window; returns the rank's record."""
    import torch
    import torch.distributed as dist
    import torch.nn as nn

    dirs = [d for d in args.data_dirs.split(",") if d]
    data_dir = dirs[rank % len(dirs)]
    files = read_file_list(args.manifest or os.path.join(data_dir, "FILES.txt"))
    classes = args.classes or max(c for _, _, c in files) + 1
    per_rank = (args.warmup + args.steps) * args.batch
    g = torch.Generator()
    g.manual_seed(args.seed)
    order = torch.randperm(len(files), generator=g).tolist()
    mine = order[rank::world]
    size = args.image_size
    blank = bytes(size * size * 3)

    def sample(raw, label, where):
        """(tensor, label, bytes, bad path or "") of one image; a file that does not decode is a blank image."""
        try:
            pixels, bad = decode(raw, size), ""
        except Exception as exc:  # PIL raises several types for a broken file
            pixels, bad = blank, "%s (%s: %s)" % (where, type(exc).__name__, str(exc)[:120])
        x = torch.frombuffer(bytearray(pixels), dtype=torch.uint8).view(size, size, 3)
        x = x.permute(2, 0, 1).float().div_(255.0).sub_(0.45).div_(0.225)
        return x, int(label) % classes, len(raw), bad

    if args.format == "shards":
        # each rank its own shards (all of them, every world-th sample, when there are fewer shards than ranks);
        # each DataLoader worker its own of the rank's shards, so no tar is streamed twice at once
        shards = [os.path.join(data_dir, files[i][0]) for i in (mine or order)]
        stride, offset = (1, 0) if mine else (world, rank)
        wrapped = None  # the shards' sample counts are not known before they are read
        batches = args.warmup + args.steps

        class Shards(torch.utils.data.IterableDataset):
            def __iter__(self):
                info = torch.utils.data.get_worker_info()
                w, nw = (info.id, info.num_workers) if info else (0, 1)
                own = shards[w::nw] or shards[w % len(shards)::len(shards)]
                want = sum(args.batch for b in range(batches) if b % nw == w)

                def stream():  # this worker's samples, its shards over and over: (where, raw, label, problem)
                    seen = 0
                    while True:
                        before = seen
                        for path in own:
                            for key, raw, label, problem in shard_samples(path):
                                seen += 1
                                if (seen - 1) % stride == offset:
                                    yield "%s:%s" % (path, key), raw, label, problem
                        if seen == before:
                            raise RuntimeError("the shards %s hold no sample" % ", ".join(own[:3]))

                # a shuffle buffer, as WebDataset's loaders use: shards are read in order, and a shard written
                # in class order would otherwise give batches of one class (the loss would not go down)
                rnd = random.Random(args.seed * 1000003 + rank * 1009 + w)
                buf, n = [], 0
                for item in stream():
                    buf.append(item)
                    if len(buf) < args.shuffle_buffer:
                        continue
                    where, raw, label, problem = buf.pop(rnd.randrange(len(buf)))
                    if raw is None or problem:
                        x, y, nb, _ = sample(b"", 0, where)
                        yield x, y, nb, "%s (%s)" % (where, problem or "no image member")
                    else:
                        yield sample(raw, label or 0, where)
                    n += 1
                    if n >= want:
                        return

        dataset = Shards()
    else:
        wrapped = len(mine) < per_rank
        indices = [mine[i % len(mine)] for i in range(per_rank)]

        class Files(torch.utils.data.Dataset):
            def __len__(self):
                return len(indices)

            def __getitem__(self, i):
                rel, _, label = files[indices[i]]
                path = os.path.join(data_dir, rel)
                try:
                    with open(path, "rb") as f:
                        raw = f.read()
                except OSError as exc:  # unreadable: named, the job goes on (a missing mount fails elsewhere)
                    x, y, nb, _ = sample(b"", label, path)
                    return x, y, nb, "%s (%s)" % (path, exc.strerror or exc)
                return sample(raw, label, path)

        dataset = Files()

    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=False, drop_last=True,
                                         num_workers=args.workers, pin_memory=args.device == "cuda",
                                         persistent_workers=False)
    torch.manual_seed(args.seed)
    if args.model == "small":
        model = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(),
                              nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))
    else:
        import torchvision
        model = getattr(torchvision.models, args.model)(num_classes=classes)
    model = model.to(device)
    if args.device == "cuda":
        model = model.to(memory_format=torch.channels_last)
    # no collective in the forward pass (the module docstring): a rank's own work is its own
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local] if args.device == "cuda" else None,
                                              broadcast_buffers=False)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and args.device == "cuda")
    lossf = nn.CrossEntropyLoss()
    losses, data_wait, step_time, busy, nbytes, images = [], 0.0, 0.0, 0.0, 0, 0
    bad_files, bad_count = [], 0

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    sampler = None
    it = iter(loader)
    t_start = None
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            dist.barrier()
            if args.gpu_util_interval > 0 and local == 0:
                sampler = GpuSampler(args.gpu_util_interval)
                sampler.start()
            t_start = time.monotonic()
        t0 = time.monotonic()
        x, y, nb, bad = next(it)
        t1 = time.monotonic()
        for b in bad:
            if b:
                bad_count += 1
                if b not in bad_files and len(bad_files) < BAD_FILES_KEPT:
                    bad_files.append(b)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=args.device, enabled=args.amp and args.device == "cuda"):
            loss = lossf(ddp(x), y)
        sync()
        t_fwd = time.monotonic()
        scaler.scale(loss).backward()  # the gradients' all-reduce overlaps this: time spent waiting for peers
        sync()
        t_bwd = time.monotonic()
        scaler.step(opt)
        scaler.update()
        value = float(loss.item())  # waits for the step (GPU) to finish
        t2 = time.monotonic()
        if value != value:
            raise RuntimeError("loss is NaN at step %d" % step)
        losses.append(round(value, 5))
        if step >= args.warmup:
            data_wait += t1 - t0
            busy += (t_fwd - t0) + (t2 - t_bwd)
            step_time += t2 - t0
            nbytes += int(nb.sum())
            images += int(x.shape[0])
    dist.barrier()
    window = time.monotonic() - t_start
    if sampler is not None:
        sampler.stop.set()
        sampler.join(timeout=15)
    result = {"pass": pass_name, "rank": rank, "world": world, "local_rank": local, "host": host,
              "data_dir": data_dir, "backend": args.backend, "model": args.model, "device": str(device),
              "amp": bool(args.amp and args.device == "cuda"), "batch": args.batch, "steps": args.steps,
              "warmup": args.warmup, "images": images, "seconds": round(window, 4),
              "images_per_s": round(images / window, 3) if window > 0 else None,
              "step_s": round(step_time / args.steps, 5), "data_wait_s": round(data_wait, 4),
              "busy_s": round(busy, 4),
              "bytes_read": nbytes, "files_per_rank": len(mine), "wrapped": wrapped, "losses": losses,
              "classes": classes, "format": args.format, "bad_files": bad_files, "bad_count": bad_count}
    if sampler is not None:
        result["gpu_util_csv"] = sampler.lines
        result["gpu_util_errors"] = sampler.errors[:3]
    return result


if __name__ == "__main__":
    main()
