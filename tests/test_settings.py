"""Settings of registered cores, environments and tasks as tyro reads them: listed for every entry,
defaults that fit their declared types, a meaning for each core's, and the check that refuses
unknown names and wrong types."""

import pytest

from memrl import cores, envs, tasks
from memrl.settings import check_settings, fits, help_of, settings_of

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
        assert fits(setting.default, setting.type), (name, setting)


@pytest.mark.parametrize("name", cores.names())
def test_every_setting_of_a_core_says_what_it_means(name):
    """``memrl list --core NAME`` and ``core:NAME --help`` show each setting's docstring as its meaning."""
    assert [s.name for s in settings_of(cores.CORES, name) if not help_of(s)] == []


def test_fits_reads_literals_unions_numbers_and_tuples():
    from typing import Literal

    assert fits("max", Literal["max", "avg"]) and not fits("min", Literal["max", "avg"])
    assert fits(None, int | None) and fits(3, int | None) and not fits("3", int | None)
    assert fits(3, float) and not fits(True, float) and not fits(1, bool) and not fits(2.0, int)
    assert fits((1, 2), tuple[int, ...]) and fits((), tuple[int, ...]) and not fits((1, "2"), tuple[int, ...])
    assert fits((1, 2.5), tuple[int, float]) and not fits((1,), tuple[int, float]) and not fits([1, 2], tuple[int, ...])
    assert not fits((None,) * 4, tuple[int, int, int, int])  # Craftax's fractal_noise_angles default


def test_the_check_names_what_is_wrong_and_what_is_allowed():
    check_settings(cores.CORES, "gtrxl", {"d_model": 64, "gate_bias": 1}, "--core-args")  # an int is a float
    with pytest.raises(
        ValueError, match=r"core 'gtrxl' has no setting 'layers' \(--core-args\); its settings: num_layers, d_model"
    ):
        check_settings(cores.CORES, "gtrxl", {"layers": 1}, "--core-args")
    with pytest.raises(ValueError, match=r"setting 'straight_through' must be bool, got 'yes'"):
        check_settings(cores.CORES, "amrl-max", {"straight_through": "yes"}, "--core-args")
    with pytest.raises(ValueError, match=r"core 'gtrxl' fixes gated by its name \(--core-args\); choose another core"):
        check_settings(cores.CORES, "gtrxl", {"gated": False}, "--core-args")
    with pytest.raises(ValueError, match=r"environment 'tmaze/T-LN' setting 'timeout' must be int, got 1.5"):
        check_settings(envs.ENVS, "tmaze/T-LN", {"timeout": 1.5}, "--env-args")
