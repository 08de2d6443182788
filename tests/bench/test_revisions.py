"""Measuring with another revision's code: its source is that revision's, a fresh process imports
memrl from it, and a revision git cannot read is refused before anything is measured."""

import subprocess

import pytest

from memrl.bench.revisions import CHECKOUT_SOURCE, revision_source, run_script

WHERE_MEMRL_IS = "import json, memrl, sys; print(json.dumps([memrl.__file__, json.loads(sys.argv[1])]))"


def test_a_revision_is_extracted_and_imported_in_a_fresh_process():
    first_commit = subprocess.run(
        ["git", "-C", str(CHECKOUT_SOURCE), "rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True
    ).stdout.split()[0]
    source = revision_source(first_commit)
    assert (source / "memrl" / "__init__.py").exists()
    imported_from, argument = run_script(source, WHERE_MEMRL_IS, {"a": 1})
    assert imported_from == str(source / "memrl" / "__init__.py") and argument == {"a": 1}
    assert run_script(CHECKOUT_SOURCE, WHERE_MEMRL_IS, 0)[0] == str(CHECKOUT_SOURCE / "memrl" / "__init__.py")


def test_an_unknown_revision_is_refused():
    with pytest.raises(ValueError, match="--baseline 'no-such-revision': git cannot read"):
        revision_source("no-such-revision")


def test_a_failing_script_says_where_it_ran():
    with pytest.raises(RuntimeError, match="(?s)failed \\(exit 1\\).*ZeroDivisionError"):
        run_script(CHECKOUT_SOURCE, "1 / 0", None)
