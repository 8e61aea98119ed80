"""A griffe extension for the API reference: the package's docstrings are numpydoc with Sphinx's
roles (``:func:`~denoc_bridge.simulate```) and reST's ``::`` before literal blocks, which Markdown
shows as they are written.  This turns each role into a cross-reference that mkdocs-autorefs links
to the object's page when that object is rendered in the reference, and into plain code when it is
not (the reference is ``optional``: no warning, so ``mkdocs build --strict`` stays meaningful for
the references written in the pages), and ``text::`` into ``text:``.

Used by mkdocs.yml (``plugins.mkdocstrings.handlers.python.options.extensions``); nothing in the
package imports it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`(~?)([^`<>]+?)`")
LITERAL = re.compile(r"(\S)::[ \t]*$", re.M)
ALONE = re.compile(r"^([ \t]*)::[ \t]*$", re.M)


def _module(obj: griffe.Object) -> griffe.Object:
    while not obj.is_module and obj.parent is not None:
        obj = obj.parent
    return obj


def _target(obj: griffe.Object, name: str) -> str | None:
    """The full path of ``name`` as written in ``obj``'s docstring, or None (not in this package)."""
    root = obj.package.name
    if name.startswith("."):  # relative to the module: :mod:`.info`
        return f"{_module(obj).path}{name}"
    if name.split(".")[0] == root:
        return name
    head, _, rest = name.partition(".")
    for scope in (obj, obj.parent, _module(obj)):
        if scope is None:
            continue
        try:
            full = scope.resolve(head)
        except (griffe.NameResolutionError, AttributeError, KeyError, ValueError):
            continue
        if full.split(".")[0] == root:
            return f"{full}.{rest}" if rest else full
        return None
    return None


def convert(text: str, obj: griffe.Object) -> str:
    def role(match: re.Match[str]) -> str:
        short, name = match.group(1) == "~", match.group(2).strip()
        title = name.rsplit(".", 1)[-1] if short else name.lstrip(".")
        path = _target(obj, name)
        if path is None:
            return f"`{title}`"
        return f'<autoref identifier="{path}" optional><code>{title}</code></autoref>'

    text = ROLE.sub(role, text)
    text = ALONE.sub("", text)
    return LITERAL.sub(r"\1:", text)


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()

        def walk(obj: griffe.Object) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = convert(obj.docstring.value, obj)
            for member in obj.members.values():
                if not member.is_alias:
                    walk(member)  # type: ignore[arg-type]

        walk(pkg)
