"""The five-spin XYZ chain of OQuPy's PT-TEBD tutorial, against numbers OQuPy 0.5.0 printed for it.

The reference values were produced by running the tutorial's chain with the PyPI release ``oqupy==0.5.0``
(TensorNetwork backend): chain parameters eps = 1, (Jx, Jy, Jz) = (1.3, 0.7, 1.2) on s = sigma/2, dt = 0.2,
second-order Trotter, epsrel = 1e-6.  Only numbers are kept here.  Both implementations truncate at
epsrel = 1e-6, so agreement is expected at that level, not to round-off.

The chains run for one package (``one_package``: oqupy_numpy by default): oqupy_jax's PT-TEBD would compile its
kernels for every bond capacity the chain grows through (18 s of a CI run), and its agreement with oqupy_numpy on a
coupled chain with two environments, a bond capacity overflowed included, is checked to 1e-10 in
``tests/test_cross_package.py::test_pt_tebd_packages_agree``.
"""

import numpy as np
import pytest

# <s_z> = <sigma_z>/2 of sites 0..4 after 20 steps (t = 4), closed chain from |up, down, down, down, down>.
OQUPY_05_CLOSED_T4 = (
    -0.20411179224599824,
    -0.2794715655127583,
    -0.17993065688312432,
    -0.16536585619077965,
    -0.3269961482703471,
)
# <s_z> after 10 steps (t = 2), fully mixed chain, Ohmic bath on site 0 (process tensor to t = 2).
OQUPY_05_OPEN_T2 = (
    -0.09526352384058628,
    -0.026130470524189292,
    -0.004127014436141996,
    -0.00032841021340154763,
    -1.9550224518077863e-05,
)
# The four bond dimensions after each step, from the initial product state on.
OQUPY_05_OPEN_BONDS = (
    (1, 1, 1, 1),
    (5, 4, 4, 1),
    (16, 11, 7, 4),
    (28, 18, 7, 4),
    (39, 19, 11, 4),
    (47, 24, 14, 4),
    (52, 29, 16, 4),
    (50, 34, 16, 4),
    (36, 38, 16, 4),
    (12, 35, 16, 4),
    (4, 16, 16, 4),
)


def xyz_chain(oq):
    s = {axis: 0.5 * oq.operators.sigma(axis) for axis in "xyz"}
    chain = oq.SystemChain(hilbert_space_dimensions=[2] * 5)
    for site in range(5):
        chain.add_site_hamiltonian(site=site, hamiltonian=1.0 * s["z"])
    for site in range(4):
        for coupling, axis in zip((1.3, 0.7, 1.2), "xyz"):
            chain.add_nn_hamiltonian(site=site, hamiltonian_l=coupling * s[axis], hamiltonian_r=s[axis])
    return chain, s["z"]


def final_sz(oq, results, sz):
    values = []
    for site in range(5):
        times, expectation = results["dynamics"][site].expectations(sz, real=True)
        values.append(float(np.asarray(expectation)[-1]))
    return np.array(values), np.asarray(times)


@pytest.mark.one_package
def test_closed_chain_matches_oqupy_05(oq):
    chain, sz = xyz_chain(oq)
    up, down = oq.operators.spin_dm("z+"), oq.operators.spin_dm("z-")
    tebd = oq.PtTebd(
        initial_augmented_mps=oq.AugmentedMPS([up, down, down, down, down]),
        system_chain=chain,
        process_tensors=[None] * 5,
        parameters=oq.PtTebdParameters(dt=0.2, order=2, epsrel=1.0e-6),
        dynamics_sites=[0, 1, 2, 3, 4],
    )
    results = tebd.compute(20, progress_type="silent")
    # The tutorial prints these two key lists; OQuPy 0.5 gives them in this order.
    assert list(results.keys()) == ["time", "norm", "bond_dimensions", "dynamics", "pt_bond_dimensions"]
    assert list(results["dynamics"].keys()) == [0, 1, 2, 3, 4]
    values, times = final_sz(oq, results, sz)
    assert times[-1] == pytest.approx(4.0) and len(times) == 21
    np.testing.assert_allclose(values, OQUPY_05_CLOSED_T4, rtol=0, atol=1e-6)
    assert np.asarray(results["bond_dimensions"])[-1].tolist() == [4, 16, 16, 4]


@pytest.mark.one_package
def test_open_chain_matches_oqupy_05(oq):
    chain, sz = xyz_chain(oq)
    correlations = oq.PowerLawSD(alpha=0.32, zeta=1, cutoff=4.0, cutoff_type="exponential", temperature=1.6)
    bath = oq.Bath(0.5 * oq.operators.sigma("y"), correlations)
    pt = oq.pt_tempo_compute(
        bath=bath,
        start_time=0.0,
        end_time=2.0,
        parameters=oq.TempoParameters(dt=0.2, dkmax=40, epsrel=1.0e-5),
        progress_type="silent",
    )
    mixed = oq.operators.spin_dm("mixed")
    tebd = oq.PtTebd(
        initial_augmented_mps=oq.AugmentedMPS([mixed] * 5),
        system_chain=chain,
        process_tensors=[pt, None, None, None, None],
        parameters=oq.PtTebdParameters(dt=0.2, order=2, epsrel=1.0e-6),
        dynamics_sites=[0, 1, 2, 3, 4],
    )
    results = tebd.compute(10, progress_type="silent")
    values, times = final_sz(oq, results, sz)
    assert times[-1] == pytest.approx(2.0)
    # The process tensors differ at their truncation level (epsrel 1e-5; ours are renormalised, OQuPy also
    # uses epsrel for the eta integrals): measured 2.7e-6, against a signal of 0.095 on site 0.
    np.testing.assert_allclose(values, OQUPY_05_OPEN_T2, rtol=0, atol=5e-5)
    # Bond dimensions follow OQuPy's; a singular value at the truncation edge may move one by one.
    bonds = np.asarray(results["bond_dimensions"])
    assert bonds.shape == (11, 4)
    assert np.abs(bonds - np.array(OQUPY_05_OPEN_BONDS)).max() <= 1
