"""Shared figure plumbing: the headless backend, :func:`save_figure` and the heatmap the figures share."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")  # headless: contextlens never opens a window
import matplotlib.pyplot as plt  # noqa: E402

from ..errors import check_choice  # noqa: E402
from ..files import atomic_output  # noqa: E402

__all__ = ["save_figure", "figure_format", "FIGURE_FORMATS", "plt", "short", "plain_text", "heat"]

FIGURE_FORMATS = ("png", "svg", "pdf")


def figure_format(path: str | os.PathLike) -> str:
    """The format a figure path asks for (its suffix), checked early: png, svg or pdf.

    >>> figure_format("out/bank.SVG")
    'svg'
    """
    return check_choice("figure format (file suffix)", Path(path).suffix.lstrip(".").lower(), FIGURE_FORMATS)


def plain_text(build):
    """A figure builder whose texts are all shown as written. Matplotlib reads the text
    between two ``$`` as mathematics: a sentence "it cost $5 and $6" would lose its dollars
    to italics, and one holding ``$\\frac{a}{$`` would stop the figure with a parse error. So
    every text the builder makes (titles, ticks, legends, notes: sentences and words come
    through all of them) is made with ``text.parse_math`` off.

    >>> import matplotlib.pyplot as pyplot
    >>> @plain_text
    ... def note(text):
    ...     fig, ax = pyplot.subplots()
    ...     return ax.set_title(text)
    >>> title = note("it cost $5 and $6")
    >>> title.get_text(), title.get_parse_math()
    ('it cost $5 and $6', False)
    >>> pyplot.close("all")
    """

    @functools.wraps(build)
    def built(*args, **kwargs):
        with plt.rc_context({"text.parse_math": False}):
            return build(*args, **kwargs)

    return built


def save_figure(fig, path: str | os.PathLike, *, dpi: int = 150) -> Path:
    """Write ``fig`` to ``path`` (format from the suffix: .png, .svg, .pdf) and close it."""
    path = Path(path)
    try:
        fmt = figure_format(path)
        with atomic_output(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def short(text: str, n: int = 40) -> str:
    """``text`` cut to ``n`` characters with an ellipsis, for axis labels.

    >>> short("The bank raised its interest rates again.", 20)
    'The bank raised its…'
    """
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def heat(ax, m: np.ndarray, xlabels, ylabels, *, cmap="viridis", vmin=None, vmax=None, annotate=None):
    """Draw ``m`` as a heatmap on ``ax`` with the labels given, each cell's value written in it when
    there are few (at most 150 cells by default) in black or white, whichever contrasts; returns the image."""
    im = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(xlabels)), xlabels, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(ylabels)), ylabels, fontsize=8)
    if annotate is None:
        annotate = m.size <= 150
    if annotate:
        for (r, c), v in np.ndenumerate(m):
            red, green, blue, _ = im.cmap(im.norm(v))
            light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5  # text contrasts with the cell
            ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                    color="black" if light else "white")
    return im
