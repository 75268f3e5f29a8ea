"""Sphinx configuration of kanerobot's documentation site.

Build it from the repository's folder (the README's Quick start)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Warnings are errors (``-W``): a docstring that does not render, a broken
link or a notebook cell that raises fails the build (tests/test_docs.py
builds the site so in CI).
"""

import os
import pkgutil
import warnings
from pathlib import Path

import kanerobot

project = "kanerobot"
author = "kanerobot's authors"
copyright = "kanerobot's authors, MIT licence"
version = release = kanerobot.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

# The README is included by index.md; the rest of the repository (tests,
# benchmarks, the virtual environment) is not part of the site.
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# --- API reference: one page per module, written by write_api_pages below
# from a walk of the package, so that a new module appears without editing
# the docs (into api/, git-ignored).  Not autosummary's :recursive: option: it
# finds a submodule through its package's attribute, and where a package
# re-exports a function of its submodule's name (kanerobot.identification's
# identify, base_parameters, energy_model) it documented the function in
# place of the module.  Autosummary makes the table of exported names.
autosummary_generate = False
# ignore-module-all: each object is documented once, in the module that
# defines it, not again in every package whose __all__ re-exports it (the
# top-level names are listed in api.rst by exported_names below)
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
# Objects are not entries of the navigation tree: with them every page's
# sidebar held every function of the package, and building it took longer
# than the rest of the site (tests/test_docs.py builds the site in CI).
toc_object_entries = False
# numpydoc: the docstrings' Parameters/Returns sections; class members are
# listed by autodoc, not numpydoc's extra autosummary tables (which would
# need a stub page per attribute).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc reads the signatures of the sympy objects that modules import
# (Rational, KanesMethod, RigidBody, inertia) before autodoc drops imported
# names, and warns about their docstrings' sections: sympy's, never shown
warnings.filterwarnings("ignore", message="Unknown section", category=UserWarning, module="numpydoc")

# --- Markdown and notebooks.  Tutorials run at every build (forced) and
# a cell that raises fails it; the compiled-model cache keeps them short.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_execution_show_tb = True
nb_merge_streams = True
# the derivation progress lines go to standard error; in a page they are noise
os.environ.setdefault("KANEROBOT_PROGRESS", "0")

html_theme = "furo"
html_title = f"kanerobot {release}"


def exported_names():
    """An autosummary table of ``kanerobot.__all__``, each name linked where it is defined.

    Written into api.rst (at ``.. kanerobot-exported-names::``) when it is
    read, so that a name added to ``__all__`` appears without editing the docs.
    """
    rows = []
    for name in sorted(kanerobot.__all__, key=str.lower):
        obj = getattr(kanerobot, name)
        rows.append(f"   ~{obj.__module__}.{obj.__qualname__}")
    return ".. autosummary::\n\n" + "\n".join(rows) + "\n"


def api_pages(package):
    """``{module name: reST page}`` for the package and every public module under it."""
    names = [package.__name__] + [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    names = [name for name in names if not any(part.startswith("_") for part in name.split("."))]
    pages = {}
    for name in names:
        children = [other for other in names if other.rpartition(".")[0] == name]
        text = f"{name}\n{'=' * len(name)}\n\n.. automodule:: {name}\n"
        if children:
            text += "\n.. rubric:: Modules\n\n.. toctree::\n   :maxdepth: 1\n\n" + "".join(f"   {child}\n" for child in children)
        pages[name] = text
    return pages


def write_api_pages(app):
    """Write api/<module>.rst for every module; a file is rewritten only when it changes, stale ones removed."""
    folder = Path(app.srcdir) / "api"
    folder.mkdir(exist_ok=True)
    pages = api_pages(kanerobot)
    for stale in set(folder.glob("*.rst")) - {folder / f"{name}.rst" for name in pages}:
        stale.unlink()
    for name, text in pages.items():
        path = folder / f"{name}.rst"
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)


def fill_exported_names(app, docname, source):
    if docname == "api":
        source[0] = source[0].replace(".. kanerobot-exported-names::\n", exported_names())


def setup(app):
    app.connect("builder-inited", write_api_pages)
    app.connect("source-read", fill_exported_names)
