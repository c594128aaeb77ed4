#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The PyTorch peer: strata_bench's workloads, same names, timed in PyTorch.

Run by strata_bench (make bench) with Debian's python3-torch, which installs
for /usr/bin/python3. Configured at PyTorch's best on this machine, 2 threads:
OMP_WAIT_POLICY=PASSIVE (its OpenMP pool must not spin while its BLAS's own
threads work), OPENBLAS_CORETYPE=SkylakeX and ATEN_CPU_CAPABILITY=avx512 on a
CPU with AVX-512 (OpenBLAS 0.3.21 does not recognise recent Xeons and falls
back to SSE3 kernels; Debian's torch 1.13 defaults to its AVX2 kernels). All
must be set before torch loads, so this script sets them first.

  peers_torch.py --serve
  peers_torch.py --out FILE [--filter SUBSTRING] [--reps N]

--serve is how strata_bench runs it: one persistent process, driven row by
row over its stdin and stdout (see serve()), so that PyTorch's repetitions
alternate with strata's and the other peers' within each workload. --out runs
every row on its own and writes {"config": ..., "results": [{"name",
"median", "min", "max", "reps"}]} with times in milliseconds ({"name",
"error"} for a row that raised). Results are new tensors, as a user gets them.
Restricted to AVX2 (make bench-avx2), the caller sets OPENBLAS_CORETYPE=Haswell
and ATEN_CPU_CAPABILITY=avx2, which the defaults below leave alone.
Where torch sees a CUDA device it also times the cuda_* rows of
bench/gpu_workloads.cpp (bench/gpu_check.sh runs them with --filter cuda_).
"""
import argparse
import itertools
import json
import math
import os
import statistics
import sys
import time


def cpu_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
        return all(x in flags for x in ("avx512f", "avx512bw", "avx512vl", "avx512dq"))
    except OSError:
        return False


os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
if cpu_has_avx512():
    os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx512")

try:
    import torch
except ImportError as e:  # strata_bench prints this and leaves the column empty
    print(f"pytorch peer skipped: {e} (apt-get install python3-torch)")
    sys.exit(3)

torch.set_num_threads(2)
AF = torch.autograd.functional


WARMUP_S = 0.1


def timed(body, reps, warmup=1):
    # Warm up for at least WARMUP_S as well as `warmup` calls, like strata_bench:
    # on a VM whose cores idled, the first milliseconds of work run up to 2x slow.
    return timed_turn(body, reps, WARMUP_S, warmup)


def raw_workloads():
    n4 = 4096
    for n in (256, 1024, 2048):
        def mm(n=n, bt=False):
            g = torch.Generator().manual_seed(1)
            a = torch.randn(n, n, generator=g)
            b = torch.randn(n, n, generator=g)
            if bt:
                b = b.t()
            return lambda: torch.mm(a, b)
        yield f"matmul_f32_n{n}", mm
        yield f"matmul_f32_bt_n{n}", lambda n=n: mm(n, True)

    def unary(transposed):
        x = torch.randn(n4, n4)
        if transposed:
            x = x.t()
        # A row-major result (torch.exp of a transposed view would return a
        # transposed result and skip the transposition the workload measures).
        return lambda: torch.exp(x, out=torch.empty(n4, n4))

    def add(transposed):
        x, y = torch.randn(n4, n4), torch.randn(n4, n4)
        if transposed:
            x = x.t()
        return lambda: torch.add(x, y, out=torch.empty(n4, n4))

    yield "exp_f32_4096x4096", lambda: unary(False)
    yield "exp_f32_4096x4096_t", lambda: unary(True)
    yield "add_f32_4096x4096", lambda: add(False)
    yield "add_f32_4096x4096_t", lambda: add(True)

    def sums(dim):
        x = torch.randn(n4, n4)
        return (lambda: x.sum()) if dim is None else (lambda: x.sum(dim))

    yield "sum_axis1_f32_4096x4096", lambda: sums(1)
    yield "sum_axis0_f32_4096x4096", lambda: sums(0)
    yield "sum_all_f32_4096x4096", lambda: sums(None)


def linalg_workloads():
    """bench/workloads_linalg.cpp's rows: torch.linalg on float64 (LAPACK: Debian's OpenBLAS)."""
    def spd(n, seed):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(n, n, generator=g, dtype=torch.float64)
        return x @ x.T / n + torch.eye(n, dtype=torch.float64)

    def cholesky():
        a = spd(1024, 1)
        return lambda: torch.linalg.cholesky(a)

    def solve():
        g = torch.Generator().manual_seed(2)
        a = torch.randn(1024, 1024, generator=g, dtype=torch.float64)
        b = torch.randn(1024, 64, generator=g, dtype=torch.float64)
        return lambda: torch.linalg.solve(a, b)

    def eigh():
        a = spd(512, 4)
        return lambda: torch.linalg.eigh(a)

    yield "cholesky_f64_n1024", cholesky
    yield "solve_f64_n1024_k64", solve
    yield "eigh_f64_n512", eigh


def second_order_workloads():
    """bench/workloads_second_order.cpp's rows, in float64."""
    def slogdet_grad(n=1024):
        g = torch.Generator().manual_seed(61)
        x = torch.randn(n, n, generator=g, dtype=torch.float64)
        a = (x @ x.T / n + torch.eye(n, dtype=torch.float64)).requires_grad_()

        def step():
            (grad,) = torch.autograd.grad(torch.linalg.slogdet(a)[1], a)
            return grad
        return step

    def hvp_mlp():
        import functorch
        g = torch.Generator().manual_seed(51)
        d = torch.float64
        x = torch.randn(256, 64, generator=g, dtype=d)
        y = torch.randn(256, 1, generator=g, dtype=d)
        w1 = torch.randn(64, 128, generator=g, dtype=d) / 8
        w2 = torch.randn(128, 1, generator=g, dtype=d) / 11
        v1 = torch.randn(64, 128, generator=g, dtype=d)
        v2 = torch.randn(128, 1, generator=g, dtype=d)

        def loss(p):
            r = torch.tanh(x @ p[0]) @ p[1] - y
            return (r * r).mean()
        return lambda: functorch.jvp(functorch.grad(loss), ((w1, w2),), ((v1, v2),))[1]

    yield "slogdet_grad_f64_n1024", slogdet_grad
    yield "hvp_mlp_f64", hvp_mlp


