"""The 2026 families (issue 28): presets read from each family's own evaluation or agent code, at the
commits given. ../shared/reference/field-2026.md lists the families; those whose prompt or answer
format could not be confirmed in a public source are not here (docs/presets-2026.md lists them and
why).

All of these run behind a server (`openai`); the Qwen2.5-VL, Qwen3-VL and Qwen3.5 based ones
(GroundNext, MAI-UI, EvoCUA, Holo2, KV-Ground, Qwen3.5) also in-process with `qwenvl` (a checkpoint
folder or hub id and preset=NAME)."""

from __future__ import annotations

from . import prompts_2026 as p
from .preprocess import Original, SmartResize
from .preset import Decoding, Preset
from .prompts import Prompt

MAI_UI = "Tongyi-MAI/MAI-UI@4dd07b9"
EVOCUA = "meituan/EvoCUA@4a0ad5f"
GROUNDCUA = "ServiceNow/GroundCUA@81136d4"
CUACTSPOT = "microsoft/Phi-Ground@3956408 benchmark/CUActSpot/cuactspot/models/builtins.py"
CLAW = "ZJU-REAL/ClawGUI@d990d3e clawgui-eval/"
KV_GROUND = "vocaela/kv-ground@04cf530"
SSP_QWEN35 = "likaixin2000/ScreenSpot-Pro-GUI-Grounding@4a04544 models/qwen3_5.py"
QWEN3_PROCESSOR = SmartResize(factor=32, min_pixels=65_536, max_pixels=16_777_216)  # Qwen3-VL's defaults

