"""The TorchScript frontend: source text and Python functions in, graphs out.

source_range.py holds Source and SourceRange (where a piece of text came from, and TorchScript's error
highlighting); lexer.py turns source text into tokens for the schema parser, the IR text parser and the script
parser. This package deliberately imports nothing at package level: tsjit.ir imports the lexer, so importing
the frontend package must not pull in the rest of the frontend.
"""