def mlp_step(batch, device="cpu", sync=lambda: None):
    """bench/workloads_nn.cpp's 784-256-256-10 ReLU MLP and its SGD step, on `device`."""
    g = torch.Generator(device=device).manual_seed(7)
    dims = [784, 256, 256, 10]
    params = []
    for i in range(3):
        w = (torch.randn(dims[i], dims[i + 1], generator=g, device=device)
             / dims[i] ** 0.5).requires_grad_()
        b = torch.zeros(dims[i + 1], device=device, requires_grad=True)
        params += [w, b]
    x = torch.randn(batch, 784, generator=g, device=device)
    y = torch.randint(0, 10, (batch,), generator=g, device=device)

    def step():
        h = x
        for i in range(3):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i < 2:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.01 * p.grad
        sync()

    return step


def read_safetensors(path):
    """The tensors and the "__metadata__" of a safetensors file: an 8-byte
    little-endian header length N, N bytes of JSON ({name: {"dtype", "shape",
    "data_offsets": [begin, end]}}), then the tensors' raw little-endian bytes
    (offsets relative to the end of the header). No safetensors package needed."""
    dtypes = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32,
              "I64": torch.int64, "BOOL": torch.bool}
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = bytearray(data[8 + n + begin:8 + n + end])  # writable: frombuffer shares it
        dtype = dtypes[info["dtype"]]
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        tensors[name] = t.reshape(info["shape"])
    return tensors, meta


def bench_file(name):
    """The folder strata_bench gave ($STRATA_BENCH_DIR) and the path of <name>.safetensors there."""
    where = os.environ.get("STRATA_BENCH_DIR")
    if not where:
        raise RuntimeError("STRATA_BENCH_DIR is not set (strata_bench sets it)")
    return where, os.path.join(where, name + ".safetensors")


