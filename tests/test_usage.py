"""Tokens and cost: per model call in the graph, per run in the read API and the CLI.

The price file is parsed by a pure function (property tests: any text either gives a
table or a PriceFileError naming the problem); the mapper prices calls with the table
it is given; totals are summed by a real embedded store.
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider

import otel_prov
from otel_prov.processing._price_file import prices_from_settings
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._prices import PriceFileError, PriceTable, Usage, parse_prices
from otel_prov.prov._rdf import decimal
from otel_prov.prov._span_record import SpanRecord
from otel_prov.prov._vocab import O
from otel_prov.read import open_store
from otel_prov.setup._configure import configure
from tests.builders import make_span
from tests.cli import run_cli

_PRICE = st.decimals(min_value=0, max_value=10_000, places=4, allow_nan=False)
_MODEL = st.text(min_size=1, max_size=20)


@given(st.dictionaries(_MODEL, st.tuples(_PRICE, _PRICE, st.sampled_from(["USD", "EUR"]))))
def test_a_json_price_file_gives_back_its_prices(models: dict[str, tuple[Decimal, ...]]) -> None:
    document = {
        model: {"input": str(i), "output": str(o), "currency": c}
        for model, (i, o, c) in models.items()
    }
    table = parse_prices(json.dumps(document), name="prices.json")
    assert set(table.models) == set(models)
    for model, (price_in, price_out, currency) in models.items():
        price = table.models[model]
        assert (price.per_million["input"], price.per_million["output"]) == (price_in, price_out)
        assert price.per_million["cache_read"] == price_in  # defaults to the input price
        assert price.per_million["reasoning"] == price_out
        assert price.currency == currency


@given(st.text(max_size=200), st.sampled_from(["prices.toml", "prices.json"]))
def test_any_text_is_a_table_or_a_named_problem(text: str, name: str) -> None:
    try:
        table = parse_prices(text, name=name)
    except PriceFileError as exc:
        assert str(exc)
    else:
        assert isinstance(table, PriceTable)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('["m"]\ninput = 1\n', "model 'm': no output price"),
        ('["m"]\ninput = 1\noutput = "x"\n', "output price 'x' is not a number"),
        ('["m"]\ninput = -1\noutput = 1\n', "input price -1 is not a number >= 0"),
        ('["m"]\ninput = 1\noutput = 1\ncached = 1\n', "unknown field(s) cached"),
        ("input = 1\n", "model 'input': expected a table"),
        ("[m\n", "not valid TOML"),
    ],
)
def test_a_bad_price_file_names_its_problem(text: str, problem: str) -> None:
    with pytest.raises(PriceFileError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_prices(text, name="prices.toml")


@given(
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
)
def test_each_token_is_priced_once_at_its_own_rate(
    uncached: int, read: int, written: int, plain_out: int, reasoning: int
) -> None:
    table = parse_prices(
        '["m"]\ninput = 2\noutput = 8\ncache_read = 1\ncache_write = 3\nreasoning = 16\n',
        name="p.toml",
    )
    price = table.price("m")
    assert price is not None
    usage = Usage(uncached + read + written, plain_out + reasoning, read, written, reasoning)
    expected = Decimal(2 * uncached + read + 3 * written + 8 * plain_out + 16 * reasoning)
    assert price.cost(usage) == expected / 1_000_000


def _model_call(**attributes: object) -> list[SpanRecord]:
    session = make_span(1, name="invoke_agent a", end_ms=10, gen_ai__operation__name="invoke_agent")
    call = make_span(2, 1, name="chat m", gen_ai__operation__name="chat", **attributes)
    return [session, call]


_TABLE = parse_prices('["gpt-x"]\ninput = 2.5\noutput = 10\ncurrency = "EUR"\n', name="p.toml")


def _cost_triples(record_triples: tuple[tuple[str, str, str], ...]) -> dict[str, str]:
    wanted = {O.costAmount: "amount", O.costCurrency: "currency", O.costSource: "source"}
    return {wanted[p]: o for _, p, o in record_triples if p in wanted}


def test_a_call_with_tokens_and_no_cost_is_priced_from_the_table() -> None:
    spans = _model_call(
        gen_ai__request__model="gpt-x-latest",
        gen_ai__response__model="gpt-x",  # priced as the model that answered
        gen_ai__usage__input_tokens=1000,
        gen_ai__usage__output_tokens=100,
    )
    record = map_spans(spans, prices=_TABLE)
    assert _cost_triples(record.triples) == {
        "amount": decimal(Decimal("0.0035")),
        "currency": '"EUR"',
        "source": '"local"',
    }
    assert record.triples == map_spans(spans, prices=_TABLE).triples
    assert _cost_triples(map_spans(spans).triples) == {}  # no table, no price


def test_a_reported_cost_wins_over_the_table() -> None:
    spans = _model_call(
        gen_ai__request__model="gpt-x",
        gen_ai__usage__input_tokens=1000,
        gen_ai__usage__cost__amount=0.5,
        gen_ai__usage__cost__currency="USD",
        gen_ai__usage__cost__source="provider",
    )
    assert _cost_triples(map_spans(spans, prices=_TABLE).triples) == {
        "amount": decimal(Decimal("0.5")),
        "currency": '"USD"',
        "source": '"provider"',
    }


def test_a_cost_that_is_not_a_number_is_reported_and_left_out() -> None:
    spans = _model_call(gen_ai__request__model="m", gen_ai__usage__cost__amount="lots")
    record = map_spans(spans)
    assert _cost_triples(record.triples) == {}
    assert any("gen_ai.usage.cost.amount is 'lots'" in p for p in record.problems)


def test_a_price_file_that_cannot_be_used_warns_once_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad = tmp_path / "prices.toml"
    bad.write_text('["m"]\ninput = 1\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert prices_from_settings(bad) is None
        assert prices_from_settings(bad) is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"price file {bad} not used: model 'm': no output price; model calls are not priced"
    ]


def _agent_run(tracer_provider: TracerProvider) -> None:
    """A run with three model calls: two in the run, one in a sub-agent's session."""
    at = tracer_provider
    with otel_prov.agent_session("planner", question="q", tracer_provider=at):
        with otel_prov.iteration(1, tracer_provider=at):
            with otel_prov.model_call("gpt-x", tracer_provider=at):
                otel_prov.set_usage(
                    input_tokens=1000, output_tokens=100, cache_read_tokens=400, reasoning_tokens=20
                )
            with (
                otel_prov.tool_call("delegate", tracer_provider=at),
                otel_prov.agent_session("helper", tracer_provider=at),
                otel_prov.model_call("gpt-x", tracer_provider=at),
            ):
                otel_prov.set_usage(input_tokens=10, output_tokens=1)
        with (
            otel_prov.iteration(2, tracer_provider=at),
            otel_prov.model_call("other", tracer_provider=at),
        ):
            otel_prov.set_usage(input_tokens=5, output_tokens=5, cost=0.25, currency="USD")


