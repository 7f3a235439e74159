"""Tiny pointer models (issue 59): Qwen checkpoints small enough to train on two CPU cores in
minutes, taught to click drawn targets as a preset reads a click. Two kinds (`--preset`):
`qwen3-vl` (the default), answering [x,y] in 0-1000 of the image; `gta1`, answering (x,y) in
pixels of the image as the preset resized it (GTA1's short prompt and pixel frame, its resize at
Qwen3-VL's factor 32: `factor=32` in the detector's options). Both are Qwen3-VL: a Qwen2.5-VL (no
absolute position in its vision tower) did not learn where things are in the time this machine
has (docs/engines.md, "What did not work").

    python ci/engines/train_pointer.py OUT_DIR [--preset gta1]   # train; writes a Hugging Face checkpoint
    python ci/engines/train_pointer.py --dataset DIR             # held-back screens (pointerbench folder)
    python ci/engines/train_pointer.py --stamp [--preset gta1]   # the cache folder and stamp install.sh keeps
    pytest suites/ --dataset DIR --detector "qwenvl:model=OUT_DIR,preset=qwen3-vl,max_pixels=100000" \\
        --detector center --detector random

OUT_DIR gets config, safetensors weights, tokenizer, the family's image processor (max_pixels
100,000: the frame it is trained in) and chat template, built by `pytest_grounding.testing.tiny`
and then trained, and `pointer.json` (the recipe and the training time) last. The weights are never
committed: `bash ci/engines/install.sh pointer` trains both kinds into the engines cache
(~/.cache/pytest-grounding/engines/pointer and pointer-gta1), where the tests look for them;
`pointer.json`'s `detector` holds the options a detector spec needs (preset, max_pixels, factor).

Recipe (docs/engines.md, "A tiny pointer model", has it with the measured figures):
- data: drawn screens (never the embedded default benchmark's): a light background, a title bar, a
  side panel, 2-4 filled shapes of distinct colours, 1/12-1/5 of the width; the instruction names
  one ("the red square"); eight training sizes, 640x480 to 1280x800; held-back screens of four
  sizes (640x480, 800x600, 1024x768, 1280x720) from another seed (10,000 + --seed). gta1's recipe
  also asks 30% of them as "Click the red square." and gives a quarter of the later rows to the
  frame check's own kind of screen (its background, one red square, its sizes), so the frame check
  can read the model;
- model: tiny.py's architecture grown to 4 text layers (width 64, 2 heads of 32), 2 vision blocks
  (Qwen3-VL: a 16x16 learned position table); the tokenizer also learns the prompt and every answer
  number (0, 10, ..., 990 or 0, 4, ..., 448: one token each: an answer is `[`, x, `,`, y, `]`, end);
- training: the detector's own prompt and frame (qwenvl_batch.prepare), cross-entropy on the
  answer with a Gaussian soft label (sigma 2 steps) over the number tokens, AdamW 3e-3 with
  warm-up and cosine decay, batches of 16, 2,200 steps: the first 900 on one or two large shapes,
  then batches mixing those, middling screens and the final kind (a curriculum); seeded,
  deterministic as far as torch's CPU kernels are.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project's package
    sys.path.insert(0, str(ROOT))

# The colours and shapes of the drawn targets; an instruction names one colour and one shape.
COLOURS = {
    "red": (220, 30, 30),
    "green": (30, 170, 60),
    "blue": (30, 70, 220),
    "yellow": (235, 200, 20),
    "purple": (140, 50, 180),
    "orange": (245, 130, 20),
    "black": (20, 20, 20),
}
SHAPES = ("square", "circle", "triangle")
TRAIN_SIZES = ((640, 480), (800, 600), (1024, 768), (1280, 720), (1280, 800), (960, 640), (720, 540), (1152, 720))
HELD_SIZES = ((640, 480), (800, 600), (1024, 768), (1280, 720))
MAX_PIXELS = 100_000  # the frame the model is trained in and run at (qwenvl:max_pixels=...)
# The curriculum: screens of one or two large shapes first, then batches mixing those, middling
# screens and the final kind (the held-back screens' kind, draw_screen's defaults) in equal parts.
EASY_SHAPES, EASY_SCALE = (1, 2), (6, 3)
MIDDLE_SHAPES, MIDDLE_SCALE = (2, 3), (9, 4)
STAMP = "pointer.json"  # written last into OUT_DIR: the recipe and the training time (a finished build)
# The recipe's version: ci/engines/install.sh keeps a cached model whose stamp names it and retrains
# one that does not, so a change to what a default run trains (data, model, steps) bumps it.
RECIPE = 1
FOLDERS = {"qwen3-vl": "pointer", "gta1": "pointer-gta1"}  # each kind's folder in the engines cache
QUICK = False  # whether the default recipe trains in at most 3 minutes on 2 CPU cores (it does not: 20 minutes here)


@dataclass(frozen=True)
class Kind:
    """What a checkpoint is taught to answer: its architecture, the preset whose prompt and frame it
    answers in, its image patch, and its answer numbers (0, step, 2 * step, ..., each one token)."""

    family: str
    preset: str
    patch: int
    step: int
    numbers: int
    template: str  # the answer, from the two numbers
    frame: str  # what a number counts: "rel1000" (0-1000 of the image) or "pixels" (of the resized image)
    options: tuple[tuple[str, int], ...] = ()  # the preset's parts the detector is given beside max_pixels
    training_steps: int = 2200

    def detector_options(self, max_pixels: int) -> str:
        """What `qwenvl:model=DIR,...` (and vllm:/llamacpp:) need to see and read as trained."""
        return ",".join([f"preset={self.preset}", f"max_pixels={max_pixels}", *(f"{k}={v}" for k, v in self.options)])

    def steps(
        self, box: tuple[int, int, int, int], size: tuple[int, int], resized: tuple[int, int]
    ) -> tuple[float, float]:
        """The target's centre in answer steps (unrounded), in this kind's frame."""
        x, y = (box[0] + box[2]) / 2 / size[0], (box[1] + box[3]) / 2 / size[1]
        if self.frame == "rel1000":
            return x * 1000 / self.step, y * 1000 / self.step
        return x * resized[0] / self.step, y * resized[1] / self.step

    def answer(self, steps: tuple[float, float]) -> str:
        x, y = (min(self.numbers - 1, round(v)) * self.step for v in steps)
        return self.template.format(x=x, y=y)


# qwen3-vl: [x,y] in 0-1000 of the image, steps of 10; gta1 (a Qwen2.5-VL fine-tune's preset, here
# on Qwen3-VL, whose 16 px patches merged 2x2 take the resize's factor 32, not the preset's 28):
# (x,y) in pixels of the image as the preset resized it, steps of 4 (the resized frame of a 100,000
# pixel budget is at most 448 px wide: 113 numbers).
KINDS = {
    "qwen3-vl": Kind("qwen3_vl", "qwen3-vl", 16, 10, 100, "[{x},{y}]", "rel1000"),
    "gta1": Kind("qwen3_vl", "gta1", 16, 4, 113, "({x},{y})", "pixels", (("factor", 32),), training_steps=3300),
}
FRAME_CHECK_SHARE = 0.25  # of the later batches: the frame check's kind of screen and wording (gta1's recipe)


@dataclass(frozen=True)
class Screen:
    """A drawn screen: the image, the target's box [x1, y1, x2, y2] in its pixels, the instruction."""

    image: Any
    box: tuple[int, int, int, int]
    instruction: str


