"""The README's first example: a hand-instrumented agent step, stored as provenance.

Run it, then `otel-prov show quickstart` (OTEL_PROV_STORE picks the store).
"""

import otel_prov

handle = otel_prov.configure(service_name="weather-bot")


@otel_prov.tool_call("get_weather")  # records the call's arguments and result
def get_weather(city: str) -> str:
    return f"{city}: 18 °C"


with otel_prov.agent_session(
    "weather-assistant", question="Weather in Paris?", conversation_id="quickstart"
) as session:
    with otel_prov.iteration(
        1, thought="I need the weather.", action="get_weather", arguments='{"city": "Paris"}'
    ):
        with otel_prov.model_call("gpt-4o", provider="openai"):
            otel_prov.set_usage(input_tokens=112, output_tokens=24)
        observation = get_weather(city="Paris")
        otel_prov.set_observation(observation)
    otel_prov.set_answer("18 °C in Paris.", span=session)

handle.shutdown()
if handle.exporter is not None:
    print(
        f"provenance stored in {handle.exporter.describe()}; see it with: otel-prov show quickstart"
    )
