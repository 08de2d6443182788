"""Settings of registered cores, environments and tasks as tyro reads them: listed for every entry,
defaults that fit their declared types, a meaning for each core's; and the registries' check of
settings given by name, which refuses unknown names and values of other types than declared."""

import pytest

from memrl import cores, envs, tasks
from memrl.registry import of_type
from memrl.settings import help_of, settings_of

ENTRIES = (
    [(cores.CORES, n) for n in cores.names()]
    + [(tasks.TASKS, n) for n in tasks.names()]
    + [
        (envs.ENVS, n)
        for n in (
            "tmaze/T-LSO",
            "memory-planning/4x4",
            "graph-nav/5",
            "ballet/2_delay16",
            "pvm",
            "boxworld/viewport",
            "minipacman/viewport",
            "gymnax/CartPole-v1",
        )
    ]
)


@pytest.mark.parametrize("registry, name", ENTRIES, ids=[name for _, name in ENTRIES])
def test_every_entry_lists_settings_whose_defaults_fit_their_types(registry, name):
    settings = settings_of(registry, name)
    assert settings and len({s.name for s in settings}) == len(settings)
    for setting in settings:
        assert of_type(setting.default, setting.type), (name, setting)


@pytest.mark.parametrize("name", cores.names())
def test_every_setting_of_a_core_says_what_it_means(name):
    """``memrl list --core NAME`` and ``core:NAME --help`` show each setting's docstring as its meaning."""
    assert [s.name for s in settings_of(cores.CORES, name) if not help_of(s)] == []


def test_a_declared_type_is_read_through_literals_unions_numbers_and_every_item_of_a_tuple():
    from typing import Literal

    assert of_type("max", Literal["max", "avg"]) and not of_type("min", Literal["max", "avg"])
    assert of_type(None, int | None) and of_type(3, int | None) and not of_type("3", int | None)
    assert of_type(3, float) and not of_type(1, bool) and not of_type(2.0, int)
    assert (
        of_type((1, 2), tuple[int, ...]) and of_type((), tuple[int, ...]) and not of_type((1, 2, "3"), tuple[int, ...])
    )
    assert of_type((1, 2.5), tuple[int, float]) and not of_type((1,), tuple[int, float])
    assert not of_type([1, 2], tuple[int, ...])
    assert not of_type((None,) * 4, tuple[int, int, int, int])  # Craftax's fractal_noise_angles default


def test_the_check_names_what_is_wrong_and_what_is_allowed():
    cores.CORES.check_settings("gtrxl", {"d_model": 64, "gate_bias": 1}, "--core-args")  # an int is a float
    with pytest.raises(
        ValueError, match=r"core 'gtrxl' has no setting 'layers' \(--core-args\); its settings: num_layers, d_model"
    ):
        cores.CORES.check_settings("gtrxl", {"layers": 1}, "--core-args")
    with pytest.raises(ValueError, match=r"setting 'straight_through' must be true or false, got 'yes'"):
        cores.CORES.check_settings("amrl-max", {"straight_through": "yes"}, "--core-args")
    with pytest.raises(ValueError, match=r"core 'gtrxl' fixes gated by its name \(--core-args\); choose another core"):
        cores.CORES.check_settings("gtrxl", {"gated": False}, "--core-args")
    with pytest.raises(ValueError, match=r"environment 'tmaze/T-LN' setting 'timeout' must be an integer, got 1.5"):
        envs.ENVS.check_settings("tmaze/T-LN", {"timeout": 1.5}, "--env-args")
    with pytest.raises(ValueError, match=r"environment 'tmaze/T-LN' setting 'success_reward' must be a number"):
        envs.make("tmaze/T-LN", success_reward="4")  # a params field
    with pytest.raises(ValueError, match=r"core 'lstm' setting 'hidden' must be an integer, got '128'"):
        cores.make("lstm", hidden="128")
    with pytest.raises(ValueError, match=r"task 'copying' setting 'gap' must be an integer, got 2.5"):
        tasks.make("copying", gap=2.5)
