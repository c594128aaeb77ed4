# The PyTorch reference of tests/nn/gpt_parity.test.cpp: a small GPT in nanoGPT's shape
# (examples/char_gpt_model.hpp's model: token and position embeddings, pre-norm blocks with
# causal self-attention and a GELU MLP, a final LayerNorm, output tied to the token embedding)
# trained for 10 steps with char_gpt's recipe: AdamW (betas 0.9/0.99, eps 1e-8, weight decay
# 0.1 on the parameters of 2 or more dims only, nanoGPT's two groups), the global gradient
# norm clipped to 1, and nanoGPT's get_lr (linear warm-up, cosine decay to lr / 10).
# Written to gpt_parity.txt next to this file, in tests/ad/data/transformer_torch.py's format
# (case / t / end lines). Regenerate with Debian's python3-torch (1.13):
#
#   /usr/bin/python3 tests/nn/data/gpt_parity.py > tests/nn/data/gpt_parity.txt
#
# One case, "gpt": the float64 initial parameters (nanoGPT's names), the token batches x and
# y [steps + 1, B, T] (as floats), and for a float64 run and a float32 run from the same
# parameters (cast) `losses_<dtype>` [steps + 1] (the loss of each step's batch before its
# update, then the loss on the last batch after the last update) and `grad_norms_<dtype>`
# [steps] (the norm clip_grad_norm_ measured at each step, before clipping).
import math

import torch
import torch.nn.functional as F

V, T, L, H, C, B = 65, 8, 2, 2, 8, 4  # vocab, block, layers, heads, width, batch
STEPS, LR, WARMUP = 10, 1e-2, 3
gen = torch.Generator().manual_seed(20261205)
d = torch.float64


def emit(name, t):
    t = t.detach().to(d)
    dims = " ".join(str(s) for s in t.shape)
    vals = " ".join(repr(float(v)) for v in t.reshape(-1))
    print(f"t {name} {t.dim()} {dims} {vals}".replace("  ", " "))


def randn(*shape, std=0.3):
    return torch.randn(shape, generator=gen, dtype=d) * std


# nanoGPT's initialisation scaled up (std 0.3 instead of 0.02, so that the gradient norms
# pass 1 and clipping acts, and weight decay moves the losses), with nonzero biases and
# LayerNorm parameters so that a wrong bias or scale shows too.
P = {"transformer.wte.weight": randn(V, C), "transformer.wpe.weight": randn(T, C)}
for i in range(L):
    h = f"transformer.h.{i}."
    proj_std = 0.3 / math.sqrt(2 * L)
    P |= {
        h + "ln_1.weight": 1 + randn(C, std=0.1), h + "ln_1.bias": randn(C, std=0.1),
        h + "attn.c_attn.weight": randn(3 * C, C), h + "attn.c_attn.bias": randn(3 * C),
        h + "attn.c_proj.weight": randn(C, C, std=proj_std), h + "attn.c_proj.bias": randn(C),
        h + "ln_2.weight": 1 + randn(C, std=0.1), h + "ln_2.bias": randn(C, std=0.1),
        h + "mlp.c_fc.weight": randn(4 * C, C), h + "mlp.c_fc.bias": randn(4 * C),
        h + "mlp.c_proj.weight": randn(C, 4 * C, std=proj_std), h + "mlp.c_proj.bias": randn(C),
    }
P |= {"transformer.ln_f.weight": 1 + randn(C, std=0.1), "transformer.ln_f.bias": randn(C, std=0.1)}
X = torch.randint(0, V, (STEPS + 1, B, T), generator=gen)
Y = torch.randint(0, V, (STEPS + 1, B, T), generator=gen)


def gpt(p, idx):
    x = p["transformer.wte.weight"][idx] + p["transformer.wpe.weight"][torch.arange(T)]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(L):
        w = {k[len(f"transformer.h.{i}."):]: v for k, v in p.items()
             if k.startswith(f"transformer.h.{i}.")}
        a = F.layer_norm(x, [C], w["ln_1.weight"], w["ln_1.bias"])
        q, k, v = F.linear(a, w["attn.c_attn.weight"], w["attn.c_attn.bias"]).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        s = (q @ k.transpose(-2, -1) / math.sqrt(C // H)).masked_fill(~causal, -math.inf)
        y = (torch.softmax(s, -1) @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + F.linear(y, w["attn.c_proj.weight"], w["attn.c_proj.bias"])
        m = F.layer_norm(x, [C], w["ln_2.weight"], w["ln_2.bias"])
        m = F.gelu(F.linear(m, w["mlp.c_fc.weight"], w["mlp.c_fc.bias"]), approximate="tanh")
        x = x + F.linear(m, w["mlp.c_proj.weight"], w["mlp.c_proj.bias"])
    x = F.layer_norm(x, [C], p["transformer.ln_f.weight"], p["transformer.ln_f.bias"])
    return x @ p["transformer.wte.weight"].t()


def get_lr(it):  # nanoGPT's train.py
    min_lr = LR / 10
    if it < WARMUP:
        return LR * (it + 1) / (WARMUP + 1)
    if it > STEPS:
        return min_lr
    ratio = (it - WARMUP) / (STEPS - WARMUP)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (LR - min_lr)


def train(dtype):
    p = {k: v.to(dtype).clone().requires_grad_() for k, v in P.items()}
    decay = [t for t in p.values() if t.dim() >= 2]
    no_decay = [t for t in p.values() if t.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.99), eps=1e-8)
    losses, norms = [], []
    for it in range(STEPS):
        for g in opt.param_groups:
            g["lr"] = get_lr(it)
        loss = F.cross_entropy(gpt(p, X[it]).reshape(-1, V), Y[it].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(p.values(), 1.0)))
        opt.step()
        losses.append(float(loss))
    with torch.no_grad():
        losses.append(float(F.cross_entropy(gpt(p, X[STEPS]).reshape(-1, V),
                                             Y[STEPS].reshape(-1))))
    return losses, norms


runs = {name: train(dtype) for name, dtype in [("f64", torch.float64), ("f32", torch.float32)]}
print(f"case gpt vocab={V} block={T} layers={L} heads={H} width={C} batch={B} steps={STEPS} "
      f"lr={LR!r} warmup={WARMUP}")
for k, v in P.items():
    emit(k, v)
emit("x", X.to(d))
emit("y", Y.to(d))
for name, (losses, norms) in runs.items():
    emit("losses_" + name, torch.tensor(losses, dtype=d))
    emit("grad_norms_" + name, torch.tensor(norms, dtype=d))
print("end")
