"""TLB and a ViT of its kind on image classification as a sequence of patches (Didolkar et al. 2022,
Sec. 3.1, Tables 1-2, App. 7.1), on scikit-learn's 8×8 digits in place of CIFAR-10.

Finding (Table 1): ViT + TLB 94.79% against ViT's 93.75% on CIFAR-10 at 64×64 (CIFAR-100: 79.17
against 69.53); Table 2 (3 seeds): with no past info (the perceptual module never reads the state)
91.30%, with no top-down conditioning (a separate state per layer) 93.75%.

CIFAR cannot be downloaded here; the stand-in is the 1,797 8×8 digits that scikit-learn ships
(``tasks.digits``: 1,500 train, 297 held out), read pixel by pixel (64 steps, chunks of 16 as in the
paper; the cpu preset reads 16 patches of 2×2 in chunks of 4; the paper: 256 patches of 4×4 pixels). Both models are the shared sequence model (a linear map of each pixel -> core ->
linear readout at the last step) with memrl's ``tlb`` core in ViT's form (``causal=False``: every
step of a chunk sees the whole chunk); the ViT baseline is the same code without the state over the
whole image in one block. As the paper's, the TLB models read the class from the mean of the
final state vectors through an MLP (the sequence model's ``readout="state"``); the ViT reads it
from the last step's output, which has attended over the whole image, through the same MLP (one
ReLU layer of the model's width; the paper states neither). Scored by each final model on 29,700
draws from the held-out images (each image about 100 times).
"""

from __future__ import annotations

from memrl.cores.tlb import TemporalLatentBottleneck
from memrl.experiments.base import Experiment, PaperSetting, register
from memrl.experiments.evaluations import above_chance, held_out_evaluation, held_out_expectation
from memrl.learn.supervised_config import SupervisedConfig
from memrl.tasks.digits import NUM_IMAGES, Digits

PRESETS = ("cpu", "paper")
TEST_IMAGES = 297
HELD_OUT_DRAWS = 100 * TEST_IMAGES
EPOCHS = 100
CIFAR_TRAINING_IMAGES = 50_000
"""the paper trains 100 epochs (7.1) of CIFAR-10's 50,000 training images: its budget in images"""
PATCH_SIZE = {"paper": 1, "cpu": 2}
"""pixels per patch side: 64 steps of one pixel (paper preset), 16 of 2×2 (cpu)"""
CHUNK = {"paper": 16, "cpu": 4}
"""TLB's chunk: the paper's 16 steps; on the cpu, a quarter of the 16 patches (4 chunks per image, as in the paper preset)"""

WIDTH = {
    "paper": dict(d_model=256, mlp_dim=512, num_heads=4),
    "cpu": dict(d_model=64, mlp_dim=128, num_heads=4),
}
TLB = dict(num_state=5, num_reads=3, self_per_read=2, causal=False)  # 6 layers, a read after every 2
VIT = dict(num_reads=9, self_per_read=1, causal=False)  # 9 layers over the whole image in one block
SEEDS = {"paper": 3, "cpu": 3}


def image_runs(preset: str) -> dict[str, SupervisedConfig]:
    task = Digits(patch_size=PATCH_SIZE[preset], test_size=TEST_IMAGES)
    tlb = WIDTH[preset] | TLB | dict(chunk_size=CHUNK[preset])
    vit = TemporalLatentBottleneck(**WIDTH[preset] | VIT, num_state=0, chunk_size=task.length)
    training = dict(
        task=task,
        batch_size=128,
        lr=1e-3,
        weight_decay=0.05,
        head_widths=(WIDTH[preset]["d_model"],),
        total_steps=EPOCHS * (NUM_IMAGES - TEST_IMAGES),
        updates_per_chunk=50,
        embed_dim=WIDTH[preset]["d_model"],
        seeds=SEEDS[preset],
    )
    ablation = lambda state_reads: SupervisedConfig(
        core=TemporalLatentBottleneck(**tlb, state_reads=state_reads), readout="state", **training
    )
    return {
        "digits/tlb": ablation("top-down"),
        "digits/vit": SupervisedConfig(core=vit, **training),
        "digits/tlb no past info": ablation("none"),
        "digits/tlb no top-down": ablation("own-layer"),
    }


