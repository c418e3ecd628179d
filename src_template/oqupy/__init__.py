"""Non-Markovian open quantum systems: TEMPO, PT-TEMPO and process tensors.

Time-evolving matrix product operators (TEMPO) and process tensors for a quantum system coupled to a bosonic
bath, following the public API of OQuPy 0.5. Methods: A. Strathearn et al., Nat. Commun. 9, 3322 (2018);
M. R. Jorgensen and F. A. Pollock, Phys. Rev. Lett. 123, 240602 (2019); G. E. Fux et al., Phys. Rev. Lett.
126, 200401 (2021).

Generated from one template as ``oqupy_numpy`` (NumPy/SciPy) and ``oqupy_jax`` (JAX; importing it switches
JAX to 64-bit mode for the whole process).
"""

from oqupy._codegen import BACKEND

if BACKEND == "jax":
    import jax

    jax.config.update("jax_enable_x64", True)  # before any array exists: every array is float64/complex128

__runs_on__ = "device"  # only the package is renamed and the backend block cut: nothing here to translate

__version__ = "0.1.0"

__all__ = [
    "AugmentedMPS",
    "Bath",
    "ChainControl",
    "Control",
    "CustomCorrelations",
    "CustomSD",
    "Dynamics",
    "FileProcessTensor",
    "GibbsParameters",
    "GibbsTempo",
    "MeanFieldDynamics",
    "MeanFieldSystem",
    "MeanFieldTempo",
    "ParameterizedSystem",
    "PowerLawSD",
    "PtTebd",
    "PtTebdParameters",
    "PtTempo",
    "SimpleProcessTensor",
    "System",
    "SystemChain",
    "Tempo",
    "TempoParameters",
    "TimeDependentSystem",
    "TimeDependentSystemWithField",
    "TrivialProcessTensor",
    "TtiProcessTensor",
    "TtiPtTempo",
    "TwoTimeBathCorrelations",
    "base_api",
    "bath",
    "bath_correlations",
    "bath_dynamics",
    "compute_correlations",
    "compute_correlations_nt",
    "compute_dynamics",
    "compute_dynamics_batch",
    "compute_dynamics_with_field",
    "compute_gradient_and_dynamics",
    "compute_spectrum",
    "compute_stationary_correlations",
    "compute_stationary_multitime_correlations",
    "compute_steady_state",
    "config",
    "control",
    "dynamics",
    "gibbs_tempo_compute",
    "gradient",
    "guess_tempo_parameters",
    "helpers",
    "import_process_tensor",
    "mps_mpo",
    "operators",
    "process_tensor",
    "pt_tebd",
    "pt_tempo",
    "pt_tempo_compute",
    "pt_tempo_sweep",
    "shard_batch",
    "state_gradient",
    "stationary",
    "steady_state",
    "sweeps",
    "system",
    "system_dynamics",
    "tempo",
    "tempo_compute",
    "tti_pt_tempo",
    "tti_pt_tempo_compute",
    "util",
]

from oqupy import (
    base_api,
    bath,
    bath_correlations,
    bath_dynamics,
    config,
    control,
    dynamics,
    gradient,
    helpers,
    mps_mpo,
    operators,
    process_tensor,
    pt_tebd,
    pt_tempo,
    stationary,
    steady_state,
    sweeps,
    system,
    system_dynamics,
    tempo,
    tti_pt_tempo,
    util,
)
from oqupy.bath import Bath
from oqupy.bath_correlations import CustomCorrelations, CustomSD, PowerLawSD
from oqupy.bath_dynamics import TwoTimeBathCorrelations
from oqupy.control import ChainControl, Control
from oqupy.dynamics import Dynamics, MeanFieldDynamics
from oqupy.gradient import compute_gradient_and_dynamics, state_gradient
from oqupy.mps_mpo import AugmentedMPS
from oqupy.process_tensor import (
    FileProcessTensor,
    SimpleProcessTensor,
    TrivialProcessTensor,
    TtiProcessTensor,
    import_process_tensor,
)
from oqupy.pt_tebd import PtTebd, PtTebdParameters
from oqupy.pt_tempo import PtTempo, pt_tempo_compute
from oqupy.stationary import (
    compute_spectrum,
    compute_stationary_correlations,
    compute_stationary_multitime_correlations,
)
from oqupy.steady_state import compute_steady_state
from oqupy.sweeps import pt_tempo_sweep
from oqupy.system import (
    MeanFieldSystem,
    ParameterizedSystem,
    System,
    SystemChain,
    TimeDependentSystem,
    TimeDependentSystemWithField,
)
from oqupy.system_dynamics import (
    compute_correlations,
    compute_correlations_nt,
    compute_dynamics,
    compute_dynamics_batch,
    compute_dynamics_with_field,
    shard_batch,
)
from oqupy.tempo import (
    GibbsParameters,
    GibbsTempo,
    MeanFieldTempo,
    Tempo,
    TempoParameters,
    gibbs_tempo_compute,
    guess_tempo_parameters,
    tempo_compute,
)
from oqupy.tti_pt_tempo import TtiPtTempo, tti_pt_tempo_compute