def training_loader(path, optimizer):
    """load() for checked_training_body: the parameters of the training file at path (each
    requiring grad), optimizer(parameters, metadata), the batches "batch_x" and "batch_y" split
    along their first axis, and the metadata's check_steps."""
    def load():
        t, meta = read_safetensors(path)
        xs, ys = list(t.pop("batch_x").unbind(0)), list(t.pop("batch_y").unbind(0))
        p = {k: v.requires_grad_() for k, v in t.items()}
        return p, optimizer(p, meta), xs, ys, int(meta["check_steps"])

    return load


def checked_training_body(load, step, loss_of, where, name, key):
    """The check and the timed body of a training row whose file strata wrote: from load()'s
    parameters, optimiser and batches, check_steps steps on batches 0, 1, ..., then the loss
    on the next batch, written as {key: loss} to <where>/<name>.pytorch.json for strata to
    compare with its own (untimed); then a fresh load() and the body, one step on the next
    batch, cycling through them."""
    p, opt, xs, ys, check_steps = load()
    for s in range(check_steps):
        step(p, opt, xs[s], ys[s])
    with torch.no_grad():
        loss = loss_of(p, xs[check_steps], ys[check_steps]).item()
    with open(os.path.join(where, name + ".pytorch.json"), "w") as f:
        json.dump({key: loss, "check_steps": check_steps}, f)

    p, opt, xs, ys, _ = load()
    turn = itertools.count()

    def body():
        i = next(turn) % len(xs)
        step(p, opt, xs[i], ys[i])

    return body


