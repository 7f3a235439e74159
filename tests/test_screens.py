"""plugin/worker/screens.py: each screen decoded once for the samples that share it."""


def test_the_screen_reader_decodes_a_screen_once_until_its_file_changes(tmp_path):
    import os

    from PIL import Image

    from pytest_grounding.core.types import Box, Sample
    from pytest_grounding.detectors.encoding import file_digest, image_digest
    from pytest_grounding.evaluate.runner import read_image
    from pytest_grounding.plugin.worker.screens import ScreenReader

    def sample(sid, image):
        return Sample(dataset="d", id=sid, uid=sid, image=image, instruction="OK", bbox=Box(0, 0, 4, 4))

    path = tmp_path / "screen.png"
    Image.new("RGB", (40, 30), "white").save(path)
    first, second = (sample(f"s{i}", path) for i in (1, 2))
    reader = ScreenReader()
    image, problem = reader.read(first)
    assert problem is None and reader.read(second)[0] is image  # one decoding for the screen's samples
    assert image_digest(image) == file_digest(path.read_bytes(), image)  # the file's: the pixels are not hashed
    # PIL copies `info` into crops, resizes and copies: each is hashed as the other pixels it is
    # (a zoom-in's crop once got the whole screen's encoding)
    crop, copy = image.crop((0, 0, 20, 15)), image.copy()
    copy.putpixel((0, 0), (1, 2, 3))
    assert len({image_digest(image), image_digest(crop), image_digest(copy)}) == 3
    Image.new("RGB", (40, 30), "black").save(path)
    os.utime(path, ns=(1, 1))  # a changed file is read again (modification time and size)
    again, _ = reader.read(second)
    assert again is not image and again.getpixel((0, 0)) == (0, 0, 0)
    missing = sample("m", tmp_path / "gone.png")
    assert reader.read(missing) == read_image(missing) == (None, f"image not found: {missing.image}")