SETTINGS = (
    PaperSetting(
        "data",
        "CIFAR-10 and CIFAR-100 at 64×64 (Table 1)",
        "task",
        "nothing can be downloaded here: scikit-learn's 1,797 8×8 digits",
        fixed="digits: 1,500 train, 297 held out",
    ),
    PaperSetting(
        "patches",
        "4×4 pixels, raster order: 256 per image (7.1)",
        "task.patch_size",
        "8×8 images: 64 pixels one per step; cpu: 16 patches of 2×2 (a quarter of the compute)",
    ),
    PaperSetting(
        "layers",
        "ViT + TLB: 6, R = 2 (a state read after every 2 self-attention layers); ViT: 9 (7.1)",
        "",
        fixed="ViT + TLB: 6, 3 reads (R = 2); ViT: 9",
    ),
    PaperSetting("width, FFN, heads", "not stated (9.6M and 10.3M parameters)", "core.d_model", "cpu: 64 wide"),
    PaperSetting(
        "chunk size",
        "16 patches (7.1): 16 chunks per image",
        "core.chunk_size",
        "4 chunks per image (cpu: of 4 patches); the ViT reads the whole image as one block",
    ),
    PaperSetting("state vectors", "5 (7.1)", "core.num_state"),
    PaperSetting("attention in a chunk", "bidirectional (ViT)", "", fixed="bidirectional (causal=False)"),
    PaperSetting("readout", "TLB: mean of the final state vectors, then an MLP (3.1); ViT: not stated", "readout"),
    PaperSetting("readout MLP", "not stated", "head_widths", "one ReLU layer of the model's width, for every model"),
    PaperSetting(
        "Table 2 ablations",
        "no past info: the TLB does not talk to the perceptual module; no top-down conditioning: a separate TLB at every layer (3.1)",
        "core.state_reads",
        "own-layer: each read's state is updated from that read's input activations",
    ),
    PaperSetting("optimiser, learning rate", "AdamW, 1e-3 (7.1)", "lr"),
    PaperSetting("weight decay", "5e-2 (7.1)", "weight_decay"),
    PaperSetting("batch", "128 (7.1)", "batch_size"),
    PaperSetting(
        "training", "100 epochs (7.1)", "total_steps", fixed="100 epochs' worth of images, drawn with replacement"
    ),
    PaperSetting("seeds", "3 (Table 1)", "seeds"),
    PaperSetting(
        "transfer to 128×128",
        "trained at 64×64, tested at 128×128 (Table 1)",
        "",
        "not measured: 8×8 digits have no larger version",
        fixed="none",
    ),
    PaperSetting(
        "score",
        "test accuracy",
        "",
        fixed="each final model on 29,700 draws from the 297 held-out images, mean over seeds",
    ),
)


def tlb_image(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    runs = image_runs(preset)
    return Experiment(
        name="tlb-image",
        version=3,
        changes=(
            "a learning check (above a uniform guess among the 10 digits); the central claim worded 'above', as"
            " Table 1 says (v2 said 'at least as' and tested it as superiority alike); every check on per-seed"
            " held-out accuracies (v2's record holds pooled values that decide nothing); the paper's budget stated"
            " (100 epochs of CIFAR-10's 50,000 images)"
        ),
        description="ViT + TLB, ViT and Table 2's two ablations of TLB on 8x8 digits read patch by patch (a CIFAR stand-in)",
        reproduces="Didolkar et al. 2022, Table 1 (ViT + TLB above ViT) and Table 2 (above no past info and no top-down conditioning)",
        finding="ViT + TLB classifies images more accurately than ViT",
        paper_steps=EPOCHS * CIFAR_TRAINING_IMAGES,
        runs=runs,
        expectations=(
            above_chance("digits/tlb", runs["digits/tlb"].task, "ViT + TLB"),
            held_out_expectation(
                "digits/tlb",
                ">",
                None,
                "ViT + TLB more accurate than ViT (Table 1: 94.79 vs 93.75)",
                against="digits/vit",
                central=True,
            ),
            held_out_expectation(
                "digits/tlb",
                ">=",
                None,
                "reading the past helps (Table 2: 94.79 vs 91.30)",
                against="digits/tlb no past info",
            ),
            held_out_expectation(
                "digits/tlb",
                ">=",
                None,
                "top-down conditioning helps (Table 2: 94.79 vs 93.75)",
                against="digits/tlb no top-down",
            ),
        ),
        evaluation=held_out_evaluation(HELD_OUT_DRAWS, batch_size=TEST_IMAGES),
        settings=SETTINGS,
    )


register("tlb-image", tlb_image, presets=PRESETS)
