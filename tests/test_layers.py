"""The layers of docs/architecture.md: a module imports only the layers below its own."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "memrl"
ORDER = ["nn", "cores", "envs", "tasks", "agents", "learn", "run", "analysis", "experiments", "bench"]
"""lowest first; a layer may import its own and lower ones (cores, envs and tasks are one level in
docs/architecture.md, so among themselves only the order they have today is kept)"""


def imported(path: Path) -> set[str]:
    """The memrl layers a module imports (``memrl.X`` for X in ORDER), at any depth of the module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if isinstance(node, ast.ImportFrom) and node.module == "memrl":
            names = [f"memrl.{a.name}" for a in node.names]
        found |= {name.split(".")[1] for name in names if name.startswith("memrl.") and name.split(".")[1] in ORDER}
    return found


@pytest.mark.parametrize("layer", ORDER)
def test_no_module_imports_a_layer_above_its_own(layer):
    above = set(ORDER[ORDER.index(layer) + 1 :])
    wrong = {
        str(path.relative_to(SRC)): sorted(imported(path) & above)
        for path in (SRC / layer).rglob("*.py")
        if imported(path) & above
    }
    assert not wrong, f"imports from above {layer}/: {wrong}"


def test_no_source_cites_a_folder_a_users_clone_lacks():
    """Docstrings and help texts cite the papers, the project's own files (tests/data holds the golden
    data with its provenance) or the official repositories, never the team's ../shared folder."""
    citing = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if "shared/reference" in p.read_text() or "../shared" in p.read_text()
    ]
    assert not citing, f"cite tests/data or the official repository instead: {citing}"
