# The PyTorch float64 references of tests/ad/norms_torch.test.cpp,
# tests/ad/attention_torch.test.cpp, tests/nn/cross_entropy_torch.test.cpp and
# tests/nn/transformer.test.cpp: 75 random configurations of layer_norm, rms_norm, group_norm,
# batch_norm, scaled_dot_product_attention, cross_entropy with ignore_index and a nanoGPT-style
# transformer block, their inputs, outputs and gradients, written to transformer_torch.txt next
# to this file. New cases go at the end, so the earlier ones keep their random numbers.
# Regenerate with Debian's python3-torch (1.13):
#
#   /usr/bin/python3 tests/ad/data/transformer_torch.py > tests/ad/data/transformer_torch.txt
#
# Format, one item per line:
#   case <op> <key>=<value> ...            the configuration
#   t <name> <ndim> <dims...> <values...>  a float64 tensor, row-major, repr() digits
#   end
# Gradients are of sum(out * cot) for the cotangent `cot` written with the inputs.
#
# torch 1.13 has neither rms_norm nor scaled_dot_product_attention, so those two are written
# out here as torch's documented math: rms_norm is x * rsqrt(mean(x^2) + eps) * weight with eps
# torch.finfo(dtype).eps by default; attention is softmax(q k^T * scale + mask) v with
# PyTorch >= 2.5's _safe_softmax (a row whose scores are all -inf gives zeros, not NaN).
import math

import torch
import torch.nn.functional as F

d = torch.float64
gen = torch.Generator().manual_seed(20261205)


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


def grads(f, named, constant=()):
    """Emits the inputs, out = f(*inputs), a cotangent and the gradients of sum(out * cot)
    with respect to every input not named in `constant`."""
    xs = {k: v.clone().requires_grad_(k not in constant) for k, v in named.items()}
    for k, v in named.items():
        emit(k, v)
    out = f(**xs)
    outs = out if isinstance(out, tuple) else (out,)
    cot = randn(*outs[0].shape)
    emit("cot", cot)
    for i, o in enumerate(outs):
        emit("out" if i == 0 else f"out{i}", o)
    diff = [k for k, v in xs.items() if v.requires_grad]
    gs = torch.autograd.grad((outs[0] * cot).sum(), [xs[k] for k in diff], allow_unused=True)
    for k, g in zip(diff, gs):
        emit("g_" + k, g if g is not None else torch.zeros_like(xs[k]))
    print("end")


def dims_str(s):
    return ",".join(str(v) for v in s)


# --- layer_norm: 15 configurations ---------------------------------------------------------
for i in range(15):
    rank = randint(1, 4)
    shape = [randint(1, 5) for _ in range(rank)]
    k = randint(1, rank)
    ns = shape[rank - k:]
    eps = [1e-5, 1e-3, 0.1][randint(0, 2)]
    affine = coin()
    x = randn(*shape) * 3 + (1e4 if i == 0 else randn(1).item())  # i = 0: |mean| >> std
    case("layer_norm", nshape=dims_str(ns), eps=eps, affine=int(affine))
    if affine:
        grads(lambda x, w, b: F.layer_norm(x, ns, w, b, eps), {"x": x, "w": randn(*ns), "b": randn(*ns)})
    else:
        grads(lambda x: F.layer_norm(x, ns, None, None, eps), {"x": x})

# --- rms_norm: 10 configurations -----------------------------------------------------------
for i in range(10):
    rank = randint(1, 3)
    shape = [randint(1, 5) for _ in range(rank)]
    k = randint(1, rank)
    ns = shape[rank - k:]
    eps = None if i % 3 == 0 else [1e-6, 1e-2][randint(0, 1)]
    affine = coin()
    e = torch.finfo(d).eps if eps is None else eps
    axes = list(range(rank - k, rank))

    def rms(x, w=None):
        y = x * torch.rsqrt((x * x).mean(dim=axes, keepdim=True) + e)
        return y if w is None else y * w

    case("rms_norm", nshape=dims_str(ns), eps="default" if eps is None else eps, affine=int(affine))
    if affine:
        grads(lambda x, w: rms(x, w), {"x": randn(*shape), "w": randn(*ns)})
    else:
        grads(lambda x: rms(x), {"x": randn(*shape)})

# --- group_norm: 10 configurations ---------------------------------------------------------
for i in range(10):
    n = randint(1, 3)
    c = [2, 4, 6, 6, 8, 3][randint(0, 5)]
    divs = [g for g in range(1, c + 1) if c % g == 0]
    groups = divs[randint(0, len(divs) - 1)]
    spatial = [randint(1, 4) for _ in range(randint(0, 2))]
    eps = [1e-5, 1e-2][randint(0, 1)]
    affine = coin()
    x = randn(n, c, *spatial) * 2 + 1
    if spatial == [] and groups == c:
        spatial = [2]  # one value per group: the variance is 0, keep the case meaningful
        x = randn(n, c, 2)
    case("group_norm", groups=groups, eps=eps, affine=int(affine))
    if affine:
        grads(lambda x, w, b: F.group_norm(x, groups, w, b, eps), {"x": x, "w": randn(c), "b": randn(c)})
    else:
        grads(lambda x: F.group_norm(x, groups, None, None, eps), {"x": x})

