"""Running graphs: generated plans, the interpreter (Code, InterpreterState), the graph executor (ArgumentSpec,
ExecutionPlan), futures for fork and wait, and the runtime's Function (script objects and their Methods are
values of the IR level: tsjit.ir.objects).

- `operations.py`: the callable each node runs, resolved once per node.
- `last_uses.py`: where each value dies (moves and drops).
- `generated_plan.py`: a plan as one generated Python function (locals, direct calls, if/for/while).
- `interpreter.py`: Code (a graph as a linear instruction list) and InterpreterState (registers, frames, pc), for
  plans that fork or wait and for TSJIT_INTERPRETER=1.
- `graph_executor.py`: ArgumentSpec, the cache of ExecutionPlans and their entries, the optimization pipeline.
- `profiling_graph_executor.py`: the default executor: profiled first runs, then fused behind type guards.
- `profiling_record.py`: ProfilingRecord, the prim::profile nodes and the types they record.
- `futures.py`: Future, the thread pool, `fork` and `wait`.
- `function.py`: Function, a graph and its executor.
- `run.py`: `run_graph(graph, *args)`.
"""
