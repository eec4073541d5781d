"""The public stand-in: built from public facts only, never from the rows."""

import numpy as np
import pytest

from dpci import ReleaseSpec
from dpci.data import load_adult
from dpci.data.standin import PublicFacts, stand_in, stand_in_loader
from dpci.experiments.bootstrap import _last
from dpci.experiments.sweeps import ALL, iter_grid_sweep
from dpci.losses import LogisticLoss


class SealedDataset:
    """A dataset whose public facts can be read and whose rows cannot."""

    n = 3_000
    feature_names = ["age", "hours", "const"]
    name = "sealed"

    @property
    def X(self):
        raise AssertionError("the stand-in read the private rows (X)")

    @property
    def y(self):
        raise AssertionError("the stand-in read the private labels (y)")

    @property
    def frame(self):
        raise AssertionError("the stand-in read the raw frame")


def test_a_sweep_on_the_stand_in_never_reads_the_private_rows():
    facts = PublicFacts.of(SealedDataset())
    assert facts == PublicFacts(3_000, ("age", "hours"), "sealed")
    frame = _last(
        iter_grid_sweep(
            stand_in_loader(facts),
            ReleaseSpec(loss=LogisticLoss(), n_samples=300),
            ns=[1_000, 3_000],
            ds=[2],
            n_replicates=16,
            methods=[("output", "pure")],
        )
    ).frame
    overall = frame[frame["feature"] == ALL]
    assert sorted(overall["n"]) == [1_000, 3_000]
    assert np.isfinite(overall["length"]).all()


def test_the_stand_in_has_the_public_shape_and_the_unit_ball():
    facts = PublicFacts(5_000, ("a", "b", "c"), "test")
    X, y, names = stand_in(facts, d=2, random_state=1)
    assert X.shape == (5_000, 3) and names == ["a", "b", "const"]
    assert np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-12)
    assert set(np.unique(y)) == {-1.0, 1.0}
    X2, y2, _ = stand_in(facts, d=2, random_state=1)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)  # a fixed public seed: the same stand-in


def test_the_stand_in_of_adult_uses_its_public_facts_only():
    adult = load_adult(d=4)
    facts = PublicFacts.of(adult)
    assert facts.n == 30_162 and facts.d == 4 and "const" not in facts.feature_names
    X, _, names = stand_in(facts)
    assert not np.allclose(X[:, :4], adult.X[:, :4])  # not the rows
    assert names == list(adult.feature_names)
    assert "no value of any row" in facts.describe()


@pytest.mark.parametrize("d", [0, 5])
def test_asking_for_more_features_than_the_facts_know_is_refused(d):
    with pytest.raises(ValueError, match="has 3 features"):
        stand_in(PublicFacts(100, ("a", "b", "c")), d=d)


def test_a_guess_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="d \\+ 1 = 3 coefficients"):
        stand_in(PublicFacts(100, ("a", "b")), guess=[1.0, 2.0])