def test_totals_are_summed_per_kind_and_currency_sub_sessions_included(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"gpt-x": {"input": 2, "output": 10, "cache_read": 1}}))
    store = tmp_path / "store"
    handle = configure(store=store, set_global=False, otlp=False, prices=prices)
    _agent_run(handle.tracer_provider)
    handle.shutdown()

    (run,) = open_store(store).sessions().sessions
    assert dict(run.usage.tokens) == {
        "input": 1015,
        "output": 106,
        "cache_read": 400,
        "reasoning": 20,
    }
    # gpt-x: 600*2 + 400*1 + 100*10 = 2,600 and 10*2 + 1*10 = 30 per million, in USD
    assert {(c.amount, c.currency) for c in run.usage.costs} == {(Decimal("0.25263"), "USD")}

    (row,) = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert row["tokens"] == {"input": 1015, "output": 106, "cache_read": 400, "reasoning": 20}
    assert row["cost"] == {"amount": 0.25263, "currency": "USD"}
    shown = run_cli("show", run.id, "--store", str(store))
    assert "1,015 input, 106 output, 400 cache read, 20 reasoning" in shown.stdout
    assert "0.25263 USD" in shown.stdout
    view = open_store(store).session(run.id)
    (helper,) = list(view.nested_sessions())
    assert dict(helper.usage.tokens) == {"input": 10, "output": 1}
    assert "; it cost 0.25263 USD." in open_store(store).summary(run.id).text()


def test_costs_in_different_currencies_are_not_added(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('["gpt-x"]\ninput = 2\noutput = 10\ncurrency = "EUR"\n')
    store = tmp_path / "store"
    handle = configure(store=store, set_global=False, otlp=False, prices=prices)
    _agent_run(handle.tracer_provider)
    handle.shutdown()

    (run,) = open_store(store).sessions().sessions
    assert run.usage.cost is None
    assert {(c.amount, c.currency) for c in run.usage.costs} == {
        (Decimal("0.00303"), "EUR"),  # 1000*2 + 100*10 + 10*2 + 1*10 per million
        (Decimal("0.25"), "USD"),
    }
    (row,) = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert row["cost"] is None and len(row["costs"]) == 2
    shown = run_cli("show", run.id, "--store", str(store)).stdout
    assert "0.00303 EUR + 0.25 USD (mixed currencies, not added)" in shown
    told = open_store(store).summary(run.id).text()
    assert "; it cost 0.00303 EUR and 0.25 USD (different currencies, not added)." in told


HUGE = {"input": 10**30 + 5, "output": 2**63 + 3}
"""Totals past a 64-bit integer (a store's ``xsd:integer``) and past ``xsd:decimal``'s
range in Oxigraph (about 1.7e20): a SUM there fails, and the total read back was 0."""


def huge_usage_spans() -> list[SpanRecord]:
    """A run whose two model calls report token counts no 64-bit integer holds."""
    return [
        make_span(1, None, end_ms=10, gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="huge", gen_ai__conversation__id="huge"),
        make_span(2, 1, start_ms=1, end_ms=2, gen_ai__operation__name="chat",
                  gen_ai__request__model="m", gen_ai__usage__input_tokens=10**30,
                  gen_ai__usage__output_tokens=2**63),
        make_span(3, 1, start_ms=3, end_ms=4, gen_ai__operation__name="chat",
                  gen_ai__request__model="m", gen_ai__usage__input_tokens=5,
                  gen_ai__usage__output_tokens=3),
    ]  # fmt: skip


def test_huge_token_counts_are_summed_exactly(tmp_path: Path) -> None:
    store = tmp_path / "store"
    handle = configure(store=store, set_global=False, otlp=False)
    at = handle.tracer_provider
    with otel_prov.agent_session("huge", question="q", tracer_provider=at):
        with otel_prov.model_call("m", tracer_provider=at):
            otel_prov.set_usage(input_tokens=10**30, output_tokens=2**63)
        with otel_prov.model_call("m", tracer_provider=at):
            otel_prov.set_usage(input_tokens=5, output_tokens=3)
    handle.shutdown()

    reader = open_store(store)
    (run,) = reader.sessions().sessions
    assert dict(run.usage.tokens) == HUGE
    assert dict(reader.session(run.id).usage.tokens) == HUGE
    (row,) = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert row["tokens"] == HUGE
