"""The json judge: a JSON document against a JSON Schema (``_schema``) and expected values
by JSON pointer (``_checks``, ``_pointer``); ``_format`` asks for and reads the document.

Suite format: docs/suites.md, section "json".
"""

from critiquebench.judges.json._format import JSON_FORMAT, JsonFormat
from critiquebench.judges.json._judge import JsonJudge

__all__ = ["JSON_FORMAT", "JsonFormat", "JsonJudge"]
