"""Influence coefficients at long lags: integrated directly, against differences of eta.

    Canonical Ohmic bath: J(w) = 2 alpha w exp(-w / w_c), alpha = 0.25, w_c = 5, T = 0, dt = 0.05 (closed form known);
    OQuPy issue #162's bath: J(w) = 2 alpha w^3 w_c^-2 exp(-(w / w_c)^2), alpha = 0.0484, w_c = 2.2, T = 0.5236,
    dt = 0.01, 500 lags (memory 5.0).

Run from the repository root, with either generated package installed:

    python examples/influence_coefficients.py                 # oqupy_numpy
    python examples/influence_coefficients.py --output /tmp/coefficients.png

TEMPO and PT-TEMPO take the influence of two steps k apart from the square integral eta_k of the bath correlation
function.  Written as the second difference eta((k+1)dt) - 2 eta(k dt) + eta((k-1)dt) of the twice-integrated
correlation, it cancels large, growing numbers and keeps their quadrature errors, which jump from lag to lag.
``influence_coefficients`` integrates each eta_k directly as one oscillatory integral.  The figure shows (left) the
error of both against the closed form of the Ohmic bath, (middle) the coefficients of issue #162's bath, and
(right) the singular values of its memory cross-kernel eta[l - m] (m < 75 <= l): a plateau of noise, which at
epsrel = 1e-9 the process tensor has to carry as bond dimension.
"""

import argparse
import time
from pathlib import Path

import numpy as np

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("influence_coefficients.png")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("numpy", "jax"), default="numpy", help="generated package to use"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG file for the plot")
    parser.add_argument("--quick", action="store_true", help="fewer lags (a smoke run)")
    return parser.parse_args(argv)


def differences(correlations, dt: float, lags: int) -> np.ndarray:
    """eta_k for k = 1 ... lags as second differences of eta(k dt) (the former way)."""
    etas = np.asarray(correlations.eta_function(dt * np.arange(lags + 2)), dtype=complex)
    return etas[2:] - 2 * etas[1:-1] + etas[:-2]


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.backend == "jax":
        import oqupy_jax as oqupy
    else:
        import oqupy_numpy as oqupy
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ohmic_lags, hard_lags = (100, 150) if args.quick else (400, 500)
    alpha, cutoff, dt = 0.25, 5.0, 0.05
    ohmic = oqupy.PowerLawSD(alpha=alpha, zeta=1, cutoff=cutoff, cutoff_type="exponential", temperature=0.0)
    lags = np.arange(1, ohmic_lags + 1)
    exact = 2 * alpha * np.log1p((cutoff * dt) ** 2 / (1 + 1j * cutoff * dt * lags) ** 2)
    start = time.perf_counter()
    direct = np.asarray(ohmic.influence_coefficients(dt, ohmic_lags))[1:]
    seconds = time.perf_counter() - start
    old = differences(ohmic, dt, ohmic_lags)
    print(
        f"Ohmic bath, {ohmic_lags} lags: largest error / eta_1: direct {np.max(np.abs(direct - exact)) / abs(exact[0]):.1e}"
        f" ({seconds:.2f} s), differences {np.max(np.abs(old - exact)) / abs(exact[0]):.1e}"
    )

    hard = oqupy.PowerLawSD(
        alpha=0.01 * 2.2**2, zeta=3, cutoff=2.2, cutoff_type="gaussian", temperature=4 * 0.1309
    )
    hard_direct = np.asarray(hard.influence_coefficients(0.01, hard_lags))[1:]
    hard_old = differences(hard, 0.01, hard_lags)
    cut = min(75, hard_lags // 3)
    kernel = np.arange(cut, hard_lags)[None, :] - np.arange(cut)[:, None]

    def spectrum(values: np.ndarray) -> np.ndarray:
        full = np.concatenate([[0.0], values.imag])
        singular = np.linalg.svd(full[kernel], compute_uv=False)
        return singular / singular[0]

    figure, axes = plt.subplots(1, 3, figsize=(14, 4))
    axes[0].semilogy(lags, np.abs(old - exact) / abs(exact[0]), label="differences of η")
    axes[0].semilogy(lags, np.maximum(np.abs(direct - exact) / abs(exact[0]), 1e-17), label="direct")
    axes[0].set(xlabel="lag k", ylabel="|η_k − exact| / |η_1|", title="Ohmic bath, T = 0 (closed form)")
    hard_range = np.arange(1, hard_lags + 1)
    axes[1].semilogy(hard_range, np.abs(hard_old.imag), label="Im η_k, differences of η")
    axes[1].semilogy(hard_range, np.abs(hard_direct.imag), label="Im η_k, direct")
    axes[1].semilogy(hard_range, np.abs(hard_direct.real), label="Re η_k, direct", alpha=0.6)
    axes[1].set(xlabel="lag k", ylabel="|η_k|", title="OQuPy #162's bath, dt = 0.01")
    axes[2].semilogy(spectrum(hard_old)[:40], "o-", label="differences of η")
    axes[2].semilogy(spectrum(hard_direct)[:40], "s-", label="direct")
    axes[2].set(xlabel="index", ylabel="s_i / s_0", title=f"memory cross-kernel Im η[l − m], cut at {cut}")
    for axis in axes:
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(args.output, dpi=110)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
