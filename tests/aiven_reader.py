#!/usr/bin/env python3
"""A second reader (and writer) of Aiven's tiered-storage objects, written from the plugin's
source (Aiven-Open/tiered-storage-for-apache-kafka, core/src/main/java/io/aiven/kafka/
tieredstorage: ObjectKeyFactory, manifest/*, manifest/index/*, security/*, transform/*,
KafkaRemoteStorageManager), not from kseg's code, so that kseg's writer and reader are not each
other's only check.

  aiven_reader.py keygen PRIVATE.pem PUBLIC.pem
  aiven_reader.py decode BUCKET_DIR OUT_DIR [--key ID=PRIVATE.pem ...]
      every *.rsm-manifest under BUCKET_DIR -> OUT_DIR/<same relative path without suffix>.
      {log,offset,timestamp,producerSnapshot,leaderEpoch,transaction}
  aiven_reader.py encode BUCKET_DIR KEY LOG OFFSET TIME SNAPSHOT EPOCH TXN|- --chunk-size N
      [--compression] [--encrypt ID=PUBLIC.pem]
      writes KEY.log, KEY.indexes, KEY.rsm-manifest under BUCKET_DIR (KEY without suffix)
"""

import base64
import hashlib
import json
import os
import struct
import sys

import zstandard
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

IV_SIZE = 12  # SegmentEncryptionMetadataV1.IV_SIZE
INDEXES = ["offset", "timestamp", "producerSnapshot", "leaderEpoch", "transaction"]


# RsaEncryptionProvider: "RSA/NONE/OAEPWithSHA3-512AndMGF1Padding" under BouncyCastle, which
# uses SHA3-512 for the MGF1 as well, and an empty label. The cryptography package refuses SHA3
# in OAEP, so OAEP (RFC 8017, 7.1) is done here over the raw RSA numbers.
def sha3(data):
    return hashlib.sha3_512(data).digest()


def mgf1(seed, length):
    out = b""
    counter = 0
    while len(out) < length:
        out += sha3(seed + counter.to_bytes(4, "big"))
        counter += 1
    return out[:length]


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def oaep_encrypt(public, message):
    numbers = public.public_numbers()
    k = (numbers.n.bit_length() + 7) // 8
    h = len(sha3(b""))
    db = sha3(b"") + b"\0" * (k - len(message) - 2 * h - 2) + b"\1" + message
    seed = os.urandom(h)
    masked_db = xor(db, mgf1(seed, k - h - 1))
    masked_seed = xor(seed, mgf1(masked_db, h))
    em = int.from_bytes(b"\0" + masked_seed + masked_db, "big")
    return pow(em, numbers.e, numbers.n).to_bytes(k, "big")


def oaep_decrypt(private, ciphertext):
    numbers = private.private_numbers()
    n = numbers.public_numbers.n
    k = (n.bit_length() + 7) // 8
    h = len(sha3(b""))
    em = pow(int.from_bytes(ciphertext, "big"), numbers.d, n).to_bytes(k, "big")
    assert em[0] == 0, "OAEP: first byte not zero"
    masked_seed, masked_db = em[1 : 1 + h], em[1 + h :]
    seed = xor(masked_seed, mgf1(masked_db, h))
    db = xor(masked_db, mgf1(seed, k - h - 1))
    assert db[:h] == sha3(b""), "OAEP: label hash differs"
    rest = db[h:].lstrip(b"\0")
    assert rest[:1] == b"\1", "OAEP: no 0x01 separator"
    return rest[1:]


def decode_sizes(text):
    """ChunkSizesBinaryCodec.decode of the zstd frame in base64 (TransformedChunksDeserializer)."""
    raw = zstandard.ZstdDecompressor().decompress(base64.b64decode(text))
    (count,) = struct.unpack_from(">i", raw, 0)
    if count == 0:
        return []
    if count == 1:
        return [struct.unpack_from(">i", raw, 4)[0]]
    base, width = struct.unpack_from(">ib", raw, 4)
    at = 9
    out = []
    for _ in range(count - 1):
        out.append(int.from_bytes(raw[at : at + width], "big") + base)
        at += width
    out.append(struct.unpack_from(">i", raw, at)[0])
    return out


def encode_sizes(values):
    """ChunkSizesBinaryCodec.encode, then a zstd frame with content size, base64."""
    raw = struct.pack(">i", len(values))
    if len(values) == 1:
        raw += struct.pack(">i", values[0])
    elif len(values) > 1:
        rest = values[:-1]
        base = min(rest)
        width = max(1 if v - base <= 0xFF else 2 if v - base <= 0xFFFF else 3 if v - base <= 0xFFFFFF else 4 for v in rest)
        raw += struct.pack(">ib", base, width)
        for v in rest:
            raw += (v - base).to_bytes(4, "big")[4 - width :]
        raw += struct.pack(">i", values[-1])
    cctx = zstandard.ZstdCompressor(level=3, write_content_size=True)
    return base64.b64encode(cctx.compress(raw)).decode()


