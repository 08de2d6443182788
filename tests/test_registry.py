import pytest

from memrl import cores
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
    with pytest.raises(TypeError, match="bad arguments for core 'lstm'"):
        cores.make("lstm", size=3)
