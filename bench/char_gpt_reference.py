#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""examples/char_gpt.cpp's whole training run in PyTorch: the reference for its val loss.

nanoGPT's CPU recipe (its README: 4 layers, 4 heads, width 128, block 64, batch 12, 2000
steps, learning rate 1e-3 warmed up over 100 steps and decayed by a cosine to 1e-4, AdamW with
betas 0.9 and 0.99 and weight decay 0.1 on the matrices, gradients clipped to norm 1, no
dropout) on data/tinyshakespeare.txt split 90/10, with nanoGPT's initialisation, the GPT of
bench/peers_torch.py (gpt_loss) and PyTorch's own random numbers. Prints the val loss
estimated as nanoGPT's CPU run does (20 batches) and closely (500 batches), to compare with
`build/examples/char_gpt --seed S --eval-iters 500` (docs/PERFORMANCE.md, "Models").

  bench/char_gpt_reference.py [--seed S] [--no-bias] [--gelu tanh|none] [--iters N]
                              [--threads N]

--no-bias and --gelu none are nanoGPT's own model (bias=False, the exact GELU); the defaults
are char_gpt's (biases, GELU's tanh form).
"""
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_torch  # noqa: E402  (sets the threading environment before torch loads)
from peers_torch import gpt_loss, torch  # noqa: E402


def init(vocab, width, layers, block, bias):
    """nanoGPT's initialisation under its parameter names: every weight matrix and embedding
    N(0, 0.02), the residual projections N(0, 0.02 / sqrt(2 layers)), biases 0, norms 1."""
    def normal(*shape, sd=0.02):
        return (torch.randn(*shape) * sd).requires_grad_()

    def const(value, n):
        return torch.full((n,), float(value), requires_grad=True)

    residual = 0.02 / math.sqrt(2 * layers)
    p = {"transformer.wte.weight": normal(vocab, width),
         "transformer.wpe.weight": normal(block, width),
         "transformer.ln_f.weight": const(1, width)}
    for i in range(layers):
        h = f"transformer.h.{i}."
        p[h + "ln_1.weight"] = const(1, width)
        p[h + "ln_2.weight"] = const(1, width)
        p[h + "attn.c_attn.weight"] = normal(3 * width, width)
        p[h + "attn.c_proj.weight"] = normal(width, width, sd=residual)
        p[h + "mlp.c_fc.weight"] = normal(4 * width, width)
        p[h + "mlp.c_proj.weight"] = normal(width, 4 * width, sd=residual)
        if bias:
            for name, n in (("ln_1", width), ("ln_2", width), ("attn.c_attn", 3 * width),
                            ("attn.c_proj", width), ("mlp.c_fc", 4 * width),
                            ("mlp.c_proj", width)):
                p[h + name + ".bias"] = const(0, n)
    if bias:
        p["transformer.ln_f.bias"] = const(0, width)
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--no-bias", action="store_true")
    ap.add_argument("--gelu", choices=["tanh", "none"], default="tanh")
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "data",
                                                   "tinyshakespeare.txt"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    text = open(args.data, encoding="utf-8").read()
    chars = sorted(set(text))
    data = torch.tensor([chars.index(c) for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]
    width, layers, heads, block, batch = 128, 4, 4, 64, 12
    p = init(len(chars), width, layers, block, not args.no_bias)
    opt = torch.optim.AdamW(
        [{"params": [v for v in p.values() if v.dim() >= 2], "weight_decay": 0.1},
         {"params": [v for v in p.values() if v.dim() < 2], "weight_decay": 0.0}],
        lr=1e-3, betas=(0.9, 0.99))

    def lr_at(step, top=1e-3, bottom=1e-4, warmup=100):  # nanoGPT's get_lr
        if step < warmup:
            return top * step / warmup
        ratio = (step - warmup) / max(1, args.iters - warmup)
        return bottom + 0.5 * (1 + math.cos(math.pi * min(ratio, 1.0))) * (top - bottom)

    def sample(d):
        ix = torch.randint(len(d) - block, (batch,))
        return (torch.stack([d[i:i + block] for i in ix]),
                torch.stack([d[i + 1:i + 1 + block] for i in ix]))

    def loss(x, y):
        return gpt_loss(p, x, y, heads, gelu=args.gelu)

    start = time.time()
    for step in range(args.iters):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x, y = sample(train)
        opt.zero_grad(set_to_none=True)
        loss(x, y).backward()
        torch.nn.utils.clip_grad_norm_(p.values(), 1.0)
        opt.step()
    seconds = time.time() - start
    with torch.no_grad():
        def estimate(d, n):
            return sum(loss(*sample(d)).item() for _ in range(n)) / n
        v20, v500 = estimate(val, 20), estimate(val, 500)
    print(f"seed {args.seed}, bias {not args.no_bias}, gelu {args.gelu}: {args.iters} steps in "
          f"{seconds:.0f} s; val loss {v20:.4f} (20 batches), {v500:.4f} (500 batches)")


if __name__ == "__main__":
    main()
