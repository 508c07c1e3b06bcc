#!/usr/bin/env python3
"""Generates src/format/internal/tables.rs from Kafka's JSON message definitions.

Usage: scripts/gen_internal_tables.py [--check]

Reads testdata/kafka-messages/MANIFEST (one line per definition: path, commit, sha256),
verifies each file's sha256, and writes the schema tables (see src/format/internal/schema.rs)
plus the record-type tables of the coordinators and the metadata log. With --check it writes
nothing and exits 1 when the committed file differs. Python 3 standard library only.

Updating to a newer Kafka: put the new definition files under testdata/kafka-messages/,
list them in MANIFEST, rerun, review the diff of tables.rs.
"""

import hashlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MSGS = os.path.join(ROOT, "testdata", "kafka-messages")
OUT = os.path.join(ROOT, "src", "format", "internal", "tables.rs")

# Which part of the output a definition belongs to, by its directory in Kafka's tree.
SECTIONS = [
    ("group-coordinator/", "offsets", "__consumer_offsets: keys (read at version = record type) and values"),
    ("clients/src/main/resources/common/message/ConsumerProtocol",
     "protocol", "consumer-protocol member bytes (inside GroupMetadataValue of \"consumer\" groups)"),
    ("share-coordinator/", "share", "__share_group_state"),
    ("transaction-coordinator/", "txn", "__transaction_state"),
    ("metadata/", "metadata", "__cluster_metadata records"),
    ("clients/", "kraft", "KRaft control record values"),
    ("raft/", "quorum", "the raft layer's `quorum-state` file (a JSON document of this message plus data_version)"),
    ("storage/", "remote", "__remote_log_metadata (KIP-405; storage's RemoteLogSegmentMetadata*Record, RemotePartitionDeleteMetadataRecord)"),
]

PRIMITIVES = {
    "bool": "Bool", "int8": "I8", "int16": "I16", "uint16": "U16", "int32": "I32",
    "int64": "I64", "float64": "F64", "uuid": "Uuid", "string": "Str", "bytes": "Bytes",
}


def fail(msg):
    sys.stderr.write("gen_internal_tables: %s\n" % msg)
    sys.exit(2)


def strip_comments(text):
    """Drops `//` comments outside JSON strings."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def snake(name):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z])([A-Z][a-z])", r"\1_\2", s)
    return s.upper()


def lower_first(name):
    return name[:1].lower() + name[1:]


def versions(spec, what):
    """Kafka's version-range syntax as one of schema.rs' constructors."""
    spec = (spec or "none").strip()
    if spec == "none":
        return "NONE", (1, 0)
    m = re.fullmatch(r"(\d+)\+", spec)
    if m:
        return "from(%s)" % m.group(1), (int(m.group(1)), 32767)
    m = re.fullmatch(r"(\d+)-(\d+)", spec)
    if m:
        return "span(%s, %s)" % m.groups(), (int(m.group(1)), int(m.group(2)))
    if re.fullmatch(r"\d+", spec):
        return "only(%s)" % spec, (int(spec), int(spec))
    fail("%s: unknown version range %r" % (what, spec))


def default(field, what):
    if "default" not in field:
        return ""
    d = field["default"]
    if d is None or d == "null":
        return ".def(D::Null)"
    if isinstance(d, bool) or d in ("true", "false"):
        return ".def(D::Bool(%s))" % str(d).lower()
    try:
        return ".def(D::Int(%d))" % int(str(d).strip(), 0)
    except ValueError:
        fail("%s: unsupported default %r" % (what, d))


class Gen:
    def __init__(self):
        self.lines = []
        self.emitted = {}  # struct body -> static name, to share identical structs

    def struct(self, msg, const, name, vers, inline, fields, commons, what):
        """Emits a struct, then the structs it holds; returns its static's name."""
        rendered = []
        slot = len(self.lines)  # the struct precedes the structs it holds
        self.lines.append(None)
        for fd in fields:
            fwhat = "%s.%s" % (what, fd["name"])
            ty = fd["type"].strip()
            # A field given only taggedVersions exists in exactly those (as in Kafka's generator).
            fv, _ = versions(fd.get("versions", fd.get("taggedVersions")), fwhat)
            arr = ty.startswith("[]")
            base = ty[2:] if arr else ty
            if base in PRIMITIVES:
                t = PRIMITIVES[base]
                if base == "bytes" and fd.get("zeroCopy"):
                    t = "ZcBytes"
                t = "Arr(&%s)" % t if arr else t
            else:
                sub_fields = fd.get("fields")
                if sub_fields is not None:
                    sub_v, sub_inline = fd.get("versions", fd.get("taggedVersions")), True
                elif base in commons:
                    sub_fields, sub_v, sub_inline = commons[base]["fields"], commons[base].get("versions"), False
                else:
                    fail("%s: unknown type %r" % (fwhat, ty))
                child = self.struct(msg, msg + "_" + snake(base), base, sub_v, sub_inline,
                                    sub_fields, commons, fwhat)
                t = "%s(&%s)" % ("StructArr" if arr else "Struct", child)
            line = 'f("%s", %s, %s)' % (lower_first(fd["name"]), t, fv)
            if "nullableVersions" in fd:
                line += ".null(%s)" % versions(fd["nullableVersions"], fwhat)[0]
            if "tag" in fd:
                line += ".tag(%d, %s)" % (int(fd["tag"]), versions(fd.get("taggedVersions"), fwhat)[0])
            # Kafka's generated classes start a struct field as an empty struct, whatever its
            # "default" says (tests.rs: tagged_struct_defaults_to_an_empty_struct).
            if not t.startswith("Struct("):
                line += default(fd, fwhat)
            rendered.append("    %s," % line)
        v, _ = versions(vers, what)
        body = 'st("%s", %s, %s, &[\n%s\n]);' % (
            name, v, "INLINE" if inline else "SHARED", "\n".join(rendered))
        if body in self.emitted:
            del self.lines[slot]
            return self.emitted[body]
        while const in self.emitted.values():  # two different structs of one name
            const += "_"
        self.emitted[body] = const
        self.lines[slot] = "static %s: St = %s" % (const, body)
        return const

    def message(self, spec, what):
        const = snake(spec["name"])
        commons = {c["name"]: c for c in spec.get("commonStructs", [])}
        flex, _ = versions(spec.get("flexibleVersions"), what)
        start = len(self.lines)
        root = self.struct(const, const + "_ROOT", spec["name"], spec.get("validVersions"), False,
                           spec.get("fields", []), commons, what)
        self.lines.insert(start, "pub(super) static %s: Msg = Msg { flex: %s, root: &%s };"
                          % (const, flex, root))
        return const


