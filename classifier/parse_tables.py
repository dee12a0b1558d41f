"""Node-kind tables shared by the front end's modules (parse*.py)."""

# tree-sitter-bash node kinds that are (parts of) shell words.
WORDISH = frozenset({
    "word", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation",
    "simple_expansion", "expansion", "arithmetic_expansion", "command_substitution",
    "process_substitution", "number", "extglob_pattern", "brace_expression", "regex",
    "test_operator", "variable_name", "special_variable_name", "array",
})
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
# Node kinds the words part hands to the values part (ValuesMixin.value_site).
VALUE_SITES = frozenset({"arithmetic_expansion", "expansion", "subscript", "array"})
