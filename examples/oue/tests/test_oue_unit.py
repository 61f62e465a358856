"""Ordinary unit tests of the example; `pytest` runs them next to vetdp's checks (ini option vetdp = true)."""

from fractions import Fraction

from oue_example import estimate_oue_counts, make_oue, oue_count_variance


def test_report_has_one_bit_per_value():
    report = make_oue(5, 1.0)(3)
    assert len(report) == 5 and all(isinstance(b, bool) for b in report)


def test_variance_of_an_absent_item_is_the_papers_formula():
    from oue_example.oue import oue_flip_probability

    q = Fraction(oue_flip_probability(1.0))
    assert oue_count_variance(10, 0, 1.0, exact=True) == 10 * q * (1 - q) / (Fraction(1, 2) - q) ** 2


def test_estimate_of_all_zero_reports_is_negative():
    assert all(c < 0 for c in estimate_oue_counts([(False, False), (False, False)], 1.0))
