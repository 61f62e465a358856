"""The seed post's three figures, regenerated from this package's curves and accountants.

1. ``rappor-zcdp``: tight zCDP ρ of RAPPOR (Theorem 4) against the generic pure-DP
   conversions (ε²/2, Bun–Steinke; ε·tanh(ε/2), Steinke), and the tight RDP curve ε̂(α).
2. ``rappor-zcdp-composition``: ε at δ of RAPPOR composed k times: simple, advanced,
   zCDP (generic and tight ρ), improved RDP, and the exact PLD.
3. ``rappor-mae``: expected absolute error per bucket of k-RAPPOR against the local
   Gaussian mechanism at equal ρ (analytic, normal approximation; no sampling).
"""

from __future__ import annotations

import math
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from vetdp.accounting.composition import advanced, rdp_to_dp, simple, zcdp_to_dp  # noqa: E402
from vetdp.accounting.curves import rappor_curve  # noqa: E402
from vetdp.accounting.pld import ExactPLD  # noqa: E402

__all__ = ["figure_zcdp", "figure_composition", "figure_mae", "write_figures"]


def figure_zcdp() -> plt.Figure:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    eps = np.linspace(0.05, 8, 120)
    left.plot(eps, eps**2 / 2, label="ε²/2 (Bun–Steinke, any ε-DP)")
    left.plot(eps, eps * np.tanh(eps / 2), label="ε·tanh(ε/2) (Steinke, any ε-DP)")
    left.plot(eps, [rappor_curve(float(e)).zcdp_rho() for e in eps], label="RAPPOR, tight (Thm 4)", lw=2)
    left.set(xlabel="ε", ylabel="ρ", title="zCDP ρ of ε-DP RAPPOR")
    left.legend()
    alpha = np.logspace(0, 3, 200)
    for e in [0.5, 1.0, 2.0, 4.0]:
        c = rappor_curve(e)
        right.plot(alpha, c.rdp(alpha), label=f"RDP ε̂(α), ε={e}")
        right.plot(alpha, c.zcdp_rho() * alpha, ls=":", color=right.lines[-1].get_color())
    right.set(xscale="log", yscale="log", xlabel="α", ylabel="ε̂(α)", title="RAPPOR: RDP curve (solid), ρα (dotted)")
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure_composition(epsilon: float = 0.5, delta: float = 1e-6, max_k: int = 1000) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    family = rappor_curve(epsilon)
    ks = np.unique(np.logspace(0, math.log10(max_k), 30).astype(int))
    rows: dict[str, list[float]] = {m: [] for m in ["simple", "advanced", "zcdp ε²/2", "zcdp tight", "rdp", "pld"]}
    for k in ks:
        k = int(k)
        rows["simple"].append(simple(family, k).epsilon)
        rows["advanced"].append(advanced(family, k, delta).epsilon)
        rows["zcdp ε²/2"].append(zcdp_to_dp(k * epsilon**2 / 2, delta))
        rows["zcdp tight"].append(zcdp_to_dp(k * family.zcdp_rho(), delta))
        rows["rdp"].append(rdp_to_dp(family, k, delta).epsilon)
        rows["pld"].append(ExactPLD(family, k).epsilon(delta).epsilon)
    for name, ys in rows.items():
        ax.plot(ks, ys, label=name, lw=2.5 if name == "pld" else 1.2)
    ax.set(xscale="log", yscale="log", xlabel="compositions k", ylabel=f"ε at δ={delta:g}",
           title=f"RAPPOR (ε={epsilon}) composed k times")
    ax.legend()
    fig.tight_layout()
    return fig


def figure_mae(n: int = 10_000, ks: tuple[int, ...] = (1, 4, 16)) -> plt.Figure:
    """Per-bucket E|error| of the debiased count, √(2/π)·σ, for k-RAPPOR and the Gaussian mechanism.

    k-RAPPOR: σ² = n·q(1−q)/(1−2q)², q = 1/(1+e^{ε/2k}). Gaussian: each user adds N(0, k/ρ) per
    coordinate (ℓ2 sensitivity √(2k), ρ = Δ²/(2σ²)), at the ρ of k-RAPPOR; σ² = n·k/ρ.
    """
    fig, ax = plt.subplots(figsize=(7, 4.5))
    eps = np.linspace(0.25, 10, 60)
    for k in ks:
        q = 1 / (1 + np.exp(eps / (2 * k)))
        mae_rappor = np.sqrt(2 / np.pi * n * q * (1 - q) / (1 - 2 * q) ** 2)
        rho = np.array([rappor_curve(float(e), k=k).zcdp_rho() for e in eps])
        mae_gauss = np.sqrt(2 / np.pi * n * k / rho)
        line = ax.plot(eps, mae_rappor, label=f"k-RAPPOR, k={k}")[0]
        ax.plot(eps, mae_gauss, ls="--", color=line.get_color(), label=f"Gaussian (same ρ), k={k}")
    ax.set(yscale="log", xlabel="ε", ylabel=f"mean absolute error per bucket (n={n})",
           title="k-RAPPOR vs local Gaussian mechanism at equal zCDP ρ")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def write_figures(out: str | pathlib.Path) -> list[pathlib.Path]:
    """Write the three figures as PNG and SVG into ``out`` (created if missing); returns the paths."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in [("rappor-zcdp", figure_zcdp), ("rappor-zcdp-composition", figure_composition),
                       ("rappor-mae", figure_mae)]:
        fig = make()
        for ext in ("png", "svg"):
            path = out / f"{name}.{ext}"
            fig.savefig(path, dpi=120)
            written.append(path)
        plt.close(fig)
    return written
