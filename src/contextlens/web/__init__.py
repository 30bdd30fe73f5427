"""The Live Lab: a local web app over the library (``contextlens lab``); no logic lives here."""

from .app import create_app

__all__ = ["create_app"]
