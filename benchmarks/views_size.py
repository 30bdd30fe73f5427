"""The size of a standalone head view against bertviz's, for the same attention.

A 60-word sentence (62 pieces with [CLS] and [SEP]) through a random-weight BERT of 12
layers × 12 heads (init 0.2: attention spread thin, the worst case for our sparse storage),
built from a config (no download). Ours: ``views.head_view(enc, parts).html()`` (words and
pieces, every layer and head and their mean, rollout, special-token shares; scripts
inlined). bertviz: ``head_view(attention, tokens, html_action="return")`` over the same
piece-level weights (its scripts come from CDNs, so only its size is comparable offline).
The render time is measured in the browser test (``tests/browser/test_views_browser.py``).

    pip install --no-deps --target /tmp/bertviz bertviz   # bertviz's requirements are already here
    PYTHONPATH=/tmp/bertviz:. python benchmarks/views_size.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.integration.tiny_models

from contextlens import views  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from tests.browser.test_views_browser import LONG  # noqa: E402
from tests.integration.tiny_models import tiny_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        encoder = TransformerEncoder(str(tiny_model(Path(tmp), "bert", layers=12, heads=12,
                                                    hidden=96, init=0.2)))
        text = " ".join(LONG[:60])
        enc, parts = encoder.encode([text])[0], encoder.attention_parts(text)
    result = {"words": len(enc.words), "pieces": len(parts[0].tokens),
              "ours_bytes": len(views.head_view(enc, parts).html().encode())}
    try:
        import torch
        from bertviz import head_view
    except ImportError as err:
        result["bertviz"] = f"not installed ({err}): see the module docstring"
    else:
        html = head_view([torch.tensor(p.weights[None]) for p in parts], list(parts[0].tokens),
                         html_action="return")
        result["bertviz_bytes"] = len(html.data.encode())
        result["bertviz_over_ours"] = round(result["bertviz_bytes"] / result["ours_bytes"], 1)
    print(json.dumps(result) if args.json else "\n".join(f"{k}: {v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