def draw_screen(
    rng: random.Random, size: tuple[int, int], shapes: tuple[int, int] = (2, 4), scale: tuple[int, int] = (12, 5)
) -> Screen:
    """A light screen with a few neutral panels and 3 to 5 coloured shapes of distinct colours;
    the target is one of them, named by colour and shape."""
    from PIL import Image, ImageDraw

    width, height = size
    shade = rng.randint(225, 250)
    image = Image.new("RGB", size, (shade, shade, min(255, shade + rng.randint(0, 5))))
    draw = ImageDraw.Draw(image)
    bar = rng.randint(20, 40)
    grey = rng.randint(190, 215)
    draw.rectangle([0, 0, width, bar], fill=(grey, grey, grey))  # a title bar
    if rng.random() < 0.7:  # a side panel with a few rows
        side = rng.randint(width // 8, width // 5)
        draw.rectangle([0, bar, side, height], fill=(grey + 10, grey + 10, grey + 10))
        for row in range(bar + 12, height - 20, rng.randint(24, 36)):
            draw.rectangle([8, row, side - rng.randint(10, side // 2), row + 8], fill=(150, 150, 150))
    placed: list[tuple[int, int, int, int]] = []
    colours = rng.sample(sorted(COLOURS), rng.randint(*shapes))
    for colour in colours:
        for _ in range(50):
            side = rng.randint(max(24, width // scale[0]), max(32, width // scale[1]))
            x1 = rng.randint(0, width - side - 1)
            y1 = rng.randint(bar + 2, height - side - 1)
            box = (x1, y1, x1 + side, y1 + side)
            if all(box[2] + 6 < b[0] or b[2] + 6 < box[0] or box[3] + 6 < b[1] or b[3] + 6 < box[1] for b in placed):
                break
        else:
            continue
        shape = rng.choice(SHAPES)
        fill = COLOURS[colour]
        if shape == "square":
            draw.rectangle(box, fill=fill)
        elif shape == "circle":
            draw.ellipse(box, fill=fill)
        else:
            draw.polygon([(box[0], box[3]), (box[2], box[3]), ((box[0] + box[2]) // 2, box[1])], fill=fill)
        placed.append(box)
        if len(placed) == 1:
            target, name = box, f"the {colour} {shape}"
    return Screen(image, target, name)


def rel1000(screen: Screen) -> tuple[int, int]:
    """The target's centre in 0-1000 of the image (the qwen3-vl preset's frame)."""
    width, height = screen.image.size
    x = (screen.box[0] + screen.box[2]) / 2 / width
    y = (screen.box[1] + screen.box[3]) / 2 / height
    return min(999, int(x * 1000)), min(999, int(y * 1000))


def write_dataset(folder: Path, count: int, seed: int) -> Path:
    """Held-back screens (four sizes, another seed than training's) as a pointerbench folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "images").mkdir(exist_ok=True)
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        size = HELD_SIZES[index % len(HELD_SIZES)]
        screen = draw_screen(rng, size)
        name = f"images/screen-{index:03d}.png"
        screen.image.save(folder / name)
        rows.append(
            {
                "file_name": name,
                "id": f"drawn-{index:03d}",
                "instruction": screen.instruction,
                "bbox": list(screen.box),
                "element_type": "other",
                "app": f"{size[0]}x{size[1]}",
                "image_size": list(size),
            }
        )
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def draw_calibration_screen(rng: random.Random, size: tuple[int, int]) -> Screen:
    """A screen of the frame check's kind (detectors/frame_check.py): its plain background and one
    red square of 5% of the shorter side, anywhere, asked for in its words."""
    from PIL import Image, ImageDraw

    from pytest_grounding.detectors import frame_check

    image = Image.new("RGB", size, frame_check.BACKGROUND)
    side = max(16, round(0.05 * min(size)))
    x1, y1 = rng.randint(0, size[0] - side - 1), rng.randint(0, size[1] - side - 1)
    box = (x1, y1, x1 + side, y1 + side)
    ImageDraw.Draw(image).rectangle((x1, y1, x1 + side - 1, y1 + side - 1), fill=frame_check.RED)
    return Screen(image, box, frame_check.INSTRUCTION)


def calibration_sizes() -> tuple[tuple[int, int], ...]:
    from pytest_grounding.detectors import frame_check

    return tuple(size for size, _ in frame_check.SCREENS) + TRAIN_SIZES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, nargs="?")
    parser.add_argument("--stamp", action="store_true", help="print the default recipe's stamp and its cache folder")
    parser.add_argument("--dataset", type=Path, help="write held-back drawn screens here instead")
    parser.add_argument("--count", type=int, default=80)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="default: 2,200 (qwen3-vl), 3,300 (gta1)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--samples", type=int, default=1200)
    parser.add_argument("--max-pixels", type=int, default=MAX_PIXELS)
    parser.add_argument("--eval-every", type=int, default=0)
    parser.add_argument("--eval-count", type=int, default=40)
    parser.add_argument("--sigma", type=float, default=2.0, help="the soft label's width, in answer steps")
    parser.add_argument("--easy-steps", type=int, default=900, help="first steps on one or two large shapes")
    parser.add_argument("--easy-samples", type=int, default=800)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--vision-depth", type=int, default=2)
    parser.add_argument("--positions", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--preset", choices=sorted(KINDS), default="qwen3-vl", help="the frame and prompt taught")
    parser.add_argument(
        "--frame-check-share",
        type=float,
        default=None,
        help="share of the later batches drawn as the frame check's screens and wording "
        f"(default: {FRAME_CHECK_SHARE} for gta1, 0 for qwen3-vl, the recipe of the model measured in docs/engines.md)",
    )
    args = parser.parse_args(argv)
    if args.steps is None:
        args.steps = KINDS[args.preset].training_steps
    if args.frame_check_share is None:
        args.frame_check_share = FRAME_CHECK_SHARE if args.preset == "gta1" else 0.0
    if args.stamp:
        print(f"{FOLDERS[args.preset]} train_pointer.py --preset {args.preset} recipe {RECIPE}")
        return 0
    if args.dataset:
        write_dataset(args.dataset, args.count, seed=10_000 + args.seed)
        print(f"train_pointer: {args.count} held-back screens in {args.dataset}")
        return 0
    if not args.out_dir:
        parser.error("OUT_DIR is needed (or --dataset DIR)")
    train(args)
    return 0


def train(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    from pytest_grounding.detectors.qwenvl import QwenVLDetector
    from pytest_grounding.testing.tiny import build_tiny_qwen25vl

    kind = KINDS[args.preset]
    start = time.monotonic()
    out = build_tiny_qwen25vl(
        args.out_dir, seed=args.seed, family=kind.family, head_dim=32, vocab_size=1000, corpus=tokenizer_corpus(kind)
    )
    _save_image_processor(out, args.max_pixels, kind)
    _grow(out, args)
    detector = QwenVLDetector(
        model=str(out), preset=kind.preset, max_pixels=args.max_pixels, threads=args.threads, **dict(kind.options)
    )
    model = detector.model.train()
    rng = random.Random(args.seed)
    wording = args.frame_check_share > 0  # some shape screens asked for as the frame check asks

    def encode(screen: Screen) -> dict[str, Any]:
        if wording and rng.random() < 0.3:
            screen = Screen(screen.image, screen.box, f"Click {screen.instruction}.")
        return _encode(detector, screen, kind)

    easy = [
        encode(draw_screen(rng, rng.choice(TRAIN_SIZES), EASY_SHAPES, EASY_SCALE)) for _ in range(args.easy_samples)
    ]
    middle = [
        encode(draw_screen(rng, rng.choice(TRAIN_SIZES), MIDDLE_SHAPES, MIDDLE_SCALE)) for _ in range(args.easy_samples)
    ]
    samples = [encode(draw_screen(rng, rng.choice(TRAIN_SIZES))) for _ in range(args.samples)]
    sizes = calibration_sizes()
    calibration = [
        _encode(detector, draw_calibration_screen(rng, rng.choice(sizes)), kind)
        for _ in range(round(args.samples * args.frame_check_share))
    ]
    print(f"train_pointer: {len(samples)} samples drawn in {time.monotonic() - start:.0f} s", flush=True)
    held_rng = random.Random(10_000 + args.seed)
    held = [draw_screen(held_rng, HELD_SIZES[i % 4]) for i in range(args.eval_count)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    warm = max(1, args.steps // 20)

    def schedule(step: int) -> float:
        return min(1.0, (step + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    order = random.Random(args.seed + 1)
    tokenizer = detector.processor.tokenizer
    numbers = torch.tensor([tokenizer.convert_tokens_to_ids(str(n * kind.step)) for n in range(kind.numbers)])
    for step in range(args.steps):
        pools = (easy,) if step < args.easy_steps else (easy, middle, samples)
        rows = [pools[i % len(pools)] for i in range(args.batch)]
        if calibration and step >= args.easy_steps:  # the frame check's screens in a share of the later rows
            rows = [calibration if order.random() < args.frame_check_share else pool for pool in rows]
        batch = _collate([pool[order.randrange(len(pool))] for pool in rows], detector)
        loss = _loss(model, batch, numbers, args.sigma)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % 25 == 0 or step == args.steps - 1:
            print(f"step {step} loss {loss.item():.3f} {time.monotonic() - start:.0f} s", flush=True)
        if args.eval_every and (step + 1) % args.eval_every == 0:
            model.eval()
            print(f"step {step} held-back accuracy {accuracy(detector, held):.2f}", flush=True)
            model.train()
    model.eval()
    model.save_pretrained(out)
    seconds = time.monotonic() - start
    recipe = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k != "dataset"}
    recipe["family"] = kind.family
    recipe["detector"] = kind.detector_options(args.max_pixels)
    (out / STAMP).write_text(json.dumps({"recipe": recipe, "seconds": round(seconds)}, indent=2) + "\n")
    print(f"train_pointer: {out} trained in {seconds:.0f} s", flush=True)


def accuracy(detector: Any, screens: list[Screen]) -> float:
    """The share of screens whose click (greedy, the harness's own prediction path) is in the box."""
    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors.qwenvl_batch import predict

    hits = 0
    for screen in screens:
        click = predict(detector, Query(image=screen.image, instruction=screen.instruction)).click
        if click is not None:
            x1, y1, x2, y2 = screen.box
            hits += x1 <= click[0] <= x2 and y1 <= click[1] <= y2
    return hits / max(1, len(screens))


def _grow(folder: Path, args: argparse.Namespace) -> None:
    """The tiny builder's model made deeper (text layers, vision blocks, position table), freshly
    initialised with the same seed; its tokenizer and processor are kept."""
    import torch
    from transformers import AutoConfig, AutoModelForImageTextToText

    config = AutoConfig.from_pretrained(folder)
    config.text_config.num_hidden_layers = args.layers
    if getattr(config.text_config, "layer_types", None):  # Qwen2.5-VL names each layer's attention
        config.text_config.layer_types = [config.text_config.layer_types[0]] * args.layers
    config.text_config.num_attention_heads = args.heads
    config.text_config.num_key_value_heads = args.heads
    config.vision_config.depth = args.vision_depth
    if hasattr(config.vision_config, "num_position_embeddings"):
        config.vision_config.num_position_embeddings = args.positions
    if hasattr(config.vision_config, "deepstack_visual_indexes"):
        config.vision_config.deepstack_visual_indexes = [args.vision_depth - 1]
    torch.manual_seed(args.seed)
    model: Any = AutoModelForImageTextToText.from_config(config)
    model.generation_config.eos_token_id = config.text_config.eos_token_id
    model.generation_config.pad_token_id = config.text_config.pad_token_id
    model.save_pretrained(folder)


def _save_image_processor(folder: Path, max_pixels: int, kind: Kind) -> None:
    """The family's image processor (14 or 16 px patches, merged 2x2) with the frame the model is
    trained in, so a server that reads the checkpoint's own processor sees the same image."""
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    from pytest_grounding.detectors.vlm.presets import resolve_preset

    resize = resolve_preset(kind.preset, max_pixels=max_pixels, **dict(kind.options)).preprocess
    Qwen2VLImageProcessorPil(
        min_pixels=resize.min_pixels, max_pixels=resize.max_pixels, patch_size=kind.patch, merge_size=2
    ).save_pretrained(folder)


def tokenizer_corpus(kind: Kind = KINDS["qwen3-vl"]) -> list[str]:
    """What the tokenizer learns besides tiny.py's corpus: every answer number (0, step, ...) as one
    token, and the preset's prompt and the instructions' words, so a prompt is a few tokens."""
    from pytest_grounding.detectors.frame_check import INSTRUCTION
    from pytest_grounding.detectors.vlm import prompts

    numbers = [n * kind.step for n in range(kind.numbers)]
    answers = " ".join(kind.template.format(x=x, y=y) for x in numbers for y in numbers[::7])
    words = " ".join(f"the {c} {s}. Click the {c} {s}." for c in COLOURS for s in SHAPES) + " " + INSTRUCTION
    prompt = prompts.QWEN3_POINT if kind.preset == "qwen3-vl" else prompts.GTA1_SYSTEM
    if kind.preset == "qwen3-vl":  # the measured model's tokenizer: trained before the frame check's wording
        words = " ".join(f"the {c} {s}." for c in COLOURS for s in SHAPES)
    return [answers] * 3 + [prompt, words, "You are a helpful assistant."] * 3


def _encode(detector: Any, screen: Screen, kind: Kind) -> dict[str, Any]:
    from pytest_grounding.core.types import Query
    from pytest_grounding.detectors.qwenvl_batch import prepare

    prepared = prepare(detector, Query(image=screen.image, instruction=screen.instruction))
    inputs = detector.processor(text=[prepared.text], images=[prepared.image], return_tensors="pt")
    tokenizer = detector.processor.tokenizer
    steps = kind.steps(screen.box, screen.image.size, prepared.image.size)
    text = kind.answer(steps)
    answer = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(answer) != 5:
        raise RuntimeError(f"{text} is not five tokens: {tokenizer.convert_ids_to_tokens(answer)}")
    answer.append(tokenizer.convert_tokens_to_ids("<|im_end|>"))
    return {
        "prompt": inputs["input_ids"][0],
        "types": inputs["mm_token_type_ids"][0] if "mm_token_type_ids" in inputs else None,
        "answer": answer,
        "bins": steps,
        "pixel_values": inputs["pixel_values"],
        "image_grid_thw": inputs["image_grid_thw"],
    }


def _loss(model: Any, batch: dict[str, Any], numbers: Any, sigma: float) -> Any:
    """Cross-entropy on the answer's tokens; each number's target is a Gaussian over the 100
    number tokens around the true centre (its neighbours are nearly right), not one token."""
    import torch

    places = batch.pop("numbers")
    labels = batch.pop("labels")
    logits = model(**batch).logits
    hard = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100, reduction="sum"
    )
    steps = torch.arange(len(numbers), dtype=torch.float32)
    soft = logits.new_zeros(())
    for row, n, (x, y) in places:
        for at, value in ((n, x), (n + 2, y)):
            target = torch.softmax(-((steps - value) ** 2) / (2 * sigma**2), dim=0)
            soft = soft - (target * torch.log_softmax(logits[row, at], dim=-1)[numbers]).sum()
    count = (labels != -100).sum() + 2 * len(places)
    return (hard + soft) / count


def _collate(rows: list[dict[str, Any]], detector: Any) -> dict[str, Any]:
    import torch

    pad = detector.processor.tokenizer.pad_token_id
    length = max(len(r["prompt"]) + len(r["answer"]) for r in rows)
    ids = torch.full((len(rows), length), pad, dtype=torch.long)
    labels = torch.full((len(rows), length), -100, dtype=torch.long)
    mask = torch.zeros((len(rows), length), dtype=torch.long)
    types = torch.zeros((len(rows), length), dtype=torch.long)
    for i, r in enumerate(rows):
        n = len(r["prompt"])
        answer = torch.tensor(r["answer"])
        ids[i, :n] = r["prompt"]
        ids[i, n : n + len(answer)] = answer
        labels[i, n : n + len(answer)] = answer
        labels[i, n + 1] = labels[i, n + 3] = -100  # the numbers: soft labels (_loss)
        mask[i, : n + len(answer)] = 1
        if r["types"] is not None:
            types[i, :n] = r["types"]
    extra = {"mm_token_type_ids": types} if rows[0]["types"] is not None else {}
    extra["numbers"] = [(i, len(r["prompt"]), r["bins"]) for i, r in enumerate(rows)]
    return {
        **extra,
        "input_ids": ids,
        "attention_mask": mask,
        "labels": labels,
        "pixel_values": torch.cat([r["pixel_values"] for r in rows]),
        "image_grid_thw": torch.cat([r["image_grid_thw"] for r in rows]),
    }


if __name__ == "__main__":
    sys.exit(main())
