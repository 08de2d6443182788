import json
import subprocess
import sys

import numpy as np
import pytest

from memrl import cores
from memrl.agents.supervised_models import TASK_MODELS
from memrl.registry import Registry


def test_register_refuses_duplicates_and_make_lists_known_names():
    registry = Registry("widget")
    registry.register("a", dict)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("a", dict)
    with pytest.raises(ValueError, match="unknown widget 'b'; known: a"):
        registry.make("b")
    assert registry.make("a", x=1) == {"x": 1}


def test_core_registry_refuses_a_second_lstm_and_bad_fields():
    with pytest.raises(ValueError, match="already registered"):
        cores.register("lstm", cores.make)
    with pytest.raises(ValueError, match="core 'lstm' has no setting 'size'; its settings: hidden"):
        cores.make("lstm", size=3)


def test_a_name_fixes_its_settings_and_keeps_its_defaults():
    registry = Registry("widget")
    registry.register("wide", dict, fixed=dict(width=8), defaults=dict(depth=2))
    assert registry.make("wide") == {"width": 8, "depth": 2}
    assert registry.make("wide", depth=3) == {"width": 8, "depth": 3}
    with pytest.raises(ValueError, match="widget 'wide' fixes width by its name; choose another widget to change it"):
        registry.make("wide", width=4)
    assert cores.make("trxl-topk", num_layers=1).top_k == 8
    with pytest.raises(ValueError, match="core 'amrl-max' fixes aggregator by its name"):
        cores.make("amrl-max", aggregator="avg")


@pytest.mark.parametrize("registry", [cores.CORES, TASK_MODELS], ids=["cores", "task models"])
def test_every_entry_is_named_and_recorded_back_to_itself(registry):
    for name in registry.names():
        made = registry.make(name)
        record = registry.record(made)
        assert registry.name_of(made) == (name, {}) and record["kind"] == name
        assert not set(record) & set(registry.fixed(name))  # what the name fixes is the name's
        assert registry.from_record(json.loads(json.dumps(record))) == made
    widened = cores.make("tlb", d_model=32, chunk_size=4)
    assert cores.CORES.name_of(widened) == ("tlb", {"d_model": 32, "chunk_size": 4})
    assert cores.CORES.name_of(cores.make("tlb", num_state=0, chunk_size=128)) == ("transformer", {})
    with pytest.raises(ValueError, match="core 'lstm' has no setting 'width'; its settings: hidden, weight_init"):
        cores.CORES.refuse_unknown("lstm", ["width"])


REGISTRIES = {
    "memrl.cores": "memrl.cores.base:CORES",
    "memrl.tasks": "memrl.tasks.base:TASKS",
    "memrl.envs": "memrl.envs.base:ENVS",
    "memrl.experiments": "memrl.experiments.base:EXPERIMENTS",
    "memrl.analysis": "memrl.analysis:ANALYSES",
}
"""each package whose modules register names -> its registry, which lists those modules and imports
them when first asked (the one way a package's names are found)"""


@pytest.mark.parametrize("package", REGISTRIES)
def test_a_registry_lists_every_module_of_its_package_that_registers(package):
    module, registry = REGISTRIES[package].split(":")
    listing = (
        f"import importlib, pkgutil, {package} as package; from {module} import {registry} as registry; "
        "asked = set(registry.names()); "
        "[importlib.import_module(f'{package.__name__}.{m.name}') for m in pkgutil.iter_modules(package.__path__)]; "
        "print(sorted(set(registry.names()) - asked))"
    )
    found = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]", f"names registered by modules {module} does not list: {found.stdout}"


def test_the_scripted_policies_list_every_module_that_registers_some():
    listing = (
        "import importlib, pkgutil, memrl.envs as package; "
        "from memrl.envs.scripted_policy import registered_policies; asked = set(registered_policies()); "
        "[importlib.import_module(f'memrl.envs.{m.name}') for m in pkgutil.iter_modules(package.__path__)]; "
        "print(sorted(set(registered_policies()) - asked))"
    )
    found = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]", f"policies registered by modules POLICY_MODULES does not list: {found.stdout}"


def test_a_listed_module_that_does_not_exist_fails_loudly():
    registry = Registry("widget", modules=("memrl.no_such_module",))
    with pytest.raises(ModuleNotFoundError, match="memrl.no_such_module"):
        registry.names()


def test_a_registry_first_asked_inside_a_trace_leaves_its_modules_arrays_concrete(tmp_path, monkeypatch):
    """BoxWorld's palette, made when its module was imported by a registry first asked inside an
    ``eval_shape`` (the planner-distance training's), was that trace's tracer, and the next test in
    the process to render a level failed with an UnexpectedTracerError."""
    import jax
    import jax.numpy as jnp

    (tmp_path / "memrl_test_palette.py").write_text(
        "import jax.numpy as jnp\nfrom memrl.registry import Registry\nPALETTE = jnp.arange(3.0)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry("widget", modules=("memrl_test_palette",))
    jax.eval_shape(lambda x: x + len(registry.names()), jnp.zeros(2))
    palette = sys.modules.pop("memrl_test_palette").PALETTE
    assert not isinstance(palette, jax.core.Tracer)
    np.testing.assert_array_equal(jax.jit(lambda i: palette[i])(jnp.array([2, 0])), [2.0, 0.0])


def test_a_listed_module_imported_on_its_own_registers_without_importing_its_siblings():
    """Were it to import them, a sibling that imports it back would find it half made (importing
    ``memrl.analysis.planner_distance_training`` first failed so); a registration from anywhere else
    imports them first, so that a built-in name is refused there (as ``lstm`` is above)."""
    first = "import memrl.analysis.planner_distance_training as m; print(m.train_planner_on_distances.__name__)"
    done = subprocess.run([sys.executable, "-c", first], capture_output=True, text=True)
    assert done.stdout.strip() == "train_planner_on_distances", done.stderr[-2000:]
    registry = Registry("widget", modules=("memrl.no_such_module",))
    with pytest.raises(ModuleNotFoundError, match="memrl.no_such_module"):
        registry.register("gear", dict)


def test_a_name_that_fixes_a_keyword_its_environment_does_not_hold_is_refused():
    """What a config records is read off the environment, so a name's fixed settings and defaults
    must be settings the environment holds (an old ``make_variant("T-LN")``-style factory's
    ``variant`` is not)."""
    from memrl.envs.base import EnvironmentRegistry
    from memrl.envs.tmaze import TMaze

    registry = EnvironmentRegistry("environment")
    registry.register(
        "short-tmaze", lambda variant, **settings: TMaze.from_settings(**settings), fixed=dict(variant="T-LN")
    )
    with pytest.raises(ValueError, match="'short-tmaze' fixes or defaults variant, which a TMaze does not hold"):
        registry.make("short-tmaze", maze_length=3)


def test_a_paper_sized_core_names_a_small_size_that_builds():
    import jax
    import jax.numpy as jnp
    import numpy as np

    def parameters(core) -> int:
        x, reset = jnp.zeros((2, 8)), jnp.zeros((2,), bool)
        shapes = jax.eval_shape(lambda: core.init(jax.random.PRNGKey(0), core.initialize_carry(None, (2,)), x, reset))
        return sum(int(np.prod(leaf.shape)) for leaf in jax.tree_util.tree_leaves(shapes))

    sized = [name for name in cores.names() if cores.small(name)]
    assert sized == ["htm"] and cores.small("lstm") == {}
    paper, small = parameters(cores.make("htm")), parameters(cores.make("htm", **cores.small("htm")))
    assert paper > 15e6 and small < paper / 100