# --- batch_norm: 12 configurations (training and evaluation) -------------------------------
for i in range(12):
    n = randint(2, 4)
    c = randint(1, 4)
    spatial = [randint(1, 3) for _ in range(randint(0, 2))]
    training = i % 3 != 2
    momentum = [0.1, 0.3, 1.0, 0.0][randint(0, 3)]
    eps = [1e-5, 1e-3][randint(0, 1)]
    affine = coin()
    rm, rv = randn(c), randn(c).abs() + 0.5

    def bn(x, rm, rv, w=None, b=None):
        m2, v2 = rm.detach().clone(), rv.detach().clone()
        y = F.batch_norm(x, m2, v2, w, b, training, momentum, eps)
        return y, m2, v2

    case("batch_norm", training=int(training), momentum=momentum, eps=eps, affine=int(affine))
    inputs = {"x": randn(n, c, *spatial) * 2 - 1, "rm": rm, "rv": rv}
    if affine:
        inputs.update({"w": randn(c), "b": randn(c)})
    grads(bn, inputs, constant=("rm", "rv"))

# --- scaled_dot_product_attention: 15 configurations ---------------------------------------
for i in range(15):
    batch = [randint(1, 3) for _ in range(randint(0, 2))]
    L, S, E, Ev = randint(1, 5), randint(1, 5), randint(1, 4), randint(1, 4)
    causal = coin()
    mask_kind = ["none", "bool", "float"][randint(0, 2)]
    scale = None if coin() else 0.5 + randint(0, 3) * 0.25
    if i == 13:  # a fully masked row under a bool mask
        L, S, causal, mask_kind = 3, 4, False, "bool"
    if i == 14:  # causal with more queries than keys: rows past the keys are empty
        L, S, causal, mask_kind = 4, 2, True, "none"
    q, k, v = randn(*batch, L, E), randn(*batch, S, E), randn(*batch, S, Ev)
    if mask_kind == "bool":
        mask = torch.rand(L, S, generator=gen) > 0.3
        if i == 13:
            mask[1, :] = False
    elif mask_kind == "float":
        mask = randn(L, S)
    else:
        mask = None
    sc = 1 / math.sqrt(E) if scale is None else scale

    def sdpa(q, k, v):
        s = (q * sc) @ k.transpose(-2, -1)
        allowed = torch.ones(L, S, dtype=torch.bool)
        if causal:
            allowed = allowed.tril(0)
        if mask is not None and mask.dtype == torch.bool:
            allowed = allowed & mask
        elif mask is not None:
            s = s + mask
        s = s.masked_fill(~allowed, -math.inf)
        dead = (~allowed).all(-1, keepdim=True)
        p = torch.softmax(s.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
        return p @ v

    case("sdpa", causal=int(causal), mask=mask_kind, scale="default" if scale is None else scale)
    if mask is not None:
        emit("mask", mask.to(d))
    grads(sdpa, {"q": q, "k": k, "v": v})

# --- cross_entropy with ignore_index: 10 configurations ------------------------------------
for i in range(10):
    V = randint(2, 6)
    shape = [randint(1, 4)] if i % 2 == 0 else [randint(1, 3), randint(1, 4)]
    ignore = -100 if i % 3 == 0 else randint(0, V - 1)
    labels = torch.randint(0, V, shape, generator=gen)
    drop = torch.rand(shape, generator=gen) < 0.3
    labels = torch.where(drop, torch.full_like(labels, ignore), labels)
    if (labels != ignore).sum() == 0:
        labels.view(-1)[0] = (ignore + 1) % V  # keep one label: the all-ignored mean is NaN
    logits = randn(*shape, V) * 3

    def ce(z):
        return F.cross_entropy(z.reshape(-1, V), labels.reshape(-1), ignore_index=ignore)

    case("cross_entropy", ignore_index=ignore)
    emit("labels", labels.to(d))
    grads(ce, {"z": logits})

# --- a pre-norm transformer block as nanoGPT's Block (dropout 0, GELU's tanh form): 3 cases --
for i in range(3):
    B, T, C, H = [(2, 5, 8, 2), (1, 4, 6, 3), (3, 3, 4, 1)][i]
    causal = i != 2
    P = {
        "ln_1.weight": randn(C) * 0.5 + 1, "ln_1.bias": randn(C) * 0.1,
        "attn.c_attn.weight": randn(3 * C, C) * 0.3, "attn.c_attn.bias": randn(3 * C) * 0.1,
        "attn.c_proj.weight": randn(C, C) * 0.3, "attn.c_proj.bias": randn(C) * 0.1,
        "ln_2.weight": randn(C) * 0.5 + 1, "ln_2.bias": randn(C) * 0.1,
        "mlp.c_fc.weight": randn(4 * C, C) * 0.3, "mlp.c_fc.bias": randn(4 * C) * 0.1,
        "mlp.c_proj.weight": randn(C, 4 * C) * 0.3, "mlp.c_proj.bias": randn(C) * 0.1,
    }

    def block(x, **p):
        def attn(h):
            q, k, v = F.linear(h, p["attn.c_attn.weight"], p["attn.c_attn.bias"]).split(C, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            s = q @ k.transpose(-2, -1) / math.sqrt(C // H)
            if causal:
                s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), -math.inf)
            y = torch.softmax(s, -1) @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return F.linear(y, p["attn.c_proj.weight"], p["attn.c_proj.bias"])

        def mlp(h):
            h = F.gelu(F.linear(h, p["mlp.c_fc.weight"], p["mlp.c_fc.bias"]), approximate="tanh")
            return F.linear(h, p["mlp.c_proj.weight"], p["mlp.c_proj.bias"])

        x = x + attn(F.layer_norm(x, [C], p["ln_1.weight"], p["ln_1.bias"]))
        return x + mlp(F.layer_norm(x, [C], p["ln_2.weight"], p["ln_2.bias"]))

    case("block", dim=C, heads=H, causal=int(causal))
    grads(block, {"x": randn(B, T, C), **P})
