"""HTM's rapid word learning claim decided by imitation (issue 84 §2): Lampinen et al. 2021, Sec. 3.3
and Fig. 5c-e (trained with 0-2 distractor phases, only HTM recalls a new word after 20 distractor
phases, about 90% right, and across whole later episodes; TrXL degrades, the LSTM does not learn the
task). The RL row (``htm-word-learning``) trains 500k steps a run on the CPU and never leaves
chance; here every memory is told the answer instead.

The task is memrl's 2-D ``word-learning`` (cells view) with one change, not about memory: each test
is one move (``test_layout "around"``: the three named objects on three of the agent's eight
neighbours), the change that made Passive Visual Match's choice learnable by imitation
(``htm-pvm-imitation``; with objects anywhere the clone must join the remembered word's kind with
where each object lies, which no clone learnt there). The learning phase (lift each object, hear its
new name) and the distractor phases (lift the named fixed object) are the task's own.

HTM's three memories at ``htm-word-learning``'s cpu sizes (width 64, 2 layers; HTM chunks of 16
overlapping by 1, read 16 at a time; the GTrXL keeps 128 steps; an LSTM of 128) clone the
word-learning ``oracle``, the teacher acting, with the test's step weighed ``clone_decision_weight``
30 and the value loss 0, for ``UPDATES`` updates of 16 environments × 128 steps on the training
level (0, 1 or 2 distractor phases). Each final agent then acts frozen and greedy in fresh episodes
with 0, 2, 10 and 20 distractor phases and in super-episodes of 2 (the last test asks for a word of
the first sub-episode), with its memory and with it reset before every step. 0 phases is the
positive control for HTM and the GTrXL (Fig. 11a: HTM and TrXL learn the training tasks; the paper's
LSTMs "fail to even learn the train tasks", so the LSTM's clone is checked below HTM's there, not
above chance); 20 phases, ten times the longest trained, is the central level (Fig. 5c).
"""

from __future__ import annotations

from pathlib import Path

from memrl import envs
from memrl.agents.paper_agents import HTM_AGENT, HTM_SIZES, HTM_VISUAL
from memrl.envs.base import ENVS
from memrl.envs.word_learning import TEST_REWARD, TIME_LIMIT
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.htm_pvm_imitation import cloning
from memrl.experiments.htm_word_learning import CHUNK_OVERLAP, CHUNK_SETTINGS, CHUNK_SIZE, MEMORY_LENGTH, TOP_K
from memrl.experiments.paper_settings import HTM_CLONING_SETTINGS
from memrl.learn.impala_config import ImpalaConfig

CHANCE = 1 / 3
TEST_LEVELS = ("distractors0", "distractors2", "distractors10", "distractors20", "episodes2")
POSITIVE_CONTROL, CENTRAL = "distractors0", "distractors20"
UPDATES = 600
"""not yet sized: in the pilots (seed 0) every clone lifted the named object at chance with no
distractor, the LSTM's after 480 updates (as the paper's LSTMs fail the training tasks), the GTrXL's
after 1,200 and HTM's after 900; and trained on the test's move alone (``memrl analyze
decision-probe``), neither the GTrXL nor HTM left chance in 192,000 labelled episodes
(docs/results/htm.md)"""
EVALUATION_STEPS = TIME_LIMIT
"""each final agent acts one time limit in its 16 environments at each level: every environment
finishes at least one episode (an episode cut off by the time limit counts as wrong)"""


def runs(**overrides) -> dict[str, ImpalaConfig]:
    """HTM, the GTrXL and the LSTM cloning the oracle on the training level (``overrides``: config
    fields, for pilots)."""
    env = envs.make("word-learning/train", observation="cells", test_layout="around")
    stride = CHUNK_SIZE - CHUNK_OVERLAP
    memories = HTM_SIZES["cpu"].memories(
        MEMORY_LENGTH["cpu"],
        chunk_size=CHUNK_SIZE,
        chunk_overlap=CHUNK_OVERLAP,
        num_chunks=TIME_LIMIT // stride + 1,
        k=TOP_K,
    )
    common = dict(HTM_AGENT, **HTM_VISUAL["cells"], **cloning(UPDATES)) | overrides
    return {f"train/{name}": ImpalaConfig(env=env, core=core, **common) for name, core in memories.items()}


def right_tests(folders: dict, out: Path | None = None, steps: int = EVALUATION_STEPS) -> dict:
    """{"fraction_correct": ..., "fraction_correct_without_memory": ...}: per run and test level, the
    fraction of finished episodes whose last test lifts the named object, the final agents frozen
    and greedy, with their memory and with it reset before every step."""
    from memrl.experiments.evaluations import frozen_choices

    return frozen_choices(
        folders,
        TEST_LEVELS,
        lambda config, level: ENVS.variant(config.env, f"word-learning/{level}"),
        lambda reward: reward == TEST_REWARD,
        steps,
        f"last test lifts the named object (chance {CHANCE:.2f})",
    )


