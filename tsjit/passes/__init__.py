"""Graph passes: one module per pass, each `name(graph, ...) -> bool` (whether it changed the graph).

Every pass mutates the graph in place, keeps `graph.lint()` true, logs through `tsjit.log` under its module
name and asks `tsjit.log.opt_allowed()` before each rewrite (DESIGN.md "Passes"). Run them through
`tsjit.passes.pass_runner.run_pass` so TSJIT_LOG_LEVEL and TSJIT_LINT apply. This package imports nothing at
package level: import the pass you need from its module.
"""