PRESETS_2026: tuple[Preset, ...] = (
    Preset(
        "mai-ui",
        "MAI-UI 2B / 8B / 32B (Qwen3-VL)",
        Prompt(p.MAI_UI_USER, system=p.MAI_UI_SYSTEM, order="text,image"),
        SmartResize(factor=32, min_pixels=16 * 16 * 4, max_pixels=6_553_600),
        ("answer_coordinate", "bracket"),
        "rel1000",
        Decoding(max_new_tokens=256),
        source=f"{MAI_UI} evaluation/grounding/eval_server.py (system prompt; the instruction and a newline, then "
        "the image; smart_resize factor 32, 1,024..6,553,600 px; temperature 0, 256 tokens; answer / 1000) and "
        "README (its table: the tech report's figures reproduced by this script)",
        notes="0-1000 vs 0-999: the authors' own evaluation script (eval_server.py, behind the README's table) "
        "divides by 1000, as ClawGUI does; the authors' agent (src/mai_grounding_agent.py, SCALE_FACTOR = 999) and "
        "Phi-Ground's CUActSpot divide by 999. The evaluation script is taken because it produced the published "
        "figures; the two differ by 0.1% of a side (6 px on a 6016 px screen). The script reads the first [x,y] "
        "anywhere; this preset reads the one inside <answer> first (as the agent does), so a pair the reasoning "
        "mentions is not taken for the answer. ClawGUI sends 65,536..16,777,216 px and 512 tokens.",
    ),
    Preset(
        "evocua",
        "EvoCUA-8B / 32B (Qwen3-VL)",
        Prompt(p.EVOCUA_USER, system=p.EVOCUA_SYSTEM),
        SmartResize(factor=32, min_pixels=56 * 56, max_pixels=16 * 16 * 4 * 12800),
        ("tool_call",),
        "rel999",
        Decoding(max_new_tokens=4096),
        refusal="terminate",
        source=f"{EVOCUA} mm_agents/evocua/prompts.py and evocua_agent.py (S2 system prompt with a 1000x1000 "
        "screen, first-step user text, image first; coordinate_type relative mapped by x / 999; utils.py "
        "smart_resize factor 32, 3,136..13,107,200 px); decoding of "
        f"{CUACTSPOT} evocua_8b/32b_transformers (temperature 0, 4096 tokens)",
        notes="The authors publish an agent, not a grounding script: its first step (no history) is the "
        "grounding query. Its prompt says 1000x1000 but the agent maps by 999 (taken; CUActSpot maps by 1000). "
        "The agent's smart_resize first shrinks a side over 8192 px (not done here: no benchmark screen is that "
        "large). The README's OSWorld runs use temperature 0.01; CUActSpot's grounding runs 0.",
    ),
    Preset(
        "groundnext",
        "GroundNext-3B / 7B (Qwen2.5-VL)",
        Prompt("{instruction}", system=p.GROUNDNEXT_SYSTEM),
        SmartResize(factor=28, min_pixels=3136, max_pixels=12_845_056),
        ("tool_call",),
        "abs",
        Decoding(max_new_tokens=1024),
        source=f"{GROUNDCUA} eval/prompts.py GroundCUAPrompt (system prompt with the resized size, image then the "
        "instruction, tool_call coordinate in pixels of the resized image), eval/eval.py (smart_resize factor 28, "
        "max 12,845,056 px, 1024 tokens), eval/groundnext_eval.sh (temperature 0)",
        notes='The source\'s tool JSON is unbalanced ("required" inside "properties"); it is what the model '
        "was evaluated with, so it is kept.",
    ),
    Preset(
        "holo3",
        "Holo3 / Holo3.1 (H Company)",
        Prompt(p.HOLO3),
        Original(),
        ("json_xy",),
        "rel1000",
        Decoding(max_new_tokens=64, chat_template_kwargs=(("enable_thinking", False),)),
        source="hub.hcompany.ai/element-localization (prompt with the VisualLocalizerOutput schema, image then "
        "text, JSON {x, y} in 0-1000 of the image sent, temperature 0, enable_thinking false)",
        notes="The docs add vLLM structured outputs (the JSON schema); a server without it still reads the JSON. "
        "They give no token limit: 64 covers the ~15-token answer.",
    ),
    Preset(
        "holo2",
        "Holo2 4B / 8B / 30B-A3B / 235B-A22B (Qwen3-VL)",
        Prompt(p.HOLO2),
        QWEN3_PROCESSOR,
        ("json_xy",),
        "rel1000",
        Decoding(max_new_tokens=32, chat_template_kwargs=(("thinking", False),)),
        source="Hcompany/Holo2-* model card example as copied in public code (ClickCoordinates schema, image then "
        "text, smart_resize with the processor's patch x merge size and its min/max pixels, thinking=False, 32 "
        "tokens, 0-1000); vLLM tests/reasoning (Holo2's template switch is `thinking`)",
        notes="The card was read through a copy whose indentation is not the card's: the wording around the "
        "schema is taken from H Company's Holo3 docs (same sentences). Figures are the single-shot ones; the "
        "leaderboard's 'Agentic' rows are a different protocol.",
    ),
    Preset(
        "kv-ground",
        "KV-Ground 4B / 8B (GUI-Owl-1.5 / Qwen3-VL)",
        Prompt("{instruction}", system=p.QWEN3VL_GROUNDING_SYSTEM),
        SmartResize(factor=32, min_pixels=65_536, max_pixels=99_999_999),
        ("tool_call",),
        "rel1000",
        Decoding(max_new_tokens=512),
        source=f"{KV_GROUND} utils.py (QWEN3VL_GROUNDING_SYSTEM_MESSAGE_TEXT; system, then the image, then the "
        "instruction alone; extract_coordinates: the tool call's coordinate x W / 1000), eval_sspro_hf_dp.py "
        "(65,536..99,999,999 px: the screen at its own size; temperature 0, 512 tokens), README (figures)",
        notes="The authors evaluate every model with the ScreenSpot-Pro harness's Qwen3-VL prompt (the same "
        "bytes as its models/qwen3vl.py), not GUI-Owl-1.5's own. They round the pixel (round(W * x / 1000)); "
        "the preset keeps the fraction. For OSWorld-G they send another system prompt with a `refusal` action "
        "(QWEN3VL_GROUNDING_W_REFUSAL_SYSTEM_MESSAGE_TEXT): not shipped, as no refusal form reads that action. "
        "Their json.loads makes a call with a stray quote a wrong format; the shared tool_call extractor reads "
        "its coordinate (1 row of 1,581 in their 8B report). Their zoom-in crops half the screen's sides around "
        "the first answer and resizes the crop back to the screen's size (eval_sspro_zoomin_hf_dp.py): "
        "`+zoomin:ratio=0.5` crops the same window but sends it at its own size.",
    ),
    Preset(
        "qwen3.5",
        "Qwen3.5 (4B ... 397B-A17B)",
        Prompt("{instruction}", system=p.QWEN3VL_GROUNDING_SYSTEM),
        SmartResize(factor=32, min_pixels=32 * 32, max_pixels=8_294_400),
        ("tool_call",),
        "rel1000",
        Decoding(max_new_tokens=4096),
        source=f"{SSP_QWEN35} (pull request 25, merged by the harness's maintainer: the Qwen3-VL grounding "
        "system prompt, image then the instruction, the transformers path: 1,024..8,294,400 px, greedy, 4096 "
        "tokens, the tool call's coordinate / 1000; a 4B run there gives 58.1 against the card's 60.8)",
        notes="Qwen publishes no grounding prompt for Qwen3.5: this is the ScreenSpot-Pro harness's. Its "
        "transformers path (taken: the one its author reproduced the card with, and says the 8,294,400 px and "
        "4096 tokens are needed) resizes to a multiple of 8 and lets the processor round to 32; its vLLM path "
        "samples at temperature 0.7 within 2,073,600 px after a pre-filled tool call. One step of factor 32 "
        "here: a side differs by under 32 px, and the answer is 0-1000 of the image sent either way. The chat "
        "template's default thinking mode is left as the harness leaves it; the harness reads the last tool "
        "call, the shared extractor the first coordinate (they differ only if the thinking writes a call). "
        "In-process, `qwenvl` runs Qwen3.5 checkpoints (qwen3_5, qwen3_5_moe) with this preset as default.",
    ),
)
