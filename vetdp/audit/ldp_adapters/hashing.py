"""pure-ldp's and multi-freq-ldpy's hashing clients (OLH, Hadamard response, CMS, HCMS) through vetdp's specs.

The libraries draw their own randomness, so they are vetted as opaque code (:mod:`vetdp.audit.opaque`) through a
*view* of each spec whose law the opaque audit can compare samples with:

* ``olh`` -> pure-ldp ``LHClient(epsilon, d, g)`` (items numbered from 1) and multi-freq-ldpy
  ``LH_Client(item, k, epsilon, optimal)``. A report (y, s) is read relative to its own bucket, computed with the
  library's hash (``xxhash.xxh32(str(item), seed=s).intdigest() % g``): the view reports (y − H_s(x) + x) mod g,
  whose law given any seed is randomized response over g buckets around x mod g, at the library's floats. The
  loss of that view is the OLH loss given a seed that separates the values (vetdp's keyed shape shows every
  separating seed has this loss).
* ``hadamard_response`` -> pure-ldp ``HadamardResponseClient(epsilon, d, None)`` for ε <= 1, which runs the
  Acharya–Sun–Zhang basic scheme (``Hadamard_Rand_high_priv``); above 1 pure-ldp switches to a blocked scheme whose
  law is not this spec's (outside the view).
* ``count_mean_sketch``, ``hadamard_count_mean_sketch`` -> pure-ldp ``CMSServer(epsilon, k, m, is_hadamard)`` for
  the hash functions, then ``CMSClient``: built as the library documents.

The exact truths use the library's own floats and its samplers' granularity: NumPy's ``random_sample`` and
Python's ``random.random`` return k/2**53 with k uniform on [0, 2**53).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from vetdp.audit.ldp_adapters import E_MAX, EntryPoint, LibraryMeasurement, Untranslatable, oue_index
from vetdp.engine.spec import floats_in
from vetdp.impl.hadamard_response import hadamard_member, output_size

__all__ = ["pure_ldp_entries", "multi_freq_ldpy_entries", "HASHING_SPECS", "reproduction"]

HASHING_SPECS = ("olh", "hadamard_response", "count_mean_sketch", "hadamard_count_mean_sketch")
_UNIT = 2**53  # random_sample() and random.random() return k/2**53


def _below_or_equal(t: float) -> Fraction:
    """P[U <= t] for U = k/2**53, k uniform on [0, 2**53)."""
    if t < 0:
        return Fraction(0)
    return min(Fraction(1), Fraction(math.floor(Fraction(t) * _UNIT) + 1, _UNIT))


def _above(t: float) -> Fraction:
    return 1 - _below_or_equal(t)


def _olh_translate(p: dict) -> dict:
    if p.get("constant_time", False) is not False:
        raise Untranslatable("constant_time=True: the LDP libraries have no constant-time mode")
    eps, d = p["epsilon"], p["d"]
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps <= E_MAX:
        raise Untranslatable(f"epsilon={eps!r}: the libraries' OLH needs a float in (0, {E_MAX:g}]")
    g = int(round(math.exp(eps))) + 1 if p["g"] is None else p["g"]
    return {"epsilon": float(eps), "d": d, "g": g, "optimal": p["g"] is None}


def _olh_params(deep: bool) -> st.SearchStrategy:
    return st.fixed_dictionaries({"d": st.integers(2, 16), "epsilon": floats_in(0.1, 4.0, edges=[0.5, 1.0, 2.0]),
                                  "g": st.one_of(st.none(), st.integers(2, 8)), "constant_time": st.just(False)})


def _recentered(y: int, bucket: int, x: int, g: int) -> int:
    return (int(y) - bucket + x % g) % g


def _xxh32_bucket(item: int, seed: int, g: int) -> int:
    import xxhash

    return xxhash.xxh32(str(item), seed=seed).intdigest() % g  # the libraries' own expression


def _rr_around(x: int, g: int, keep: Fraction) -> dict:
    lie = (1 - keep) / (g - 1)
    return {b: keep if b == x % g else lie for b in range(g)}


# ------------------------------------------------------------------ pure-ldp

def _pure_olh(d: int, epsilon: float, g: int | None = None, constant_time: bool = False) -> LibraryMeasurement:
    from pure_ldp.frequency_oracles.local_hashing import LHClient

    lib = _olh_translate({"d": d, "epsilon": epsilon, "g": g, "constant_time": constant_time})
    client = LHClient(epsilon=lib["epsilon"], d=lib["d"], g=lib["g"])

    def invoke(x: Any) -> int:
        v = oue_index(x, lib["d"])
        y, seed = client.privatise(v + 1)  # pure-ldp numbers items from 1 (index_mapper x − 1)
        return _recentered(y, _xxh32_bucket(v, seed, lib["g"]), v, lib["g"])

    return LibraryMeasurement(invoke, lib["epsilon"], "pure_ldp.LHClient", client)


def _pure_olh_law(p: dict, x: Any) -> dict:
    from pure_ldp.frequency_oracles.local_hashing import LHClient

    lib = _olh_translate(p)
    client = LHClient(epsilon=lib["epsilon"], d=lib["d"], g=lib["g"])
    kept = _below_or_equal(client.p - client.q)  # keeps the bucket when random_sample() <= p − q, else uniform
    keep = kept + (1 - kept) / lib["g"]
    return _rr_around(oue_index(x, lib["d"]), lib["g"], keep)


def _hr_translate(p: dict) -> dict:
    eps, k = p["epsilon"], p["k"]
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps <= 1:
        raise Untranslatable(f"epsilon={eps!r}: pure-ldp runs the basic Hadamard response only for epsilon in "
                             "(0, 1]; above, a blocked scheme with another law")
    return {"epsilon": float(eps), "d": k}


def _pure_hr(k: int, epsilon: float) -> LibraryMeasurement:
    from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient

    lib = _hr_translate({"k": k, "epsilon": epsilon})
    client = HadamardResponseClient(lib["epsilon"], lib["d"], None)

    def invoke(x: Any) -> int:
        return int(client.privatise(oue_index(x, lib["d"]) + 1))

    return LibraryMeasurement(invoke, lib["epsilon"], "pure_ldp.HadamardResponseClient", client)


def _pure_hr_law(p: dict, x: Any) -> dict:
    lib = _hr_translate(p)
    flip = 1 / (1 + math.exp(lib["epsilon"]))  # Hadamard_Rand_high_priv's pri_para
    keep = _above(flip)  # it keeps the half when random.random() > pri_para
    outputs = output_size(lib["d"])
    v = oue_index(x, lib["d"])
    return {y: 2 * keep / outputs if hadamard_member(y, v) else 2 * (1 - keep) / outputs for y in range(outputs)}


def _cms_translate(p: dict) -> dict:
    if p.get("constant_time", False) is not False:
        raise Untranslatable("constant_time=True: pure-ldp has no constant-time mode")
    return {"epsilon": float(p["epsilon"]), "k": p["k"], "m": p["m"]}


def _pure_cms(hadamard: bool):
    def make(m: int, k: int, epsilon: float, hash_key: int = 0, constant_time: bool = False) -> LibraryMeasurement:
        from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer

        lib = _cms_translate({"m": m, "k": k, "epsilon": epsilon, "constant_time": constant_time})
        server = CMSServer(lib["epsilon"], lib["k"], lib["m"], is_hadamard=hadamard)
        client = CMSClient(lib["epsilon"], server.get_hash_funcs(), lib["m"], is_hadamard=hadamard)
        return LibraryMeasurement(client.privatise, lib["epsilon"], "pure_ldp.CMSClient", client)

    return make


def pure_ldp_entries() -> dict[str, EntryPoint]:
    """pure-ldp's hashing entry points (see the module docstring)."""
    return {
        "olh": EntryPoint("olh", _pure_olh, _olh_translate, "pure-ldp LHClient(epsilon, d, g)", law=_pure_olh_law,
                          inputs=lambda p: list(range(p["d"])), params=_olh_params,
                          keep_bad=("epsilon_zero", "epsilon_negative", "epsilon_nan")),
        "hadamard_response": EntryPoint(
            "hadamard_response", _pure_hr, _hr_translate, "pure-ldp HadamardResponseClient(epsilon <= 1, d)",
            law=_pure_hr_law, inputs=lambda p: list(range(p["k"])),
            params=lambda deep: st.fixed_dictionaries({"k": st.integers(2, 16),
                                                       "epsilon": floats_in(0.05, 1.0, edges=[0.5, 1.0])}),
            keep_bad=("epsilon_zero", "epsilon_nan")),
        "count_mean_sketch": EntryPoint("count_mean_sketch", _pure_cms(False), _cms_translate,
                                        "pure-ldp CMSServer + CMSClient", keep_bad=()),
        "hadamard_count_mean_sketch": EntryPoint("hadamard_count_mean_sketch", _pure_cms(True), _cms_translate,
                                                 "pure-ldp CMSServer + CMSClient(is_hadamard=True)", keep_bad=()),
    }


