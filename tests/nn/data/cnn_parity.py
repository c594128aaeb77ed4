# The PyTorch reference of tests/nn/cnn_parity.test.cpp: examples/fashion_cnn_model.hpp's
# convnet (conv 3 x 3 padding 1, relu, 2 x 2 max-pool, twice, then a linear head; torch.nn's
# layouts and names conv1, conv2, fc) trained for 10 steps with the example's recipe: images
# standardised as fashion_cnn::normalize does ((pixel / 255 - 0.2860) / 0.3530), mean
# cross-entropy, torch.optim.AdamW (betas 0.9/0.999, eps 1e-8, decoupled weight decay on every
# parameter). Written to cnn_parity.txt next to this file, in tests/ad/data/transformer_torch.py's
# format (case / t / end lines). Regenerate with Debian's python3-torch (1.13):
#
#   /usr/bin/python3 tests/nn/data/cnn_parity.py > tests/nn/data/cnn_parity.txt
#
# One case, "cnn": the float64 initial parameters (torch.nn's names), the pixel batches
# "pixels" [steps + 1, B, 28, 28] (integers 0..255, as load_idx returns Fashion-MNIST's) and
# their labels "labels" [steps + 1, B], and for a float64 run and a float32 run from the same
# parameters (cast) `losses_<dtype>` [steps + 1]: the loss of each step's batch before its
# update, then the loss on the last batch after the last update.
import torch
import torch.nn.functional as F

C1, C2, K, B = 4, 8, 10, 4  # channels of the two convolutions, classes, batch
STEPS, LR, DECAY = 10, 1e-2, 0.1
MEAN, STD = 0.2860, 0.3530
gen = torch.Generator().manual_seed(20261206)
d = torch.float64


def emit(name, t):
    t = t.detach().to(d)
    dims = " ".join(str(s) for s in t.shape)
    if t.is_floating_point() and torch.equal(t, t.round()):
        vals = " ".join(str(int(v)) for v in t.reshape(-1))  # integers, written short
    else:
        vals = " ".join(repr(float(v)) for v in t.reshape(-1))
    print(f"t {name} {t.dim()} {dims} {vals}".replace("  ", " "))


def uniform(*shape, fan_in):
    """PyTorch's default initialisation of conv and linear layers: U(-1/sqrt(fan_in), ...)."""
    bound = fan_in ** -0.5
    return (torch.rand(shape, generator=gen, dtype=d) * 2 - 1) * bound


P = {
    "conv1.weight": uniform(C1, 1, 3, 3, fan_in=9), "conv1.bias": uniform(C1, fan_in=9),
    "conv2.weight": uniform(C2, C1, 3, 3, fan_in=9 * C1),
    "conv2.bias": uniform(C2, fan_in=9 * C1),
    "fc.weight": uniform(K, C2 * 49, fan_in=C2 * 49), "fc.bias": uniform(K, fan_in=C2 * 49),
}
PIXELS = torch.randint(0, 256, (STEPS + 1, B, 28, 28), generator=gen)
LABELS = torch.randint(0, K, (STEPS + 1, B), generator=gen)


def normalize(pixels, dtype):  # fashion_cnn::normalize, in its order of operations
    x = (pixels.to(dtype) * (1.0 / 255.0) - MEAN) * (1.0 / STD)
    return x.reshape(pixels.shape[0], 1, 28, 28)


def cnn(p, x):
    h = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"], padding=1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2.weight"], p["conv2.bias"], padding=1)), 2)
    return F.linear(h.flatten(1), p["fc.weight"], p["fc.bias"])


def train(dtype):
    p = {k: v.to(dtype).clone().requires_grad_() for k, v in P.items()}
    opt = torch.optim.AdamW(p.values(), lr=LR, weight_decay=DECAY)
    losses = []
    for it in range(STEPS):
        loss = F.cross_entropy(cnn(p, normalize(PIXELS[it], dtype)), LABELS[it])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    with torch.no_grad():
        losses.append(float(F.cross_entropy(cnn(p, normalize(PIXELS[STEPS], dtype)),
                                             LABELS[STEPS])))
    return losses


runs = {name: train(dtype) for name, dtype in [("f64", torch.float64), ("f32", torch.float32)]}
print(f"case cnn channels1={C1} channels2={C2} classes={K} batch={B} steps={STEPS} "
      f"lr={LR!r} weight_decay={DECAY!r}")
for k, v in P.items():
    emit(k, v)
emit("pixels", PIXELS.to(d))
emit("labels", LABELS.to(d))
for name, losses in runs.items():
    emit("losses_" + name, torch.tensor(losses, dtype=d))
print("end")