def load():
    manifest = os.path.join(MSGS, "MANIFEST")
    specs = []
    with open(manifest, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 3:
                fail("MANIFEST:%d: want `path commit sha256`" % n)
            path, commit, sha = parts
            data = open(os.path.join(MSGS, path), "rb").read()
            if hashlib.sha256(data).hexdigest() != sha:
                fail("%s: sha256 differs from MANIFEST" % path)
            try:
                spec = json.loads(strip_comments(data.decode("utf-8")))
            except ValueError as e:
                fail("%s: %s" % (path, e))
            kafka_path = path.split("/", 1)[1]
            section = next((s for s in SECTIONS if kafka_path.startswith(s[0])), None)
            if section is None:
                fail("%s: no section for this path" % path)
            specs.append((section, kafka_path, commit, spec))
    return specs


def record_types(spec, what):
    """A coordinator key's record types: its apiKey, or (older definitions) its versions."""
    if "apiKey" in spec:
        return [int(spec["apiKey"])]
    _, (lo, hi) = versions(spec.get("validVersions"), what)
    return list(range(lo, hi + 1))


def generate():
    specs = load()
    g = Gen()
    out = [
        "// @generated by scripts/gen_internal_tables.py from Kafka's message definitions in",
        "// testdata/kafka-messages/ (MANIFEST pins each file's commit). Do not edit: rerun the script.",
        "//! Our schema tables for every message kafka-dump-log's decoders read: field names (as the JSON",
        "//! converters spell them), types, the versions each field exists in, nullable and tagged",
        "//! versions, and explicit defaults; `schema.rs` explains each part. Then which record type",
        "//! (api key) of each internal topic is which message.",
        "",
        "use super::schema::T::*;",
        "use super::schema::*;",
    ]
    consts = {}
    for section in SECTIONS:
        group = sorted((s for s in specs if s[0] is section),
                       key=lambda s: (s[1].startswith("metadata/") and s[3]["name"]) or "")
        if section[1] == "offsets" or section[1] == "share":
            keyed = [s for s in group if s[3]["name"].endswith("Key")]
            group = sorted(keyed, key=lambda s: record_types(s[3], s[1])[0])
            group = [x for s in group for x in (s, by_name(specs, s[3]["name"][:-3] + "Value"))]
        if not group:
            continue
        out.append("")
        out.append("// ---- %s ----" % section[2])
        for s in group:
            g.lines = []
            consts[s[3]["name"]] = g.message(s[3], s[1])
            out.extend(g.lines)

    def coord_table(sec, static, doc):
        rows = []
        for s in specs:
            if s[0][1] == sec and s[3]["name"].endswith("Key"):
                value = s[3]["name"][:-3] + "Value"
                for t in record_types(s[3], s[1]):
                    rows.append((t, consts[s[3]["name"]], consts[value]))
        out.append("")
        out.append("/// %s: record type → key and value schemas." % doc)
        out.append("pub(super) static %s: &[(i16, &Msg, &Msg)] = &[" % static)
        for t, k, v in sorted(rows):
            out.append("    (%d, &%s, &%s)," % (t, k, v))
        out.append("];")

    coord_table("offsets", "OFFSETS_RECORDS", "`__consumer_offsets`")
    coord_table("share", "SHARE_STATE_RECORDS", "`__share_group_state`")
    rows = sorted((int(s[3]["apiKey"]), snake(s[3]["name"])) for s in specs if s[0][1] == "metadata")
    out.append("")
    out.append("/// `__cluster_metadata`: api key → `MetadataRecordType` constant name and schema.")
    out.append("pub(super) static METADATA_RECORDS: &[(i16, &str, &Msg)] = &[")
    for k, c in rows:
        out.append('    (%d, "%s", &%s),' % (k, c, c))
    out.append("];")
    return "\n".join(out) + "\n"


def by_name(specs, name):
    for s in specs:
        if s[3]["name"] == name:
            return s
    fail("no definition named %s" % name)


def main():
    text = generate()
    if "--check" in sys.argv[1:]:
        old = open(OUT, encoding="utf-8").read() if os.path.exists(OUT) else ""
        if old != text:
            sys.stderr.write("%s is not what the definitions generate; rerun %s\n" % (OUT, sys.argv[0]))
            sys.exit(1)
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
