"""Third-party warnings kept off the user's terminal and notebook, and logged instead.

UMAP warns that a seed turns parallelism off, tqdm that a notebook lacks ipywidgets:
true, but not the user's to act on, and in a notebook they stay in the saved outputs.
:func:`quiet_warnings` goes around the one call that warns, names the libraries whose
warnings it takes (a folder in the path of the file that warns) and logs each at DEBUG
(``contextlens -v`` does not show them; a DEBUG log set-up does). Any other warning raised
inside is warned again, as the caller's filters say.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Iterator

__all__ = ["quiet_warnings"]

log = logging.getLogger(__name__)


@contextlib.contextmanager
def quiet_warnings(*libraries: str, category: type[Warning] = Warning) -> Iterator[None]:
    """Log, instead of showing, the warnings (of ``category``) that the packages
    ``libraries`` raise inside the block.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     with quiet_warnings("umap"):
    ...         warnings.warn_explicit("n_jobs value 1 overridden", UserWarning, "/venv/umap/umap_.py", 1952)
    ...         warnings.warn("not from umap", UserWarning)
    >>> [str(w.message) for w in seen]
    ['not from umap']
    """
    segments = tuple(f"{os.sep}{name}{os.sep}" for name in libraries)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if issubclass(w.category, category) and any(s in w.filename for s in segments):
            log.debug("%s (%s:%s): %s", w.category.__name__, w.filename, w.lineno, w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
