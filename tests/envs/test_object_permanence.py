"""Object permanence (HTM's hiding task, a 2D analogue): rules on hand-built episodes, the
scripted policies' returns."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs import object_permanence as op
from memrl.envs.object_permanence_policies import EAST, NORTH, SOUTH, WEST, guesser, oracle
from memrl.envs.scripted_policy import episode_rewards

ENV = envs.make("object-permanence/delay0", observation="cells")
DELAY = 3
# boxes in columns 2, 5, 8 holding kinds 4, 7, 9; revealed in the order 1, 0, 2; the instruction names box 2's kind
LAYOUT = dict(box_cols=[2, 5, 8], kinds=[4, 7, 9], order=[1, 0, 2], target=2, delay=DELAY)
LIDS_CLOSE = 3 * (op.REVEAL_FRAMES + DELAY)
step = jax.jit(
    lambda state, action: ENV.step_env(jax.random.PRNGKey(0), state, jnp.array([action]), ENV.default_params)
)
board = jax.jit(ENV.board)


def play(state, actions):
    """(state, [(obs, reward, terminated, truncated)] per action)."""
    seen = []
    for action in actions:
        obs, state, reward, terminated, truncated, _ = step(state, action)
        seen.append((obs, float(reward), bool(terminated), bool(truncated)))
    return state, seen


def test_each_object_jumps_out_of_its_box_three_times_in_turn_while_the_agent_is_held():
    state = ENV.initial_state(**LAYOUT)
    for frame in range(LIDS_CLOSE + 2):
        b = np.asarray(board(state))
        turn, within = divmod(frame, op.REVEAL_FRAMES + DELAY)
        out = frame < LIDS_CLOSE and within < op.REVEAL_FRAMES and within % 4 < 2
        box = LAYOUT["order"][turn] if out else None
        expected_row = [op.WALL] + [op.FLOOR] * 9 + [op.WALL]
        if box is not None:
            expected_row[LAYOUT["box_cols"][box]] = op.FIRST_OBJECT + LAYOUT["kinds"][box]
        assert b[op.OBJECT_ROW].tolist() == expected_row, frame
        lid = op.OPEN_BOX if frame < LIDS_CLOSE else op.CLOSED_BOX
        assert [b[op.BOX_ROW, c] for c in LAYOUT["box_cols"]] == [lid] * 3, frame
        if frame < LIDS_CLOSE:
            assert tuple(np.asarray(state.agent)) == op.AGENT_START, frame  # held
        state, _ = play(state, [NORTH])


def looked_away():
    """Through the reveal, north into the boxes, then south until they are out of view: (state,
    what each phase's steps gave)."""
    state, reveal = play(ENV.initial_state(**LAYOUT), [NORTH] * LIDS_CLOSE)
    state, north = play(state, [NORTH] * 4)
    at_boxes = tuple(np.asarray(state.agent))
    state, south = play(state, [SOUTH] * 5)
    return state, reveal, north, at_boxes, south


def test_look_away_then_the_instruction_names_the_target():
    state, reveal, north, at_boxes, south = looked_away()
    assert {int(obs["language"]) for obs, *_ in reveal[:-1]} == {op.WATCH} and sum(r for _, r, _, _ in reveal) == 0
    assert int(reveal[-1][0]["language"]) == op.LOOK_BACK
    # boxes block before the choice: north from (7, 5) stops at (4, 5), under the box in column 5
    assert at_boxes == (4, 5) and not any(t for *_, t, _ in north) and sum(r for _, r, _, _ in north) == 0
    # south until no box is in view: row 9 (6 rows from the boxes); 0.3 once, then the target's kind is named
    np.testing.assert_allclose([r for _, r, _, _ in south], [0.0, 0.0, 0.0, 0.0, op.LOOK_REWARD])
    assert tuple(np.asarray(state.agent)) == (9, 5)
    assert [int(obs["language"]) for obs, *_ in south] == [op.LOOK_BACK] * 4 + [2 + LAYOUT["kinds"][LAYOUT["target"]]]


@pytest.mark.parametrize(("column_moves", "box", "reward"), [(3, 8, 1.0), (-3, 2, 0.0)])
def test_stepping_onto_a_box_ends_the_episode_with_1_for_the_named_one(column_moves, box, reward):
    state = looked_away()[0]
    state, _ = play(state, [EAST if column_moves > 0 else WEST] * abs(column_moves))
    state, seen = play(state, [NORTH] * 6)
    assert [r for _, r, _, _ in seen] == [0.0] * 5 + [reward] and seen[-1][2] and not any(t for *_, t, _ in seen[:-1])
    assert tuple(np.asarray(state.agent)) == (op.BOX_ROW, box)


def test_an_episode_without_a_choice_is_truncated_100_frames_after_the_lids_close():
    _, seen = play(ENV.initial_state(**LAYOUT), [NORTH] * (LIDS_CLOSE + op.CHOICE_FRAMES))
    assert [t for *_, t in seen].index(True) == LIDS_CLOSE + op.CHOICE_FRAMES - 1 and not any(
        term for _, _, term, _ in seen
    )


def test_observations_are_the_egocentric_crop_in_both_forms():
    state = ENV.initial_state(**LAYOUT)
    cells = np.asarray(ENV.observe(state)["image"])
    assert cells.shape == (11, 11, op.CELL_CHANNELS) and cells[5, 5, 1] == 1  # the agent at the centre
    assert cells[5 + op.BOX_ROW - 7, 5 + 2 - 5, 2] == 1  # the open box of column 2, 4 rows up and 3 left
    image = envs.make("object-permanence/delay0")
    picture = np.asarray(image.observe(state)["image"])
    assert picture.shape == (99, 99, 3) and picture.dtype == np.uint8
    assert (picture[45:54, 45:54] == 255).all()  # the agent's cell is white


def test_settings_are_checked():
    with pytest.raises(ValueError, match="num_boxes must be in 1..9"):
        envs.make("object-permanence/delay0", num_boxes=10)
    with pytest.raises(ValueError, match="observation must be"):
        envs.make("object-permanence/mixed", observation="rgb")
    with pytest.raises(ValueError, match="delays_seconds must be one or more delays >= 0"):
        op.ObjectPermanence(delays_seconds=(-1,))
    with pytest.raises(ValueError, match="delays_seconds must be one or more"):
        op.ObjectPermanence(delays_seconds=())


def test_adjacent_boxes_stand_around_the_start_column_and_the_oracle_takes_them():
    """``box_layout="adjacent"``: the boxes on the columns around the agent's start, every episode
    (only their objects, the order and the target drawn); the oracle's first choice move decides."""
    for boxes, columns in ((3, [4, 5, 6]), (2, [5, 6]), (9, list(range(1, 10)))):
        adjacent = envs.make("object-permanence/delay0", observation="cells", num_boxes=boxes, box_layout="adjacent")
        states = jax.vmap(lambda k: adjacent.reset_env(k, adjacent.default_params)[1])(
            jax.random.split(jax.random.PRNGKey(2), 64)
        )
        assert np.all(np.asarray(states.box_cols)[:, :boxes] == columns)
        assert len({tuple(k) for k in np.asarray(states.kinds)[:, :boxes]}) > 32  # the objects are drawn
    adjacent = envs.make("object-permanence/mixed", observation="cells", box_layout="adjacent")
    longest = 3 * (op.REVEAL_FRAMES + 30 * op.STEPS_PER_SECOND) + op.CHOICE_FRAMES
    best = jax.jit(lambda k: episode_rewards(adjacent, oracle(adjacent), k, 16, longest))(jax.random.PRNGKey(0))
    np.testing.assert_allclose(np.asarray(best.sum(-1)), 1.3, rtol=1e-6)
    with pytest.raises(ValueError, match="box_layout must be one of"):
        op.ObjectPermanence(box_layout="row")


def test_the_oracle_gets_1_3_and_a_guess_0_3_plus_a_third():
    mixed = envs.make("object-permanence/mixed", observation="cells")
    longest = 3 * (op.REVEAL_FRAMES + 30 * op.STEPS_PER_SECOND) + op.CHOICE_FRAMES
    best = jax.jit(lambda k: episode_rewards(mixed, oracle(mixed), k, 16, longest))(jax.random.PRNGKey(0)).sum(-1)
    np.testing.assert_allclose(np.asarray(best), 1.3, rtol=1e-6)
    guessed = jax.jit(lambda k: episode_rewards(ENV, guesser(ENV), k, 400, LIDS_CLOSE + op.CHOICE_FRAMES))(
        jax.random.PRNGKey(1)
    ).sum(-1)
    assert np.all(np.isclose(guessed, 0.3) | np.isclose(guessed, 1.3))
    assert abs(float(guessed.mean()) - (0.3 + 1 / 3)) < 0.08  # 400 episodes: the mean's standard deviation is 0.024


def test_the_oracles_decisions_are_its_walk_to_a_box_after_the_instruction():
    """``decides`` (what cloning weighs, clone_decision_weight) marks the steps from the instruction
    on, each a move toward the named box; the reveal and the look away are not marked."""
    policy, state = oracle(ENV), ENV.initial_state(**LAYOUT)
    obs, memory, marked, named = ENV.observe(state), policy.initial_memory(state), [], []
    for _ in range(LIDS_CLOSE + 20):
        action, memory = policy.act(jax.random.PRNGKey(0), obs, memory)
        marked.append(bool(policy.decides(obs)))
        named.append(int(obs["language"]) > op.LOOK_BACK)
        obs, state, reward, terminated, _, _ = step(state, int(action[0]))
        if terminated:
            break
    assert reward == 1.0 and marked == named
    assert marked.index(True) > LIDS_CLOSE and all(
        marked[marked.index(True) :]
    )  # the walk: (9, 5) to box 2 at column 8
    assert sum(marked) == 3 + 6  # three steps east, six north onto the box
