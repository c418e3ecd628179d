r"""GibbsTEMPO: the mean-force Gibbs state of a system coupled to a Gaussian bosonic bath, by imaginary-time TEMPO.

Physics convention (stated once; see ``docs/gibbs_tempo.md``).  With ``H_total = H_S + H_B + S (x) B`` at
temperature :math:`T = 1/\beta`, the mean-force Gibbs state is

.. math::

    \rho = \frac{\mathrm{Tr}_B\, e^{-\beta H_\mathrm{total}}}{\mathrm{Tr}\, e^{-\beta H_\mathrm{total}}} .

The imaginary-time interval :math:`[0, \beta]` is cut into ``n_steps`` steps of :math:`\Delta\beta = \beta /
n_\mathrm{steps}`; each step is ``P . influence . P`` with the half-step propagator :math:`P = e^{-H_S
\Delta\beta/2}` (symmetric Trotter splitting), and the path of the coupling eigenvalue :math:`s` is weighted by

.. math::

    \exp\Big(-\sum_{n \ge m} c_{n-m}\, s_n s_m\Big) , \qquad
    c_k = \texttt{influence\_coefficients}(\Delta\beta, \cdot, \texttt{matsubara=True})[k] ,

the imaginary-time (Matsubara) 2-D integrals of the bath correlation (upper triangle for ``k = 0``, squares
otherwise; they are minus the double integrals of :math:`\langle B(\tau) B(0) \rangle`, see
:mod:`oqupy.bath_correlations`).  The network starts from the identity and computes the unnormalised
operator :math:`\mathrm{Tr}_B e^{-\beta H_\mathrm{total}} / Z_B`; :meth:`GibbsTempo.get_state` normalises it.

The path index lives on the Hilbert space: the operator ``X[a, b]`` is carried as the vector ``vec(X)``
(row-major, dimension ``d**2``) whose path index ``(j, b)`` has the influence of ``s_j`` alone, so the whole
TEMPO step of :func:`oqupy._tempo_step.step` (host code in both packages: NumPy and LAPACK at exact bonds) runs
unchanged, with the step's propagators ``P (x) 1`` and the degeneracy classes of the values ``s_j``.

Beyond OQuPy 0.5: a non-diagonal coupling operator ``S = U diag(s) U^dagger`` is supported (upstream raises
``NotImplementedError``): the computation runs in the coupling eigenbasis (``U^dagger H_S U``) and every state
is rotated back, ``U X U^dagger``.
"""

import numbers
from typing import List, Optional, Tuple

import numpy as np

from oqupy import config
from oqupy._tempo_step import TempoOperators, step
from oqupy._validation import check_epsrel
from oqupy.base_api import BaseAPIClass
from oqupy.bath import Bath
from oqupy.bath_correlations import CustomSD
from oqupy.dynamics import Dynamics
from oqupy.system import System
from oqupy.util import get_progress

__runs_on__ = "host"

__all__ = ["GibbsParameters", "GibbsTempo", "MarkovianTermsError", "gibbs_influences", "gibbs_tempo_compute"]


class MarkovianTermsError(UserWarning, ValueError):
    """Raised (not warned) by :class:`GibbsTempo` for a system with Lindblad terms, which have no Gibbs state.

    OQuPy 0.5 raises a bare ``Warning``; deriving from ``UserWarning`` keeps ``except Warning`` working, and from
    ``ValueError`` says what it is: an argument the computation refuses.
    """


