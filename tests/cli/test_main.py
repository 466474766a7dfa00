"""The `tsjit` command itself: help with examples, every subcommand listed, usage errors exit 2; the installed
script and `python -m tsjit` are the same command."""

from __future__ import annotations

from cli_runner import tsjit

from tsjit import cli


def test_help_lists_every_subcommand_and_examples():
    by_module = tsjit("--help")
    by_script = tsjit("--help", script=True)
    assert by_module.returncode == by_script.returncode == 0
    assert by_module.stdout == by_script.stdout
    for module in cli.SUBCOMMANDS:
        name = cli.subcommand_name(module)
        first_line = module.__doc__.strip().splitlines()[0]
        assert f"    {name}" in by_module.stdout and f"tsjit {name} " in by_module.stdout, name
        assert first_line.split()[0] in by_module.stdout
    assert "exit status: 0 done, 1 the program or its input failed, 2 usage error" in by_module.stdout


def test_usage_errors_exit_2():
    for args in ([], ["frobnicate"], ["run"], ["show", "x.pt", "--no-such-option"]):
        result = tsjit(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("usage: tsjit"), (args, result.stderr)


def test_every_subcommand_follows_the_contract():
    """Each subcommand module: a docstring (its first line is the help), add_arguments(parser), run(args)."""
    parser = cli.build_parser()
    required = {"show": ["x.pt"], "run": ["x.pt"], "lower": ["x.pt"], "svg": ["x.pt"], "diff": ["-p", "dce", "x.ir"]}
    for module in cli.SUBCOMMANDS:
        assert module.__doc__ and callable(module.add_arguments) and callable(module.run), module.__name__
        args = parser.parse_args([cli.subcommand_name(module), *required.get(cli.subcommand_name(module), [])])
        assert args.subcommand is module
