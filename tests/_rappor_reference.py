"""A stand-in for Google's reference RAPPOR tools (google/rappor), written here from their documented behaviour —
not their code — so that vetdp's readers and writers are tested against files laid out, hashed and ordered as the
reference's own client, simulator, ``sum_bits`` and ``hash_candidates`` produce them:

* Bloom positions: byte i of MD5(cohort as 4 bytes big-endian ‖ value), modulo k, for i < h;
* permanent response: HMAC-SHA256 keyed by the client's secret over the Bloom filter as a 4-byte big-endian integer;
  byte i of the digest decides bit i: when its top 7 bits are below 128·f the bit is the byte's lowest bit, else the
  Bloom bit (k <= 32);
* instantaneous response: bit i is 1 with probability q if the permanent bit is 1, p if it is 0 (a seeded
  ``random.Random`` here, where the reference uses the OS);
* bit strings: most significant bit first (bit k − 1 first);
* the simulator's input: values "v1" … "vN" drawn from the densities of its gen_counts.R, clients "c1" … with
  cohort (client number mod m), each client reporting several values, the secret being the client's name;
* files: the simulator's ``client,cohort,bloom,prr,irr`` CSV; ``sum_bits``' counts CSV (per cohort its reports, then
  bit 0 … k − 1); ``hash_candidates``' map CSV (per cohort h 1-based positions cohort·k + bit + 1, collisions
  repeated); the params CSV ``k,h,m,p,q,f``. Python's csv module with its default CRLF line ends, as the reference.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import random

import numpy as np


def bloom_positions(word: str, cohort: int, h: int, k: int) -> list[int]:
    digest = hashlib.md5(cohort.to_bytes(4, "big") + word.encode("utf-8")).digest()
    return [digest[i] % k for i in range(h)]


def bloom_int(word: str, cohort: int, h: int, k: int) -> int:
    out = 0
    for position in bloom_positions(word, cohort, h, k):
        out |= 1 << position
    return out


def permanent(secret: bytes, bloom: int, f: float, k: int) -> int:
    digest = hmac.new(secret, bloom.to_bytes(4, "big"), hashlib.sha256).digest()
    out = 0
    for i in range(k):
        byte = digest[i]
        noise = (byte >> 1) < f * 128
        bit = (byte & 1) if noise else (bloom >> i) & 1
        out |= bit << i
    return out


def instantaneous(prr: int, p: float, q: float, k: int, rng: random.Random) -> int:
    out = 0
    for i in range(k):
        one = rng.random() < (q if (prr >> i) & 1 else p)
        out |= int(one) << i
    return out


def bit_string(x: int, k: int) -> str:
    return "".join("1" if (x >> i) & 1 else "0" for i in reversed(range(k)))


def params_csv(k: int, h: int, m: int, p: float, q: float, f: float) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["k", "h", "m", "p", "q", "f"])
    w.writerow([k, h, m, p, q, f])
    return out.getvalue()


def density(dist: str, n: int) -> np.ndarray:
    i = np.arange(1, n + 1, dtype=float)
    if dist == "exp":
        w = (5 / n) * np.exp(-(5 / n) * i)
    elif dist == "gauss":
        x = np.arange(-n / 2 + 1, n / 2 + 1)
        w = np.exp(-x**2 / (2 * (n / 6) ** 2))
    elif dist == "unif":
        w = np.ones(n)
    else:
        w = i ** -(1.0 if dist == "zipf1" else 1.5)
    return w / w.sum()


def true_values(dist: str, n_values: int, n_clients: int, per_client: int, m: int,
                rng: np.random.Generator) -> list[tuple[str, int, str]]:
    """(client, cohort, value) rows as the reference's gen_true_values.R lays them out."""
    counts = rng.multinomial(n_clients * per_client, density(dist, n_values))
    values = rng.permutation(np.repeat(np.arange(1, n_values + 1), counts))
    clients = np.repeat(np.arange(1, n_clients + 1), per_client)
    return [(f"c{c}", int(c % m), f"v{v}") for c, v in zip(clients.tolist(), values.tolist(), strict=True)]


def simulate(rows: list[tuple[str, int, str]], k: int, h: int, p: float, q: float, f: float, seed: int) -> str:
    """The simulator's reports CSV: the client's name is its secret."""
    rng = random.Random(seed)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["client", "cohort", "bloom", "prr", "irr"])
    for client, cohort, value in rows:
        b = bloom_int(value, cohort, h, k)
        prr = permanent(client.encode(), b, f, k)
        w.writerow([client, cohort, bit_string(b, k), bit_string(prr, k),
                    bit_string(instantaneous(prr, p, q, k, rng), k)])
    return out.getvalue()


def sum_bits(reports_csv: str, k: int, m: int) -> str:
    sums = [[0] * k for _ in range(m)]
    sizes = [0] * m
    for i, row in enumerate(csv.reader(io.StringIO(reports_csv))):
        if i == 0:
            continue
        _, cohort, _, _, irr = row
        assert len(irr) == k
        c = int(cohort)
        sizes[c] += 1
        for j, ch in enumerate(irr):
            assert ch in "01"
            if ch == "1":
                sums[c][k - 1 - j] += 1
    out = io.StringIO()
    w = csv.writer(out)
    for c in range(m):
        w.writerow([sizes[c], *sums[c]])
    return out.getvalue()


def hash_candidates(words: list[str], k: int, h: int, m: int) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    for word in words:
        w.writerow([word, *(c * k + b + 1 for c in range(m) for b in bloom_positions(word, c, h, k))])
    return out.getvalue()


def counts_from_design(positions: dict[str, list[list[int]]], truth: dict[str, int], k: int, m: int, p: float,
                       q: float, f: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Bit counts drawn as the reference's gen_counts.R draws them from a map (cohorts uniform, then binomials for the
    permanent and the instantaneous responses): (sizes (m,), counts (m, k))."""
    sizes = np.zeros(m, dtype=np.int64)
    ones = np.zeros((m, k), dtype=np.int64)
    for value, n in truth.items():
        per_cohort = rng.multinomial(n, np.full(m, 1 / m))
        sizes += per_cohort
        for c in range(m):
            for bit in set(positions[value][c]):
                ones[c, bit] += per_cohort[c]
    counts = np.zeros((m, k), dtype=np.int64)
    for c in range(m):
        prr = rng.binomial(ones[c], 1 - f / 2) + rng.binomial(sizes[c] - ones[c], f / 2)
        counts[c] = rng.binomial(prr, q) + rng.binomial(sizes[c] - prr, p)
    return sizes, counts
