"""ringfence.rfcore.hashing.sha256 is byte-identical to hashlib's; ledger ids stay uniform base32."""

from __future__ import annotations

import hashlib
import re

from ringfence.rfcore.hashing import sha256
from ringfence.ledger import store as ledger


def test_sha256_matches_hashlib():
    for data in (b"", b"abc", bytes(range(256)) * 300, "profil\u00e9".encode()):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        h = sha256()
        h.update(data[:7])
        h.update(data[7:])
        assert h.digest() == hashlib.sha256(data).digest()


def test_new_id_is_prefix_and_ten_base32_chars_over_the_whole_alphabet():
    # 32 symbols divide 256: byte % 32 is unbiased (the id relies on it).
    assert len(ledger._ALPHABET) == 32 == len(set(ledger._ALPHABET))
    ids = [ledger.new_id("r-") for _ in range(400)]
    assert all(re.fullmatch(r"r-[a-z2-7]{10}", i) for i in ids)
    assert len(set(ids)) == len(ids)
    # 4000 draws: every symbol appears (probability of a miss is ~32 * e^-125).
    assert set("".join(i[2:] for i in ids)) == set(ledger._ALPHABET)
