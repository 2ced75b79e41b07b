"""`provrag serve` fuzzed from its own /openapi.json by Schemathesis: every operation, with the
bearer token (each response must be a non-5xx whose status is declared for that operation and
whose body matches the declared schema; data that violates the schema must be refused, data that
fits it accepted) and without it (401, declared, on every operation). The server is a real
`provrag serve` subprocess on an index of ../shared/corpora/small, as a user starts it.

Through Schemathesis' Python API (`operation.as_strategy` under Hypothesis' `@given`), one test per
operation and generation mode: its pytest plugin's lazy loader (`from_fixture`) reads a private
pytest attribute that pytest 9 no longer has.

Schemathesis' "schema-violating request accepted" check counts only some 4xx as a refusal; the
server answers 413 for a field over its declared maxLength (a documented bound, the status of a
body over MAX_BODY_BYTES too), so 413 is added to what counts as a refusal."""
from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from tests.attack.conftest import TOKEN, budget, record

REFUSALS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
CONFIG = f"""
[checks]
negative_data_rejection.expected-statuses = {json.dumps(REFUSALS)}
"""
EXAMPLES = budget(ci=10, full=150)
# an ask, a verify or a resolve (questions up to 2,000 characters, answers up to 50,000) takes
# seconds on 2 shared cores, and so do many of their invalid bodies (a CI run at load 20 spent 51 s
# on 10 invalid resolve bodies, 27 s on 10 invalid verify bodies): fewer of them in CI, valid or
# not; the same number as the others under `make fuzz`
SLOW = {"POST /v1/ask": budget(ci=4, full=150), "POST /v1/verify": budget(ci=4, full=150),
        "POST /v1/resolve": budget(ci=4, full=150)}
AUTH = {"Authorization": f"Bearer {TOKEN}"}
OPERATIONS = ["POST /v1/ask", "POST /v1/resolve", "POST /v1/verify", "GET /v1/traces", "GET /v1/traces/{trace_id}",
              "GET /v1/health", "GET /v1/documents/{document}/pages/{page}"]
FUZZ = dict(deadline=None, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                   HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def api(guarded_server):
    config = schemathesis.Config.from_str(CONFIG)
    return schemathesis.openapi.from_url(guarded_server.url + "/openapi.json", config=config, headers=AUTH,
                                         timeout=30)


def operation(api, name: str):
    found = {f"{op.method.upper()} {op.path}": op for op in (r.ok() for r in api.get_all_operations())}
    assert name in found, f"{name} is not in /openapi.json: {sorted(found)}"
    return found[name]


def fuzzed(test: str, name: str, mode: str, cases: int, failures: int) -> None:
    record({"test": test, "operation": name, "mode": mode, "cases": cases, "failures": failures})


def test_the_schema_has_every_operation(api):
    assert sorted(f"{op.method.upper()} {op.path}" for op in (r.ok() for r in api.get_all_operations())) \
        == sorted(OPERATIONS)


@pytest.mark.parametrize(("name", "mode"), [
    pytest.param(name, mode, id=f"{name}-{mode.value}") for name in OPERATIONS
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if not (name == "GET /v1/health" and mode == GenerationMode.NEGATIVE)])   # no input to get wrong
def test_every_operation_with_the_token(api, guarded_server, name, mode):
    op = operation(api, name)
    sent = []

    @given(case=op.as_strategy(generation_mode=mode))
    @settings(max_examples=SLOW.get(name, EXAMPLES), **FUZZ)
    def fuzz(case):
        sent.append(1)
        response = case.call_and_validate(base_url=guarded_server.url, headers=AUTH, timeout=120)
        assert response.status_code < 500

    try:
        fuzz()
    except BaseException:
        fuzzed("with_token", name, mode.value, len(sent), 1)
        raise
    fuzzed("with_token", name, mode.value, len(sent), 0)
    assert sent
    assert "Traceback" not in guarded_server.output()


@pytest.mark.parametrize("name", OPERATIONS)
def test_every_operation_without_the_token_is_a_declared_401(api, guarded_server, name):
    op = operation(api, name)
    assert "401" in op.definition.raw["responses"], f"{name} does not declare 401"
    sent = []

    @given(case=op.as_strategy(generation_mode=GenerationMode.POSITIVE))
    @settings(max_examples=max(3, EXAMPLES // 3), **FUZZ)
    def fuzz(case):
        sent.append(1)
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"bearer {TOKEN}"}):
            response = case.call(base_url=guarded_server.url, headers=headers, timeout=60)
            assert response.status_code == 401, (name, headers, response.status_code, response.text[:200])
            assert list(response.json()) == ["error"] and response.headers["www-authenticate"] == ["Bearer"]

    fuzz()
    fuzzed("without_token", name, "valid", len(sent) * 3, 0)
