"""Walkthrough part 3: a real transformer (the default model, MiniLM), word by word.

Same token id → same embedding row → different contextual vectors; the polysemy explorer
on five words with up to three senses each; layer divergence; an attention heatmap; the
sense probe on ten "bank" sentences.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from .. import plots
from ..analysis.attribution import attribute
from ..analysis.explore import explore
from ..analysis.layers import layer_divergence
from ..analysis.senses import senses

__all__ = ["transformer_part", "markdown", "SENSES", "BANK_TEN"]

log = logging.getLogger(__name__)

# Our own sentences: two per sense, up to three senses per word.
SENSES: dict[str, dict[str, list[str]]] = {
    "bank": {
        "finance": ["The bank approved my mortgage after a week.",
                    "He withdrew cash from the bank on Friday."],
        "river": ["We sat on the bank and watched the river flow.",
                  "Reeds grew thick along the muddy bank of the stream."],
        "rely": ["You can bank on her to finish the job.",
                 "Do not bank on the weather staying dry."],
    },
    "bat": {
        "sport": ["She gripped the bat and waited for the pitch.",
                  "His cricket bat cracked on the first ball."],
        "animal": ["A bat hung upside down in the dark cave.",
                   "The bat caught moths above the garden at night."],
        "blink": ["He did not bat an eye at the huge bill.",
                  "She would bat her eyelashes to get attention."],
    },
    "light": {
        "illumination": ["The light from the lamp filled the room.",
                         "Morning light came through the curtains."],
        "weight": ["The tent is light enough to carry all day.",
                   "She packed a light bag for the short trip."],
        "ignite": ["Please light the candles before dinner.",
                   "They tried to light a fire with wet wood."],
    },
    "lead": {
        "metal": ["The old pipes were made of lead and had to be replaced.",
                  "Lead is a heavy, soft and toxic metal."],
        "guide": ["She will lead the expedition across the mountains.",
                  "A good captain can lead a team through hard times."],
        "front": ["Our runner took the lead in the final lap.",
                  "The team held a narrow lead at half time."],
    },
    "spring": {
        "season": ["The cherry trees blossom in spring.",
                   "We plan to visit Japan next spring."],
        "coil": ["A steel spring pushes the button back out.",
                 "The old sofa had a broken spring in the seat."],
        "water": ["Fresh water bubbled up from a spring in the hills.",
                  "The village drew its water from a mountain spring."],
    },
}

# Ten "bank" sentences, five per sense, for the sense probe (labels are the senses).
BANK_TEN: list[tuple[str, str]] = (
    [(s, "finance") for s in (
        "She opened a savings account at the bank downtown.",
        "The bank charged a fee for the late payment.",
        "Our bank raised its interest rates again.",
        "He asked the bank for a loan to buy a car.",
        "The central bank cut rates to support the economy.")]
    + [(s, "river") for s in (
        "Children fished from the grassy bank of the lake.",
        "The canoe drifted toward the far bank of the river.",
        "Flood water spilled over the bank after the storm.",
        "Wild flowers covered the steep bank by the stream.",
        "A heron stood still on the bank, watching the water.")]
)


def _same_row(encoder) -> dict[str, Any]:
    """Same token id → identical embedding row → different contextual vectors."""
    finance, river = SENSES["bank"]["finance"][0], SENSES["bank"]["river"][0]
    result = layer_divergence(encoder, [(finance, river), (finance, SENSES["bank"]["finance"][1])], "bank")
    a, b = result["pairs"]
    return {
        "sentences": [finance, river, SENSES["bank"]["finance"][1]],
        "layer_names": result["layer_names"],
        "finance_vs_river": a["cosine_by_layer"],
        "finance_vs_finance": b["cosine_by_layer"],
    }


def transformer_part(out: Path, model: str = "minilm") -> dict[str, Any]:
    """Compute part 3 with ``model`` and write its figures to ``out``."""
    from ..encoders.transformer import TransformerEncoder

    encoder = TransformerEncoder(model)
    result: dict[str, Any] = {"model": model}
    log.info("same row, different vectors")
    same = _same_row(encoder)
    result["same_row"] = same
    plots.save_figure(plots.layer_cosines(
        {"bank: finance vs river": same["finance_vs_river"],
         "bank: finance vs finance": same["finance_vs_finance"]},
        same["layer_names"], title=f"'bank' across the layers of {model}"), out / "layers_bank.png")
    result["layers_figure"] = "layers_bank.png"

    log.info("polysemy explorer")
    explorer = {}
    for word, senses_of in SENSES.items():
        sentences = [s for group in senses_of.values() for s in group]
        r = explore(encoder, sentences, word)
        row = r["words"][0]
        labels = [f"{sense} {i}" for sense, group in senses_of.items() for i in range(len(group))]
        name = f"explore_{word}.png"
        plots.save_figure(plots.cosine_heatmap(row["matrix"], labels, names=row["labels"],
                                               title=f"{word!r}: cosine between usages ({r['layer_name']})"),
                          out / name)
        same_sense, other_sense = [], []
        for i, a in enumerate(labels):
            for j, b in enumerate(labels[:i]):
                (same_sense if a.split()[0] == b.split()[0] else other_sense).append(row["matrix"][i][j])
        explorer[word] = {
            "senses": list(senses_of), "spread": row["spread"], "figure": name,
            "mean_same_sense": sum(same_sense) / len(same_sense),
            "mean_other_sense": sum(other_sense) / len(other_sense),
        }
    result["explorer"] = explorer

    log.info("attention")
    text = SENSES["bank"]["river"][0]
    att = attribute(encoder, text, "bank", layer=-1, rollout=True)
    plots.save_figure(plots.attention_heads(att, title=f"attention of 'bank' in {text!r}"),
                      out / "attention_bank.png")
    result["attention"] = {
        "sentence": text, "words": att["words"], "figure": "attention_bank.png",
        "last_layer_mean": att["mean"][-1], "special_share_by_layer": att["special_mean"],
    }

    log.info("sense probe")
    sentences = [s for s, _ in BANK_TEN]
    probe = senses(encoder, sentences, "bank", gold=[g for _, g in BANK_TEN], projection="pca")
    plots.save_figure(plots.projection_scatter(
        probe["projection"]["points"], probe["labels"], labels=[g for _, g in BANK_TEN], method="pca",
        group_name="cluster", title=f"ten 'bank' sentences, clustered ({model}, {probe['layer_name']})"),
        out / "senses_bank.png")
    kept = ("k", "k_chosen_by", "silhouette", "purity", "ari", "labels", "layer_name")
    result["senses"] = {k: probe[k] for k in kept}
    result["senses"]["figure"] = "senses_bank.png"
    return result


def markdown(r: dict[str, Any]) -> list[str]:
    same = r["same_row"]
    lines = ["", f"## 3. A real transformer: {r['model']}, word by word", "",
             "Layer 0 is the raw embedding-matrix row of the word's pieces: *bank* has the same "
             "token id in every sentence, so its layer-0 cosine is exactly 1.0. Every later layer "
             "mixes in the sentence.", "",
             f"- finance: {same['sentences'][0]}", f"- river: {same['sentences'][1]}",
             f"- finance 2: {same['sentences'][2]}", "",
             "| layer | finance vs river | finance vs finance |", "|---|---:|---:|"]
    for name, a, b in zip(same["layer_names"], same["finance_vs_river"], same["finance_vs_finance"]):
        lines.append(f"| {name} | {a:.3f} | {b:.3f} |")
    lines += ["", f"![]({r['layers_figure']})", "", "### The polysemy explorer", "",
              "Two sentences per sense; the cosine between usages of the same sense against "
              "usages of different senses (top layer).", "",
              "| word | senses | same sense | different senses | spread |", "|---|---|---:|---:|---:|"]
    for word, e in r["explorer"].items():
        lines.append(f"| {word} | {', '.join(e['senses'])} | {e['mean_same_sense']:.3f} | "
                     f"{e['mean_other_sense']:.3f} | {e['spread']:.3f} |")
    lines += [""] + [f"![]({e['figure']})" for e in r["explorer"].values()]
    a = r["attention"]
    lines += ["", "### Attention", "", f"What *bank* attends to in: {a['sentence']} (last layer, mean "
              "over heads; the rest goes to the model's special tokens, [CLS] and [SEP] for BERT-style "
              "models):", "",
              ", ".join(f"{w} {x:.3f}" for w, x in zip(a["words"], a["last_layer_mean"])), "",
              f"![]({a['figure']})"]
    s = r["senses"]
    lines += ["", "### The sense probe", "", f"Ten *bank* sentences (five finance, five river) "
              f"clustered at {s['layer_name']}: k = {s['k']} (by {s['k_chosen_by']}), "
              f"silhouette {s['silhouette']:.3f}, "
              f"purity {s['purity']:.3f}, adjusted Rand index {s['ari']:.3f}.", "", f"![]({s['figure']})"]
    return lines