# ------------------------------------------------------------------ multi-freq-ldpy

def _mfl_olh(d: int, epsilon: float, g: int | None = None, constant_time: bool = False) -> LibraryMeasurement:
    from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Client

    lib = _mfl_translate({"d": d, "epsilon": epsilon, "g": g, "constant_time": constant_time})

    def invoke(x: Any) -> int:
        v = oue_index(x, lib["d"])
        y, seed = LH_Client(v, lib["d"], lib["epsilon"], optimal=lib["optimal"])
        return _recentered(y, _xxh32_bucket(v, int(seed), lib["g"]), v, lib["g"])

    return LibraryMeasurement(invoke, lib["epsilon"], "multi_freq_ldpy.LH_Client")


def _mfl_translate(p: dict) -> dict:
    lib = _olh_translate(p)
    if not lib["optimal"] and lib["g"] != 2:
        raise Untranslatable(f"g={p['g']!r}: multi-freq-ldpy's LH_Client takes g = 2 (optimal=False) or "
                             "round(e^epsilon) + 1 (optimal=True) only")
    return lib


def _mfl_olh_params(deep: bool) -> st.SearchStrategy:
    return _olh_params(deep).map(lambda p: {**p, "g": None if p["g"] is None or p["g"] > 2 else 2})


def _mfl_olh_law(p: dict, x: Any) -> dict:
    from vetdp.audit.ldp_adapters.multi_freq_ldpy import grr_keep_probability

    lib = _mfl_translate(p)
    return _rr_around(oue_index(x, lib["d"]), lib["g"], Fraction(grr_keep_probability(lib["epsilon"], lib["g"])))


