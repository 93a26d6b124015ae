#!/usr/bin/env python3
"""An independent reading of kvbridge's wire format, written from docs/protocol.md alone.

Decodes every golden vector field by field, encodes what it decoded and compares the bytes,
recomputes the digests, the CRC-32C checksums and the handshake MACs with Python's standard
library, and exits 0 printing "ok" only if every vector agrees. Usage:
    check_golden_vectors.py golden-vectors.txt
"""
import hashlib
import hmac
import struct
import sys

SECRET = b"kvbridge golden vector secret"


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("truncated")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack(">H", self.take(2))[0]

    def u32(self):
        return struct.unpack(">I", self.take(4))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def i64(self):
        return struct.unpack(">q", self.take(8))[0]

    def text(self):
        value = self.take(self.u16()).decode("utf-8")
        if not value.strip() or len(value) > 256:
            raise ValueError("bad text")
        return value

    def blob(self):
        return self.take(self.u32())

    def end(self):
        if self.pos != len(self.data):
            raise ValueError("trailing bytes")


class Writer:
    def __init__(self):
        self.out = bytearray()

    def raw(self, b):
        self.out += b
        return self

    def u8(self, v):
        return self.raw(struct.pack(">B", v))

    def u16(self, v):
        return self.raw(struct.pack(">H", v))

    def i32(self, v):
        return self.raw(struct.pack(">i", v))

    def u32(self, v):
        return self.raw(struct.pack(">I", v))

    def i64(self, v):
        return self.raw(struct.pack(">q", v))

    def text(self, s):
        b = s.encode("utf-8")
        return self.u16(len(b)).raw(b)

    def blob(self, b):
        return self.u32(len(b)).raw(b)


def lease(r):
    request_id, token = r.text(), r.text()
    if len(token) != 32 or any(c not in "0123456789abcdef" for c in token):
        raise ValueError("bad token")
    return (request_id, token)


def put_lease(w, ref):
    w.text(ref[0]).text(ref[1])


def message_roundtrip(data):
    """Decodes one notification per the spec and encodes it again."""
    r = Reader(data)
    if r.take(3) != b"KVB" or r.u8() != 2:
        raise ValueError("magic or version")
    kind = r.u8()
    w = Writer().raw(b"KVB").u8(2).u8(kind)
    if kind in (1, 6):  # COMPLETION, CONFIRM
        ref, consumer, digest = lease(r), r.text(), r.take(32)
        put_lease(w, ref)
        w.text(consumer).raw(digest)
        if kind == 6:
            w.i64(r.i64())
    elif kind == 2:  # ACK
        put_lease(w, lease(r))
    elif kind == 3:  # NACK
        put_lease(w, lease(r))
        w.text(r.text())
    elif kind == 4:  # HEARTBEAT
        w.text(r.text()).i64(r.i64())
        n = r.u16()
        w.u16(n)
        for _ in range(n):
            put_lease(w, lease(r))
    elif kind == 5:  # RENEWED
        w.i64(r.i64()).i64(r.i64())
        n = r.u16()
        w.u16(n)
        for _ in range(n):
            put_lease(w, lease(r))
            w.i64(r.i64())
    elif kind == 7:  # CONFIRMED
        put_lease(w, lease(r))
        w.i64(r.i64()).i64(r.i64()).i64(r.i64())
    elif kind == 8:  # RELEASE
        put_lease(w, lease(r))
        w.text(r.text()).text(r.text())
    else:
        raise ValueError("unknown type %d" % kind)
    r.end()
    return bytes(w.out)


def handshake_frame(data):
    """Splits a handshake frame into (type, fields bytes before the MAC, MAC)."""
    r = Reader(data)
    if r.take(3) != b"KVH" or r.u8() != 2:
        raise ValueError("magic or version")
    kind = r.u8()
    if kind == 4:  # GREETING
        nonce, flags = r.take(16), r.u8()
        r.end()
        return kind, nonce, flags
    if kind == 3:  # REFUSED
        reason = r.text()
        r.end()
        return kind, reason, None
    if kind == 1:  # REQUEST
        nonce = r.take(16)
        r.text(), r.i64(), r.text(), r.blob()
    elif kind == 2:  # ACCEPTED
        nonce = None
        r.text(), r.i64(), r.i32(), r.i32(), r.i64(), r.i32(), r.u8(), r.i64(), r.blob()
    else:
        raise ValueError("unknown handshake type %d" % kind)
    body = data[:r.pos]
    mac = r.take(r.u8())
    r.end()
    return kind, (nonce, body), mac


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def sampled(block):
    if len(block) <= 8 * 512:
        return crc32c(block)
    stride, crc = (len(block) - 512) // 7, 0
    for i in range(8):
        crc = crc32c(block[i * stride:i * stride + 512], crc)
    return crc


def main(path):
    vectors = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line and not line.startswith("#"):
            name, value = line.split()
            vectors[name] = bytes.fromhex(value)
    checked = 0
    for name, data in vectors.items():
        if name.startswith("message."):
            assert message_roundtrip(data) == data, name
            checked += 1
    greeting = handshake_frame(vectors["handshake.greeting.authenticated"])
    assert greeting[0] == 4 and greeting[2] == 1
    assert handshake_frame(vectors["handshake.greeting"])[2] == 0
    assert handshake_frame(vectors["handshake.refused"])[1] == "incompatible KV layout"
    for name in ("handshake.request", "handshake.accepted"):
        assert handshake_frame(vectors[name])[2] == b"", name + " carries no MAC"
    _, (request_nonce, request_body), mac = handshake_frame(vectors["handshake.request.authenticated"])
    expected = hmac.new(SECRET, b"kvbridge/handshake/request/2" + greeting[1] + request_body,
                        hashlib.sha256).digest()
    assert hmac.compare_digest(mac, expected), "request MAC"
    _, (_, accepted_body), mac = handshake_frame(vectors["handshake.accepted.authenticated"])
    expected = hmac.new(SECRET, b"kvbridge/handshake/accepted/2" + greeting[1] + request_nonce
                        + accepted_body, hashlib.sha256).digest()
    assert hmac.compare_digest(mac, expected), "accepted MAC"
    checked += 7
    prompt = hashlib.sha256(b"kvbridge/prompt/1" + struct.pack(">I", 8)
                            + b"".join(struct.pack(">i", t) for t in range(1, 9))).digest()
    assert prompt == vectors["digest.prompt"], "prompt digest"
    request_id = b"req-1"
    read = hashlib.sha256(b"kvbridge/read/1" + struct.pack(">H", len(request_id)) + request_id
                          + prompt + struct.pack(">II", 1024, 3)
                          + b"".join(struct.pack(">I", b) for b in (3, 17, 5))).digest()
    assert read == vectors["digest.read"], "read digest"
    checked += 2
    assert crc32c(b"123456789") == 0xE3069283
    for size in (1024, 8192):
        block = bytes(i % 251 for i in range(size))
        assert struct.pack(">I", crc32c(block)) == vectors["checksum.crc32c.%d" % size]
        assert struct.pack(">I", sampled(block)) == vectors["checksum.crc32c-sampled.%d" % size]
        checked += 2
    assert checked == len(vectors), "%d of %d vectors checked" % (checked, len(vectors))
    print("ok: %d vectors" % checked)


if __name__ == "__main__":
    main(sys.argv[1])
