"""The shipped presets: every popular open grounding model and the API forms, each as its authors
prompt and decode it (../shared/reference/model-presets.md has the table they come from). A
preset's `source` names where its parts were read; `notes` say which source won where they
disagree, and why. Commits are the ones the reference read (SSP @bd8bbbb, ClawGUI @d990d3e,
Phi-Ground @3956408, VenusBench-GD @56b1005); where it gives none, the file or issue."""

from __future__ import annotations

from . import prompts as p
from .preprocess import Fit, FixedResize, Original, SmartResize
from .preset import Decoding, Preset

QWEN2_DEFAULTS = SmartResize(factor=28, min_pixels=56 * 56, max_pixels=28 * 28 * 16384)  # Qwen2(.5)-VL processor
QWEN3_DEFAULTS = SmartResize(factor=32, min_pixels=65_536, max_pixels=16_777_216)  # Qwen3-VL processor
UITARS_15 = SmartResize(factor=28, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28)
TARS = "bytedance/UI-TARS"
SSP = "likaixin2000/ScreenSpot-Pro-GUI-Grounding@bd8bbbb"
CLAW = "ZJU-REAL/ClawGUI@d990d3e clawgui-eval/"
VEN_GD = "inclusionAI/UI-Venus@56b1005"

PRESETS: tuple[Preset, ...] = (
    Preset(
        "uitars-1.5-point",
        "UI-TARS-1.5 (Qwen2.5-VL)",
        p.Prompt(p.UITARS_POINT),
        UITARS_15,
        ("uitars_action", "point_tag", "paren"),
        "abs",
        Decoding(max_new_tokens=128),
        source=f"{TARS} issues #182 (prompt, no system turn) and #215 (max_pixels 16384*28*28, greedy); "
        "README_coordinates.md (answers in pixels of the smart_resize'd image)",
        notes="ClawGUI sends 512 tokens and min 100*28*28; the maintainers give no token limit: 128 is "
        "ample for a point.",
    ),
    Preset(
        "uitars-1.5-computer-use",
        "UI-TARS-1.5 (Qwen2.5-VL)",
        p.Prompt(p.UITARS_COMPUTER_USE),
        UITARS_15,
        ("uitars_action", "point_tag", "paren"),
        "abs",
        Decoding(max_new_tokens=128),
        source=f"{TARS} codes/ui_tars/prompt.py GROUNDING_DOUBAO; preprocessing as uitars-1.5-point (#215)",
        notes="Phi-Ground's copy of this prompt drops the doubled '' after </point>; the maintainers' file has it.",
    ),
    Preset(
        "uitars-1.0",
        "UI-TARS 1.0 (Qwen2-VL)",
        p.Prompt(p.UITARS_POINT),
        QWEN2_DEFAULTS,
        ("uitars_action", "paren"),
        "rel1000",
        Decoding(max_new_tokens=128, frequency_penalty=1.0),
        source=f"{TARS} README_v1.md 'Coordinate Mapping' (0-1000), issue #6 (prompt), vLLM settings of README_v1",
        notes="Phi-Ground's ui_tars_7b/72b presets read pixels of a smart_resize'd image; the authors' README_v1 "
        "(and VenusBench-GD) say 0-1000: taken.",
    ),
    Preset(
        "qwen2.5-vl",
        "Qwen2.5-VL",
        p.Prompt("{instruction}", system=p.QWEN25_SYSTEM),
        SmartResize(factor=28, min_pixels=3136, max_pixels=99_999_999),
        ("tool_call", "bracket"),
        "abs",
        Decoding(max_new_tokens=100),
        refusal="terminate",
        source="QwenLM/Qwen2.5-VL cookbooks/utils/agent_function_call.py (computer_use tool) in QwenLM/Qwen-Agent "
        f"nous_fncall_prompt.py (system prompt); {SSP} models/qwen2_5vl.py L20-105 (native size with the resized "
        "size in the prompt, min 3136 px, tool_call answer in pixels of the resized image, 100 tokens)",
        notes="The harness writes the tool JSON with raw newlines and three newlines before '# Tools'; Qwen's own "
        "Qwen-Agent dumps the JSON and joins with two: Qwen's taken. The harness pre-fills the tool call's "
        "start; a server cannot, so the whole call is read. ClawGUI caps pixels at 12,845,056.",
    ),
    Preset(
        "qwen3-vl",
        "Qwen3-VL",
        p.Prompt(p.QWEN3_POINT),
        QWEN3_DEFAULTS,
        ("tool_call", "bracket"),
        "rel1000",
        Decoding(max_new_tokens=512),
        refusal="minus_one",
        source=f"{VEN_GD} models/ (plain point prompt); {CLAW} qwen3vl_parse (0-1000), 65,536..16,777,216 px, "
        "temperature 0, 512 tokens",
        notes="ClawGUI's tool-call system prompt (from Qwen's cookbook notebook) is not in git: unconfirmed, so "
        "the plain prompt; both answer 0-1000.",
    ),
    Preset(
        "os-atlas-7b",
        "OS-Atlas-Base-7B (Qwen2-VL)",
        p.Prompt(p.OS_ATLAS_7B),
        QWEN2_DEFAULTS,
        ("paren", "bracket"),
        "rel1000",
        Decoding(max_new_tokens=128, skip_special_tokens=False),
        source="OS-Copilot/OS-Atlas README (prompt, <|box_start|>(x1,y1),(x2,y2)<|box_end|> at 0-1000, "
        "skip_special_tokens=False, max_new_tokens 128)",
        notes="The ScreenSpot-Pro harness's copy of the prompt ends with a stray quote; the README's is taken.",
    ),
    Preset(
        "uground-v1",
        "UGround-V1 (Qwen2-VL)",
        p.Prompt(p.UGROUND),
        QWEN2_DEFAULTS,
        ("paren",),
        "rel1000",
        Decoding(max_new_tokens=128),
        source="OSU-NLP-Group/UGround grounding/uground_qwen2vl_serve.py (prompt, (x, y) in [0,1000)), README "
        "(temperature 0, vLLM fp16)",
        notes="The README's copy of the prompt is indented by markdown; the serve script's is taken. Processor "
        "defaults and the token limit are unconfirmed.",
    ),
    Preset(
        "gta1",
        "GTA1-7B-2507 (Qwen2.5-VL)",
        p.Prompt("{instruction}", system=p.GTA1_SYSTEM),
        SmartResize(factor=28, min_pixels=3136, max_pixels=4096 * 2160),
        ("paren",),
        "abs",
        Decoding(max_new_tokens=32),
        source="Yan98/GTA1 README and the Salesforce/GTA1-7B-2507 model card (system prompt with the resized "
        "height and width, smart_resize 3136..4096*2160, greedy, 32 tokens)",
        notes="GTA1-7B / 32B (on OpenCUA) answer pyautogui.click: use the opencua preset for them.",
    ),
    Preset(
        "ui-venus-ground",
        "UI-Venus-Ground (Qwen2.5-VL)",
        p.Prompt(p.UI_VENUS_GROUND),
        SmartResize(factor=28, min_pixels=2_000_000, max_pixels=4_800_000),
        ("bracket",),
        "abs",
        Decoding(max_new_tokens=128),
        source="inclusionAI/UI-Venus models/grounding/ui_venus_ground_7b.py (prompt, 2,000,000..4,800,000 px, "
        "box in pixels of the resized image, greedy, 128)",
        notes="ClawGUI's README says [0,1000] but its code divides by the image grid, as the authors' does: "
        "pixels taken.",
    ),
    Preset(
        "ui-venus-1.5",
        "UI-Venus-1.5 (Qwen3-VL)",
        p.Prompt(p.UI_VENUS_15, strip="."),
        QWEN3_DEFAULTS,
        ("bracket",),
        "rel1000",
        Decoding(max_new_tokens=128),
        refusal="minus_one",
        source="inclusionAI/UI-Venus models/grounding/ui_venus1_5_gd.py (prompt, trailing '.' stripped, 0-1000, "
        "[-1,-1] infeasible, greedy, 128, processor defaults)",
        notes="ClawGUI uses 3,136..12,845,056 px and 256 tokens; the authors' processor defaults are taken.",
    ),
    Preset(
        "gui-owl-1.5",
        "GUI-Owl-1.5 (Qwen3-VL)",
        p.Prompt("{instruction}", system=p.OWL15_SYSTEM),
        SmartResize(factor=32, min_pixels=196 * 32 * 32, max_pixels=9800 * 32 * 32),
        ("tool_call",),
        "rel1000",
        Decoding(max_new_tokens=2048, temperature=0.01, top_p=0.01, top_k=1),
        refusal="terminate",
        source="X-PLUG/MobileAgent Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py (system prompt "
        "with raw newlines, 196*32*32..9800*32*32 px, temperature 0.01, top_p 0.01, top_k 1, 2048 tokens)",
        notes="Phi-Ground's copy escapes the newlines inside the tool JSON; the authors' raw ones are taken. "
        "The infeasibility suffix is off (prompts.OWL15_INFEASIBLE adds it); a terminate call is a refusal.",
    ),
    Preset(
        "opencua",
        "OpenCUA-7B / 32B (Qwen2.5-VL, remote code: served only)",
        p.Prompt("{instruction}", system=p.PYAUTOGUI_SYSTEM),
        QWEN2_DEFAULTS,
        ("pyautogui",),
        "abs",
        Decoding(max_new_tokens=512),
        source="xlang-ai/OpenCUA README.md and model/README.md (system prompt, pyautogui.click in pixels of the "
        "smart_resize'd image, 3136..12,845,056 px, temperature 0, 512 tokens)",
        notes="OpenCUA-Qwen2-7B answers 0-1 (transform=rel1). Its architecture needs trust_remote_code: run it "
        "behind vLLM with the openai detector.",
    ),
    Preset(
        "holo1.5",
        "Holo1.5 (Qwen2.5-VL)",
        p.Prompt(p.HOLO15),
        SmartResize(factor=28, min_pixels=3136, max_pixels=2560 * 1440),
        ("json_xy", "paren"),
        "abs",
        Decoding(max_new_tokens=32),
        source=f"{SSP} PR #19, H Company's own submission (prompt + newline + instruction, Click(x, y) in pixels of "
        "the resized image, 3136..2560*1440 px, temperature 0, 32 tokens)",
        notes="VenusBench-GD sends a JSON-schema prompt with guided decoding; H Company's own submission is "
        "taken. Both answer forms are read.",
    ),
    Preset(
        "showui",
        "ShowUI-2B (Qwen2-VL)",
        p.Prompt("{instruction}", order="lead,image,text", lead=p.SHOWUI_LEAD),
        SmartResize(factor=28, min_pixels=256 * 28 * 28, max_pixels=1344 * 28 * 28),
        ("bracket",),
        "rel1",
        Decoding(max_new_tokens=128),
        source="showlab/ShowUI QUICK_START.md (one user turn: system text, image, instruction; 256..1344 tiles "
        "of 28 px; [x, y] in 0-1; greedy, 128)",
    ),
    Preset(
        "seeclick",
        "SeeClick (Qwen-VL-Chat: served only)",
        p.Prompt(p.SEECLICK),
        FixedResize(448, 448),
        ("paren", "bracket"),
        "rel1",
        Decoding(max_new_tokens=256),
        source="njucckevin/SeeClick pretrain/screenspot_test.py (prompt, image then text, (x,y) in 0-1); "
        f"{SSP} models/seeclick.py (greedy, 256 tokens)",
        notes="Qwen-VL's fixed 448x448 input is unconfirmed in a primary source.",
    ),
    Preset(
        "aria-ui",
        "Aria-UI (Aria MoE: served only)",
        p.Prompt(p.ARIA_UI),
        Original(),
        ("paren",),
        "rel1000",
        Decoding(max_new_tokens=50, top_k=1, stop=("<|im_end|>",)),
        source=f"{SSP} models/ariaui.py, vLLM path (prompt, (x, y) in 0-1000, split_image, temperature 0, top_k 1, "
        "50 tokens, stop <|im_end|>)",
        notes="The harness's transformers path tests 0<=x<=1 on the 0-1000 value and drops nearly every point; "
        "its vLLM path is the one taken.",
    ),
    Preset(
        "gpt-box",
        "GPT-4o / GPT-5 (API)",
        p.Prompt(p.GPT_USER, system=p.GPT_SYSTEM),
        Original(),
        ("bracket",),
        "rel1",
        Decoding(max_new_tokens=2048),
        source=f"{SSP} models/gpt4x.py (system and user prompts, the original PNG, [[x0,y0,x1,y1]] in 0-1 scored "
        "by its centre, temperature 0, 2048 tokens)",
    ),
    Preset(
        "claude",
        "Claude (API)",
        p.Prompt(p.CLAUDE),
        Fit(max_edge=1568, max_pixels=1_150_000),
        ("paren", "bracket"),
        "abs",
        Decoding(max_new_tokens=256),
        source="platform.claude.com/docs/en/build-with-claude/vision-coordinates (absolute pixels of the image "
        "Claude sees; images past 1568 px or about 1.15 MP are shrunk by the API); anthropics/claude-quickstarts "
        "computer-use-demo tools/computer.py (scale_coordinates)",
        notes="No harness has a Claude grounding prompt: this one is ours, following Anthropic's guidance. The "
        "image is shrunk here first so the API's resize is the identity and the frame is known.",
    ),
    Preset(
        "gemini-box2d",
        "Gemini (API, native box_2d)",
        p.Prompt(p.GEMINI_BOX),
        Original(),
        ("box_2d", "bracket"),
        "yx_swap+rel1000",
        Decoding(max_new_tokens=1024),
        source="docs.cloud.google.com/vertex-ai/generative-ai/docs/bounding-box-detection (box_2d = "
        "[y_min, x_min, y_max, x_max], 0-1000, y first)",
        notes="The prompt is ours (the page shows the output form, not a grounding prompt).",
    ),
    Preset(
        "gemini-point",
        "Gemini (API, ClawGUI point form)",
        p.Prompt(p.GEMINI_POINT_USER, order="lead|text|image", lead=p.GEMINI_POINT_LEAD),
        Original(),
        ("paren_last",),
        "rel1000",
        Decoding(max_new_tokens=32768),
        source=f"{CLAW} (three user messages: the locator prompt, the description, the image; last (x,y) in "
        "0-1000, x first; temperature 0, max_completion_tokens 32768)",
        notes="Google's own form is box_2d, y first (gemini-box2d); this is the harness's point form, whose "
        "3.0 Pro figures it reports.",
    ),
)

