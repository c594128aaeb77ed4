# The PyTorch float64 references of tests/ad/linalg_torch.test.cpp: run with Debian's
# python3-torch (1.13) to regenerate the constants pasted there. Every input is written out
# here and in the test, so the two read the same numbers.
import torch

torch.set_printoptions(precision=17)
d = torch.float64
A = torch.tensor([[2.0, -1.0, 0.5, 0.3], [0.4, 3.0, -0.7, 1.1], [-1.2, 0.8, 2.5, -0.6],
                  [0.9, -0.3, 0.2, 1.7]], dtype=d)
S = A @ A.T + 4 * torch.eye(4, dtype=d)
T = torch.tensor([[1.0, 0.2, -0.4], [0.3, -1.5, 0.8], [-0.6, 0.9, 2.0], [1.4, 0.1, -0.3]],
                 dtype=d)
B = torch.tensor([[1.0, -2.0], [0.5, 0.25], [-1.5, 3.0], [2.0, 1.0]], dtype=d)
W = torch.tensor([[0.3, -0.2, 0.5, 0.1], [0.7, 0.4, -0.6, 0.2], [-0.1, 0.9, 0.3, -0.8],
                  [0.6, -0.5, 0.2, 0.4]], dtype=d)


def emit(name, t):
    flat = ", ".join(repr(float(v)) for v in t.reshape(-1))
    print(f"const std::vector<double> {name}{{{flat}}};")


def grad_of(f, *xs):
    xs = [x.clone().requires_grad_(True) for x in xs]
    y = f(*xs)
    gs = torch.autograd.grad(y, xs)
    return y.detach(), gs


y, (g,) = grad_of(lambda s: (torch.linalg.cholesky(s) * W).sum(), S)
emit("kCholeskyGrad", g)
y, (g,) = grad_of(lambda s: (torch.linalg.eigh(s)[0] * torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=d)).sum()
                  + (torch.linalg.eigh(s)[1] ** 2 * W).sum(), S)
emit("kEighGrad", (g + g.T) / 2)
W3 = W[:, :3]
y, (g,) = grad_of(lambda t: (torch.linalg.svd(t, full_matrices=False)[1] * torch.tensor([1.0, -0.5, 2.0], dtype=d)).sum()
                  + (torch.linalg.svd(t, full_matrices=False)[0] ** 2 * W3).sum()
                  + (torch.linalg.svd(t, full_matrices=False)[2] ** 2 * W[:3, :3]).sum(), T)
emit("kSvdGrad", g)
y, (g,) = grad_of(lambda t: (torch.linalg.qr(t)[0] * W3).sum() + (torch.linalg.qr(t)[1] * W[:3, :3]).sum(), T)
emit("kQrGrad", g)
y, (ga, gb) = grad_of(lambda a, b: (torch.linalg.solve(a, b) * W[:, :2]).sum(), A, B)
emit("kSolveGradA", ga)
emit("kSolveGradB", gb)
y, (g,) = grad_of(lambda a: torch.linalg.slogdet(a)[1], A)
emit("kLogabsdetGrad", g)
y, (g,) = grad_of(lambda a: torch.linalg.det(a), A)
emit("kDetGrad", g)
print(f"// det(A) = {float(torch.linalg.det(A))!r}")
y, (g,) = grad_of(lambda a: (torch.linalg.inv(a) * W).sum(), A)
emit("kInvGrad", g)
y, (g,) = grad_of(lambda t: (torch.linalg.pinv(t) * W3.T).sum(), T)
emit("kPinvGrad", g)
