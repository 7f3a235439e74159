"""Convert a Hugging Face Qwen2.5-VL (or Qwen2-VL, Qwen3-VL) checkpoint to what llama-server loads:
`model.gguf` (the language model) and `mmproj.gguf` (the vision projector), both F16, and with
`--quant TYPE` a quantized language model beside them (`model-TYPE.gguf`, e.g. model-Q8_0.gguf).

    python ci/engines/to_gguf.py HF_DIR OUT_DIR [--quant Q8_0] [--quant Q4_K_M ...]

It runs llama.cpp's own converter (`convert_hf_to_gguf.py`, and `--mmproj` for the projector) and
quantizer (`llama-quantize`) from the engine environment `bash ci/engines/install.sh llamacpp` builds
($GROUNDING_ENGINES_DIR/llamacpp, default ~/.cache/pytest-grounding/engines/llamacpp); started with
another Python, it hands itself over to that environment's.

A checkpoint saved by transformers 5 is read as transformers 4 (the converter's) reads it
(`readable_checkpoint`). Two additions to the converter, both for checkpoints smaller than any
released one:
- the projector's tensor names are mapped by block number, so a vision tower of fewer than three
  blocks cannot name the merger's `mlp.2` layer ("Can not map tensor 'visual.merger.mlp.2.bias'"):
  the projector's name map is made for at least 8 blocks (names only; nothing is added);
- it names a BPE tokenizer's pre-tokenizer by the hash of how it splits a test text, and refuses
  one it does not know (a tokenizer trained here, like the tests' tiny ones): when the tokenizer's
  own `tokenizer.json` says its pre-tokenizer is plain byte-level with GPT-2's split pattern, it is
  written as llama.cpp's "gpt-2" pre-tokenizer (the same split), with a line saying so; anything
  else is still refused."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ENGINE = Path(os.environ.get("GROUNDING_ENGINES_DIR") or Path.home() / ".cache" / "pytest-grounding" / "engines")
LLAMACPP = ENGINE / "llamacpp"
SOURCE = LLAMACPP / "src"  # llama.cpp's source tree: the converter, its conversion/ package, gguf-py
QUANTIZE = LLAMACPP / "bin" / "llama-quantize"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "hf_dir", type=Path, help="a Hugging Face checkpoint folder (config.json, safetensors, tokenizer)"
    )
    parser.add_argument("out_dir", type=Path, help="where model.gguf, mmproj.gguf and the quantized models go")
    parser.add_argument("--quant", action="append", default=[], help="a llama-quantize type (Q8_0, Q4_K_M, ...)")
    args = parser.parse_args(argv)
    if not (SOURCE / "convert_hf_to_gguf.py").is_file() or not (LLAMACPP / ".stamp").is_file():
        print(
            f"to_gguf: llama.cpp is not installed in {LLAMACPP}: bash ci/engines/install.sh llamacpp", file=sys.stderr
        )
        return 2
    engine_python = LLAMACPP / "bin" / "python"
    if Path(sys.prefix).resolve() != LLAMACPP.resolve():  # the converter's packages live in the engine's venv
        return subprocess.call([str(engine_python), str(Path(__file__).resolve()), *(argv or sys.argv[1:])])
    if not (args.hf_dir / "config.json").is_file():
        print(f"to_gguf: {args.hf_dir} has no config.json: not a Hugging Face checkpoint", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    model, mmproj = args.out_dir / "model.gguf", args.out_dir / "mmproj.gguf"
    with tempfile.TemporaryDirectory() as scratch:
        source = readable_checkpoint(args.hf_dir, Path(scratch))
        convert(source, model, [])
        convert(source, mmproj, ["--mmproj"])
    for kind in args.quant:
        target = args.out_dir / f"model-{kind}.gguf"
        done = subprocess.run([str(QUANTIZE), str(model), str(target), kind], capture_output=True, text=True)
        if done.returncode:
            print(done.stdout[-2000:] + done.stderr[-2000:], file=sys.stderr)
            print(f"to_gguf: llama-quantize failed for {kind}", file=sys.stderr)
            return 1
        print(f"to_gguf: {target}")
    print(f"to_gguf: {model}\nto_gguf: {mmproj}")
    return 0


def readable_checkpoint(hf_dir: Path, scratch: Path) -> Path:
    """The checkpoint as the converter's transformers (4.x, as llama.cpp pins it) reads it: a
    tokenizer saved by transformers 5 names its class `TokenizersBackend`, which 4.x does not know,
    and lists `extra_special_tokens` where 4.x reads `additional_special_tokens`; the same
    tokenizer.json loads as `PreTrainedTokenizerFast`. Then a folder of links to the files
    with that one name changed; else the folder as it is."""
    config = hf_dir / "tokenizer_config.json"
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return hf_dir
    if not isinstance(settings, dict) or settings.get("tokenizer_class") != "TokenizersBackend":
        return hf_dir
    shadow = scratch / hf_dir.name
    shadow.mkdir()
    for item in hf_dir.iterdir():
        if item.name != config.name:
            (shadow / item.name).symlink_to(item.resolve())
    settings["tokenizer_class"] = "PreTrainedTokenizerFast"
    if isinstance(settings.get("extra_special_tokens"), list):  # 5's list; 4.x wants a dict there
        settings["additional_special_tokens"] = settings.pop("extra_special_tokens")
    (shadow / config.name).write_text(json.dumps(settings, indent=2), encoding="utf-8")
    print("to_gguf: the tokenizer's class TokenizersBackend (transformers 5) read as PreTrainedTokenizerFast")
    return shadow


def convert(hf_dir: Path, outfile: Path, extra: list[str]) -> None:
    """llama.cpp's converter, in this process, with the byte-level pre-tokenizer rule added."""
    sys.path.insert(0, str(SOURCE))
    import convert_hf_to_gguf  # the engine's source tree, on the path only now
    from conversion.base import TextModel

    if not getattr(TextModel.get_vocab_base_pre, "_to_gguf", False):
        TextModel.get_vocab_base_pre = _with_byte_level(TextModel.get_vocab_base_pre, hf_dir)
        import gguf  # the source tree's gguf-py, as the converter imports it

        name_map = gguf.get_tensor_name_map

        def at_least_8_blocks(arch, n_blocks):
            return name_map(arch, max(n_blocks, 8) if arch == gguf.MODEL_ARCH.MMPROJ else n_blocks)

        gguf.get_tensor_name_map = at_least_8_blocks
    sys.argv = ["convert_hf_to_gguf.py", str(hf_dir), "--outfile", str(outfile), "--outtype", "f16", *extra]
    convert_hf_to_gguf.main()


