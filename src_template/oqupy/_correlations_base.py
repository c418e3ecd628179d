"""The abstract interface of environment auto-correlations, with TEMPO's generic helpers; runs on the host.

:class:`BaseCorrelations` is re-exported by :mod:`oqupy.bath_correlations`, which states the physics
conventions and holds the concrete correlations (``CustomCorrelations``, ``CustomSD``, ``PowerLawSD``).
Everything here is NumPy in every generated package.
"""

from typing import Optional

import numpy as np

from oqupy._quadrature import ArrayLike, check_grid_args, check_tail_time
from oqupy.base_api import BaseAPIClass
from oqupy.config import INTEGRATE_EPSREL, SUBDIV_LIMIT, NpDtype

__runs_on__ = "host"


class BaseCorrelations(BaseAPIClass):
    """Base class of environment auto-correlations (abstract; conventions in :mod:`oqupy.bath_correlations`).

    Subclasses implement ``correlation`` and ``correlation_2d_integral``; the helpers
    ``influence_coefficients`` and ``tail_coefficient`` build on them.

    Parameters
    ----------
    name: str
        An optional name for the correlations.
    description: str
        An optional description of the correlations.
    """

    def correlation(
        self,
        tau: ArrayLike,
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
    ) -> ArrayLike:
        r"""Auto-correlation function :math:`C(\tau) = \langle F(t) F(t-\tau) \rangle`.

        Parameters
        ----------
        tau: float or np.ndarray
            Time difference(s).
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions of the integration.

        Returns
        -------
        correlation: complex or np.ndarray
            :math:`C(\tau)`.
        """
        raise NotImplementedError(f"{type(self).__name__} has no correlation implementation.")

    def correlation_2d_integral(
        self,
        delta: float,
        time_1: float,
        time_2: Optional[float] = None,
        shape: Optional[str] = "square",
        epsrel: Optional[float] = INTEGRATE_EPSREL,
        subdiv_limit: Optional[int] = SUBDIV_LIMIT,
    ) -> complex:
        r"""2-D integral of the correlation function over a region of ``(t', t'')``.

        - ``'square'``: :math:`\int_{t_1}^{t_1+\Delta} \mathrm{d}t' \int_0^\Delta \mathrm{d}t'' C(t'-t'')`
        - ``'upper-triangle'``: :math:`\int_{t_1}^{t_1+\Delta} \mathrm{d}t' \int_0^{t'-t_1} \mathrm{d}t'' C(t'-t'')`
        - ``'rectangle'``: :math:`\int_{t_1}^{t_2} \mathrm{d}t' \int_0^\Delta \mathrm{d}t'' C(t'-t'')`

        Parameters
        ----------
        delta: float
            Length :math:`\Delta` of the integration intervals.
        time_1: float
            Lower bound :math:`t_1` of the :math:`t'` interval.
        time_2: float
            Upper bound :math:`t_2` of the :math:`t'` interval (``'rectangle'`` only).
        shape: str
            ``'square'`` (default), ``'upper-triangle'`` or ``'rectangle'``.
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions of the integration.

        Returns
        -------
        integral: complex
            The value of the 2-D integral.
        """
        raise NotImplementedError(f"{type(self).__name__} has no correlation_2d_integral implementation.")

    def influence_coefficients(
        self,
        dt: float,
        dkmax: int,
        epsrel: float = INTEGRATE_EPSREL,
        subdiv_limit: int = SUBDIV_LIMIT,
        matsubara: bool = False,
    ) -> np.ndarray:
        r"""The 2-D correlation integrals of all TEMPO step distances ``0 ... dkmax``.

        ``eta[0]`` is the upper-triangle integral with ``time_1 = 0``, ``delta = dt`` and ``eta[k]``
        (``k >= 1``) the square integral with ``time_1 = k dt``, ``delta = dt`` (``docs/algorithms.md``, "Bath correlations and the influence functional").
        This generic version calls ``correlation_2d_integral`` once per ``k``; ``CustomSD`` computes
        all of them from one vector of :math:`\eta` values.

        Parameters
        ----------
        dt: float
            Time step (> 0).
        dkmax: int
            Largest step distance (>= 0).
        epsrel: float
            Relative error tolerance of the integration (default ``INTEGRATE_EPSREL``).
        subdiv_limit: int
            Maximal number of interval subdivisions (default ``SUBDIV_LIMIT``).
        matsubara: bool
            Imaginary-time coefficients (only where the subclass supports them).

        Returns
        -------
        eta: np.ndarray
            complex128 array of length ``dkmax + 1``.
        """
        grid = check_grid_args(dt, dkmax)
        kwargs = self._matsubara_kwargs(matsubara)
        eta = np.empty(grid.dkmax + 1, dtype=NpDtype)
        eta[0] = self.correlation_2d_integral(
            delta=grid.dt,
            time_1=0.0,
            shape="upper-triangle",
            epsrel=epsrel,
            subdiv_limit=subdiv_limit,
            **kwargs,
        )
        for k in range(1, grid.dkmax + 1):
            eta[k] = self.correlation_2d_integral(
                delta=grid.dt,
                time_1=float(k) * grid.dt,
                shape="square",
                epsrel=epsrel,
                subdiv_limit=subdiv_limit,
                **kwargs,
            )
        return eta

    def tail_coefficient(
        self,
        dt: float,
        dkmax: int,
        tail_time: float,
        epsrel: float = INTEGRATE_EPSREL,
        subdiv_limit: int = SUBDIV_LIMIT,
        matsubara: bool = False,
    ) -> complex:
        r"""Rectangle integral of the memory tail beyond ``dkmax`` steps.

        Equal to ``correlation_2d_integral(delta=dt, time_1=dkmax*dt, time_2=dkmax*dt + tail_time,
        shape='rectangle')``.  ``tail_time = 0`` gives 0.

        Parameters
        ----------
        dt: float
            Time step (> 0).
        dkmax: int
            Memory length in steps (>= 0).
        tail_time: float
            Length of the tail (>= 0; ``np.inf`` where the subclass supports it).
        epsrel: float
            Relative error tolerance of the integration.
        subdiv_limit: int
            Maximal number of interval subdivisions.
        matsubara: bool
            Imaginary-time coefficient (only where the subclass supports it).

        Returns
        -------
        integral: complex
            The rectangle integral.
        """
        grid = check_grid_args(dt, dkmax)
        tmp_tail = check_tail_time(tail_time)
        kwargs = self._matsubara_kwargs(matsubara)
        time_1 = float(grid.dkmax) * grid.dt
        return complex(
            self.correlation_2d_integral(
                delta=grid.dt,
                time_1=time_1,
                time_2=time_1 + tmp_tail,
                shape="rectangle",
                epsrel=epsrel,
                subdiv_limit=subdiv_limit,
                **kwargs,
            )
        )

    def _matsubara_kwargs(self, matsubara: bool) -> dict:
        """Keyword arguments passing ``matsubara`` on (refused where unsupported)."""
        if not matsubara:
            return {}
        raise NotImplementedError(f"{type(self).__name__} has no Matsubara (imaginary-time) correlations.")
