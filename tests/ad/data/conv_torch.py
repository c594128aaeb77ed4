# The PyTorch float64 references of tests/ad/conv_torch.test.cpp: 92 random configurations of
# conv (1-D, 2-D and 3-D, strides, paddings, dilations, groups, bias), conv_transpose (with
# output_padding), max_pool and avg_pool (ceil_mode, count_include_pad, divisor_override) and
# adaptive_avg_pool, their inputs, outputs and gradients, written to conv_torch.txt next to this
# file. New cases go at the end, so the earlier ones keep their random numbers. Regenerate with
# Debian's python3-torch (1.13):
#
#   /usr/bin/python3 tests/ad/data/conv_torch.py > tests/ad/data/conv_torch.txt
#
# Format as transformer_torch.py's (tests/support/torch_cases.hpp reads both): a `case` line
# with the op and its parameters (lists as "1,2"), `t` lines with f64 tensors (the inputs, the
# cotangent `cot`, the output `out` and the gradients `g_<input>` of sum(out * cot)), `end`.
import torch
import torch.nn.functional as F

d = torch.float64
gen = torch.Generator().manual_seed(20261206)


def randn(*shape):
    return torch.randn(tuple(shape), generator=gen, dtype=d)


def randint(lo, hi):
    return int(torch.randint(lo, hi + 1, (1,), generator=gen))


def coin():
    return randint(0, 1) == 1


def emit(name, t):
    t = t.detach().to(d)
    dims = " ".join(str(s) for s in t.shape)
    vals = " ".join(repr(float(v)) for v in t.reshape(-1))
    print(f"t {name} {t.dim()} {dims} {vals}".replace("  ", " "))


def case(op, **params):
    print("case " + op + "".join(f" {k}={v}" for k, v in params.items()))


def grads(f, named):
    """Emits the inputs, out = f(**inputs), a cotangent and the gradients of sum(out * cot)."""
    xs = {k: v.clone().requires_grad_(True) for k, v in named.items()}
    for k, v in named.items():
        emit(k, v)
    out = f(**xs)
    cot = randn(*out.shape)
    emit("cot", cot)
    emit("out", out)
    gs = torch.autograd.grad((out * cot).sum(), list(xs.values()))
    for k, g in zip(xs.keys(), gs):
        emit("g_" + k, g)
    print("end")


def csv(v):
    return ",".join(str(x) for x in v)


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONVT = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
MAXP = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVGP = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
ADAP = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}


def spatial_rank(i):
    return 1 + i % 3


# --- conv: 36 configurations ---------------------------------------------------------------
for i in range(36):
    k = spatial_rank(i)
    big = 3 if k == 3 else 4
    g = randint(1, 3)
    n, cin, cout = randint(1, 2), g * randint(1, 2), g * randint(1, 2)
    kern = [randint(1, 3) for _ in range(k)]
    stride = [randint(1, 3) for _ in range(k)]
    dil = [randint(1, 2) for _ in range(k)]
    pad = [randint(0, 2) for _ in range(k)]
    size = [max(1, dl * (kk - 1) + 1 - 2 * p) + randint(0, big) for kk, dl, p in zip(kern, dil, pad)]
    bias = coin()
    x, w = randn(n, cin, *size), randn(cout, cin // g, *kern)
    case("conv", k=k, stride=csv(stride), padding=csv(pad), dilation=csv(dil), groups=g,
         bias=int(bias))
    named = {"x": x, "w": w}
    if bias:
        named["b"] = randn(cout)
    grads(lambda x, w, b=None: CONV[k](x, w, b, stride, pad, dil, g), named)

# --- conv_transpose: 24 configurations -----------------------------------------------------
for i in range(24):
    k = spatial_rank(i)
    g = randint(1, 2)
    n, cin, cout = randint(1, 2), g * randint(1, 2), g * randint(1, 2)
    kern = [randint(1, 3) for _ in range(k)]
    stride = [randint(1, 3) for _ in range(k)]
    dil = [randint(1, 2) for _ in range(k)]
    size = [randint(1, 3 if k == 3 else 4) for _ in range(k)]
    outpad = [randint(0, max(s, dl) - 1) for s, dl in zip(stride, dil)]
    pad = []
    for s, kk, dl, sz, op in zip(stride, kern, dil, size, outpad):
        full = (sz - 1) * s + dl * (kk - 1) + 1 + op
        pad.append(randint(0, (full - 1) // 2))
    bias = coin()
    x, w = randn(n, cin, *size), randn(cin, cout // g, *kern)
    case("conv_transpose", k=k, stride=csv(stride), padding=csv(pad), dilation=csv(dil),
         groups=g, output_padding=csv(outpad), bias=int(bias))
    named = {"x": x, "w": w}
    if bias:
        named["b"] = randn(cout)
    grads(lambda x, w, b=None: CONVT[k](x, w, b, stride, pad, outpad, g, dil), named)

# --- max_pool: 12 configurations -----------------------------------------------------------
for i in range(12):
    k = spatial_rank(i)
    kern = [randint(1, 3) for _ in range(k)]
    default_stride = coin()
    stride = kern if default_stride else [randint(1, 3) for _ in range(k)]
    dil = [randint(1, 2) for _ in range(k)]
    pad = [randint(0, kk // 2) for kk in kern]
    ceil = coin()
    size = [dl * (kk - 1) + 1 + randint(0, 3) for kk, dl in zip(kern, dil)]
    x = randn(randint(1, 2), randint(1, 3), *size)
    case("max_pool", k=k, kernel=csv(kern), stride="default" if default_stride else csv(stride),
         padding=csv(pad), dilation=csv(dil), ceil_mode=int(ceil))
    grads(lambda x: MAXP[k](x, kern, stride, pad, dil, ceil_mode=ceil), {"x": x})

# --- avg_pool: 12 configurations -----------------------------------------------------------
for i in range(12):
    k = spatial_rank(i)
    kern = [randint(1, 3) for _ in range(k)]
    default_stride = coin()
    stride = kern if default_stride else [randint(1, 3) for _ in range(k)]
    pad = [randint(0, kk // 2) for kk in kern]
    ceil, include = coin(), coin()
    override = randint(1, 5) if i % 5 == 4 else 0
    override = override if k > 1 else 0  # torch's avg_pool1d has no divisor_override
    size = [kk + randint(0, 3) for kk in kern]
    x = randn(randint(1, 2), randint(1, 3), *size)
    case("avg_pool", k=k, kernel=csv(kern), stride="default" if default_stride else csv(stride),
         padding=csv(pad), ceil_mode=int(ceil), count_include_pad=int(include),
         divisor_override=override)
    grads(lambda x: AVGP[k](x, kern, stride, pad, ceil, include,
                            **({"divisor_override": override} if override else {})),
          {"x": x})

# --- adaptive_avg_pool: 8 configurations ---------------------------------------------------
for i in range(8):
    k = spatial_rank(i)
    size = [randint(1, 7) for _ in range(k)]
    out = [randint(1, 5) for _ in range(k)]
    x = randn(randint(1, 2), randint(1, 2), *size)
    case("adaptive_avg_pool", k=k, output_size=csv(out))
    grads(lambda x: ADAP[k](x, out), {"x": x})