def chunks(index):
    """AbstractChunkIndex.materializeChunks: (original size, transformed position, size)."""
    ocs, ofs = index["originalChunkSize"], index["originalFileSize"]
    if index["type"] == "fixed":
        count = -(-ofs // ocs)
        sizes = [index["transformedChunkSize"]] * (count - 1) + [index["finalTransformedChunkSize"]] if count else []
    else:
        sizes = decode_sizes(index["transformedChunks"])
        count = len(sizes)
    out, pos = [], 0
    for i, size in enumerate(sizes):
        original = ofs - (count - 1) * ocs if i == count - 1 else ocs
        out.append((original, pos, size))
        pos += size
    return out


def unwrap(data_key_text, keys):
    """DataKeyDeserializer / EncryptedDataKey.parse: '{keyId}:{base64}', RSA-unwrapped."""
    key_id, b64 = data_key_text.split(":")
    return oaep_decrypt(keys[key_id], base64.b64decode(b64))


def decrypt(chunk, data_key, aad):
    """DecryptionChunkEnumeration: IV first, then AES/GCM/NoPadding with the tag at the end."""
    return AESGCM(data_key).decrypt(chunk[:IV_SIZE], chunk[IV_SIZE:], aad)


def decode(bucket, out_dir, keys):
    count = 0
    for root, _, files in os.walk(bucket):
        for name in files:
            if not name.endswith(".rsm-manifest"):
                continue
            base = os.path.join(root, name[: -len(".rsm-manifest")])
            with open(base + ".rsm-manifest", "rb") as f:
                manifest = json.load(f)
            assert manifest["version"] == "1", manifest["version"]
            enc = manifest.get("encryption")
            data_key = aad = None
            if enc is not None:
                data_key = unwrap(enc["dataKey"], keys)
                aad = base64.b64decode(enc["aad"])
            with open(base + ".log", "rb") as f:
                obj = f.read()
            log = bytearray()
            for original, pos, size in chunks(manifest["chunkIndex"]):
                chunk = obj[pos : pos + size]
                assert len(chunk) == size, "chunk past the end of the .log object"
                if data_key is not None:
                    chunk = decrypt(chunk, data_key, aad)
                if manifest["compression"]:
                    # DecompressionChunkEnumeration: the frame must carry its content size.
                    chunk = zstandard.ZstdDecompressor().decompress(chunk)
                assert len(chunk) == original, (len(chunk), original)
                log += chunk
            with open(base + ".indexes", "rb") as f:
                indexes = f.read()
            rel = os.path.relpath(base, bucket)
            dest = os.path.join(out_dir, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest + ".log", "wb") as f:
                f.write(log)
            for kind in INDEXES:
                r = manifest["segmentIndexes"].get(kind)
                if r is None:
                    continue
                data = indexes[r["position"] : r["position"] + r["size"]]
                if data and data_key is not None:
                    data = decrypt(data, data_key, aad)
                with open(dest + "." + kind, "wb") as f:
                    f.write(data)
            count += 1
    print(count)


def encode(bucket, key, paths, chunk_size, compression, encrypt):
    with open(paths[0], "rb") as f:
        log = f.read()
    data_key = aad = None
    encryption = None
    if encrypt is not None:
        key_id, public = encrypt
        data_key, aad = os.urandom(32), os.urandom(32)
        wrapped = oaep_encrypt(public, data_key)
        encryption = {"dataKey": key_id + ":" + base64.b64encode(wrapped).decode(), "aad": base64.b64encode(aad).decode()}

    def transform(data, compress):
        if compress:
            data = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(data)
        if data_key is not None:
            iv = os.urandom(IV_SIZE)
            data = iv + AESGCM(data_key).encrypt(iv, data, aad)
        return data

    pieces = [log[i : i + chunk_size] for i in range(0, len(log), chunk_size)]
    out = [transform(p, compression) for p in pieces]
    if compression:
        index = {"type": "variable", "originalChunkSize": chunk_size, "originalFileSize": len(log),
                 "transformedChunks": encode_sizes([len(o) for o in out])}
    else:
        overhead = 28 if data_key is not None else 0
        index = {"type": "fixed", "originalChunkSize": chunk_size, "originalFileSize": len(log),
                 "transformedChunkSize": chunk_size + overhead,
                 "finalTransformedChunkSize": len(out[-1]) if out else 0}
    indexes, ranges = b"", {}
    for kind, path in zip(INDEXES, paths[1:]):
        if path == "-":
            ranges[kind] = None
            continue
        with open(path, "rb") as f:
            data = f.read()
        data = transform(data, False) if data else b""
        ranges[kind] = {"position": len(indexes), "size": len(data)}
        indexes += data
    manifest = {"version": "1", "chunkIndex": index, "segmentIndexes": ranges, "compression": compression}
    if encryption is not None:
        manifest["encryption"] = encryption
    manifest["remoteLogSegmentMetadata"] = None
    dest = os.path.join(bucket, key)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    for suffix, data in [("log", b"".join(out)), ("indexes", indexes), ("rsm-manifest", json.dumps(manifest, separators=(",", ":")).encode())]:
        with open(dest + "." + suffix, "wb") as f:
            f.write(data)


def main(argv):
    cmd = argv[1]
    if cmd == "keygen":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        with open(argv[2], "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        with open(argv[3], "wb") as f:
            f.write(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    elif cmd == "decode":
        keys = {}
        rest = argv[4:]
        while rest:
            assert rest[0] == "--key"
            key_id, path = rest[1].split("=", 1)
            with open(path, "rb") as f:
                keys[key_id] = serialization.load_pem_private_key(f.read(), password=None)
            rest = rest[2:]
        decode(argv[2], argv[3], keys)
    elif cmd == "encode":
        bucket, key, paths, rest = argv[2], argv[3], argv[4:10], argv[10:]
        chunk_size, compression, encrypt = None, False, None
        while rest:
            if rest[0] == "--chunk-size":
                chunk_size, rest = int(rest[1]), rest[2:]
            elif rest[0] == "--compression":
                compression, rest = True, rest[1:]
            elif rest[0] == "--encrypt":
                key_id, path = rest[1].split("=", 1)
                with open(path, "rb") as f:
                    encrypt = (key_id, serialization.load_pem_public_key(f.read()))
                rest = rest[2:]
            else:
                raise SystemExit("unknown option " + rest[0])
        encode(bucket, key, paths, chunk_size, compression, encrypt)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
