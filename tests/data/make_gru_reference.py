#!/usr/bin/python3
"""Writes gru_reference.h5: hidden states of PyTorch's nn.GRUCell, the independent reference of hpt's
GRU with gru.reset = after (tests/unit/test_gru_pytorch.cpp reads it; the tests never need torch).

One group per size, /H{H}_I{I} for H in (7, 64, 256) and I in (1, 64), holding
  weight_ih (3H, I), weight_hh (3H, H), bias_ih (3H), bias_hh (3H)   nn.GRUCell's parameters, gate
                                                                     rows r, z, n (float32)
  x (T, B, I), h0 (B, H)                                             inputs (float32)
  h (T, B, H)                                                        h[t]: hidden state after step
                                                                     t + 1 (float64)
and attributes hidden, input, batch, steps. Every input is rounded to float32 (the parameters to
float16, to keep the file small) and stored as float32, and the cell then runs in float64 on exactly
those values: a float32 or float64 build of hpt reads its inputs without rounding, and only its own
arithmetic differs from the reference. The parameters are stored gzip-compressed (with shuffle).

    /usr/bin/python3 tests/data/make_gru_reference.py [--out tests/data/gru_reference.h5]
"""
import argparse
import os

import h5py
import numpy as np
import torch

SEED = 20240510
HIDDEN = (7, 64, 256)
INPUT = (1, 64)
BATCH = 3
STEPS = 20
PACK = dict(compression="gzip", compression_opts=9, shuffle=True)  # keeps the file small


def as_f32(t):
    """The tensor rounded to float32, as float64 (exactly representable in float32)."""
    return t.detach().to(torch.float32).to(torch.float64)


def as_f16(t):
    """The tensor rounded to float16, as float64: 11 significant bits, so the float32 copies in the
    file compress to about half (their low mantissa bytes are zero)."""
    return t.detach().to(torch.float16).to(torch.float64)


def make_case(H, I, gen):
    cell = torch.nn.GRUCell(I, H).to(torch.float64)  # PyTorch's init: U(-1/sqrt(H), 1/sqrt(H))
    with torch.no_grad():
        for p in cell.parameters():
            p.uniform_(-1.0 / np.sqrt(H), 1.0 / np.sqrt(H), generator=gen)
            p.copy_(as_f16(p))
        # Wider biases of the gates so r and z spread over (0, 1) rather than sitting near 1/2.
        cell.bias_ih[: 2 * H].uniform_(-2.0, 2.0, generator=gen)
        cell.bias_ih.copy_(as_f16(cell.bias_ih))
    x = as_f32(torch.randn(STEPS, BATCH, I, generator=gen, dtype=torch.float64))
    h0 = as_f32(torch.rand(BATCH, H, generator=gen, dtype=torch.float64) * 2.0 - 1.0)
    hs = []
    h = h0
    with torch.no_grad():
        for t in range(STEPS):
            h = cell(x[t], h)
            hs.append(h.clone())
    return cell, x, h0, torch.stack(hs)


def check_formula(cell, x, h0, hs):
    """The documented nn.GRUCell update, written out in numpy, against the cell's output."""
    H = cell.hidden_size
    wi, wh = cell.weight_ih.detach().numpy(), cell.weight_hh.detach().numpy()
    bi, bh = cell.bias_ih.detach().numpy(), cell.bias_hh.detach().numpy()
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    h = h0.numpy()
    for t in range(x.shape[0]):
        gi = x[t].numpy() @ wi.T + bi
        gh = h @ wh.T + bh
        r = sig(gi[:, :H] + gh[:, :H])
        z = sig(gi[:, H : 2 * H] + gh[:, H : 2 * H])
        n = np.tanh(gi[:, 2 * H :] + r * gh[:, 2 * H :])
        h = (1.0 - z) * n + z * h
        assert np.allclose(h, hs[t].numpy(), rtol=0, atol=1e-12), "nn.GRUCell formula"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "gru_reference.h5"))
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(SEED)
    with h5py.File(args.out, "w") as f:
        f.attrs["generator"] = "tests/data/make_gru_reference.py"
        f.attrs["torch_version"] = str(torch.__version__)
        f.attrs["seed"] = SEED
        for H in HIDDEN:
            for I in INPUT:
                cell, x, h0, hs = make_case(H, I, gen)
                check_formula(cell, x, h0, hs)
                g = f.create_group("H%d_I%d" % (H, I))
                g.attrs["hidden"], g.attrs["input"] = H, I
                g.attrs["batch"], g.attrs["steps"] = BATCH, STEPS
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    g.create_dataset(name, data=getattr(cell, name).detach().numpy().astype(np.float32), **PACK)
                g["x"] = x.numpy().astype(np.float32)
                g["h0"] = h0.numpy().astype(np.float32)
                g["h"] = hs.numpy().astype(np.float64)
    print("wrote %s (%d bytes)" % (args.out, os.path.getsize(args.out)))


if __name__ == "__main__":
    main()
