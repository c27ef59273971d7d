#!/usr/bin/env python3
"""Writes the .npz/.npy fixtures of //nn:npz_file_test with Python's zipfile.

The fixtures come from an implementation other than mxcore's writer: the
zip container from Python's zipfile module (what numpy.savez uses), the
.npy headers laid out as numpy.lib.format writes them (version 1.0, the
dict repr with sorted keys, spaces and a newline padding the data to 64
bytes). numpy itself is not needed. Run from this directory:

    python3 make_npz_fixtures.py
"""
import io
import struct
import zipfile


def npy(descr, shape, payload, fortran=False):
    dims = ", ".join(str(d) for d in shape)
    if len(shape) == 1:
        dims += ","
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + \
        header.encode("latin1") + payload


# name -> (.npy bytes). Values are checked by npz_file_test.cc.
ARRAYS = [
    ("arg:fc_weight", npy("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6))),
    ("arg:fc_bias", npy("<i8", (4,), struct.pack("<4q", -1, 0, 7, 1 << 40))),
    ("aux:mask", npy("|b1", (2, 2), bytes([1, 0, 0, 1]))),
    ("scalar", npy("<f2", (), struct.pack("<e", 1.5))),
    ("empty", npy("|u1", (0, 3), b"")),
    ("bytes", npy("|i1", (3,), struct.pack("<3b", -128, 0, 127))),
    ("int32", npy("<i4", (1, 2), struct.pack("<2i", -5, 9))),
    # Fortran order: the (3, 2) matrix [[1, 2], [3, 4], [5, 6]] by columns.
    ("fortran", npy("<f8", (3, 2), struct.pack("<6d", 1, 3, 5, 2, 4, 6),
                    fortran=True)),
]


def write(path, compression, stream=False, force_zip64=False):
    buffer = io.BytesIO()

    class Unseekable(io.RawIOBase):
        """Makes zipfile write data descriptors, as MXNet 2's miniz does."""
        def writable(self):
            return True

        def write(self, b):
            return buffer.write(b)

    target = Unseekable() if stream else buffer
    with zipfile.ZipFile(target, "w", compression) as z:
        for name, data in ARRAYS:
            info = zipfile.ZipInfo(name + ".npy", date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = compression
            with z.open(info, "w", force_zip64=force_zip64) as f:
                f.write(data)
        z.writestr("README.txt", "not an array: skipped by loaders")
    with open(path, "wb") as f:
        f.write(buffer.getvalue())


write("savez.npz", zipfile.ZIP_STORED)
write("savez_compressed.npz", zipfile.ZIP_DEFLATED)
write("streamed.npz", zipfile.ZIP_STORED, stream=True)
write("zip64_local.npz", zipfile.ZIP_STORED, force_zip64=True)
with open("fc_weight.npy", "wb") as f:
    f.write(ARRAYS[0][1])