def makemore_step():
    """makemore_train_step: examples/makemore.cpp's model and AdamW step.

    Everything comes from the file strata's setup for the row wrote,
    $STRATA_BENCH_DIR/makemore_train_step.safetensors (bench/workloads_makemore.cpp):
    the initial parameters (nn.Embedding / nn.Linear layouts: "embed.weight"
    [27, 10], "0.weight" [128, 30], "0.bias", "1.weight" [27, 128], "1.bias"),
    the batches ("batch_x" [B, 256, 3], "batch_y" [B, 256], i64) and the
    optimiser's lr and weight decay (metadata). The check, untimed: from the
    file's parameters, check_steps steps on batches 0, 1, ..., then the loss on
    the next batch, written to makemore_train_step.pytorch.json for strata to
    compare with its own. The timed body is one step on the next batch,
    cycling through them, from a fresh load of the file.
    """
    where, path = bench_file("makemore_train_step")
    F = torch.nn.functional

    load = training_loader(path, lambda p, meta: torch.optim.AdamW(
        p.values(), lr=float(meta["lr"]), weight_decay=float(meta["weight_decay"])))

    def loss_of(p, x, y):
        e = F.embedding(x, p["embed.weight"]).view(x.shape[0], -1)  # concatenated contexts
        h = torch.tanh(F.linear(e, p["0.weight"], p["0.bias"]))
        return F.cross_entropy(F.linear(h, p["1.weight"], p["1.bias"]), y)

    def step(p, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(p, x, y)
        loss.backward()
        opt.step()
        return loss

    return checked_training_body(load, step, loss_of, where, "makemore_train_step", "loss_after_100")


def gpt_loss(p, idx, targets, heads, gelu="tanh"):
    """The mean cross-entropy of examples/char_gpt.cpp's GPT (nanoGPT's model.py shape: token
    and position embeddings, pre-norm blocks of causal self-attention and a GELU MLP, a final
    LayerNorm, output tied to the token embedding) on idx [B, T] against targets [B, T]; p
    holds nanoGPT's parameter names, a missing bias being none (nanoGPT's bias=False); gelu
    "tanh" (strata's TransformerBlock) or "none" (nanoGPT's exact GELU)."""
    F = torch.nn.functional
    b, t = idx.shape
    c = p["transformer.wte.weight"].shape[1]
    layers = len({k.split(".")[2] for k in p if k.startswith("transformer.h.")})
    x = p["transformer.wte.weight"][idx] + p["transformer.wpe.weight"][:t]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    for i in range(layers):
        def w(name):
            return p.get(f"transformer.h.{i}.{name}")
        a = F.layer_norm(x, [c], w("ln_1.weight"), w("ln_1.bias"))
        q, k, v = F.linear(a, w("attn.c_attn.weight"), w("attn.c_attn.bias")).split(c, 2)
        q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
        s = (q @ k.transpose(-2, -1) * (1.0 / math.sqrt(c // heads)))
        y = torch.softmax(s.masked_fill(~causal, float("-inf")), -1) @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        x = x + F.linear(y, w("attn.c_proj.weight"), w("attn.c_proj.bias"))
        m = F.layer_norm(x, [c], w("ln_2.weight"), w("ln_2.bias"))
        m = F.gelu(F.linear(m, w("mlp.c_fc.weight"), w("mlp.c_fc.bias")), approximate=gelu)
        x = x + F.linear(m, w("mlp.c_proj.weight"), w("mlp.c_proj.bias"))
    x = F.layer_norm(x, [c], p["transformer.ln_f.weight"], p.get("transformer.ln_f.bias"))
    logits = x @ p["transformer.wte.weight"].t()
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def char_gpt_step():
    """char_gpt_train_step: examples/char_gpt.cpp's GPT (nanoGPT's model.py shape: token and
    position embeddings, pre-norm blocks of causal self-attention and a GELU MLP in its tanh
    form, as strata's TransformerBlock, a final LayerNorm, output tied to the token embedding)
    and one training step: cross-entropy, backward, clip_grad_norm_(1.0), AdamW (betas 0.9 and
    0.99, weight decay 0.1 on the parameters of 2 or more dims, nanoGPT's groups).

    Everything comes from $STRATA_BENCH_DIR/char_gpt_train_step.safetensors
    (bench/workloads_char_gpt.cpp): the parameters, the batches "batch_x" and "batch_y"
    [n, B, T], the learning rate and the number of heads. The check, untimed, as makemore_step's: check_steps steps
    on batches 0, 1, ..., then the loss on the next batch, written to
    char_gpt_train_step.pytorch.json. The timed body is one step on the next batch, cycling.
    """
    where, path = bench_file("char_gpt_train_step")

    def optimizer(p, meta):  # nanoGPT's two groups: decay on the weight matrices only
        decay = [v for v in p.values() if v.dim() >= 2]
        rest = [v for v in p.values() if v.dim() < 2]
        return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                  {"params": rest, "weight_decay": 0.0}],
                                 lr=float(meta["lr"]), betas=(0.9, 0.99))

    load = training_loader(path, optimizer)

    heads = int(read_safetensors(path)[1]["heads"])

    def loss_of(p, idx, targets):
        return gpt_loss(p, idx, targets, heads)

    def step(p, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(p, x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(p.values(), 1.0)
        opt.step()
        return loss

    return checked_training_body(load, step, loss_of, where, "char_gpt_train_step", "loss_after_10")


def fashion_cnn_step():
    """fashion_cnn_train_step: examples/fashion_mnist_cnn.cpp's convnet (conv 3 x 3 padding 1,
    relu, 2 x 2 max-pool, twice, then a linear head; torch.nn's names conv1, conv2, fc) and one
    training step: cross-entropy, backward, AdamW (betas 0.9 and 0.999, decoupled weight decay
    on every parameter).

    Everything comes from $STRATA_BENCH_DIR/fashion_cnn_train_step.safetensors
    (bench/workloads_fashion_cnn.cpp): the parameters, the normalised image batches "batch_x"
    [n, B, 1, 28, 28] and labels "batch_y" [n, B], the learning rate and the weight decay. The
    check, untimed, as makemore_step's: check_steps steps on batches 0, 1, ..., then the loss
    on the next batch, written to fashion_cnn_train_step.pytorch.json. The timed body is one
    step on the next batch, cycling.
    """
    where, path = bench_file("fashion_cnn_train_step")
    F = torch.nn.functional

    load = training_loader(path, lambda p, meta: torch.optim.AdamW(
        p.values(), lr=float(meta["lr"]), weight_decay=float(meta["weight_decay"])))

    def loss_of(p, x, y):
        h = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"], padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2.weight"], p["conv2.bias"], padding=1)), 2)
        return F.cross_entropy(F.linear(h.flatten(1), p["fc.weight"], p["fc.bias"]), y)

    def step(p, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(p, x, y)
        loss.backward()
        opt.step()
        return loss

    return checked_training_body(load, step, loss_of, where, "fashion_cnn_train_step",
                                 "loss_after_10")


def nn_workloads():
    def mlp():
        return mlp_step(128)

    yield "mlp_train_step_b128", mlp, 200, 20
    yield "makemore_train_step", makemore_step, 200, 20
    yield "char_gpt_train_step", char_gpt_step, 20, 3
    yield "fashion_cnn_train_step", fashion_cnn_step, 20, 3

    def per_example_grads():
        """The same MLP's per-example gradients: vmap(grad(loss of one example))."""
        try:
            from torch.func import grad, vmap  # PyTorch >= 2.0
        except ImportError:
            from functorch import grad, vmap  # PyTorch 1.13 (Debian 12)
        g = torch.Generator().manual_seed(7)
        dims = [784, 256, 256, 10]
        params = []
        for i in range(3):
            params.append(torch.randn(dims[i], dims[i + 1], generator=g) / dims[i] ** 0.5)
            params.append(torch.zeros(dims[i + 1]))
        x = torch.randn(128, 784, generator=g)
        y = torch.nn.functional.one_hot(torch.randint(0, 10, (128,), generator=g), 10).float()

        def loss(params, x, y):
            h = x
            for i in range(3):
                h = h @ params[0 + 2 * i] + params[1 + 2 * i]
                if i < 2:
                    h = torch.relu(h)
            return -(y * torch.log_softmax(h, 0)).sum()

        per_example = vmap(grad(loss), in_dims=(None, 0, 0))
        return lambda: per_example(params, x, y)

    yield "per_example_grads_mlp_b128", per_example_grads, 50, 5

    def gather(backward):
        g = torch.Generator().manual_seed(9)
        x = torch.randn(1_000_000, 64, generator=g)
        idx = torch.randint(0, 1_000_000, (100_000,), generator=g)
        if not backward:
            return lambda: torch.index_select(x, 0, idx)
        x.requires_grad_()
        r = torch.randn(100_000, 64, generator=g)

        def step():
            x.grad = None
            (torch.index_select(x, 0, idx) * r).sum().backward()

        return step

    yield "gather_fwd_1e6x64_1e5", lambda: gather(False), 10, 1
    yield "gather_fwdbwd_1e6x64_1e5", lambda: gather(True), 10, 1


def conv_workloads():
    """bench/workloads_conv.cpp's rows: conv2d forward and backward, f32."""
    F = torch.nn.functional

    def lenet():
        g = torch.Generator().manual_seed(21)
        x = torch.randn(64, 1, 28, 28, generator=g)
        w1 = (torch.randn(32, 1, 3, 3, generator=g) / 3).requires_grad_()
        w2 = (torch.randn(64, 32, 3, 3, generator=g) / 17).requires_grad_()

        def step():
            w1.grad = w2.grad = None
            F.conv2d(torch.relu(F.conv2d(x, w1)), w2).sum().backward()

        return step

    def stem():
        g = torch.Generator().manual_seed(24)
        x = torch.randn(32, 3, 112, 112, generator=g)
        w = (torch.randn(64, 3, 7, 7, generator=g) / 12).requires_grad_()

        def step():
            w.grad = None
            F.conv2d(x, w, stride=2, padding=3).sum().backward()

        return step

    yield "conv2d_fwd_bwd_lenet_b64", lenet, 20, 2
    yield "conv2d_fwd_bwd_stem_b32", stem, 10, 1


def ad_workloads():
    # The definitions of bench/workloads_ad.cpp.
    for n in (16, 64, 256):
        def hess(n=n):
            W = torch.randn(n, n, dtype=torch.float64) / n ** 0.5
            x = torch.randn(n, dtype=torch.float64)

            def f(x):
                t = torch.tanh(W @ x)
                return (t * t).sum() + 0.5 * (x * x).sum()

            return lambda: AF.hessian(f, x)

        yield f"hessian_f64_n{n}", hess, 10, 1
    for forward in (True, False):
        for n in (64, 256):
            def jac(n=n, forward=forward):
                W1 = torch.randn(n, n) / n ** 0.5
                W2 = torch.randn(n, n) / n ** 0.5
                x = torch.randn(n)

                def g(x):
                    return torch.tanh(W2 @ torch.tanh(W1 @ x))

                if forward:
                    return lambda: AF.jacobian(g, x, vectorize=True, strategy="forward-mode")
                return lambda: AF.jacobian(g, x)

            yield f"{'jacfwd' if forward else 'jacrev'}_f32_n{n}", jac, 10, 1


def cuda_workloads():
    """The cuda_* rows of bench/gpu_workloads.cpp, on torch's first CUDA device.

    Each body ends with torch.cuda.synchronize(), as strata's ends with
    cudaDeviceSynchronize, so the times are the device's. matmul is plain f32
    (TF32 off, PyTorch's default and strata's cuBLAS mode). The transforms are
    torch.func's (vmap-batched, like strata's): hessian = jacfwd(jacrev(f)).
    """
    if not torch.cuda.is_available():
        return
    dev = torch.device("cuda", 0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize

    def synced(f):
        def body():
            f()
            sync()
        return body

    for n in (1024, 4096, 8192):
        def mm(n=n):
            g = torch.Generator(device=dev).manual_seed(1)
            a = torch.randn(n, n, generator=g, device=dev)
            b = torch.randn(n, n, generator=g, device=dev)
            return synced(lambda: torch.mm(a, b))
        yield f"cuda_matmul_f32_n{n}", mm, None, 1

    big = 8192

    def exp():
        x = torch.randn(big, big, device=dev)
        return synced(lambda: torch.exp(x))

    def add():
        x, y = torch.randn(big, big, device=dev), torch.randn(big, big, device=dev)
        return synced(lambda: torch.add(x, y))

    def sum_all():
        x = torch.randn(big, big, device=dev)
        return synced(lambda: torch.sum(x))

    def sum_axis0():
        x = torch.randn(big, big, device=dev)
        return synced(lambda: torch.sum(x, 0))

    yield f"cuda_exp_f32_{big}x{big}", exp, None, 1
    yield f"cuda_add_f32_{big}x{big}", add, None, 1
    yield f"cuda_sum_f32_{big}x{big}", sum_all, None, 1
    yield f"cuda_sum_axis0_f32_{big}x{big}", sum_axis0, None, 1

    for batch in (128, 4096):
        def mlp(batch=batch):
            return mlp_step(batch, dev, sync)
        yield f"cuda_mlp_train_step_b{batch}", mlp, None, 1

    def hess(n=256):
        W = torch.randn(n, n, dtype=torch.float64, device=dev) / n ** 0.5
        x = torch.randn(n, dtype=torch.float64, device=dev)

        def f(x):
            t = torch.tanh(W @ x)
            return (t * t).sum() + 0.5 * (x * x).sum()

        h = torch.func.hessian(f)
        return synced(lambda: h(x))

    yield "cuda_hessian_f64_n256", hess, None, 1

    def jacrev(n=1024):
        W1 = torch.randn(n, n, device=dev) / n ** 0.5
        W2 = torch.randn(n, n, device=dev) / n ** 0.5
        x = torch.randn(n, device=dev)

        def g(x):
            return torch.tanh(W2 @ torch.tanh(W1 @ x))

        j = torch.func.jacrev(g)
        return synced(lambda: j(x))

    yield "cuda_jacrev_f32_n1024", jacrev, None, 1


def all_workloads(default_reps=10):
    """(name, make, reps, warmup calls) for every row this machine's torch can run."""
    work = [(name, make, default_reps, 1) for name, make in raw_workloads()]
    work += [(name, make, default_reps, 1) for name, make in linalg_workloads()]
    work += [(name, make, default_reps, 1) for name, make in second_order_workloads()]
    work += list(conv_workloads())
    return work + list(nn_workloads()) + list(ad_workloads()) + list(cuda_workloads())


def torch_config():
    config = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "env": {k: os.environ.get(k, "") for k in
                ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY",
                 "OPENBLAS_THREAD_TIMEOUT")},
        "cpu_capability": torch.backends.cpu.get_cpu_capability()
        if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability")
        else "",
    }
    if torch.cuda.is_available():
        config["cuda"] = {
            "device": torch.cuda.get_device_name(0),
            "cuda": torch.version.cuda,
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        }
    return config


