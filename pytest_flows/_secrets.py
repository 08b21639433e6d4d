"""What counts as a secret: one list for the environment isolation and the recorder."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["PROVIDER_KEYS", "is_secret_env_name", "secret_env_names"]

#: Provider keys hidden from flows tests (a recording test gets them back while it
#: may record) and scrubbed from anything the recorder saves.
PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "COHERE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "PERPLEXITY_API_KEY",
    "XAI_API_KEY",
    "HF_TOKEN",
    "HUGGINGFACE_API_KEY",
    "SERPER_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)

_SECRET_ENV = re.compile(
    r"(API_?KEY|_TOKEN|_SECRET|SECRET_KEY|ACCESS_KEY|ACCESS_KEY_ID|PASSWORD|PASSWD|CREDENTIALS?)$"
)


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret."""
    upper = name.upper()
    return upper in PROVIDER_KEYS or _SECRET_ENV.search(upper) is not None


def secret_env_names(environ: Mapping[str, str]) -> list[str]:
    """The names in ``environ`` that hold secrets, sorted."""
    return sorted(name for name in environ if is_secret_env_name(name))
