"""Wrong variants of make_randomized_response (categorical)."""

import dataclasses

from vetdp.arith.expr import ONE, var
from vetdp.core.measurement import AtomDomain, DiscreteDistance, MaxDivergence, Measurement
from vetdp.impl.randomized_response import make_randomized_response
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below

prob, t = var("prob"), var("t", "int")


def _with_map(m: Measurement, epsilon: float) -> Measurement:
    return dataclasses.replace(m, privacy_map=lambda d_in: 0.0 if d_in == 0 else epsilon)


def missing_t_minus_1(categories, prob_value):
    """Defect: the map forgets the (t−1) factor: ln(p/(1−p))."""
    m = make_randomized_response(categories, prob_value)
    return _with_map(m, prob.inf_div(ONE.neg_inf_sub(prob)).inf_ln().to_float({"prob": prob_value}))


def map_rounded_down(categories, prob_value):
    """Defect: every step of ln(p(t−1)/(1−p)) rounded toward −inf."""
    m = make_randomized_response(categories, prob_value)
    low = prob.neg_inf_mul(t.neg_inf_sub(1)).neg_inf_div(ONE.inf_sub(prob)).neg_inf_ln()
    return _with_map(m, low.to_float({"prob": prob_value, "t": len(list(categories))}))


def _function(cats, p, outside_rule, lie_rule=None):
    index_of = {c: i for i, c in enumerate(cats)}

    def function(x):
        index = index_of.get(x)
        if index is None:
            return outside_rule(x)
        if lie_rule is not None:
            lie = lie_rule(index)
        else:
            sample = sample_uniform_int_below(len(cats) - 1)
            lie = cats[sample + (sample >= index)]
        return x if sample_bernoulli_float(p) else lie

    return function


def leaks_outside(categories, prob_value):
    """Defect: an input outside the categories is reported truthfully with probability p."""
    m = make_randomized_response(categories, prob_value)
    cats = list(categories)

    def outside(x):
        return x if sample_bernoulli_float(prob_value) else cats[sample_uniform_int_below(len(cats))]

    return dataclasses.replace(m, function=_function(cats, prob_value, outside))


def outside_not_uniform(categories, prob_value):
    """Defect: an input outside the categories always yields the first category."""
    m = make_randomized_response(categories, prob_value)
    cats = list(categories)
    return dataclasses.replace(m, function=_function(cats, prob_value, lambda x: cats[0]))


def lie_not_uniform(categories, prob_value):
    """Defect: the lie is always the next category, not a uniform other one."""
    m = make_randomized_response(categories, prob_value)
    cats = list(categories)
    return dataclasses.replace(m, function=_function(
        cats, prob_value, lambda x: cats[sample_uniform_int_below(len(cats))],
        lie_rule=lambda i: cats[(i + 1) % len(cats)]))


def lie_misses_the_last_category_for_odd_t_past_100(categories, prob_value):
    """Defect: for odd t in (100, 256) the lie is drawn from t − 2 categories, so the last is never a lie (an output
    of probability 0 on one input and not on another: infinite loss). The search draws t <= 64."""
    m = make_randomized_response(categories, prob_value)
    cats = list(categories)
    if not (100 < len(cats) < 256 and len(cats) % 2 == 1):
        return m

    def lie(index):
        sample = sample_uniform_int_below(len(cats) - 2)
        return cats[sample + (sample >= index)]

    return dataclasses.replace(m, function=_function(
        cats, prob_value, lambda x: cats[sample_uniform_int_below(len(cats))], lie_rule=lie))

def accepts_prob_below_one_over_t(categories, prob_value):
    """Defect: checks 1/t <= prob in float arithmetic, so 1/t rounded down passes."""
    cats = list(categories)
    if not (1 / len(cats) <= prob_value < 1):
        raise ValueError(f"prob={prob_value} must be in [1/t, 1)")
    epsilon = prob.inf_mul(t.inf_sub(1)).inf_div(ONE.neg_inf_sub(prob)).inf_ln().to_float(
        {"prob": prob_value, "t": len(cats)})
    domain = AtomDomain(type(cats[0]))
    return Measurement(domain, DiscreteDistance(), MaxDivergence(),
                       _function(cats, prob_value, lambda x: cats[sample_uniform_int_below(len(cats))]),
                       lambda d_in: 0.0 if d_in == 0 else epsilon)


def domain_unchecked(categories, prob_value):
    """Defect: the input domain admits anything, so inputs of the wrong type are randomised."""
    return dataclasses.replace(make_randomized_response(categories, prob_value), input_domain=AtomDomain(object))


def exact_one_over_t_is_ok(categories, prob_value):
    """Not a defect: our constructor itself (a control that must pass)."""
    return make_randomized_response(categories, prob_value)