def timed_turn(body, reps, warm_s, warm_calls):
    """One turn of an interleaved measurement: warm up (at least warm_calls calls and
    warm_s seconds; nothing when both are 0), then `reps` timed calls, in ms."""
    if warm_s < 0:  # strata_bench --warmup-calls: exactly -warm_s * 1000 calls
        warm_calls, warm_s = max(warm_calls, round(-warm_s * 1e3)), 0
    t_end = time.perf_counter() + warm_s
    i = 0
    while i < warm_calls or (warm_s > 0 and time.perf_counter() < t_end):
        body()
        i += 1
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        body()
        ts.append((time.perf_counter() - t0) * 1e3)
    return ts


def serve():
    """strata_bench's persistent child: one command a line on stdin, one reply a line.

      list                         -> rows NAME...
      setup ROW                    -> ok | none (no such row) | error MESSAGE
      run ROW REPS WARM_MS         -> ok MS... | error MESSAGE
      quit (or end of input)       -> exits

    Replies go to the original stdout; anything torch or a row prints goes to
    stderr, so it can never break the protocol. The first line is
    "ready CONFIG_JSON". The parent sets PR_SET_PDEATHSIG on this process and
    closing its end of the pipe ends the loop, so the child never outlives it.
    """
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def reply(line):
        proto.write(line.replace("\n", " ") + "\n")
        proto.flush()

    work = {name: (make, warmup) for name, make, _, warmup in all_workloads()}
    bodies = {}  # row -> [body, warm-up calls still owed before its first timing]
    reply("ready " + json.dumps(torch_config()))
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] == "quit":
                break
            if cmd[0] == "list":
                reply("rows " + " ".join(work))
            elif cmd[0] == "setup":
                bodies.clear()  # free the previous row's inputs
                if cmd[1] not in work:
                    reply("none")
                    continue
                make, warmup = work[cmd[1]]
                bodies[cmd[1]] = [make(), warmup]
                reply("ok")
            elif cmd[0] == "run":
                entry = bodies[cmd[1]]
                ts = timed_turn(entry[0], int(cmd[2]), float(cmd[3]) / 1e3, entry[1])
                entry[1] = 0
                reply("ok " + " ".join(f"{t:.6f}" for t in ts))
            else:
                reply(f"error unknown command {cmd[0]}")
        except Exception as e:  # one failing row must not cost the others
            reply(f"error {type(e).__name__}: {e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", action="store_true",
                    help="run as strata_bench's persistent child (see serve())")
    ap.add_argument("--out")
    ap.add_argument("--filter", default="")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    if args.serve:
        serve()
        return
    if not args.out:
        ap.error("--out FILE or --serve")
    rows = []
    for name, make, reps, warmup in all_workloads(args.reps):
        if args.filter and args.filter not in name:
            continue
        reps = max(reps, args.reps) if name.startswith("mlp") else args.reps
        try:
            ts = timed(make(), reps, warmup)
        except Exception as e:  # one failing row must not cost the others
            print(f"pytorch peer: {name}: {type(e).__name__}: {e}", file=sys.stderr)
            rows.append({"name": name, "error": f"{type(e).__name__}: {e}"})
            continue
        rows.append({"name": name, "median": statistics.median(ts), "min": min(ts),
                     "max": max(ts), "reps": reps})
    with open(args.out, "w") as f:
        json.dump({"config": torch_config(), "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
