"""Every function of the e2e corpus runs the same as a generated plan and in the interpreter: one optimized plan
of the scripted function (after its profiled run), run both ways on the same inputs, gives the same results, or
the same error (class, message and failing node). Plans that fork or wait only run in the interpreter."""

from __future__ import annotations

import pytest
import torch
from corpus import CASES, Case
from test_script_functions import same

from tsjit.api import script
from tsjit.api.function import bind_arguments

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


def outcome(run, inputs):
    try:
        return "value", run(*inputs)
    except Exception as error:
        return "error", error


def seeded_inputs(case: Case, schema) -> list:
    torch.manual_seed(0)
    return bind_arguments(schema, case.make_inputs(), {})


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_generated_plan_and_interpreter_agree(case: Case):
    scripted = script(case.function)
    executor = scripted._runtime_function().executor
    plan = executor.get_plan(seeded_inputs(case, scripted.schema))
    if getattr(plan, "record", None) is not None:  # a profiling plan, interpreted: its one run makes the optimized
        outcome(plan.run, seeded_inputs(case, scripted.schema))  # plan, which is generated
        plan = executor.get_plan(seeded_inputs(case, scripted.schema))
    if plan.generated is None:
        return  # forks or waits: the interpreter is the only way (test_script_functions runs it)
    generated = outcome(plan.run, seeded_inputs(case, scripted.schema))
    interpreted = outcome(plan.interpret, seeded_inputs(case, scripted.schema))
    assert generated[0] == interpreted[0], f"generated {generated!r}, interpreted {interpreted!r}"
    if generated[0] == "error":
        assert type(generated[1]) is type(interpreted[1])
        assert str(generated[1]) == str(interpreted[1]) and generated[1].node is interpreted[1].node
    else:
        assert same(interpreted[1], generated[1]), f"interpreted {interpreted[1]!r} != generated {generated[1]!r}"
