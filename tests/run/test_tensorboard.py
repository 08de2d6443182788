"""``--tensorboard``: each seed's metrics as TensorBoard scalars and a run's curves as an image, read
back from the event files."""

import struct
import sys

import pytest

from memrl import cores, tasks
from memrl.cli import main
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds


def read_events(directory):
    """(step, summary value) of every event file in ``directory`` (TFRecord framing: length, its
    CRC, the Event proto, its CRC)."""
    from tensorboardX.proto.event_pb2 import Event

    for path in sorted(directory.glob("events.out.tfevents.*")):
        data = path.read_bytes()
        while data:
            (length,) = struct.unpack("<Q", data[:8])
            event = Event.FromString(data[12 : 12 + length])
            data = data[12 + length + 4 :]
            for value in event.summary.value:
                yield event.step, value


def read_scalars(directory) -> dict[str, list[tuple[int, float]]]:
    """{tag: [(step, value), ...]} of the scalars in ``directory``'s event files."""
    scalars: dict[str, list[tuple[int, float]]] = {}
    for step, value in read_events(directory):
        scalars.setdefault(value.tag, []).append((step, value.simple_value))
    return scalars


def test_a_figure_is_written_as_an_image_of_its_size(tmp_path):
    pytest.importorskip("tensorboardX")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memrl.run.tensorboard import write_figure

    fig = plt.figure(figsize=(2, 1), dpi=50)
    fig.savefig(tmp_path / "curves.png")
    plt.close(fig)
    write_figure(tmp_path / "tb", "curves", tmp_path / "curves.png", 7)
    images = [
        (step, value.tag, value.image.width, value.image.height)
        for step, value in read_events(tmp_path / "tb")
        if value.HasField("image")
    ]
    assert images == [(7, "curves", 100, 50)]


def test_a_run_writes_every_metric_of_every_update_as_a_scalar_at_the_steps_done(tmp_path):
    pytest.importorskip("tensorboardX")
    config = SupervisedConfig(
        task=tasks.make("copying", gap=2, num_digits=2),
        core=cores.make("gru", hidden=8),
        embed_dim=8,
        batch_size=4,
        total_steps=4 * 4,
        updates_per_chunk=2,
    )
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    train_seeds(config, folder, [0], tensorboard=True)
    rows = folder.read_metrics(0)
    scalars = read_scalars(folder.seed_dir(0) / "tensorboard")
    assert (
        [step for step, _ in scalars["losses/loss"]] == [4, 8, 12, 16] == [row["sequences"] for row in rows]
    )  # batches of 4 sequences
    assert [value for _, value in scalars["losses/loss"]] == pytest.approx([row["loss"] for row in rows], rel=1e-6)
    assert [value for _, value in scalars["charts/accuracy"]] == pytest.approx(
        [row["accuracy"] for row in rows], rel=1e-6
    )
    measured = [row["sequences"] for row in rows if row["test_accuracy"] is not None]
    assert measured and [step for step, _ in scalars["eval/accuracy"]] == measured  # unmeasured updates are not logged
    assert [step for step, _ in scalars["charts/SPS"]] == [4, 8, 12, 16] and all(
        value > 0 for _, value in scalars["charts/SPS"]
    )


def test_tags_follow_cleanrl_and_stable_baselines3():
    from memrl.run.tensorboard import tag

    assert [
        tag(m)
        for m in ("episode_return", "value_loss", "entropy", "approx_kl", "test_accuracy", "episodes", "env_steps")
    ] == [
        "charts/episodic_return",
        "losses/value_loss",
        "losses/entropy",
        "losses/approx_kl",
        "eval/accuracy",
        "charts/episodes",
        "charts/env_steps",
    ]


@pytest.mark.parametrize("command", [["train-supervised"], ["reproduce", "tln-demo"]])
def test_without_tensorboardx_the_flag_is_refused_before_the_run_starts(command, monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # import fails as if not installed
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--tensorboard", "--out", str(tmp_path / "run")])
    assert exit_info.value.code == 2 and 'pip install "memrl[tensorboard]"' in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
