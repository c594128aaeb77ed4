#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The NumPy side of tests/nn/npy.test.cpp.

  /usr/bin/python3 tests/nn/data/make_npy.py write tests/nn/data/npy
      writes the .npy files committed in tests/nn/data/npy/ (made with NumPy
      1.24.2, Debian 12's python3-numpy); the C++ test loads them and checks
      every element, so the loader is tested against NumPy without Python.
  /usr/bin/python3 tests/nn/data/make_npy.py check DIR
      checks the .npy files strata wrote to DIR (exit status 0 when all match).

The interop test (ctest nn_npy_numpy) runs both against fresh directories
when /usr/bin/python3 has NumPy, and reports SKIPPED otherwise.

Element i (row-major, i.e. C order) of every array is value(i, dtype), the
formula npy.test.cpp computes in C++: f8 ((i*7919) % 1009 - 504) / 7, f4 the
same rounded to float32, i4 (i*7919) % 1009 - 504, i8 that times 4096000012
(beyond 32 bits), b1 ((i*7919) % 1009) % 3 == 0.
"""
import os
import re
import sys

import numpy as np


def values(n, code):
    i = np.arange(n, dtype=np.int64)
    k = (i * 7919) % 1009
    if code == "f8":
        return (k - 504) / 7.0
    if code == "f4":
        return ((k - 504) / 7.0).astype(np.float32)
    if code == "i4":
        return (k - 504).astype(np.int32)
    if code == "i8":
        return (k - 504) * 4096000012
    if code == "b1":
        return k % 3 == 0
    raise ValueError(code)


def array(code, shape, order="C", byteorder="<"):
    a = values(int(np.prod(shape)), code).reshape(shape)
    if code != "b1":
        a = a.astype(np.dtype(code).newbyteorder(byteorder))
    # (not np.ascontiguousarray, which makes a 0-d array 1-d)
    return a.copy(order=order)


# name: (dtype code, shape, order, byte order, version); the C++ test has the same table.
CASES = {}
for code in ["f4", "f8", "i4", "i8", "b1"]:
    CASES[code + "_c"] = (code, (2, 3, 4), "C", "<", None)
    CASES[code + "_fortran"] = (code, (3, 4, 2), "F", "<", None)
    if code != "b1":
        CASES[code + "_big"] = (code, (5, 3), "C", ">", None)
CASES["f8_big_fortran"] = ("f8", (4, 5), "F", ">", None)
CASES["i8_1d"] = ("i8", (7,), "C", "<", None)
CASES["f8_scalar"] = ("f8", (), "C", "<", None)
CASES["f4_empty"] = ("f4", (0, 3), "C", "<", None)
CASES["f4_v2"] = ("f4", (3, 2), "C", "<", (2, 0))
CASES["i4_v3"] = ("i4", (2, 5), "F", "<", (3, 0))


def write(out):
    os.makedirs(out, exist_ok=True)
    for name, (code, shape, order, byteorder, version) in CASES.items():
        a = array(code, shape, order, byteorder)
        with open(os.path.join(out, name + ".npy"), "wb") as f:
            np.lib.format.write_array(f, a, version=version, allow_pickle=False)
    # Values NumPy writes that a formula does not: NaN, infinities, -0, subnormals.
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308])
    np.save(os.path.join(out, "f8_special.npy"), special)
    special_f4 = np.array([np.nan, np.inf, -np.inf, -0.0, 2.0**-149, 2.0**128 - 2.0**104], ">f4")
    np.save(os.path.join(out, "f4_special_big.npy"), special_f4)


def check(directory):
    """Files named '<code>__<d0>x<d1>....npy' ('f8__.npy' is 0-d), written by strata."""
    bad = 0
    names = sorted(n for n in os.listdir(directory) if n.endswith(".npy"))
    for name in names:
        m = re.fullmatch(r"(f4|f8|i4|i8|b1)__([0-9x]*)\.npy", name)
        if not m:
            print(f"{name}: unexpected file name")
            bad += 1
            continue
        code = m.group(1)
        shape = tuple(int(d) for d in m.group(2).split("x")) if m.group(2) else ()
        path = os.path.join(directory, name)
        a = np.load(path, allow_pickle=False)
        want = array(code, shape)
        problems = []
        if a.dtype != want.dtype or a.dtype.str != want.dtype.str:
            problems.append(f"dtype {a.dtype.str}, expected {want.dtype.str}")
        if a.shape != shape:
            problems.append(f"shape {a.shape}, expected {shape}")
        elif not np.array_equal(a, want):
            problems.append("values differ")
        # strata writes the bytes numpy.save writes for the same array.
        with open(path, "rb") as f:
            got = f.read()
        import io
        buf = io.BytesIO()
        np.save(buf, want)
        if got != buf.getvalue():
            problems.append("bytes differ from numpy.save's")
        if problems:
            print(f"{name}: " + "; ".join(problems))
            bad += 1
    print(f"make_npy.py check: {len(names)} files, {bad} bad")
    return 1 if bad or not names else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2]))
