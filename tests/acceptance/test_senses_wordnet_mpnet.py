"""``senses --wordnet`` with mpnet on the README's six sentences of *bank*: each cluster's
nearest WordNet sense is the one a reader names (minilm puts the river cluster nearest "a
long ridge or pile": ``tests/integration/test_senses_wordnet.py``). Uses the shared caches:
the first run encodes the ~200 SemCor sentences and the glosses "bank"'s senses need
(about 75 s on this 2-core machine), later runs read them."""

from __future__ import annotations

import pytest

from tests.integration.test_senses_wordnet import FINANCE, FINANCE_KEYS, README, RIVER, RIVER_KEY, _cluster_of
from tests.missing import missing, need, need_model

need("torch")
need("transformers")
pytestmark = pytest.mark.data


@pytest.mark.slow
def test_mpnet_names_both_senses_of_bank(data_dir):
    for name in ("wordnet/index.sense", "wsd/semcor/semcor3.0_naf.tar.gz"):
        if not (data_dir / name).is_file():
            missing(f"{data_dir / name} is missing (WordNet and SemCor are needed)")
    need_model("mpnet")
    from contextlens import make_encoder
    from contextlens.analysis.senses import senses
    from contextlens.evaluation.wordnet_map import WordNetNamer

    out = senses(make_encoder(model="mpnet"), README, "bank", wordnet=WordNetNamer(data_dir))
    assert out["k"] == 2 and out["layer"] == 12
    finance, river = _cluster_of(out, FINANCE), _cluster_of(out, RIVER)
    assert finance["wordnet"][0]["key"] in FINANCE_KEYS, finance["wordnet"]
    assert river["wordnet"][0]["key"] == RIVER_KEY, river["wordnet"]
    assert "sloping land" in river["wordnet"][0]["gloss"]
