#!/usr/bin/env python3
"""Builds the seed corpora of kseg's fuzz targets under fuzz/corpus/<target>/ (not in git)
from testdata/, ../shared/reference*, and ../shared/realworld (its archives unpacked into a
temporary directory). Only the framing of the files is looked at here, to cut them into the
pieces each target takes (a batch, a compressed records area, a key and a value); decoding
is the targets' business.

    python3 fuzz/seed_corpora.py [--shared ../shared] [--max-bytes 8388608]
"""
import argparse
import hashlib
import os
import struct
import sys
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Selector bytes, as fuzz/src/formats.rs and fuzz/src/files.rs read them.
STATE_KIND = {".index": 0, ".timeindex": 1, ".txnindex": 2, ".snapshot": 3,
              "leader-epoch-checkpoint": 4, "partition.metadata": 5,
              "recovery-point-offset-checkpoint": 6, "replication-offset-checkpoint": 6,
              "log-start-offset-checkpoint": 6, "cleaner-offset-checkpoint": 6,
              "meta.properties": 7, ".kafka_cleanshutdown": 8}
NAMED = {"quorum-state": 0, ".checkpoint": 1, "bootstrap.checkpoint": 2,
         "__cluster_metadata": 3, "recovery-point-offset-checkpoint": 4,
         "replication-offset-checkpoint": 5, "log-start-offset-checkpoint": 6,
         "cleaner-offset-checkpoint": 7, "meta.properties": 8, ".kafka_cleanshutdown": 9,
         "__consumer_offsets": 10, "__transaction_state": 11, "__share_group_state": 12,
         "__remote_log_metadata": 13}
PER_FILE = 16
PARTITION_FILES = [".index", ".timeindex", ".txnindex", ".snapshot",
                   "leader-epoch-checkpoint", "partition.metadata"]


class Corpus:
    def __init__(self, out, max_bytes):
        self.out, self.max_bytes, self.count = out, max_bytes, {}

    def add(self, target, data):
        if not data or len(data) > self.max_bytes:
            return
        d = os.path.join(self.out, target)
        os.makedirs(d, exist_ok=True)
        name = hashlib.sha1(data).hexdigest()
        path = os.path.join(d, name)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
            self.count[target] = self.count.get(target, 0) + 1


def entries(log):
    """(offset, magic, entry bytes) of each whole entry of a .log (v0/v1 message or v2 batch)."""
    pos = 0
    while pos + 17 <= len(log):
        size = struct.unpack(">i", log[pos + 8:pos + 12])[0]
        if size < 0 or pos + 12 + size > len(log):
            return
        yield log[pos:pos + 12 + size]
        pos += 12 + size


def varint(b, i):
    shift = value = 0
    while True:
        x = b[i]
        i += 1
        value |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return (value >> 1) ^ -(value & 1), i


def v2_keys_values(entry):
    """Keys and values of an uncompressed v2 batch's records."""
    if len(entry) < 61 or entry[16] != 2 or entry[21:23][1] & 0x07:
        return
    count = struct.unpack(">i", entry[57:61])[0]
    i = 61
    try:
        for _ in range(min(count, 1000)):
            length, i = varint(entry, i)
            end = i + length
            i += 1  # attributes
            _, i = varint(entry, i)  # timestamp delta
            _, i = varint(entry, i)  # offset delta
            klen, i = varint(entry, i)
            key = None if klen < 0 else entry[i:i + klen]
            i += max(klen, 0)
            vlen, i = varint(entry, i)
            value = b"" if vlen < 0 else entry[i:i + vlen]
            yield key, value
            i = end
    except IndexError:
        return


def compressed_area(entry):
    """(selector, compressed bytes) of a compressed v2 batch or v0/v1 wrapper message."""
    magic = entry[16]
    if magic == 2 and len(entry) > 61:
        codec = entry[22] & 0x07
        if codec:
            return codec | 0x10, entry[61:]
    elif magic in (0, 1):
        codec = entry[17] & 0x07
        i = 18 + (8 if magic == 1 else 0)
        klen = struct.unpack(">i", entry[i:i + 4])[0]
        i += 4 + max(klen, 0)
        vlen = struct.unpack(">i", entry[i:i + 4])[0]
        if codec and vlen > 0:
            return codec | (magic << 3), entry[i + 4:i + 4 + vlen]
    return None


