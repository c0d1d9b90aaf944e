"""A scripted model for the OpenAI Agents SDK: its real agent loop, offline, no API key.

Shared by the instrumentor's tests and the overhead benchmark.
"""

from __future__ import annotations

from typing import Any

from agents import ModelProvider, ModelSettings
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.tracing import generation_span
from agents.usage import Usage


class ScriptedModel(Model):
    """Returns the prepared outputs in order; opens its own generation span as a model must."""

    def __init__(self, steps: list[list[Any]]) -> None:
        self.steps = list(steps)

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: ModelSettings,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        output = self.steps.pop(0)
        messages = input if isinstance(input, list) else [{"role": "user", "content": input}]
        with generation_span(model="scripted-1", input=messages) as span:
            span.span_data.output = [item.model_dump() for item in output]
            span.span_data.usage = {"input_tokens": 11, "output_tokens": 7}
        return ModelResponse(
            output=output,
            usage=Usage(requests=1, input_tokens=11, output_tokens=7),
            response_id=None,
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class ScriptedProvider(ModelProvider):
    def __init__(self, model: Model) -> None:
        self.model = model  # the same instance every turn: get_model is called per turn

    def get_model(self, model_name: str | None) -> Model:
        return self.model
