# SPDX-License-Identifier: MIT
# Prints the NumPy text that tests/raw/print.test.cpp expects for its abridged
# and precision cases ("print: abridged text is NumPy's"). Run once with
# Debian 12's python3-numpy (1.24.2): /usr/bin/python3 tests/raw/print_numpy.py
# The test prepends "tensor(" and appends ", shape=[...], dtype=...)".
import numpy as np


def sevenths(n):  # the values the C++ test builds: ((i * 7919) % 2001 - 1000) / 7
    return np.array([((i * 7919) % 2001 - 1000) / 7.0 for i in range(n)])


def body(a, **kw):
    opts = dict(separator=', ', prefix='tensor(', max_line_width=10**9, threshold=1000,
                edgeitems=3)
    opts.update(kw)
    return np.array2string(a, **opts)


fixed = dict(floatmode='fixed')
cases = {
    'i64_100x100': body(np.arange(10000, dtype=np.int64).reshape(100, 100)),
    'f64_40x30': body(sevenths(1200).reshape(40, 30), precision=4, **fixed),
    'f64_40x30_p2': body(sevenths(1200).reshape(40, 30), precision=2, **fixed),
    'f32_20x20x20': body(sevenths(8000).astype(np.float32).reshape(20, 20, 20), precision=4,
                         **fixed),
    'f64_2000_sci': body(sevenths(2000) * 1e-6, precision=4, **fixed),
    'f64_2000_sci_p1': body(sevenths(2000) * 1e-6, precision=1, **fixed),
    'i32_5x6_t10_e2': body((np.arange(30, dtype=np.int32) - 15).reshape(5, 6), threshold=10,
                           edgeitems=2),
    'f64_10_t10_p6': body(sevenths(10), threshold=10, precision=6, **fixed),
    'f64_3_p0': body(np.array([0.25, 2.75, -1.5]), precision=0, **fixed),
    'f64_2_p0_sci': body(np.array([2.5e-6, 2.75]), precision=0, **fixed),
    # Whole values (NumPy's default floatmode prints them "3."), one hidden non-whole value.
    'f64_2000_whole_shown': body(np.where(np.arange(2000) == 1000, 0.5, np.arange(2000) % 10.0)),
}
for name, text in cases.items():
    print('==', name)
    print(text)