def multi_freq_ldpy_entries() -> dict[str, EntryPoint]:
    """multi-freq-ldpy's hashing entry point (it has no Hadamard response and no count-mean sketch)."""
    return {"olh": EntryPoint("olh", _mfl_olh, _mfl_translate, "multi-freq-ldpy LH_Client(item, k, epsilon, optimal)",
                              law=_mfl_olh_law, inputs=lambda p: list(range(p["d"])), params=_mfl_olh_params,
                              keep_bad=("epsilon_zero", "epsilon_negative", "epsilon_nan"))}


def reproduction(library: str, spec_name: str, clause: str | None, params: dict) -> str:
    """A snippet using the library alone that shows what its client does on ``params``."""
    if spec_name == "olh":
        lib = _olh_translate(params)
        if library == "pure-ldp":
            return "\n".join(["from pure_ldp.frequency_oracles.local_hashing import LHClient",
                              f"client = LHClient(epsilon={lib['epsilon']!r}, d={lib['d']}, g={lib['g']})",
                              "print(client.p, client.q, client.privatise(1))"])
        return "\n".join(["from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Client",
                          f"print(LH_Client(0, {lib['d']}, {lib['epsilon']!r}, optimal={lib['optimal']}))"])
    if spec_name == "hadamard_response":
        lib = _hr_translate(params)
        return "\n".join(["from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient",
                          f"client = HadamardResponseClient({lib['epsilon']!r}, {lib['d']}, None)",
                          "print(client.hr.pri_para, client.privatise(1))"])
    if spec_name in ("count_mean_sketch", "hadamard_count_mean_sketch"):
        lib = _cms_translate(params)
        return "\n".join(["from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer",
                          f"server = CMSServer({lib['epsilon']!r}, {lib['k']}, {lib['m']}, "
                          f"is_hadamard={spec_name != 'count_mean_sketch'})",
                          f"client = CMSClient({lib['epsilon']!r}, server.get_hash_funcs(), {lib['m']}, "
                          f"is_hadamard={spec_name != 'count_mean_sketch'})",
                          "print(client.privatise('a'))"])
    return ""