def partition_dirs(root):
    for d, _, files in os.walk(root):
        if any(f.endswith(".log") or f.endswith(".checkpoint") for f in files) or \
                any(f in STATE_KIND or f in NAMED for f in files):
            yield d, sorted(files)


def topic_of(d):
    name = os.path.basename(d)
    return name.rsplit("-", 1)[0] if "-" in name else name


def seed_dir(c, d, files):
    topic = topic_of(d)
    read = lambda f: open(os.path.join(d, f), "rb").read()
    for f in files:
        p = os.path.join(d, f)
        if not os.path.isfile(p) or os.path.getsize(p) > c.max_bytes:
            continue
        data = read(f)
        if f.endswith(".log"):
            c.add("log_segment", data)
            if topic in NAMED:
                c.add("named_file", bytes([NAMED[topic]]) + data)
            # A few entries of each segment: its first ones and its compressed ones.
            for n, e in enumerate(entries(data)):
                if n < PER_FILE:
                    c.add("batch", e)
                area = compressed_area(e)
                if area:
                    c.add("codec", bytes([area[0]]) + area[1])
                for k, v in list(v2_keys_values(e))[:PER_FILE] if n < PER_FILE else []:
                    if k is not None and len(k) < 255:
                        c.add("internal_records", bytes([len(k)]) + k + v)
        elif f.endswith(".checkpoint"):
            c.add("named_file", bytes([NAMED["bootstrap.checkpoint" if f == "bootstrap.checkpoint"
                                             else ".checkpoint"]]) + data)
        else:
            ext = os.path.splitext(f)[1]
            kind = STATE_KIND.get(f, STATE_KIND.get(ext))
            if kind is not None:
                c.add("state_files", bytes([kind]) + data[:65536])
            if f in NAMED:
                c.add("named_file", bytes([NAMED[f]]) + data)
    # partition_files: six length bytes (units of 4), then the parts in PARTITION_FILES order.
    parts = []
    for suffix in PARTITION_FILES:
        match = [f for f in files if f.endswith(suffix) or f == suffix]
        parts.append(read(match[0])[:1020] if match else b"")
    lens = bytes(min(len(p) // 4, 255) for p in parts)
    c.add("partition_files", lens + b"".join(p[:l * 4] for p, l in zip(parts, lens)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    ap.add_argument("--max-bytes", type=int, default=8 << 20)
    args = ap.parse_args()
    c = Corpus(os.path.join(ROOT, "fuzz", "corpus"), args.max_bytes)
    roots = [os.path.join(ROOT, "testdata")]
    roots += [os.path.join(args.shared, r) for r in ("reference", "reference-internal")]
    with tempfile.TemporaryDirectory() as tmp:
        rw = os.path.join(args.shared, "realworld")
        for a in sorted(os.listdir(rw)) if os.path.isdir(rw) else []:
            if a.endswith(".tar.gz"):
                dest = os.path.join(tmp, a)
                os.makedirs(dest)
                # GNU tar keeps the preallocated zero-filled indexes sparse (-S).
                subprocess.run(["tar", "-xSzf", os.path.join(rw, a), "-C", dest], check=True)
                roots.append(os.path.join(tmp, a))
        for r in roots:
            for d, files in partition_dirs(r):
                seed_dir(c, d, files)
    # The structured target reads its choices from any bytes: a few random inputs start it.
    for i in range(32):
        c.add("partition", hashlib.sha512(b"kseg-partition-%d" % i).digest() * (1 + i % 8))
    for t, n in sorted(c.count.items()):
        print(f"{t}: {n} new seeds")


if __name__ == "__main__":
    sys.exit(main())
