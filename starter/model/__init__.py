"""The optional model layer (``LLM_ENABLED=1``): settings, transports, embeddings and the two tasks.

    settings.py    LLMConfig, the environment read once
    replies.py     LLMReply / EmbedReply with typed ErrorKind, JSON repair of model text
    transports.py  Ollama and OpenAI-compatible servers, under a deadline
    embeddings.py  a local sentence-transformers model (lazy)
    prompting.py   the user turns of extraction and rerank
    client.py      LLMClient: chat_json with one repair, extract, rerank, embed, available
"""
from starter.model.client import LLMClient
from starter.model.prompting import format_extract_user, format_rerank_user, rerank_scores
from starter.model.replies import EmbedReply, ErrorKind, LLMReply, parse_json_reply, strip_model_text
from starter.model.settings import LLMConfig

__all__ = ["EmbedReply", "ErrorKind", "LLMClient", "LLMConfig", "LLMReply", "format_extract_user",
           "format_rerank_user", "parse_json_reply", "rerank_scores", "strip_model_text"]
