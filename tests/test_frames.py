"""core/frames.py: each frame's decoding worked out by hand, and the fit naming the frame that
synthetic answers were made in (never on a constant answer or a wrong model)."""

import math
import random

import pytest

from pytest_grounding.core import frames
from pytest_grounding.detectors.frame_check import calibration_screens
from pytest_grounding.detectors.vlm.preprocess import smart_resize


def test_each_frame_decodes_as_worked_out_by_hand():
    answer = frames.Answer(point=(200.0, 100.0), values=(250.0, 125.0), original=(2000, 1000), model=(1000, 500),
                           target=(0, 0, 1, 1))  # fmt: skip
    decode = {spec: frames.parse_frame(spec).decode(answer) for spec in (
        "as-preset", "original-pixels", "rel1000", "rel1", "swapped", "offset:5,-5")}  # fmt: skip
    assert decode["as-preset"] == (200.0, 100.0)
    assert decode["original-pixels"] == (250.0, 125.0)
    assert decode["rel1000"] == (500.0, 125.0)
    assert decode["rel1"] == (500000.0, 125000.0)
    assert decode["swapped"] == pytest.approx((200 / 250 * 125, 100 / 125 * 250))
    assert decode["offset:5,-5"] == (205.0, 95.0)
    shrunk = frames.parse_frame("resized-by-server:max_pixels=200704")
    w, h = frames.server_resize((1000, 500), 200704)
    assert shrunk.decode(answer) == pytest.approx((200 * 1000 / w, 100 * 500 / h))


def test_the_server_resize_is_qwens():
    for size in ((1000, 500), (1600, 896), (700, 1288), (300, 200)):
        h, w = smart_resize(size[1], size[0], 28, 4 * 28 * 28, 200704)
        assert frames.server_resize(size, 200704) == (w, h)


@pytest.mark.parametrize("spec", ["nope", "offset:1", "resized-by-server", "rel1000:3", "unknown"])
def test_a_bad_frame_is_refused_naming_the_known_ones(spec):
    with pytest.raises(ValueError, match="rel1000"):
        frames.parse_frame(spec)


def answers_in(frame, screens, *, noise=0.0, seed=0):
    """What a model answering in `frame` gives on `screens` (square centres), as an abs preset decodes."""
    rng = random.Random(seed)
    out = []
    for screen in screens:
        (W, H), (x1, y1, x2, y2) = screen.size, screen.square
        shrink = 0.5 if frame == "original-pixels" else 1.0  # the preset halves the screen it sends
        model = (round(W * shrink / 28) * 28, round(H * shrink / 28) * 28)
        cx, cy = (x1 + x2) / 2 + rng.uniform(-noise, noise), (y1 + y2) / 2 + rng.uniform(-noise, noise)
        mx, my = cx * model[0] / W, cy * model[1] / H  # the right answer in pixels of the model image
        if frame == "rel1000":
            v = (round(cx / W * 1000), round(cy / H * 1000))
        elif frame == "swapped":
            v = (round(my), round(mx))
        elif frame.startswith("resized-by-server"):
            params = {"max_pixels": 256 * 784, "long_edge": 500, "scale": 0.5}
            key = frame.partition(":")[2] or "max_pixels"
            sw, sh = frames.shrunk_by(model, {key: params[key]})
            v = (round(mx * sw / model[0]), round(my * sh / model[1]))
        elif frame == "original-pixels":
            v = (round(cx), round(cy))
        elif frame == "offset":
            v = (round(mx) + 40, round(my) - 30)
        else:
            v = (round(mx), round(my))
        point = (v[0] * W / model[0], v[1] * H / model[1])  # the preset's own decoding (abs)
        out.append(frames.Answer(point, (float(v[0]), float(v[1])), (W, H), model, tuple(map(float, screen.square))))
    return out


FRAMES = ["as-preset", "rel1000", "swapped", "original-pixels", "offset"]
SERVERS = ["resized-by-server", "resized-by-server:long_edge", "resized-by-server:scale"]


@pytest.mark.parametrize("frame", FRAMES + SERVERS)
def test_the_fit_names_the_frame_the_answers_were_made_in(frame):
    screens = calibration_screens()
    found = frames.fit(answers_in(frame, screens), frames.CHECK_RULE)
    assert found.name == frame.partition(":")[0], found.evidence
    assert found.mismatch == (frame != "as-preset")
    if found.mismatch:
        assert found.suggestion == ["--frame", found.frame.spec]
        again = [found.frame.decode(a) for a in answers_in(frame, screens)]
        on = sum(frames.distance(s.square, p) <= 10 for s, p in zip(screens, again, strict=True))
        assert on == len(screens)


def test_a_constant_answer_a_wrong_model_and_prose_name_no_frame():
    screens = calibration_screens()
    constant = [frames.Answer((500.0, 400.0), (500.0, 400.0), s.size, s.size, tuple(map(float, s.square)))
                for s in screens]  # fmt: skip
    rng = random.Random(1)
    wrong = [frames.Answer((p := (rng.uniform(0, s.size[0]), rng.uniform(0, s.size[1]))), p, s.size, s.size,
                           tuple(map(float, s.square))) for s in screens]  # fmt: skip
    prose = [frames.Answer(None, None, s.size, None, tuple(map(float, s.square))) for s in screens]
    assert frames.fit(constant, frames.CHECK_RULE).name == "unknown"
    assert frames.fit(wrong, frames.CHECK_RULE).name == "unknown"
    unread = frames.fit(prose, frames.CHECK_RULE)
    assert unread.name == "unknown" and "0 of 12 answers could be read" in unread.evidence


def test_near_misses_on_every_side_are_no_offset():
    screens = calibration_screens()
    out = []
    for n, s in enumerate(screens):
        x1, y1, x2, y2 = s.square
        side = [(x2 + 5, (y1 + y2) / 2), ((x1 + x2) / 2, y2 + 5), (x1 - 5, (y1 + y2) / 2), ((x1 + x2) / 2, y1 - 5)][
            n % 4
        ]
        out.append(frames.Answer(side, side, s.size, s.size, tuple(map(float, s.square))))
    assert frames.fit(out, frames.CHECK_RULE).name == "as-preset"  # within the near tolerance
    # issue 56: the diagnosis after the run counts them as support for the preset's frame too (it read
    # "unknown" while the check before the run said "as the preset says"); no offset is named either
    after = frames.fit(out, frames.DIAGNOSIS_RULE)
    assert after.name == "as-preset" and after.on_target["as-preset"] == len(out)
    # clicks far from their boxes still support no frame
    far = [frames.Answer((5.0, 5.0), (5.0, 5.0), a.original, a.original, a.target) for a in out]
    assert frames.fit(far, frames.DIAGNOSIS_RULE).name == "unknown"


def test_the_calibration_screens_are_few_and_distinct():
    screens = calibration_screens()
    assert len(screens) <= 12 and len({s.size for s in screens}) >= 2
    assert len({round(s.size[0] / s.size[1], 2) for s in screens}) >= 2
    image = screens[0].image()
    x1, y1, x2, y2 = screens[0].square
    assert image.getpixel((x1, y1)) == (220, 30, 30) and image.getpixel((x2, y2)) != (220, 30, 30)
    assert not any(math.isclose(s.square[0] + s.square[2], s.size[0]) for s in screens)  # never the centre