class GibbsParameters(BaseAPIClass):
    """Computational parameters of a GibbsTEMPO run; read-only.

    Parameters
    ----------
    n_steps: int
        Number of imaginary-time steps from 0 to ``beta`` (> 1).
    epsrel: float
        Relative SVD truncation tolerance in (0, 1), the criterion of :func:`oqupy._mps.truncation_rank`.
    """

    def __init__(
        self, n_steps: int, epsrel: float, name: Optional[str] = None, description: Optional[str] = None
    ) -> None:
        if not isinstance(n_steps, numbers.Integral) or isinstance(n_steps, bool):
            raise TypeError("Argument 'n_steps' must be int.")
        if not isinstance(epsrel, numbers.Real) or isinstance(epsrel, bool):
            raise TypeError("Argument 'epsrel' must be float.")
        if n_steps <= 1:
            raise ValueError("Argument 'n_steps' must be greater than 1.")
        self._n_steps: int = int(n_steps)
        self._epsrel: float = check_epsrel(epsrel)
        super().__init__(name, description)

    def _str_items(self) -> list:
        return [("n_steps", self._n_steps), ("epsrel", self._epsrel)]

    @property
    def n_steps(self) -> int:
        """Number of imaginary-time steps."""
        return self._n_steps

    @property
    def epsrel(self) -> float:
        """Relative SVD truncation tolerance."""
        return self._epsrel

    def time_step_length(self, temperature: float) -> float:
        """The imaginary-time step ``1 / (temperature * n_steps)``."""
        return 1.0 / (temperature * self._n_steps)


