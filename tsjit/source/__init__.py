"""The source-text layer: where text came from and how it splits into tokens, below everything that reads text.

source_range.py holds Source and SourceRange (where a piece of text came from, and TorchScript's error
highlighting); lexer.py turns source text into tokens for the schema parser, the IR text parser (both in ir/) and
the script parser (frontend/). It sits below ir/ because those parsers read it, so ir/ never imports the frontend.
"""
