"""Plotting helpers (OQuPy's ``oqupy.helpers``); runs on the host.

matplotlib is an optional dependency (the ``plot`` extra of each package): it is imported when a function
draws, never when the package is imported.
"""

from typing import Any, Optional

import numpy as np

from oqupy import config
from oqupy._correlations_base import BaseCorrelations
from oqupy._tempo_parameters import TempoParameters

__runs_on__ = "host"

__all__ = ["plot_correlations_with_parameters"]

_POINTS_PER_STEP = 3
"""Samples per time step on the drawn curve (the TEMPO samples are every third)."""


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError(
            "oqupy.helpers needs matplotlib: install the 'plot' extra (e.g. pip install 'oqupy-numpy[plot]')."
        ) from err
    return plt


def _correlation(correlations: BaseCorrelations, taus: np.ndarray) -> np.ndarray:
    return np.array([complex(correlations.correlation(float(tau))) for tau in taus], dtype=config.NpDtype)


def plot_correlations_with_parameters(
    correlations: BaseCorrelations, parameters: TempoParameters, ax: Optional[Any] = None
) -> Any:
    r"""Draw :math:`C(\tau)` with the samples that TEMPO takes of it for the given parameters.

    The real (C0) and imaginary (C1) parts are drawn on a grid three times finer than ``parameters.dt``, with
    markers at the multiples of ``dt`` up to the memory cut-off ``dkmax * dt``, and continued for half as long
    again beyond the last time TEMPO accounts for.  Correlations folded in by ``add_correlation_time`` are shaded
    between the cut-off (dashed line) and the end of the added time (dotted line); an infinite added time is
    marked by a red dashed line and shading of the continuation.

    Parameters
    ----------
    correlations: BaseCorrelations
        The bath correlations.
    parameters: TempoParameters
        The parameters whose time grid is drawn; they need a memory cut-off (``dkmax``).
    ax: matplotlib.axes.Axes
        The axes to draw into; None: a new figure with labelled axes.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn into.
    """
    assert isinstance(correlations, BaseCorrelations), (
        "Argument 'correlations' must be a BaseCorrelations object."
    )
    assert isinstance(parameters, TempoParameters), "Argument 'parameters' must be a TempoParameters object."
    if parameters.dkmax is None:
        raise ValueError("The parameters have no memory cut-off (dkmax): there is no sampling grid to draw.")
    dt, dkmax = parameters.dt, parameters.dkmax
    added = parameters.add_correlation_time
    infinite = added is not None and np.isinf(added)
    extra_time = 0.0 if added is None or infinite else float(added)

    memory = dt / _POINTS_PER_STEP * np.arange(_POINTS_PER_STEP * dkmax + 1)
    samples = memory[::_POINTS_PER_STEP]
    added_taus = np.append(dt * np.arange(dkmax, dkmax + int(extra_time / dt)), dt * dkmax + extra_time)
    last = added_taus[-1]
    continuation = np.linspace(last, 1.5 * last, 10)
    c_memory = _correlation(correlations, memory)
    c_samples = c_memory[::_POINTS_PER_STEP]
    c_continuation = _correlation(correlations, continuation)

    if ax is None:
        _, ax = _pyplot().subplots()
        ax.set_xlabel(r"$\tau$")
        ax.set_ylabel(r"$C(\tau)$")
    for part, color, marker, label in ((np.real, "C0", "d", "real"), (np.imag, "C1", "o", "imag")):
        ax.plot(memory, part(c_memory), color=color, linestyle="-", label=label)
        ax.scatter(samples, part(c_samples), marker=marker, color=color)
        ax.plot(continuation, part(c_continuation), color=color, linestyle="-")
    for part, color in ((np.real, "C0"), (np.imag, "C1")):
        if infinite:
            ax.fill_between(continuation, part(c_continuation), 0.0, color=color, alpha=0.3)
        elif extra_time > 0.0:
            c_added = _correlation(correlations, added_taus)
            ax.plot(added_taus, part(c_added), color=color, linestyle="-")
            ax.fill_between(added_taus, part(c_added), 0.0, color=color, alpha=0.3)
    if infinite:
        ax.axvline(added_taus[0], color="r", linestyle="dashed")
    elif extra_time > 0.0:
        ax.axvline(added_taus[0], color="k", linestyle="dashed")
        ax.axvline(added_taus[-1], color="k", linestyle="dotted")
    ax.spines["bottom"].set_position("zero")
    ax.spines["right"].set_color("none")
    ax.spines["top"].set_color("none")
    ax.legend()
    return ax
