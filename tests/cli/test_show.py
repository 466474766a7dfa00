"""`tsjit show`: a program's graph, inlined graph, code and optimized plan, from archives and Python files."""

from __future__ import annotations

from cli_runner import program, tsjit


def test_an_archive_shows_forward_graph_by_default(net_archive):
    result = tsjit("show", str(net_archive), script=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("graph(%self.1 : __torch__.cli_programs.Net,\n      %x.1 : Tensor):\n")
    assert 'prim::CallMethod[name="forward"](%linear.1, %x.1)' in result.stdout and "aten::relu" in result.stdout


def test_views_of_a_module_in_a_python_file():
    result = tsjit("show", program("Net"), "--code", "--inlined")
    assert result.returncode == 0, result.stderr
    code, inlined = result.stdout.removeprefix("# code\n").split("# inlined\n")
    assert code.startswith("def forward(self,\n    x: Tensor) -> Tensor:\n  linear = self.linear\n")
    assert "torch.mul(torch.relu((linear).forward(x, )), 2)" in code
    assert inlined.startswith("graph(%self : __torch__.cli_programs.Net,\n      %x.1 : Tensor):\n")
    assert "aten::linear" in inlined and "prim::CallMethod" not in inlined


def test_another_method_by_name():
    result = tsjit("show", program("Net"), "--method", "twice", "--code")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def twice(self,")
    missing = tsjit("show", program("Net"), "--method", "thrice")
    assert missing.returncode == 1
    assert "has no method 'thrice' (its methods: forward, twice)" in missing.stderr


def test_the_plan_for_example_inputs_fuses_the_lstm_cell():
    """The seed's LSTM cell: the plan the executor runs is specialized to the inputs' types, with one FusionGroup."""
    inputs = ["3x10", "(3x20,3x20)", "80x10", "80x20", "80", "80"]
    result = tsjit("show", program("lstm_cell"), "--plan", "--inputs", *inputs)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("graph(%input.1 : Float(*, *, requires_grad=0, device=cpu),")
    assert result.stdout.count("prim::FusionGroup_0(") == 1 and "prim::ConstantChunk[chunks=4, dim=1]" in result.stdout


def test_usage_errors_exit_2():
    no_inputs = tsjit("show", program("scale"), "--plan")
    assert no_inputs.returncode == 2
    assert no_inputs.stderr.splitlines()[-1] == "tsjit show: error: --plan needs example inputs: --inputs SPEC..."
    bad_dtype = tsjit("show", program("scale"), "--plan", "--inputs", "2x2:float33")
    assert bad_dtype.returncode == 2 and "unknown dtype 'float33'" in bad_dtype.stderr
    python_file = tsjit("show", program("scale").partition(":")[0])
    assert python_file.returncode == 1 and "name the function or module in it" in python_file.stderr


def test_a_compile_error_points_at_the_source_without_a_traceback():
    result = tsjit("show", program("not_script"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("tsjit show: error: ")
    assert "return x.nonexistent_method()" in result.stderr and "<--- HERE" in result.stderr
    assert "Traceback (most recent call last)" not in result.stderr
