"""The graph IR: types, symbols, graphs, schemas, and the text printer and parser."""