def expectations() -> tuple[Expectation, ...]:
    at = lambda level: ("fraction_correct", level)
    memories = (("htm", "HTM"), ("gtrxl", "the GTrXL"), ("lstm", "the LSTM"))
    return (
        *(
            Expectation(
                f"train/{core}",
                ">",
                CHANCE,
                f"{name}'s clone lifts a word's object with no distractor phase, above chance: the positive control "
                "(Fig. 11a: HTM and TrXL learn the training tasks)",
                evaluated=at(POSITIVE_CONTROL),
                learning=core == "htm",
            )
            for core, name in memories[:2]
        ),
        Expectation(
            "train/htm",
            ">",
            None,
            "HTM's clone lifts a word's object with no distractor phase more often than the LSTM's (Fig. 11: "
            "LSTMs fail to learn even the training tasks), over the same seeds and episodes",
            evaluated=at(POSITIVE_CONTROL),
            against="train/lstm",
            paired=True,
        ),
        Expectation(
            "train/htm",
            ">",
            CHANCE,
            "HTM's clone recalls a new word after 20 distractor phases, above chance (Fig. 5c: about 90%)",
            evaluated=at(CENTRAL),
            central=True,
        ),
        *(
            Expectation(
                "train/htm",
                ">",
                None,
                f"HTM's clone recalls a word after 20 distractor phases more often than {name}'s (Fig. 5c), "
                "over the same seeds and episodes",
                evaluated=at(CENTRAL),
                against=f"train/{core}",
                paired=True,
                central=True,
            )
            for core, name in memories[1:]
        ),
        Expectation(
            "train/htm",
            ">",
            None,
            "HTM's clone recalls a word of the previous episode more often than the GTrXL's (Fig. 5d-e)",
            evaluated=at("episodes2"),
            against="train/gtrxl",
            paired=True,
        ),
    )


SETTINGS = (
    PaperSetting(
        "learner",
        "V-trace with Table 1's Words loss weights (IMPALA)",
        "teacher",
        f"an imitation analogue: every memory clones word learning's oracle (the teacher acting) for {UPDATES:,} "
        "updates, the test step weighted 30 (clone_decision_weight), the value loss 0 while cloning (clone_value_coef)",
    ),
    PaperSetting(
        "environment",
        "Hill et al.'s 3D word-learning rooms (B.3)",
        "env",
        "memrl's 2-D analogue in Ballet's room, the cells view; each test one move (test_layout 'around': the "
        "objects on the agent's neighbours), as htm-pvm-imitation's choice",
    ),
    PaperSetting("training distractor phases", "0, 1 or 2 (Sec. 3.3)", "env"),
    PaperSetting("memory width (state dimension)", "512 (Table 1)", "core.d_model", "htm-word-learning's cpu size"),
    PaperSetting("memory layers", "4 (Table 1)", "core.num_layers", "htm-word-learning's cpu size"),
    *CHUNK_SETTINGS,
    PaperSetting(
        "TrXL memory (extra length)",
        "256 (Table 1)",
        "core.memory_length",
        "128, htm-word-learning's cpu size",
    ),
    PaperSetting("LSTM size", "state dimension 512 (Table 1)", "core.hidden", "htm-word-learning's cpu size"),
    PaperSetting("batch (trajectories per update)", "32 (Table 1)", "num_envs", "16 on 2 cores"),
    *HTM_CLONING_SETTINGS,
    PaperSetting("seeds", "3 (Fig. 5)", "seeds", "3 fresh seeds, 500-502"),
)


HTM_WORD_LEARNING_IMITATION = Experiment(
    name="htm-word-learning-imitation",
    version=1,
    description="HTM, GTrXL and LSTM clone word learning's oracle on 0-2 distractor phases, then recall words "
    "frozen after 0-20 phases and across an episode",
    reproduces="Lampinen et al. 2021, Sec. 3.3 and Fig. 5c-e (rapid word learning), as an imitation analogue",
    finding="HTM's clone recalls new words after 20 distractor phases; the LSTM's and the GTrXL's do not",
    kind="imitation analogue",
    paper_steps=None,
    runs=runs(),
    expectations=expectations(),
    evaluation=right_tests,
    evaluation_reads_agents=True,
    keeps_results=True,  # a part: ``--runs train/htm``
    settings=SETTINGS,
)

register("htm-word-learning-imitation", lambda: HTM_WORD_LEARNING_IMITATION)