def byte_level_gpt2(tokenizer_json: Path) -> bool:
    """Whether a tokenizer.json's pre-tokenizer is plain byte-level splitting with GPT-2's pattern
    (`ByteLevel` with `use_regex` true, alone or as the only step of a sequence)."""
    try:
        pre = json.loads(tokenizer_json.read_text(encoding="utf-8")).get("pre_tokenizer")
    except (OSError, ValueError, AttributeError):
        return False
    if isinstance(pre, dict) and pre.get("type") == "Sequence" and len(pre.get("pretokenizers") or []) == 1:
        pre = pre["pretokenizers"][0]
    return isinstance(pre, dict) and pre.get("type") == "ByteLevel" and pre.get("use_regex", True) is True


def _with_byte_level(original, hf_dir: Path):
    def get_vocab_base_pre(self, tokenizer):
        try:
            return original(self, tokenizer)
        except NotImplementedError:
            if not byte_level_gpt2(hf_dir / "tokenizer.json"):
                raise
            print("to_gguf: unknown tokenizer hash; its tokenizer.json says byte-level with GPT-2's split: 'gpt-2'")
            return "gpt-2"

    get_vocab_base_pre._to_gguf = True  # type: ignore[attr-defined]
    return get_vocab_base_pre


if __name__ == "__main__":
    sys.exit(main())