# The 2026 families (issue 28): presets read from each family's own evaluation or agent code, at the
# commits given. ../shared/reference/field-2026.md lists the families; those whose prompt or answer
# format could not be confirmed in a public source are not here (docs/presets-2026.md lists them and
# why).
#
# All of these run behind a server (`openai`); the Qwen2.5-VL, Qwen3-VL and Qwen3.5 based ones
# (GroundNext, MAI-UI, EvoCUA, Holo2, KV-Ground, Qwen3.5) also in-process with `qwenvl` (a checkpoint
# folder or hub id and preset=NAME).
MAI_UI = "Tongyi-MAI/MAI-UI@4dd07b9"
EVOCUA = "meituan/EvoCUA@4a0ad5f"
GROUNDCUA = "ServiceNow/GroundCUA@81136d4"
CUACTSPOT = "microsoft/Phi-Ground@3956408 benchmark/CUActSpot/cuactspot/models/builtins.py"
KV_GROUND = "vocaela/kv-ground@04cf530"
SSP_QWEN35 = "likaixin2000/ScreenSpot-Pro-GUI-Grounding@4a04544 models/qwen3_5.py"
QWEN3_PROCESSOR = SmartResize(factor=32, min_pixels=65_536, max_pixels=16_777_216)  # Qwen3-VL's defaults

FAMILIES_2026: tuple[Preset, ...] = (
    Preset(
        "mai-ui",
        "MAI-UI 2B / 8B / 32B (Qwen3-VL)",
        p.Prompt(p.MAI_UI_USER, system=p.MAI_UI_SYSTEM, order="text,image"),
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
        p.Prompt(p.EVOCUA_USER, system=p.EVOCUA_SYSTEM),
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
        p.Prompt("{instruction}", system=p.GROUNDNEXT_SYSTEM),
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
        p.Prompt(p.HOLO3),
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
        p.Prompt(p.HOLO2),
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
        p.Prompt("{instruction}", system=p.QWEN3VL_GROUNDING_SYSTEM),
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
        p.Prompt("{instruction}", system=p.QWEN3VL_GROUNDING_SYSTEM),
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

PRESETS = (*PRESETS, *FAMILIES_2026)
