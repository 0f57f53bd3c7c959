"""NumPy-benchmark-style kernels (issue 25), written here from each algorithm's definition: int size
and step arguments, local buffers, Python loops of fixed counts, slices with arithmetic bounds and
in-place updates, as NumPy benchmark suites write them."""

from __future__ import annotations

import numpy as np

# ---- stencils (PolyBench) ----


def jacobi_1d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def jacobi_2d_local(TSTEPS, N, A):
    a = np.asarray(A).copy()
    b = np.empty_like(a)
    b[:] = a
    for _ in range(TSTEPS):
        b[1:N - 1, 1:N - 1] = 0.2 * (a[1:N - 1, 1:N - 1] + a[1:N - 1, :N - 2] + a[1:N - 1, 2:]
                                     + a[2:, 1:N - 1] + a[:N - 2, 1:N - 1])
        a[1:N - 1, 1:N - 1] = b[1:N - 1, 1:N - 1]
    return a


def heat_3d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
            + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (
            0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
            + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
            + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
            + B[1:-1, 1:-1, 1:-1])


def fdtd_2d(TMAX, ex, ey, hz, _fict_):
    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def seidel_2d(TSTEPS, N, A):
    for _ in range(0, TSTEPS - 1):
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:]
                           + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def adi(TSTEPS, N, u):
    v = np.empty(u.shape, dtype=u.dtype)
    p = np.empty(u.shape, dtype=u.dtype)
    q = np.empty(u.shape, dtype=u.dtype)
    DX = 1.0 / N
    DY = 1.0 / N
    DT = 1.0 / TSTEPS
    B1 = 2.0
    B2 = 1.0
    mul1 = B1 * DT / (DX * DX)
    mul2 = B2 * DT / (DY * DY)
    a = -mul1 / 2.0
    b = 1.0 + mul1
    c = a
    d = -mul2 / 2.0
    e = 1.0 + mul2
    f = d
    for _ in range(1, TSTEPS + 1):
        v[0, 1:N - 1] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = v[0, 1:N - 1]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -c / (a * p[1:N - 1, j - 1] + b)
            q[1:N - 1, j] = (-d * u[j, 0:N - 2] + (1.0 + 2.0 * d) * u[j, 1:N - 1] - f * u[j, 2:N]
                             - a * q[1:N - 1, j - 1]) / (a * p[1:N - 1, j - 1] + b)
        v[N - 1, 1:N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            v[j, 1:N - 1] = p[1:N - 1, j] * v[j + 1, 1:N - 1] + q[1:N - 1, j]
        u[1:N - 1, 0] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = u[1:N - 1, 0]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -f / (d * p[1:N - 1, j - 1] + e)
            q[1:N - 1, j] = (-a * v[0:N - 2, j] + (1.0 + 2.0 * a) * v[1:N - 1, j] - c * v[2:N, j]
                             - d * q[1:N - 1, j - 1]) / (d * p[1:N - 1, j - 1] + e)
        u[1:N - 1, N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            u[1:N - 1, j] = p[1:N - 1, j] * u[1:N - 1, j + 1] + q[1:N - 1, j]


def deriche(alpha, imgIn):
    k = (1.0 - np.exp(-alpha)) * (1.0 - np.exp(-alpha)) / (
        1.0 + alpha * np.exp(-alpha) - np.exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * np.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * np.exp(-2.0 * alpha)
    b1 = 2.0 ** (-alpha)
    b2 = -np.exp(-2.0 * alpha)
    c1 = c2 = 1
    W, H = imgIn.shape
    y1 = np.empty_like(imgIn)
    y1[:, 0] = a1 * imgIn[:, 0]
    y1[:, 1] = a1 * imgIn[:, 1] + a2 * imgIn[:, 0] + b1 * y1[:, 0]
    for j in range(2, H):
        y1[:, j] = a1 * imgIn[:, j] + a2 * imgIn[:, j - 1] + b1 * y1[:, j - 1] + b2 * y1[:, j - 2]
    y2 = np.empty_like(imgIn)
    y2[:, -1] = 0.0
    y2[:, -2] = a3 * imgIn[:, -1]
    for j in range(H - 3, -1, -1):
        y2[:, j] = a3 * imgIn[:, j + 1] + a4 * imgIn[:, j + 2] + b1 * y2[:, j + 1] + b2 * y2[:, j + 2]
    imgOut = c1 * (y1 + y2)
    y1[0, :] = a5 * imgOut[0, :]
    y1[1, :] = a5 * imgOut[1, :] + a6 * imgOut[0, :] + b1 * y1[0, :]
    for i in range(2, W):
        y1[i, :] = a5 * imgOut[i, :] + a6 * imgOut[i - 1, :] + b1 * y1[i - 1, :] + b2 * y1[i - 2, :]
    y2[-1, :] = 0.0
    y2[-2, :] = a7 * imgOut[-1, :]
    for i in range(W - 3, -1, -1):
        y2[i, :] = a7 * imgOut[i + 1, :] + a8 * imgOut[i + 2, :] + b1 * y2[i + 1, :] + b2 * y2[i + 2, :]
    imgOut[:] = c2 * (y1 + y2)
    return imgOut


def vadv_columns(K, dtr, a, b, c, d):
    """Vertical implicit solve per column: tridiagonal system along the last axis (Thomas algorithm)."""
    ccol = np.empty_like(d)
    dcol = np.empty_like(d)
    out = np.zeros(d.shape)
    ccol[:, :, 0] = c[:, :, 0] / (b[:, :, 0] + dtr)
    dcol[:, :, 0] = d[:, :, 0] / (b[:, :, 0] + dtr)
    for k in range(1, K):
        div = 1.0 / (b[:, :, k] + dtr - a[:, :, k] * ccol[:, :, k - 1])
        ccol[:, :, k] = c[:, :, k] * div
        dcol[:, :, k] = (d[:, :, k] - a[:, :, k] * dcol[:, :, k - 1]) * div
    out[:, :, K - 1] = dcol[:, :, K - 1]
    for k in range(K - 2, -1, -1):
        out[:, :, k] = dcol[:, :, k] - ccol[:, :, k] * out[:, :, k + 1]
    return out


# ---- linear algebra (PolyBench) ----


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def gesummv(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x


def atax(A, x):
    return (A @ x) @ A


def bicg(A, p, r):
    return r @ A, A @ p


def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A


def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def syr2k(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += A[:i + 1, k] * alpha * B[i, k] + B[:i + 1, k] * alpha * A[i, k]


def k2mm(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D


def k3mm(A, B, C, D):
    return A @ B @ (C @ D)


def doitgen(NR, NQ, NP, A, C4):
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))


def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def gramschmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def trisolv_local(N, L, b):
    x = np.zeros(N)
    for i in range(N):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def lu(N, A):
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def ludcmp(N, A, b):
    """NPBench's ludcmp: LU in place (its loops are lu's), then the two triangular solves."""
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    lu(N, A)
    for i in range(N):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(N - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


def nussinov(N, seq, builtin_max=False):
    """NPBench's nussinov with np.maximum and np.where where it calls Python's max and a match() that branches on the
    data (builtin_max: Python's max, as the original: each call a guard)."""
    best = max if builtin_max else np.maximum
    table = np.zeros((N, N), np.int32)
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            table[i, j] = best(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = best(table[i, j], table[i + 1, j])
                bonus = np.where(seq[i] + seq[j] == 3, 1, 0) if i < j - 1 else 0
                table[i, j] = best(table[i, j], table[i + 1, j - 1] + bonus)
            for k in range(i + 1, j):
                table[i, j] = best(table[i, j], table[i, k] + table[k + 1, j])
    return table


def views_written(A):
    """Writes through a transpose, a ravel and a reshape of a local buffer, an out= reduction, a bit view."""
    B = A.copy()
    B.T[0] += 1.0
    B.ravel()[::4] = 0.0
    rows = B.reshape(-1, 2 * A.shape[1])
    rows[:, 0] = rows.sum(axis=1)
    total = np.zeros(A.shape[1])
    np.add.reduce(B, axis=0, out=total)
    return B, total, B.view(np.int64) >> 52


def floyd_warshall(N, path):
    for k in range(N):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def floyd_warshall_local(N, path):
    dist = path.copy()
    for k in range(N):
        dist[:] = np.minimum(dist, np.add.outer(dist[:, k], dist[k, :]))
    return dist


# ---- machine learning and numerics ----


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + eps) + b


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def gpt2_block(n_head, x, ln1_g, ln1_b, w_qkv, b_qkv, w_proj, b_proj, ln2_g, ln2_b, w_fc, b_fc, w_out, b_out):
    """Pre-norm transformer block: causal multi-head attention, then a GELU MLP, each with a residual."""
    T, C = x.shape
    hd = C // n_head
    h = layer_norm(x, ln1_g, ln1_b) @ w_qkv + b_qkv
    q, k, v = np.split(h, 3, axis=-1)
    mask = (1 - np.tri(T, dtype=x.dtype)) * -1e10
    heads = []
    for i in range(n_head):
        qi, ki, vi = q[:, i * hd:(i + 1) * hd], k[:, i * hd:(i + 1) * hd], v[:, i * hd:(i + 1) * hd]
        heads.append(softmax(qi @ ki.T / np.sqrt(hd) + mask) @ vi)
    x = x + np.hstack(heads) @ w_proj + b_proj
    return x + gelu(layer_norm(x, ln2_g, ln2_b) @ w_fc + b_fc) @ w_out + b_out


def gpt2_forward(n_head, tokens, wte, wpe, blocks, ln_f):
    """GPT-2's forward pass: token ids (a Python list) and positions (a range) looked up in the embeddings, the
    blocks (each a dict of its weights), a final norm and the output projection tied to the token embedding."""
    x = wte[tokens] + wpe[range(len(tokens))]
    for block in blocks:
        x = gpt2_block(n_head, x, **block)
    return layer_norm(x, **ln_f) @ wte.T


def rms_norm(x, w, eps: float = 1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, cos, sin):
    """Rotary embedding on interleaved (even, odd) pairs of the last axis."""
    xr, xi = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = xr * cos - xi * sin
    out[..., 1::2] = xr * sin + xi * cos
    return out


def llama_block(n_head, x, attn_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3):
    """Pre-norm llama block: RMSNorm, rotary causal attention, RMSNorm, SwiGLU feed-forward."""
    T, C = x.shape
    hd = C // n_head
    freqs = 1.0 / (10000.0 ** (np.arange(0, hd, 2) / hd))
    angles = np.outer(np.arange(T), freqs)
    cos, sin = np.cos(angles), np.sin(angles)
    h = rms_norm(x, attn_norm)
    q = (h @ wq).reshape(T, n_head, hd).transpose(1, 0, 2)
    k = (h @ wk).reshape(T, n_head, hd).transpose(1, 0, 2)
    v = (h @ wv).reshape(T, n_head, hd).transpose(1, 0, 2)
    q, k = rope(q, cos, sin), rope(k, cos, sin)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    attn = (softmax(scores) @ v).transpose(1, 0, 2).reshape(T, C)
    x = x + attn @ wo
    h = rms_norm(x, ffn_norm)
    a = h @ w1
    return x + ((a / (1.0 + np.exp(-a))) * (h @ w3)) @ w2


def adam_step(t, lr, beta1, beta2, eps, param, grad, m, v):
    """One Adam update, returning the new parameter and moments."""
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad**2
    m_hat = m / (1 - beta1**t)
    v_hat = v / (1 - beta2**t)
    return param - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def adam_inplace(t, lr, beta1, beta2, eps, param, grad, m, v):
    """Adam written the way training loops do: moments and parameter updated in place."""
    m *= beta1
    m += (1 - beta1) * grad
    v *= beta2
    v += (1 - beta2) * grad * grad
    param -= lr * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)


def rbf_kernel(X, Y, gamma):
    d2 = np.sum(X**2, axis=1)[:, None] + np.sum(Y**2, axis=1)[None, :] - 2.0 * X @ Y.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


def pairwise_distances(X, Y):
    diff = X[:, None, :] - Y[None, :, :]
    return np.sqrt(np.sum(diff * diff, axis=-1))


def kmeans_assign(X, centroids):
    d2 = np.sum((X[:, None, :] - centroids[None, :, :]) ** 2, axis=-1)
    return np.argmin(d2, axis=1)


def cumulative_trapezoid(y, dx):
    return np.cumsum((y[1:] + y[:-1]) / 2.0 * dx)


def kmeans_step(K, X, centroids):
    """Assignment plus centroid update with a loop over clusters and int counts."""
    labels = kmeans_assign(X, centroids)
    new = np.zeros_like(centroids)
    for c in range(K):
        members = labels == c
        count = np.sum(members)
        new[c] = np.sum(X * members[:, None], axis=0) / np.maximum(count, 1)
    return labels, new
