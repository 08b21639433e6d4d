"""The documentation site's build hooks (docs/_hooks/), each on a case it exists for.

The full build (``mkdocs build --strict``) runs in tox -e docs and .ci/run; these
check the hooks' own rules without building the site.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]')")
griffe = pytest.importorskip("griffe", reason="the docs extra (pip install -e '.[docs]')")

from mkdocs.exceptions import PluginError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _hook(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "_hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(src_uri: str) -> Any:
    return types.SimpleNamespace(file=types.SimpleNamespace(src_uri=src_uri, src_path=src_uri))


def _config(**extra: Any) -> dict[str, Any]:
    return {
        "config_file_path": str(ROOT / "mkdocs.yml"),
        "docs_dir": str(ROOT / "docs"),
        **extra,
    }


# -- examples_links --------------------------------------------------------------------
def test_an_example_link_becomes_its_path_or_a_repository_link() -> None:
    hook = _hook("examples_links")
    text = "See [`examples/triage/`](../examples/triage/) and [the flow](../examples/triage)."

    plain = hook.on_page_markdown(text, _page("x.md"), _config(), None)
    linked = hook.on_page_markdown(
        text, _page("x.md"), _config(repo_url="https://example.org/flows/"), None
    )

    assert plain == "See `examples/triage/` and the flow (`examples/triage`)."
    assert "[`examples/triage/`](https://example.org/flows/tree/main/examples/triage/)" in linked


def test_a_link_to_a_missing_example_fails_the_build_naming_page_and_link() -> None:
    hook = _hook("examples_links")
    with pytest.raises(PluginError, match=r"x\.md: the link \[old\]\(\.\./examples/gone\)"):
        hook.on_page_markdown("[old](../examples/gone)", _page("x.md"), _config(), None)


# -- public_api -------------------------------------------------------------------------
def test_the_api_page_lists_every_public_name_once_by_group() -> None:
    import pytest_flows

    hook = _hook("public_api")
    page = hook.on_page_markdown(
        "# API\n\n<!-- public-api -->\n", _page("api/pytest_flows.md"), _config(), None
    )

    directives = [line for line in page.splitlines() if line.startswith("::: ")]
    rendered = [line.removeprefix("::: pytest_flows.") for line in directives]
    assert sorted(rendered) == sorted(pytest_flows.__all__)
    assert page.index("## The harness") < page.index("::: pytest_flows.FlowsSession\n")


def test_other_pages_pass_through_and_a_lost_marker_fails() -> None:
    hook = _hook("public_api")
    assert hook.on_page_markdown("text", _page("state.md"), _config(), None) == "text"
    with pytest.raises(PluginError, match="lost its <!-- public-api --> marker"):
        hook.on_page_markdown("# API\n", _page("api/pytest_flows.md"), _config(), None)


# -- griffe_rst ---------------------------------------------------------------------------
def test_rest_roles_and_literal_blocks_become_markdown() -> None:
    rest = _hook("griffe_rst")
    docstring = (
        "Returns a :class:`~pytest_flows._internal.run.FlowRun`; see :meth:`close` and "
        ":func:`helper`.\n"
        "\n"
        "Use it so::\n"
        "\n"
        "    run = flows.run(F)\n"
        "    assert run.output\n"
        "\n"
        "Then more text.\n"
    )
    package = griffe.Module("pkg")
    package.set_member("f", griffe.Function("f", docstring=griffe.Docstring(docstring)))
    package.set_member("helper", griffe.Function("helper"))

    rest.ReSTToMarkdown().on_package(pkg=package)

    link = '<autoref identifier="{}" optional><code>{}</code></autoref>'
    assert package["f"].docstring.value.splitlines() == [
        f"Returns a {link.format('pytest_flows._internal.run.FlowRun', 'FlowRun')}; "
        "see <code>close</code>"
        f" and {link.format('pkg.helper', 'helper')}.",
        "",
        "Use it so:",
        "",
        "```python",
        "run = flows.run(F)",
        "assert run.output",
        "```",
        "",
        "Then more text.",
    ]
