"""Backend for any OpenAI-compatible chat completions endpoint (vLLM, llama.cpp server,
Ollama, OpenAI).

The answer is asked for as JSON through `response_format`: `json_schema` (OpenAI
structured outputs; vLLM, llama.cpp server and Ollama accept it too), `json_object`, or
`none` for servers that accept neither. If the server rejects `response_format` (a 400
whose body mentions `response_format` or `schema`), the call is repeated once without it
and the backend stops sending it: the answer is validated against the schema afterwards
either way. Timeouts, connection errors, 408/409/425/429 and 5xx answers are transient
(retried by the runner); other 4xx answers are not.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx

from transforms.llm.base import Completion, CompletionRequest, LLMError

RESPONSE_FORMATS = ("json_schema", "json_object", "none")
_TRANSIENT_STATUS = {408, 409, 425, 429}


class OpenAICompatibleBackend:
    """Chat completions over HTTP with `httpx`; one pooled client, safe across threads."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        response_format: str = "json_schema",
        max_parallel: int = 8,
    ) -> None:
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}")
        self.model = model
        self.max_parallel = max_parallel
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._response_format = response_format
        self._format_lock = threading.Lock()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, limits=httpx.Limits(max_connections=64))

    def complete(self, request: CompletionRequest, timeout_s: float) -> Completion:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.chat_messages(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        response_format = self._response_format_of(request)
        if response_format is not None:
            body["response_format"] = response_format
        response = self._post(body, timeout_s)
        if response_format is not None and _rejects_response_format(response):
            with self._format_lock:
                self._response_format = "none"
            body.pop("response_format")
            response = self._post(body, timeout_s)
        if response.status_code != 200:
            transient = response.status_code >= 500 or response.status_code in _TRANSIENT_STATUS
            raise LLMError(
                f"HTTP {response.status_code} from {self._url}: {response.text[:300]}",
                transient=transient,
            )
        return self._completion(response)

    def _response_format_of(self, request: CompletionRequest) -> dict[str, Any] | None:
        if self._response_format == "json_schema":
            name = request.prompt_version.split("/")[0]
            schema = {"name": name, "schema": request.json_schema, "strict": False}
            return {"type": "json_schema", "json_schema": schema}
        if self._response_format == "json_object":
            return {"type": "json_object"}
        return None

    def _post(self, body: dict[str, Any], timeout_s: float) -> httpx.Response:
        try:
            return self._client.post(self._url, json=body, timeout=timeout_s)
        except httpx.TimeoutException as exc:
            raise LLMError(f"timed out after {timeout_s}s: {exc!r}", transient=True) from exc
        except httpx.TransportError as exc:
            raise LLMError(f"transport error: {exc!r}", transient=True) from exc

    def _completion(self, response: httpx.Response) -> Completion:
        try:
            payload = response.json()
            text = payload["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(
                f"malformed chat completion: {response.text[:300]}", transient=False
            ) from exc
        usage = payload.get("usage") or {}
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            model=str(payload.get("model") or self.model),
            backend=self.name,
        )


def _rejects_response_format(response: httpx.Response) -> bool:
    body = response.text.lower()
    return response.status_code == 400 and ("response_format" in body or "schema" in body)