def gibbs_influences(
    values: np.ndarray, coefficients: np.ndarray, dimension: int
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The influence tensors of a GibbsTEMPO run on the vectorised operator (path index ``(j, b)``, row-major).

    Parameters
    ----------
    values: np.ndarray
        The coupling eigenvalues ``s_j`` (real, length ``d``).
    coefficients: np.ndarray
        The Matsubara coefficients ``c_0 ... c_K`` (real parts are used).
    dimension: int
        ``d``.

    Returns
    -------
    lines: np.ndarray
        ``lines[k - 1][n, w] = exp(-c_k u_n u_w)`` for ``k = 1 ... K`` over the distinct values ``u``.
    classes: np.ndarray
        Class projectors ``classes[c, (j, b)] = [s_j == u_c]`` (north and west classes coincide).
    self_influence: np.ndarray
        ``exp(-c_0 s_j**2)`` per path index ``(j, b)``.
    """
    values = np.asarray(values, dtype=np.float64)
    distinct, inverse = np.unique(values, return_inverse=True)
    path_class = np.repeat(inverse.reshape(-1), dimension)
    classes = (path_class[None, :] == np.arange(distinct.shape[0])[:, None]).astype(config.NpDtype)
    c = np.real(np.asarray(coefficients))
    lines = np.exp(-c[1:, None, None] * np.outer(distinct, distinct)[None, :, :]).astype(config.NpDtype)
    self_influence = np.repeat(np.exp(-c[0] * values**2), dimension).astype(config.NpDtype)
    return lines, classes, self_influence


class GibbsTempo(BaseAPIClass):
    """Imaginary-time TEMPO for the mean-force Gibbs state (module docstring for the conventions).

    Parameters
    ----------
    system: System
        The system; its Hamiltonian only (Lindblad terms raise :class:`MarkovianTermsError`).
    bath: Bath
        Coupling operator (any Hermitian one: non-diagonal couplings are rotated to their eigenbasis) and
        ``CustomSD`` (or ``PowerLawSD``) correlations at a temperature > 0.
    parameters: GibbsParameters
        Number of steps and SVD tolerance.
    backend_config: dict
        Accepted for OQuPy compatibility; unused.
    """

    def __init__(
        self,
        system: System,
        bath: Bath,
        parameters: GibbsParameters,
        backend_config: Optional[dict] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
    ) -> None:
        super().__init__(name, description)
        if not isinstance(system, System):
            raise TypeError("Argument 'system' must be an oqupy.System.")
        if len(system.gammas) > 0:
            raise MarkovianTermsError("Markovian decay ignored for GibbsTempo")
        if not isinstance(bath, Bath):
            raise TypeError("Argument 'bath' must be an oqupy.Bath.")
        if not isinstance(bath.correlations, CustomSD):
            raise TypeError("Argument 'bath.correlations' must be a CustomSD (or PowerLawSD).")
        if not isinstance(parameters, GibbsParameters):
            raise TypeError("Argument 'parameters' must be an oqupy.GibbsParameters.")
        if bath.dimension != system.dimension:
            raise ValueError(
                f"Hilbert space dimensions of system ({system.dimension}) and bath ({bath.dimension}) differ."
            )
        temperature = float(bath.correlations.temperature)
        if not temperature > 0.0:
            raise ValueError("GibbsTempo needs a bath temperature > 0 (Matsubara correlations).")
        self._system = system
        self._bath = bath
        self._parameters = parameters
        self._backend_config = backend_config
        self._temperature = temperature
        self._dbeta = parameters.time_step_length(temperature)
        self._dynamics: Optional[Dynamics] = None
        self._max_bond = 1

    def _str_items(self) -> list:
        return [("temperature", self._temperature), ("n_steps", self._parameters.n_steps)]

    @property
    def dimension(self) -> int:
        """Hilbert space dimension of the system."""
        return self._system.dimension

    @property
    def temperature(self) -> float:
        """Temperature of the bath."""
        return self._temperature

    @property
    def max_bond_dimension(self) -> int:
        """Largest bond dimension kept (1 before :meth:`compute`)."""
        return self._max_bond

    def get_dynamics(self) -> Optional[Dynamics]:
        """The imaginary-time history ``X(n dbeta)``, ``n = 0 ... n_steps`` (unnormalised; None before compute).

        Only the last operator, at ``beta``, is a Gibbs state: the earlier ones are partial products with the
        bath correlations of temperature ``T``, not states at other temperatures.
        """
        return self._dynamics

    def get_state(self) -> np.ndarray:
        """The mean-force Gibbs state: the operator at ``beta`` normalised to unit trace (a NumPy array)."""
        if self._dynamics is None:
            raise ValueError("GibbsTempo.get_state(): call compute() first.")
        state = np.asarray(self._dynamics.states[-1])
        return state / np.trace(state)

    def compute(self, progress_type: Optional[str] = None) -> Dynamics:
        """Run all ``n_steps`` imaginary-time steps (once; later calls return the same history)."""
        if self._dynamics is not None:
            return self._dynamics
        dim, n_steps = self.dimension, self._parameters.n_steps
        values = np.real(np.diagonal(self._bath.coupling_operator))
        unitary = np.asarray(self._bath.unitary_transform, dtype=config.NpDtype)
        rotate = not np.array_equal(unitary, np.identity(dim, dtype=config.NpDtype))
        coefficients = self._bath.correlations.influence_coefficients(
            self._dbeta, n_steps - 1, matsubara=True
        )
        lines, classes, self_influence = gibbs_influences(values, coefficients, dim)
        half_step = self._system.get_unitary_propagators(-1j * self._dbeta)(0)[0]  # expm(-H dbeta / 2)
        half_step = unitary.conj().T @ half_step @ unitary
        step_operator = np.kron(half_step, np.identity(dim, dtype=config.NpDtype))[None]
        operators = TempoOperators(lines, classes, classes, self_influence, step_operator, step_operator)
        identity = np.identity(dim, dtype=config.NpDtype)
        past: List[np.ndarray] = []
        current = identity.reshape(1, dim * dim)
        dynamics = Dynamics(description=f"computed from '{self.name}' tempo")
        dynamics.add(0.0, identity)
        with get_progress(progress_type)(n_steps, title="--> GibbsTEMPO computation") as progress:
            for index in range(n_steps):
                # full memory: a memory of n_steps is never full, so the oldest line (distance n_steps) is unused
                past, current, state, rank = step(
                    past, current, 0, lines[-1], operators, self._parameters.epsrel, n_steps
                )
                self._max_bond = max(self._max_bond, rank)
                if rotate:
                    state = unitary @ state @ unitary.conj().T
                dynamics.add((index + 1) / n_steps / self._temperature, state)  # the last time is 1/T exactly
                progress.update(index + 1)
        self._dynamics = dynamics
        return dynamics


def gibbs_tempo_compute(
    system: System,
    bath: Bath,
    parameters: GibbsParameters,
    backend_config: Optional[dict] = None,
    progress_type: Optional[str] = None,
    name: Optional[str] = None,
    description: Optional[str] = None,
) -> np.ndarray:
    """Shortcut: create a :class:`GibbsTempo`, compute, and return the normalised mean-force Gibbs state."""
    gibbs_tempo = GibbsTempo(system, bath, parameters, backend_config, name, description)
    gibbs_tempo.compute(progress_type=progress_type)
    return gibbs_tempo.get_state()
