"""Run folders of every config.json format memrl has written read, evaluate and train on
(``run.config_upgrade.upgrade``; the folders' provenance is in tests/data/run_formats/README.md)."""

import dataclasses
import shutil
from pathlib import Path

import pytest

from memrl.learn.ppo_config import PPOConfig
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.config_upgrade import components_merged, upgrade
from memrl.run.final_agents import evaluation_lines
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds

FORMATS = Path(__file__).parents[1] / "data" / "run_formats"
READ_AS = {
    "ppo-names": {"core": {"kind": "gru", "hidden": 4}, "env": {"kind": "tmaze/T-L", "maze_length": 4}},
    "impala-names": {"core": {"kind": "lstm", "hidden": 4}, "env": {"kind": "tmaze/T-L"}},
    "supervised-names": {"core": {"kind": "gru", "hidden": 4}, "task": {"kind": "copying"}},
    "supervised-warmup-pai-model": {
        "core": {"kind": "htm-pai", "d_model": 8, "num_heads": 2, "mlp_dim": 8, "k": 2, "num_layers": 1},
        "task": {"kind": "pai", "num_chains": 2, "chain_length": 3},
        "stages": ["2 direct_fraction=1.0"],
    },
}
"""what each folder's config reads as (the fields named; a component's settings those named)"""


def test_every_format_has_a_folder():
    assert sorted(p.name for p in FORMATS.iterdir() if p.is_dir()) == sorted(READ_AS)


@pytest.mark.parametrize("name", sorted(READ_AS))
def test_a_run_folder_of_an_earlier_format_reads_evaluates_and_trains_on(name, tmp_path):
    folder = RunFolder(tmp_path / name)
    shutil.copytree(FORMATS / name, folder.path)
    config = folder.load_config()
    record = config.record()
    for field, value in READ_AS[name].items():
        held = record[field]
        assert ({k: held[k] for k in value} if isinstance(value, dict) else held) == value, field
    assert type(config).from_dict(record) == config  # today's record of it reads back alike

    (line,) = evaluation_lines(folder, 16, 0, {})
    assert line.startswith(f"seed 0 (update {config.num_updates})"), line

    longer = dataclasses.replace(config, total_steps=2 * config.total_steps)
    resumed = RunFolder(tmp_path / "resumed")
    resumed.prepare(longer)
    shutil.copytree(folder.seed_dir(0), resumed.seed_dir(0))
    train_seeds(longer, resumed, [0])
    assert resumed.checkpoint_update(0) == longer.num_updates == 2 * config.num_updates


def test_settings_by_name_merge_into_the_component_they_change():
    """A sweep spec's base spells a change to a saved component so, over its record or a name; its
    ``core: htm`` is today's HTM (only a run folder's record without embed_dim is the PAI model's)."""
    saved = {"core": {"kind": "gru", "hidden": 8}, "core_args": {"hidden": 16}}
    assert components_merged(PPOConfig, saved) == {"core": {"kind": "gru", "hidden": 16}}
    assert components_merged(PPOConfig, {"env_args": {"maze_length": 5}}) == {
        "env": {"kind": PPOConfig.default_name("env"), "maze_length": 5}
    }
    assert components_merged(SupervisedConfig, {"core": "htm"}) == {"core": {"kind": "htm"}}
    assert upgrade(SupervisedConfig, {"warmup_updates": 0, "warmup_task_args": {}}) == {}
    with pytest.raises(ValueError, match="core_args must be settings by name"):
        components_merged(PPOConfig, {"core_args": ["hidden", 8]})
