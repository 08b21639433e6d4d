"""Every module of pytest_flows (public or under ``_internal``) works as the first import
of a test module.

The plugin configures a framework's adapter the moment the framework is
imported; a module that imports the framework half-way through its own import
used to re-enter itself from that hook and fail collection ("partially
initialized module ... has no attribute 'ADAPTER'"), but only when nothing had
imported the framework before it. So each module gets a fresh interpreter: a
pytest run (this plugin only, to keep it cheap) of a test module whose first
line imports it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_flows
from pytest_flows._internal.deprecation import ALIASES

PACKAGE = Path(pytest_flows.__file__).parent


def _all_modules() -> list[str]:
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules.append(".".join(parts))
    return modules


#: The deprecated aliases at the top re-export public names only (tests/test_public_paths.py
#: imports each in a fresh interpreter); the adapters' aliases stay here, since what can
#: break there is the adapter's re-entrant load.
MODULES = [
    m
    for m in _all_modules()
    if m not in ALIASES or m.startswith(("pytest_flows.crewai.", "pytest_flows.agent_framework."))
]


def test_every_module_is_found() -> None:
    # guards the walk above: an empty or partial list would make the test below vacuous
    assert {
        "pytest_flows",
        "pytest_flows._internal.plugin",
        "pytest_flows.agent_framework",
        "pytest_flows.agent_framework._llm",
        "pytest_flows.crewai",
        "pytest_flows.crewai._adapter",
    } <= set(MODULES)


#: an adapter's modules import its framework: without the extra there is nothing to import
_FRAMEWORK_OF = {
    "pytest_flows.agent_framework": "agent-framework-core",
    "pytest_flows.crewai": "crewai",
}


def _skip_without_the_framework(module: str) -> None:
    from importlib.metadata import PackageNotFoundError, version

    for package, distribution in _FRAMEWORK_OF.items():
        if module == package or module.startswith(f"{package}."):
            try:
                version(distribution)
            except PackageNotFoundError:
                pytest.skip(f"{distribution} is not installed")
    if module == "pytest_flows.crewai._conversation":
        from pytest_flows.crewai import _compat as compat

        if compat.conversational_mixin() is None:
            pytest.skip("conversational flows need crewai >= 1.15")


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_first_in_a_fresh_interpreter(module: str, tmp_path: Path) -> None:
    _skip_without_the_framework(module)
    # `import *` also resolves the lazily loaded names of a package's __all__.
    (tmp_path / "test_first_import.py").write_text(
        f"from {module} import *  # noqa: F403\n\n\ndef test_imported():\n    pass\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(PACKAGE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "pytest_flows._internal.plugin",
            "-p",
            "no:cacheprovider",
            "test_first_import.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and "1 passed" in result.stdout, (
        f"`from {module} import *` as the first import of a test module failed:\n"
        f"{result.stdout}\n{result.stderr}"
    )
